"""The start shim's two paths with the real Swift runtime (no root, no lab).

Sources/CStartShim defines the runtime-internal `_swift_stdlib_getUnsafeArgvArgc`
weakly, so the linker decides: with nothing else of the runtime's CommandLine.cpp.o
needed, the shim answers and that member (with its /proc/self/maps scan) stays out;
when the runtime needs the member anyway (a later runtime's standard library calling
more of it, simulated here by asking the linker for another of its symbols) or the
runtime is shared, the runtime's own definition answers. Either way the program
links and gets its arguments. A small Swift program is linked all three ways with the
toolchain's own runtime, so a toolchain that changes the member is caught here, not
at a user's link.

Run: python3 -m pytest -v Tests/integration/test_start_shim.py (swiftc on PATH).
"""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "Sources" / "CStartShim"
MEMBER = "CommandLine.cpp.o"
ENTRY = "_swift_stdlib_getUnsafeArgvArgc"

PROGRAM = """
import CStartShim
let arguments = CommandLine.arguments.dropFirst().joined(separator: " ")
print(arguments, uplinkd_start_shim_answered() != 0 ? "shim" : "runtime")
"""


def toolchain():
    swiftc = shutil.which("swiftc")
    if swiftc is None:
        pytest.fail("swiftc is not on PATH (the Swift toolchain; see README)")
    return Path(swiftc).resolve().parent.parent


def static_core(root):
    archive = root / "lib" / "swift_static" / "linux" / "libswiftCore.a"
    if not archive.exists():
        pytest.skip(f"this toolchain has no static runtime ({archive})")
    return archive


def member_symbols(archive):
    """Global symbols CommandLine.cpp.o defines in the static runtime."""
    out = subprocess.run(["nm", "-A", "--defined-only", "--extern-only", str(archive)],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return [line.split()[-1] for line in out.splitlines() if f":{MEMBER}:" in line]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    if shutil.which("nm") is None:
        pytest.fail("nm is not installed (binutils; bash .ci/setup installs it)")
    root = toolchain()
    work = tmp_path_factory.mktemp("startshim")
    (work / "module.modulemap").write_text(
        f'module CStartShim {{ header "{SHIM / "include" / "start_shim.h"}" export * }}\n')
    (work / "main.swift").write_text(PROGRAM)
    shim = work / "start_shim.o"
    subprocess.run([str(root / "bin" / "clang"), "-O2", "-c", str(SHIM / "start_shim.c"),
                    "-I", str(SHIM / "include"), "-o", str(shim)], check=True, timeout=120)

    def link(name, *flags):
        binary = work / name
        subprocess.run([str(root / "bin" / "swiftc"), "-I", str(work), str(work / "main.swift"), str(shim),
                        "-o", str(binary), *flags], check=True, timeout=300, capture_output=True)
        return subprocess.run([str(binary), "a", "b c"], capture_output=True, text=True, check=True,
                              timeout=30).stdout.strip()
    return root, link


def test_the_shim_answers_when_the_runtime_member_is_not_needed(build):
    root, link = build
    static_core(root)
    assert link("static", "-static-stdlib") == "a b c shim"


def test_the_runtime_answers_when_its_member_is_linked_anyway(build):
    root, link = build
    others = [name for name in member_symbols(static_core(root)) if name != ENTRY]
    if ENTRY not in member_symbols(static_core(root)):
        pytest.fail(f"{MEMBER} no longer defines {ENTRY}: the shim answers nothing; see start_shim.c")
    if not others:
        pytest.skip(f"{MEMBER} defines nothing but {ENTRY} in this runtime: no way to pull it in")
    # What a later runtime's standard library would do: need another of its symbols.
    assert link("pulled", "-static-stdlib", "-Xlinker", f"--undefined={others[0]}") == "a b c runtime"


def test_the_shared_runtime_keeps_its_own_lookup(build):
    _, link = build
    assert link("shared") == "a b c runtime"
