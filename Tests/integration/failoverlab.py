"""Failover lab for the uplinkd integration tests (test_failover.py,
test_failoverlab.py) and the failover benchmark (Tests/bench/bench_failover.py).

A gateway with three uplinks, each a veth to its own upstream namespace that
plays the internet as the agent's BUILT-IN probes see it, and a LAN behind the
gateway whose traffic is forwarded and NATed out of the current primary:

                    LAN namespace "lan": eth0 192.168.77.2/24, default via .1
                    lanclient.py: GET http://203.0.113.80/lan/N every 100 ms
                                 |
    +----------------------------|-------------------------------------------------+
    | gateway "gw"             lan0 192.168.77.1/24                                 |
    | ip_forward=1; nftables: masquerade out of eth0, wlan0, wwan0; byte counters   |
    | uplinkd run (built-in probes) + hooks: 10-record, 50-route-failover (shipped) |
    | default routes: eth0 m100 < wlan0 m200 < wwan0 m300 (main table, never touched)|
    | the hook's: rules 32500 (main, suppress_prefixlength 0), 32501 (table 7077)   |
    | eth0 .1.2 (ethernet)      wlan0 .2.2 (wifi)          wwan0 .3.2 (wwan, metered)|
    +---|--------------------------|----------------------------|---------------------+
    +---|----------+         +-----|--------+            +------|-------+
    | "eth"        |         | "wifi"       |            | "cell"       |
    | .1.1 router  |         | .2.1 router  |            | .3.1 router  |
    +--------------+         +--------------+            +--------------+
    Each upstream: dnsmasq on the router address answering the five built-in
    probe names with 203.0.113.80 (TTL 300; AAAA: no data) and every other
    name with NXDOMAIN (--local=/#/, no upstream server: nothing is forwarded); inetserver.py on 203.0.113.80:80 (its
    loopback) answering the five built-in endpoints like the real ones, plus
    /lan/ for the LAN client; optionally DHCP (dhclient in gw) with option 43
    "ANDROID_METERED" as a phone hotspot sends it.
    (.N.M = 10.233.N.M/24)

FailoverLab(delays={"eth0": 150}) puts a relay namespace between an uplink
and its upstream: gw:eth0 is a veth to "dly-gw" in namespace role "rly1" (rlyN
for 10.233.N), whose "dly-up" is a veth to the upstream's up-eth0, and
delayrelay.py (AF_PACKET, stdlib Python) forwards every frame between the two
after the given one-way delay in ms (150: a 300 ms round trip; netem is not
needed). Addresses, routes and DNS stay as above; peer_of(iface) then names the
relay's dly-gw (taking it down is carrier loss at gw, as without a relay). Labs
that do not ask for delays are built exactly as before.

FailoverLab(ipv6=True) adds IPv6 on every uplink: fd00:233:N::2/64 in gw, the
router fd00:233:N::1, a static default route via it at the uplink's metric;
2001:db8:80::80/128 on every upstream's loopback with a second inetserver.py on
it (log http6-IFACE.log), and dnsmasq's AAAA answer for the five probe names is
that address (asked over IPv4, as the agent's per-uplink DNS does), so the
agent probes both families. FailoverLab(metrics={"wlan0": 0}) changes the IPv4
default routes' metrics (metric 0: what ifupdown with dhclient installs). Two
uplinks may not share an IPv4 metric: the kernel refuses the second route, as
it refuses dhclient-script's second `ip route add default` on a real gateway.

Nothing leaves the namespaces: they have no link to the host, the upstreams do
not forward, and dnsmasq has no server to forward to. Namespace names follow
lab.py ("ul<pid>-<seq>-<role>") and are swept the same way when their creator
died. Files of one lab live in FailoverLab.dir (logs/: servers, dnsmasq, DHCP
clients, LAN client; leases/: dhclient lease files; run/).

What the tests and the benchmark use:
- cut(iface) / restore(iface) / cut_off(iface): the upstream of an uplink drops
  everything to and from 203.0.113.0/24 and 2001:db8:80::/48 (nftables in the
  upstream namespace), carrier up; its router keeps answering DNS and ARP.
  break_ipv6(iface) / mend_ipv6(iface): the same for IPv6 only.
- route_dev(...): the device of `ip route get` in gw (a forwarded LAN packet:
  route_dev("gw", dest, "from", LAN_HOST, "iif", "lan0")); owned_routes(family)
  (text), owned_table(family) (tuples), owned_rules(family): the route hook's
  table 7077 and its rules (protocol 77); clear_routing(): removes both, for
  tests sharing a lab. The same as functions taking any lab (lab.Lab too).
- counters(): nftables counters in gw, per uplink, IPv4 only, of the gateway's
  own traffic (local_in/local_out: the agent's probes and DNS; dns_in/dns_out
  the DNS part of it) and of forwarded LAN traffic (fwd_in/fwd_out), in packets
  and bytes at the IP level (headers included, no link-layer framing).
- block(iface, name...) / blocked(): one upstream leaves some built-in
  endpoints unanswered (a firewall dropping them), the others keep working.
- captive(iface, on=True): one upstream becomes a captive portal (every built-in
  endpoint answers a redirect to its login page) until captive(iface, False).
- FailoverLab(cloud=True): one more namespace, "cloud", joined to every upstream
  by a veth (10.234.N.1/30 upstream, 10.234.N.2/30 cloud); it holds CLOUD_ADDR
  (203.0.113.10) on its loopback, each upstream forwards that address to it, and
  it routes each uplink's 10.233.N.0/24 back through that uplink's upstream: one
  host "on the internet" (an MQTT broker in the cloud, mqttlab.MqttBroker with
  cloud=True) that the gateway reaches through whichever uplink its traffic leaves
  by. cut(iface) cuts that path too (the forward chain drops 203.0.113.0/24).
- FailoverLab(cloud=True, upstream_nat=True): every upstream masquerades what it
  forwards toward the cloud to its own address there (10.234.N.1), as a real
  ISP's carrier-grade NAT does (nftables table failoverlab_cgnat in the upstream;
  set_upstream_nat(on) switches it while the lab runs). The cloud then sees one
  source address per uplink, so a TCP connection lives only while its packets
  leave the gateway by the uplink it started on: moved to another uplink, it
  reaches the cloud from another address, and the cloud answers with a reset (the
  gateway's masquerade gives the moved packets the new uplink's address, the new
  upstream its own) or its answers go back through the old upstream, which cannot
  deliver them to an address of another provider (a gateway with static SNAT:
  the connection times out). Without it, a gateway with static SNAT
  (plansupport.snat_to_fixed_addresses) keeps a moved connection alive by an
  asymmetric path, as no real pair of ISPs would. (Behind the lab's own masquerade
  in gw, Linux already ends a masqueraded connection whose packets change their
  output interface: the next packet is NATed anew, to the new uplink's address.)
- flow_server(port) (cloud=True): tcpflow.py serve on CLOUD_ADDR:port (5002
  unless told) in the cloud, answering each line with the role of the upstream
  its answers go back through (by the source address it sees: 10.234.N.0/30
  behind upstream NAT, the gateway's 10.233.N.0/24 without), e.g. "wifi"; log
  logs/cloudflow-PORT.log. flow_clients(n, name, port, ...): n long-lived
  tcpflow.py clients in the LAN namespace against it (each keeping one
  connection, with its own log logs/NAME-K.log and pause file; FlowClients,
  FlowClient); short_flows(count, port, sources, parallel): that many short
  connections from the LAN (tcpflow.py burst), one exchange each, run to their
  end: [ShortFlow] saying which upstream answered each.
- FailoverLab(lan_hosts=N): the LAN namespace holds N host addresses,
  192.168.77.2 .. 192.168.77.(N+1) (LAN_HOSTS; LAN_HOST2 is the second), as N LAN
  hosts look to the gateway; a client given `source` (flow_clients) or `sources`
  (short_flows) connects from them. The kernel's choice stays 192.168.77.2.
- reload_firewall(): what `systemctl reload nftables` does on a gateway whose
  /etc/nftables.conf holds the lab's own tables: ONE transaction that flushes the
  whole ruleset of gw (every table, another program's too) and loads the lab's
  masquerade and counters again (the counters start from zero).
- http_requests(iface) / probe_requests(iface): what each upstream's HTTP server
  logged; dns_queries(iface): what its dnsmasq logged.
- lan_client(): starts lanclient.py in the LAN namespace (LanClient).
- bursty_upload(): a UDP stream from the LAN host to 203.0.113.80:9000 (a
  datagram every 50 ms) whose answers come in bursts every 2 s (udpburst.py:
  a responder in every upstream, the sender in the LAN namespace; BurstyUpload).
- agent_config(), agent_hooks(): an uplinkd configuration with nothing but the
  per-uplink DNS servers (the agent's defaults otherwise) and the shipped
  route-failover hook wired to the repository's hook library (its settings file:
  FailoverLab.route_hook_conf, the hook's defaults unless a test writes to it).
- wait_settled(run, lab, timeout): an agentrun.AgentRun has every uplink online,
  eth0 primary, its hook lines caught up, the hook's table 7077 route through
  eth0 and `ip route get` through eth0.
"""

import json
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from agentrun import hook_runs_missing
from dnslab import DHCLIENT_SCRIPT
from inetserver import ENDPOINTS
from lab import (INTERNET_ADDR, NO_DAD, REPO_ROOT, Lab, LabError, missing_tools, read_log,
                 run, tool)

HERE = Path(__file__).resolve().parent
INETSERVER = HERE / "inetserver.py"
LANCLIENT = HERE / "lanclient.py"
TCPFLOW = HERE / "tcpflow.py"
DELAYRELAY = HERE / "delayrelay.py"
UDPBURST = HERE / "udpburst.py"
HOOKS = REPO_ROOT / "hooks"
HOOK_LIB = HOOKS / "lib" / "uplinkd-hook.sh"

LAN_GW, LAN_HOST, LAN_PREFIX = "192.168.77.1", "192.168.77.2", 24
# FailoverLab(lan_hosts=N): the first N of these are the LAN namespace's addresses.
MAX_LAN_HOSTS = 64
LAN_HOSTS = tuple(f"192.168.77.{i}" for i in range(2, 2 + MAX_LAN_HOSTS))
LAN_HOST2 = LAN_HOSTS[1]
INTERNET6_ADDR = "2001:db8:80::80"      # on every upstream's lo with FailoverLab(ipv6=True)
INTERNET6_NET = "2001:db8:80::/48"
# The route hook's (and the agent's) defaults: [agent] route-table, rule-priority
# (and the next one), route-protocol.
ROUTE_TABLE, RULE_PRIORITY, ROUTE_PROTOCOL = 7077, 32500, 77
LAN_IFACE_GW, LAN_IFACE_HOST = "lan0", "eth0"
DNS_TTL = 300
LEASE_TIME = "1h"
CUT_TABLE = "failoverlab_cut"
CUT6_TABLE = "failoverlab_cut6"
LOSS_TABLE = "failoverlab_loss"
DNS_CUT_TABLE = "failoverlab_dnscut"
COUNT_TABLE = "failoverlab_count"
NAT_TABLE = "failoverlab_nat"
UPSTREAM_NAT_TABLE = "failoverlab_cgnat"   # in each upstream (upstream_nat=True)
METERED_OPTION = "ANDROID_METERED"
TOOLS = ("dnsmasq", "nft")
# The built-in probes: name -> (host, path).
BUILTIN = {name: (host, path) for name, (host, path, *_rest) in ENDPOINTS.items()}
# FailoverLab(delays=): the relay namespace's ends of its two veths.
RELAY_GW_END, RELAY_UP_END = "dly-gw", "dly-up"
MAX_DELAY_MS = 5_000
UDP_BURST_PORT = 9000
COUNTER_KEYS = ("local_in", "local_out", "dns_in", "dns_out", "fwd_in", "fwd_out")

# Debian's stock /etc/dhcp/dhclient.conf request list (without the options it
# defines itself); option 43 is NOT asked for: a phone hotspot forces it.
DHCLIENT_CONF = """# uplinkd failover lab: what the gateway's dhclient asks for (Debian's list)
request subnet-mask, broadcast-address, time-offset, routers,
        domain-name, domain-name-servers, domain-search, host-name,
        interface-mtu, ntp-servers;
initial-interval 1;
backoff-cutoff 2;
"""


@dataclass(frozen=True)
class FailoverUplink:
    iface: str          # name in the gw namespace
    role: str           # upstream namespace role
    n: int              # 10.233.N.0/24
    kind: str           # what uplinkd should call it
    metric: int         # metric of its default route in gw (IPv4: FailoverLab(metrics=) changes it)
    metric6: int        # metric of its IPv6 default route in gw (FailoverLab(ipv6=True))

    @property
    def peer(self) -> str:
        return f"up-{self.iface}"

    @property
    def router(self) -> str:
        return f"10.233.{self.n}.1"

    @property
    def address(self) -> str:
        return f"10.233.{self.n}.2"

    @property
    def router6(self) -> str:
        return f"fd00:233:{self.n}::1"

    @property
    def address6(self) -> str:
        return f"fd00:233:{self.n}::2"


FAILOVER_UPLINKS = (
    FailoverUplink("eth0", "eth", 1, "ethernet", 100, 100),
    FailoverUplink("wlan0", "wifi", 2, "wifi", 200, 200),
    FailoverUplink("wwan0", "cell", 3, "wwan", 300, 300),
)
FAILOVER_ROLES = ("gw", "lan") + tuple(u.role for u in FAILOVER_UPLINKS)
# FailoverLab(cloud=True): a namespace behind every upstream, holding CLOUD_ADDR (a
# broker "on the internet", reached through whichever uplink carries the traffic).
CLOUD_ROLE = "cloud"
CLOUD_ADDR = "203.0.113.10"
FLOW_PORT = 5002                          # flow_server()'s default port (tcpflow.py's)


def check_delay(iface: str, ms, lowest: int):
    """ValueError unless ms is a whole number of ms in lowest..MAX_DELAY_MS."""
    if not isinstance(ms, int) or isinstance(ms, bool) or not lowest <= ms <= MAX_DELAY_MS:
        raise ValueError(f"delay of {iface}: {ms!r} is not a whole number of ms in {lowest}..{MAX_DELAY_MS}")


def unavailable_reason() -> Optional[str]:
    """What the failover lab needs beyond lab.unavailable_reason(), or None."""
    missing = missing_tools(TOOLS)
    if missing:
        return f"the failover lab needs {', '.join(missing)} (Debian: dnsmasq-base, nftables)"
    return None


def dhcp_unavailable_reason() -> Optional[str]:
    if missing_tools(("dhclient",)):
        return "DHCP in the failover lab needs ISC dhclient (Debian: isc-dhcp-client)"
    return None


def log_fields(path: Path, count: int, offset: int = 0) -> list:
    """The lines of a log (from byte `offset` on) split into fields, those with
    `count` fields only (a line still being written has fewer)."""
    return [f for f in map(str.split, read_log(path, offset).splitlines()) if len(f) == count]


@dataclass(frozen=True)
class Request:
    """One line of an upstream's HTTP server log."""
    t: float
    client: str
    host: str
    target: str
    status: str
    nbytes: int

    @property
    def is_lan(self) -> bool:
        return self.target.startswith("/lan/")


@dataclass(frozen=True)
class LanResult:
    """One line of the LAN client's log."""
    start: float
    end: float
    result: str
    upstream: str

    @property
    def ok(self) -> bool:
        return self.result == "ok"


class LanClient:
    """lanclient.py in the LAN namespace; its log parsed on demand."""

    def __init__(self, lb: "FailoverLab", log: Path, period=0.1, timeout=1.0, size=512, concurrent=False):
        self.lab, self.log = lb, log
        argv = [sys.executable, str(LANCLIENT), "--target", INTERNET_ADDR, "--period", str(period),
                "--timeout", str(timeout), "--size", str(size), "--log", str(log)]
        if concurrent:
            argv.append("--concurrent")
        self.proc = lb.procs.start_ready("lanclient", "lan", argv)

    def running(self) -> bool:
        return self.proc.running()

    def stop(self):
        self.lab.procs.stop(self.proc)

    def results(self, since: Optional[float] = None, until: Optional[float] = None):
        rs = [LanResult(float(f[0]), float(f[1]), f[2], f[3]) for f in log_fields(self.log, 4)]
        return [r for r in rs if (since is None or r.start >= since) and (until is None or r.start < until)]

    def flowing(self, via: Optional[str] = None, since: Optional[float] = None, count: int = 5) -> bool:
        """The last `count` requests (started after `since`) all ok, through
        upstream role `via` if given."""
        rs = self.results(since)
        last = rs[-count:]
        return len(last) == count and all(r.ok and (via is None or r.upstream == via) for r in last)

    def wait_flowing(self, via: Optional[str] = None, since: Optional[float] = None,
                     timeout: float = 20.0, count: int = 5):
        deadline = time.monotonic() + timeout
        while not self.flowing(via, since, count):
            if not self.running():
                raise LabError(f"LAN client exited\n{self.lab.procs.logs_text()}")
            if time.monotonic() >= deadline:
                tail = self.results()[-12:]
                raise LabError(f"LAN traffic not flowing{f' through {via}' if via else ''} within "
                               f"{timeout}s; last requests: "
                               + ", ".join(f"{r.result}/{r.upstream}" for r in tail))
            time.sleep(0.05)

    def outage(self, cut: float, via: str):
        """(last ok answer before `cut`, first ok answer through `via` started
        after `cut`) as end times, either None when not seen."""
        rs = self.results()
        before = [r.end for r in rs if r.ok and r.start < cut]
        after = [r.end for r in rs if r.ok and r.start >= cut and r.upstream == via]
        return (max(before) if before else None, min(after) if after else None)

    def failures(self, since: Optional[float] = None, until: Optional[float] = None):
        return [r for r in self.results(since, until) if not r.ok]


class BurstyUpload:
    """udpburst.py: a responder in every upstream (answering in bursts), the
    sender in the LAN namespace; its log of replies parsed on demand."""

    def __init__(self, lb: "FailoverLab", name: str, every: float, burst: int, period: float, size: int):
        self.lab, self.log = lb, lb.dir / "logs" / f"{name}.log"
        self.responders = [lb.procs.start_ready(
            f"{name}-responder-{u.iface}", u.role,
            [sys.executable, str(UDPBURST), "responder", "--bind", INTERNET_ADDR, "--port", str(UDP_BURST_PORT),
             "--role", u.role, "--every", str(every), "--burst", str(burst)]) for u in lb.uplinks]
        self.sender = lb.procs.start_ready(
            f"{name}-sender", "lan",
            [sys.executable, str(UDPBURST), "sender", "--target", INTERNET_ADDR, "--port", str(UDP_BURST_PORT),
             "--period", str(period), "--size", str(size), "--log", str(self.log)])

    def running(self) -> bool:
        return self.sender.running() and all(p.running() for p in self.responders)

    def stop(self):
        for proc in [self.sender, *self.responders]:
            self.lab.procs.stop(proc)

    def replies(self, since: Optional[float] = None):
        """(time, upstream role) of every reply the sender received (after `since`)."""
        rows = [(float(f[0]), f[2]) for f in log_fields(self.log, 4) if f[1] == "reply"]
        return [r for r in rows if since is None or r[0] >= since]


@dataclass(frozen=True)
class FlowEvent:
    """One line of a tcpflow.py client's log (see tcpflow.py): `answer` (UPSTREAM
    the role that answered), `connected`, `paused`/`resumed`, or how the
    connection ended (`reset`, `timeout`, `closed`, `refused`, ...)."""
    t: float
    connection: int
    event: str
    upstream: str

    @property
    def ended(self) -> bool:
        """The line says the connection failed (the client opens a new one)."""
        return self.event not in ("answer", "connected", "paused", "resumed")


@dataclass(frozen=True)
class ShortFlow:
    """One connection of a burst (short_flows): its end, number, the source
    address asked for ("-": the kernel's), and how it went (event "answer" with
    the upstream role that answered, or how it failed)."""
    t: float
    number: int
    source: str
    event: str
    upstream: str

    @property
    def ok(self) -> bool:
        return self.event == "answer"


class FlowClient:
    """One tcpflow.py client in the LAN namespace keeping one connection to the
    cloud's flow server (a LAN host's SSH session or VPN tunnel); its log parsed
    on demand."""

    def __init__(self, lb: "FailoverLab", name: str, port: int, period: float, timeout: float,
                 source: Optional[str]):
        self.lab, self.name = lb, name
        self.log = lb.dir / "logs" / f"{name}.log"
        self.pause_file = lb.dir / "run" / f"{name}.pause"
        argv = [sys.executable, str(TCPFLOW), "client", "--log", str(self.log), "--target", CLOUD_ADDR,
                "--port", str(port), "--period", str(period), "--timeout", str(timeout),
                "--pause-file", str(self.pause_file)]
        if source:
            argv += ["--source", source]
        self.proc = lb.procs.start_ready(name, "lan", argv)

    def running(self) -> bool:
        return self.proc.running()

    def stop(self):
        self.lab.procs.stop(self.proc)

    def events(self, since: Optional[float] = None) -> list:
        evs = [FlowEvent(float(f[0]), int(f[1]), f[2], f[3]) for f in log_fields(self.log, 4)]
        return [e for e in evs if since is None or e.t >= since]

    def answers(self, via: Optional[str] = None, since: Optional[float] = None,
                connection: Optional[int] = None) -> list:
        return [e for e in self.events(since) if e.event == "answer" and (via is None or e.upstream == via)
                and (connection is None or e.connection == connection)]

    def connection_at(self, t: float) -> Optional[int]:
        """The connection that last answered before time t (None if none had)."""
        before = [e for e in self.answers() if e.t < t]
        return before[-1].connection if before else None

    def end_of(self, connection: int) -> Optional[FlowEvent]:
        """The line that ended `connection` (reset, timeout, ...), None while it lives."""
        return next((e for e in self.events() if e.connection == connection and e.ended), None)

    def pause(self):
        """From its next period on the client sends nothing (an idle session); its
        `paused` line says when it noticed."""
        self.pause_file.write_text("paused\n")

    def resume(self):
        self.pause_file.unlink(missing_ok=True)

    def tail(self, count: int = 6) -> str:
        return f"{self.name}: " + ", ".join(f"{e.connection}/{e.event}/{e.upstream}" for e in self.events()[-count:])


class FlowClients(list):
    """The clients of one flow_clients() call (a list of FlowClient), with one
    bounded wait for all of them."""

    def wait_all(self, predicate, timeout: float, what: str):
        """Wait until predicate(client) holds for every client; LabError naming
        the clients still short of it (their latest events) at the deadline, or
        when one of them exited."""
        deadline = time.monotonic() + timeout
        while True:
            short = [c for c in self if not predicate(c)]
            if not short:
                return
            gone = [c.name for c in self if not c.running()]
            if gone or time.monotonic() >= deadline:
                why = f"clients exited: {gone}" if gone else f"not within {timeout}s"
                raise LabError(f"{what}: {len(short)} of {len(self)} clients, {why}; latest events:\n  "
                               + "\n  ".join(c.tail() for c in short[:6]))
            time.sleep(0.05)

    def stop(self):
        for c in self:
            c.stop()


class FailoverLab(Lab):
    """The topology above. Context manager; destroy() is idempotent.

    dhcp: uplinks addressed by DHCP (dnsmasq in their upstream, ISC dhclient in
    gw; their DNS server then comes from the lease, not from the configuration);
    metered_dhcp: those of them whose DHCP server sends option 43
    "ANDROID_METERED". The others have static addresses and routes.
    metrics: {iface: metric} of IPv4 default routes other than the class's
    (100, 200, 300). ipv6: IPv6 on every (static) uplink, see the module doc.
    delays: {iface: one-way delay in ms} through a relay namespace (module doc)."""

    roles = FAILOVER_ROLES
    uplinks = FAILOVER_UPLINKS
    namespace_sysctls = Lab.namespace_sysctls + NO_DAD

    def __init__(self, dhcp=(), metered_dhcp=(), wait_timeout: float = 40.0,
                 metrics: Optional[dict] = None, ipv6: bool = False, delays: Optional[dict] = None,
                 cloud: bool = False, upstream_nat: bool = False, lan_hosts: int = 1):
        if upstream_nat and not cloud:
            raise ValueError("upstream_nat=True is NAT toward the cloud: it needs cloud=True")
        if not isinstance(lan_hosts, int) or not 1 <= lan_hosts <= MAX_LAN_HOSTS:
            raise ValueError(f"lan_hosts: {lan_hosts!r} is not a whole number in 1..{MAX_LAN_HOSTS}")
        self.upstream_nat = upstream_nat
        self.lan_hosts = LAN_HOSTS[:lan_hosts]
        delays = dict(delays or {})
        by_iface = {u.iface: u for u in FAILOVER_UPLINKS}
        unknown = set(delays) - set(by_iface)
        if unknown:
            raise ValueError(f"delays for interfaces the lab does not have: {sorted(unknown)}")
        for iface, ms in delays.items():
            check_delay(iface, ms, lowest=1)
        self.delays = delays
        # One relay namespace per delayed uplink (set before Lab names the namespaces).
        self.relay_roles = {iface: f"rly{by_iface[iface].n}" for iface in sorted(delays)}
        self.cloud = cloud
        extra = tuple(self.relay_roles.values()) + ((CLOUD_ROLE,) if cloud else ())
        if extra:
            self.roles = FAILOVER_ROLES + extra
        super().__init__()
        self.dhcp = tuple(dhcp)
        self.metered_dhcp = tuple(metered_dhcp)
        if set(self.metered_dhcp) - set(self.dhcp):
            raise ValueError("metered_dhcp must be a subset of dhcp")
        metrics = dict(metrics or {})
        unknown = set(metrics) - {u.iface for u in FAILOVER_UPLINKS}
        if unknown:
            raise ValueError(f"metrics for interfaces the lab does not have: {sorted(unknown)}")
        self.uplinks = tuple(replace(u, metric=metrics.get(u.iface, u.metric)) for u in FAILOVER_UPLINKS)
        self.ipv6 = ipv6
        if ipv6 and self.dhcp:
            raise ValueError("ipv6=True is for static uplinks only")
        self.wait_timeout = wait_timeout
        self._make_files("failover", ("logs", "leases", "run", "scripts"))
        self.lease_dir = self.dir / "leases"
        self.dnsmasq = {}                     # iface -> LabProcess
        self.http = {}                        # iface -> LabProcess
        self.http6 = {}                       # iface -> LabProcess (ipv6=True)
        self.relays = {}                      # iface -> LabProcess (delays=)
        self.flow_servers = {}                # port -> LabProcess (flow_server())
        self._flow_names = {}                 # name -> how many flow_clients() calls used it
        self.route_hook_conf = self.dir / "route-failover.conf"
        self.marks = {}                       # log sizes right after build

    # -- build / destroy -----------------------------------------------------------
    def _make(self):
        self._make_namespaces()
        self._make_uplinks()
        self._make_cloud()
        self._start_relays()
        self._make_lan()
        self._make_nftables()
        self._start_dnsmasqs()
        self._start_http()
        self._start_dhclients()
        self.wait_ready(self.wait_timeout)
        self.marks = {u.iface: (self.dns_log_size(u.iface), self.http_log_size(u.iface))
                      for u in self.uplinks}

    def destroy(self):
        super().destroy()                     # programs, namespaces, files
        self.dnsmasq.clear()
        self.http.clear()
        self.http6.clear()
        self.relays.clear()
        self.flow_servers.clear()

    def _make_namespaces(self):
        super()._make_namespaces()
        if self.ipv6:
            for u in self.uplinks:
                self.ip(u.role, "-6", "addr", "add", f"{INTERNET6_ADDR}/128", "dev", "lo", "nodad")

    def _add_veth(self, u):
        """Without a delay, Lab's veth straight to the upstream; with one, gw's end
        is a veth to the relay namespace, and a second veth joins the relay to the
        upstream (u.peer), both relay ends up, promiscuous, without IPv6 (the relay
        namespace itself never sends a packet of its own)."""
        relay = self.relay_roles.get(u.iface)
        if relay is None:
            super()._add_veth(u)
            return
        self._sysctl(relay, "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
        self.ip("gw", "link", "add", u.iface, "type", "veth", "peer", "name", RELAY_GW_END, "netns", self.ns[relay])
        self.ip(relay, "link", "add", RELAY_UP_END, "type", "veth", "peer", "name", u.peer, "netns", self.ns[u.role])
        for end in (RELAY_GW_END, RELAY_UP_END):
            self.ip(relay, "link", "set", end, "promisc", "on", "up")

    def peer_of(self, iface: str):
        """(role, interface) of the far end of gw's veth: the relay's, for a delayed uplink."""
        relay = self.relay_roles.get(iface)
        return (relay, RELAY_GW_END) if relay else super().peer_of(iface)

    def _start_relays(self):
        for iface, relay in self.relay_roles.items():
            self.wait_lower_up(RELAY_UP_END, True, role=relay)
            self.relays[iface] = self.procs.start_ready(
                f"delayrelay-{iface}", relay,
                [sys.executable, str(DELAYRELAY), "--a", RELAY_GW_END, "--b", RELAY_UP_END,
                 "--delay-ms", str(self.delays[iface]), "--delay-file", str(self.delay_file(iface)),
                 "--log", str(self.dir / "logs" / f"delayrelay-{iface}.counts")])

    def delay_file(self, iface: str) -> Path:
        return self.dir / "run" / f"delay-{iface}"

    def set_delay(self, iface: str, ms: int):
        """A delayed uplink's one-way delay from now on (the relay reads it within
        100 ms); set_delay(iface, lab.delays[iface]) puts the built one back."""
        if iface not in self.relay_roles:
            raise ValueError(f"{iface} has no delay relay (FailoverLab(delays=...))")
        check_delay(iface, ms, lowest=0)
        path = self.delay_file(iface)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(f"{ms}\n")
        os.replace(tmp, path)

    def _make_uplinks(self):
        for u in self.uplinks:
            self._add_veth(u)
            self.ip(u.role, "addr", "add", f"{u.router}/24", "dev", u.peer)
            if self.ipv6:
                self.ip(u.role, "-6", "addr", "add", f"{u.router6}/64", "dev", u.peer, "nodad")
            self.ip(u.role, "link", "set", u.peer, "up")
            if u.iface not in self.dhcp:
                self.ip("gw", "addr", "add", f"{u.address}/24", "dev", u.iface)
            if self.ipv6:
                self.ip("gw", "-6", "addr", "add", f"{u.address6}/64", "dev", u.iface, "nodad")
            self.ip("gw", "link", "set", u.iface, "up")
        for u in self.uplinks:
            self.wait_lower_up(u.iface, True)
            if u.iface not in self.dhcp:
                self.ip("gw", "-4", "route", "add", "default", "via", u.router,
                        "dev", u.iface, "metric", str(u.metric))
            if self.ipv6:
                self.ip("gw", "-6", "route", "add", "default", "via", u.router6,
                        "dev", u.iface, "metric", str(u.metric6))

    def _make_cloud(self):
        if not self.cloud:
            return
        self.ip(CLOUD_ROLE, "addr", "add", f"{CLOUD_ADDR}/32", "dev", "lo")
        for u in self.uplinks:
            upstream, cloud = f"10.234.{u.n}.1", f"10.234.{u.n}.2"
            self.ip(u.role, "link", "add", f"cl{u.n}", "type", "veth", "peer", "name", f"up{u.n}",
                    "netns", self.ns[CLOUD_ROLE])
            self.ip(u.role, "addr", "add", f"{upstream}/30", "dev", f"cl{u.n}")
            self.ip(CLOUD_ROLE, "addr", "add", f"{cloud}/30", "dev", f"up{u.n}")
            self.ip(u.role, "link", "set", f"cl{u.n}", "up")
            self.ip(CLOUD_ROLE, "link", "set", f"up{u.n}", "up")
            self._sysctl(u.role, "net.ipv4.ip_forward=1")
            self.ip(u.role, "route", "add", f"{CLOUD_ADDR}/32", "via", cloud)
            self.ip(CLOUD_ROLE, "route", "add", f"10.233.{u.n}.0/24", "via", upstream)
        if self.upstream_nat:
            self.set_upstream_nat(True)

    def set_upstream_nat(self, on: bool = True):
        """Every upstream masquerades (on) or stops masquerading what it forwards
        toward the cloud (the module doc, upstream_nat). Connections forwarded
        across the change meet the new rule: a switch ends them, as a provider
        changing its NAT would."""
        if not self.cloud:
            raise ValueError("upstream NAT is NAT toward the cloud: it needs FailoverLab(cloud=True)")
        for u in self.uplinks:
            run(self.exec_argv(u.role, ["nft", "delete", "table", "ip", UPSTREAM_NAT_TABLE]), check=False)
            if on:
                ruleset = (f"table ip {UPSTREAM_NAT_TABLE} {{\n"
                           f"  chain postrouting {{ type nat hook postrouting priority srcnat; policy accept;\n"
                           f"    oifname \"cl{u.n}\" masquerade\n  }}\n}}\n")
                run(self.exec_argv(u.role, ["nft", "-f", "-"]), input=ruleset)
        self.upstream_nat = on

    def upstream_nat_address(self, iface: str) -> str:
        """The address iface's upstream shows the cloud (10.234.N.1)."""
        return f"10.234.{self.uplink(iface).n}.1"

    def _make_lan(self):
        self.ip("gw", "link", "add", LAN_IFACE_GW, "type", "veth",
                "peer", "name", LAN_IFACE_HOST, "netns", self.ns["lan"])
        self.ip("gw", "addr", "add", f"{LAN_GW}/{LAN_PREFIX}", "dev", LAN_IFACE_GW)
        self.ip("lan", "addr", "add", f"{LAN_HOST}/{LAN_PREFIX}", "dev", LAN_IFACE_HOST)
        if len(self.lan_hosts) > 1:
            # Secondary addresses of the same prefix: the kernel keeps choosing
            # LAN_HOST unless a socket binds another one.
            self.ip_batch("lan", [f"addr add {a}/{LAN_PREFIX} dev {LAN_IFACE_HOST}" for a in self.lan_hosts[1:]])
        self.ip("gw", "link", "set", LAN_IFACE_GW, "up")
        self.ip("lan", "link", "set", LAN_IFACE_HOST, "up")
        self.wait_lower_up(LAN_IFACE_GW, True)
        self.ip("lan", "route", "add", "default", "via", LAN_GW)
        self._sysctl("gw", "net.ipv4.ip_forward=1")

    def _make_nftables(self):
        run(self.exec_argv("gw", ["nft", "-f", "-"]), input=self.nftables_script())

    def nftables_script(self) -> str:
        """The lab's own nftables tables in gw (masquerade out of every uplink, the
        counters), as one `nft -f` script."""
        names = ", ".join(f'"{u.iface}"' for u in self.uplinks)
        nat = (f"table ip {NAT_TABLE} {{\n"
               f"  chain postrouting {{ type nat hook postrouting priority srcnat; policy accept;\n"
               f"    oifname {{ {names} }} masquerade\n  }}\n}}\n")
        counters, inp, out, fwd = [], [], [], []
        for u in self.uplinks:
            i = u.iface
            counters += [f"  counter {i}_{k} {{ }}\n" for k in COUNTER_KEYS]
            inp += [f'    meta nfproto ipv4 iifname "{i}" counter name "{i}_local_in"\n',
                    f'    meta nfproto ipv4 iifname "{i}" meta l4proto {{ udp, tcp }} th sport 53 '
                    f'counter name "{i}_dns_in"\n']
            out += [f'    meta nfproto ipv4 oifname "{i}" counter name "{i}_local_out"\n',
                    f'    meta nfproto ipv4 oifname "{i}" meta l4proto {{ udp, tcp }} th dport 53 '
                    f'counter name "{i}_dns_out"\n']
            fwd += [f'    meta nfproto ipv4 iifname "{i}" counter name "{i}_fwd_in"\n',
                    f'    meta nfproto ipv4 oifname "{i}" counter name "{i}_fwd_out"\n']
        count = (f"table inet {COUNT_TABLE} {{\n" + "".join(counters)
                 + "  chain input { type filter hook input priority -300; policy accept;\n"
                 + "".join(inp) + "  }\n"
                 + "  chain output { type filter hook output priority -300; policy accept;\n"
                 + "".join(out) + "  }\n"
                 + "  chain forward { type filter hook forward priority -300; policy accept;\n"
                 + "".join(fwd) + "  }\n}\n")
        return nat + count

    def reload_firewall(self):
        """`flush ruleset` and the lab's own tables again, in one transaction (the
        module doc): every other table in gw is gone, the LAN's NAT never is."""
        run(self.exec_argv("gw", ["nft", "-f", "-"]), input="flush ruleset\n" + self.nftables_script())

    # -- dnsmasq --------------------------------------------------------------------
    def dnsmasq_log(self, iface: str) -> Path:
        return self.dir / "logs" / f"dnsmasq-{iface}.log"

    def _start_dnsmasqs(self):
        for u in self.uplinks:
            log = self.dnsmasq_log(u.iface)
            log.touch()
            argv = [tool("dnsmasq"), "--keep-in-foreground", "--conf-file=/dev/null",
                    "--no-resolv", "--no-hosts", "--no-poll", "--bind-interfaces",
                    f"--listen-address={u.router}",
                    f"--pid-file={self.dir / 'run' / f'dnsmasq-{u.iface}.pid'}",
                    f"--log-facility={log}", "--log-queries", "--log-dhcp",
                    f"--local-ttl={DNS_TTL}", "--local=/#/"]
            answer = f"{INTERNET_ADDR},{INTERNET6_ADDR}" if self.ipv6 else INTERNET_ADDR
            argv += [f"--host-record={host},{answer}" for host, _path in BUILTIN.values()]
            if u.iface in self.dhcp:
                argv += [f"--dhcp-leasefile={self.dir / 'run' / f'dnsmasq-{u.iface}.leases'}",
                         "--dhcp-authoritative",
                         f"--dhcp-range={u.address},{u.address},255.255.255.0,{LEASE_TIME}",
                         f"--dhcp-option=option:router,{u.router}",
                         f"--dhcp-option=option:dns-server,{u.router}"]
                if u.iface in self.metered_dhcp:
                    argv.append(f"--dhcp-option-force=43,{METERED_OPTION}")
            self.dnsmasq[u.iface] = self.procs.start(f"dnsmasq-{u.iface}", u.role, argv)

    # -- HTTP --------------------------------------------------------------------------
    def http_log(self, iface: str) -> Path:
        return self.dir / "logs" / f"http-{iface}.log"

    def http6_log(self, iface: str) -> Path:
        return self.dir / "logs" / f"http6-{iface}.log"

    def block_file(self, iface: str) -> Path:
        return self.dir / "run" / f"blocked-{iface}"

    def portal_file(self, iface: str) -> Path:
        return self.dir / "run" / f"portal-{iface}"

    def captive(self, iface: str, on: bool = True):
        """iface's upstream answers every built-in endpoint with a redirect to its
        login page (a venue's Wi-Fi before login), from the next request on;
        on=False: the portal is gone (logged in)."""
        self.uplink(iface)
        if on:
            self.portal_file(iface).write_text("captive\n")
        else:
            self.portal_file(iface).unlink(missing_ok=True)

    def _start_http(self):
        for u in self.uplinks:
            self.http[u.iface] = self.procs.start_ready(
                f"inetserver-{u.iface}", u.role,
                [sys.executable, str(INETSERVER), "--role", u.role, "--log", str(self.http_log(u.iface)),
                 "--block-file", str(self.block_file(u.iface)), "--portal-file", str(self.portal_file(u.iface))])
            if self.ipv6:
                self.http6[u.iface] = self.procs.start_ready(
                    f"inetserver6-{u.iface}", u.role,
                    [sys.executable, str(INETSERVER), "--role", u.role, "--bind", INTERNET6_ADDR,
                     "--log", str(self.http6_log(u.iface)), "--block-file", str(self.block_file(u.iface)),
                     "--portal-file", str(self.portal_file(u.iface))])

    def block(self, iface: str, *names: str):
        """iface's upstream leaves requests for these built-in endpoints (apple,
        google, firefox, microsoft, debian) unanswered, from the next request on;
        block(iface) with no names unblocks."""
        unknown = set(names) - set(BUILTIN)
        if unknown:
            raise ValueError(f"not built-in endpoints: {sorted(unknown)}")
        path = self.block_file(iface)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(f"{n}\n" for n in names))
        os.replace(tmp, path)

    @contextmanager
    def blocked(self, iface: str, *names: str):
        self.block(iface, *names)
        try:
            yield
        finally:
            self.block(iface)

    # -- DHCP ----------------------------------------------------------------------------
    def lease_file(self, iface: str) -> Path:
        return self.lease_dir / f"dhclient.{iface}.leases"

    def _start_dhclients(self):
        if not self.dhcp:
            return
        conf = self.dir / "scripts" / "dhclient.conf"
        conf.write_text(DHCLIENT_CONF)
        for iface in self.dhcp:
            u = self.uplink(iface)
            name = f"dhclient-{iface}"
            script = self.dir / "scripts" / name
            script.write_text(DHCLIENT_SCRIPT.replace("@IFACE@", iface)
                              .replace("@METRIC@", str(u.metric))
                              .replace("@EVENTS@", str(self.dir / "logs" / f"{name}.events")))
            os.chmod(script, 0o755)
            self.procs.start(name, "gw", [tool("dhclient"), "-4", "-d", "-v", "-cf", conf,
                                          "-lf", self.lease_file(iface),
                                          "-pf", self.dir / "run" / f"{name}.pid", "-sf", script, iface])

    # -- readiness -----------------------------------------------------------------------
    def _missing(self, u: FailoverUplink) -> Optional[str]:
        if u.iface in self.dhcp:
            if not any(a["family"] == "inet" and a["local"] == u.address for a in self.addresses(u.iface)):
                return f"DHCP address {u.address}"
            routes = json.loads(self.ip("gw", "-4", "-j", "route", "show", "default", "dev", u.iface).stdout)
            if not any(r.get("gateway") == u.router for r in routes):
                return f"default route via {u.router}"
            text = self.lease_file(u.iface).read_text() if self.lease_file(u.iface).exists() else ""
            if "domain-name-servers" not in text:
                return f"{self.lease_file(u.iface).name} with domain-name-servers"
        host, path = BUILTIN["google"]
        answer = self.dns_query(u.iface, host, timeout=0.5)
        if answer.get("answers") != [INTERNET_ADDR]:
            return f"DNS answer for {host} through {u.iface}: {answer}"
        got = self.http_get(u.iface, path, timeout=1.0)
        if got.get("status") != 204:
            return f"HTTP {path} through {u.iface}: {got}"
        if self.ipv6:
            answer = self.dns_query(u.iface, host, "AAAA", timeout=0.5)
            if answer.get("answers") != [INTERNET6_ADDR]:
                return f"DNS AAAA answer for {host} through {u.iface}: {answer}"
            got = self.http_get(u.iface, path, timeout=1.0, address=INTERNET6_ADDR)
            if got.get("status") != 204:
                return f"HTTP [{INTERNET6_ADDR}]{path} through {u.iface}: {got}"
        return None

    def wait_ready(self, timeout: float):
        """Wait (bounded) until every uplink has its address and route, its DNS
        answers and its HTTP server answers through it."""
        self.wait_uplinks(self._missing, timeout, "failover lab not ready", period=0.2)

    # -- looking at the lab --------------------------------------------------------------
    def dns_query(self, iface: Optional[str], name: str, qtype: str = "A",
                  server: Optional[str] = None, timeout: float = 2.0) -> dict:
        """One DNS query from gw, bound to `iface`, to its router (or `server`)."""
        server = server or self.uplink(iface).router
        return self.nettool("gw", ["dns", server, name, "--type", qtype, "--timeout", str(timeout)],
                            timeout, dev=iface)

    def http_get(self, iface: Optional[str], path: str, role: str = "gw", timeout: float = 2.0,
                 address: str = INTERNET_ADDR) -> dict:
        """One HTTP/1.0 GET to 203.0.113.80 (or `address`) from `role`, bound to
        `iface` if given."""
        return self.nettool(role, ["http", address, path, "--timeout", str(timeout)], timeout,
                            dev=iface)

    def http_log_size(self, iface: str) -> int:
        try:
            return self.http_log(iface).stat().st_size
        except FileNotFoundError:
            return 0

    def dns_log_size(self, iface: str) -> int:
        return self.dnsmasq_log(iface).stat().st_size

    def http_requests(self, iface: str, since: Optional[float] = None, offset: Optional[int] = None):
        """Requests the HTTP server of iface's upstream logged (after the lab was
        built, or after byte `offset` of its log), started at or after `since`."""
        if offset is None:
            offset = self.marks.get(iface, (0, 0))[1]
        rs = [Request(float(f[0]), f[1], f[2], f[3], f[4], int(f[5]))
              for f in log_fields(self.http_log(iface), 6, offset)]
        return [r for r in rs if since is None or r.t >= since]

    def probe_requests(self, iface: str, since: Optional[float] = None, offset: Optional[int] = None):
        """The gateway's own requests (not the LAN client's) at iface's upstream."""
        return [r for r in self.http_requests(iface, since, offset) if not r.is_lan]

    def dns_queries(self, iface: str, offset: Optional[int] = None):
        """(qtype, name) of each query iface's dnsmasq logged (after the lab was
        built, or after byte `offset` of its log)."""
        if offset is None:
            offset = self.marks.get(iface, (0, 0))[0]
        out = []
        for line in read_log(self.dnsmasq_log(iface), offset).splitlines():
            i = line.find("query[")
            if i >= 0:
                qtype, _, rest = line[i + 6:].partition("] ")
                out.append((qtype, rest.split(" ", 1)[0]))
        return out

    def route_get(self, dest: str = INTERNET_ADDR, *selectors: str, role: str = "gw") -> str:
        """`ip route get DEST SELECTORS...` in `role` (IPv6 for an IPv6 DEST): its
        output line ("" when the kernel has no route)."""
        family = "-6" if ":" in dest else "-4"
        done = self.ip(role, family, "route", "get", dest, *selectors, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    def route_dev(self, role: str = "gw", dest: str = INTERNET_ADDR, *selectors: str) -> str:
        """The device `role` routes `dest` (the lab internet address) through,
        given `ip route get` selectors ("from", LAN_HOST, "iif", "lan0": a packet
        forwarded from the LAN; "oif", "wlan0": a socket bound to wlan0); "" when
        it has no route."""
        out = self.route_get(dest, *selectors, role=role).split()
        return out[out.index("dev") + 1] if "dev" in out else ""

    def owned_routes(self, family: int = 4) -> str:
        return owned_routes(self, family)

    def owned_table(self, family: int = 4) -> list:
        return owned_table(self, family)

    def owned_rules(self, family: int = 4) -> list:
        return owned_rules(self, family)

    def main_table_owned(self, family: int = 4) -> str:
        return main_table_owned(self, family)

    def clear_routing(self):
        clear_routing(self)

    def counters(self) -> dict:
        """{iface: {key: (packets, bytes)}} of the nftables counters in gw
        (keys: local_in, local_out, dns_in, dns_out, fwd_in, fwd_out)."""
        out = run(self.exec_argv("gw", ["nft", "-j", "list", "counters", "table", "inet", COUNT_TABLE])).stdout
        result = {u.iface: {} for u in self.uplinks}
        for item in json.loads(out).get("nftables", []):
            c = item.get("counter")
            if not c:
                continue
            iface, _, key = c["name"].partition("_")
            if iface in result and key in COUNTER_KEYS:
                result[iface][key] = (c["packets"], c["bytes"])
        return result

    # -- changing the upstreams ----------------------------------------------------------
    def cut(self, iface: str):
        """iface's upstream drops everything to and from 203.0.113.0/24 and
        2001:db8:80::/48 (carrier stays up; DNS on the router address still answers)."""
        ruleset = (f"table inet {CUT_TABLE} {{\n"
                   f"  chain input {{ type filter hook input priority -200; policy accept;\n"
                   f"    ip daddr 203.0.113.0/24 drop\n    ip6 daddr {INTERNET6_NET} drop\n  }}\n"
                   f"  chain output {{ type filter hook output priority -200; policy accept;\n"
                   f"    ip saddr 203.0.113.0/24 drop\n    ip6 saddr {INTERNET6_NET} drop\n  }}\n"
                   f"  chain forward {{ type filter hook forward priority -200; policy accept;\n"
                   f"    ip daddr 203.0.113.0/24 drop\n    ip saddr 203.0.113.0/24 drop\n  }}\n}}\n")
        run(self.exec_argv(self.uplink(iface).role, ["nft", "-f", "-"]), input=ruleset)

    def break_ipv6(self, iface: str):
        """iface's upstream drops everything to and from 2001:db8:80::/48 (its IPv4
        and DNS keep working)."""
        ruleset = (f"table inet {CUT6_TABLE} {{\n"
                   f"  chain input {{ type filter hook input priority -200; policy accept;\n"
                   f"    ip6 daddr {INTERNET6_NET} drop\n  }}\n"
                   f"  chain output {{ type filter hook output priority -200; policy accept;\n"
                   f"    ip6 saddr {INTERNET6_NET} drop\n  }}\n}}\n")
        run(self.exec_argv(self.uplink(iface).role, ["nft", "-f", "-"]), input=ruleset)

    def mend_ipv6(self, iface: str):
        run(self.exec_argv(self.uplink(iface).role, ["nft", "delete", "table", "inet", CUT6_TABLE]),
            check=False)

    def restore(self, iface: str):
        run(self.exec_argv(self.uplink(iface).role, ["nft", "delete", "table", "inet", CUT_TABLE]),
            check=False)

    def is_cut(self, iface: str) -> bool:
        out = run(self.exec_argv(self.uplink(iface).role, ["nft", "list", "tables"])).stdout
        return CUT_TABLE in out

    def dns_cut(self, iface: str):
        """iface's upstream resolver (dnsmasq on the router address) stops answering:
        queries to port 53 are dropped, everything else passes."""
        ruleset = (f"table inet {DNS_CUT_TABLE} {{\n"
                   f"  chain input {{ type filter hook input priority -200; policy accept;\n"
                   f"    meta l4proto {{ udp, tcp }} th dport 53 drop\n  }}\n}}\n")
        run(self.exec_argv(self.uplink(iface).role, ["nft", "-f", "-"]), input=ruleset)

    def dns_restore(self, iface: str):
        run(self.exec_argv(self.uplink(iface).role, ["nft", "delete", "table", "inet", DNS_CUT_TABLE]),
            check=False)

    def lossy(self, iface: str, percent: int):
        """iface's upstream drops `percent` % of the packets it receives and of those
        it sends, each at random (nftables numgen), whatever they are: DNS, probes,
        forwarded LAN traffic. ARP is not IP and passes."""
        if not 0 <= percent <= 100:
            raise ValueError(f"loss percent {percent} out of 0..100")
        ruleset = (f"table inet {LOSS_TABLE} {{\n"
                   f"  chain input {{ type filter hook input priority -190; policy accept;\n"
                   f"    counter\n    numgen random mod 100 < {percent} counter drop\n  }}\n"
                   f"  chain output {{ type filter hook output priority -190; policy accept;\n"
                   f"    counter\n    numgen random mod 100 < {percent} counter drop\n  }}\n}}\n")
        self.lossless(iface)
        run(self.exec_argv(self.uplink(iface).role, ["nft", "-f", "-"]), input=ruleset)

    def lossless(self, iface: str):
        run(self.exec_argv(self.uplink(iface).role, ["nft", "delete", "table", "inet", LOSS_TABLE]),
            check=False)

    def loss_counts(self, iface: str) -> dict:
        """Packets the loss rules saw and dropped so far, per direction of the
        upstream: {"input": (seen, dropped), "output": (seen, dropped)}."""
        out = run(self.exec_argv(self.uplink(iface).role,
                                 ["nft", "-j", "list", "table", "inet", LOSS_TABLE]), check=False).stdout
        counts = {}
        try:
            for item in json.loads(out).get("nftables", []):
                rule = item.get("rule")
                if rule:
                    exprs = rule.get("expr", [])
                    packets = next((e["counter"]["packets"] for e in exprs if "counter" in e), 0)
                    seen, dropped = counts.get(rule["chain"], (0, 0))
                    if any("drop" in e for e in exprs):
                        dropped = packets
                    else:
                        seen = packets
                    counts[rule["chain"]] = (seen, dropped)
        except ValueError:
            pass
        return counts

    @contextmanager
    def cut_off(self, iface: str):
        self.cut(iface)
        try:
            yield
        finally:
            self.restore(iface)

    def lan_client(self, period=0.1, timeout=1.0, size=512, name="lanclient", concurrent=False) -> LanClient:
        return LanClient(self, self.dir / "logs" / f"{name}.log", period, timeout, size, concurrent)

    # -- TCP flows to the cloud (cloud=True) ----------------------------------------------
    def flow_server_log(self, port: int = FLOW_PORT) -> Path:
        return self.dir / "logs" / f"cloudflow-{port}.log"

    def flow_server(self, port: int = FLOW_PORT):
        """tcpflow.py serve on CLOUD_ADDR:port in the cloud, started once per port
        (flow_clients and short_flows start it themselves): every line is answered
        with the role of the upstream the answer goes back through, by the source
        address the server sees (module doc)."""
        if not self.cloud:
            raise ValueError("the flow server is in the cloud: it needs FailoverLab(cloud=True)")
        if port not in self.flow_servers:
            roles = []
            for u in self.uplinks:
                roles += ["--role-of", f"10.234.{u.n}.0/30={u.role}", "--role-of", f"10.233.{u.n}.0/24={u.role}"]
            self.flow_servers[port] = self.procs.start_ready(
                f"cloudflow-{port}", CLOUD_ROLE,
                [sys.executable, str(TCPFLOW), "serve", "--role", CLOUD_ROLE, "--bind", CLOUD_ADDR,
                 "--port", str(port), "--log", str(self.flow_server_log(port)), *roles])
        return self.flow_servers[port]

    def flow_server_peers(self, port: int = FLOW_PORT) -> list:
        """(time, peer address) of every connection the cloud's server on `port`
        accepted, oldest first."""
        return [(float(f[0]), f[2]) for f in log_fields(self.flow_server_log(port), 3) if f[1] == "accepted"]

    def _flow_name(self, name: str) -> str:
        """`name` the first time, then NAME.2, NAME.3, ...: each flow_clients() call
        its own clients' names and logs."""
        count = self._flow_names.get(name, 0) + 1
        self._flow_names[name] = count
        return name if count == 1 else f"{name}.{count}"

    def flow_clients(self, count: int, name: str = "flow", port: int = FLOW_PORT, period: float = 0.1,
                     timeout: float = 1.0, source: Optional[str] = None) -> FlowClients:
        """`count` tcpflow.py clients in the LAN namespace (NAME-1 .. NAME-count, each
        a process with its own log), each keeping one connection to the cloud's
        server on `port`: a line every `period` s, at most `timeout` s for its
        answer (a long one lets only the network end a connection: a reset), from
        LAN address `source` (the kernel's choice, LAN_HOST, if None)."""
        if source is not None and source not in self.lan_hosts:
            raise ValueError(f"{source} is not one of the LAN's addresses {self.lan_hosts}")
        self.flow_server(port)
        base = self._flow_name(name)
        return FlowClients(FlowClient(self, f"{base}-{k}", port, period, timeout, source)
                           for k in range(1, count + 1))

    def short_flows(self, count: int, name: str = "short", port: int = FLOW_PORT, sources=None,
                    parallel: int = 4, timeout: float = 1.0, deadline: Optional[float] = None) -> list:
        """`count` short connections from the LAN to the cloud's server on `port`
        (tcpflow.py burst: one line each way, closed by the client), `parallel` at a
        time, from the LAN addresses `sources` in turn (the kernel's choice if
        None); returns when all have ended: [ShortFlow] in the order they ended
        (every burst of one `name` appends to logs/NAME.log; this one's lines are
        returned). No new one is started after `deadline` s (default: room for
        every one to succeed, plus 30 s), so a broken path costs a bounded time
        and fewer results."""
        sources = list(sources or [])
        unknown = [a for a in sources if a not in self.lan_hosts]
        if unknown:
            raise ValueError(f"{unknown} are not LAN addresses {self.lan_hosts}")
        self.flow_server(port)
        log = self.dir / "logs" / f"{name}.log"
        offset = log.stat().st_size if log.exists() else 0
        if deadline is None:
            deadline = 30.0 + count * 0.02
        argv = [sys.executable, str(TCPFLOW), "burst", "--log", str(log), "--count", str(count),
                "--target", CLOUD_ADDR, "--port", str(port), "--timeout", str(timeout),
                "--parallel", str(parallel), "--deadline", str(deadline)]
        for a in sources:
            argv += ["--source", a]
        done = run(self.exec_argv("lan", argv), timeout=deadline + timeout + 30)
        if not done.stdout.startswith("done "):
            raise LabError(f"tcpflow.py burst said {done.stdout!r}: {done.stderr}")
        return [ShortFlow(float(f[0]), int(f[1]), f[2], f[3], f[4]) for f in log_fields(log, 5, offset)]

    def bursty_upload(self, every=2.0, burst=4, period=0.05, size=200, name="udpburst") -> BurstyUpload:
        """A UDP upload from the LAN host (a `size`-byte datagram every `period` s)
        answered only every `every` s, with `burst` datagrams at once (udpburst.py)."""
        return BurstyUpload(self, name, every, burst, period, size)

    # -- the agent's configuration and hooks ------------------------------------------------
    def agent_config(self, interfaces: Optional[dict] = None, sections: Optional[dict] = None) -> str:
        """An uplinkd.conf that leaves every setting at its default except the
        per-uplink DNS servers (`[interface X] dns = ROUTER` for static uplinks;
        DHCP uplinks' servers come from their lease, `[dns] dhclient-leases`
        names the lab's lease directory). interfaces: {iface: {key: value}} added
        to `[interface iface]`; sections: {"agent": {...}, "kind wwan": {...}}
        (a value None drops a key)."""
        secs = {}
        for name, keys in (sections or {}).items():
            secs.setdefault(name, {}).update(keys)
        if self.dhcp:
            secs.setdefault("dns", {}).setdefault("dhclient-leases", str(self.lease_dir))
        for u in self.uplinks:
            keys = {} if u.iface in self.dhcp else {"dns": u.router}
            keys.update((interfaces or {}).get(u.iface, {}))
            secs.setdefault(f"interface {u.iface}", {}).update(keys)
        lines = ["# written by failoverlab.py: built-in probes, defaults except the per-uplink DNS"]
        for name, keys in secs.items():
            keys = {k: v for k, v in keys.items() if v is not None}
            if not keys:
                continue
            lines += ["", f"[{name}]"] + [f"{k} = {v}" for k, v in keys.items()]
        return "\n".join(lines) + "\n"

    def route_hook(self) -> str:
        """A hook for the agent's hooks directory running the SHIPPED
        hooks/50-route-failover with the repository's hook library and an empty
        settings file of the lab's own (so /etc/uplinkd is never read)."""
        conf = self.route_hook_conf
        if not conf.exists():
            conf.write_text("# failover lab: the hook's defaults\n")
        return (f"#!/bin/sh\nUPLINKD_HOOK_LIB='{HOOK_LIB}' UPLINKD_ROUTE_FAILOVER_CONF='{conf}' "
                f"exec '{HOOKS / '50-route-failover'}'\n")

    def agent_hooks(self) -> dict:
        """{name: body} for AgentRun(hooks=...): the shipped route-failover hook
        (AgentRun adds the recording hook 10-record, which runs first)."""
        return {"50-route-failover": self.route_hook()}


# -- the route hook's routing entries in any lab's gw namespace (lab.Lab too) ----------

def owned_routes(lb: Lab, family: int = 4) -> str:
    """The routes of the route hook's table 7077 (`ip route show table 7077`), ""
    when it holds none (or does not exist yet)."""
    done = lb.ip("gw", f"-{family}", "route", "show", "table", str(ROUTE_TABLE), check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def owned_table(lb: Lab, family: int = 4) -> list:
    """Table 7077 as (destination, gateway, device, protocol) tuples, one a route."""
    done = lb.ip("gw", f"-{family}", "-j", "route", "show", "table", str(ROUTE_TABLE), check=False)
    routes = json.loads(done.stdout or "[]") if done.returncode == 0 else []
    return [(r.get("dst"), r.get("gateway"), r.get("dev"), str(r.get("protocol"))) for r in routes]


def owned_rules(lb: Lab, family: int = 4) -> list:
    """The gateway's rules of routing protocol 77, as `ip -j rule` objects."""
    rules = json.loads(lb.ip("gw", f"-{family}", "-j", "rule", "show").stdout or "[]")
    return [r for r in rules if str(r.get("protocol")) == str(ROUTE_PROTOCOL)]


def rules_as_contracted(rules: list) -> bool:
    """Exactly the hook's two rules: RULE_PRIORITY looking up main with
    suppress_prefixlength 0, the next priority looking up ROUTE_TABLE."""
    got = sorted((r.get("priority"), str(r.get("table")), r.get("suppress_prefixlen")) for r in rules)
    return got == [(RULE_PRIORITY, "main", 0), (RULE_PRIORITY + 1, str(ROUTE_TABLE), None)]


def main_table_owned(lb: Lab, family: int = 4) -> str:
    """Routes of protocol 77 in the main table: the old hook's copies (there must be none)."""
    return lb.ip("gw", f"-{family}", "route", "show", "table", "main", "proto",
                 str(ROUTE_PROTOCOL)).stdout.strip()


def clear_routing(lb: Lab):
    """Removes every rule of protocol 77 and empties table 7077, both families
    (a test leaves a shared lab as it found it)."""
    for family in (4, 6):
        for rule in owned_rules(lb, family):
            lb.ip("gw", f"-{family}", "rule", "del", "pref", str(rule["priority"]), check=False)
        lb.ip("gw", f"-{family}", "route", "flush", "table", str(ROUTE_TABLE), check=False)


# -- waiting for an agent (an agentrun.AgentRun) in the lab -------------------------------

def settled_hooks(primary: str = "eth0", online=("eth0", "wlan0", "wwan0")) -> list:
    """The hook runs (agentrun.AgentRun.wait_hooks items, latest=True) of a state
    where the uplinks `online` are online and `primary` is primary."""
    return [("verdict", i, "online") for i in online] + [("primary", primary)]


def hooks_caught_up(run, primary: str = "eth0", online=("eth0", "wlan0", "wwan0")) -> bool:
    """The recording hook's log has caught up with a state where the uplinks
    `online` are online and `primary` is primary (hooks run after the state file
    is written, one at a time)."""
    return not hook_runs_missing(run.events(), settled_hooks(primary, online), latest=True)


def wait_settled(run, lb: FailoverLab, timeout: float, primary: str = "eth0",
                 online=("eth0", "wlan0", "wwan0")):
    """Wait (bounded; AgentError with the run's transcript) until the state file
    says `online` are online and `primary` is primary, the hook log has caught
    up, the route-failover hook's table 7077 route goes through `primary`, and
    so does the gateway's route to the lab internet address (`ip route get`)."""
    def state_ok(st):
        return st["primary"] == primary and all(
            st["uplinks"].get(i, {}).get("verdict") == "online" for i in online)
    run.wait_state(state_ok, timeout, f"primary {primary}, {' '.join(online)} online")
    run.wait_hooks(settled_hooks(primary, online), timeout, latest=True,
                   what=f"hook lines caught up (primary {primary}, {' '.join(online)} online)")
    run.wait_until(lambda: hooks_caught_up(run, primary, online)
                   and f"dev {primary} " in lb.owned_routes() + " " and lb.route_dev() == primary,
                   timeout, f"hook lines caught up (primary {primary}) and the route through {primary}")
    return run.state()


if __name__ == "__main__":
    # Build the lab, print where things are, wait for Enter, tear down.
    with FailoverLab() as lb:
        print(f"gw namespace: {lb.gw}\nlan namespace: {lb.ns['lan']}\nfiles: {lb.dir}")
        print(lb.agent_config())
        input("Enter to destroy the lab> ")
