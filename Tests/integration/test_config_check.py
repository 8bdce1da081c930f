"""`uplinkd config check [--config FILE]`: validates without running anything (no
root, no lab). Exit 0 with a one-line summary (hooks that will not run listed as
warnings), 78 with the file:line:key error, 64 for a usage mistake.

Run: python3 -m pytest -v Tests/integration/test_config_check.py
"""

import subprocess

from agentrun import require_binary


def config_check(*args):
    return subprocess.run([str(require_binary()), "config", *args], capture_output=True, text=True, timeout=30)


def test_a_good_configuration_passes_and_names_what_will_not_run(tmp_path):
    hooks = tmp_path / "hooks.d"
    hooks.mkdir()
    (hooks / "10-ok").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "10-ok").chmod(0o755)
    (hooks / "20-not-executable").write_text("#!/bin/sh\nexit 0\n")
    cfg = tmp_path / "uplinkd.conf"
    cfg.write_text(f"[agent]\nhooks-dir = {hooks}\nflap-penalty = 0\n")
    proc = config_check("check", "--config", str(cfg))
    assert proc.returncode == 0, proc
    assert proc.stdout.startswith(f"configuration OK: {cfg}; 5 probes; 1 hooks in {hooks}"), proc
    assert f"hook {hooks}/20-not-executable is not executable; skipped" in proc.stderr, proc


def test_a_broken_configuration_is_refused_with_file_line_and_key(tmp_path):
    cfg = tmp_path / "uplinkd.conf"
    cfg.write_text("[agent]\n\nhold-down = 5\n")
    proc = config_check("check", "--config", str(cfg))
    assert proc.returncode == 78, proc
    assert f"{cfg}:3: key 'hold-down':" in proc.stderr, proc
    assert proc.stdout == "", proc


def test_usage_mistakes_exit_64():
    assert config_check().returncode == 64
    assert config_check("verify").returncode == 64
    assert config_check("check", "--bogus").returncode == 64
