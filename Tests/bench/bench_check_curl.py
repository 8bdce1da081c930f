"""`uplinkd check` beside the curl line a provisioning script would otherwise write
(not a test: prints figures).

    sudo python3 Tests/bench/bench_check_curl.py [PATH_TO_UPLINKD] [--pairs N] [--peaks N]
                                                 [--vs OTHER_UPLINKD]

In the namespace lab (lab.py: eth0's upstream a local HTTP server answering
http://203.0.113.80/generate_204 with 204), from inside the gateway namespace:

    uplinkd check eth0 --url http://203.0.113.80/generate_204 --expect-status 204
    curl --interface eth0 http://203.0.113.80/generate_204

- wall time: N alternating pairs (default 21; the first of a pair alternates
  between the two, so both see the same conditions), each process started and
  reaped by this script; the figure is the median of the per-pair ratios
  (check / curl) beside each tool's median. The timing loop runs inside the
  namespace (this script re-executes itself there), so `ip netns exec` costs
  neither side anything.
- peak resident set: the largest of N runs each (default 5) of GNU time's `%M`
  (the child's VmHWM, from wait4). Not this script's own wait4: a child forked
  from Python inherits Python's high-water mark across exec, which would be the
  figure of the smaller program.

With --drop-caches, the page cache is dropped (sync; echo 3 >
/proc/sys/vm/drop_caches, the whole machine's) after the timed rounds and before
the peak runs: a binary just written by the linker or cp is cached in other
pieces than one read back from disk, and the kernel maps whole cached pieces
around each page touched, so peaks of two builds compare only from the same state.

With --vs, a second uplinkd (another build) runs the same check in every round:
each round then times three runs, in the next of their six orders, and the script also
prints the second binary's figures against curl and the median of the rounds'
ratios between the two builds (what one change is worth, measured side by side).

Every run must succeed (check exit 0, curl exit 0 and HTTP 204 on a first
look), or the benchmark stops with exit status 1. Targets (issue: `check` as
fast and small as curl): ratio at most 1.2, peak at most 14 MiB; the last lines
say whether they are met, without changing the exit status.
"""

import argparse
import itertools
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from benchstats import median, ms, p95

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))   # the lab
import lab as labmod  # noqa: E402

URL = "http://203.0.113.80/generate_204"
IFACE = "eth0"
GNU_TIME = "/usr/bin/time"
TARGET_RATIO = 1.2
TARGET_PEAK_KIB = 14 * 1024


def argvs(binary, iface=IFACE, url=URL):
    """(check argv, curl argv): the two command lines measured."""
    return ([str(binary), "check", iface, "--url", url, "--expect-status", "204"],
            ["curl", "--interface", iface, url])


def run_once(argv):
    """Wall seconds and exit status of one run, output discarded."""
    start = time.perf_counter()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, done.returncode


def peak_kib(argv):
    """VmHWM (KiB) of one run of argv, as GNU time reports it (%M)."""
    done = subprocess.run([GNU_TIME, "-f", "%M", *argv], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return int(done.stderr.strip().splitlines()[-1])


def inner(args) -> int:
    """The measurement itself, inside the gateway namespace; one JSON object out:
    per round the wall times in the order [check, curl, other check (--vs)]."""
    check, curl = argvs(args.binary, args.iface, args.url)
    commands = [check, curl] + ([argvs(args.vs, args.iface, args.url)[0]] if args.vs else [])
    first = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", args.iface, args.url],
                           capture_output=True, text=True)
    if first.returncode != 0 or first.stdout != "204":
        raise RuntimeError(f"curl: exit {first.returncode}, HTTP {first.stdout!r}: the lab server does not answer 204")
    # Each round runs every command once, in the next of all their orders (two, or six
    # with --vs), so none of them is more often first, or more often after another.
    orders = list(itertools.permutations(range(len(commands))))
    rounds = []
    for k in range(args.pairs):
        times = [0.0] * len(commands)
        for index in orders[k % len(orders)]:
            wall, status = run_once(commands[index])
            if status != 0:
                raise RuntimeError(f"{shlex.join(commands[index])} exited {status} (round {k + 1})")
            times[index] = wall
        rounds.append(times)
    if args.drop_caches:
        # Every binary's file then comes back into the page cache the same way (read
        # by faults and readahead), not as the linker or cp happened to write it: the
        # kernel maps whole cached folios around each page touched.
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    peaks = [[peak_kib(argv) for _ in range(args.peaks)] for argv in commands]
    json.dump({"rounds": rounds, "peaks": peaks}, sys.stdout)
    return 0


def target_line(label, ratio, peak):
    return (f"{label}target: ratio <= {TARGET_RATIO}: {'met' if ratio <= TARGET_RATIO else 'NOT met'} ({ratio:.2f}); "
            f"peak <= {TARGET_PEAK_KIB // 1024} MiB: {'met' if peak <= TARGET_PEAK_KIB else 'NOT met'} "
            f"({peak / 1024:.1f} MiB)")


def kib_mib(kib):
    return f"{kib / 1024:.1f} MiB ({kib} KiB)"


def outer(args) -> int:
    problem = labmod.preflight(args.binary, tools=("curl",))
    if problem is None and not os.access(GNU_TIME, os.X_OK):
        problem = f"{GNU_TIME} (GNU time, Debian package `time`) is needed for the peak resident set"
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return 1
    binary = str(Path(args.binary).resolve())
    other = str(Path(args.vs).resolve()) if args.vs else None
    if other is not None and not (Path(other).is_file() and os.access(other, os.X_OK)):
        print(f"bench: --vs {other}: not an executable file", file=sys.stderr)
        return 1
    with labmod.Lab() as lb:
        lb.serve("inet", "internet")
        argv = lb.exec_argv("gw", [sys.executable, str(Path(__file__).resolve()), binary, "--inner",
                                   "--pairs", str(args.pairs), "--peaks", str(args.peaks),
                                   "--iface", args.iface, "--url", args.url] + (["--vs", other] if other else [])
                                  + (["--drop-caches"] if args.drop_caches else []))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60 + 3 * args.pairs + 2 * args.peaks)
    if done.returncode != 0:
        print(f"bench: the measurement failed (exit {done.returncode}):\n{done.stderr}", file=sys.stderr)
        return 1
    result = json.loads(done.stdout)
    check_t = [r[0] for r in result["rounds"]]
    curl_t = [r[1] for r in result["rounds"]]
    ratio = median([r[0] / r[1] for r in result["rounds"]])
    peak_check, peak_curl = max(result["peaks"][0]), max(result["peaks"][1])
    from bench_compare import header_lines, tool_versions   # the shared header of the lab benchmarks
    version, curl_version, _ = tool_versions(binary)
    check_argv, curl_argv = argvs("uplinkd", args.iface, args.url)
    lines = header_lines("uplinkd check beside curl --interface (Tests/bench/bench_check_curl.py)",
                         f"{version} ({binary}); curl: {curl_version}")
    lines += [
        f"- measured, inside the lab's gateway namespace: `{shlex.join(check_argv)}` and "
        f"`{shlex.join(curl_argv)}` (the lab's local server)",
        "",
        "| figure | uplinkd check | curl --interface | check / curl |",
        "|---|---|---|---|",
        f"| wall time, median of {len(check_t)} {'rounds' if other else 'alternating pairs'} "
        f"| {ms(median(check_t)):.2f} ms | {ms(median(curl_t)):.2f} ms | {ratio:.2f} (median of the "
        f"{'rounds' if other else 'pairs'}' ratios) |",
        f"| wall time, p95 | {ms(p95(check_t)):.2f} ms | {ms(p95(curl_t)):.2f} ms | – |",
        f"| peak resident set (VmHWM), largest of {args.peaks} runs | {kib_mib(peak_check)} "
        f"| {kib_mib(peak_curl)} | {peak_check / peak_curl:.2f} |",
        "",
    ]
    if other is not None:
        other_t = [r[2] for r in result["rounds"]]
        peak_other = max(result["peaks"][2])
        other_ratio = median([r[2] / r[1] for r in result["rounds"]])
        other_version = tool_versions(other)[0]
        lines += [
            f"--vs {other_version} ({other}), in the same rounds:",
            "",
            "| figure | --vs build | curl --interface | --vs / curl | --vs / first build |",
            "|---|---|---|---|---|",
            f"| wall time, median of {len(other_t)} rounds | {ms(median(other_t)):.2f} ms | {ms(median(curl_t)):.2f} ms "
            f"| {other_ratio:.2f} "
            f"| {median([r[2] / r[0] for r in result['rounds']]):.3f} (median of the rounds' ratios) |",
            f"| peak resident set (VmHWM), largest of {args.peaks} runs | {kib_mib(peak_other)} | {kib_mib(peak_curl)} "
            f"| {peak_other / peak_curl:.2f} | {peak_other - peak_check:+d} KiB |",
            "",
        ]
    lines.append(target_line("", ratio, peak_check))
    if other is not None:
        lines.append(target_line("--vs build: ", other_ratio, peak_other))
    print("\n".join(lines))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", nargs="?", default=str(labmod.uplinkd_path()))
    ap.add_argument("--pairs", type=int, default=21, help="rounds timed: alternating pairs, or with --vs rounds of three (21)")
    ap.add_argument("--peaks", type=int, default=5, help="runs of each for the peak resident set (5)")
    ap.add_argument("--vs", metavar="OTHER_UPLINKD", help="a second uplinkd timed in the same rounds (what a change is worth)")
    ap.add_argument("--drop-caches", action="store_true",
                    help="drop the page cache before the peak runs (the whole machine's; compare builds with it)")
    ap.add_argument("--iface", default=IFACE, help=argparse.SUPPRESS)
    ap.add_argument("--url", default=URL, help=argparse.SUPPRESS)
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.pairs < 1 or args.peaks < 1:
        ap.error("--pairs and --peaks must be at least 1")
    try:
        return inner(args) if args.inner else outer(args)
    except RuntimeError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
