"""Benchmark of `uplinkd check` in the namespace lab (not a test: prints figures).

    sudo python3 Tests/integration/bench_check.py [PATH_TO_UPLINKD] [--runs N]

Prints: wall time of `check` beside `curl --interface` fetching the same URL
(medians of N runs); the time to answer for a blackholed uplink at the default 5 s
timeout. Memory is measured by bench_compare.py while a probe is in flight: wait4's
ru_maxrss would report the Python parent's size, which exec keeps as the maximum.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
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


def median_ms(samples):
    return statistics.median(samples) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=str(labmod.uplinkd_path()))
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    reason = labmod.unavailable_reason()
    if reason is not None:
        print(f"bench: cannot build the namespace lab: {reason}", file=sys.stderr)
        return 1
    binary = args.binary
    with labmod.Lab() as lab:
        lab.serve("inet", "internet")
        lab.serve("portal", "portal-302")
        gw = lambda argv: lab.exec_argv("gw", argv)  # noqa: E731

        check_one = gw([binary, "check", "eth0", "--url", URL])
        curl_one = gw(["curl", "-s", "-o", "/dev/null", "--interface", "eth0", URL])
        check_times, curl_times = [], []
        for _ in range(args.runs):
            wall, _, status = timed(check_one)
            assert status == 0, f"check eth0 exited {status}"
            check_times.append(wall)
            wall, _, status = timed(curl_one)
            assert status == 0, f"curl exited {status}"
            curl_times.append(wall)
        print(f"wall time, one URL through eth0 (median of {args.runs}): "
              f"uplinkd check {median_ms(check_times):.1f} ms, curl --interface {median_ms(curl_times):.1f} ms")

        default_set = gw([binary, "check", "eth0",
                          "--url", URL, "--expect-status", "204",
                          "--url", "http://203.0.113.80/hotspot-detect.html", "--expect-contains", "Success",
                          "--url", "http://203.0.113.80/success.txt", "--expect-body", "success"])
        times = [timed(default_set)[0] for _ in range(args.runs)]
        print(f"wall time, three probes through eth0 in parallel (median of {args.runs}): {median_ms(times):.1f} ms")

        lab.blackhole("dead")
        wall, _, status = timed(gw([binary, "check", "wwan0", "--url", URL]))
        print(f"blackholed wwan0 at the default 5 s timeout: answered in {wall * 1000:.0f} ms (exit {status})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
