#!/usr/bin/env python3
"""Link quality and flap damping of `uplinkd run` at its DEFAULT settings, in the
failover lab (Tests/integration/failoverlab.py): one Markdown table.

    sudo python3 Tests/bench/bench_quality.py [--binary PATH] [--loss-seconds S]
        [--outage-seconds S] [--loss-percent P] [--cut-agents N] [--checks N]
        [--skip PARTS] [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header and the
table. Nothing is asserted: the targets are printed beside the figures.
Exit status 1 only when a part could not run at all.

The lab and the agent are bench_failover.py's: eth0 (ethernet, primary), wlan0
(Wi-Fi, unmetered backup), wwan0 (cellular, metered), a LAN client fetching
through the primary every 100 ms, the agent at its defaults with the shipped
route-failover hook and a recording hook. Parts (--skip takes their names):

  loss     eth0's upstream drops --loss-percent (30) % of the packets it receives
           and of those it sends, at random (nftables numgen in its namespace:
           DNS, probes and LAN traffic alike), for --loss-seconds (600). Counted
           from the hook log over that window: primary changes (with the reason
           the agent gave) and eth0's verdict changes. The loss eth0 reports
           (state file, LOSS-PCT) is read every 2 s; the table gives the last
           reading and the median of the second half, beside the true loss (the
           drop rate configured, and the one the nftables counters measured).
  outages  eth0's upstream drops everything to and from the internet address
           (the failover lab's `cut`) for 2 s every 30 s, for --outage-seconds
           (600): primary changes and eth0 verdict changes in that window.
  cut      a hard cut (the same `cut`, left in place) of eth0 with LAN traffic:
           from just before the `nft` command to the start of the primary hook.
           --cut-agents agents (5), --cuts-per-agent cuts each (2): the second
           falls on an eth0 that already flapped once (damping penalty about
           1000), so both a clean and a damped uplink are timed.
  check    `uplinkd check eth0 --json` --checks (10) times with the loss on
           eth0's upstream: how many answer `online`, and the loss each reports.

loss and outages run in labs of their own in parallel (mostly asleep), then cut
and check. --smoke: every part very short (a check that the benchmark runs).
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchstats import NONE, Parts, fmt_s, median

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
from bench_compare import parse_bench_args  # noqa: E402
from bench_failover import Scene, cut_runs, lab_bench_header, skipped_parts  # noqa: E402
from failoverlab import FailoverLab  # noqa: E402

PARTS = ("loss", "outages", "cut", "check")
FULL = {"loss_seconds": 600.0, "outage_seconds": 600.0, "cut_agents": 5, "cuts_per_agent": 2, "checks": 10}
SMOKE = {"loss_seconds": 15.0, "outage_seconds": 32.0, "cut_agents": 1, "cuts_per_agent": 1, "checks": 1}
OUTAGE_EVERY_S, OUTAGE_LENGTH_S = 30.0, 2.0
T0 = time.monotonic()


def progress(msg):
    print(f"[{time.monotonic() - T0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def changes_in(run, since, until):
    """(primary events, eth0 verdict events) the hook log holds for [since, until]."""
    events = [e for e in run.events() if since <= e.t <= until]
    return ([e for e in events if e.event == "primary"],
            [e for e in events if e.event == "verdict" and e.iface == "eth0"])


def loss_run(binary, workdir, seconds, percent):
    with Scene(binary, workdir, "loss", traffic=True) as sc:
        lb, run = sc.lab, sc.run
        t0 = time.time()
        lb.lossy("eth0", percent)
        readings = []
        try:
            while time.time() - t0 < seconds:
                time.sleep(2.0)
                st = run.state()
                value = st["uplinks"].get("eth0", {}).get("loss_pct") if st else None
                if value not in (None, "-"):
                    readings.append((time.time() - t0, int(value)))
            counts = lb.loss_counts("eth0")
        finally:
            lb.lossless("eth0")
        t1 = time.time()
        primaries, verdicts = changes_in(run, t0, t1)
        st = run.state()["uplinks"]["eth0"]
        second_half = [v for t, v in readings if t >= seconds / 2]
        return {"primaries": primaries, "verdicts": verdicts, "readings": readings,
                "last": readings[-1][1] if readings else None,
                "median": statistics.median(second_half) if second_half else None,
                "counts": counts, "percent": percent, "seconds": t1 - t0,
                "degraded": st.get("degraded"), "rtt": st.get("rtt_ms")}


def outage_run(binary, workdir, seconds):
    with Scene(binary, workdir, "outages", traffic=True) as sc:
        lb, run = sc.lab, sc.run
        t0 = time.time()
        outages = 0
        while time.time() - t0 < seconds:
            start = time.time()
            with lb.cut_off("eth0"):
                time.sleep(OUTAGE_LENGTH_S)
            outages += 1
            rest = OUTAGE_EVERY_S - (time.time() - start)
            if time.time() - t0 + rest >= seconds:
                time.sleep(max(0.0, seconds - (time.time() - t0)))
                break
            time.sleep(max(0.0, rest))
        t1 = time.time()
        primaries, verdicts = changes_in(run, t0, t1)
        st = run.state()["uplinks"]["eth0"]
        return {"primaries": primaries, "verdicts": verdicts, "outages": outages, "seconds": t1 - t0,
                "penalty": st.get("flap_penalty"), "suppressed": st.get("suppressed")}


def cut_part(binary, workdir, agents, cuts):
    samples = []
    for k in range(agents):
        runs = cut_runs(binary, workdir / f"cut{k}", True, cuts, 60.0, 180.0)
        for index, sample in enumerate(runs):
            sample["flapped_before"] = index
        samples += runs
    return samples


def check_part(binary, workdir, checks, percent):
    lb = FailoverLab().build()
    try:
        cfg = workdir / "check.conf"
        cfg.write_text(lb.agent_config())
        lb.lossy("eth0", percent)
        out = []
        for k in range(checks):
            p = subprocess.run(lb.exec_argv("gw", [binary, "check", "eth0", "--json", "--config", str(cfg)]),
                               capture_output=True, text=True, timeout=60)
            report = json.loads(p.stdout)
            report = report[0] if isinstance(report, list) else report
            quality = report.get("quality") or {}
            out.append({"verdict": report["verdict"], "reason": report["reason"], "looks": report.get("looks"),
                        "loss": quality.get("loss_pct"), "attempts": quality.get("attempts"),
                        "elapsed": report["elapsed_ms"] / 1000})
            progress(f"check {k + 1}/{checks}: {report['verdict']} ({report['reason']}), loss "
                     f"{quality.get('loss_pct')} % of {quality.get('attempts')} SYNs, {report.get('looks')} look(s)")
        return out
    finally:
        lb.destroy()


def measured_loss(counts):
    parts = []
    for chain in ("input", "output"):
        seen, dropped = counts.get(chain, (0, 0))
        if seen:
            parts.append(f"{chain} {100 * dropped / seen:.1f} % of {seen}")
    return ", ".join(parts) or NONE


def describe(events):
    return "; ".join(f"{e.previous_primary or '-'}->{e.primary or '-'} ({e.primary_reason or '?'})"
                     for e in events) or "none"


def table(res, args):
    rows = ["| figure | value | target |", "|---|---|---|"]

    def row(figure, value, target="–"):
        rows.append(f"| {figure} | {value} | {target} |")

    if "loss" in res:
        r = res["loss"]
        mins = r["seconds"] / 60
        row(f"{r['percent']} % random loss each way on eth0's upstream for {mins:.1f} min: primary changes",
            f"{len(r['primaries'])}: {describe(r['primaries'])}", "at most 1")
        row("... eth0 verdict changes", f"{len(r['verdicts'])}"
            + (": " + "; ".join(e.short for e in r["verdicts"]) if r["verdicts"] else ""), "at most 2")
        row("... loss eth0 reports (LOSS-PCT): last / median of the second half",
            f"{r['last'] if r['last'] is not None else NONE} % / "
            f"{r['median'] if r['median'] is not None else NONE} %",
            f"within 10 points of {r['percent']} %")
        row("... true loss: configured / measured by the nftables counters",
            f"{r['percent']} % / {measured_loss(r['counts'])}", "–")
        row("... eth0 at the end: degraded, rtt", f"{r['degraded']}, {r['rtt']} ms", "–")
    if "outages" in res:
        r = res["outages"]
        row(f"{OUTAGE_LENGTH_S:g}-s outages every {OUTAGE_EVERY_S:g} s for {r['seconds'] / 60:.1f} min "
            f"({r['outages']} outages): primary changes",
            f"{len(r['primaries'])}: {describe(r['primaries'])}", "at most 2")
        row("... eth0 verdict changes; flap penalty at the end",
            f"{len(r['verdicts'])}; {r['penalty']} (suppressed: {r['suppressed']})", "–")
    if "cut" in res:
        samples = res["cut"]
        for flapped, label in ((0, "clean eth0"), (1, "eth0 that flapped once")):
            times = [s["detect"] for s in samples if s["flapped_before"] == flapped and s["detect"] is not None]
            missed = sum(1 for s in samples if s["flapped_before"] == flapped and s["detect"] is None)
            value = (f"median {fmt_s(median(times))}, max {fmt_s(max(times))} (n={len(times)})"
                     if times else NONE) + (f", {missed} not moved" if missed else "")
            row(f"hard cut with LAN traffic, {label}: cut to primary hook", value, "about 3 s")
    if "check" in res:
        checks = res["check"]
        online = sum(1 for c in checks if c["verdict"] == "online")
        losses = [c["loss"] for c in checks if c["loss"] is not None]
        row(f"`check eth0` with {args.loss_percent} % loss: online",
            f"{online} of {len(checks)}"
            + (f" (others: {', '.join(c['verdict'] + ' ' + c['reason'] for c in checks if c['verdict'] != 'online')})"
               if online < len(checks) else ""), "at least 9 of 10")
        row("... loss each check reports (one round: few SYNs)",
            ", ".join(f"{c['loss']}" for c in checks) + " %" if losses else NONE, "–")
        row("... looks, time", f"{sum(1 for c in checks if (c['looks'] or 1) > 1)} needed a second look; median "
            f"{fmt_s(median([c['elapsed'] for c in checks]))}", "–")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--loss-seconds", type=float, help="window of the loss part, s (600)")
    ap.add_argument("--outage-seconds", type=float, help="window of the outages part, s (600)")
    ap.add_argument("--loss-percent", type=int, default=30, help="random drop each way, %% (30)")
    ap.add_argument("--cut-agents", type=int, help="agents of the cut part, two cuts each (5)")
    ap.add_argument("--cuts-per-agent", type=int, help="cuts per agent of the cut part (2)")
    ap.add_argument("--checks", type=int, help="checks of the check part (10)")
    ap.add_argument("--skip", default="", help="comma list of " + ",".join(PARTS))
    args = parse_bench_args(ap, "--smoke", "every part very short (CI)", SMOKE, FULL)
    skip = skipped_parts(ap, args, PARTS)
    if not 0 < args.loss_percent < 100:
        ap.error("--loss-percent must be between 1 and 99")
    started = lab_bench_header(
        args, "uplinkd link quality and flap damping at the default settings (Tests/bench/bench_quality.py)",
        "very short windows")
    if started is None:
        return 1
    binary, header = started

    parts = Parts()
    res, errors, attempt = parts.results, parts.errors, parts.attempt

    with tempfile.TemporaryDirectory(prefix="bench-quality-") as tmp:
        workdir = Path(tmp)
        parallel = []
        if "loss" not in skip:
            parallel.append(("loss", lambda: loss_run(binary, workdir, args.loss_seconds, args.loss_percent)))
        if "outages" not in skip:
            parallel.append(("outages", lambda: outage_run(binary, workdir, args.outage_seconds)))
        progress(f"about {(max(args.loss_seconds, args.outage_seconds) + 60 + args.cut_agents * 120 + args.checks * 6) / 60:.0f} min; {binary}")
        threads = []
        try:
            for name, fn in parallel:
                progress(f"{name}: started in a lab of its own")
                t = threading.Thread(target=attempt, args=(name, fn), daemon=True)
                t.start()
                threads.append(t)
            for t in threads:
                while t.is_alive():
                    t.join(timeout=1.0)
            if "cut" not in skip:
                progress("cut: started")
                attempt("cut", lambda: cut_part(binary, workdir, args.cut_agents, args.cuts_per_agent))
            if "check" not in skip:
                progress("check: started")
                attempt("check", lambda: check_part(binary, workdir, args.checks, args.loss_percent))
        except KeyboardInterrupt:
            print("bench: interrupted", file=sys.stderr)
            return 130
    print("\n".join(header))
    print()
    print(table(res, args))
    print()
    print("Method: see the docstring of Tests/bench/bench_quality.py. Loss figures are per packet "
          "and direction (uplinkd reports the loss a packet meets, assuming the same both ways).")
    for err in errors:
        print(f"\nNOT MEASURED, {err}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
