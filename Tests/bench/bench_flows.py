#!/usr/bin/env python3
"""Flow pinning (`[flows] pinning = yes`) measured in the failover lab
(Tests/integration/failoverlab.py): what it saves the LAN's open connections, how
soon new connections follow a decision, and what its ruleset costs forwarded traffic.

    sudo python3 Tests/bench/bench_flows.py [--binary PATH] [--connections N]
        [--observe S] [--rounds N] [--step-seconds S] [--decisions N]
        [--pps-pairs N] [--pps-seconds S] [--skip PARTS] [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header (date,
machine, binary, command) and one headline per part with how it was measured.
Nothing is asserted. Exit status 1 only when a part could not run at all.

The agent runs as test_flows.py runs it: built-in probes, `[agent] hold-down = 5s`,
`flap-penalty = 0`, the shipped route-failover hook (table 7077) and the recording
hook, with `[flows] pinning = yes` ("pinned") or `no` ("today": the route hook
alone). The lab is FailoverLab(cloud=True, upstream_nat=True): one host on the
internet (203.0.113.10, tcpflow.py's server answering each line with the upstream
its answer goes back through) behind every upstream, and a carrier-grade NAT in
each upstream, so a connection whose packets change uplink is reset, as on the real
internet. Each part (and each mode, each round) builds its own lab and agent.
Parts (--skip takes their names):

  failback     eth0's upstream cut while a LAN client fetches a page every 100 ms
               (its unanswered packets are how the agent notices fast), until
               wlan0 is primary; then --connections (10) long-lived tcpflow.py
               connections from the LAN, each answered 5 times through wlan0's
               upstream; eth0 restored, until eth0 is primary again (the primary
               hook); the connections counted --observe (60) s after that hook.
               Alive: the connection that answered before the failback never
               ended and answered in the last 3 s before the count. Both modes,
               --rounds (1) times each.
  false-alarm  FailoverLab(..., delays={"eth0": 5}) (a relay adding 5 ms each way);
               --connections long-lived connections through eth0 (each answer
               allowed 5 s), the LAN client running, eth0's one-way delay set to
               300 ms (a 600 ms round trip) for --step-seconds (40), then 5 ms
               again; once eth0 is primary again, 10 s later, the connections
               counted as above, and the primary changes (hook log) and doubts
               (the agent's "(eth0 in doubt)" lines) since the step. Both modes,
               --rounds times each.
  decisions    pinned only: a LAN client (lanclient.py --concurrent) starting a
               new TCP connection and GET to the upstreams' 203.0.113.80 every 5 ms,
               each in a thread of its own (0.5 s limit), logging its start and the
               upstream that answered; cut/restore cycles of eth0 until
               --decisions (10) decisions: each cut is one (to wlan0), each failback
               one (to eth0). The agent runs with -v -v, its stderr lines stamped
               (CLOCK_MONOTONIC) as they arrive (AgentRun(timed=True)). The
               decision: for a cut, the first of the alarm that puts eth0 in doubt
               ("eth0: packets leave with nothing coming back") and "primary: eth0
               -> wlan0"; for a failback, "primary: wlan0 -> eth0". Decision to new
               flows: from the decision line to the start of the first LAN
               connection started after it and answered through the new uplink's
               upstream (packets, not logs; resolution 5 ms). Apply: from the
               decision line to the agent's "flows: new connections go to ..."
               line naming the new uplink alone (logged when `nft -f` returned).
  pps          the ruleset's cost on forwarded traffic: FailoverLab() with the
               agent started pinned, switched between `pinning = yes` and `no` by
               a reload (SIGHUP with the configuration rewritten; the table, the
               rules of protocol 78 and their tables come and go, the route hook's
               rules stay). UDP from the LAN to 203.0.113.80:5201 through gw and
               eth0's upstream, `iperf3 -u -b 0 -l 64` and `-l 1400` (Debian:
               iperf3) pinned with its server (which only answers the handshake)
               to CPU 0; the agent on CPU 1. A veth hands a packet on in the
               sender's own softirq, so gw's whole forwarding path (conntrack,
               NAT, the agent's chains, policy routing) and the upstream's receive
               run on CPU 0 too: one CPU, flat out, sender and forwarding. The
               upstream counts and drops the data packets in a prerouting chain at
               priority -450 (before its own conntrack): packets forwarded a
               second. The CPU time a packet: the sender's user and system time
               (getrusage of the reaped client: softirqs in its context are
               charged to it) plus ksoftirqd/0's, over the packets counted, so
               other programs on CPU 0 do not count. To take the sender out, each
               pair also has a run of the sender alone (gw drops the packets at
               priority -450 as they arrive): the forwarding path's time a packet
               is a run's less its pair's sender alone, and its inverse the
               packets one CPU forwards a CPU-second. --pps-pairs (6) pairs of
               --pps-seconds (6) runs: the sender alone, then with and without the
               ruleset (with, without; then without, with: a steady drift
               cancels); medians. Without iperf3, a Python sender (socket.send in
               a loop) takes its place; it costs more a packet than iperf3 (the
               sender-alone run measures it), so the figures together say more
               about the sender, and the forwarding path's are the comparison.

In a full run the parts run one after the other (timed parts alone). With --smoke
they run side by side (pps after the others), with 2 connections, 5 s windows,
one decision and 1-s pps runs: a check that the benchmark runs, not figures.
"""

import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from benchstats import NONE, Parts, fmt_s, median, p95

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
from agentrun import AgentError, AgentRun  # noqa: E402
from bench_compare import parse_bench_args  # noqa: E402
from bench_failover import lab_bench_header, progress, skipped_parts  # noqa: E402
from failoverlab import INTERNET_ADDR, FailoverLab, LabError  # noqa: E402
from lab import tool_path  # noqa: E402

PARTS = ("failback", "false-alarm", "decisions", "pps")
FULL = {"connections": 10, "observe": 60.0, "rounds": 1, "step_seconds": 40.0, "after": 10.0,
        "decisions": 10, "pps_pairs": 6, "pps_seconds": 6.0}
SMOKE = {"connections": 2, "observe": 5.0, "rounds": 1, "step_seconds": 5.0, "after": 3.0,
         "decisions": 1, "pps_pairs": 1, "pps_seconds": 1.0}
UPLINKS = ("eth0", "wlan0", "wwan0")
ROLE = {"eth0": "eth", "wlan0": "wifi", "wwan0": "cell"}
AGENT = {"hold-down": "5s", "flap-penalty": "0"}
CONFIG = ("`[agent] hold-down = 5s`, `flap-penalty = 0`, `[flows] pinning = yes` (pinned) or `no` "
          "(today), `[interface X] dns = ROUTER`, every other setting at its default; hooks: "
          "10-record, hooks/50-route-failover")
SETTLE_S = 45            # start-up: every uplink online, eth0 primary, hooks, flow entries
FAILOVER_S = 30          # a cut upstream: wlan0 primary
FAILBACK_S = 60          # eth0 online again, its hold-down, the primary hook
CHOICE_S = 10            # a new connection follows a new choice
ALIVE_WINDOW_S = 3.0     # an alive connection answered within this before the count
STEP_ONE_WAY_MS, BASE_ONE_WAY_MS = 300, 5
BURST_PERIOD_S, BURST_TIMEOUT_S = 0.005, 0.5
PPS_PORT, PPS_SIZES = 5201, (64, 1400)
MEASURED_CPU, AGENT_CPU = 0, 1        # the sender and the forwarding; the agent
SINK_TABLE, BASE_TABLE = "bench_flows_sink", "bench_flows_base"
FLOW_PROTOCOL = "78"
STALL_RE = re.compile(r"\beth0: packets leave with nothing coming back")
PRIMARY_RE = re.compile(r"uplinkd: notice: primary: (\S+) -> (\S+)")
FLOWS_RE = re.compile(r"flows: new connections go to (\S+)")
ROUND_RE = re.compile(r"round on eth0: eth0: (\w+) .*\((\w+) round\)$", re.M)


# -- the agent in a lab ---------------------------------------------------------------

def config(lb, pinning: bool) -> str:
    return lb.agent_config(sections={"agent": dict(AGENT), "flows": {"pinning": "yes" if pinning else "no"}})


def flow_entries(lb):
    """(table inet uplinkd present, number of gw's IPv4 rules of protocol 78)."""
    table = subprocess.run(lb.exec_argv("gw", ["nft", "list", "table", "inet", "uplinkd"]),
                           capture_output=True, text=True, timeout=10).returncode == 0
    rules = json.loads(lb.ip("gw", "-4", "-j", "rule", "show").stdout or "[]")
    return table, len([r for r in rules if str(r.get("protocol")) == FLOW_PROTOCOL])


def entries_as_wanted(lb, pinning: bool) -> bool:
    """Pinned: the table and a rule per uplink (plus the main-table rule); today: neither."""
    table, rules = flow_entries(lb)
    return (table and rules >= len(UPLINKS) + 1) if pinning else (not table and rules == 0)


def start_agent(lb, workdir: Path, binary, pinning: bool, timed=False) -> AgentRun:
    """The agent with the route hook, AGENT's timing and `[flows] pinning`, settled:
    every uplink online, eth0 primary, hooks caught up, the flow entries in place."""
    run = AgentRun(lb, workdir, config(lb, pinning), hooks=lb.agent_hooks(), binary=binary).start(timed=timed)
    try:
        failoverlab.wait_settled(run, lb, SETTLE_S)
        run.wait_until(lambda: entries_as_wanted(lb, pinning), SETTLE_S,
                       "the flow entries " + ("in place" if pinning else "absent"))
    except BaseException:
        stop_agent(run)
        raise
    return run


def stop_agent(run: AgentRun):
    try:
        run.stop()
    finally:
        run.close()


def wait_primary(run, lb, primary, online, timeout, since):
    """The primary settled (failoverlab.wait_settled) and its primary hook line
    after `since` (wall clock): that hook event."""
    failoverlab.wait_settled(run, lb, timeout, primary=primary, online=online)
    events = run.wait_hooks([("primary", primary)], 5, after=since, latest=True,
                            what=f"the primary hook line for {primary}")
    return [e for e in events if e.event == "primary" and e.primary == primary and e.t >= since][0]


def cut_eth0(run, lb):
    """eth0's upstream cut while a LAN client fetches a page every 100 ms, until
    wlan0 is primary with eth0 no longer online (as test_flows.cut_eth0)."""
    client = lb.lan_client()
    try:
        client.wait_flowing(None, None, 10)
        since = time.time()
        lb.cut("eth0")
        run.wait_state(lambda s: s["uplinks"]["eth0"]["verdict"] != "online", FAILOVER_S, "eth0 no longer online")
        wait_primary(run, lb, "wlan0", ("wlan0", "wwan0"), FAILOVER_S, since)
    finally:
        client.stop()


def new_flow_via(lb, role) -> bool:
    flows = lb.short_flows(1, timeout=0.5)
    return bool(flows) and flows[0].ok and flows[0].upstream == role


def wait_new_flow(run, lb, role):
    run.wait_until(lambda: new_flow_via(lb, role), CHOICE_S, f"a new connection answered through {role}")


def long_lived(lb, role, count, timeout=1.0):
    """`count` tcpflow.py clients, each answered 5 times through `role` on its first connection."""
    clients = lb.flow_clients(count, timeout=timeout)
    clients.wait_all(lambda c: len(c.answers(role, connection=1)) >= 5, 15,
                     f"{count} long-lived connections answered through {role}")
    return clients


# -- counting connections ---------------------------------------------------------------

def outcome(clients, since: float, until: float) -> dict:
    """The long-lived connections at `until`: alive (the connection that answered
    before `since` never ended and answered within ALIVE_WINDOW_S before `until`),
    the upstreams the alive ones answered through after `since`, and how the others
    ended (event, seconds after `since`)."""
    alive, via, ended = 0, Counter(), []
    for c in clients:
        conn = c.connection_at(since) or 1
        end = c.end_of(conn)
        if end is not None and end.t <= until:
            ended.append((end.event, end.t - since))
            continue
        recent = [e for e in c.answers(since=until - ALIVE_WINDOW_S) if e.connection == conn and e.t <= until]
        if recent:
            alive += 1
            via.update(e.upstream for e in c.answers(since=since) if e.connection == conn and e.t <= until)
        else:
            ended.append(("silent", None))
    return {"alive": alive, "count": len(clients), "via": dict(via), "ended": ended}


def wait_logged_past(clients, t: float, timeout=15.0):
    """Until every client has logged a line after `t` (its view of that moment is complete)."""
    clients.wait_all(lambda c: c.events(since=t), timeout, "the long-lived clients' lines after the count")


# -- part 1: failback ---------------------------------------------------------------------

def failback_once(binary, workdir: Path, pinning: bool, args) -> dict:
    with FailoverLab(cloud=True, upstream_nat=True) as lb:
        run = start_agent(lb, workdir, binary, pinning)
        try:
            cut_eth0(run, lb)
            wait_new_flow(run, lb, "wifi")
            clients = long_lived(lb, "wifi", args.connections)
            restored = time.time()
            lb.restore("eth0")
            ev = wait_primary(run, lb, "eth0", UPLINKS, FAILBACK_S, restored)
            fresh = Counter(f.upstream if f.ok else f.event for f in lb.short_flows(20, timeout=0.5))
            until = ev.t + args.observe
            time.sleep(max(0.0, until - time.time()))          # the observation window itself
            wait_logged_past(clients, until)
            res = outcome(clients, ev.t, until)
            clients.stop()
        finally:
            stop_agent(run)
    res.update(back=ev.t - restored, fresh=dict(fresh))
    return res


# -- part 2: a false alarm --------------------------------------------------------------

def false_alarm_once(binary, workdir: Path, pinning: bool, args) -> dict:
    with FailoverLab(cloud=True, upstream_nat=True, delays={"eth0": BASE_ONE_WAY_MS}) as lb:
        run = start_agent(lb, workdir, binary, pinning)
        try:
            wait_new_flow(run, lb, "eth")
            clients = long_lived(lb, "eth", args.connections, timeout=5.0)
            client = lb.lan_client()
            try:
                client.wait_flowing(None, None, 10)
                mark, step = run.stderr_size(), time.time()
                lb.set_delay("eth0", STEP_ONE_WAY_MS)
                time.sleep(args.step_seconds)                  # the step itself, whatever the agent does
                lb.set_delay("eth0", BASE_ONE_WAY_MS)
                ended = time.time()
            finally:
                client.stop()
            back = None
            try:
                failoverlab.wait_settled(run, lb, FAILBACK_S)
                back = time.time() - ended
            except AgentError:
                pass                                           # reported: "not back"
            time.sleep(args.after)
            until = time.time()
            wait_logged_past(clients, until)
            res = outcome(clients, step, until)
            clients.stop()
            log = run.stderr_since(mark)
            res["moves"] = [(e.previous_primary, e.primary, e.t - step) for e in run.events()
                            if e.event == "primary" and e.t >= step]
            res["doubts"] = len(re.findall(r"flows: new connections go to \S+ \(eth0 in doubt\)", log))
            res["alarms"] = len(STALL_RE.findall(log))
            res["failed_rounds"] = Counter(kind for verdict, kind in ROUND_RE.findall(log) if verdict != "online")
            res["back"] = back
        finally:
            stop_agent(run)
    return res


# -- part 3: decision to new flows --------------------------------------------------------

def spread_names(text: str) -> set:
    return {part.split(":")[0] for part in text.split(",")}


def decision_of(run, client, m0: float, old: str, new: str, wall_offset: float) -> dict:
    """One decision after monotonic time m0 (a cut or a restore): its line, the
    apply line, and the first new LAN connection answered through `new`."""
    lines = [(t, line) for t, line in list(run.lines) if t >= m0]
    decision = next(((t, "doubt" if STALL_RE.search(line) else "primary") for t, line in lines
                     if (old == "eth0" and STALL_RE.search(line))
                     or ((m := PRIMARY_RE.search(line)) and m.groups() == (old, new))), None)
    if decision is None:
        return {"kind": None}
    td, kind = decision
    applied = next((t for t, line in lines if t >= td and (m := FLOWS_RE.search(line))
                    and spread_names(m.group(1)) == {new}), None)
    start = td + wall_offset                                   # the decision on the wall clock
    firsts = [r.start for r in client.results(since=start) if r.ok and r.upstream == ROLE[new]]
    return {"kind": kind, "to": new, "apply": None if applied is None else applied - td,
            "flows": min(firsts) - start if firsts else None}


def decisions_part(binary, workdir: Path, args) -> list:
    events = []
    with FailoverLab() as lb:
        run = start_agent(lb, workdir, binary, True, timed=True)
        client = None
        try:
            client = lb.lan_client(period=BURST_PERIOD_S, timeout=BURST_TIMEOUT_S, concurrent=True, name="burst")
            client.wait_flowing("eth", timeout=10)
            offset = time.time() - time.monotonic()
            while len(events) < args.decisions:
                for old, new, act in (("eth0", "wlan0", lb.cut), ("wlan0", "eth0", lb.restore)):
                    if len(events) >= args.decisions:
                        break
                    online = UPLINKS if new == "eth0" else ("wlan0", "wwan0")
                    m0, since = time.monotonic(), time.time()
                    act("eth0")
                    wait_primary(run, lb, new, online, FAILBACK_S, since)
                    client.wait_flowing(ROLE[new], since=since, timeout=10)
                    time.sleep(1.0)                            # the apply line, the last answers logged
                    events.append(decision_of(run, client, m0, old, new, offset))
                    progress(f"decisions {len(events)}/{args.decisions}: {describe_decision(events[-1])}")
        finally:
            if client is not None:
                client.stop()
            stop_agent(run)
    return events


def describe_decision(e) -> str:
    if e["kind"] is None:
        return "no decision line found"
    return (f"to {e['to']} ({e['kind']}): new flows after {fmt_s(e['flows'])}, "
            f"apply line after {fmt_s(e['apply'])}")


# -- part 4: the ruleset's cost on forwarded packets ------------------------------------

def cpu_ticks(cpu: int):
    """(busy, steal) clock ticks of one CPU so far: user+nice+system+irq+softirq, steal."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{cpu} "):
                v = [int(x) for x in line.split()[1:]]
                return v[0] + v[1] + v[2] + v[5] + v[6], v[7]
    raise LabError(f"no cpu{cpu} in /proc/stat")


def sink_script(table: str) -> str:
    """A table counting and dropping the test's data packets (longer than the 4-byte
    iperf3 handshake) before anything else of its namespace sees them."""
    return (f"table inet {table}\ndelete table inet {table}\n"
            f"table inet {table} {{\n  counter sink {{ }}\n"
            f"  chain prerouting {{ type filter hook prerouting priority -450; policy accept;\n"
            f"    udp dport {PPS_PORT} udp length > 32 counter name sink drop\n  }}\n}}\n")


def add_sink(lb, role: str, table: str):
    subprocess.run(lb.exec_argv(role, ["nft", "-f", "-"]), input=sink_script(table), text=True, check=True,
                   timeout=10)


def remove_sink(lb, role: str, table: str):
    subprocess.run(lb.exec_argv(role, ["nft", "delete", "table", "inet", table]), check=True, timeout=10)


def sink_packets(lb, role: str, table: str) -> int:
    out = subprocess.run(lb.exec_argv(role, ["nft", "-j", "list", "counter", "inet", table, "sink"]),
                         capture_output=True, text=True, check=True, timeout=10).stdout
    return next(i["counter"]["packets"] for i in json.loads(out)["nftables"] if "counter" in i)


def pin(pid: int, cpu: int):
    """Every thread of `pid` (and its children to come) on `cpu`."""
    subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(pid)], capture_output=True, check=True, timeout=10)


PY_SENDER = """import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((sys.argv[1], int(sys.argv[2])))
data, end, n = b"x" * int(sys.argv[3]), time.monotonic() + float(sys.argv[4]), 0
while time.monotonic() < end:
    for _ in range(1000):
        try:
            s.send(data)
            n += 1
        except OSError:
            pass
print(n)
"""


def wait_listening(lb, role: str, port: int, timeout=10.0):
    """Until a TCP socket listens on `port` in `role`'s namespace."""
    deadline = time.monotonic() + timeout
    while not subprocess.run(lb.exec_argv(role, ["ss", "-Hltn", f"sport = :{port}"]), capture_output=True,
                             text=True, timeout=10).stdout.strip():
        if time.monotonic() >= deadline:
            raise LabError(f"nothing listens on port {port} in {role} after {timeout:g} s")
        time.sleep(0.05)


def send(lb, size: int, seconds: float):
    """One run of the sender in the LAN, pinned to MEASURED_CPU: (packets sent, seconds
    it sent, its user and system seconds)."""
    taskset = ["taskset", "-c", str(MEASURED_CPU)]
    if not tool_path("iperf3"):
        c0 = children_cpu()
        done = subprocess.run(lb.exec_argv("lan", taskset + [sys.executable, "-c", PY_SENDER, INTERNET_ADDR,
                                                             str(PPS_PORT), str(size), str(seconds)]),
                              capture_output=True, text=True, check=True, timeout=seconds + 30)
        return int(done.stdout.split()[-1]), seconds, children_cpu() - c0
    server = subprocess.Popen(lb.exec_argv("eth", taskset + ["iperf3", "-s", "-1", "-B", INTERNET_ADDR,
                                                             "-p", str(PPS_PORT)]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(lb, "eth", PPS_PORT)
        c0 = children_cpu()
        done = subprocess.run(lb.exec_argv("lan", taskset + ["iperf3", "-c", INTERNET_ADDR, "-p", str(PPS_PORT),
                                                             "-u", "-b", "0", "-l", str(size), "-t", str(seconds),
                                                             "-J"]),
                              capture_output=True, text=True, timeout=seconds + 30)
        cpu = children_cpu() - c0
        result = json.loads(done.stdout or "{}")
        if "error" in result or "sum" not in result.get("end", {}):
            raise LabError(f"iperf3: {result.get('error') or done.stderr.strip() or 'no result'}")
        return result["end"]["sum"]["packets"], result["end"]["sum"]["seconds"], cpu
    finally:
        server.kill()
        server.wait(timeout=10)


def ksoftirqd_ticks(cpu: int) -> int:
    """CPU ticks of the kernel thread that takes over a CPU's softirqs under load
    (the sender's packets are then forwarded there, not in the sender's context)."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    data = f.read()
            except OSError:
                continue
            if f"(ksoftirqd/{cpu})" in data:
                fields = data.rsplit(")", 1)[1].split()
                return int(fields[11]) + int(fields[12])
    return 0


def children_cpu() -> float:
    """User and system seconds of this process's reaped children so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def pps_run(lb, size: int, seconds: float, baseline: bool) -> dict:
    """One measured run: packets a second that reached eth0's upstream (forwarded by
    gw), or with `baseline` that reached gw (dropped there as they arrive: the
    sender and the LAN's stack alone); the CPU time they took (the sender's own,
    softirqs in its context included, and MEASURED_CPU's ksoftirqd), and
    MEASURED_CPU's busy and steal share."""
    role, table = ("gw", BASE_TABLE) if baseline else ("eth", SINK_TABLE)
    if baseline:
        add_sink(lb, role, table)
    try:
        n0, (b0, s0), t0 = sink_packets(lb, role, table), cpu_ticks(MEASURED_CPU), time.monotonic()
        k0 = ksoftirqd_ticks(MEASURED_CPU)
        sent, sending, sender_cpu = send(lb, size, seconds)
        k1 = ksoftirqd_ticks(MEASURED_CPU)
        n1, (b1, s1), t1 = sink_packets(lb, role, table), cpu_ticks(MEASURED_CPU), time.monotonic()
    finally:
        if baseline:
            remove_sink(lb, role, table)
    tick = os.sysconf("SC_CLK_TCK")
    packets = n1 - n0
    cpu = sender_cpu + (k1 - k0) / tick
    return {"sent": sent, "packets": packets, "pps": packets / sending, "cpu": cpu,
            "cost": cpu / packets if packets else None,
            "busy": (b1 - b0) / tick / (t1 - t0), "steal": (s1 - s0) / tick / (t1 - t0)}


def set_pinning(run, lb, pinning: bool):
    """Reload the agent with `pinning` and wait until its entries say so."""
    run.config.write_text(config(lb, pinning))
    run.send(signal.SIGHUP)
    run.wait_until(lambda: entries_as_wanted(lb, pinning), 20, f"pinning = {'yes' if pinning else 'no'} applied")
    time.sleep(1.0)


def pps_part(binary, workdir: Path, args) -> dict:
    """--pps-pairs pairs, each: the sender alone, then with and without the ruleset
    (with, without; then without, with: ABBA), every size each time."""
    pairs = []
    with FailoverLab() as lb:
        run = start_agent(lb, workdir, binary, True)
        try:
            if os.cpu_count() > 1:
                pin(run.pid, AGENT_CPU)
            add_sink(lb, "eth", SINK_TABLE)
            current = True
            for k in range(args.pps_pairs):
                pair = {}
                for kind in ["base"] + (["with", "without"] if k % 2 == 0 else ["without", "with"]):
                    if kind != "base" and (kind == "with") != current:
                        current = kind == "with"
                        set_pinning(run, lb, current)
                    for size in PPS_SIZES:
                        pair[(kind, size)] = r = pps_run(lb, size, args.pps_seconds, kind == "base")
                        progress(f"pps pair {k + 1}/{args.pps_pairs}, {kind}, {size} B: {r['pps']:,.0f} pps, "
                                 f"{1e6 * (r['cost'] or 0):.2f} µs CPU a packet, CPU {MEASURED_CPU} busy "
                                 f"{100 * r['busy']:.0f} %, steal {100 * r['steal']:.0f} %")
                pairs.append(pair)
        finally:
            stop_agent(run)
    return {"pairs": pairs, "sender": "iperf3" if tool_path("iperf3") else "python"}


# -- printing -----------------------------------------------------------------------------

def pct(a, b) -> str:
    return f"{100.0 * a / b:.0f} %" if b else NONE


def mode_name(pinning: bool) -> str:
    return "pinned" if pinning else "today"


def sum_outcomes(runs) -> dict:
    alive = sum(r["alive"] for r in runs)
    count = sum(r["count"] for r in runs)
    return {"alive": alive, "count": count}


def ended_text(res, event: str) -> str:
    """How the connections that did not survive ended, and when after `event`."""
    kinds = Counter(kind for kind, _t in res["ended"])
    times = [t for _k, t in res["ended"] if t is not None]
    if not kinds:
        return "none ended"
    return ("ended: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            + (f", median {fmt_s(median(times))} after {event}" if times else ""))


def print_failback(res, args):
    parts = []
    for mode in (True, False):
        s = sum_outcomes(res.get(mode, []))
        parts.append(f"{mode_name(mode)} {s['alive']}/{s['count']} alive {args.observe:g} s after "
                     f"({pct(s['alive'], s['count'])})")
    print(f"failback: {', '.join(parts)}")
    print(f"  - how: eth0 cut, wlan0 primary, {args.connections} long-lived connections from the LAN through "
          f"wlan0 (a line every 100 ms, 1 s for each answer), eth0 restored; counted {args.observe:g} s after "
          f"the failback's primary hook: alive = the same connection, never ended, answered in the last "
          f"{ALIVE_WINDOW_S:g} s; --rounds {args.rounds}")
    for mode in (True, False):
        for k, r in enumerate(res.get(mode, []), 1):
            print(f"  - {mode_name(mode)}, round {k}: eth0 primary again {fmt_s(r['back'])} after the restore; "
                  f"{r['alive']}/{r['count']} alive (answers after the failback through "
                  f"{', '.join(f'{u} {n}' for u, n in sorted(r['via'].items())) or NONE}); "
                  f"{ended_text(r, 'the failback')}; "
                  f"20 new connections after it: "
                  f"{', '.join(f'{n} through {u}' for u, n in sorted(r['fresh'].items()))}")


def print_false_alarm(res, args):
    parts = []
    for mode in (True, False):
        runs = res.get(mode, [])
        s = sum_outcomes(runs)
        moved = sum(1 for r in runs if r["moves"])
        parts.append(f"{mode_name(mode)} {s['alive']}/{s['count']} alive after ({pct(s['alive'], s['count'])}), "
                     f"primary moved in {moved} of {len(runs)}")
    print(f"false alarm ({2 * STEP_ONE_WAY_MS} ms round trip on eth0 for {args.step_seconds:g} s): {', '.join(parts)}")
    print(f"  - how: eth0 behind a delay relay ({BASE_ONE_WAY_MS} ms each way), {args.connections} long-lived "
          f"connections through eth0 (5 s for each answer), a LAN client fetching every 100 ms; eth0's one-way "
          f"delay {STEP_ONE_WAY_MS} ms for {args.step_seconds:g} s, then {BASE_ONE_WAY_MS} ms; counted "
          f"{args.after:g} s after eth0 was primary again: alive = the same connection, never ended, answered "
          f"in the last {ALIVE_WINDOW_S:g} s")
    for mode in (True, False):
        for k, r in enumerate(res.get(mode, []), 1):
            moves = ", ".join(f"{a} -> {b} at +{t:.1f} s" for a, b, t in r["moves"]) or "none"
            print(f"  - {mode_name(mode)}, round {k}: {r['alive']}/{r['count']} alive; "
                  f"{ended_text(r, 'the step began')}; "
                  f"primary changes: {moves}; doubts (new connections away from eth0): {r['doubts']}; what "
                  f"failed on eth0: {r['alarms']} stall alarms, rounds "
                  f"{', '.join(f'{k} {n}' for k, n in sorted(r['failed_rounds'].items())) or 'none'}; settled on eth0 "
                  + (f"{fmt_s(r['back'])} after the step" if r["back"] is not None else "NOT within "
                     f"{FAILBACK_S} s"))


KIND = {"doubt": "the doubt (stall alarm)", "primary": "the primary change"}


def print_decisions(events, args):
    seen = [e for e in events if e["kind"]]
    flows = [e["flows"] for e in seen if e["flows"] is not None]
    apply = [e["apply"] for e in seen if e["apply"] is not None]
    print(f"decision to new flows (pinned, n={len(flows)} of {len(events)}): median {fmt_s(median(flows))}, "
          f"p95 {fmt_s(p95(flows))}; apply (decision line to \"flows: new connections go to\" line): "
          f"median {fmt_s(median(apply))}, p95 {fmt_s(p95(apply))}")
    print(f"  - how: a LAN client starting a new connection every {BURST_PERIOD_S * 1000:g} ms, each logging "
          f"its start and the upstream that answered; cut/restore cycles of eth0; from the agent's decision "
          f"line (stamped on arrival) to the start of the first new connection answered through the new "
          f"uplink (resolution {BURST_PERIOD_S * 1000:g} ms)")
    for to, what in (("wlan0", "cuts"), ("eth0", "failbacks")):
        mine = [e for e in seen if e["to"] == to]
        xs = [e["flows"] for e in mine if e["flows"] is not None]
        kinds = Counter(e["kind"] for e in mine)
        if xs:
            print(f"  - {what} (to {to}; decided by {', '.join(f'{KIND[k]} {n}' for k, n in sorted(kinds.items()))}): "
                  f"n={len(xs)}, median {fmt_s(median(xs))}, max {fmt_s(max(xs))}")
    print("  - each: " + "; ".join(describe_decision(e) for e in events))


def pps_figures(pairs, size: int) -> dict:
    """Medians over the pairs for one size: packets a second and CPU time a packet of
    each kind, and the forwarding path's own time a packet (a run's CPU time a packet
    less that of its pair's sender alone)."""
    out = {}
    for kind in ("base", "with", "without"):
        runs = [p[(kind, size)] for p in pairs]
        out[kind] = median([r["pps"] for r in runs])
        out[f"{kind}_cpu"] = median([r["cost"] for r in runs if r["cost"]])
        out[f"{kind}_busy"] = median([r["busy"] for r in runs])
        out[f"{kind}_steal"] = max(r["steal"] for r in runs)
        out[f"{kind}_each"] = [r["pps"] for r in runs]
    for kind in ("with", "without"):
        out[f"{kind}_cost"] = median([p[(kind, size)]["cost"] - p[("base", size)]["cost"] for p in pairs
                                      if p[(kind, size)]["cost"] and p[("base", size)]["cost"]])
    return out


def change(with_, without) -> str:
    """with_ against without as a signed percentage (-3.1 %: 3.1 % fewer)."""
    if not with_ or not without:
        return NONE
    return f"{100.0 * (with_ / without - 1):+.1f} %"


def per_second(cost):
    return 1 / cost if cost and cost > 0 else None


def thousands(x) -> str:
    return NONE if x is None else f"{x:,.0f}"


def print_pps(res, args):
    python = res["sender"] == "python"
    for size in PPS_SIZES:
        f = pps_figures(res["pairs"], size)
        fwd_with, fwd_without = per_second(f["with_cost"]), per_second(f["without_cost"])
        all_with, all_without = per_second(f["with_cpu"]), per_second(f["without_cpu"])
        print(f"ruleset cost, {size}-byte UDP, one CPU: the forwarding path {thousands(fwd_without)} packets per "
              f"CPU-second without the ruleset, {thousands(fwd_with)} with ({change(fwd_with, fwd_without)}; target "
              f"at most 5 % fewer); sender and forwarding together {thousands(all_without)} and {thousands(all_with)} "
              f"({change(all_with, all_without)}); forwarded {thousands(f['without'])} and {thousands(f['with'])} "
              f"pps ({change(f['with'], f['without'])})")
        if f["with_cost"] and f["without_cost"] and f["base_cpu"]:
            print(f"  - CPU a packet: the forwarding path {1e6 * f['without_cost']:.2f} µs without, "
                  f"{1e6 * f['with_cost']:.2f} µs with ({1e9 * (f['with_cost'] - f['without_cost']):+.0f} ns); the "
                  f"sender alone {1e6 * f['base_cpu']:.2f} µs ({thousands(f['base'])} pps)")
        print(f"  - each pair (pps): without {', '.join(map(thousands, f['without_each']))}; with "
              f"{', '.join(map(thousands, f['with_each']))}; sender alone {', '.join(map(thousands, f['base_each']))}; "
              f"CPU {MEASURED_CPU} busy {100 * f['with_busy']:.0f} % / {100 * f['without_busy']:.0f} % / "
              f"{100 * f['base_busy']:.0f} % (median), steal at most "
              f"{100 * max(f['with_steal'], f['without_steal'], f['base_steal']):.0f} %")
    sender = "a Python sender (socket.send in a loop)" if python else "iperf3 -u -b 0 -l SIZE"
    print(f"  - how: {sender} in the LAN to 203.0.113.80:{PPS_PORT}, pinned to CPU {MEASURED_CPU}, "
          f"{args.pps_seconds:g} s a run; veth hands each packet on in the sender's own softirq, so gw's forwarding "
          f"(conntrack, NAT, the agent's chains, policy routing) and eth0's upstream up to a counting drop run on "
          f"that CPU too (the agent on CPU {AGENT_CPU}). CPU a packet: the sender's user and system time (softirqs "
          f"in its context included) and ksoftirqd/{MEASURED_CPU}'s, over the packets counted; the sender alone: "
          f"the same run with gw dropping the packets as they arrive; the forwarding path = a run's CPU a packet "
          f"less its pair's sender alone. --pps-pairs {args.pps_pairs}, each: sender alone, with, without (ABBA "
          f"order), the ruleset switched by reloading the agent (pinning = yes/no; the route hook's rules stay); "
          f"medians")
    if python:
        print("  - NOTE: no iperf3 (Debian: iperf3): a Python sender, which costs more a packet than iperf3, so "
              "the packets a second and the figures together say more about the sender; the forwarding path's "
              "figures (less the sender alone) are the comparison")


def print_report(header, res, args):
    print("\n".join(header))
    print()
    if "failback" in res:
        print_failback(res["failback"], args)
        print()
    if "false-alarm" in res:
        print_false_alarm(res["false-alarm"], args)
        print()
    if "decisions" in res:
        print_decisions(res["decisions"], args)
        print()
    if "pps" in res:
        print_pps(res["pps"], args)
        print()
    print("Method: see the docstring of Tests/bench/bench_flows.py.")


# -- main ---------------------------------------------------------------------------------

def both_modes(fn, binary, workdir: Path, name: str, args):
    """fn(binary, workdir, pinning, args) for --rounds rounds of both modes (the
    order alternating by round): {True: [results], False: [results]}."""
    out = {True: [], False: []}
    for k in range(args.rounds):
        for mode in ((True, False) if k % 2 == 0 else (False, True)):
            progress(f"{name}: {mode_name(mode)}, round {k + 1}")
            out[mode].append(fn(binary, workdir / f"{name}-{mode_name(mode)}-{k + 1}", mode, args))
            r = out[mode][-1]
            progress(f"{name}: {mode_name(mode)}, round {k + 1}: {r['alive']}/{r['count']} alive")
    return out


def one_mode(fn, binary, workdir, name, mode, args):
    """One mode's rounds of a part (the smoke runs each mode in a thread of its own)."""
    return [fn(binary, workdir / f"{name}-{mode_name(mode)}-{k + 1}", mode, args) for k in range(args.rounds)]


def run_parts(binary, workdir: Path, args, skip, parts: Parts):
    plan = {"failback": lambda: both_modes(failback_once, binary, workdir, "failback", args),
            "false-alarm": lambda: both_modes(false_alarm_once, binary, workdir, "false-alarm", args),
            "decisions": lambda: decisions_part(binary, workdir / "decisions", args),
            "pps": lambda: pps_part(binary, workdir / "pps", args)}
    if not args.smoke:
        for name, fn in plan.items():
            if name not in skip:
                progress(f"{name}: started")
                parts.attempt(name, fn)
        return
    # --smoke: each mode of each part in a thread of its own, pps after them.
    threads = []
    for name, fn in (("failback", failback_once), ("false-alarm", false_alarm_once)):
        if name in skip:
            continue
        for mode in (True, False):
            threads.append(threading.Thread(target=parts.attempt, daemon=True, args=(
                f"{name}/{mode_name(mode)}", lambda fn=fn, name=name, mode=mode: one_mode(fn, binary, workdir, name,
                                                                                         mode, args))))
    if "decisions" not in skip:
        threads.append(threading.Thread(target=parts.attempt, args=("decisions", plan["decisions"]), daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(timeout=1.0)
    for name in ("failback", "false-alarm"):
        if f"{name}/pinned" in parts.results and f"{name}/today" in parts.results:
            parts.results[name] = {True: parts.results.pop(f"{name}/pinned"),
                                   False: parts.results.pop(f"{name}/today")}
    if "pps" not in skip:
        parts.attempt("pps", plan["pps"])


def sender_version() -> str:
    if not tool_path("iperf3"):
        return "Python (no iperf3: socket.send in a loop)"
    out = subprocess.run(["iperf3", "--version"], capture_output=True, text=True, timeout=10).stdout
    return out.splitlines()[0] if out else "iperf3"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--connections", type=int, help="long-lived connections in failback and false-alarm (10)")
    ap.add_argument("--observe", type=float, help="failback: seconds after it that the connections are counted (60)")
    ap.add_argument("--rounds", type=int, help="rounds of each mode in failback and false-alarm (1)")
    ap.add_argument("--step-seconds", type=float, help="false-alarm: how long the 600 ms round trip lasts (40)")
    ap.add_argument("--after", type=float, help="false-alarm: count this long after eth0 is primary again, s (10)")
    ap.add_argument("--decisions", type=int, help="decisions timed (10: 5 cuts, 5 failbacks)")
    ap.add_argument("--pps-pairs", type=int, help="pps: pairs of runs with and without the ruleset (6)")
    ap.add_argument("--pps-seconds", type=float, help="pps: seconds a run (6)")
    ap.add_argument("--skip", default="", help="comma list of " + ",".join(PARTS))
    args = parse_bench_args(ap, "--smoke", "every part very short, side by side (CI)", SMOKE, FULL)
    skip = skipped_parts(ap, args, PARTS)
    if min(args.connections, args.rounds, args.decisions, args.pps_pairs) < 1 \
            or min(args.observe, args.step_seconds, args.pps_seconds) <= 0 or args.after < 0:
        ap.error("counts must be at least 1, durations positive")
    started = lab_bench_header(args, "uplinkd flow pinning: connections kept, decision to new flows, the "
                                     "ruleset's cost (Tests/bench/bench_flows.py)",
                               "2 connections, 5-s windows, one decision, 1-s pps runs", config=CONFIG)
    if started is None:
        return 1
    binary, header = started
    if tool_path("conntrack") is None:
        print("bench: the agent's pinning needs conntrack (Debian: conntrack)", file=sys.stderr)
        return 1
    if "/debug/" in str(binary):
        header.append("- NOTE: a debug build: the agent's own times (decision, apply) are pessimistic")
    header.append(f"- pps sender: {sender_version()}")
    parts = Parts()
    progress(f"{binary}; parts: {', '.join(p for p in PARTS if p not in skip)}")
    with tempfile.TemporaryDirectory(prefix="bench-flows-") as tmp:
        try:
            run_parts(binary, Path(tmp), args, skip, parts)
        except KeyboardInterrupt:
            print("bench: interrupted", file=sys.stderr)
            return 130
    print_report(header, parts.results, args)
    for err in parts.errors:
        print(f"\nNOT MEASURED, {err}")
    return 1 if parts.errors else 0


if __name__ == "__main__":
    sys.exit(main())
