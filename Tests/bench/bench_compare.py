#!/usr/bin/env python3
"""uplinkd beside the do-it-yourself shell loop, in the namespace lab: one table.

    sudo python3 Tests/bench/bench_compare.py [PATH_TO_UPLINKD] [--deb FILE]
        [--interval S] [--idle-seconds S] [--settle S] [--flips N] [--gap S]
        [--fast-runs N] [--default-runs N] [--check-runs N] [--dead-runs N]
        [--sample-every S] [--skip LIST] [--trial] [--command TEXT]

Normally started by `bash Tests/bench/run` (builds the release binary and the .deb
first). PATH defaults as in bench_agent.py ($UPLINKD, else the release build).
Progress goes to stderr; stdout gets a header (date, machine, versions, command) and
one Markdown table with the columns uplinkd | shell loop | uplinkd / shell loop.

The shell loop is Tests/bench/shell-failover.sh: every INTERVAL seconds
`curl --interface IF -s -o /dev/null -w '%{http_code}' --max-time T URL` per uplink
in priority order, an uplink offline after 2 failed probes and back after 2 good
ones, the first online uplink made the default route with
`ip route replace default via GW dev IF metric 10 proto 77` when it changes. It runs
under /bin/sh with PATH as its only environment variable.

Both tools get the same single probe, http://203.0.113.80/generate_204 (expected
204; uplinkd configurations say `default-probes = no`), the same interval, the same
time limit (curl --max-time = uplinkd [check] timeout) and the same hysteresis
(2 failures to leave, 2 successes to return). Traffic never leaves the namespaces
this script creates. Two settings:

  fast     uplinkd's fast profile (interval 1s, suspect-interval 200ms,
           failures-to-leave-online 2, timeout 800ms); shell loop -i 1 -t 0.8
  default  one interval for every uplink, written out for both: 5 min (uplinkd's
           defaults before per-class settings), or --interval S; [check] timeout
           5 s; shell loop -i S -t 5. uplinkd's own defaults now differ per class
           (Tests/bench/bench_failover.py measures those)

What is measured, and how:

- Footprint: `strip -o` of the binary (as packaging/footprint.sh); the .deb's file
  size (--deb, else the newest packaging/out/uplinkd_*.deb, named in the cell).
  The shell loop's column gives the script's size (it needs curl and iproute2).
  One probe process: `uplinkd check wwan0` and one curl through wwan0, its
  upstream blackholed so the probe hangs, read 2 s in: VmHWM (peak RSS of the
  process's memory so far) and Private_Dirty. This is what the shell loop's tree
  gains for the few milliseconds a curl runs (one at a time).

- Memory and CPU, idle: a lab of its own per tool and uplink count: 3 uplinks (eth0
  online, wlan0 behind a 302 portal, wwan0 refusing) or 32 (the same plus 29 veth
  pairs from gw into the "inet" namespace, ext1..ext29, each its own /24 and
  default route with metric 400+K, all online). Default settings. After the
  start-up verdicts the run settles for --settle (interval/2, so a window of k
  intervals holds k probe rounds whatever the phase), then a window of
  --idle-seconds. Both tools are measured over their whole process tree (the shell
  loop's tree has sh, sleep, curl, ip and hooks; uplinkd's has uplinkd and hooks):
    CPU = the change over the window of the sum, over the processes alive in the
          tree, of their own run time (/proc/PID/task/*/schedstat, nanoseconds)
          and their cutime+cstime (/proc/PID/stat, clock ticks): cutime/cstime
          hold every descendant already reaped, so short-lived curl and sleep
          processes are counted. (/proc, not cgroups: it needs no cgroup v2
          delegation.) Per idle hour = CPU over the window x 3600 / window.
    memory = sums over the tree of VmRSS (/proc/PID/status) and Private_Dirty
          (/proc/PID/smaps_rollup), sampled every --sample-every seconds over the
          window (mean and max of the samples) and once at its end. RSS counts
          shared pages in every process that maps them; Private_Dirty does not.
          curl lives only milliseconds per probe, so 1 s samples rarely catch it:
          its peak RSS is the footprint row above.
  The four idle runs (2 tools x 3/32 uplinks) run at the same time in four labs, in
  parallel with the default-settings detection runs (all mostly asleep); CPU time
  is accounted per process, so this shortens the run without adding CPU to anyone.

- Detection, timed like bench_agent.py: both tools run the same hook, a POSIX sh
  printf of the UPLINK_* variables into a FIFO read by a thread that stamps each
  line on arrival (uplinkd runs it from its hooks directory; the shell loop with
  -x, after its `ip route replace` for primary changes). Latencies run from just
  before the `ip`/`nft` command that causes the failure to the hook's line.
    carrier loss: the carrier of wlan0's upstream peer is set down (then up again
      and the return awaited, --gap apart); the hook line "wlan0 online -> down"
      (uplinkd) or "online -> offline" (shell loop) ends the measurement.
      uplinkd: --flips flips with its default and with the fast configuration
      (carrier comes from netlink, not from probes); shell loop: --flips flips at
      the fast setting, and at the shared setting --default-runs runs at a random
      phase (below), since each one takes about 1.5 intervals. Each loss comes a
      uniform [0, interval) after the flip before (1 s for uplinkd), so a polling
      loop is not always caught at the same phase.
    upstream loss with carrier up: `nft` drops everything to 203.0.113.80 in
      eth0's upstream namespace; the hook line of the primary moving eth0 -> wlan0
      ends the measurement. A fresh run per cut, the cut at a uniform moment in
      [0, interval) after a round on eth0 ended (bench_agent.random_cut). Fast:
      --fast-runs cuts per tool. Default: --default-runs cuts per tool, run in
      parallel labs; printed are the measured times, D (from the round scheduled
      after the cut to the move: the part that does not depend on the phase) and
      the expected value for a random phase, interval/2 + median D.

- Bytes on the wire for one probe round of one uplink (eth0, the lab probe):
  what each tool counts (uplinkd: `check --json` probe `bytes`, its own IP-level
  count from TCP_INFO with headers; curl: -w size_request + size_header +
  size_download, HTTP only) and IP bytes (both directions, TCP handshake and
  teardown included, no link-layer framing) from an nftables counter in the
  upstream namespace. Per day on a metered uplink at the 5-minute setting = per round x
  86400 / interval. uplinkd's built-in probe set (5 public probes) cannot be
  reached from the lab: its figure is an ESTIMATE = the mean per probe of lab
  emulations of 3 of them (generate_204, hotspot-detect.html, success.txt: the
  same paths and bodies as google, apple, firefox) x 5; real servers send other
  headers and the real host names add about 56 bytes a round. The idle run's
  `status --json` bytes_today of eth0 is shown against the per-round figure.

- check latency: wall time of `uplinkd check IFACE` and of one
  `curl --interface IF -s -o /dev/null -w '%{http_code}' --max-time 5 URL`, both
  started through `ip netns exec`, medians of --check-runs (eth0, online) and
  --dead-runs (wwan0 with its upstream blackholed: both wait out 5 s).

Ratios are uplinkd / shell loop: below 1 uplinkd uses less (or detects sooner).
No figure is asserted; nothing here is a test.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchstats import fmt_s, kib, mean, median, p95, ratio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import lab as labmod  # noqa: E402
from agentrun import AgentError, AgentRun, config_text, proc_memory  # noqa: E402
from bench_agent import (FAST_PROFILE, Bench, lab_binary,  # noqa: E402
                         primary_line, verdict_line)
from bench_check import wall_times  # noqa: E402

SHELL_LOOP = Path(__file__).resolve().parent / "shell-failover.sh"
URL = f"http://{labmod.INTERNET_ADDR}/generate_204"
ONE_PROBE = (("lab", URL, ()),)
# Lab emulations of three of the five built-in probes (same paths and bodies).
EMULATED_DEFAULT_PROBES = (
    ("google", f"http://{labmod.INTERNET_ADDR}/generate_204", ()),
    ("apple", f"http://{labmod.INTERNET_ADDR}/hotspot-detect.html",
     (("expect-contains", "<BODY>Success</BODY>"),)),
    ("firefox", f"http://{labmod.INTERNET_ADDR}/success.txt", (("expect-body", "success"),)),
)
BUILTIN_PROBE_COUNT = 5
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# (iface, gateway) of the lab's uplinks with a default route: eth0, wlan0, wwan0.
LAB_UPLINKS = tuple((u.iface, u.gateway) for u in labmod.UPLINKS if u.gateway)
FALL = RISE = 2                                  # uplinkd's defaults
COUNTER_TABLE = "ulbench_bytes"
CLK_TCK = os.sysconf("SC_CLK_TCK")
T0 = time.monotonic()


def progress(msg):
    print(f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - T0:5.0f}s] {msg}",
          file=sys.stderr, flush=True)


# -- the two settings -------------------------------------------------------------

class Setting:
    """Interval and probe time limit given to both tools, and uplinkd's config."""

    def __init__(self, name, interval, timeout, stall_window=None):
        self.name, self.interval, self.timeout = name, interval, timeout
        self.stall_window = stall_window

    def uplinkd_config(self, probes=ONE_PROBE) -> str:
        if self.name == "fast":
            return config_text(FAST_PROFILE["agent"], timeout=FAST_PROFILE["timeout"],
                               defaults=False, probes=probes)
        # The interval is always written: since uplinkd's defaults differ per class of
        # uplink (10 s unmetered, 20 min metered), both tools get the same one here.
        agent = {"interval": duration(self.interval)}
        if self.stall_window is not None:
            agent["stall-window"] = self.stall_window
        return config_text(agent, timeout=None, defaults=False, probes=probes)

    def describe(self) -> str:
        stall = f"; uplinkd stall-window {self.stall_window}" if self.stall_window is not None else ""
        return f"interval {seconds_text(self.interval)}, timeout {seconds_text(self.timeout)}{stall}"


def duration(seconds: float) -> str:
    """A duration as uplinkd's configuration writes it."""
    ms = round(seconds * 1000)
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def seconds_text(seconds: float) -> str:
    return f"{seconds:g} s"


# -- the shell loop -----------------------------------------------------------------

class ShellRun(AgentRun):
    """shell-failover.sh in the gw namespace, with the AgentRun interface that
    bench_agent.Bench uses (lines, running(), stop(), close(), transcript()).
    It runs in a session of its own so that stopping it ends its sleep and curl."""

    def __init__(self, lb, workdir, uplinks, setting, hook, verbose):
        # AgentRun.__init__ writes an uplinkd configuration: not wanted here.
        self.lab = lb
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.stderr_path = self.dir / "loop.stderr"
        self.uplinks, self.setting, self.hook, self.verbose = uplinks, setting, hook, verbose
        self.proc = None
        self._stderr = None

    def argv(self):
        argv = ["/bin/sh", str(SHELL_LOOP), "-u", URL, "-e", "204",
                "-i", f"{self.setting.interval:g}", "-t", f"{self.setting.timeout:g}",
                "-f", str(FALL), "-r", str(RISE), "-x", str(self.hook)]
        if self.verbose:
            argv.append("-v")
        return argv + [f"{iface}:{gateway}" for iface, gateway in self.uplinks]

    def popen_options(self) -> dict:
        return {"env": {"PATH": CLEAN_PATH}, "start_new_session": True}

    def deliver(self, sig):
        # AgentRun's stop(), kill() and send() call this only while the loop is
        # unreaped: its pid (= its process group) is still ours.
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def transcript(self) -> str:
        rc = None if self.proc is None else self.proc.poll()
        return (f"$ {shlex.join(self.argv())}\n"
                f"shell loop: {'running' if rc is None else f'exited {rc}'}\n"
                f"--- stderr ---\n{self.stderr()}")


class Tool:
    """Starts one of the two tools in a Bench (lab + FIFO hook) and names its lines."""

    def __init__(self, name):
        self.name = name
        self.offline = "down" if name == "uplinkd" else "offline"   # carrier loss word
        self.round_needle = "round on eth0: " if name == "uplinkd" else "round done"

    def start(self, bench, setting, uplinks=LAB_UPLINKS, verbose=True, probes=ONE_PROBE):
        if self.name == "uplinkd":
            return bench.agent(setting.uplinkd_config(probes), verbose=2 if verbose else 0)
        hook = bench.dir / "shell-hook"
        if not hook.exists():
            hook.write_text(bench.fifo.hook())
            hook.chmod(0o755)
        bench.seq += 1
        run = ShellRun(bench.lab, bench.dir / f"shell{bench.seq}", uplinks, setting, hook, verbose)
        return run.start(timed=True)

    def finish(self, bench, run):
        """Stops a run; the shell loop's route (proto 77) is removed from the lab."""
        try:
            run.stop()
        finally:
            run.close()
            if self.name == "shell":
                bench.lab.ip("gw", "route", "flush", "proto", "77", check=False)


UPLINKD, SHELL = Tool("uplinkd"), Tool("shell")
TOOLS = (UPLINKD, SHELL)


def wait_lines(bench, run, since, preds, what, timeout=60.0):
    """Waits for one hook line per predicate (any order); the latest arrival."""
    latest = 0.0
    for pred, label in preds:
        arrived, _ = bench.fifo.wait(pred, since, timeout, f"{what}: {label}", run=run)
        latest = max(latest, arrived)
    return latest


def wait_settled(bench, tool, run, since, timeout=60.0):
    """eth0 primary, wlan0 online (the detection labs)."""
    return wait_lines(bench, run, since,
                      [(primary_line("eth0"), "primary eth0"),
                       (verdict_line("wlan0", "online"), "wlan0 online")],
                      f"{tool.name} start-up", timeout)


# -- process trees ------------------------------------------------------------------

def _children(pid):
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(x) for x in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        pass
    return kids


def process_tree(root):
    """root and its live descendants (/proc/PID/task/TID/children)."""
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        todo += _children(pid)
    return seen


def tree_cpu(root) -> float:
    """Seconds of CPU used by root's tree so far: for every live member, its own
    run time (nanoseconds: the first field of /proc/PID/task/*/schedstat, summed
    over its threads) plus cutime+cstime from /proc/PID/stat (clock ticks: every
    descendant it has reaped, with their own reaped descendants)."""
    total = 0.0
    for pid in process_tree(root):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            own = 0
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    own += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += own / 1e9 + (int(fields[13]) + int(fields[14])) / CLK_TCK   # cutime, cstime
    return total


def tree_memory(root):
    """(sum of VmRSS KiB, sum of Private_Dirty KiB, process count) over root's tree."""
    rss = dirty = count = 0
    for pid in process_tree(root):
        try:
            one_rss, one_dirty = proc_memory(pid)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        rss += one_rss or 0                  # a zombie has no VmRSS line
        dirty += one_dirty
        count += 1
    return rss, dirty, count


class Sampler(threading.Thread):
    """tree_memory(root) every `every` seconds until stop()."""

    def __init__(self, root, every):
        super().__init__(daemon=True)
        self.root, self.every, self.samples = root, every, []
        self._stop_event = threading.Event()

    def run(self):
        next_at = time.monotonic()
        while not self._stop_event.is_set():
            self.samples.append(tree_memory(self.root))
            next_at += self.every
            self._stop_event.wait(max(0.0, next_at - time.monotonic()))

    def stop(self):
        self._stop_event.set()
        self.join(timeout=10)


# -- lab additions --------------------------------------------------------------------

def add_veth_uplinks(lb, count, role="inet"):
    """`count` more uplinks: veth pairs ext1.. from gw into `role`, ext K with
    10.232.K.2/24 (gw) and 10.232.K.1/24 (upstream) and a default route via
    10.232.K.1 with metric 400+K. Only the benchmark's own labs get them."""
    if not 1 <= count <= 250:
        raise ValueError(f"extra uplinks: 1 to 250, not {count}")
    ups = [labmod.Uplink(f"ext{k}", role, f"10.232.{k}.2/24", f"10.232.{k}.1/24",
                         f"10.232.{k}.1", 400 + k) for k in range(1, count + 1)]
    lb.ip_batch("gw", [f"link add {u.iface} type veth peer name {u.peer} netns {lb.ns[role]}"
                       for u in ups] + [f"address add {u.gw_addr} dev {u.iface}" for u in ups])
    lb.ip_batch(role, [c for u in ups for c in (f"address add {u.up_addr} dev {u.peer}",
                                                f"link set {u.peer} up")])
    lb.ip_batch("gw", [f"link set {u.iface} up" for u in ups])
    for u in ups:
        lb.wait_lower_up(u.iface, True)
    lb.ip_batch("gw", [f"route add default via {u.gateway} dev {u.iface} metric {u.metric}"
                       for u in ups])
    return [(u.iface, u.gateway) for u in ups]


def add_byte_counter(lb, addr, role="inet"):
    """nftables counters in `role` of every IP packet from and to `addr`."""
    ruleset = (f"table inet {COUNTER_TABLE} {{\n"
               f"  chain input {{ type filter hook input priority -10; policy accept;\n"
               f"    ip saddr {addr} counter\n  }}\n"
               f"  chain output {{ type filter hook output priority -10; policy accept;\n"
               f"    ip daddr {addr} counter\n  }}\n}}\n")
    labmod.run(lb.exec_argv(role, ["nft", "-f", "-"]), input=ruleset)


def read_byte_counter(lb, role="inet"):
    """(packets, bytes) counted so far."""
    out = labmod.run(lb.exec_argv(role, ["nft", "list", "table", "inet", COUNTER_TABLE])).stdout
    pairs = [(int(p), int(b)) for p, b in re.findall(r"counter packets (\d+) bytes (\d+)", out)]
    return sum(p for p, _ in pairs), sum(b for _, b in pairs)


def counted(lb, action, settle=0.3):
    """(packets, IP bytes) of eth0's traffic during action() (counter must exist)."""
    p0, b0 = read_byte_counter(lb)
    result = action()
    time.sleep(settle)                       # the last FIN/ACK of a closed connection
    p1, b1 = read_byte_counter(lb)
    return p1 - p0, b1 - b0, result


# -- measurements -------------------------------------------------------------------

class Results(dict):
    """name -> value; errors kept separately and shown under the table."""

    def __init__(self):
        super().__init__()
        self.errors = []

    def failed(self, name, exc):
        """Records a part that could not be measured; the run goes on with the others."""
        text = f"{type(exc).__name__}: {exc}"
        print(f"bench: {name} failed: {text}", file=sys.stderr)
        lines = text.splitlines()
        self.errors.append(f"{name}: " + "\n    ".join(lines[:6])
                           + (f"\n    ... ({len(lines) - 6} more lines on stderr)" if len(lines) > 6 else ""))

    def attempt(self, name, fn):
        try:
            fn()
        except Exception as exc:                 # noqa: BLE001 -- shown under the table
            self.failed(name, exc)


def curl_argv(iface, max_time, write_out="%{http_code}"):
    return ["curl", "--interface", iface, "-s", "-o", "/dev/null", "-w", write_out,
            "--max-time", f"{max_time:g}", URL]


def measure_footprint(res, binary, deb):
    with tempfile.TemporaryDirectory(prefix="bench-strip-") as tmp:
        stripped = Path(tmp) / "uplinkd"
        labmod.run(["strip", "-o", str(stripped), str(binary)])
        res["stripped"] = stripped.stat().st_size
    res["unstripped"] = Path(binary).stat().st_size
    if deb is None:
        debs = sorted((labmod.REPO_ROOT / "packaging" / "out").glob("uplinkd_*.deb"),
                      key=lambda p: p.stat().st_mtime)
        deb = debs[-1] if debs else None
    if deb is not None:
        deb = Path(deb)
        res["deb"] = (deb.stat().st_size, deb.name, deb.stat().st_mtime < Path(binary).stat().st_mtime)
    res["script"] = SHELL_LOOP.stat().st_size
    curl = shutil.which("curl")
    res["curl_bin"] = Path(curl).stat().st_size if curl else None


def in_flight_memory(argv, at=2.0):
    """Runs argv (whose probe hangs for seconds: a blackholed uplink) and reads its
    VmHWM, VmRSS and Private_Dirty (KiB) `at` seconds in, while the probe is in
    flight. (wait4's ru_maxrss is no use here: exec keeps the maximum of the mm it
    replaces, and a child spawned from Python starts with Python's.)"""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(at)
        status = {}
        with open(f"/proc/{proc.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                status[key] = value.split()
        with open(f"/proc/{proc.pid}/smaps_rollup") as f:
            dirty = sum(int(ln.split()[1]) for ln in f if ln.startswith("Private_Dirty:"))
        name = status["Name"][0]
        if proc.poll() is not None or name == "ip":
            raise AgentError(f"{shlex.join(argv)}: not running its probe after {at} s ({name})")
        return int(status["VmHWM"][0]), int(status["VmRSS"][0]), dirty
    finally:
        proc.wait(timeout=30)


def measure_check(res, lb, binary, cfg, runs, dead_runs):
    gw = lambda argv: lb.exec_argv("gw", argv)  # noqa: E731
    check = lambda iface: gw([binary, "check", iface, "--config", cfg])  # noqa: E731
    for name, argv in (("uplinkd", check("eth0")), ("shell", gw(curl_argv("eth0", 5)))):
        res[f"check_online_{name}"] = wall_times(argv, runs)
    progress(f"check latency, dead uplink: {dead_runs} x 2 runs of about 5 s, and one more "
             f"each for its memory")
    lb.blackhole("dead")
    try:
        for name, argv, want in (("uplinkd", check("wwan0"), 2), ("shell", gw(curl_argv("wwan0", 5)), 28)):
            res[f"check_dead_{name}"] = wall_times(argv, dead_runs, want)
            res[f"probe_memory_{name}"] = in_flight_memory(argv)
    finally:
        lb.unblackhole("dead")


def measure_bytes(res, lb, binary, workdir):
    gw = lambda argv: lb.exec_argv("gw", argv)  # noqa: E731
    add_byte_counter(lb, "10.231.1.2")
    one = workdir / "one-probe.conf"
    one.write_text(Setting("default", 300, 5).uplinkd_config())
    three = workdir / "emulated-default-probes.conf"
    three.write_text(Setting("default", 300, 5).uplinkd_config(EMULATED_DEFAULT_PROBES))

    def check_json(cfg):
        out = labmod.run(gw([binary, "check", "eth0", "--json", "--config", str(cfg)])).stdout
        report = json.loads(out.splitlines()[0])
        if report["verdict"] != "online":
            raise AgentError(f"check eth0 with {cfg.name}: {out}")
        return report["probes"]

    packets, ip_bytes, probes = counted(lb, lambda: check_json(one))
    res["bytes_uplinkd"] = (sum(p["bytes"] for p in probes), ip_bytes, packets)
    write_out = "%{http_code} %{size_request} %{size_header} %{size_download}"
    packets, ip_bytes, out = counted(lb, lambda: labmod.run(gw(curl_argv("eth0", 5, write_out))).stdout)
    code, *sizes = out.split()
    if code != "204":
        raise AgentError(f"curl probe through eth0 answered {code}")
    res["bytes_shell"] = (sum(int(x) for x in sizes), ip_bytes, packets)
    packets, ip_bytes, probes = counted(lb, lambda: check_json(three))
    res["bytes_emulated"] = (mean(p["bytes"] for p in probes), ip_bytes / len(probes),
                             len(probes))


def measure_carrier(res, bench, tool, setting, flips, gap):
    since = bench.fifo.mark()
    run = tool.start(bench, setting)
    try:
        wait_settled(bench, tool, run, since)
        down, _, _ = bench.flip_carrier(run, "wlan0", flips, gap,
                                        verdict_line("wlan0", tool.offline),
                                        verdict_line("wlan0", "online"),
                                        timeout=setting.interval * 3 + setting.timeout * 3 + 15,
                                        jitter=setting.interval if tool is SHELL else 1.0)
    finally:
        tool.finish(bench, run)
    res[f"carrier_{setting.name}_{tool.name}"] = down


def cut_once(bench, tool, setting, kind):
    """One run at a random phase: (total, D, phase). kind "cut": upstream of eth0
    blackholed, primary eth0 -> wlan0 awaited; "carrier": wlan0's carrier lost."""
    since = bench.fifo.mark()
    run = tool.start(bench, setting)
    lb = bench.lab
    if kind == "cut":
        moved, what = primary_line("wlan0"), "primary eth0 -> wlan0"
        cut, restore = (lambda: lb.blackhole("inet")), (lambda: lb.unblackhole("inet"))
    else:
        role, peer = lb.peer_of("wlan0")
        moved, what = verdict_line("wlan0", tool.offline), f"wlan0 {tool.offline}"
        cut = lambda: lb.ip(role, "link", "set", peer, "down")  # noqa: E731
        restore = lambda: lb.ip(role, "link", "set", peer, "up")  # noqa: E731
    try:
        wait_settled(bench, tool, run, since)
        return bench.random_cut(run, setting.interval, tool.round_needle, moved, cut, restore,
                                f"{tool.name}: {what}",
                                timeout=2 * setting.interval + 3 * setting.timeout + 60)
    finally:
        tool.finish(bench, run)


def status_json(run) -> dict:
    """{interface: uplink object} from `uplinkd status --json` of an agent run (the
    binary's own reader of its state file); {} while there is none."""
    proc = run.status("--json", timeout=10)
    if proc.returncode != 0:
        return {}
    return {u["interface"]: u for u in json.loads(proc.stdout)["uplinks"]}


def idle_run(bench, tool, setting, extra, settle, window, every):
    """Start-up, settle, then the window: CPU, memory samples, end memory."""
    uplinks = list(LAB_UPLINKS) + extra
    since = bench.fifo.mark()
    run = tool.start(bench, setting, uplinks=uplinks, verbose=False)
    try:
        t_start = time.monotonic()
        verdicts = {"eth0": "online", "wlan0": "captive", "wwan0": "limited"} \
            if tool is UPLINKD else {"eth0": "online", "wlan0": "offline", "wwan0": "offline"}
        verdicts.update({iface: "online" for iface, _ in extra})
        preds = [(primary_line("eth0"), "primary eth0")] + \
            [(verdict_line(i, v), f"{i} {v}") for i, v in verdicts.items()]
        settled = wait_lines(bench, run, since, preds, f"{tool.name} idle start-up", timeout=120)
        if tool is UPLINKD:
            want = sorted(i for i, _ in uplinks)
            seen = run.wait_until(lambda: (got := sorted(status_json(run)))
                                  == want and got, 30, f"the {len(want)} uplinks in `status`")
            if seen != want:
                raise AgentError(f"uplinkd took {seen} as uplinks, expected {want}")
        time.sleep(max(0.0, settled + settle - time.monotonic()))
        pid = run.pid
        c0, w0 = tree_cpu(pid), time.monotonic()
        sampler = Sampler(pid, every)
        sampler.start()
        time.sleep(window)
        c1, w1 = tree_cpu(pid), time.monotonic()
        sampler.stop()
        end = tree_memory(pid)
        out = {"cpu": c1 - c0, "wall": w1 - w0, "end": end, "samples": sampler.samples,
               "age": w1 - t_start}
        if tool is UPLINKD:
            out["bytes_today"] = {name: u["bytes_today"]
                                  for name, u in status_json(run).items()}
        if not run.running():
            raise AgentError(f"{tool.name} exited during the idle window\n{run.transcript()}")
        return out
    finally:
        tool.finish(bench, run)


# -- parallel labs --------------------------------------------------------------------

def lab_job(binary, portal_mode, body, extra_uplinks=0):
    """A job for run_parallel: builds its own lab (inet internet, portal in
    portal_mode), waits for the others at the barrier, then body(bench, extra)."""
    def job(barrier):
        with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp, labmod.Lab() as lb:
            lb.serve("inet", "internet")
            lb.serve("portal", portal_mode)
            extra = add_veth_uplinks(lb, extra_uplinks) if extra_uplinks else []
            bench = Bench(lb, binary, Path(tmp))
            barrier.wait()
            return body(bench, extra)
    return job


def run_parallel(jobs, res):
    """jobs: {name: job(barrier)}; results into res[name], failures into res.errors."""
    barrier = threading.Barrier(len(jobs), timeout=600)
    done = {}

    def wrap(name, job):
        try:
            res[name] = job(barrier)
        except threading.BrokenBarrierError:
            res.errors.append(f"{name}: not run (another lab failed to build)")
        except Exception as exc:                 # noqa: BLE001 -- shown under the table
            barrier.abort()
            res.failed(name, exc)
        finally:
            done[name] = True

    threads = [threading.Thread(target=wrap, args=(n, j), daemon=True) for n, j in jobs.items()]
    for t in threads:
        t.start()
    last = 0.0
    while len(done) < len(jobs):
        time.sleep(1.0)
        if time.monotonic() - last >= 60:
            last = time.monotonic()
            progress(f"parallel runs: {len(done)}/{len(jobs)} finished")


# -- the table (figures formatted by benchstats) --------------------------------------

def table(res, args, default, fast):
    rows = []

    def section(title):
        rows.append((f"**{title}**", "", "", ""))

    def row(label, u, s, r="–"):
        rows.append((label, u, s, r))

    if "stripped" in res:
        section("Footprint, one-shot memory")
        row("binary, stripped (`strip`)", kib(res["stripped"]),
            f"script {res['script']} B (needs curl: /usr/bin/curl {kib(res['curl_bin'])}, "
            f"libcurl shared as for uplinkd)")
        if "deb" in res:
            size, name, older = res["deb"]
            row(".deb package", f"{kib(size)} ({name}{', OLDER than the binary' if older else ''})",
                "–")
        else:
            row(".deb package", "not built (no --deb, none in packaging/out)", "–")
    if "probe_memory_uplinkd" in res:
        (uh, _, ud), (sh, _, sd) = res["probe_memory_uplinkd"], res["probe_memory_shell"]   # VmHWM, VmRSS, dirty
        row("one probe process with its probe in flight (`check wwan0` / one curl, wwan0 "
            "blackholed, 2 s in): VmHWM / Private_Dirty",
            f"{uh} / {ud} KiB", f"{sh} / {sd} KiB", f"{ratio(uh, sh)} / {ratio(ud, sd)}")

    for n in (3, 32):
        u, s = res.get(f"idle_uplinkd_{n}"), res.get(f"idle_shell_{n}")
        if not u and not s:
            continue
        age = u["age"] if u else s["age"]
        section(f"Memory, idle, {n} uplinks, same setting for both ({default.describe()}), "
                f"process tree at {age:.0f} s after start")

        def mem(d, i, how):
            if not d:
                return None
            if how == "end":
                return d["end"][i]
            values = [smp[i] for smp in d["samples"]]
            return mean(values) if how == "mean" else max(values)

        for i, what in ((0, "RSS"), (1, "Private_Dirty")):
            row(f"{what}, end of the {args.idle_seconds:g} s window",
                kib(mem(u, i, "end") * 1024) if u else "–", kib(mem(s, i, "end") * 1024) if s else "–",
                ratio(mem(u, i, "end"), mem(s, i, "end")))
            pair = lambda d: (f"{mem(d, i, 'mean'):.0f} / {mem(d, i, 'max'):.0f} KiB"  # noqa: E731
                              if d else "–")
            row(f"{what}, mean / max of {len((u or s)['samples'])} samples "
                f"every {args.sample_every:g} s", pair(u), pair(s),
                f"{ratio(mem(u, i, 'mean'), mem(s, i, 'mean'))} / {ratio(mem(u, i, 'max'), mem(s, i, 'max'))}"
                if u and s else "–")

    cpu_rows = [(n, res.get(f"idle_uplinkd_{n}"), res.get(f"idle_shell_{n}")) for n in (3, 32)]
    if any(u or s for _, u, s in cpu_rows):
        section(f"CPU, idle, same setting for both ({default.describe()}), whole process tree")
        for n, u, s in cpu_rows:
            per_hour = lambda d: d["cpu"] * 3600 / d["wall"] if d else None  # noqa: E731
            cell = lambda d: (f"{per_hour(d):.2f} s/h ({d['cpu']:.3f} s in {d['wall']:.0f} s)"  # noqa: E731
                              if d else "–")
            row(f"CPU seconds per idle hour, {n} uplinks", cell(u), cell(s),
                ratio(per_hour(u), per_hour(s)))

    def med_p95(xs):
        return f"{fmt_s(median(xs))} / {fmt_s(p95(xs))} (n={len(xs)})" if xs else "–"

    def ratio_mp(a, b):
        return f"{ratio(median(a), median(b))} / {ratio(p95(a), p95(b))}" if a and b else "–"

    fast_keys = ("carrier_fast_uplinkd", "carrier_fast_shell", "fastcut_uplinkd", "fastcut_shell")
    if any(k in res for k in fast_keys):
        section(f"Detection, fast ({fast.describe()}; uplinkd: fast profile), median / p95")
        row("carrier loss (wlan0) → hook", med_p95(res.get("carrier_fast_uplinkd")),
            med_p95(res.get("carrier_fast_shell")),
            ratio_mp(res.get("carrier_fast_uplinkd"), res.get("carrier_fast_shell")))
        get = lambda k: [t for t, _, _ in res[k]] if k in res else None  # noqa: E731
        row("upstream loss, carrier up (eth0) → primary hook, random phase",
            med_p95(get("fastcut_uplinkd")), med_p95(get("fastcut_shell")),
            ratio_mp(get("fastcut_uplinkd"), get("fastcut_shell")))

    dkeys = [k for k in res if k.startswith(("dcut_", "dcarrier_"))]
    if "carrier_default_uplinkd" in res or dkeys:
        section(f"Detection, same setting for both ({default.describe()})")
        runs = lambda prefix: [res[k] for k in sorted(res) if k.startswith(prefix)]  # noqa: E731

        def expected(rs):
            # D < 0: the move came before the scheduled round (uplinkd's passive stall
            # detector or a link event raised the doubt first): the formula does not apply.
            if not rs or min(d for _, d, _ in rs) < 0:
                return None
            return default.interval / 2 + median([d for _, d, _ in rs])

        def early(rs):
            n = sum(1 for _, d, _ in rs if d < 0)
            return f"– (moved before the scheduled round in {n} of {len(rs)} runs)" if n else None

        def measured(rs):
            return (f"{fmt_s(median([t for t, _, _ in rs]))} (n={len(rs)}: "
                    + ", ".join(fmt_s(t) for t, _, _ in rs) + ")") if rs else "–"

        cu, cs = res.get("carrier_default_uplinkd"), runs("dcarrier_shell_")
        row("carrier loss (wlan0) → hook: median / p95 (uplinkd); expected at a random "
            "phase, interval/2 + median D (shell loop)",
            med_p95(cu), f"{fmt_s(expected(cs))} expected" if cs else "–",
            ratio(median(cu), expected(cs)) if cu and cs else "–")
        row("carrier loss (wlan0) → hook, measured at a random phase: median (each run)",
            "–", measured(cs))
        xu, xs = runs("dcut_uplinkd_"), runs("dcut_shell_")
        row("upstream loss (eth0) → primary hook, expected at a random phase: "
            "interval/2 + median D",
            early(xu) or (f"{fmt_s(expected(xu))}" if xu else "–"),
            early(xs) or (f"{fmt_s(expected(xs))}" if xs else "–"),
            ratio(expected(xu), expected(xs)))
        row("upstream loss (eth0) → primary hook, measured at a random phase: median (each run)",
            measured(xu), measured(xs),
            ratio(median([t for t, _, _ in xu]), median([t for t, _, _ in xs])) if xu and xs else "–")
        dmed = lambda rs: median([d for _, d, _ in rs]) if rs else None  # noqa: E731
        row("D: scheduled round after the loss → primary hook, median",
            early(xu) or fmt_s(dmed(xu)), early(xs) or fmt_s(dmed(xs)),
            "–" if early(xu) or early(xs) else ratio(dmed(xu), dmed(xs)))

    if "bytes_uplinkd" in res:
        per_day = 86400 / 300
        section("Bytes on the wire, one uplink (eth0), the lab probe")
        (uh, ui, up), (sh, si, sp) = res["bytes_uplinkd"], res["bytes_shell"]
        row("bytes per probe round as each tool counts them (uplinkd: `check --json` bytes, "
            "IP level: TCP_INFO and headers; curl: -w HTTP sizes, no TCP/IP)",
            f"{uh} B", f"{sh} B", "–")
        row("IP bytes per probe round, both directions (nft counter)",
            f"{ui} B ({up} packets)", f"{si} B ({sp} packets)", ratio(ui, si))
        row(f"per day on a metered uplink at a 5 min interval "
            f"({per_day:.0f} rounds): own count / IP bytes (nft)",
            f"{kib(uh * per_day)} / {kib(ui * per_day)}", f"{kib(sh * per_day)} / {kib(si * per_day)}",
            f"– / {ratio(ui, si)}")
        eh, ei, en = res["bytes_emulated"]
        row(f"ESTIMATE, a full round of the built-in set of {BUILTIN_PROBE_COUNT} probes (steady rounds "
            f"send one; bench_failover.py measures the defaults): mean of {en} lab "
            f"emulations × {BUILTIN_PROBE_COUNT}, per round; per day at 5 min (uplinkd's count / IP)",
            f"{eh * BUILTIN_PROBE_COUNT:.0f} B / {ei * BUILTIN_PROBE_COUNT:.0f} B; "
            f"{kib(eh * BUILTIN_PROBE_COUNT * per_day)} / {kib(ei * BUILTIN_PROBE_COUNT * per_day)}",
            "–")
        u3 = res.get("idle_uplinkd_3")
        if u3 and "bytes_today" in u3:
            bt = u3["bytes_today"].get("eth0")
            row(f"`status --json` bytes_today of eth0 after the idle run ({u3['age']:.0f} s)",
                f"{bt} B = {bt / uh:.2f} × the round above" if bt is not None else "–", "–")

    if "check_online_uplinkd" in res:
        section("`check` latency (uplinkd check IFACE vs one curl --interface), median")
        a, b = res["check_online_uplinkd"], res["check_online_shell"]
        row(f"online uplink (eth0), n={len(a)}", fmt_s(median(a)), fmt_s(median(b)),
            ratio(median(a), median(b)))
        a, b = res.get("check_dead_uplinkd"), res.get("check_dead_shell")
        if a and b:
            row(f"dead uplink (wwan0 blackholed, 5 s time limit), n={len(a)}",
                fmt_s(median(a)), fmt_s(median(b)), ratio(median(a), median(b)))

    lines = ["| figure | uplinkd | shell loop | uplinkd / shell loop |",
             "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def first_line(path, prefix):
    """The first line of the file at `path` that starts with `prefix`, or None."""
    try:
        with open(path) as f:
            return next((line for line in f if line.startswith(prefix)), None)
    except OSError:
        return None


def machine():
    line = first_line("/proc/cpuinfo", "model name")
    model = line.split(":", 1)[1].strip() if line else "unknown CPU"
    line = first_line("/proc/meminfo", "MemTotal:")
    mem = f", {int(line.split()[1]) / 1048576:.1f} GiB RAM" if line else ""
    line = first_line("/etc/os-release", "PRETTY_NAME=")
    distro = line.split("=", 1)[1].strip().strip('"') + ", " if line else ""
    return (f"{model}, {os.cpu_count()} cores{mem}; {distro}Linux {platform.release()} "
            f"{platform.machine()}")


def parse_bench_args(ap, short_flag, short_help, short, full):
    """Add the options every lab benchmark has, then parse: `short_flag` (--trial,
    --smoke), with which each option left unset takes its value from `short`
    instead of `full` (options given explicitly win), and --command, the command
    line for the header. Makes stdout line-buffered (progress shows at once)."""
    ap.add_argument(short_flag, action="store_true",
                    help=f"{short_help}: " + ", ".join(f"{k}={v:g}" for k, v in short.items())
                    + " (explicit flags win)")
    ap.add_argument("--command", help="the command line to print in the header")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    for key, value in (short if getattr(args, short_flag.lstrip("-")) else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def header_lines(title, uplinkd, command=None):
    """The first lines of a benchmark's Markdown header: title, date, machine with
    its load average now, the uplinkd measured (`uplinkd`: a description), and
    the command (`command`, else this process's own command line)."""
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    return [
        title,
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- machine: {machine()}; load average at start {load}",
        f"- uplinkd: {uplinkd}",
        f"- command: `{command or 'python3 ' + shlex.join(sys.argv)}`",
    ]


def tool_versions(binary):
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    curl = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    sh = os.path.realpath("/bin/sh")
    return version, " ".join(curl.split()[:2]), sh


TRIAL = {"interval": 20.0, "idle_seconds": 60.0, "flips": 5, "fast_runs": 5,
         "default_runs": 1, "check_runs": 5, "dead_runs": 2}
DEFAULTS = {"interval": 300.0, "idle_seconds": 600.0, "flips": 20, "fast_runs": 20,
            "default_runs": 3, "check_runs": 20, "dead_runs": 5}
PARTS = ("footprint", "check", "bytes", "carrier", "fast", "default", "idle")


def estimate_minutes(a, skip):
    """Rough wall time of the run (for the progress line)."""
    s = 0.0
    if "check" not in skip:
        s += 2 * a.dead_runs * 5 + a.check_runs * 0.2
    if "carrier" not in skip:
        s += 2 * a.flips * (2 * a.gap + 0.3) + a.flips * (2 * a.gap + 3.5)
    if "fast" not in skip:
        s += a.fast_runs * (4 + 6)
    parallel = []
    if "idle" not in skip:
        parallel.append(a.settle + a.idle_seconds + 20)
    if "default" not in skip and a.default_runs:
        parallel.append(2 * a.interval + 3 * 5 + 20)
    return (s + max(parallel, default=0)) / 60


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", nargs="?", default=None)
    ap.add_argument("--deb", help="the .deb whose size is reported")
    ap.add_argument("--interval", type=float, help="default-settings probe interval, s (300)")
    ap.add_argument("--stall-window", help="uplinkd's stall-window at the shared setting "
                    "(e.g. off: no passive sampling of the primary's counters); default: its own")
    ap.add_argument("--idle-seconds", type=float, help="idle measurement window, s (600)")
    ap.add_argument("--settle", type=float, help="wait after start-up before the window "
                                                 "(default interval/2)")
    ap.add_argument("--flips", type=int, help="carrier flips per tool and setting (20)")
    ap.add_argument("--gap", type=float, default=1.2, help="seconds between carrier changes")
    ap.add_argument("--fast-runs", type=int, help="upstream cuts per tool, fast setting (20)")
    ap.add_argument("--default-runs", type=int,
                    help="random-phase runs per tool at the shared setting, in parallel labs (3)")
    ap.add_argument("--check-runs", type=int, help="check runs, online uplink (20)")
    ap.add_argument("--dead-runs", type=int, help="check runs, dead uplink (5)")
    ap.add_argument("--sample-every", type=float, default=1.0, help="memory sampling period, s")
    ap.add_argument("--skip", default="", help="comma list of " + ",".join(PARTS))
    args = parse_bench_args(ap, "--trial", "short windows for a trial", TRIAL, DEFAULTS)
    if args.settle is None:
        args.settle = args.interval / 2
    skip = set(filter(None, args.skip.split(",")))
    if skip - set(PARTS):
        ap.error(f"--skip: unknown parts {sorted(skip - set(PARTS))}; known: {','.join(PARTS)}")
    if args.flips < 1 or args.fast_runs < 1 or args.default_runs < 0 or args.check_runs < 1 \
            or args.dead_runs < 1 or args.interval < 1 or args.idle_seconds < 1:
        ap.error("counts must be at least 1 (--default-runs 0 skips), --interval and "
                 "--idle-seconds at least 1 s")
    found = lab_binary(args.binary, tools=("curl", "nft", "strip"),
                       hint=": build it first (swift build -c release --static-swift-stdlib --disable-local-rpath)")
    if found is None:
        return 1
    binary, note = found

    default = Setting("default", args.interval, 5.0, args.stall_window)
    fast = Setting("fast", 1.0, 0.8)
    version, curl_version, sh = tool_versions(binary)
    header = header_lines("uplinkd vs the do-it-yourself shell loop (Tests/bench/shell-failover.sh)",
                          f"{version} ({binary}); shell loop: {sh} with {curl_version}", args.command)
    header += [
        f"- probe: {URL} (expected 204) through each uplink, the same for both; "
        f"hysteresis 2 failures / 2 successes",
    ]
    if default.interval != 300:
        header.append(f"- NOTE: the shared setting runs with interval {default.interval:g} s "
                      f"(--interval), not 5 min")
    if args.trial:
        header.append("- NOTE: --trial: short windows and few runs, for trying the benchmark only")
    progress(f"about {estimate_minutes(args, skip):.0f} minutes; {binary}")

    res = Results()
    try:
        if "footprint" not in skip:
            res.attempt("footprint", lambda: measure_footprint(res, binary, args.deb))
        with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp, labmod.Lab() as lb:
            lb.serve("inet", "internet")
            lb.serve("portal", "internet")
            bench = Bench(lb, binary, Path(tmp))
            cfg = Path(tmp) / "check.conf"
            cfg.write_text(default.uplinkd_config())
            if "check" not in skip:
                progress(f"check latency, online uplink: {args.check_runs} x 2 runs")
                res.attempt("check latency", lambda: measure_check(
                    res, lb, str(binary), str(cfg), args.check_runs, args.dead_runs))
            if "bytes" not in skip:
                progress("bytes per probe round")
                res.attempt("bytes", lambda: measure_bytes(res, lb, str(binary), Path(tmp)))
            if "carrier" not in skip:
                for tool, setting in ((UPLINKD, default), (UPLINKD, fast), (SHELL, fast)):
                    progress(f"carrier loss: {tool.name}, {setting.name} settings, {args.flips} flips")
                    res.attempt(f"carrier loss, {tool.name}, {setting.name}",
                                lambda: measure_carrier(res, bench, tool, setting, args.flips, args.gap))
            if "fast" not in skip:
                for tool in TOOLS:
                    progress(f"upstream loss, fast settings: {tool.name}, {args.fast_runs} runs")

                    def cuts():
                        res[f"fastcut_{tool.name}"] = [cut_once(bench, tool, fast, "cut")
                                                      for _ in range(args.fast_runs)]
                    res.attempt(f"upstream loss, {tool.name}, fast", cuts)
        jobs = {}
        if "idle" not in skip:
            for tool in TOOLS:
                for n in (3, 32):
                    body = (lambda tool: lambda bench, extra: idle_run(
                        bench, tool, default, extra, args.settle, args.idle_seconds,
                        args.sample_every))(tool)
                    jobs[f"idle_{tool.name}_{n}"] = lab_job(binary, "portal-302", body, n - 3)
        if "default" not in skip:
            for r in range(args.default_runs):
                for tool in TOOLS:
                    jobs[f"dcut_{tool.name}_{r}"] = lab_job(
                        binary, "internet",
                        (lambda tool: lambda bench, extra: cut_once(bench, tool, default, "cut"))(tool))
                jobs[f"dcarrier_shell_{r}"] = lab_job(
                    binary, "internet",
                    lambda bench, extra: cut_once(bench, SHELL, default, "carrier"))
        if jobs:
            longest = max(args.settle + args.idle_seconds if "idle" not in skip else 0,
                          2 * args.interval + 15 if "default" not in skip else 0)
            progress(f"{len(jobs)} runs in parallel labs, about {longest / 60:.0f} min: "
                     + ", ".join(sorted(jobs)))
            run_parallel(jobs, res)
    except labmod.LabError as exc:
        res.failed("lab", exc)
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130

    print("\n".join(header))
    print()
    print(table(res, args, default, fast))
    print()
    print("Method: see the docstring of Tests/bench/bench_compare.py. Ratios are "
          "uplinkd / shell loop. Values marked ESTIMATE are computed, not measured as such.")
    for err in res.errors:
        print(f"\nNOT MEASURED, {err}")
    return 1 if res.errors else 0


if __name__ == "__main__":
    sys.exit(main())
