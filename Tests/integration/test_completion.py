"""The bash completion (packaging/bash-completion/uplinkd, installed as
/usr/share/bash-completion/completions/uplinkd): commands, each command's options,
file names after --config/--state, directories after --hooks-dir, interface names
(from /sys/class/net) where a command takes IFACE. The completion function runs in
a bash subprocess with COMP_WORDS and COMP_CWORD set as bash sets them. The commands
and options offered are compared with what the command line's sources dispatch and
read, so a new option cannot be left out. No root, no lab, no binary.

Run: python3 -m pytest -v Tests/integration/test_completion.py
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPLETION = ROOT / "packaging" / "bash-completion" / "uplinkd"
CLI_SOURCES = ROOT / "Sources" / "uplinkd"


def complete(*words):
    """COMPREPLY when the cursor is at the end of the last of `words` (a word
    being typed; "" for a new one) on the line `uplinkd WORDS...`."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
              '_uplinkd; printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "_", str(COMPLETION), "uplinkd", *words],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == "", done
    return [line for line in done.stdout.splitlines() if line]


def case_labels(source):
    """The quoted labels of every `case "...":` line of a Swift source, per line."""
    return [re.findall(r'"([^"]*)"', line.split(":", 1)[0])
            for line in source.splitlines() if line.strip().startswith('case "')]


def options_by_command():
    """Each command's `--options`, from the file that reads them (the `case` labels
    of the file calling `readOptions(..., for: "COMMAND")`, or CheckArguments.swift)."""
    found = {}
    for path in sorted(CLI_SOURCES.glob("*.swift")):
        source = path.read_text()
        if path.name == "CheckArguments.swift":
            command = "check"
        else:
            named = re.search(r'readOptions\([^\n]*for: "([^"]+)"', source)
            if named is None:
                continue
            command = named.group(1)
        found[command] = {label for labels in case_labels(source) for label in labels if label.startswith("--")}
    return found


def dispatched_commands(source):
    """The commands main.swift dispatches: the names of its table (its
    `"NAME": SomeCommand.run,` lines), then the first label of each `case`."""
    table = re.findall(r'^\s*"([^"]+)": \w+\.run,$', source, re.MULTILINE)
    return table + [labels[0] for labels in case_labels(source)]


def test_every_command_main_dispatches_is_offered():
    commands = dispatched_commands((CLI_SOURCES / "main.swift").read_text())
    assert "check" in commands and "--version" in commands, commands
    offered = complete("")
    assert set(commands) <= set(offered), f"not offered: {set(commands) - set(offered)}"


def test_a_command_is_completed_from_its_start():
    assert complete("ch") == ["check"]
    assert complete("wa") == ["wait-online"]
    assert complete("--v") == ["--version"]


@pytest.mark.parametrize("command", sorted(options_by_command()))
def test_every_option_a_command_reads_is_offered(command):
    options = options_by_command()[command]
    assert options, f"no options found for {command}"
    offered = complete(*command.split(), "--")
    assert options <= set(offered), f"{command}: not offered: {options - set(offered)}"
    assert all(word.startswith("--") for word in offered), offered


def test_options_are_completed_from_their_start():
    assert complete("check", "--ti") == ["--timeout"]
    assert complete("wait-online", "--c") == ["--captive-ok"]
    assert complete("config", "") == ["check"]


def test_interface_names_come_from_sys_class_net():
    interfaces = sorted(os.listdir("/sys/class/net"))
    assert "lo" in interfaces
    assert sorted(complete("check", "")) == interfaces
    assert "lo" in complete("wait-online", "l")
    assert "lo" in complete("check", "eth0", "l")
    # Commands without IFACE, and option values, get no interface names.
    assert "lo" not in complete("status", "")
    assert complete("check", "--timeout", "") == []


def test_files_after_config_and_state_directories_after_hooks_dir(tmp_path):
    (tmp_path / "uplinkd.conf").write_text("")
    (tmp_path / "hooks.d").mkdir()
    prefix = str(tmp_path) + "/"
    assert sorted(complete("run", "--config", prefix)) == [prefix + "hooks.d", prefix + "uplinkd.conf"]
    assert complete("status", "--state", prefix + "u") == [prefix + "uplinkd.conf"]
    assert complete("run", "--hooks-dir", prefix) == [prefix + "hooks.d"]
    # --config=FILE: bash splits the word at '=' (COMP_WORDBREAKS).
    assert complete("config", "check", "--config", "=", prefix + "u") == [prefix + "uplinkd.conf"]
    assert sorted(complete("run", "--config", "=")) == sorted(complete("run", "--config", ""))


def test_shellcheck_accepts_the_completion():
    if shutil.which("shellcheck") is None:
        if os.environ.get("UPLINKD_REQUIRE_LAB"):
            pytest.fail("shellcheck is not installed; .ci/setup installs it")
        pytest.skip("shellcheck not installed (apt-get install shellcheck)")
    done = subprocess.run(["shellcheck", "-s", "bash", str(COMPLETION)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
