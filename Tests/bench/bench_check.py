"""Benchmark of `uplinkd check` in the namespace lab (not a test: prints figures).

    sudo python3 Tests/bench/bench_check.py [PATH_TO_UPLINKD] [--runs N]

Prints: wall time of `check` with three probes in parallel (median of N runs);
the time to answer for a blackholed uplink at the default 5 s timeout. One probe
beside `curl --interface`, time and peak memory, is bench_check_curl.py's.
"""

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from benchstats import median, ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import lab as labmod  # noqa: E402

URL = "http://203.0.113.80/generate_204"


def timed(argv):
    """(wall seconds, ru_maxrss KiB, exit status) of one process, measured by wait4.
    ru_maxrss includes the forking Python's size (exec keeps the maximum): not a
    figure of the child alone."""
    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss, process.returncode


def wall_times(argv, runs, want=0):
    """Wall seconds of `runs` runs of argv, one after the other; each must exit
    with status `want` (else RuntimeError)."""
    samples = []
    for _ in range(runs):
        wall, _, status = timed(argv)
        if status != want:
            raise RuntimeError(f"{shlex.join(argv)} exited {status}, expected {want}")
        samples.append(wall)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=str(labmod.uplinkd_path()))
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    problem = labmod.preflight(args.binary)
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return 1
    binary = args.binary
    try:
        return measure(binary, args.runs)
    except RuntimeError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1


def measure(binary, runs) -> int:
    with labmod.Lab() as lab:
        lab.serve("inet", "internet")
        lab.serve("portal", "portal-302")
        gw = lambda argv: lab.exec_argv("gw", argv)  # noqa: E731

        default_set = gw([binary, "check", "eth0",
                          "--url", URL, "--expect-status", "204",
                          "--url", "http://203.0.113.80/hotspot-detect.html", "--expect-contains", "Success",
                          "--url", "http://203.0.113.80/success.txt", "--expect-body", "success"])
        times = wall_times(default_set, runs)
        print(f"wall time, three probes through eth0 in parallel (median of {runs}): "
              f"{ms(median(times)):.1f} ms")

        lab.blackhole("dead")
        wall, _, status = timed(gw([binary, "check", "wwan0", "--url", URL]))
        print(f"blackholed wwan0 at the default 5 s timeout: answered in {ms(wall):.0f} ms (exit {status})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
