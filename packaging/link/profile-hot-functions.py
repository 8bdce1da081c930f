#!/usr/bin/env python3
"""Writes packaging/link/hot-functions.txt: the functions of the uplinkd binary that
one `uplinkd check` executes, which the link places first (Package.swift passes the
file as lld's --symbol-ordering-file).

    sudo python3 packaging/link/profile-hot-functions.py [PATH_TO_UPLINKD]

Why: a run touches a few hundred KiB of code spread over the binary's 5.5 MiB of
text, and the kernel maps the page cache around every page touched, so `check`
had most of the text resident (4.3 of 5.4 MiB). Placed together, the code a
check runs takes a few contiguous MiB of pages instead.

How: in the namespace lab (Tests/integration/lab.py: eth0's upstream a local
server), `uplinkd check eth0 --url http://203.0.113.80/generate_204
--expect-status 204` and the same with --json run under valgrind's callgrind;
every function of the binary that executed is listed, Swift functions first (they
are small sections of their own) and then the runtime's C and C++. Names are
mangled, as the linker sees them. A name the code no longer has is ignored by the
link (--no-warn-symbol-ordering), so a stale list costs memory, never a build:
run this again after large changes to the check path and commit the result.

Needs root (namespaces), valgrind (`apt-get install valgrind`; a maintainer's
tool, not installed by .ci/setup) and a release build (`swift build -c release
--static-swift-stdlib --disable-local-rpath`; debug symbols are removed from a copy first, because
valgrind's reader refuses lld's split debug references).
"""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))
sys.path.insert(0, str(ROOT / "Tests" / "bench"))
import lab as labmod  # noqa: E402
from bench_check_curl import argvs  # noqa: E402  (the check that benchmark times)

OUTPUT = Path(__file__).resolve().parent / "hot-functions.txt"
NAME = re.compile(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$")


def executed_functions(callgrind_file: Path, binary_name: str) -> list:
    """Functions of `binary_name` with cost in a callgrind file (name compression:
    a name is given once, then only its number), in the file's order."""
    objects, functions, found = {}, {}, []
    current_object = None
    with open(callgrind_file, errors="replace") as lines:
        for line in lines:
            match = NAME.match(line.rstrip("\n"))
            if not match:
                continue
            kind, number, name = match.groups()
            table = objects if kind.endswith("ob") else functions
            if name:
                table[number] = name
            if kind == "ob":
                current_object = objects.get(number)
            elif kind == "fn" and current_object and Path(current_object).name == binary_name:
                found.append(functions[number])
    return found


def main() -> int:
    binary = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / ".build" / "release" / "uplinkd").resolve()
    problem = labmod.preflight(str(binary), tools=("valgrind", "strip"))
    if problem is not None:
        print(f"profile: {problem}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="uplinkd-profile-") as scratch:
        copy = Path(scratch) / "uplinkd"
        subprocess.run(["strip", "--strip-debug", "-o", str(copy), str(binary)], check=True)
        names = []
        with labmod.Lab() as lb:
            lb.serve("inet", "internet")
            check = argvs(copy)[0]
            for position, argv in enumerate((check, check + ["--json"])):
                out = Path(scratch) / f"callgrind.{position}"
                run = subprocess.run(lb.exec_argv("gw", ["valgrind", "--tool=callgrind", "--demangle=no",
                                                         f"--callgrind-out-file={out}", *argv]),
                                     capture_output=True, text=True, timeout=300)
                if run.returncode != 0:
                    print(f"profile: {' '.join(argv[1:])} exited {run.returncode}:\n{run.stderr[-2000:]}", file=sys.stderr)
                    return 1
                names += executed_functions(out, copy.name)
    unique = list(dict.fromkeys(name for name in names if not name.startswith("0x") and "'" not in name
                                and name != "(below main)"))
    ordered = [n for n in unique if n.startswith("$s")] + [n for n in unique if not n.startswith("$s")]
    OUTPUT.write_text("\n".join(ordered) + "\n")
    print(f"profile: {len(ordered)} functions written to {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
