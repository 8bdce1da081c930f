#!/usr/bin/env python3
"""Storm and soak of `uplinkd run`: the primary's carrier flapped 1,000
times a minute and a captive portal turned on and off on the backup, for 10 minutes,
while hooks fall behind. One Markdown table and a verdict per "Done when" criterion.

    sudo python3 Tests/bench/bench_storm.py [--binary PATH] [--minutes M]
        [--warmup S] [--flaps-per-minute N] [--portal-every S] [--sample-every S]
        [--settle-timeout S] [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header, the table
and the verdicts. Exit status 1 when a criterion fails or the benchmark could not
run to its end.

The lab and the agent are bench_failover.py's (Tests/integration/failoverlab.py):
eth0 (ethernet, primary), wlan0 (Wi-Fi, unmetered backup), wwan0 (cellular,
metered), built-in probes answered by each upstream's dnsmasq and HTTP server, the
agent at its defaults with the shipped route-failover hook. Added for the storm:
  - hooks 10-record (one line per event, AgentRun's) and 20-slow (`sleep 0.05`,
    so that events arrive faster than the hooks run and queue);
  - `[export] prometheus-textfile` in the run's directory, read for
    uplinkd_hook_events_pending and uplinkd_verdict_changes_total;
  - `flap-half-life = 10s`, `flap-max-suppress = 1m`: flap damping keeps its shape
    (the penalty ceiling is six half-lives above the reuse limit, as with the
    defaults 5m and 30m) but an eth0 damped by the storm is released within a
    minute of it, not 30, so the final check does not wait half an hour.

The storm, for --warmup (30 s) and then --minutes (10): eth0's far end (up-eth0 in
its upstream namespace) is set down and up in turn, one toggle every 60 ms
(--flaps-per-minute 1000), through one `ip -force -batch -` process, so the
flapping costs a pipe write per toggle; the toggles the kernel applied are counted
with eth0's carrier_changes, the link messages netlink sent with `ip monitor`. The
lab (StormLab) puts eth0 at an ifindex its veth peer does not have: otherwise the
kernel sends at most one carrier change a second (linkwatch, as for a physical
NIC) and the agent would hear of about 30 of the 1,000 toggles a minute; this way
it hears of every one. Every --portal-every (30) s, starting half a period
in, wlan0's upstream turns a captive portal on or off in turn: nftables there
redirects HTTP to 203.0.113.80 to a labserver.py answering every path with a 302
to a login page (so every built-in probe through wlan0 sees the redirect).

Every --sample-every (2) s: the agent's VmRSS and Private_Dirty (smaps_rollup),
its open file descriptors (/proc/PID/fd), its CPU (utime+stime, as % of one core)
and that of the hooks it reaped, its live child processes (hooks running), the
textfile's uplinkd_hook_events_pending and verdict counters, and the age of the
state file (the agent rewrites it on every change, so a stalled loop shows as an
old file). Figures of the storm are taken from the end of the warm-up (libcurl,
c-ares and the first storm rounds have allocated by then) to the end.

File descriptors: a running hook holds pipes and a probe in flight holds sockets,
so the count moves during the storm (its range is printed, with and without a
hook running). A leaked descriptor stays, so "constant" is judged on the settled
agent: the descriptors open before the storm and after it, each counted at the
moment with no hook running and the fewest open over 2 s, by kind.

After the storm: the flapping stops with eth0's carrier up and the portal off;
within --settle-timeout (150) s the agent must be settled (eth0 online and
primary, wlan0 and wwan0 online, the recording hook's last primary event naming
eth0, the route hook's route through eth0, uplinkd_hook_events_pending 0). Then
`uplinkd status` must exit 0, a SIGHUP must be logged "configuration reloaded"
and SIGTERM must end the agent with status 0 within hook-timeout (30 s).

--smoke: a 20-s storm after a 10-s warm-up, the portal every 10 s; the figures and
every criterion are printed, but only "final state right" and "agent still
answering" are judged (a check that the benchmark runs).
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchstats import NONE, Parts, fmt_s, mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
from agentrun import AgentError, proc_memory, proc_stat_cpu  # noqa: E402
from bench_compare import parse_bench_args, process_tree  # noqa: E402
from bench_failover import Scene, lab_bench_header, progress  # noqa: E402
from lab import run  # noqa: E402
from test_metrics import exported, value  # noqa: E402

FULL = {"minutes": 10.0, "warmup": 30.0, "portal_every": 30.0, "sample_every": 2.0}
SMOKE = {"minutes": 20 / 60, "warmup": 10.0, "portal_every": 10.0, "sample_every": 1.0}
PRIMARY, BACKUP = "eth0", "wlan0"
UPLINKS = ("eth0", "wlan0", "wwan0")
HOOK_TIMEOUT_S = 30.0                 # the agent's default hook-timeout
RSS_GROWTH_LIMIT_KIB = 1024           # the target: at most 1 MB over the storm
PORTAL_TABLE = "bench_storm_portal"
DAMPING = {"flap-half-life": "10s", "flap-max-suppress": "1m"}
SLOW_HOOK = "#!/bin/sh\n# bench_storm.py: takes about 50 ms, so events queue behind it\nsleep 0.05\n"
CLK_TCK = os.sysconf("SC_CLK_TCK")


# -- the storm's two hands ---------------------------------------------------------------

class Flapper(threading.Thread):
    """Sets the far end of a gw uplink down and up in turn, one toggle every `period`
    seconds, through one `ip -force -batch -` process in its upstream namespace (a
    pipe write per toggle, no process per toggle). stop() leaves the carrier up."""

    def __init__(self, lb, iface, period):
        super().__init__(daemon=True)
        self.period = period
        role, self.peer = lb.peer_of(iface)
        self.err_path = lb.dir / "logs" / "flapper.err"
        self._err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(["ip", "-force", "-n", lb.ns[role], "-batch", "-"], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=self._err, text=True, bufsize=1)
        self.toggles = 0
        self.late_max = 0.0               # how far a toggle came after its time, s
        self._stop_event = threading.Event()

    def _send(self, state):
        self.proc.stdin.write(f"link set {self.peer} {state}\n")
        self.proc.stdin.flush()

    def run(self):
        up, next_at = True, time.monotonic()
        while True:
            next_at += self.period
            if self._stop_event.wait(max(0.0, next_at - time.monotonic())):
                return
            late = time.monotonic() - next_at
            self.late_max = max(self.late_max, late)
            if late > 1.0:                # starved for a second: do not burst to catch up
                next_at = time.monotonic()
            up = not up
            self._send("up" if up else "down")
            self.toggles += 1

    def stop(self):
        """Stop flapping, the carrier up; returns what `ip` printed on stderr."""
        self._stop_event.set()
        self.join(timeout=10)
        self._send("up")
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self._err.close()
        return self.err_path.read_text(errors="replace").strip()


class StormLab(failoverlab.FailoverLab):
    """The failover lab with each uplink at ifindex 100 + N in gw. The kernel passes a
    carrier change to netlink at once only when a device is not its own link (its
    ifindex differs from its iflink: a veth whose peer has another index, a VLAN, a
    bond port); otherwise (a physical NIC, or a veth whose peer in the other
    namespace happens to have the same index, as the lab's eth0 has) linkwatch sends
    at most one a second, and a storm of 1,000 a minute would reach the agent as
    about 30. So every toggle of the storm reaches the agent."""

    def _add_veth(self, u):
        self.ip("gw", "link", "add", u.iface, "index", str(100 + u.n), "type", "veth",
                "peer", "name", u.peer, "netns", self.ns[u.role])


class LinkMonitor:
    """`ip monitor link dev IFACE` in gw: counts the link messages netlink sent."""

    def __init__(self, lb, iface):
        self.iface, self.path = iface, lb.dir / "logs" / f"monitor-{iface}.out"
        self._out = open(self.path, "wb")
        self.proc = subprocess.Popen(["ip", "-n", lb.gw, "monitor", "link", "dev", iface],
                                     stdin=subprocess.DEVNULL, stdout=self._out, stderr=subprocess.STDOUT)

    def stop(self):
        """The number of messages about the interface."""
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self._out.close()
        rx = re.compile(rf"^\d+: {re.escape(self.iface)}[@:]")
        return sum(1 for line in self.path.read_text(errors="replace").splitlines() if rx.match(line))


def carrier_changes(lb, iface):
    """The kernel's count of carrier changes of a gw interface."""
    return int(run(lb.exec_argv("gw", ["cat", f"/sys/class/net/{iface}/carrier_changes"])).stdout)


class Portal:
    """A captive portal on an uplink's upstream: labserver.py in mode portal-302 on the
    router address, and, while on, nftables there redirecting HTTP to the internet
    address to it (the probes' DNS answers do not change; their HTTP gets a 302)."""

    def __init__(self, lb, iface):
        self.lab, self.uplink = lb, lb.uplink(iface)
        lb.serve(self.uplink.role, "portal-302", bind=self.uplink.router)
        self.on = False

    def set(self, on):
        role = self.uplink.role
        if on:
            ruleset = (f"table ip {PORTAL_TABLE} {{\n"
                       f"  chain prerouting {{ type nat hook prerouting priority dstnat; policy accept;\n"
                       f"    ip daddr {failoverlab.INTERNET_ADDR} tcp dport 80 dnat to {self.uplink.router}\n"
                       f"  }}\n}}\n")
            run(self.lab.exec_argv(role, ["nft", "-f", "-"]), input=ruleset)
        else:
            run(self.lab.exec_argv(role, ["nft", "delete", "table", "ip", PORTAL_TABLE]), check=False)
        self.on = on


# -- looking at the agent ------------------------------------------------------------------

def hooks_running(pid):
    """The agent's live descendants (a hook and what it started)."""
    return len(process_tree(pid)) - 1


def reaped_cpu(pid):
    """cutime + cstime of a process in seconds: the children it has reaped (the hooks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / CLK_TCK


def fd_kinds(pid):
    """Counter of the agent's open descriptors by kind: socket, pipe, anon_inode:[...], or the path."""
    kinds = Counter()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue                      # closed while listed
        kinds[target.split(":[", 1)[0] if target.startswith(("socket:", "pipe:")) else target] += 1
    return kinds


def settled_fds(pid, seconds=2.0, gap=0.05):
    """fd_kinds at the moment with no hook running and the fewest descriptors open over
    `seconds` (a probe in flight holds sockets for a moment); None if a hook ran all along."""
    best, deadline = None, time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = hooks_running(pid)
        kinds = fd_kinds(pid)
        if before == 0 and hooks_running(pid) == 0 and (best is None or sum(kinds.values()) < sum(best.values())):
            best = kinds
        time.sleep(gap)
    return best


@dataclass
class Sample:
    t: float                  # monotonic
    rss: int                  # KiB
    dirty: int                # KiB
    fds: int
    quiet: bool               # no hook running before and after the fds were counted
    children: int
    cpu: float                # the agent's own utime+stime, s
    hooks_cpu: float          # its reaped children's, s
    pending: float            # uplinkd_hook_events_pending (None before the first file)
    verdicts: dict            # uplinkd_verdict_changes_total per interface
    primaries: float          # uplinkd_primary_changes_total
    state_age: float          # wall clock now minus the state file's mtime, s


def metrics(prom):
    """(hook events pending, {iface: verdict changes}, primary changes) from the textfile."""
    series = exported(prom)
    verdicts = {dict(labels).get("interface"): v for (name, labels), v in series.items()
                if name == "uplinkd_verdict_changes_total"}
    return (value(series, "uplinkd_hook_events_pending"), verdicts,
            value(series, "uplinkd_primary_changes_total"))


def take_sample(run_, prom):
    pid = run_.pid
    kids = hooks_running(pid)
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    kids_after = hooks_running(pid)
    rss, dirty = proc_memory(pid)
    pending, verdicts, primaries = metrics(prom)
    try:
        age = time.time() - run_.state_path.stat().st_mtime
    except FileNotFoundError:
        age = None
    return Sample(time.monotonic(), rss, dirty, fds, kids == 0 and kids_after == 0, max(kids, kids_after),
                  proc_stat_cpu(pid), reaped_cpu(pid), pending, verdicts, primaries, age)


class Sampler(threading.Thread):
    """take_sample every `every` seconds until stop(); a failed sample (the agent
    gone) ends it, the error kept."""

    def __init__(self, run_, prom, every):
        super().__init__(daemon=True)
        self.run_, self.prom, self.every = run_, prom, every
        self.samples, self.error = [], None
        self._stop_event = threading.Event()

    def run(self):
        next_at = time.monotonic()
        while not self._stop_event.is_set():
            try:
                self.samples.append(take_sample(self.run_, self.prom))
            except (OSError, ValueError) as exc:
                self.error = f"{type(exc).__name__}: {exc}"
                return
            next_at += self.every
            self._stop_event.wait(max(0.0, next_at - time.monotonic()))

    def stop(self):
        self._stop_event.set()
        self.join(timeout=30)


# -- the storm --------------------------------------------------------------------------

def storm(sc, args, res):
    lb, run_ = sc.lab, sc.run
    prom = run_.dir / "uplinkd.prom"
    res["before_fds"] = settled_fds(run_.pid)
    res["before"] = take_sample(run_, prom)
    portal = Portal(lb, BACKUP)
    period = 60.0 / args.flaps_per_minute
    total = args.warmup + args.minutes * 60
    monitor = LinkMonitor(lb, PRIMARY)
    flapper = Flapper(lb, PRIMARY, period)
    sampler = Sampler(run_, prom, args.sample_every)
    c0, lines0 = carrier_changes(lb, PRIMARY), len(run_.events())
    t0 = time.monotonic()
    flapper.start()
    sampler.start()
    progress(f"storm: {PRIMARY} toggled every {period * 1000:.0f} ms, portal on {BACKUP} every "
             f"{args.portal_every:g} s; warm-up {args.warmup:g} s, then {args.minutes * 60:g} s measured")
    toggles, next_portal, start = 0, args.portal_every / 2, None
    try:
        while True:
            now = time.monotonic() - t0
            if start is None and now >= args.warmup:
                start = {"sample": take_sample(run_, prom), "carrier": carrier_changes(lb, PRIMARY),
                         "written": flapper.toggles, "lines": len(run_.events())}
                progress(f"storm: warm-up over; VmRSS {start['sample'].rss} KiB, "
                         f"{start['sample'].fds} descriptors")
            if now >= total:
                break
            if now >= next_portal:
                portal.set(not portal.on)
                toggles += 1
                next_portal += args.portal_every
                s = sampler.samples[-1] if sampler.samples else None
                progress(f"storm: {now:.0f} s, portal {'on' if portal.on else 'off'}; "
                         + (f"VmRSS {s.rss} KiB, {s.fds} fds, {s.children} hook processes, "
                            f"{s.pending} hook events pending, {flapper.toggles} toggles" if s else ""))
            if not run_.running():
                raise AgentError(f"the agent exited during the storm\n{run_.stderr()[-4000:]}")
            if sampler.error:
                raise AgentError(f"sampling the agent failed: {sampler.error}")
            time.sleep(max(0.0, min(0.2, next_portal - now, (args.warmup if start is None else total) - now)))
        events = run_.events()
        end = {"sample": take_sample(run_, prom), "carrier": carrier_changes(lb, PRIMARY),
               "written": flapper.toggles, "lines": len(events)}
        res["window_events"] = events[start["lines"]:]
        t_end = time.monotonic()
    finally:
        sampler.stop()
        res["ip_errors"] = flapper.stop()              # carrier up
        portal.set(False)
        lb.wait_lower_up(PRIMARY, True)
        time.sleep(0.5)                               # the last message on its way
        res["netlink_total"] = monitor.stop()
    res.update(start=start, end=end, samples=[s for s in sampler.samples if start["sample"].t <= s.t <= t_end],
               all_samples=sampler.samples, portal_toggles=toggles, seconds=t_end - start["sample"].t,
               flapped_seconds=t_end - t0, carrier_total=end["carrier"] - c0, written_total=end["written"],
               lines_total=end["lines"] - lines0, late_max=flapper.late_max)
    progress(f"storm: over; {end['carrier'] - c0} carrier changes, VmRSS {end['sample'].rss} KiB")


def wait_settled(sc, timeout):
    """(seconds to settled, None) or (None, what was still wrong at the deadline)."""
    lb, run_ = sc.lab, sc.run
    prom = run_.dir / "uplinkd.prom"

    def missing():
        st = run_.state()
        wrong = []
        if st is None:
            return ["no state file"]
        if st["primary"] != PRIMARY:
            wrong.append(f"primary {st['primary']}")
        for i in UPLINKS:
            u = st["uplinks"].get(i, {})
            if u.get("verdict") != "online":
                wrong.append(f"{i} {u.get('verdict')} ({u.get('reason')}, penalty {u.get('flap_penalty')}, "
                             f"suppressed {u.get('suppressed')})")
        primaries = [e for e in run_.events() if e.event == "primary"]
        if not failoverlab.hooks_caught_up(run_, PRIMARY, UPLINKS):
            wrong.append("hook log not caught up (last primary event: "
                         + (primaries[-1].short if primaries else "none") + ")")
        if f"dev {PRIMARY} " not in lb.owned_routes() + " ":
            wrong.append(f"route hook's table 7077: {lb.owned_routes() or 'none'}")
        pending = metrics(prom)[0]
        if pending != 0:
            wrong.append(f"uplinkd_hook_events_pending {pending}")
        return wrong

    t0, deadline = time.monotonic(), time.monotonic() + timeout
    while True:
        if not run_.running():
            return None, ["the agent exited"]
        wrong = missing()
        if not wrong:
            return time.monotonic() - t0, None
        if time.monotonic() >= deadline:
            return None, wrong
        time.sleep(0.25)


def after(sc, args, res):
    run_ = sc.run
    progress(f"after: carrier up, portal off; waiting for the agent to settle (at most {args.settle_timeout:g} s)")
    res["settle"], res["wrong"] = wait_settled(sc, args.settle_timeout)
    progress("after: " + (f"settled in {res['settle']:.1f} s" if res["settle"] is not None
                          else "NOT settled: " + "; ".join(res["wrong"])))
    if not run_.running():
        raise AgentError(f"the agent exited after the storm\n{run_.stderr()[-4000:]}")
    res["after_fds"] = settled_fds(run_.pid)
    res["after"] = take_sample(run_, run_.dir / "uplinkd.prom")
    events = run_.events()
    res["last_primary"] = next((e for e in reversed(events) if e.event == "primary"), None)
    status = run_.status()
    res["status"] = (status.returncode, (status.stdout.splitlines() or [status.stderr.strip()])[0])
    offset = run_.stderr_size()
    t = time.monotonic()
    run_.send(signal.SIGHUP)
    try:
        run_.wait_stderr("configuration reloaded", 10, offset=offset)
        res["reload"] = time.monotonic() - t
    except AgentError:
        res["reload"] = None
        res["reload_log"] = run_.stderr_since(offset).strip()[-600:]
    t = time.monotonic()
    res["term_rc"] = run_.stop(signal.SIGTERM, timeout=HOOK_TIMEOUT_S + 5)
    res["term_s"] = time.monotonic() - t
    progress(f"after: status exit {res['status'][0]}, reload "
             + (f"logged after {res['reload']:.2f} s" if res["reload"] is not None else "NOT logged")
             + f", TERM exit {res['term_rc']} after {res['term_s']:.2f} s")


def storm_bench(binary, workdir, args, res):
    prom = workdir / "storm" / "uplinkd.prom"
    sections = {"agent": dict(DAMPING), "export": {"prometheus-textfile": str(prom)}}
    with Scene(binary, workdir, "storm", verbose=0, sections=sections, hooks={"20-slow": SLOW_HOOK},
               lab=StormLab) as sc:
        progress(f"lab and agent settled (pid {sc.run.pid})")
        storm(sc, args, res)
        after(sc, args, res)


# -- the table and the verdicts ----------------------------------------------------------------

def kib(x):
    return NONE if x is None else f"{x:.0f} KiB"


def kinds_text(kinds):
    """'13 (socket 5, pipe 2, statistics/rx_packets 1, ...)': files by their last two path parts."""
    if kinds is None:
        return "no moment without a hook running"
    short = Counter()
    for kind, n in kinds.items():
        short["/".join(kind.split("/")[-2:]) if kind.startswith("/") else kind] += n
    return f"{sum(kinds.values())} (" + ", ".join(f"{k} {n}" for k, n in sorted(short.items())) + ")"


def table(res, args):
    rows = ["| figure | value | target |", "|---|---|---|"]

    def row(figure, value_, target="–"):
        rows.append(f"| {figure} | {value_} | {target} |")

    if "end" in res:
        s0, s1, samples = res["start"]["sample"], res["end"]["sample"], res["samples"]
        secs = res["seconds"]
        changes = res["end"]["carrier"] - res["start"]["carrier"]
        written = res["end"]["written"] - res["start"]["written"]
        row(f"{PRIMARY} carrier toggles in the {secs / 60:.1f} min measured: applied (carrier_changes) / "
            f"written; per minute",
            f"{changes} / {written}; {changes * 60 / secs:.0f} per minute", f"{args.flaps_per_minute} per minute")
        row(f"... whole storm ({res['flapped_seconds']:.0f} s with the warm-up): applied, per minute; "
            f"netlink link messages about {PRIMARY} (`ip monitor`); latest toggle; `ip` errors",
            f"{res['carrier_total']}, {res['carrier_total'] * 60 / res['flapped_seconds']:.0f} per minute; "
            f"{res['netlink_total']}; {res['late_max'] * 1000:.0f} ms late at most; "
            + (res["ip_errors"][:200] or "none"), "–")
        row(f"portal toggles on {BACKUP} (302 to a login page)",
            f"{res['portal_toggles']} (every {args.portal_every:g} s)", "–")
        rss = [s.rss for s in samples]
        dirty = [s.dirty for s in samples]
        row("agent VmRSS: start (after the warm-up) / end / max; growth",
            f"{kib(s0.rss)} / {kib(s1.rss)} / {kib(max(rss))}; {s1.rss - s0.rss:+d} KiB",
            f"growth ≤ {RSS_GROWTH_LIMIT_KIB} KiB")
        row("agent Private_Dirty: start / end / max; growth",
            f"{kib(s0.dirty)} / {kib(s1.dirty)} / {kib(max(dirty))}; {s1.dirty - s0.dirty:+d} KiB", "–")
        quiet = [s.fds for s in samples if s.quiet]
        row("open descriptors during the storm: min–max with no hook running (n) / max with one",
            (f"{min(quiet)}–{max(quiet)} (n={len(quiet)})" if quiet else NONE) + " / "
            + str(max((s.fds for s in samples if not s.quiet), default=NONE)), "–")
        cpu = (s1.cpu - s0.cpu) / secs * 100
        per = [(b.cpu - a.cpu) / (b.t - a.t) * 100 for a, b in zip(samples, samples[1:]) if b.t > a.t]
        row("agent CPU (utime+stime), % of one core: mean / max over one sample interval",
            f"{cpu:.1f} % / {max(per, default=0):.1f} %", "–")
        row("hooks' CPU (reaped children), % of one core", f"{(s1.hooks_cpu - s0.hooks_cpu) / secs * 100:.1f} %", "–")
        kids = [s.children for s in samples]
        row("hook processes running at a sample: mean / max", f"{mean(kids):.2f} / {max(kids)}", "–")
        pend = [s.pending for s in samples if s.pending is not None]
        row("hook events pending (uplinkd_hook_events_pending): max / mean / at the end of the storm",
            f"{max(pend):g} / {mean(pend):.2f} / {s1.pending:g}" if pend else NONE, "–")
        dv = {i: s1.verdicts.get(i, 0) - s0.verdicts.get(i, 0) for i in UPLINKS}
        events = res["end"]["lines"] - res["start"]["lines"]
        row("verdict changes (uplinkd_verdict_changes_total), per uplink; primary changes",
            f"{sum(dv.values()):.0f} ({', '.join(f'{i} {v:.0f}' for i, v in dv.items())}); "
            f"{s1.primaries - s0.primaries:.0f}", "–")
        row("hook events run (10-record lines; each runs the 3 hooks); per minute",
            f"{events} ({3 * events} hook runs); {events * 60 / secs:.0f} per minute", "–")
        heard = res["window_events"]
        for iface in UPLINKS:
            kinds = Counter(f"{e.previous}->{e.verdict} ({e.reason})" for e in heard
                            if e.event == "verdict" and e.iface == iface)
            row(f"... {iface} verdict events among them",
                ", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "none", "–")
        kinds = Counter(f"{e.previous_primary or '-'}->{e.primary or '-'} ({e.primary_reason})"
                        for e in heard if e.event == "primary")
        row("... primary events among them", ", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "none", "–")
        ages = [s.state_age for s in samples if s.state_age is not None]
        row("state file age at a sample: max (a stalled loop would leave it old)",
            fmt_s(max(ages)) if ages else NONE, "–")
    if "before_fds" in res:
        row("open descriptors, settled, no hook running: before the storm / after it",
            f"{kinds_text(res['before_fds'])} / {kinds_text(res.get('after_fds'))}", "the same")
    if "after" in res:
        a = res["after"]
        row("agent after settling: VmRSS / Private_Dirty; CPU since start",
            f"{kib(a.rss)} / {kib(a.dirty)}; {a.cpu:.1f} s", "–")
        row(f"settled after the storm (carrier up, portal off; {PRIMARY} online and primary, "
            f"{BACKUP} and wwan0 online, hooks caught up, pending 0)",
            f"in {fmt_s(res['settle'])}" if res["settle"] is not None
            else f"NOT within {args.settle_timeout:g} s: " + "; ".join(res["wrong"]), "yes")
        lp = res.get("last_primary")
        row("the recording hook's last primary event", lp.short + f" ({lp.primary_reason})" if lp else NONE,
            f"names {PRIMARY}")
        row("`uplinkd status`: exit status, first line", f"{res['status'][0]}, {res['status'][1]}", "0")
        row("SIGHUP: \"configuration reloaded\" logged after",
            fmt_s(res["reload"]) if res["reload"] is not None
            else "NOT logged within 10 s: " + res.get("reload_log", "").replace("\n", " / "), "logged")
        row("SIGTERM: exit status, time to exit", f"{res['term_rc']}, {fmt_s(res['term_s'])}",
            f"0 within {HOOK_TIMEOUT_S:g} s")
    return "\n".join(rows)


def verdicts(res, args):
    """[(judged, passed, text)] for the issue's four criteria."""
    out = []
    if "end" in res:
        growth = res["end"]["sample"].rss - res["start"]["sample"].rss
        out.append((not args.smoke, growth <= RSS_GROWTH_LIMIT_KIB,
                    f"RSS growth at most 1 MB ({RSS_GROWTH_LIMIT_KIB} KiB) over the storm: {growth:+d} KiB "
                    f"({res['start']['sample'].rss} to {res['end']['sample'].rss} KiB in {res['seconds'] / 60:.1f} min)"))
    else:
        out.append((not args.smoke, False, "RSS growth at most 1 MB over the storm: not measured"))
    before, after_ = res.get("before_fds"), res.get("after_fds")
    same = before is not None and after_ is not None and before == after_
    out.append((not args.smoke, same,
                f"file descriptors constant: {kinds_text(before)} before the storm, "
                f"{kinds_text(after_) if 'after_fds' in res else 'not measured'} after it (settled, no hook running)"))
    lp = res.get("last_primary")
    final_ok = res.get("settle") is not None and lp is not None and lp.primary == PRIMARY
    out.append((True, final_ok,
                "final state right: " + (f"{PRIMARY} online and primary, {BACKUP} and wwan0 online, hooks caught up "
                                         f"(pending 0, last primary event {lp.short}), after {fmt_s(res['settle'])}"
                                         if final_ok else "; ".join(res.get("wrong") or ["not reached"]))))
    answering = (res.get("status", (None,))[0] == 0 and res.get("reload") is not None
                 and res.get("term_rc") == 0 and res.get("term_s", 1e9) <= HOOK_TIMEOUT_S)
    out.append((True, answering,
                f"agent still answering: status exit {res.get('status', (None,))[0]}, reload "
                + ("logged" if res.get("reload") is not None else "NOT logged")
                + f", SIGTERM exit {res.get('term_rc')} after {fmt_s(res.get('term_s'))}"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--minutes", type=float, help="the storm measured after the warm-up, min (10)")
    ap.add_argument("--warmup", type=float, help="storm before the measurement starts, s (30)")
    ap.add_argument("--flaps-per-minute", type=int, default=1000, help="carrier toggles of eth0 a minute (1000)")
    ap.add_argument("--portal-every", type=float, help="portal on/off on wlan0 every S s (30)")
    ap.add_argument("--sample-every", type=float, help="sample the agent every S s (2)")
    ap.add_argument("--settle-timeout", type=float, default=150.0,
                    help="bound of the wait for the settled agent after the storm, s (150)")
    args = parse_bench_args(ap, "--smoke", "a 20-s storm after a 10-s warm-up (CI)", SMOKE, FULL)
    if args.minutes <= 0 or args.warmup < 0 or not 1 <= args.flaps_per_minute <= 6000 \
            or args.portal_every <= 0 or args.sample_every <= 0:
        ap.error("--minutes, --portal-every and --sample-every must be positive, --warmup at least 0, "
                 "--flaps-per-minute 1 to 6000")
    started = lab_bench_header(
        args, "uplinkd under a carrier and portal storm (Tests/bench/bench_storm.py)",
        "a 20-s storm; only the final state and the answering agent are judged",
        config="`[interface X] dns = ROUTER`, `[agent] flap-half-life = 10s`, `flap-max-suppress = 1m` "
               "(damping's shape, released within a minute), `[export] prometheus-textfile`; every other "
               "setting at its default; hooks: 10-record, 20-slow (sleep 0.05), hooks/50-route-failover")
    if started is None:
        return 1
    binary, header = started
    header.append(f"- storm: {PRIMARY}'s carrier toggled {args.flaps_per_minute} times a minute, a 302 portal "
                  f"on {BACKUP} on or off every {args.portal_every:g} s; {args.warmup:g} s warm-up, then "
                  f"{args.minutes * 60:g} s measured; samples every {args.sample_every:g} s")

    parts = Parts()
    res = {}
    progress(f"about {(args.warmup + args.minutes * 60 + 60) / 60:.0f} min (up to "
             f"{args.settle_timeout / 60:.1f} more to settle); {binary}")
    with tempfile.TemporaryDirectory(prefix="bench-storm-") as tmp:
        try:
            parts.attempt("storm", lambda: storm_bench(binary, Path(tmp), args, res))
        except KeyboardInterrupt:
            print("bench: interrupted", file=sys.stderr)
            return 130
    print("\n".join(header))
    print()
    print(table(res, args))
    print()
    print("Method: see the docstring of Tests/bench/bench_storm.py. Figures of the storm run from the end "
          "of the warm-up to the end of the flapping; KiB = 1024 bytes.")
    print()
    print("Done when:")
    failed = False
    for judged, passed, text in verdicts(res, args):
        mark = ("PASS" if passed else "FAIL") if judged else "(not judged: --smoke)"
        failed |= judged and not passed
        print(f"- {mark} {text}")
    for err in parts.errors:
        print(f"\nNOT MEASURED, {err}")
    return 1 if failed or parts.errors else 0


if __name__ == "__main__":
    sys.exit(main())
