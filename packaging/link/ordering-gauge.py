#!/usr/bin/env python3
"""How much of the hot-function order a build still follows.

    python3 packaging/link/ordering-gauge.py BINARY [--list FILE] [--minimum PERCENT]

hot-functions.txt names functions as the linker sees them (mangled), uplinkd's own
among them, so every rename in the code leaves a name the link no longer finds
(lld ignores those: --no-warn-symbol-ordering). This counts the list's names that
BINARY (not stripped: an unstripped build or the package build's copy before
dh_strip) defines and exits 1 when fewer than the minimum (90 %) are there: then run
profile-hot-functions.py again and commit its list.
"""

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def defined_symbols(binary):
    out = subprocess.run(["nm", "--defined-only", str(binary)], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--list", default=str(HERE / "hot-functions.txt"))
    parser.add_argument("--minimum", type=float, default=90.0, help="percent (default 90)")
    args = parser.parse_args()
    names = [line.strip() for line in Path(args.list).read_text().splitlines() if line.strip()]
    present = defined_symbols(args.binary)
    if not present:
        sys.exit(f"ordering-gauge: {args.binary} has no symbols (stripped?): nothing to measure")
    found = sum(1 for name in names if name in present)
    percent = 100.0 * found / len(names) if names else 100.0
    print(f"ordering-gauge: {found} of {len(names)} names of {args.list} are in {args.binary} ({percent:.1f} %)")
    if percent < args.minimum:
        missing = [name for name in names if name not in present][:10]
        print(f"ordering-gauge: below {args.minimum:g} %: the list has decayed; run "
              "packaging/link/profile-hot-functions.py again. First missing: " + ", ".join(missing), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
