#!/usr/bin/env python3
"""Failover and probe cost of `uplinkd run` at its DEFAULT settings, in the failover
lab (Tests/integration/failoverlab.py): one Markdown table.

    sudo python3 Tests/bench/bench_failover.py [--binary PATH] [--runs N]
        [--bytes-seconds S] [--steady-seconds S] [--soak-seconds S] [--settle S]
        [--skip PARTS] [--lan-client concurrent|sequential] [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header (date,
machine, binary, command) and the table. Nothing is asserted; the targets
are printed beside the figures. Exit status 1 only when a part could not run at
all (lab or start-up failure, a crash); a failover that did not happen within its
bound is a figure ("not moved"), not an error.

The lab: a gateway with eth0 (ethernet), wlan0 (Wi-Fi) and wwan0 (cellular,
metered by default), each a veth to an upstream namespace whose dnsmasq answers
the five built-in probe names with 203.0.113.80 (TTL 300) and whose HTTP server
answers the five built-in endpoints as the real ones do (same bodies, realistic
headers); a LAN namespace behind the gateway, forwarded and NATed out of the
primary. The agent's configuration sets nothing but `[interface X] dns = ROUTER`
(every probing setting at its default: built-in probes, intervals, time limits,
hysteresis, hold-down), and for the cut parts `flap-penalty = 0` (their repeated
cuts of one agent would otherwise be damped); its hooks directory holds the recording hook (10-record:
one line per run, stamped with `date +%s.%N` as it starts) and the SHIPPED
hooks/50-route-failover (so LAN traffic follows the primary, as on a gateway).
Each part builds its own lab and starts its own agent.

Parts (--skip takes their names):

  cut-traffic  (i) eth0's upstream cut with the carrier up (nftables in its
               upstream namespace drops everything to and from 203.0.113.0/24;
               its router keeps answering DNS and ARP) while the LAN client
               (lanclient.py: a new TCP connection and GET every 100 ms, 1 s
               time limit; --lan-client concurrent, the default: each request on
               time in a thread of its own, as many LAN hosts; sequential: one at
               a time) fetches through the primary. Measured: from just before
               the `nft` command to the start of the first hook run of the
               primary event (hook log timestamp); and the LAN outage, from the
               cut to the first answer through the new primary. --runs runs with
               one agent: before each cut it waits a uniform random time in
               [0, 30 s) (the default interval of light rounds on an unmetered
               uplink) so the cut falls at a random phase of the probe schedule;
               after it the upstream is restored and the agent awaited back on
               eth0 (after its hold-down) with the LAN traffic through eth0 again.
               Where the time goes, median over the runs: from the cut to the
               first stall alarm (the agent's "packets leave with nothing coming
               back" line), the doubt that starts the confirming full round (that
               alarm, or a failed liveness or light round's "round on eth0" line),
               the confirming round's end (its "(full round)" line, the last one
               before the verdict), the verdict (the agent's "eth0: online -> ..."
               line), the verdict hook and the primary hook started (hook log),
               the route hook started (the agent's "hook 50-route-failover:
               primary" line), the route through wlan0 in table 7077 (`ip monitor
               route` in the gateway) and the first LAN answer through wlan0. The
               agent runs with -v -v; its stderr lines and the route monitor's
               are stamped with CLOCK_MONOTONIC as they arrive (a few ms late at
               most), the hook log and the LAN client's log with the wall clock;
               the cut is taken on both clocks.
  cut-idle     (ii) the same with no LAN traffic (probes alone must find out).
  bytes        (iii) probe data on the wire: an agent at defaults, no LAN traffic,
               every uplink online (eth0 primary, wlan0 and wwan0 backups). After
               start-up it waits --settle seconds (default 600 = half the metered
               default interval of 20 min, so a window of k intervals holds k
               rounds whatever their phase), then over a window of
               --bytes-seconds (default 3600) compares per uplink the nftables
               counters of the gateway's own IPv4 traffic through it (input and
               output hooks in the gateway namespace: headers, handshakes,
               retransmissions and DNS included; forwarded LAN traffic excluded)
               with the agent's own count (`bytes_today` of the state file, its
               change over the window), and extrapolates both per month (30 days).
               Both readings are taken at quiet moments (no probe at that
               upstream for 2 s), so no round is cut in two. The same comparison
               is printed since the agent started (start-up rounds included).
  steady       (iv) no false failover: a healthy eth0 primary carrying steady LAN
               traffic for --steady-seconds (default 600): primary changes and
               verdict changes in the hook log, failed LAN requests; and the probe
               data on eth0 (and wwan0) during it, per month, as in (iii).
  idle         (v) idle CPU and memory of the agent at defaults, 3 uplinks, no
               traffic: measured over the (iii) window on the same agent (the
               whole process tree, as bench_compare.py measures it: CPU = own run
               time of each live process + reaped children; RSS and
               Private_Dirty sampled every second).
  soak-loss    (vi) no false failover for --soak-seconds (default 1800): a
               healthy eth0 primary whose upstream drops 2 % of the packets each
               way at random (FailoverLab.lossy: nftables numgen), with the
               concurrent LAN client fetching through it.
  soak-burst   (vii) the same window on a healthy eth0 with a bursty LAN upload
               (FailoverLab.bursty_upload, udpburst.py: a 200-byte UDP datagram
               every 50 ms to 203.0.113.80:9000, answered only every 2 s, by a
               burst of 4): one-way traffic the stall rule raises alarms about.
  soak-rtt     (viii) the same window with a 300 ms round trip on eth0
               (FailoverLab(delays={"eth0": 150}): delayrelay.py between gw and
               its upstream), with the concurrent LAN client (2 s time limit).
               For each soak, over the window: primary changes and verdict
               changes in the hook log (the target: none), stall alarms and full
               rounds on eth0 (the agent's lines, -v -v), light and liveness
               rounds on eth0, eth0's probe data on the wire and by the agent's
               count, per month, as in (iii), LAN requests failed, and what
               shows the condition held (packets the loss rules dropped, the
               upload's replies, the round trip eth0's probes measured).
               With --lan-client sequential every soak has the one sequential
               client instead (the bursty upload too, beside its datagrams).

In a full run, (iii)+(v) run in a lab of their own in parallel with the rest;
(i), (ii), (iv) run one after the other, then the three soaks in parallel, each
in a lab of its own with its own agent (mostly asleep, CPU is accounted per
process; the cuts are timed with no soak running). With --smoke every part is
very short, all run in parallel (a few minutes in all, a check that the
benchmark runs, not figures).
"""

import argparse
import functools
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchstats import NONE, Parts, fmt_s, mean, median, p95, ratio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
import lab as labmod  # noqa: E402
from agentrun import AgentError, AgentRun  # noqa: E402
from bench_agent import lab_binary  # noqa: E402
from bench_compare import (Sampler, header_lines, parse_bench_args, tree_cpu,  # noqa: E402
                           tree_memory)
from failoverlab import FailoverLab  # noqa: E402

UNMETERED_INTERVAL_S = 30.0          # the agent's default light-round interval, unmetered uplinks
METERED_INTERVAL_S = 1200.0          # ... and metered ones (20 min)
MONTH_S = 30 * 86400
UPLINKS = ("eth0", "wlan0", "wwan0")
SOAKS = ("soak-loss", "soak-burst", "soak-rtt")
PARTS = ("cut-traffic", "cut-idle", "bytes", "steady", "idle") + SOAKS
FULL = {"runs": 20, "bytes_seconds": 3600.0, "steady_seconds": 600.0, "soak_seconds": 1800.0,
        "settle": METERED_INTERVAL_S / 2, "detect_timeout": 120.0, "back_timeout": 180.0}
SMOKE = {"runs": 1, "bytes_seconds": 20.0, "steady_seconds": 20.0, "soak_seconds": 20.0, "settle": 2.0,
         "detect_timeout": 45.0, "back_timeout": 90.0}
RTT_DELAY_MS = 150                   # soak-rtt: one way, so a 300 ms round trip
LOSS_PERCENT = 2                     # soak-loss
# The agent's lines (-v -v) the timeline and the soaks read.
STALL_RE = re.compile(r"\beth0: packets leave with nothing coming back")
ROUND_RE = re.compile(r"round on eth0: eth0: (\w+) .*\((\w+) round\)$")
VERDICT_RE = re.compile(r"uplinkd: notice: eth0: online -> (\w+)")
ROUTE_HOOK_RE = re.compile(r"hook 50-route-failover: primary eth0 -> (\w+)")
SETTLE_TIMEOUT_S = 60.0
T0 = time.monotonic()


def progress(msg):
    print(f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - T0:5.0f}s] {msg}",
          file=sys.stderr, flush=True)


def mb(n_bytes):
    """Bytes as decimal megabytes (the issue's "5 MB a month")."""
    if n_bytes is None:
        return NONE
    return f"{n_bytes / 1e6:.2f} MB" if n_bytes >= 1e5 else f"{n_bytes / 1e3:.1f} kB"


def kib_of(kibibytes):
    return NONE if kibibytes is None else f"{kibibytes:.0f} KiB"


def per_month(n_bytes, seconds):
    return None if n_bytes is None or not seconds else n_bytes * MONTH_S / seconds


# -- one agent in one lab ------------------------------------------------------------

class Scene:
    """A failover lab and the agent at its defaults in it (a context manager).
    sections: configuration added to the lab's (FailoverLab.agent_config), hooks:
    {name: body} beside the lab's (AgentRun adds 10-record), lab: the lab's class."""

    def __init__(self, binary, workdir: Path, name: str, traffic=False, verbose=1, sections=None, hooks=None,
                 lab=FailoverLab, concurrent_lan=False, lan_timeout=1.0, timed=False):
        self.binary, self.dir, self.name = binary, workdir / name, name
        self.traffic, self.verbose, self.concurrent_lan = traffic, verbose, concurrent_lan
        self.lan_timeout, self.timed = lan_timeout, timed
        self.sections, self.hooks, self.lab_class = sections, hooks or {}, lab
        self.lab = self.run = self.client = None

    def __enter__(self):
        self.lab = self.lab_class().build()
        try:
            if self.traffic:
                self.client = self.lab.lan_client(concurrent=self.concurrent_lan, timeout=self.lan_timeout)
            self.base = self.lab.counters()              # before the agent's first byte
            self.run = AgentRun(self.lab, self.dir, self.lab.agent_config(sections=self.sections),
                                hooks={**self.lab.agent_hooks(), **self.hooks},
                                binary=self.binary, verbose=self.verbose).start(timed=self.timed)
            failoverlab.wait_settled(self.run, self.lab, SETTLE_TIMEOUT_S)
            if self.client:
                self.client.wait_flowing("eth", timeout=30)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        if self.run is not None:
            try:
                self.run.stop()
            finally:
                self.run.close()
        if self.lab is not None:
            self.lab.destroy()
        return False

    # -- bytes ---------------------------------------------------------------------------
    def quiet(self, timeout=60.0, gap=2.0):
        """Wait until no upstream has logged a probe request (or DNS query) for
        `gap` seconds: no round in flight, the state file's counts final."""
        lb = self.lab
        sizes = {i: lb.dns_log_size(i) for i in UPLINKS}
        deadline = time.monotonic() + timeout
        while True:
            now = time.time()
            last = max((r.t for i in UPLINKS for r in lb.probe_requests(i, since=now - 30)), default=0.0)
            dns_moved = any(lb.dns_log_size(i) != sizes[i] for i in UPLINKS)
            sizes = {i: lb.dns_log_size(i) for i in UPLINKS}
            if now - last >= gap and not dns_moved:
                return
            if time.monotonic() >= deadline:
                return                                    # busy: read anyway (noted by the caller)
            time.sleep(0.5)

    def reading(self):
        """(wall time, {iface: agent bytes_today}, {iface: wire bytes}) at a quiet moment."""
        self.quiet()
        st = self.run.state()
        agent = {i: int(st["uplinks"][i]["bytes_today"]) for i in UPLINKS if i in st["uplinks"]}
        counters = self.lab.counters()
        wire = {i: counters[i]["local_in"][1] + counters[i]["local_out"][1] for i in UPLINKS}
        return time.time(), agent, wire


def byte_figures(start, end, base_wire=None):
    """{iface: (seconds, wire delta, agent delta)} between two readings; with
    base_wire, the "since start" figures (agent's full count vs wire since before it ran)."""
    t1, a1, w1 = end
    t0, a0, w0 = start if start is not None else (None, {}, {})
    out = {}
    for i in UPLINKS:
        if base_wire is not None:
            out[i] = (None, w1[i] - base_wire[i], a1.get(i))
        else:
            da = a1[i] - a0[i] if i in a1 and i in a0 else None
            out[i] = (t1 - t0, w1[i] - w0[i], da)
    return out


# -- (i), (ii) ----------------------------------------------------------------------

class RouteWatch:
    """`ip monitor route` in the gateway namespace, each line stamped with
    CLOCK_MONOTONIC as it arrives (a context manager)."""

    def __init__(self, lb):
        self.lines = []
        self.proc = subprocess.Popen(lb.exec_argv("gw", ["ip", "monitor", "route"]), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self):
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.append((time.monotonic(), raw.decode(errors="replace").rstrip("\n")))

    def first(self, since, table, dev):
        """When a route of `table` through `dev` was first added at or after `since`."""
        return next((t for t, line in list(self.lines) if t >= since and not line.startswith("Deleted")
                     and f"table {table}" in line and f"dev {dev} " in line + " "), None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.thread.join(timeout=5)
        self.proc.stdout.close()
        return False


# The steps of a failover, in order: (key, what the table calls it).
TIMELINE = (
    ("stall", "first stall alarm (agent: packets leave with nothing coming back)"),
    ("doubt", "confirming full round starts (the alarm, or a failed liveness/light round)"),
    ("confirmed", "confirming full round ends (its \"(full round)\" line)"),
    ("verdict", "verdict decided (agent: eth0: online -> ...)"),
    ("verdict_hook", "verdict hook started (hook log)"),
    ("primary_hook", "primary hook started (hook log, 10-record)"),
    ("route_hook", "route hook started (agent: hook 50-route-failover: primary)"),
    ("route", "route through the new primary in table 7077 (ip monitor route)"),
    ("lan", "first LAN answer through the new primary (LAN client)"),
)


def timeline(run, lb, client, routes, m0, w0, new_primary):
    """{step: seconds after the cut} of one failover (steps not seen are left
    out), and what raised the doubt: "stall", "liveness" or "light"."""
    lines = [(t, line) for t, line in list(run.lines) if t >= m0]
    marks, cause = {}, None
    stall = next((t for t, line in lines if STALL_RE.search(line)), None)
    if stall is not None:
        marks["stall"] = stall - m0
    verdict = next((t for t, line in lines if VERDICT_RE.search(line)), None)
    doubts = [(t, "stall") for t, line in lines if STALL_RE.search(line)]
    full = []
    for t, line in lines:
        m = ROUND_RE.search(line)
        if m and m.group(2) in ("liveness", "light") and m.group(1) != "online":
            doubts.append((t, m.group(2)))
        elif m and m.group(2) == "full":
            full.append(t)
    doubts.sort()
    if doubts:
        marks["doubt"], cause = doubts[0][0] - m0, doubts[0][1]
    if verdict is not None:
        marks["verdict"] = verdict - m0
        ends = [t for t in full if t <= verdict]
        if ends:
            marks["confirmed"] = ends[-1] - m0
    events = [e for e in run.events() if e.t >= w0]
    vh = next((e for e in events if e.event == "verdict" and e.iface == "eth0" and e.previous == "online"), None)
    if vh is not None:
        marks["verdict_hook"] = vh.t - w0
    ph = next((e for e in events if e.event == "primary" and e.previous_primary == "eth0"), None)
    if ph is not None:
        marks["primary_hook"] = ph.t - w0
    rh = next((t for t, line in lines if ROUTE_HOOK_RE.search(line)), None)
    if rh is not None:
        marks["route_hook"] = rh - m0
    if new_primary:
        route = routes.first(m0, failoverlab.ROUTE_TABLE, new_primary)
        if route is not None:
            marks["route"] = route - m0
        if client is not None:
            _last, first = client.outage(w0, lb.uplink(new_primary).role)
            if first is not None:
                marks["lan"] = first - w0
    return marks, cause


def cut_runs(binary, workdir, traffic, runs, detect_timeout, back_timeout, concurrent_lan=False):
    name = "cut-traffic" if traffic else "cut-idle"
    samples = []
    # The cuts are repeated on one agent: flap damping, which damps exactly such
    # repeated failures, would keep eth0 from coming back between runs. It delays
    # only the return, never the failover measured, so it is off here.
    with Scene(binary, workdir, name, traffic=traffic, sections={"agent": {"flap-penalty": "0"}},
               concurrent_lan=concurrent_lan, verbose=2, timed=True) as sc, RouteWatch(sc.lab) as routes:
        lb, run, client = sc.lab, sc.run, sc.client
        for k in range(runs):
            wait = random.uniform(0.0, UNMETERED_INTERVAL_S)
            time.sleep(wait)                                 # the random phase itself
            last_probe = max((r.t for r in lb.probe_requests("eth0", since=time.time() - 120)),
                             default=None)
            m0, t0 = time.monotonic(), time.time()
            lb.cut("eth0")
            sample = {"wait": wait, "phase": None if last_probe is None else t0 - last_probe}
            try:
                ev = run.wait_until(lambda: next((e for e in run.events() if e.t >= t0 and e.event == "primary"
                                                  and e.previous_primary == "eth0"), None),
                                    detect_timeout, "primary hook after the cut")
                sample.update(detect=ev.t - t0, primary=ev.primary or "-")
                if ev.primary:
                    role = lb.uplink(ev.primary).role
                    run.wait_until(lambda: routes.first(m0, failoverlab.ROUTE_TABLE, ev.primary) is not None,
                                   15, "the new primary's route in table 7077")
                    if client is not None:
                        try:
                            client.wait_flowing(role, since=t0, timeout=30, count=3)
                        except labmod.LabError:
                            pass
                        _last, first = client.outage(t0, role)
                        sample["outage"] = None if first is None else first - t0
                sample["marks"], sample["cause"] = timeline(run, lb, client, routes, m0, t0, ev.primary)
            except AgentError:
                sample.update(detect=None, primary=None)
            finally:
                lb.restore("eth0")
            samples.append(sample)
            progress(f"{name} {k + 1}/{runs}: "
                     + (f"primary hook after {sample['detect']:.2f} s -> {sample['primary']}"
                        if sample["detect"] is not None else f"not moved within {detect_timeout:g} s")
                     + (f", LAN traffic back after {sample['outage']:.2f} s" if sample.get("outage") else "")
                     + (f" (doubt: {sample['cause']})" if sample.get("cause") else ""))
            if k < runs - 1:
                back = time.time()
                failoverlab.wait_settled(run, lb, back_timeout)
                if client is not None:
                    client.wait_flowing("eth", since=back, timeout=30)
    return samples


# -- (iii) + (v) ---------------------------------------------------------------------

def quiet_run(binary, workdir, settle, window, do_idle, every=1.0):
    res = {}
    with Scene(binary, workdir, "quiet", verbose=0) as sc:
        time.sleep(settle)                                   # phase of the metered rounds
        start = sc.reading()
        pid = sc.run.pid
        cpu0, w0 = tree_cpu(pid), time.monotonic()
        sampler = Sampler(pid, every) if do_idle else None
        if sampler:
            sampler.start()
        time.sleep(window)                                   # the measurement window itself
        cpu1, w1 = tree_cpu(pid), time.monotonic()
        end_mem = tree_memory(pid)
        if sampler:
            sampler.stop()
        end = sc.reading()
        st = sc.run.state()
        res["bytes"] = byte_figures(start, end)
        res["since_start"] = byte_figures(None, end, base_wire={i: sc.base[i]["local_in"][1]
                                                                + sc.base[i]["local_out"][1] for i in UPLINKS})
        res["verdicts"] = {i: st["uplinks"][i]["verdict"] for i in st["uplinks"]}
        res["primary"] = st["primary"]
        res["metered"] = {i: st["uplinks"][i].get("metered", "?") for i in st["uplinks"]}
        if do_idle:
            rss = [s[0] for s in sampler.samples]
            dirty = [s[1] for s in sampler.samples]
            res["idle"] = {"cpu": cpu1 - cpu0, "wall": w1 - w0, "rss_end": end_mem[0],
                           "dirty_end": end_mem[1], "procs": end_mem[2],
                           "rss_mean": mean(rss), "rss_max": max(rss, default=None),
                           "dirty_mean": mean(dirty), "dirty_max": max(dirty, default=None),
                           "samples": len(rss)}
    return res


# -- (iv) ------------------------------------------------------------------------------

def steady_run(binary, workdir, seconds):
    res = {}
    with Scene(binary, workdir, "steady", traffic=True) as sc:
        start = sc.reading()
        mark = len(sc.run.events())
        t0 = time.time()
        time.sleep(seconds)                                  # the observation window itself
        t1 = time.time()
        end = sc.reading()
        events = sc.run.events()[mark:]
        lan = sc.client.results(since=t0, until=t1)
        res["bytes"] = byte_figures(start, end)
        res["primary_changes"] = [e.short for e in events if e.event == "primary"]
        res["verdict_changes"] = [e.short for e in events if e.event == "verdict"]
        res["lan_total"] = len(lan)
        res["lan_failed"] = len([r for r in lan if not r.ok])
        res["lan_not_eth"] = len([r for r in lan if r.ok and r.upstream != "eth"])
        res["seconds"] = t1 - t0
    return res


# -- (vi), (vii), (viii) ---------------------------------------------------------------

def soak_run(binary, workdir, part, seconds, concurrent=True):
    """One no-false-failover soak (`part`: soak-loss, soak-burst, soak-rtt) in a lab
    of its own with its own agent (-v -v, stderr lines stamped on arrival). The LAN
    client is concurrent (many flows) or, `concurrent=False`, sequential: one quiet
    client, which also runs beside the bursty upload (the lone-packet rule's case)."""
    lab = functools.partial(FailoverLab, delays={"eth0": RTT_DELAY_MS}) if part == "soak-rtt" else FailoverLab
    traffic = part in ("soak-loss", "soak-rtt") or not concurrent
    res = {}
    with Scene(binary, workdir, part, traffic=traffic, verbose=2, lab=lab, concurrent_lan=concurrent,
               lan_timeout=2.0 if part == "soak-rtt" else 1.0, timed=True) as sc:
        lb, run = sc.lab, sc.run
        upload = None
        if part == "soak-loss":
            lb.lossy("eth0", LOSS_PERCENT)
        elif part == "soak-burst":
            upload = lb.bursty_upload()
        start = sc.reading()
        mark = len(run.events())
        m0, t0 = time.monotonic(), time.time()
        time.sleep(seconds)                                  # the soak itself
        m1, t1 = time.monotonic(), time.time()
        end = sc.reading()
        events = run.events()[mark:]
        lines = [line for t, line in list(run.lines) if m0 <= t < m1]
        rounds = [m.groups() for m in map(ROUND_RE.search, lines) if m]
        res["seconds"] = t1 - t0
        res["bytes"] = byte_figures(start, end)
        res["primary_changes"] = [e.short for e in events if e.event == "primary"]
        res["verdict_changes"] = [e.short for e in events if e.event == "verdict"]
        alarms = [line for line in lines if STALL_RE.search(line)]
        res["stall_alarms"] = len(alarms)
        res["lone_alarms"] = len([line for line in alarms if "lone-packet rule" in line])
        res["rounds"] = {purpose: len([r for r in rounds if r[1] == purpose]) for purpose in ("full", "light", "liveness")}
        res["failed_rounds"] = len([r for r in rounds if r[0] != "online"])
        res["state"] = run.state()
        if sc.client is not None:
            lan = sc.client.results(since=t0, until=t1)
            res["lan_total"] = len(lan)
            res["lan_failed"] = len([r for r in lan if not r.ok])
        if part == "soak-loss":
            res["evidence"] = f"loss rules (seen, dropped) per direction of eth0's upstream: {lb.loss_counts('eth0')}"
        elif part == "soak-burst":
            replies = upload.replies(since=t0)
            res["evidence"] = (f"{len(replies)} replies to the upload in the window (bursts of 4 every 2 s), "
                               f"through {', '.join(sorted({r[1] for r in replies})) or 'nothing'}")
            upload.stop()
        else:
            res["evidence"] = f"eth0's round trip in the state file at the end: {res['state']['uplinks']['eth0'].get('rtt_ms')} ms"
    return res


# -- the table ---------------------------------------------------------------------

def table(res, args):
    rows = []
    lan_client = args.lan_client

    def section(title):
        rows.append((f"**{title}**", "", ""))

    def row(figure, value, target="–"):
        rows.append((figure, value, target))

    def times(samples, key):
        return [s[key] for s in samples if s.get(key) is not None]

    def med_p95(xs):
        return f"{fmt_s(median(xs))} / {fmt_s(p95(xs))}" if xs else NONE

    for part, title, target in (
            ("cut-traffic", "with LAN traffic through the primary", "–"),
            ("cut-idle", "with no traffic", "median ≤ 5 s, p95 ≤ 10 s")):
        if part not in res:
            continue
        samples = res[part]
        section(f"Upstream cut with carrier up (eth0, primary), {title}: defaults, random phase")
        moved = times(samples, "detect")
        missed = len(samples) - len(moved)
        row(f"cut → primary hook started: median / p95 (n={len(moved)}"
            + (f"; {missed} not moved within {args.detect_timeout:g} s" if missed else "") + ")",
            med_p95(moved), target)
        row("each run", ", ".join(fmt_s(s["detect"]) if s.get("detect") is not None else "not moved"
                                  for s in samples))
        got = [s["primary"] for s in samples if s.get("detect") is not None]
        row("new primary (runs)", ", ".join(f"{p} ({got.count(p)})" for p in sorted(set(got))) or NONE,
            "wlan0")
        phases = times(samples, "phase")
        if phases:
            row("phase: cut after eth0's last probe request, median (min–max)",
                f"{fmt_s(median(phases))} ({fmt_s(min(phases))}–{fmt_s(max(phases))})")
        out = times(samples, "outage")
        if part == "cut-traffic":
            row(f"LAN traffic ({lan_client} client): cut → first answer through the new primary, median / p95",
                med_p95(out), "median ≤ 1.0 s, p95 ≤ 1.5 s")
        causes = [s["cause"] for s in samples if s.get("cause")]
        if causes:
            row("what raised the doubt (runs)", ", ".join(f"{c} ({causes.count(c)})" for c in sorted(set(causes))))
        for key, label in TIMELINE:
            xs = [s["marks"][key] for s in samples if key in s.get("marks", {})]
            if not xs and (key == "stall" or key == "lan") and part == "cut-idle":
                continue
            row(f"where the time goes: cut → {label}, median (min–max), runs seen",
                f"{fmt_s(median(xs))} ({fmt_s(min(xs))}–{fmt_s(max(xs))}), {len(xs)}/{len(samples)}" if xs else NONE)

    def byte_rows(figs, label, uplinks, note=""):
        for i in uplinks:
            seconds, wire, agent = figs[i]
            pm_wire, pm_agent = per_month(wire, seconds), per_month(agent, seconds)
            target = {"wwan0": "≤ 5 MB / month (metered)", "eth0": "≤ 246 MB / month"}.get(i, "–") \
                if label == "idle" else "–"
            row(f"{i} {note}: on the wire in {seconds:.0f} s, per month",
                f"{wire} B; {mb(pm_wire)}", target)
            row(f"{i} {note}: agent's count (bytes_today), per month; agent / wire",
                f"{agent} B; {mb(pm_agent)}; {ratio(agent, wire)}" if agent is not None else NONE,
                "within 10 %")

    q = res.get("quiet")
    if q and "bytes" in q:
        section(f"Probe data on the wire (nftables, gateway's own IPv4 traffic, both directions), "
                f"defaults, no LAN traffic, window of {args.bytes_seconds:g} s after {args.settle:g} s")
        row("verdicts at the end; METERED", " ".join(f"{i}={v}" for i, v in q["verdicts"].items())
            + f", primary {q['primary']}; " + " ".join(f"{i}={m}" for i, m in q["metered"].items()))
        byte_rows(q["bytes"], "idle", ("wwan0",), "(metered backup, online)")
        byte_rows(q["bytes"], "idle", ("eth0",), "(unmetered primary, no traffic)")
        byte_rows(q["bytes"], "idle", ("wlan0",), "(unmetered backup)")
        ss = q["since_start"]
        row("since the agent started (start-up rounds included): agent / wire",
            ", ".join(f"{i} {ss[i][2]} / {ss[i][1]} B = {ratio(ss[i][2], ss[i][1])}" for i in UPLINKS),
            "within 10 %")

    s = res.get("steady")
    if s:
        section(f"Healthy primary (eth0) with steady LAN traffic, {s['seconds']:.0f} s, defaults")
        row("primary changes in the hook log", f"{len(s['primary_changes'])}"
            + (f": {', '.join(s['primary_changes'])}" if s["primary_changes"] else ""), "0")
        row("verdict changes in the hook log", f"{len(s['verdict_changes'])}"
            + (f": {', '.join(s['verdict_changes'])}" if s["verdict_changes"] else ""), "0")
        row("LAN requests failed / all (answered through another uplink)",
            f"{s['lan_failed']} / {s['lan_total']} ({s['lan_not_eth']})")
        byte_rows(s["bytes"], "steady", ("eth0",), "(primary, with LAN traffic)")
        byte_rows(s["bytes"], "steady", ("wwan0",), "(metered backup)")

    soak_titles = {"soak-loss": f"{LOSS_PERCENT} % random loss each way on the healthy primary eth0, "
                                f"{lan_client} LAN client",
                   "soak-burst": "a bursty LAN upload (UDP every 50 ms, answered every 2 s by 4 datagrams) on eth0"
                                 + ("" if lan_client == "concurrent" else ", sequential LAN client"),
                   "soak-rtt": f"a {2 * RTT_DELAY_MS} ms round trip on eth0 (delay relay), {lan_client} LAN client"}
    for part in SOAKS:
        s = res.get(part)
        if not s:
            continue
        section(f"No false failover: {soak_titles[part]}, {s['seconds']:.0f} s, defaults")
        row("primary changes in the hook log", f"{len(s['primary_changes'])}"
            + (f": {', '.join(s['primary_changes'])}" if s["primary_changes"] else ""), "0")
        row("verdict changes in the hook log", f"{len(s['verdict_changes'])}"
            + (f": {', '.join(s['verdict_changes'])}" if s["verdict_changes"] else ""), "0")
        row("stall alarms on eth0 (of them, the lone-packet rule's)", f"{s['stall_alarms']} ({s.get('lone_alarms', 0)})")
        r = s["rounds"]
        row("rounds on eth0: full / light / liveness (not online)",
            f"{r['full']} / {r['light']} / {r['liveness']} ({s['failed_rounds']})")
        if "lan_total" in s:
            row("LAN requests failed / all", f"{s['lan_failed']} / {s['lan_total']}")
        row("condition held", s["evidence"])
        byte_rows(s["bytes"], "soak", ("eth0",), "(primary)")

    if q and "idle" in q:
        d = q["idle"]
        section(f"Idle, defaults, 3 uplinks, no traffic: the agent's process tree over {d['wall']:.0f} s")
        row("CPU seconds per idle hour", f"{d['cpu'] * 3600 / d['wall']:.2f} s/h ({d['cpu']:.3f} s in "
            f"{d['wall']:.0f} s)", "not worse than README (0.03 s/h at 5 min, 3 uplinks)")
        row("RSS: end of the window; mean / max of samples every second",
            f"{d['rss_end']} KiB; {kib_of(d['rss_mean'])} / {kib_of(d['rss_max'])} (n={d['samples']}, "
            f"{d['procs']} processes at the end)", "README (5 min interval): 17552 KiB")
        row("Private_Dirty: end; mean / max", f"{d['dirty_end']} KiB; "
            f"{kib_of(d['dirty_mean'])} / {kib_of(d['dirty_max'])}", "README (5 min interval): 2064 KiB")

    lines = ["| figure | value | target |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


# -- main ----------------------------------------------------------------------------------

def skipped_parts(ap, args, parts):
    """The parts --skip names, each checked against `parts`."""
    skip = set(filter(None, args.skip.split(",")))
    if skip - set(parts):
        ap.error(f"--skip: unknown parts {sorted(skip - set(parts))}; known: {','.join(parts)}")
    return skip


DEFAULTS_CONFIG = ("`[interface X] dns = ROUTER` only (built-in probes, every other setting at its "
                   "default); hooks: 10-record, hooks/50-route-failover")


def lab_bench_header(args, title, smoke_note, config=DEFAULTS_CONFIG):
    """(binary, header lines) of a benchmark of the agent in the failover lab, or None
    (the reason on stderr) when the binary or the lab cannot run. `config`: what the
    agent runs with, for the header's configuration line."""
    found = lab_binary(args.binary, tools=("nft", "dnsmasq"), lab_problem=failoverlab.unavailable_reason)
    if found is None:
        return None
    binary, note = found
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    header = header_lines(title, f"{version} ({binary})", args.command)
    header.append(f"- configuration: {config}")
    if args.smoke:
        header.append(f"- NOTE: --smoke: {smoke_note}, to check that the benchmark runs; not figures")
    if note:
        header.append(f"- {note}")
    return binary, header


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--runs", type=int, help="cuts per cut part (20)")
    ap.add_argument("--bytes-seconds", type=float, help="bytes/idle window, s (3600)")
    ap.add_argument("--steady-seconds", type=float, help="healthy-primary window, s (600)")
    ap.add_argument("--soak-seconds", type=float, help="window of each no-false-failover soak, s (1800)")
    ap.add_argument("--settle", type=float, help="wait after start-up before the bytes window, s (600)")
    ap.add_argument("--detect-timeout", type=float, help="bound of one cut, s (120)")
    ap.add_argument("--back-timeout", type=float, help="bound of the return to eth0 between cuts, s (180)")
    ap.add_argument("--skip", default="", help="comma list of " + ",".join(PARTS))
    ap.add_argument("--lan-client", choices=("concurrent", "sequential"), default="concurrent",
                    help="LAN requests every 100 ms each on time (concurrent, default) or one at a time")
    args = parse_bench_args(ap, "--smoke", "every part very short, all in parallel (CI)", SMOKE, FULL)
    skip = skipped_parts(ap, args, PARTS)
    if args.runs < 1 or args.bytes_seconds < 1 or args.steady_seconds < 1 or args.soak_seconds < 1 \
            or args.settle < 0:
        ap.error("--runs, --bytes-seconds, --steady-seconds and --soak-seconds must be at least 1, "
                 "--settle at least 0")
    started = lab_bench_header(
        args, "uplinkd failover and probe cost at the default settings (Tests/bench/bench_failover.py)",
        "very short windows and single runs")
    if started is None:
        return 1
    binary, header = started

    parts = Parts()
    res, errors, attempt = parts.results, parts.errors, parts.attempt

    with tempfile.TemporaryDirectory(prefix="bench-failover-") as tmp:
        workdir = Path(tmp)
        jobs = []
        if "bytes" not in skip or "idle" not in skip:
            jobs.append(("quiet", lambda: quiet_run(binary, workdir, args.settle, args.bytes_seconds,
                                                    "idle" not in skip)))
        serial = []
        for part, traffic in (("cut-traffic", True), ("cut-idle", False)):
            if part not in skip:
                serial.append((part, (lambda traffic: lambda: cut_runs(
                    binary, workdir, traffic, args.runs, args.detect_timeout, args.back_timeout,
                    args.lan_client == "concurrent"))(traffic)))
        if "steady" not in skip:
            serial.append(("steady", lambda: steady_run(binary, workdir, args.steady_seconds)))
        soaks = [(part, (lambda part: lambda: soak_run(binary, workdir, part, args.soak_seconds,
                                                        args.lan_client == "concurrent"))(part))
                 for part in SOAKS if part not in skip]
        per_run = UNMETERED_INTERVAL_S / 2 + 10 + 30 + 15       # phase, cut, hold-down, return
        serial_s = sum(args.runs * per_run for n, _ in serial if n.startswith("cut")) + \
            (args.steady_seconds + 20 if "steady" not in skip else 0) + (args.soak_seconds + 40 if soaks else 0)
        quiet_s = args.settle + args.bytes_seconds + 20 if jobs else 0
        longest = max([quiet_s] + [args.runs * per_run if n.startswith("cut") else args.steady_seconds + 20
                                   for n, _ in serial] + [args.soak_seconds + 40 for _ in soaks]) \
            if args.smoke else max(serial_s, quiet_s)
        progress(f"about {longest / 60:.0f} min; {binary}"
                 + (" (smoke: all parts in parallel)" if args.smoke else ""))
        threads = []
        try:
            if args.smoke:
                jobs += serial + soaks
                serial, soaks = [], []
            for name, fn in jobs:
                progress(f"{name}: started in a lab of its own")
                t = threading.Thread(target=attempt, args=(name, fn), daemon=True)
                t.start()
                threads.append(t)
            for name, fn in serial:
                progress(f"{name}: started")
                attempt(name, fn)
            # The soaks after the timed parts, side by side, each in a lab of its own.
            for name, fn in soaks:
                progress(f"{name}: started in a lab of its own")
                t = threading.Thread(target=attempt, args=(name, fn), daemon=True)
                t.start()
                threads.append(t)
            for t in threads:
                while t.is_alive():
                    t.join(timeout=1.0)
        except KeyboardInterrupt:
            print("bench: interrupted", file=sys.stderr)
            return 130
    if "quiet" in res:
        res["quiet"] = {k: v for k, v in res["quiet"].items()
                        if k != "bytes" or "bytes" not in skip}
    print("\n".join(header))
    print()
    print(table(res, args))
    print()
    print("Method: see the docstring of Tests/bench/bench_failover.py. Per month = 30 days, "
          "extrapolated from the window; MB = 10^6 bytes. Times run from just before the `nft` "
          "command of the cut to the start of the first hook of the primary change.")
    for err in errors:
        print(f"\nNOT MEASURED, {err}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
