"""What the built binary links and loads, and what it prints of a damaged file
(no root, no lab).

Run: python3 -m pytest -v Tests/integration/test_binary.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).
"""

import shutil
import subprocess

import pytest

from agentrun import require_binary

# Swift Regex's modules. Besides Regex, _StringProcessing holds the standard
# library's String.contains(String) and firstRange(of:): one call to either links
# the whole module, 926 KiB of the static binary (README, "Dependencies and
# footprint"). expect-regex uses PCRE2 and substring search is SubstringSearch.swift.
REGEX_MODULES = ("17_StringProcessing", "12_RegexParser")


def symbols(binary):
    """Symbol names of `binary`: defined ones (a static release build holds the
    Swift runtime) and undefined dynamic ones (a debug build links it as shared
    libraries). Empty for a stripped binary."""
    names = []
    for options in (["--defined-only"], ["-D", "--undefined-only"]):
        proc = subprocess.run(["nm", *options, str(binary)], capture_output=True, text=True, timeout=60)
        names += [line.split()[-1] for line in proc.stdout.splitlines() if line.strip()]
    return names


def test_swift_regex_is_not_linked():
    if shutil.which("nm") is None:
        pytest.fail("nm is not installed (binutils; bash .ci/setup installs it)")
    binary = require_binary()
    names = symbols(binary)
    if not names:
        pytest.skip(f"{binary} is stripped: no symbols to look at")
    found = sorted(n for n in names if any(module in n for module in REGEX_MODULES))
    assert not found, (f"{binary} uses Swift Regex's modules again ({len(found)} symbols; "
                       f"`swift demangle` names the call), e.g. {found[:5]}")


# Swift Concurrency's runtime: only the embedding target (UplinkMonitor) uses it. A
# closure formed in main.swift's top-level code (main-actor code in Swift 6) carries a
# run-time isolation check that pulled the whole runtime into the static binary
# (0.7 MiB); a debug build shows the same calls as undefined symbols.
# (The core runtime itself holds a hook variable named after swift_task_: only the
# Concurrency module's own names and the runtime's entry points count.)
def is_concurrency(name):
    return "12_Concurrency" in name or name.startswith(("swift_task_", "swift_job_"))


def test_swift_concurrency_is_not_linked():
    if shutil.which("nm") is None:
        pytest.fail("nm is not installed (binutils; bash .ci/setup installs it)")
    binary = require_binary()
    names = symbols(binary)
    if not names:
        pytest.skip(f"{binary} is stripped: no symbols to look at")
    found = sorted(n for n in names if is_concurrency(n))
    assert not found, (f"{binary} uses Swift Concurrency ({len(found)} symbols; look for a closure or an "
                       f"async call in main-actor code), e.g. {found[:5]}")


# Loaded at first use instead (CSystemdShim, README "Dependencies and footprint"):
# named in NEEDED, each library is loaded and relocated by every run of every
# command, `uplinkd check` of an ethernet uplink included.
LOADED_AT_FIRST_USE = ("libsystemd.so.0",)


def test_libraries_loaded_at_first_use_are_not_needed_at_start():
    if shutil.which("readelf") is None:
        pytest.fail("readelf is not installed (binutils; bash .ci/setup installs it)")
    binary = require_binary()
    proc = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    needed = [line.split("[", 1)[1].rstrip("]") for line in proc.stdout.splitlines() if "(NEEDED)" in line]
    assert "libcurl.so.4" in needed, f"not a dynamic uplinkd? NEEDED: {needed}"
    assert not set(needed) & set(LOADED_AT_FIRST_USE), f"{binary} names {set(needed) & set(LOADED_AT_FIRST_USE)} in NEEDED"


# A journal line of garbage: CSI clear-screen, BEL, NUL, a byte that is no UTF-8, a
# C1 control (CSI, 0x9b) encoded as UTF-8, and garbage inside a record's fields.
GARBAGE = b"\x1b[2J\x07\x00\xff\xc2\x9b"


def control_characters(text):
    """The C0 and C1 control characters of `text` other than the line break."""
    return sorted({f"U+{ord(c):04X}" for c in text if c != "\n" and (ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0)})


@pytest.mark.parametrize("command", [["history"], ["history", "--json"], ["availability"]])
def test_a_journal_of_garbage_is_reported_without_its_control_characters(tmp_path, command):
    journal = tmp_path / "journal"
    journal.write_bytes(b"# uplinkd outage journal, format 1\n"
                        b"failover start=1764600000 boot=ab primary_before=eth0 primary_after=wlan0\n"
                        + GARBAGE + b"\n"
                        b"site start=" + GARBAGE + b" boot=ab\n"
                        b"site start=1764600000 boot=ab reasons=eth0:" + GARBAGE + b"\n")
    (tmp_path / "journal.checkpoint").write_bytes(b"alive wall=1764600000 mono=1 boot=ab primary=" + GARBAGE + b"\n")
    proc = subprocess.run([str(require_binary()), *command, "--journal", str(journal)],
                          capture_output=True, timeout=30)
    assert proc.returncode == 0, proc
    out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
    assert control_characters(out + err) == [], (out, err)
    # Each bad line (and the checkpoint) is still named, its garbage escaped.
    assert err.count(f"skipping {journal}:") == 3, err
    assert f"skipping {journal}:3: unknown record kind '\\u{{1b}}[2J\\u{{7}}\\u{{0}}" in err, err
    assert f"{journal}.checkpoint: line 1: primary: '\\u{{1b}}[2J" in err, err
