#!/usr/bin/env python3
"""Reliability soak: many simulated gateways at once, each given a seeded random
schedule of outages and impairments whose truth is known, judged against it.

    sudo python3 Tests/bench/bench_soak.py --binary .build/release/uplinkd \\
        [--gateways 30] [--hours 2] [--seed 1] [--gap 300] [--keep DIR] [--smoke]
        [--kinds K,K...] [--every-feature] [--pinning] [--connections 4]

A day of one gateway with every feature on:

    sudo python3 Tests/bench/bench_soak.py --binary .build/release/uplinkd \\
        --gateways 1 --hours 24 --every-feature --seed 1

Each gateway is a failover lab of its own (Tests/integration/failoverlab.py): eth0
the primary, reached through a delay relay (5 ms each way, so that its latency can
spike), wlan0 (Wi-Fi) and the metered wwan0 as backups, the agent at its defaults
with the shipped route hook (hooks/50-route-failover), and LAN traffic of its own:
gateway 0, 3, 6 ... many flows (a request every 100 ms, each on time), gateway 1,
4, 7 ... one sequential client (one request at a time, 100 ms between), gateway 2,
5, 8 ... none (idle). The odd gateways also speak MQTT, with Home Assistant
discovery, to a broker of their own on the internet side (reached through the
uplinks, cut with them). Gateways 1, 5, 9 ... (every one with --every-feature) have
every feature on: wwan0 is a modem of the real ModemManager (Tests/integration/
modemrig.py: its test mode, an emulated AT modem, a private D-Bus bus; the lab's
veth wwan0 stands for its data interface) with its recovery ladder at the defaults,
a 5 GB data plan on wwan0, the Prometheus textfile, and the shipped portal-login
hook (hooks/60-portal-login, click-through, for wlan0: the lab's portal has no form,
so it runs at each portal and fails, as a hook may). All start together; each soaks
for --hours once it has settled (eth0 primary, every uplink online).

Long-lived connections: the gateways with many flows (0, 3, 6 ...) also keep
--connections (4) long-lived TCP connections from the LAN to a host on the internet
side (Tests/integration/tcpflow.py clients against the lab's flow_server, as
Tests/bench/bench_flows.py): a 64-byte line every 200 ms, each answered with the
name of the upstream it goes back through, at most 5 s for each answer (more than
any latency step's round trip, so it is the network that ends a connection, not the
client's patience), a new connection at the next 200 ms once one ends. Their
upstreams masquerade what they forward toward that host (FailoverLab(cloud=True,
upstream_nat=True): carrier-grade NAT; an MQTT gateway's broker sits behind it too),
so a connection whose packets change uplink is reset by the peer, as on the real
internet. Each answer names the upstream it came back through (by the source address
the host sees: tcpflow.py --role-of), which is the uplink the connection is on; a
connection that ended before its first answer takes its uplink from the host's log
of accepted connections (the one uplink whose address it accepted from within -0.5
to +3 s of the client's `connected`), else its uplink is unknown. The clients start
once the agent has settled (with --pinning once its flow table and rules are in
place too). The other gateways get none: their packets would give the agent stall
evidence sooner, and the sequential and idle failover times would no longer measure
what they say. --pinning runs every agent with `[flows] pinning = yes` (needs
conntrack); without it the agent runs at today's default (no pinning), so two runs
of one seed compare the two.

Each gateway's schedule (random.Random(seed * 1000 + gateway), so a run can be
repeated): a gap (exponential, mean --gap seconds, at least 10 s), then one event,
started only once eth0 is primary with every uplink online (else it is skipped and
counted: flap damping may keep eth0 out for minutes after several outages, by
design). --keep DIR keeps each gateway's files (agent log, hook log, events.json
with the truth, result.json with its samples and bytes). Events
and their truth:

  outage   eth0's upstream drops everything (carrier up) for 30 s to --max-outage:
           a real outage, the primary must move (in time: see below)
  carrier  eth0's far end goes down for 2 to 20 s (carrier lost): must move
  loss     1 to 30 % random loss each way on eth0's upstream for 5 to 120 s:
           an impairment, the primary must not move
  blip     eth0's upstream cut for 0.05 to 0.25 s: must not move (a path dead for
           longer than the quick rule's 300 ms floor is, when the agent decides,
           an outage it cannot tell from a long one: a sub-second failover's price)
  portal   wlan0 (a backup) turns captive for 60 to 300 s: must not move, and
           wlan0 should read captive meanwhile
  latency  eth0's round trip rises to 200 to 1500 ms for 5 to 120 s (the relay's
           delay): must not move, but see degraded below
  dns      eth0's upstream resolver stops answering for 5 to 120 s (everything
           else passes): eth0 is `limited` by the verdict rules once a round sees
           it, so a move during it (reason lost) is by design, counted apart; none
           is not a miss (the agent resolves only when it probes)
  broker   (MQTT gateways) the broker stops for 1 to 60 s and starts again: must
           not move, and the agent must connect again (the time is reported)
  registration  (modem gateways) the modem loses its registration (searching) for
           10 to 300 s: must not move; wwan0 should read down meanwhile (the
           modem's own word) and be online again after
  ladder   (modem gateways) wwan0's upstream is cut, carrier and registration up,
           until the modem receives the ladder's reconnect (AT+CGACT=0 or ATH), then
           restored: must not move; the agent finds the dead backup at its next
           round (a metered backup: within its 20-min interval), the reconnect must
           come recover-after (2 min) later, and wwan0 be online again

A primary change away from eth0 within an outage or carrier event (or 5 s after its
end) is a failover; one during a loss burst of 10 % or more or a latency spike of
500 ms or more, or within degraded-for (60 s) after it, whose reason is `degraded`
is a handover by design (a primary degraded for that long, and still by that last
stretch's probes, yields to a healthy backup: uplinkd(8), "Primary"), counted apart, as
is one with reason `lost` during a DNS failure; anywhere else it is a false one. A failover is late beyond the
targets' p95 (Tests/bench/README.md): 1.5 s with LAN traffic, 5 s idle (a carrier loss: 1.5 s); an
outage or carrier event without one is missed. Modem gateways need ModemManager,
dbus-daemon and python3-dbusmock (as test_modem.py); without them the header says
why and the soak runs without modems.

A long-lived connection is judged by its uplink U (above) and the span from its
last answer (its `connected` line if none) to the line that ended it (reset,
timeout, closed, ...), both as the client logged them: it was broken BY AN OUTAGE
(expected) when that span overlaps, from its start to GRACE_S (5 s) after its end,
an event that takes U itself out of service by the schedule's truth: outage or
carrier for eth0, portal for wlan0 (captive: no internet on a real network, and
the agent's `captive`), ladder (its upstream cut) or registration (no bearer on a
real modem) for wwan0. Every other end is a connection BROKEN WHILE ITS UPLINK
WORKED: moved by a false failover, a failback, a degraded handover (latency or
loss: the path still carried it), a move during a blip, or released by pinning
while U's forwarding path worked (dns: eth0 `limited` though only its resolver is
silent); each is listed with what was going on (the events and primary changes
during its span, else the last event before it). A connection ended before its
first answer and without an accepted connection naming its uplink is counted
apart (uplink unknown). Counted: connections alive at the window's start or
opened in it; ends within the window (the clients stop at its end: no end line).

Figures: false failovers per 1,000 link-hours (three uplinks per gateway; with none
seen, the 95 % upper bound 3 / link-hours), missed and late failovers, failover time
p50 / p95 / p99, probe bytes per uplink per month (nftables counters of the
gateway's own traffic), and per agent resident memory, open descriptors, child
processes and CPU at the start and the end of its window (growth per hour). The
long-lived connections: connections opened in the window (and those alive at its
start), alive at its end, broken by an outage, broken while their uplink worked and
those per 1,000 link-hours of the gateways that held them (three uplinks each; with
none, the 95 % upper bound 3 / link-hours), with where; the header says whether
pinning was on.
"""

import argparse
import ipaddress
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchstats import NONE, fmt_s, median, percentile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
from agentrun import AgentError, AgentRun, proc_memory  # noqa: E402
from mqttlab import MqttBroker  # noqa: E402
import modemrig  # noqa: E402
from bench_compare import parse_bench_args  # noqa: E402
from bench_failover import DEFAULTS_CONFIG, lab_bench_header, progress  # noqa: E402
from bench_flows import entries_as_wanted  # noqa: E402
from bench_modem import is_reconnect  # noqa: E402
from failoverlab import FAILOVER_UPLINKS, FailoverLab  # noqa: E402
from lab import tool_path  # noqa: E402

FULL = {"gateways": 30, "hours": 2.0, "gap": 300.0, "max_outage": 600.0, "connections": 4}
SMOKE = {"gateways": 2, "hours": 0.015, "gap": 10.0, "max_outage": 20.0, "connections": 4}
KINDS = (("outage", 0.15), ("carrier", 0.1), ("loss", 0.2), ("blip", 0.15), ("portal", 0.1),
         ("latency", 0.15), ("dns", 0.1), ("broker", 0.1), ("registration", 0.1), ("ladder", 0.1))
MODEM_KINDS = ("registration", "ladder")
RECOVER_AFTER_S = 120.0                              # the agent's default recover-after
METERED_INTERVAL_S = 1200.0                          # a metered backup's default interval: 20 min
LADDER_WAIT_S = METERED_INTERVAL_S + RECOVER_AFTER_S + 180.0
BACK_ONLINE_WAIT_S = 180.0
MISFITS = 20                                         # draws that do not fit before a window ends
REAL = ("outage", "carrier")
DEGRADING = {"loss": ("percent", 10), "latency": ("rtt_ms", 500)}   # uplinkd(8): degraded at 10 % loss or 500 ms
BASE_DELAY_MS = 5
RECONNECT_WAIT_S = 180.0
TRAFFIC = ("flows", "sequential", "idle")
GRACE_S = 5.0
DEGRADED_FOR_S = 60.0   # the agent's default degraded-for
SETTLE_S = 300.0
MONTH_S = 30 * 86400
FLOW_PERIOD_S = 0.2
# Longer than any latency step's round trip (1.5 s) with the relay's queue: only the
# network ends a connection, never the client's impatience.
FLOW_TIMEOUT_S = 5.0
FLOW_START_S = 30.0
# The uplink each kind of event takes out of service, by the schedule's truth (the
# docstring's rule); the other kinds leave every uplink's forwarding path working.
OUT_OF_SERVICE = {"outage": "eth0", "carrier": "eth0", "portal": "wlan0", "ladder": "wwan0",
                  "registration": "wwan0"}
ROLE_IFACE = {u.role: u.iface for u in FAILOVER_UPLINKS}
UPLINK_NETS = [(ipaddress.ip_network(f"10.234.{u.n}.0/30"), u.iface) for u in FAILOVER_UPLINKS] \
    + [(ipaddress.ip_network(f"10.233.{u.n}.0/24"), u.iface) for u in FAILOVER_UPLINKS]
# The host logs its accept one way after the client's `connected`: up to 0.75 s in a
# latency step, more on a loaded machine; the clocks are one.
ACCEPT_BEFORE_S, ACCEPT_AFTER_S = 0.5, 3.0
# A hook line is stamped when the hook starts, a moment after the move it reports.
MOVE_SLACK_S = 1.0
# A failback breaks connections a hold-down (30 s) or, damped, minutes after its outage.
LAST_EVENT_S = 300.0


def sample_agent(pid):
    """(RSS KiB, open descriptors, child processes, CPU seconds) of the agent now."""
    rss, _ = proc_memory(pid)
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    children = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[1] == str(pid):
                        children += 1
            except (OSError, IndexError):
                pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return {"rss": rss, "fds": fds, "children": children, "cpu": cpu}


def is_modem_gateway(index, args) -> bool:
    """Gateways 1, 5, 9 ... (all with --every-feature) have the modem and every feature."""
    return args.every_feature or index % 4 == 1


def seconds_until(predicate, since: float, bound_s: float, poll_s: float):
    """Seconds from `since` until predicate() holds, polled; None when not within bound_s."""
    while time.time() < since + bound_s:
        if predicate():
            return time.time() - since
        time.sleep(poll_s)
    return None


class Gateway(threading.Thread):
    """One lab, one agent, one schedule."""

    def __init__(self, index, binary, workdir, args, deadline_after_settle_s):
        super().__init__(daemon=True, name=f"gw{index}")
        self.index, self.binary, self.dir, self.args = index, binary, workdir / f"gw{index}", args
        self.window_s = deadline_after_settle_s
        self.traffic = TRAFFIC[index % len(TRAFFIC)]
        self.modem = is_modem_gateway(index, args) and args.modems
        self.mqtt = args.every_feature or index % 2 == 1
        self.flows = self.traffic == "flows" and args.connections > 0
        self.kinds = [(k, w) for k, w in KINDS if k in args.kinds and (k != "broker" or self.mqtt)
                      and (k not in MODEM_KINDS or self.modem)]
        self.broker = self.rig = self.agent = self.clients = None
        self.rng = random.Random(args.seed * 1000 + index)
        self.events, self.skipped, self.result, self.error = [], [], {}, None

    def run(self):
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            with FailoverLab(delays={"eth0": BASE_DELAY_MS}, cloud=self.mqtt or self.flows,
                             upstream_nat=self.flows) as lab:
                client = run = None
                try:
                    sections = {"flows": {"pinning": "yes"}} if self.args.pinning else {}
                    config, hooks, env = lab.agent_config(sections=sections), lab.agent_hooks(), {}
                    if self.modem:
                        self.rig = modemrig.ModemRig().start()
                        self.rig.mmcli("-m", self.rig.modem_path(), "--simple-connect=apn=internet")
                        env["DBUS_SYSTEM_BUS_ADDRESS"] = self.rig.bus_address
                        config = lab.agent_config(
                            interfaces={"wwan0": {"modem": modemrig.DEFAULT_IMEI, "plan": "5GB"}},
                            sections=sections | {"export": {"prometheus-textfile": str(self.dir / "uplinkd.prom")}})
                        portal_conf = self.dir / "portal-login.conf"
                        portal_conf.write_text("METHOD=click-through\nINTERFACES=wlan0\n")
                        hooks["60-portal-login"] = (f"#!/bin/sh\nUPLINKD_HOOK_LIB='{failoverlab.HOOK_LIB}' "
                                                    f"UPLINKD_PORTAL_CONF='{portal_conf}' "
                                                    f"exec '{failoverlab.HOOKS / '60-portal-login'}'\n")
                    if self.mqtt:
                        self.broker = MqttBroker(lab, self.dir / "broker", cloud=True).build().start()
                        credentials = self.broker.credentials_file(self.dir / "credentials")
                        config += self.broker.mqtt_section(credentials, node=f"gw{self.index}",
                                                           extra="homeassistant = yes\n")
                    if self.traffic != "idle":
                        client = lab.lan_client(concurrent=self.traffic == "flows")
                    run = AgentRun(lab, self.dir / "agent", config, hooks=hooks, env=env,
                                   binary=self.binary, verbose=2 if self.args.keep else 1).start()
                    self.agent = run
                    failoverlab.wait_settled(run, lab, SETTLE_S)
                    if self.modem:
                        run.wait_state(lambda st: st["uplinks"]["wwan0"].get("modem_equipment_id")
                                       == modemrig.DEFAULT_IMEI, SETTLE_S, "wwan0's modem in the state file")
                    if self.flows:
                        self.start_flows(lab, run)
                    self.soak(lab, run)
                finally:
                    if self.clients:
                        self.clients.stop()
                    if run:
                        run.stop()
                        run.close()
                    if client:
                        client.stop()
                    if self.broker:
                        self.broker.destroy()
                    if self.rig:
                        self.rig.close()
        except Exception as exc:                            # reported, the others go on
            self.error = f"gw{self.index}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"

    def start_flows(self, lab, run):
        """The long-lived connections, each answered once (through eth0, the primary)."""
        if self.args.pinning:
            # A connection opened before the pinning rules exist carries no mark: it
            # would be judged on a ruleset it never had.
            run.wait_until(lambda: entries_as_wanted(lab, True), SETTLE_S, "the flow table and rules in place")
        self.clients = lab.flow_clients(self.args.connections, name="soakflow", period=FLOW_PERIOD_S,
                                        timeout=FLOW_TIMEOUT_S)
        self.clients.wait_all(lambda c: c.answers(), FLOW_START_S, "the long-lived connections answered")

    def flow_record(self, lab, t0, t1):
        """What judge_flows needs once the lab is gone: the clients' log lines and the
        host's accepted connections (time, uplink), with the window."""
        peers = []
        for t, address in lab.flow_server_peers():
            ip = ipaddress.ip_address(address)
            peers.append((t, next((iface for net, iface in UPLINK_NETS if ip in net), None)))
        return {"window": [t0, t1], "peers": peers,
                "clients": [[[e.t, e.connection, e.event, e.upstream] for e in c.events()] for c in self.clients]}

    def soak(self, lab, run):
        t0, start = time.time(), sample_agent(run.pid)
        bytes0 = lab.counters()
        deadline = t0 + self.window_s
        misfits = 0
        while self.kinds and misfits < MISFITS:
            gap = min(max(10.0, self.rng.expovariate(1 / self.args.gap)), 3 * self.args.gap)
            kind = self.rng.choices([k for k, _ in self.kinds], weights=[w for _, w in self.kinds])[0]
            length = self.length(kind)
            if time.time() + gap + length > deadline:
                # A long event (a ladder) that no longer fits: draw another.
                misfits += 1
                continue
            time.sleep(gap)
            try:
                # Each event starts from the healthy state (eth0 primary): flap damping
                # may keep eth0 out for minutes after several outages, by design.
                failoverlab.wait_settled(run, lab, SETTLE_S)
            except AgentError as exc:
                self.skipped.append(f"{kind}: {str(exc).splitlines()[0]}")
                continue
            self.events.append(self.perform(lab, kind, length))
        time.sleep(max(0.0, deadline - time.time()))
        t1 = time.time()
        (self.dir / "events.json").write_text(json.dumps(self.events, indent=1))
        flows = self.flow_record(lab, t0, t1) if self.clients else None
        if flows:
            (self.dir / "flows.json").write_text(json.dumps(flows))
        self.result = {"seconds": t1 - t0, "start": start, "end": sample_agent(run.pid), "flows": flows,
                       "bytes": {i: sum(lab.counters()[i][k][1] - bytes0[i][k][1] for k in ("local_in", "local_out"))
                                 for i in ("eth0", "wlan0", "wwan0")},
                       "hooks": [e for e in run.events() if t0 <= e.t <= t1 + GRACE_S]}
        (self.dir / "result.json").write_text(json.dumps(
            {k: v for k, v in self.result.items() if k not in ("hooks", "flows")}
            | {"traffic": self.traffic, "mqtt": self.mqtt, "pinning": self.args.pinning, "modem": self.modem,
               "skipped": self.skipped},
            indent=1))

    def length(self, kind):
        r = self.rng
        return {"outage": lambda: r.uniform(30.0, self.args.max_outage), "carrier": lambda: r.uniform(2.0, 20.0),
                "loss": lambda: r.uniform(5.0, 120.0), "blip": lambda: r.uniform(0.05, 0.25),
                "portal": lambda: r.uniform(60.0, 300.0), "latency": lambda: r.uniform(5.0, 120.0),
                "dns": lambda: r.uniform(5.0, 120.0), "broker": lambda: r.uniform(1.0, 60.0),
                "registration": lambda: r.uniform(10.0, 300.0), "ladder": lambda: LADDER_WAIT_S}[kind]()

    def perform(self, lab, kind, length):
        if kind == "ladder":
            return self.ladder(lab)
        event = {"kind": kind, "length": length}
        if kind == "loss":
            event["percent"] = self.rng.randint(1, 30)
        if kind == "latency":
            event["rtt_ms"] = self.rng.randint(200, 1500)
        role, peer = lab.peer_of("eth0")
        start, end = {
            "outage": (lambda: lab.cut("eth0"), lambda: lab.restore("eth0")),
            "blip": (lambda: lab.cut("eth0"), lambda: lab.restore("eth0")),
            "carrier": (lambda: lab.ip(role, "link", "set", peer, "down"), lambda: lab.ip(role, "link", "set", peer, "up")),
            "loss": (lambda: lab.lossy("eth0", event["percent"]), lambda: lab.lossless("eth0")),
            "portal": (lambda: lab.captive("wlan0", True), lambda: lab.captive("wlan0", False)),
            "latency": (lambda: lab.set_delay("eth0", event["rtt_ms"] // 2),
                        lambda: lab.set_delay("eth0", BASE_DELAY_MS)),
            "dns": (lambda: lab.dns_cut("eth0"), lambda: lab.dns_restore("eth0")),
            "broker": (lambda: self.broker.stop(), lambda: self.broker.start()),
            "registration": (lambda: self.rig.set_registration("searching"), lambda: self.rig.set_registration("home")),
        }[kind]
        connected = self.connections() if kind == "broker" else 0
        event["start"] = time.time()
        start()
        time.sleep(length)
        event["end"] = time.time()
        end()
        if kind == "broker":
            event["reconnect_s"] = self.wait_connected(connected, event["end"])
        if kind == "registration":
            event["back_s"] = self.wait_wwan0_online(event["end"])
        return event

    def ladder(self, lab):
        """wwan0's upstream cut until the modem hears the ladder's reconnect (bounded)."""
        event = {"kind": "ladder", "start": time.time(), "detect_s": None}
        mark = self.rig.log_mark()
        lab.cut("wwan0")
        reconnect = None
        while reconnect is None and time.time() < event["start"] + LADDER_WAIT_S:
            time.sleep(0.5)
            if event["detect_s"] is None and self.wwan0_verdict() not in (None, "online"):
                event["detect_s"] = time.time() - event["start"]
            reconnect = next((e for e in self.rig.log(mark) if "cmd" in e and is_reconnect(e["cmd"])), None)
        event["end"] = time.time()
        lab.restore("wwan0")
        event["length"] = event["end"] - event["start"]
        event["reconnect_s"] = event["length"] if reconnect else None
        event["back_s"] = self.wait_wwan0_online(event["end"])
        return event

    def wwan0_verdict(self):
        try:
            return self.agent.state()["uplinks"]["wwan0"]["verdict"]
        except (AgentError, KeyError, OSError, ValueError):
            return None

    def wait_wwan0_online(self, since: float):
        """Seconds from `since` until the state file says wwan0 online (None: not within 180 s)."""
        return seconds_until(lambda: self.wwan0_verdict() == "online", since, BACK_ONLINE_WAIT_S, 0.5)

    def connections(self) -> int:
        """Connections the agent (user `gateway`) made to the broker so far, by its log."""
        try:
            text = self.broker.log.read_text(errors="replace")
        except OSError:
            return 0
        return sum(1 for line in text.splitlines() if "New client connected" in line and "u'gateway'" in line)

    def wait_connected(self, before: int, since: float):
        """Seconds from the broker's restart to the agent's next connection (None: not within 180 s)."""
        return seconds_until(lambda: self.connections() > before, since, RECONNECT_WAIT_S, 0.2)


def judge(gw):
    """Failovers, false ones and misses of one gateway, from its hook log."""
    moves = [e for e in gw.result.get("hooks", []) if e.event == "primary" and e.previous_primary == "eth0"]
    out = {"failovers": [], "late": [], "missed": [], "false": [], "handovers": [], "limited": [],
           "portals": [0, 0]}
    used = set()
    for event in gw.events:
        window = [m for m in moves if event["start"] <= m.t <= event["end"] + GRACE_S]
        if event["kind"] in REAL:
            if not window:
                out["missed"].append(f"gw{gw.index} ({gw.traffic}) {event['kind']} of {event['length']:.1f} s")
                continue
            used.add(id(window[0]))
            detect = window[0].t - event["start"]
            out["failovers"].append((detect, gw.traffic))
            bound = 5.0 if gw.traffic == "idle" and event["kind"] == "outage" else 1.5
            if detect > bound:
                out["late"].append(f"gw{gw.index} ({gw.traffic}) {event['kind']} {detect:.1f} s")
        if event["kind"] == "registration":
            event["down"] = any(e.event == "verdict" and e.iface == "wwan0" and e.verdict != "online"
                                and event["start"] <= e.t <= event["end"] for e in gw.result.get("hooks", []))
        if event["kind"] == "portal":
            out["portals"][1] += 1
            out["portals"][0] += any(e.event == "verdict" and e.iface == "wlan0" and e.verdict == "captive"
                                     and event["start"] <= e.t <= event["end"] for e in gw.result.get("hooks", []))
    for move in moves:
        if id(move) in used:
            continue
        during = next((e for e in gw.events if e["start"] <= move.t <= e["end"] + GRACE_S), None)
        if during is None and move.primary_reason == "degraded":
            during = next((e for e in gw.events if e["kind"] in DEGRADING
                           and e["end"] < move.t <= e["end"] + DEGRADED_FOR_S), None)
        after = during is not None and move.t > during["end"] + GRACE_S
        where = (f"gw{gw.index} ({gw.traffic}) {'after' if after else 'during'} {during['kind'] if during else 'no event'}"
                 + (f" {during['percent']} %" if during and during["kind"] == "loss" else "")
                 + (f" {during['rtt_ms']} ms" if during and during["kind"] == "latency" else "")
                 + (f" (+{move.t - during['end']:.1f} s)" if after else "")
                 + f", reason {move.primary_reason or '-'}")
        # Under loss of 10 % or a round trip of 500 ms or more eth0 is degraded, and a
        # healthy backup is preferred (uplinkd(8), "Primary"); with its resolver silent it
        # is limited (design: DNS fails). Both are handovers by design, not failovers
        # on a false alarm.
        degrading = DEGRADING.get(during["kind"]) if during else None
        if degrading and during[degrading[0]] >= degrading[1] and move.primary_reason == "degraded":
            out["handovers"].append(where)
        elif during and during["kind"] == "dns" and not after and move.primary_reason == "lost":
            out["limited"].append((during["start"], move.t - during["start"], where))
        else:
            out["false"].append(where)
    return out


def connections_of(lines) -> dict:
    """{number: connection} of one tcpflow.py client's log lines: its `connected`
    time, its last answer's time and upstream, and its end (time, event) or None."""
    conns = {}
    for t, number, event, upstream in lines:
        c = conns.setdefault(number, {"connected": None, "last": None, "upstream": None, "end": None})
        if c["end"] is not None or event in ("paused", "resumed"):
            continue
        if event == "connected":
            c["connected"] = t
        elif event == "answer":
            c["last"], c["upstream"] = t, upstream
        else:
            c["end"] = (t, event)
    return conns


def accepted_via(connected: float, peers):
    """The uplink the host saw a connection accepted from near `connected`, when only one did."""
    seen = {iface for t, iface in peers if connected - ACCEPT_BEFORE_S <= t <= connected + ACCEPT_AFTER_S}
    return seen.pop() if len(seen) == 1 and None not in seen else None


def describe_event(e) -> str:
    return (e["kind"] + (f" {e['percent']} %" if e["kind"] == "loss" else "")
            + (f" {e['rtt_ms']} ms" if e["kind"] == "latency" else ""))


def break_context(gw, since: float, until: float) -> str:
    """What went on while a connection broke: the events and primary changes in its
    span, else the last event before it (a failback comes well after its outage)."""
    during = [describe_event(e) for e in gw.events if e["start"] <= until and since <= e["end"] + GRACE_S]
    moves = [f"primary {m.previous_primary or '-'} -> {m.primary or '-'} ({m.primary_reason or '-'})"
             for m in gw.result.get("hooks", []) if m.event == "primary"
             and since - MOVE_SLACK_S <= m.t <= until + MOVE_SLACK_S]
    parts = ([f"during {', '.join(during)}"] if during else []) + moves
    if not during:
        before = [e for e in gw.events if since - LAST_EVENT_S <= e["end"] < since]
        parts.append(f"{since - before[-1]['end']:.0f} s after {describe_event(before[-1])}" if before
                     else "no event")
    return ", ".join(parts)


def judge_flows(gw):
    """The long-lived connections of one gateway judged by the docstring's rule: held,
    alive at the end, and the ended ones by cause (each a description); None when the
    gateway held none."""
    rec = gw.result.get("flows")
    if not rec:
        return None
    t0, t1 = rec["window"]
    out = {"held": 0, "opened": 0, "alive": 0, "outage": [], "worked": [], "unknown": [], "ends": {}}
    for lines in rec["clients"]:
        for c in connections_of(lines).values():
            if c["connected"] is None or c["connected"] > t1 or (c["end"] and c["end"][0] < t0):
                continue
            out["held"] += 1
            out["opened"] += c["connected"] >= t0
            if c["end"] is None or c["end"][0] > t1:
                out["alive"] += 1
                continue
            end, event = c["end"]
            out["ends"][event] = out["ends"].get(event, 0) + 1
            uplink = ROLE_IFACE.get(c["upstream"]) or accepted_via(c["connected"], rec["peers"])
            since = c["last"] or c["connected"]
            where = f"gw{gw.index} {uplink or '?'} {event} at +{end - t0:.0f} s, {break_context(gw, since, end)}"
            if uplink is None:
                out["unknown"].append(where)
            elif any(OUT_OF_SERVICE.get(e["kind"]) == uplink and e["start"] <= end and since <= e["end"] + GRACE_S
                     for e in gw.events):
                out["outage"].append(where)
            else:
                out["worked"].append(where)
    return out


def listed(items, limit: int) -> str:
    """The first `limit` distinct items, each with its count when more than one
    (connections broken together read as one line)."""
    counts = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    text = [f"{n} × {item}" if n > 1 else item for item, n in list(counts.items())[:limit]]
    return "; ".join(text) + (" ..." if len(counts) > limit else "")


def flow_rows(gateways, args, row):
    """The long-lived connections' rows of the table."""
    judged = [(gw, j) for gw in gateways if (j := judge_flows(gw)) is not None]
    mode = "pinning on" if args.pinning else "pinning off"
    if not judged:
        row(f"long-lived LAN connections ({mode})", NONE if args.connections else "none (--connections 0)")
        return
    link_hours = sum(3 * gw.result["seconds"] / 3600 for gw, _ in judged)
    held, opened = sum(j["held"] for _, j in judged), sum(j["opened"] for _, j in judged)
    alive = sum(j["alive"] for _, j in judged)
    outage = [w for _, j in judged for w in j["outage"]]
    worked = [w for _, j in judged for w in j["worked"]]
    unknown = [w for _, j in judged for w in j["unknown"]]
    ends = {}
    for _, j in judged:
        for event, n in j["ends"].items():
            ends[event] = ends.get(event, 0) + n
    names = ", ".join(f"gw{gw.index}" for gw, _ in judged)
    row(f"long-lived LAN connections ({mode}; {args.connections} at a time on {names}; {link_hours:.3g} "
        f"link-hours): opened in the window (and alive at its start); alive at its end; ended, by how",
        f"{opened} ({held - opened}); {alive}; " + (", ".join(f"{e} {n}" for e, n in sorted(ends.items())) or "none"))
    row("connections broken by an outage of their uplink (expected)",
        f"{len(outage)}" + (": " + listed(outage, 5) if outage else ""))
    rate = len(worked) / link_hours * 1000
    row("connections broken while their uplink worked; per 1,000 link-hours",
        f"{len(worked)}; {rate:.1f}" + (f" (95 % upper bound {3 / link_hours * 1000:.1f})" if not worked else ""),
        "0")
    if worked:
        row("broken while their uplink worked, where", listed(worked, 10))
    if unknown:
        row("connections ended before their first answer, uplink unknown (not judged)",
            f"{len(unknown)}: " + listed(unknown, 5))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to soak")
    ap.add_argument("--gateways", type=int, help="gateways at once (30)")
    ap.add_argument("--hours", type=float, help="window of each gateway, hours (2)")
    ap.add_argument("--gap", type=float, help="mean gap between events, s (300)")
    ap.add_argument("--max-outage", type=float, help="longest outage, s (600)")
    ap.add_argument("--seed", type=int, default=1, help="the schedules' seed (1)")
    ap.add_argument("--every-feature", action="store_true",
                    help="every gateway a modem gateway with MQTT (the one-gateway day: --gateways 1 --hours 24)")
    ap.add_argument("--kinds", default=",".join(k for k, _ in KINDS),
                    help="the event kinds to draw from, comma-separated (all)")
    ap.add_argument("--keep", help="keep the agents' files (logs, hook logs, state) under this directory")
    ap.add_argument("--pinning", action="store_true", help="every agent with `[flows] pinning = yes` (today: no)")
    ap.add_argument("--connections", type=int,
                    help="long-lived LAN connections on each gateway with many flows (4; 0: none)")
    args = parse_bench_args(ap, "--smoke", "two gateways for 54 s, short outages (CI)", SMOKE, FULL)
    if args.connections < 0:
        ap.error("--connections: at least 0")
    started = lab_bench_header(args, "uplinkd reliability soak (Tests/bench/bench_soak.py)",
                               "two gateways, 54 s",
                               config=DEFAULTS_CONFIG + (", `[flows] pinning = yes`" if args.pinning else ""))
    if started is None:
        return 1
    binary, header = started
    if args.pinning and tool_path("conntrack") is None:
        print("bench_soak: --pinning: the agent's pinning needs conntrack (Debian: conntrack)", file=sys.stderr)
        return 1
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = sorted(set(args.kinds) - {k for k, _ in KINDS})
    if unknown or not args.kinds:
        print(f"bench_soak: --kinds: {', '.join(unknown) or 'none given'}: not among "
              f"{', '.join(k for k, _ in KINDS)}", file=sys.stderr)
        return 2
    no_modems = modemrig.unavailable_reason()
    args.modems = no_modems is None
    header.append("- modem gateways (ModemManager, every feature): "
                  + (", ".join(f"gw{i}" for i in range(args.gateways) if is_modem_gateway(i, args)) or "none"
                     if args.modems else f"none ({no_modems})"))
    header.append(f"- schedule: seed {args.seed}, {args.gateways} gateways, {args.hours:g} h each, "
                  f"mean gap {args.gap:g} s, outages up to {args.max_outage:g} s, kinds {','.join(args.kinds)}")
    flow_gateways = [f"gw{i}" for i in range(args.gateways) if TRAFFIC[i % len(TRAFFIC)] == "flows"]
    header.append("- flow pinning: " + ("ON (`[flows] pinning = yes`)" if args.pinning
                                        else "off (today's default: the route hook alone)"))
    header.append(f"- long-lived LAN connections: {args.connections} at a time on each gateway with many flows "
                  f"({', '.join(flow_gateways) or 'none'}), tcpflow.py to a host behind every upstream, a 64-byte "
                  f"line every {FLOW_PERIOD_S * 1000:.0f} ms and its answer, {FLOW_TIMEOUT_S:g} s for each answer, "
                  f"reopened when one ends; those gateways' upstreams masquerade toward it (carrier-grade NAT)"
                  if args.connections and flow_gateways else "- long-lived LAN connections: none")
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        gateways = [Gateway(i, binary, base, args, args.hours * 3600) for i in range(args.gateways)]
        progress(f"{len(gateways)} gateways, {args.hours:g} h each after settling")
        for gw in gateways:
            gw.start()
        for gw in gateways:
            while gw.is_alive():
                gw.join(timeout=5.0)
    done = [gw for gw in gateways if gw.result]
    print("\n".join(header) + "\n")
    print(table(done, args))
    for gw in gateways:
        if gw.error:
            print(f"\nNOT MEASURED, {gw.error}")
    return 1 if any(gw.error for gw in gateways) else 0


def table(gateways, args):
    rows = ["| figure | value | target |", "|---|---|---|"]

    def row(figure, value, target="–"):
        rows.append(f"| {figure} | {value} | {target} |")
    judged = [judge(gw) for gw in gateways]
    link_hours = sum(3 * gw.result["seconds"] / 3600 for gw in gateways)
    counts = {}
    for gw in gateways:
        for e in gw.events:
            counts[e["kind"]] = counts.get(e["kind"], 0) + 1
    row("gateways soaked; link-hours", f"{len(gateways)}; {link_hours:.1f}")
    row("events (kind: count)", ", ".join(f"{k} {counts.get(k, 0)}" for k, _ in KINDS))
    falses = [f for j in judged for f in j["false"]]
    rate = len(falses) / link_hours * 1000 if link_hours else None
    bound = 3 / link_hours * 1000 if link_hours else None
    row("false failovers; per 1,000 link-hours",
        f"{len(falses)}; {rate:.2f}" + (f" (95 % upper bound {bound:.2f})" if not falses and bound else "")
        if rate is not None else NONE, "0")
    if falses:
        row("false failovers, where", "; ".join(falses[:10]) + (" ..." if len(falses) > 10 else ""))
    flow_rows(gateways, args, row)
    handovers = [h for j in judged for h in j["handovers"]]
    degrading = {kind: [e for gw in gateways for e in gw.events if e["kind"] == kind] for kind in DEGRADING}
    row("handovers away from a degraded eth0, by design; loss bursts of 10 % or more; latency spikes of 500 ms or more",
        f"{len(handovers)}; " + "; ".join(f"{len([e for e in events if e[DEGRADING[k][0]] >= DEGRADING[k][1]])} of "
                                          f"{len(events)}" for k, events in degrading.items()))
    if handovers:
        row("handovers, where", "; ".join(handovers[:10]) + (" ..." if len(handovers) > 10 else ""))
    limited = [x for j in judged for x in j["limited"]]
    dns_events = [e for gw in gateways for e in gw.events if e["kind"] == "dns"]
    moved = sorted({start for start, _, _ in limited})
    row("DNS failures on eth0: moved away (eth0 limited, by design) of all; time to move, median (max)",
        f"{len(moved)} of {len(dns_events)}; " + (f"{fmt_s(median([t for _, t, _ in limited]))} "
                                                 f"({fmt_s(max(t for _, t, _ in limited))})" if limited else NONE))
    restarts = [e for gw in gateways for e in gw.events if e["kind"] == "broker"]
    back = [e["reconnect_s"] for e in restarts if e.get("reconnect_s") is not None]
    for kind, label in (("registration", "modem registration lost: wwan0 read down (of all); online again "
                                          "after it came back, median (max)"),
                        ("ladder", "modem data path dead: found dead, then the ladder's reconnect came (of all); "
                                   "after the cut: found, median (max); reconnect, median (max); wwan0 online again "
                                   "after the restore, median (max)")):
        events = [e for gw in gateways for e in gw.events if e["kind"] == kind]
        if kind == "registration":
            first = [e for e in events if e.get("down")]
        else:
            first = [e for e in events if e.get("reconnect_s") is not None]
        online = [e["back_s"] for e in events if e.get("back_s") is not None]
        value = f"{len(first)} of {len(events)}"
        if kind == "ladder":
            for key in ("detect_s", "reconnect_s"):
                times = [e[key] for e in events if e.get(key) is not None]
                value += "; " + (f"{fmt_s(median(times))} ({fmt_s(max(times))})" if times else NONE)
        value += "; " + (f"{fmt_s(median(online))} ({fmt_s(max(online))})" if online else NONE)
        if len(online) < len(events):
            value += f" ({len(events) - len(online)} not online within {BACK_ONLINE_WAIT_S:.0f} s)"
        row(label, value, "all")
    row("broker restarts: the agent connected again (of all); after the restart, median (max)",
        f"{len(back)} of {len(restarts)}; " + (f"{fmt_s(median(back))} ({fmt_s(max(back))})" if back else NONE),
        "all")
    real = sum(counts.get(k, 0) for k in REAL)
    missed, late = [m for j in judged for m in j["missed"]], [x for j in judged for x in j["late"]]
    row("real outages: missed; late", f"{len(missed)} of {real}; {len(late)}", "0; 0")
    if missed or late:
        row("missed and late, where", "; ".join((missed + late)[:10]) + (" ..." if len(missed + late) > 10 else ""))
    for label, kinds, target in (("", TRAFFIC, "–"), (", many flows", ("flows",), "p95 ≤ 1.5 s"),
                                 (", one sequential client", ("sequential",), "p95 ≤ 1.5 s"),
                                 (", idle (a carrier loss: 1.5 s)", ("idle",), "p95 ≤ 5 s")):
        times = [t for j in judged for t, traffic in j["failovers"] if traffic in kinds]
        row(f"failover time p50 / p95 / p99{label}",
            " / ".join(fmt_s(percentile(times, q)) if times else NONE for q in (50, 95, 99)) + f" (n={len(times)})",
            target)
    seen, portals = sum(j["portals"][0] for j in judged), sum(j["portals"][1] for j in judged)
    row("portal on wlan0 read captive", f"{seen} of {portals}", "all")
    for iface in ("eth0", "wlan0", "wwan0"):
        months = [gw.result["bytes"][iface] * MONTH_S / gw.result["seconds"] for gw in gateways]
        row(f"{iface}: the gateway's own bytes per month, median (max)",
            f"{median(months) / 1e6:.1f} MB ({max(months) / 1e6:.1f} MB)" if months else NONE)
    for key, label, unit in (("rss", "resident memory", "KiB"), ("fds", "open descriptors", ""),
                             ("children", "child processes", "")):
        growth = [(gw.result["end"][key] - gw.result["start"][key]) / (gw.result["seconds"] / 3600) for gw in gateways]
        ends = [gw.result["end"][key] for gw in gateways]
        row(f"{label}: at the end, median (max); growth per hour, median (max)",
            f"{median(ends):.0f} ({max(ends):.0f}) {unit}; {median(growth):+.1f} ({max(growth):+.1f})" if ends else NONE,
            "flat")
    cpu = [(gw.result["end"]["cpu"] - gw.result["start"]["cpu"]) / (gw.result["seconds"] / 3600) for gw in gateways]
    row("CPU seconds per hour, median (max)", f"{median(cpu):.1f} ({max(cpu):.1f})" if cpu else NONE)
    skipped = [x for gw in gateways for x in gw.skipped]
    if skipped:
        row("events not started: eth0 not back as primary within 300 s (flap damping, or a defect)",
            f"{len(skipped)}: {skipped[0]}", "–")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
