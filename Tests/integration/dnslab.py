"""Per-uplink DNS and IPv6 lab for the uplinkd integration tests (test_dns.py).

Same scheme as lab.py (namespaces "ul<pid>-<seq>-<role>", veth pairs, swept when
their creator died), but every upstream namespace also runs dnsmasq, and the
gateway's uplinks get their addresses and DNS servers the way a real gateway
does: from DHCP clients (ISC dhclient, busybox udhcpc) running in the gateway
namespace, or from explicit configuration.

        gateway namespace "gw": uplinkd, dhclient x3, udhcpc x2
        IPv4 default routes: eth0 m100 < wlan0 m200 < wwan0 m300 < wlan1 m400 < eth2 m500
        IPv6 default routes: from router advertisements, eth2 m500 < wwan1 m1024
        /etc/resolv.conf (via /etc/netns/GW/): nameserver 203.0.113.53, the lab's
        "public resolver", reached through the preferred route (eth0)
    +---------------------------------------------------------------------------------+
    | eth0          wlan0         wwan0          wlan1          wwan1         eth2
    | dhclient -4   udhcpc        static         udhcpc         dhclient -6   dhclient -4/-6
    | .1.2          .2.2          .3.2           .4.2           5::2          .6.2, 6::2
    +---|-------------|-------------|--------------|--------------|-------------|------+
    +---|------+ +----|-------+ +---|--------+ +---|--------+ +---|--------+ +--|---------+
    | "inet"   | | "portal"   | | "wwan"     | | "nodns"    | | "v6"       | | "dual"     |
    | .1.1     | | .2.1       | | .3.1       | | .4.1       | | 5::1       | | .6.1, 6::1 |
    | DHCP+DNS | | DHCP+DNS   | | DNS only   | | DHCP only; | | DHCPv6+RA  | | DHCP,DHCPv6|
    | honest   | | hijacks:   | | honest     | | option 6 = | | +DNS,      | | RA, DNS    |
    | +resolver| | probe ->   | | (config:   | | .4.1, where| | honest     | | honest     |
    | .113.53  | | 10.231.2.1 | |  dns=.3.1) | | nothing    | |            | |            |
    |          | | (302 login | |            | | answers 53 | |            | |            |
    |          | | page there)| |            | |            | |            | |            |
    | HTTP v4  | | HTTP v4    | | HTTP v4    | | HTTP v4    | | HTTP v6    | | HTTP v4    |
    | internet | | internet   | | internet   | | internet   | | internet   | | only (v6:  |
    |          | |            | |            | |            | |            | | refused)   |
    +----------+ +------------+ +------------+ +------------+ +------------+ +------------+
    (.N.M = 10.231.N.M/24;  N::M = 2001:db8:231:N::M, /64 upstream, /128 lease)
    Every upstream namespace has 203.0.113.80/32 and 2001:db8:ffff::80/128 on lo.

DNS answers (dnsmasq --addn-hosts, switchable at run time with records()):
honest upstreams answer probe.uplinkd.test with 203.0.113.80 and
2001:db8:ffff::80 and known.uplinkd.test with 203.0.113.99; the portal answers
both names with its own private address 10.231.2.1 (where its login page
answers with a 302) while HTTP to 203.0.113.80 through it works (a portal that
only hijacks DNS). Names outside .test are never forwarded anywhere
(--no-resolv, no --server, --local=/test/).

The preferred IPv4 default route is eth0, and the gateway namespace's system
resolver is the "public resolver" 203.0.113.53 behind it (its own dnsmasq and
log): an uplinkd that used the system resolver would see eth0's honest answers
on every uplink and nothing at all once eth0's upstream is dead, which is
exactly what the per-uplink resolution must not do. resolver_queries() shows
whether anything asked it.

Files of one lab live in a temporary directory (DnsLab.dir): leases/ (dhclient
lease files, for uplinkd's `[dns] dhclient-leases`), resolvconf/ (what the
udhcpc script writes, Debian resolvconf style: IFACE.udhcpc with nameserver
lines, for `[dns] resolvconf-dir`), logs/ (dnsmasq, clients, HTTP servers),
scripts/ (the test-owned client scripts: they only add or remove addresses and
routes on their own interface inside the gateway namespace and never touch
/etc/resolv.conf).
"""

import json
import os
import re
import shutil
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from lab import (ETC_NETNS, INTERNET_ADDR, NFT_TABLE, NO_DAD, Lab, LabError,
                 missing_tools, read_log, run, tool)

INTERNET6_ADDR = "2001:db8:ffff::80"
RESOLVER_ADDR = "203.0.113.53"          # the lab's "public resolver", in "inet"
OFFLINK_ADDR = "198.51.100.53"          # an honest resolver behind wwan0's gateway, not on its subnet
PROBE_NAME = "probe.uplinkd.test"
KNOWN_NAME = "known.uplinkd.test"
KNOWN_ADDR = "203.0.113.99"
LEASE_TIME = "1h"                       # no renewal during a test run
TOOLS = ("dnsmasq", "dhclient", "udhcpc", "nft")


@dataclass(frozen=True)
class DnsUplink:
    iface: str                 # name inside the gw namespace
    role: str                  # upstream namespace role
    addressing: str            # "dhclient" (-4 and/or -6), "udhcpc", "static"
    v4: Optional[str]          # "10.231.1": upstream .1/24, gateway .2/24
    v6: Optional[str]          # "2001:db8:231:5": upstream ::1/64, gateway ::2/128
    metric: Optional[int]      # IPv4 default route metric (IPv6: from the RA)
    dns: str                   # "honest", "hijack", "dead" (DHCP names a server that never answers)
    http6: bool = True         # the upstream serves HTTP on [2001:db8:ffff::80]:80
    metric6: int = 1024        # metric of the IPv6 default route the RA gives (ra_defrtr_metric)

    @property
    def peer(self) -> str:
        return f"up-{self.iface}"

    @property
    def up4(self) -> Optional[str]:
        return f"{self.v4}.1" if self.v4 else None

    @property
    def gw4(self) -> Optional[str]:
        return f"{self.v4}.2" if self.v4 else None

    @property
    def up6(self) -> Optional[str]:
        return f"{self.v6}::1" if self.v6 else None

    @property
    def gw6(self) -> Optional[str]:
        return f"{self.v6}::2" if self.v6 else None

    @property
    def dns_servers(self) -> list:
        """The servers its DHCP (or configuration) names, IPv4 first."""
        return [a for a in (self.up4, self.up6) if a]


DNS_UPLINKS = (
    DnsUplink("eth0", "inet", "dhclient", "10.231.1", None, 100, "honest"),
    DnsUplink("wlan0", "portal", "udhcpc", "10.231.2", None, 200, "hijack"),
    DnsUplink("wwan0", "wwan", "static", "10.231.3", None, 300, "honest"),
    DnsUplink("wlan1", "nodns", "udhcpc", "10.231.4", None, 400, "dead"),
    DnsUplink("wwan1", "v6", "dhclient", None, "2001:db8:231:5", None, "honest"),
    DnsUplink("eth2", "dual", "dhclient", "10.231.6", "2001:db8:231:6", 500, "honest",
              http6=False, metric6=500),
)
DNS_UPLINK_BY_IFACE = {u.iface: u for u in DNS_UPLINKS}
DNS_ROLES = ("gw",) + tuple(u.role for u in DNS_UPLINKS)


def honest_records() -> dict:
    return {PROBE_NAME: [INTERNET_ADDR, INTERNET6_ADDR], KNOWN_NAME: [KNOWN_ADDR]}


def default_records(u: DnsUplink) -> dict:
    if u.dns == "hijack":
        return {PROBE_NAME: [u.up4], KNOWN_NAME: [u.up4]}
    return honest_records()


def hosts_text(records: dict) -> str:
    lines = ["# written by dnslab.py (dnsmasq --addn-hosts)"]
    for name, addrs in records.items():
        lines += [f"{a} {name}" for a in addrs]
    return "\n".join(lines) + "\n"


def unavailable_reason() -> Optional[str]:
    """Why the DNS lab cannot run here (besides lab.unavailable_reason()), or None."""
    missing = missing_tools(TOOLS)
    if missing:
        return (f"the DNS lab needs {', '.join(missing)} (Debian: dnsmasq-base, "
                f"isc-dhcp-client, udhcpc, nftables)")
    return None


# --- test-owned DHCP client scripts -------------------------------------------
# They run inside the gw namespace (the clients do) and only touch their own
# interface's addresses and routes; the IFACE check refuses anything else.

DHCLIENT_SCRIPT = r"""#!/bin/sh
# uplinkd DNS lab: dhclient -sf script for @IFACE@ (never touches /etc/resolv.conf;
# the DNS servers stay in the lease file, where uplinkd reads them).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
[ "$interface" = "@IFACE@" ] || { echo "refusing interface '$interface'" >&2; exit 1; }
echo "$(date +%s.%N) $reason" >> '@EVENTS@'
case "$reason" in
    PREINIT|PREINIT6)
        ip link set dev "$interface" up
        ;;
    BOUND|RENEW|REBIND|REBOOT)
        ip -4 addr replace "$new_ip_address/$new_subnet_mask" dev "$interface"
        set -- $new_routers
        [ -n "$1" ] && ip -4 route replace default via "$1" dev "$interface" metric @METRIC@
        ;;
    EXPIRE|FAIL|RELEASE|STOP)
        ip -4 route del default dev "$interface" 2>/dev/null
        [ -n "$old_ip_address" ] && ip -4 addr del "$old_ip_address/$old_subnet_mask" dev "$interface" 2>/dev/null
        ;;
    BOUND6|RENEW6|REBIND6|REBOOT6)
        [ -n "$new_ip6_address" ] && ip -6 addr replace "$new_ip6_address/$new_ip6_prefixlen" dev "$interface" nodad
        ;;
    EXPIRE6|RELEASE6|STOP6)
        [ -n "$old_ip6_address" ] && ip -6 addr del "$old_ip6_address/$old_ip6_prefixlen" dev "$interface" 2>/dev/null
        ;;
esac
exit 0
"""

# Mimics Debian's /etc/udhcpc/default.script with resolvconf installed: the
# "resolvconf -a IFACE.udhcpc" record (same text, leading empty line included)
# lands in RESOLVCONF_DIR/IFACE.udhcpc, written atomically.
UDHCPC_SCRIPT = r"""#!/bin/sh
# uplinkd DNS lab: udhcpc -s script for @IFACE@ (never touches /etc/resolv.conf).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
[ "$interface" = "@IFACE@" ] || { echo "refusing interface '$interface'" >&2; exit 1; }
RECORD='@RESOLVCONF_DIR@'/"$interface.udhcpc"
echo "$(date +%s.%N) $1" >> '@EVENTS@'
case "$1" in
    deconfig)
        ip link set dev "$interface" up
        ip -4 addr flush dev "$interface"
        ip -4 route flush dev "$interface"
        rm -f "$RECORD"
        ;;
    bound|renew)
        ip -4 addr replace "$ip/$subnet" dev "$interface"
        router="${router%% *}"
        [ -n "$router" ] && ip -4 route replace default via "$router" dev "$interface" metric @METRIC@
        [ -n "$domain" ] && R="domain $domain" || R=""
        for i in $dns; do
            R="$R
nameserver $i"
        done
        echo "$R" > "$RECORD.tmp" && mv -f "$RECORD.tmp" "$RECORD"
        ;;
    leasefail|nak)
        ;;
esac
exit 0
"""

DHCLIENT_CONF = """# uplinkd DNS lab: what the gateway's dhclient asks for
request subnet-mask, broadcast-address, routers, domain-name, domain-name-servers,
        dhcp6.name-servers, dhcp6.domain-search;
initial-interval 1;
backoff-cutoff 2;
"""

_QUERY_RE = re.compile(r"query\[(\w+)\] (\S+) from (\S+)")


class DnsLab(Lab):
    """The DNS/IPv6 topology above. Context manager; destroy() is idempotent."""

    roles = DNS_ROLES
    uplinks = DNS_UPLINKS
    namespace_sysctls = Lab.namespace_sysctls + NO_DAD

    def __init__(self, wait_timeout: float = 40.0):
        super().__init__()
        self.wait_timeout = wait_timeout
        # dnsmasq re-reads its hosts file (hosts/) unprivileged.
        self._make_files("dns", ("leases", "resolvconf", "logs", "run", "scripts", "hosts"))
        self.lease_dir = self.dir / "leases"
        self.resolvconf_dir = self.dir / "resolvconf"
        self.netns_etc = Path(ETC_NETNS) / self.ns["gw"]
        self.netns_resolv_conf: Optional[Path] = None
        self._made_etc_netns = False
        self.dnsmasq: dict = {}             # role -> LabProcess ("resolver" for 203.0.113.53)
        self.http: dict = {}                # role -> LabServer
        self.records_now: dict = {}         # role -> {name: [addresses]}
        self.metric6: dict = {}             # iface -> RA route metric, if changed
        self.built_marks: dict = {}         # dnsmasq name -> log size when built

    # -- build / destroy ---------------------------------------------------
    def _make(self):
        self._make_namespaces()
        self._make_links()
        self._make_system_resolver()
        self._start_dnsmasqs()
        self._start_http()
        self._start_clients()
        self.wait_configured(self.wait_timeout)
        # The lab's own readiness queries are before these marks.
        self.built_marks = {name: self.dns_log_size(name) for name in self.dnsmasq}

    def destroy(self):
        super().destroy()                   # programs, labservers, namespaces, files
        self.http.clear()
        self.dnsmasq.clear()
        if self.netns_resolv_conf is not None:
            shutil.rmtree(self.netns_etc, ignore_errors=True)
            self.netns_resolv_conf = None
            if self._made_etc_netns:
                try:
                    os.rmdir(ETC_NETNS)         # only if empty (another lab may use it)
                except OSError:
                    pass

    def _make_namespaces(self):
        super()._make_namespaces()
        for u in self.uplinks:
            self.ip(u.role, "-6", "addr", "add", f"{INTERNET6_ADDR}/128", "dev", "lo", "nodad")
        self.ip("inet", "addr", "add", f"{RESOLVER_ADDR}/32", "dev", "lo")
        self.ip("wwan", "addr", "add", f"{OFFLINK_ADDR}/32", "dev", "lo")

    def _make_links(self):
        for u in self.uplinks:
            self._add_veth(u)
            if u.v6:
                # Router advertisements give the IPv6 default route (forwarding is
                # off in the namespace, but 2 says it without depending on that).
                # Each uplink's RA default route gets its own metric, as
                # NetworkManager or systemd-networkd give per link (the kernel's
                # default is 1024 for all): set_ra_metric() can make them equal.
                self._sysctl("gw", f"net.ipv6.conf.{u.iface}.accept_ra=2",
                             f"net.ipv6.conf.{u.iface}.autoconf=0",
                             f"net.ipv6.conf.{u.iface}.ra_defrtr_metric={u.metric6}")
            if u.up4:
                self.ip(u.role, "addr", "add", f"{u.up4}/24", "dev", u.peer)
            if u.up6:
                self.ip(u.role, "-6", "addr", "add", f"{u.up6}/64", "dev", u.peer, "nodad")
                # The upstream is the IPv6 default router: with forwarding on for
                # this interface its neighbour advertisements carry the router flag.
                # Without it the gateway's kernel drops the RA's default route at
                # the first neighbour probe (RFC 4861 7.2.5, IsRouter true -> false)
                # and gets it back at the next RA: a flapping route. Packets are
                # still never forwarded: net.ipv6.conf.all.forwarding stays 0.
                self._sysctl(u.role, f"net.ipv6.conf.{u.peer}.forwarding=1")
            self.ip(u.role, "link", "set", u.peer, "up")
            if u.addressing == "static":
                self.ip("gw", "addr", "add", f"{u.gw4}/24", "dev", u.iface)
            self.ip("gw", "link", "set", u.iface, "up")
        for u in self.uplinks:
            self.wait_lower_up(u.iface, True)
            if u.addressing == "static":
                self.ip("gw", "route", "add", "default", "via", u.up4,
                        "dev", u.iface, "metric", str(u.metric))

    def _make_system_resolver(self):
        """/etc/netns/GW/resolv.conf: `ip netns exec GW` bind-mounts it over
        /etc/resolv.conf, so nothing run in the gateway namespace (uplinkd, the DHCP
        clients) can see or change the host's file; it names the lab's public
        resolver behind the preferred route."""
        try:
            self._made_etc_netns = not Path(ETC_NETNS).exists()
            self.netns_etc.mkdir(parents=True, exist_ok=True)
            path = self.netns_etc / "resolv.conf"
            path.write_text(f"# uplinkd DNS lab {self.ns['gw']}: the lab's public resolver\n"
                            f"nameserver {RESOLVER_ADDR}\n")
            self.netns_resolv_conf = path
        except OSError as exc:
            raise LabError(f"cannot create {self.netns_etc}/resolv.conf: {exc}")

    # -- dnsmasq -----------------------------------------------------------
    def hosts_file(self, role: str) -> Path:
        return self.dir / "hosts" / role

    def dnsmasq_log(self, role: str) -> Path:
        return self.dir / "logs" / f"dnsmasq-{role}.log"

    def _dnsmasq(self, name: str, role: str, listen, extra, interface=None):
        log = self.dnsmasq_log(name)
        log.touch()
        argv = [tool("dnsmasq"), "--keep-in-foreground", "--conf-file=/dev/null",
                "--no-resolv", "--no-hosts", "--no-poll", "--bind-interfaces",
                f"--pid-file={self.dir / 'run' / f'dnsmasq-{name}.pid'}",
                f"--log-facility={log}", "--log-queries", "--log-dhcp",
                "--local=/test/", *[f"--listen-address={a}" for a in listen], *extra]
        if interface:
            # Router advertisements go out only on --interface interfaces (a
            # --listen-address alone gives DHCPv6 but no RA); --bind-interfaces
            # and --except-interface=lo keep DNS on this interface's addresses.
            argv += [f"--interface={interface}", "--except-interface=lo"]
        self.dnsmasq[name] = self.procs.start(f"dnsmasq-{name}", role, argv)

    def _start_dnsmasqs(self):
        for u in self.uplinks:
            extra = []
            listen = [a for a in (u.up4, u.up6) if a]
            if u.dns == "dead":
                # DHCP only; option 6 names the router, where nothing answers port 53.
                extra.append("--port=0")
            else:
                self.records_now[u.role] = default_records(u)
                self.hosts_file(u.role).write_text(hosts_text(self.records_now[u.role]))
                os.chmod(self.hosts_file(u.role), 0o644)
                extra.append(f"--addn-hosts={self.hosts_file(u.role)}")
            if u.addressing in ("dhclient", "udhcpc"):
                extra += [f"--dhcp-leasefile={self.dir / 'run' / f'dnsmasq-{u.role}.leases'}",
                          "--dhcp-authoritative"]
                if u.v4:
                    extra += [f"--dhcp-range={u.gw4},{u.gw4},255.255.255.0,{LEASE_TIME}",
                              f"--dhcp-option=option:router,{u.up4}",
                              f"--dhcp-option=option:dns-server,{u.up4}"]
                if u.v6:
                    # RA: M flag (addresses from DHCPv6), the /64 on-link, every
                    # 10 s, router lifetime 1800 s given explicitly (dnsmasq may
                    # otherwise advertise 0 when it has no default route itself).
                    extra += [f"--dhcp-range={u.gw6},{u.gw6},64,{LEASE_TIME}", "--enable-ra",
                              f"--ra-param={u.peer},10,1800",
                              f"--dhcp-option=option6:dns-server,[{u.up6}]"]
            self._dnsmasq(u.role, u.role, listen, extra, interface=u.peer if u.v6 else None)
        self.records_now["resolver"] = honest_records()
        self.hosts_file("resolver").write_text(hosts_text(self.records_now["resolver"]))
        os.chmod(self.hosts_file("resolver"), 0o644)
        self._dnsmasq("resolver", "inet", [RESOLVER_ADDR],
                      [f"--addn-hosts={self.hosts_file('resolver')}"])
        # Reached only through wwan0's default route: a query socket that is bound to
        # wwan0 only after connect() would have been routed (and sourced) via eth0.
        self._dnsmasq("offlink", "wwan", [OFFLINK_ADDR], [f"--addn-hosts={self.hosts_file('resolver')}"])
        # Ready when each DNS server answers from inside its own namespace.
        deadline = time.monotonic() + 15
        pending = {u.role: (u.role, u.up4 or u.up6) for u in self.uplinks if u.dns != "dead"}
        pending["resolver"] = ("inet", RESOLVER_ADDR)
        pending["offlink"] = ("wwan", OFFLINK_ADDR)
        while pending:
            for name, (role, server) in list(pending.items()):
                if not self.dnsmasq[name].running():
                    raise LabError(f"dnsmasq {name} exited with {self.dnsmasq[name].popen.returncode}"
                                   f"\n{self.procs.logs_text()}")
                if self.dns_query(None, server, PROBE_NAME, role=role, timeout=0.5).get("answers"):
                    del pending[name]
            if pending and time.monotonic() > deadline:
                raise LabError(f"dnsmasq not answering: {sorted(pending)}\n{self.procs.logs_text()}")
        for name, proc in self.dnsmasq.items():
            if not proc.running():
                raise LabError(f"dnsmasq {name} exited\n{self.procs.logs_text()}")

    # -- HTTP --------------------------------------------------------------
    def http_log(self, role: str) -> Path:
        return self.dir / "logs" / f"http-{role}.log"

    def _start_http(self):
        for u in self.uplinks:
            if u.v4:
                self.http[u.role] = self.serve(u.role, "internet", self.http_log(u.role))
            elif u.http6:
                self.http[u.role] = self.serve(u.role, "internet", self.http_log(u.role),
                                               bind=INTERNET6_ADDR)
            if u.dns == "hijack":
                # Where the hijacked names lead: the portal's own login page (a 302).
                self.http[f"{u.role}-login"] = self.serve(
                    u.role, "portal-302", self.http_log(f"{u.role}-login"), bind=u.up4)

    # -- DHCP clients ------------------------------------------------------
    def lease_file(self, iface: str, family: int = 4) -> Path:
        return self.lease_dir / f"dhclient{'6' if family == 6 else ''}.{iface}.leases"

    def resolvconf_file(self, iface: str) -> Path:
        return self.resolvconf_dir / f"{iface}.udhcpc"

    def events_file(self, name: str) -> Path:
        return self.dir / "logs" / f"{name}.events"

    def _script(self, name: str, template: str, u: DnsUplink) -> Path:
        path = self.dir / "scripts" / name
        text = (template.replace("@IFACE@", u.iface)
                .replace("@METRIC@", str(u.metric or 1024))
                .replace("@RESOLVCONF_DIR@", str(self.resolvconf_dir))
                .replace("@EVENTS@", str(self.events_file(name))))
        path.write_text(text)
        os.chmod(path, 0o755)
        return path

    def _has_link_local(self, iface: str) -> bool:
        return any(a["family"] == "inet6" and a.get("scope") == "link"
                   and not a.get("tentative") for a in self.addresses(iface))

    def _start_clients(self):
        conf = self.dir / "scripts" / "dhclient.conf"
        conf.write_text(DHCLIENT_CONF)
        # dhclient -6 exits at once ("no link-local IPv6 address") if started too early.
        deadline = time.monotonic() + 10
        for u in self.uplinks:
            while u.v6 and not self._has_link_local(u.iface):
                if time.monotonic() >= deadline:
                    raise LabError(f"{u.iface}: no IPv6 link-local address: "
                                   f"{self.addresses(u.iface)}")
                time.sleep(0.05)
        for u in self.uplinks:
            if u.addressing == "dhclient":
                for fam in (4, 6):
                    if (fam == 4 and not u.v4) or (fam == 6 and not u.v6):
                        continue
                    name = f"dhclient{'6' if fam == 6 else ''}-{u.iface}"
                    script = self._script(name, DHCLIENT_SCRIPT, u)
                    self.procs.start(name, "gw", [
                        tool("dhclient"), f"-{fam}", "-d", "-v",
                        "-cf", conf, "-lf", self.lease_file(u.iface, fam),
                        "-pf", self.dir / "run" / f"{name}.pid", "-sf", script, u.iface])
            elif u.addressing == "udhcpc":
                name = f"udhcpc-{u.iface}"
                script = self._script(name, UDHCPC_SCRIPT, u)
                self.procs.start(name, "gw", [
                    tool("udhcpc"), "-f", "-i", u.iface, "-s", script,
                    "-p", self.dir / "run" / f"{name}.pid", "-t", "30", "-T", "1", "-A", "1"])

    def missing_config(self, u: DnsUplink) -> Optional[str]:
        """None when the uplink has its addresses, routes and DNS record, else
        what is still missing."""
        addrs = self.addresses(u.iface)
        if u.v4 and not any(a["family"] == "inet" and a["local"] == u.gw4 for a in addrs):
            return f"IPv4 address {u.gw4}"
        if u.v6 and not any(a["family"] == "inet6" and a["local"] == u.gw6
                            and not a.get("tentative") for a in addrs):
            return f"IPv6 address {u.gw6}"
        if u.v4:
            routes = json.loads(self.ip("gw", "-4", "-j", "route", "show", "default",
                                        "dev", u.iface).stdout)
            if not any(r.get("gateway") == u.up4 for r in routes):
                return f"IPv4 default route via {u.up4}"
        if u.v6 and self.ra_metric(u.iface) != self.metric6.get(u.iface, u.metric6):
            return (f"IPv6 default route (router advertisement) with metric "
                    f"{self.metric6.get(u.iface, u.metric6)}")
        if u.addressing == "dhclient":
            for fam, key in ((4, "domain-name-servers"), (6, "dhcp6.name-servers")):
                if (fam == 4 and not u.v4) or (fam == 6 and not u.v6):
                    continue
                path = self.lease_file(u.iface, fam)
                text = path.read_text() if path.exists() else ""
                if f'interface "{u.iface}"' not in text or key not in text:
                    return f"{path.name} with {key}"
        if u.addressing == "udhcpc":
            path = self.resolvconf_file(u.iface)
            if not path.exists() or "nameserver" not in path.read_text():
                return f"{path.name} with a nameserver line"
        return None

    def wait_configured(self, timeout: float):
        """Wait (bounded) until every uplink has what its DHCP client or the lab
        configuration gives it."""
        self.wait_uplinks(self.missing_config, timeout, "uplinks not configured")

    # -- looking at the lab ------------------------------------------------
    def dns_query(self, iface: Optional[str], server: str, name: str, qtype: str = "A",
                  role: str = "gw", timeout: float = 2.0) -> dict:
        """One DNS query from namespace `role` (default gw), bound to `iface`."""
        return self.nettool(role, ["dns", server, name, "--type", qtype, "--timeout", str(timeout)],
                            timeout, dev=iface)

    def http_get(self, iface: Optional[str], address: str, path: str = "/generate_204",
                 role: str = "gw", timeout: float = 2.0) -> dict:
        """One HTTP GET to address:80 from namespace `role`, bound to `iface`."""
        return self.nettool(role, ["http", address, path, "--timeout", str(timeout)], timeout, dev=iface)

    def system_resolve(self, name: str) -> dict:
        """getaddrinfo(name) in the gateway namespace (its /etc/resolv.conf)."""
        return self.nettool("gw", ["getaddrinfo", name], 10)

    def dns_queries(self, role: str, offset: Optional[int] = None) -> list:
        """(qtype, name, client) of each query dnsmasq `role` ("resolver": the
        public resolver) logged after byte `offset` of its log (default: since the
        lab was built)."""
        if offset is None:
            offset = self.built_marks.get(role, 0)
        return [m.groups() for m in _QUERY_RE.finditer(read_log(self.dnsmasq_log(role), offset))]

    def dns_log_size(self, role: str) -> int:
        return self.dnsmasq_log(role).stat().st_size

    def resolver_queries(self, offset: Optional[int] = None) -> list:
        return self.dns_queries("resolver", offset)

    # -- changing the upstreams --------------------------------------------
    def set_records(self, role: str, records: dict, timeout: float = 10.0):
        """Replace what dnsmasq `role` answers ({name: [addresses]}); returns when
        a query inside its namespace sees the new answers (SIGHUP reloads)."""
        path = self.hosts_file(role)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(hosts_text(records))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        self.records_now[role] = records
        proc = self.dnsmasq[role]
        os.kill(proc.popen.pid, signal.SIGHUP)
        ns_role = "inet" if role == "resolver" else role
        server = RESOLVER_ADDR if role == "resolver" else (
            DNS_UPLINK_BY_IFACE[next(u.iface for u in self.uplinks if u.role == role)].dns_servers[0])
        deadline = time.monotonic() + timeout
        while True:
            ok = True
            for name, addrs in records.items():
                for qtype, fam in (("A", "."), ("AAAA", ":")):
                    want = sorted(a for a in addrs if fam in a)
                    got = self.dns_query(None, server, name, qtype, role=ns_role, timeout=0.5)
                    if sorted(got.get("answers", [])) != want:
                        ok = False
            if ok:
                return
            if time.monotonic() >= deadline:
                raise LabError(f"dnsmasq {role} did not pick up {records} within {timeout}s")
            time.sleep(0.05)

    def ra_metric(self, iface: str) -> Optional[int]:
        """Metric of the IPv6 default route on iface (from the RA), or None."""
        routes = json.loads(self.ip("gw", "-6", "-j", "route", "show", "default",
                                    "dev", iface).stdout)
        return routes[0].get("metric") if routes else None

    def set_ra_metric(self, iface: str, metric: int, timeout: float = 10.0):
        """Give iface's RA default route another metric: set ra_defrtr_metric, solicit
        an RA (the kernel re-adds the route with the new metric) and wait for it."""
        self._sysctl("gw", f"net.ipv6.conf.{iface}.ra_defrtr_metric={metric}")
        self.metric6[iface] = metric
        deadline = time.monotonic() + timeout
        next_rs = 0.0
        while self.ra_metric(iface) != metric:
            now = time.monotonic()
            if now >= deadline:
                raise LabError(f"{iface}: no RA default route with metric {metric} within "
                               f"{timeout}s: {self.ip('gw', '-6', 'route').stdout}")
            if now >= next_rs:
                self.nettool("gw", ["rs", iface], 5)
                next_rs = now + 1.0
            time.sleep(0.05)

    @contextmanager
    def records(self, role: str, records: dict):
        """set_records() for the duration of a with-block, then back to before."""
        before = self.records_now[role]
        self.set_records(role, records)
        try:
            yield
        finally:
            self.set_records(role, before)

    def blackhole(self, role: str = "inet", http: bool = True, dns: bool = True):
        """Drop (silently) what reaches upstream `role`: HTTP to the lab internet
        (both families) and/or DNS (port 53, UDP and TCP, any address)."""
        rules = []
        if http:
            rules += [f"ip daddr {INTERNET_ADDR} drop", f"ip6 daddr {INTERNET6_ADDR} drop"]
        if dns:
            rules += ["udp dport 53 drop", "tcp dport 53 drop"]
        ruleset = (f"table inet {NFT_TABLE} {{\n"
                   f"  chain input {{\n"
                   f"    type filter hook input priority 0; policy accept;\n"
                   + "".join(f"    {r}\n" for r in rules) +
                   f"  }}\n"
                   f"}}\n")
        run(self.exec_argv(role, ["nft", "-f", "-"]), input=ruleset)


if __name__ == "__main__":
    # Build the lab, print where things are, wait for Enter, tear down.
    with DnsLab() as lb:
        print(f"gw namespace: {lb.gw}\nfiles: {lb.dir}")
        for u in lb.uplinks:
            print(u.iface, u.role, lb.addresses(u.iface))
        input("Enter to destroy the lab> ")
