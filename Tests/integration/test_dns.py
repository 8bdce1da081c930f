"""Per-uplink DNS and IPv6, end to end, in the DNS lab (dnslab.py).

Run as root: sudo python3 -m pytest -v Tests/integration/test_dns.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).

The uplinks get their addresses and DNS servers from real DHCP clients talking
to dnsmasq in their upstream namespaces (dhclient -4/-6 leases for eth0, eth2
and wwan1, udhcpc writing resolvconf-style files for wlan0 and wlan1) or from
the configuration (wwan0), so uplinkd discovers them as on a gateway. Every
configuration says `default-probes = no`, probes only http://probe.uplinkd.test/
(a name under the reserved .test TLD that only the lab's dnsmasq instances
answer) and limits `[dns] sources` to configured, dhclient and resolvconf with
the lab's own directories: the host's systemd-networkd/NetworkManager state and
/etc/resolv.conf never leak in (the one resolv.conf test points `resolv-conf`
at a file of its own).

The gateway namespace's own /etc/resolv.conf names the lab's "public resolver"
behind the preferred route (eth0). Each test checks that resolver saw no probe
name: a binary that used the system resolver would get eth0's honest answers on
every uplink (no hijack seen on wlan0, no dns-failed on wlan1) and nothing at
all once eth0's upstream is dead.

Lab self-tests (test_lab_*) need no uplinkd. Waiting is always for a condition
with a deadline; no test sleeps to hide a race.
"""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import dnslab as dnslabmod
from agentrun import AGENT_DEFAULTS, uplink_is
from pytesthelp import fail, ok, require_binary
from dnslab import (DNS_UPLINKS, INTERNET6_ADDR, KNOWN_ADDR, KNOWN_NAME, PROBE_NAME,
                    RESOLVER_ADDR, DnsLab, honest_records)
from lab import INTERNET_ADDR

PROBES = (
    ("a", f"http://{PROBE_NAME}/generate_204", ()),
    ("b", f"http://{PROBE_NAME}/success.txt", (("expect-body", "success"),)),
)
PROBE_URLS = {url for _, url, _ in PROBES}
PORTAL_LOGIN_URL = f"http://{INTERNET_ADDR}/login?orig=1"      # labserver portal-302
# A captive uplink's portal URL, where it is not a probe URL: wlan0's hijacked
# names lead to the portal's web server, whose 302 names its login page.
PORTAL_URLS = {"wlan0": {PORTAL_LOGIN_URL}}
CHECK_TIMEOUT = "2s"
DNS_TIMEOUT = "1s"
# A check must not take much longer than one DNS timeout plus one probe timeout.
CHECK_BOUND_MS = 1000 + 2000 + 2000
SAFE_SOURCES = "configured dhclient resolvconf"
DNS_SOURCES = {"configured", "networkd", "networkmanager", "dhclient", "resolvconf",
               "resolv.conf", "none"}
RECORD_KEYS = {"interface", "kind", "verdict", "reason", "portal_url", "elapsed_ms",
               "families", "dns", "probes"}
FAMILY_KEYS = {"verdict", "reason", "portal_url", "quality"}
EXIT = {"online": 0, "captive": 1, "limited": 2, "down": 3}
WWAN0_DNS = "10.231.3.1"
UPLINK = {u.iface: u for u in DNS_UPLINKS}

# What each uplink really is (and the agent must keep saying while eth0's
# upstream is dead): (verdict, reason, {family: (verdict, reason)}, dns source).
TRUTH = {
    "eth0": ("online", "validated", {"ipv4": ("online", "validated")}, "dhclient"),
    "wlan0": ("captive", "dns-hijack", {"ipv4": ("captive", "dns-hijack")}, "resolvconf"),
    "wwan0": ("online", "validated", {"ipv4": ("online", "validated")}, "configured"),
    "wlan1": ("limited", "dns-failed", {"ipv4": ("limited", "dns-failed")}, "resolvconf"),
    "wwan1": ("online", "validated", {"ipv6": ("online", "validated")}, "dhclient"),
    "eth2": ("online", "validated", {"ipv4": ("online", "validated"),
                                     "ipv6": ("limited", "refused")}, "dhclient"),
}
ALL = tuple(TRUTH)


# --- fixtures ----------------------------------------------------------------

def _skip_or_fail(reason):
    if os.environ.get("UPLINKD_REQUIRE_LAB"):
        pytest.fail(f"UPLINKD_REQUIRE_LAB is set but the DNS lab is unavailable: {reason}")
    print(f"\nSKIPPING uplinkd DNS lab tests: {reason}", flush=True)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def host_resolv_conf():
    """The host's /etc/resolv.conf before the lab existed."""
    try:
        return Path("/etc/resolv.conf").read_bytes()
    except OSError:
        return None


@pytest.fixture(scope="module")
def dlab(netns_ok, host_resolv_conf):
    """One DNS lab for the module. Tests that change it (records, blackholes)
    undo their change with context managers."""
    reason = dnslabmod.unavailable_reason()
    if reason is not None:
        _skip_or_fail(reason)
    with DnsLab() as lb:
        yield lb


# --- configuration -------------------------------------------------------------

def dns_config(lb, *, sources=SAFE_SOURCES, dns=(), interfaces=None, agent=None,
               uplinks=None, resolv_conf=None) -> str:
    """An uplinkd.conf for the DNS lab. `dns`: extra [dns] lines; `interfaces`:
    {iface: {key: value}} ([interface wwan0] dns = 10.231.3.1 unless overridden);
    `agent`: [agent] keys over agentrun.AGENT_DEFAULTS; `resolv_conf`: a lab file
    for the resolv.conf source (the host's is never used)."""
    words = sources.split()
    assert "networkd" not in words and "networkmanager" not in words, sources
    assert "resolv.conf" not in words or resolv_conf is not None, \
        "the resolv.conf source only with a lab file (resolv_conf=...)"
    lines = ["# written by test_dns.py: lab probes and lab DNS files only",
             "[check]", f"timeout = {CHECK_TIMEOUT}", "default-probes = no", "",
             "[dns]", f"sources = {sources}",
             f"dhclient-leases = {lb.lease_dir}",
             f"resolvconf-dir = {lb.resolvconf_dir}",
             f"timeout = {DNS_TIMEOUT}"]
    if resolv_conf is not None:
        lines.append(f"resolv-conf = {resolv_conf}")
    lines += list(dns)
    ifaces = {"wwan0": {"dns": WWAN0_DNS}}
    for name, keys in (interfaces or {}).items():
        ifaces.setdefault(name, {}).update(keys)
    for name, keys in ifaces.items():
        lines += ["", f"[interface {name}]"] + [f"{k} = {v}" for k, v in keys.items() if v is not None]
    if agent is not None:
        keys = dict(AGENT_DEFAULTS)
        keys.update(agent)
        lines += ["", "[agent]"] + [f"{k} = {v}" for k, v in keys.items() if v is not None]
    if uplinks:
        lines += ["", "[uplinks]", f"interfaces = {uplinks}"]
    for name, url, expects in PROBES:
        lines += ["", f"[probe {name}]", f"url = {url}"]
        lines += [f"{k} = {v}" for k, v in expects]
    text = "\n".join(lines) + "\n"
    assert "default-probes = no" in text
    return text


# --- uplinkd check -------------------------------------------------------------

class Check:
    """One `uplinkd check --json` in the gateway namespace, and the lab's logs
    around it (DNS queries each dnsmasq saw, HTTP requests each server saw)."""

    def __init__(self, lb, tmp_path, ifaces, config, extra=()):
        self.lab = lb
        cfg = Path(tmp_path) / f"check-{time.monotonic_ns()}.conf"
        cfg.write_text(config)
        self.config = config
        self.argv = [str(require_binary()), "check", *ifaces, "--json", "--config", str(cfg), *extra]
        self.dns_marks = {name: lb.dns_log_size(name) for name in lb.dnsmasq}
        self.http_marks = {role: len(srv.log_lines()) for role, srv in lb.http.items()}
        start = time.monotonic()
        try:
            proc = subprocess.run(lb.exec_argv("gw", self.argv), capture_output=True,
                                  text=True, timeout=60)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"uplinkd check did not finish within 60 s: {' '.join(self.argv)}\n"
                        f"stdout: {exc.stdout!r}\nstderr: {exc.stderr!r}", pytrace=False)
        self.wall = time.monotonic() - start
        self.rc, self.out, self.err = proc.returncode, proc.stdout, proc.stderr
        self.records = self._parse()

    def __str__(self):
        return (f"$ {' '.join(self.argv)}\nexit={self.rc} wall={self.wall:.2f}s\n"
                f"--- config ---\n{self.config}--- stdout ---\n{self.out}--- stderr ---\n{self.err}"
                f"--- DNS queries seen during the check ---\n"
                + "".join(f"{name}: {self.queries(name)}\n" for name in self.dns_marks)
                + "--- HTTP requests seen during the check ---\n"
                + "".join(f"{role}: {self.requests(role)}\n" for role in self.http_marks))

    def fail(self, msg):
        pytest.fail(f"{msg}\n{self}", pytrace=False)

    def _parse(self):
        recs = {}
        for line in self.out.splitlines():
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                self.fail(f"stdout line is not JSON ({exc}): {line!r}")
            if not isinstance(rec, dict) or not RECORD_KEYS <= set(rec):
                self.fail(f"JSON record lacks {sorted(RECORD_KEYS - set(rec))}: {rec}")
            self._check_shape(rec)
            recs[rec["interface"]] = rec
        return recs

    def _check_shape(self, rec):
        fams = rec["families"]
        if not isinstance(fams, dict) or not set(fams) <= {"ipv4", "ipv6"}:
            self.fail(f"families must be an object with ipv4/ipv6 keys: {rec}")
        for name, fam in fams.items():
            if not isinstance(fam, dict) or set(fam) != FAMILY_KEYS:
                self.fail(f"families.{name} must have exactly {sorted(FAMILY_KEYS)}: {rec}")
        dns = rec["dns"]
        if rec["verdict"] != "down":
            if not isinstance(dns, dict) or set(dns) != {"source", "per_uplink", "servers"} \
                    or dns["source"] not in DNS_SOURCES or not isinstance(dns["per_uplink"], bool) \
                    or not isinstance(dns["servers"], list) \
                    or not all(isinstance(s, str) for s in dns["servers"]):
                self.fail(f"dns must be {{source, per_uplink, servers}} with a known source: {rec}")
        for probe in rec["probes"]:
            if not isinstance(probe.get("addresses"), list):
                self.fail(f"every probe needs an addresses list: {probe}")

    def rec(self, iface):
        if iface not in self.records:
            self.fail(f"no JSON line for {iface}")
        return self.records[iface]

    def queries(self, name):
        """(qtype, qname, client) dnsmasq `name` logged during this check."""
        return self.lab.dns_queries(name, self.dns_marks[name])

    def requests(self, role):
        """[client, path] lines HTTP server `role` logged during this check."""
        return self.lab.http[role].log_lines()[self.http_marks[role]:]

    def expect(self, iface, verdict, reason, families=None, dns=None, portal_urls=None):
        """The record's verdict and reason; families: {family: (verdict, reason)}
        exactly; dns: (source, per_uplink, servers); portal_urls: allowed values
        (default None unless captive, where PORTAL_URLS or else the probe URLs)."""
        rec = self.rec(iface)
        if (rec["verdict"], rec["reason"]) != (verdict, reason):
            self.fail(f"{iface}: expected {verdict} ({reason}), got {rec['verdict']} ({rec['reason']})")
        if portal_urls is None:
            portal_urls = PORTAL_URLS.get(iface, PROBE_URLS) if verdict == "captive" else {None}
        if rec["portal_url"] not in portal_urls:
            self.fail(f"{iface}: portal_url {rec['portal_url']!r} not in {portal_urls}")
        if families is not None:
            got = {f: (v["verdict"], v["reason"]) for f, v in rec["families"].items()}
            if got != families:
                self.fail(f"{iface}: families {got}, expected {families}")
            for f, v in rec["families"].items():
                allowed = portal_urls if v["verdict"] == rec["verdict"] else (
                    {None} if v["verdict"] != "captive" else None)
                if allowed is not None and v["portal_url"] not in allowed:
                    self.fail(f"{iface}: families.{f}.portal_url {v['portal_url']!r} not in {allowed}")
        if dns is not None:
            source, per_uplink, servers = dns
            got = (rec["dns"]["source"], rec["dns"]["per_uplink"], rec["dns"]["servers"])
            if got != (source, per_uplink, servers):
                self.fail(f"{iface}: dns {got}, expected {(source, per_uplink, servers)}")
        return rec

    def expect_online_through_own_dns(self, iface, dns, pinned, asked):
        """iface as TRUTH says (online), exit 0, dns: (source, per_uplink, servers);
        pinned: {family: addresses} each probe of that family is pinned to; asked:
        (role, client, qtype) of a query its own resolver saw; the system resolver
        never asked."""
        rec = self.expect(iface, *TRUTH[iface][:3], dns=dns)
        self.expect_exit(0)
        for family, addresses in pinned.items():
            self.expect_pinned(iface, family, addresses)
        self.expect_asked(*asked)
        self.expect_no_system_resolver()
        return rec

    def expect_exit(self, status):
        if self.rc != status:
            self.fail(f"exit status {self.rc}, expected {status}")

    def expect_pinned(self, iface, family, addresses):
        probes = [p for p in self.rec(iface)["probes"] if p["family"] == family]
        if len(probes) != len(PROBES) or any(sorted(p["addresses"]) != sorted(addresses) for p in probes):
            self.fail(f"{iface}: each {family} probe must be pinned to {addresses}: {probes}")

    def expect_no_system_resolver(self):
        if self.queries("resolver"):
            self.fail(f"the system resolver ({RESOLVER_ADDR}, the gateway namespace's "
                      f"/etc/resolv.conf) was asked: {self.queries('resolver')}")

    def expect_asked(self, role, client, qtype, name=PROBE_NAME):
        got = [q for q in self.queries(role) if q == (qtype, name, client)]
        if not got:
            self.fail(f"dnsmasq {role} saw no {qtype} query for {name} from {client}")

    def expect_only_clients(self, role, clients):
        seen = {c for _, _, c in self.queries(role)}
        if not seen <= set(clients):
            self.fail(f"dnsmasq {role} was asked by {sorted(seen)}, expected only {sorted(clients)}")


def check(lb, tmp_path, *ifaces, config=None, extra=()):
    return Check(lb, tmp_path, ifaces, config or dns_config(lb), extra)


# --- lab self-tests (no uplinkd) -----------------------------------------------

def test_lab_dhcp_clients_recorded_addresses_and_servers(dlab):
    lb = dlab
    for iface, servers in (("eth0", ["10.231.1.1"]), ("eth2", ["10.231.6.1"])):
        text = lb.lease_file(iface, 4).read_text()
        assert f'interface "{iface}"' in text and \
            f"option domain-name-servers {', '.join(servers)};" in text, text
    for iface, server in (("wwan1", "2001:db8:231:5::1"), ("eth2", "2001:db8:231:6::1")):
        text = lb.lease_file(iface, 6).read_text()
        assert "lease6 {" in text and f'interface "{iface}"' in text and \
            f"option dhcp6.name-servers {server};" in text, text
    for iface, server in (("wlan0", "10.231.2.1"), ("wlan1", "10.231.4.1")):
        lines = [ln for ln in lb.resolvconf_file(iface).read_text().splitlines() if ln.strip()]
        assert lines == [f"nameserver {server}"], lines
    for u in DNS_UPLINKS:
        assert lb.missing_config(u) is None, (u.iface, lb.missing_config(u))
    v4 = {a["local"] for a in lb.addresses("wwan1") if a["family"] == "inet"}
    assert not v4, f"wwan1 is IPv6-only: {lb.addresses('wwan1')}"


def test_lab_dns_answers_differ_per_uplink(dlab):
    lb = dlab
    want = {
        ("eth0", "10.231.1.1", "A"): [INTERNET_ADDR],
        ("wlan0", "10.231.2.1", "A"): ["10.231.2.1"],
        ("wwan0", WWAN0_DNS, "A"): [INTERNET_ADDR],
        ("wwan1", "2001:db8:231:5::1", "AAAA"): [INTERNET6_ADDR],
        ("eth2", "10.231.6.1", "AAAA"): [INTERNET6_ADDR],
        ("eth2", "2001:db8:231:6::1", "A"): [INTERNET_ADDR],
    }
    for (iface, server, qtype), answers in want.items():
        got = lb.dns_query(iface, server, PROBE_NAME, qtype)
        assert got.get("answers") == answers, (iface, server, qtype, got)
    dead = lb.dns_query("wlan1", "10.231.4.1", PROBE_NAME)
    assert dead.get("error") == "refused", dead
    # Bound to wlan0, wwan0's resolver cannot be reached (it is not forwarded).
    stray = lb.dns_query("wlan0", WWAN0_DNS, PROBE_NAME, timeout=1)
    assert "answers" not in stray, stray
    # Names outside the lab are never forwarded anywhere.
    other = lb.dns_query("eth0", "10.231.1.1", "example.com")
    assert other.get("answers") == [] and other.get("rcode") != 0, other


def test_lab_http_to_addresses_works_through_the_dns_broken_uplinks(dlab):
    lb = dlab
    for iface in ("wlan0", "wlan1", "eth0", "wwan0", "eth2"):
        got = lb.http_get(iface, INTERNET_ADDR)
        assert got.get("status") == 204, (iface, got)
    assert lb.http_get("wwan1", INTERNET6_ADDR).get("status") == 204
    assert lb.http_get("eth2", INTERNET6_ADDR).get("error") == "refused"
    # The hijacked name leads to the portal's login page.
    assert lb.http_get("wlan0", "10.231.2.1").get("status") == 302


def test_lab_system_resolver_is_behind_the_preferred_route(dlab, host_resolv_conf):
    lb = dlab
    mark = lb.dns_log_size("resolver")
    got = lb.system_resolve(PROBE_NAME)
    assert got.get("addresses") == sorted([INTERNET_ADDR, INTERNET6_ADDR]), got
    assert ("A", PROBE_NAME, "10.231.1.2") in lb.resolver_queries(mark), lb.resolver_queries(mark)
    if host_resolv_conf is not None:
        assert Path("/etc/resolv.conf").read_bytes() == host_resolv_conf, \
            "the host's /etc/resolv.conf changed while the lab ran"


def test_lab_records_can_change_and_come_back(dlab):
    lb = dlab
    with lb.records("wwan", {PROBE_NAME: [INTERNET_ADDR], KNOWN_NAME: ["203.0.113.7"]}):
        assert lb.dns_query("wwan0", WWAN0_DNS, KNOWN_NAME).get("answers") == ["203.0.113.7"]
    assert lb.dns_query("wwan0", WWAN0_DNS, KNOWN_NAME).get("answers") == [KNOWN_ADDR]


# --- uplinkd check -------------------------------------------------------------

def test_binary_present():
    require_binary()


def test_dhclient_uplink_online_through_its_own_dns(dlab, tmp_path):
    c = check(dlab, tmp_path, "eth0")
    c.expect_online_through_own_dns("eth0", ("dhclient", True, ["10.231.1.1"]),
                                    {"ipv4": [INTERNET_ADDR]}, ("inet", "10.231.1.2", "A"))
    c.expect_only_clients("inet", ["10.231.1.2"])
    if {r[0] for r in c.requests("inet")} != {"10.231.1.2"} or len(c.requests("inet")) < len(PROBES):
        c.fail("the probes must reach the inet server from eth0's address")


def test_udhcpc_portal_hijacking_dns_is_captive(dlab, tmp_path):
    c = check(dlab, tmp_path, "wlan0")
    c.expect("wlan0", *TRUTH["wlan0"][:3], dns=("resolvconf", True, ["10.231.2.1"]))
    c.expect_exit(1)
    c.expect_asked("portal", "10.231.2.2", "A")
    c.expect_only_clients("portal", ["10.231.2.2"])
    c.expect_no_system_resolver()
    # The DNS answer decides; the probes then ask the hijacked address for the
    # login page (test_dns_hijack_portal.py covers the kinds of portal).
    c.expect_pinned("wlan0", "ipv4", ["10.231.2.1"])
    if {r[0] for r in c.requests("portal-login")} != {"10.231.2.2"} or len(c.requests("portal-login")) < len(PROBES):
        c.fail("the probes must have reached the portal's login server at 10.231.2.1 from wlan0")
    if c.requests("portal"):
        c.fail("nothing may reach 203.0.113.80 when DNS pinned 10.231.2.1")


def test_portal_hijacking_only_dns_passes_ip_literal_probes(dlab, tmp_path):
    """The other half of the hijack case: HTTP to real addresses passes through
    wlan0, so only the name-based probes can see this portal."""
    c = check(dlab, tmp_path, "wlan0", extra=("--url", f"http://{INTERNET_ADDR}/generate_204"))
    c.expect("wlan0", "online", "validated", {"ipv4": ("online", "validated")})
    if any(p["addresses"] for p in c.rec("wlan0")["probes"]):
        c.fail("an IP-literal probe URL has no pinned addresses")
    if c.queries("portal"):
        c.fail("an IP-literal probe must not resolve anything")


def test_hijack_check_off_follows_the_pinned_private_address(dlab, tmp_path):
    """hijack-check = no: the probe goes to what the uplink's DNS said (the
    portal's own address), which shows the answer is pinned into the probe."""
    c = check(dlab, tmp_path, "wlan0", config=dns_config(dlab, dns=["hijack-check = no"]))
    c.expect("wlan0", "captive", "redirect", {"ipv4": ("captive", "redirect")},
             portal_urls={PORTAL_LOGIN_URL})
    c.expect_pinned("wlan0", "ipv4", ["10.231.2.1"])
    if not c.requests("portal-login") or {r[0] for r in c.requests("portal-login")} != {"10.231.2.2"}:
        c.fail("the probes must have reached the portal's login server at 10.231.2.1")
    if c.requests("portal"):
        c.fail("nothing may reach 203.0.113.80 when DNS pinned 10.231.2.1")


@pytest.mark.parametrize("dead", ["refused", "blackholed"])
def test_uplink_with_dead_dns_is_limited_dns_failed(dlab, tmp_path, dead):
    lb = dlab
    if dead == "blackholed":
        with lb.blackholed("nodns", http=False, dns=True):
            c = check(lb, tmp_path, "wlan1")
    else:
        c = check(lb, tmp_path, "wlan1")
    c.expect("wlan1", *TRUTH["wlan1"][:3], dns=("resolvconf", True, ["10.231.4.1"]))
    c.expect_exit(2)
    c.expect_no_system_resolver()
    if c.requests("nodns"):
        c.fail("no HTTP request may be sent when the name did not resolve")
    if c.rec("wlan1")["elapsed_ms"] > CHECK_BOUND_MS:
        c.fail(f"a dead resolver must be judged within [dns] timeout {DNS_TIMEOUT} plus "
               f"the probe timeout {CHECK_TIMEOUT} (and slack), {CHECK_BOUND_MS} ms")
    # ... while HTTP to addresses works through wlan1:
    lit = check(lb, tmp_path, "wlan1", extra=("--url", f"http://{INTERNET_ADDR}/generate_204"))
    lit.expect("wlan1", "online", "validated")


def test_explicitly_configured_uplink(dlab, tmp_path):
    c = check(dlab, tmp_path, "wwan0")
    c.expect_online_through_own_dns("wwan0", ("configured", True, [WWAN0_DNS]),
                                    {"ipv4": [INTERNET_ADDR]}, ("wwan", "10.231.3.2", "A"))


def test_server_behind_the_gateway_is_asked_through_the_uplink_not_the_primary(dlab, tmp_path):
    # eth0 holds the preferred default route; wwan0's server is off its subnet, so
    # only a socket bound to wwan0 before it connects reaches it, from wwan0's address.
    config = dns_config(dlab, interfaces={"wwan0": {"dns": dnslabmod.OFFLINK_ADDR}})
    c = check(dlab, tmp_path, "wwan0", config=config)
    c.expect("wwan0", *TRUTH["wwan0"][:3], dns=("configured", True, [dnslabmod.OFFLINK_ADDR]))
    c.expect_exit(0)
    c.expect_asked("offlink", "10.231.3.2", "A")
    c.expect_only_clients("offlink", ["10.231.3.2"])
    c.expect_no_system_resolver()


def test_configured_servers_win_in_fixed_order_and_are_asked_through_the_uplink(dlab, tmp_path):
    """wlan0 configured with wwan0's resolver, sources listed in reverse order:
    `configured` still wins over the resolvconf file, and the query is bound to
    wlan0, where 10.231.3.1 is unreachable (unbound, the kernel would send it out
    of wwan0, where it is on-link, and get an honest answer)."""
    cfg = dns_config(dlab, sources="resolvconf dhclient configured",
                     interfaces={"wlan0": {"dns": WWAN0_DNS}})
    c = check(dlab, tmp_path, "wlan0", config=cfg)
    c.expect("wlan0", "limited", "dns-failed", {"ipv4": ("limited", "dns-failed")},
             dns=("configured", True, [WWAN0_DNS]))
    if c.queries("wwan"):
        c.fail("wlan0's query for a server behind wwan0 must not leave through wwan0")
    if c.queries("portal"):
        c.fail("the resolvconf servers must not be asked when servers are configured")
    c.expect_no_system_resolver()


def test_resolv_conf_fallback_is_flagged_not_per_uplink(dlab, tmp_path):
    resolv = tmp_path / "resolv.conf"
    resolv.write_text(f"# a lab file, not the host's\nnameserver {WWAN0_DNS}\n")
    cfg = dns_config(dlab, sources="resolv.conf", resolv_conf=resolv)
    c = check(dlab, tmp_path, "wwan0", "wlan0", config=cfg)
    c.expect("wwan0", "online", "validated", dns=("resolv.conf", False, [WWAN0_DNS]))
    # Asked through wlan0, where that server is unreachable.
    c.expect("wlan0", "limited", "dns-failed", dns=("resolv.conf", False, [WWAN0_DNS]))
    c.expect_only_clients("wwan", ["10.231.3.2"])


def test_ipv6_only_uplink_with_internet_is_online(dlab, tmp_path):
    c = check(dlab, tmp_path, "wwan1")
    c.expect_online_through_own_dns("wwan1", ("dhclient", True, ["2001:db8:231:5::1"]),
                                    {"ipv6": [INTERNET6_ADDR]}, ("v6", "2001:db8:231:5::2", "AAAA"))
    if {r[0] for r in c.requests("v6")} != {"2001:db8:231:5::2"}:
        c.fail("the probes must reach the v6 server from wwan1's address")


def test_dual_stack_uplink_with_broken_ipv6_shows_both_facts(dlab, tmp_path):
    c = check(dlab, tmp_path, "eth2")
    c.expect_online_through_own_dns("eth2", ("dhclient", True, ["10.231.6.1", "2001:db8:231:6::1"]),
                                    {"ipv4": [INTERNET_ADDR], "ipv6": [INTERNET6_ADDR]},
                                    ("dual", "10.231.6.2", "A"))


def test_ipv6_default_routes_of_equal_metric_on_two_uplinks(dlab, tmp_path):
    """Router advertisements give every uplink's IPv6 default route the kernel's
    metric 1024 unless a network manager sets one per link: two uplinks then
    have default routes with the same destination and metric, and each must
    still be seen as its own (a route cache keyed without the interface keeps
    only one of them, and the other uplink loses its IPv6 family)."""
    lb = dlab
    lb.set_ra_metric("eth2", UPLINK["wwan1"].metric6)
    try:
        c = check(lb, tmp_path, "eth2", "wwan1")
    finally:
        lb.set_ra_metric("eth2", UPLINK["eth2"].metric6)
    c.expect("wwan1", *TRUTH["wwan1"][:3])
    c.expect("eth2", *TRUTH["eth2"][:3])


def test_known_answer_mismatch_is_dns_hijack(dlab, tmp_path):
    """wwan0's resolver answers the known name with another (public) address: it
    lies, although the probe name looks fine and HTTP works."""
    lb = dlab
    cfg = dns_config(lb, dns=[f"known-answer = {KNOWN_NAME} {KNOWN_ADDR}"])
    lying = dict(honest_records(), **{KNOWN_NAME: [INTERNET_ADDR]})
    with lb.records("wwan", lying):
        c = check(lb, tmp_path, "eth0", "wwan0", config=cfg)
    c.expect("eth0", "online", "validated", {"ipv4": ("online", "validated")})
    c.expect("wwan0", "captive", "dns-hijack", {"ipv4": ("captive", "dns-hijack")},
             portal_urls=PROBE_URLS | {None})
    c.expect_exit(1)
    c.expect_asked("wwan", "10.231.3.2", "A", KNOWN_NAME)
    c.expect_asked("inet", "10.231.1.2", "A", KNOWN_NAME)
    c.expect_no_system_resolver()


def test_all_uplinks_at_once(dlab, tmp_path):
    """All six in one check (parallel lookups must not cross uplinks)."""
    c = check(dlab, tmp_path, *ALL)
    for iface, (verdict, reason, families, source) in TRUTH.items():
        rec = c.expect(iface, verdict, reason, families)
        if rec["dns"]["source"] != source or rec["dns"]["per_uplink"] is not True:
            c.fail(f"{iface}: dns {rec['dns']}, expected source {source}, per uplink")
    c.expect_exit(2)
    for role, client in (("inet", "10.231.1.2"), ("portal", "10.231.2.2"),
                         ("wwan", "10.231.3.2"), ("v6", "2001:db8:231:5::2")):
        c.expect_only_clients(role, [client])
    c.expect_only_clients("dual", ["10.231.6.2", "2001:db8:231:6::2"])
    c.expect_no_system_resolver()


# --- uplinkd run ---------------------------------------------------------------

SETTLE_S = 25
PRIORITY = "eth0 wwan0 eth2 wwan1 wlan0 wlan1"


def agent_config(lb):
    # Every round resolves through each uplink's own DNS (no answers reused between
    # rounds), so the DNS servers' logs show each uplink being probed again.
    return dns_config(lb, dns=("reuse-answers = no",), agent={"priority": PRIORITY}, uplinks=" ".join(ALL))


def is_truth(st, iface):
    verdict, reason, families, source = TRUTH[iface]
    u = st["uplinks"].get(iface)
    if u is None or (u["verdict"], u["reason"]) != (verdict, reason):
        return False
    for fam, key, rkey in (("ipv4", "ipv4_verdict", "ipv4_reason"), ("ipv6", "ipv6_verdict", "ipv6_reason")):
        want = families.get(fam, ("-", "-"))
        if (u[key], u[rkey]) != want:
            return False
    return u["dns_source"] == source


def settle(run):
    """Wait for the start-up verdicts and primary in the state file and then in the
    hook log (hooks run after the state is written)."""
    st = ok(run.wait_state, lambda st: st["primary"] == "eth0" and all(is_truth(st, i) for i in ALL),
            SETTLE_S, f"start-up: every uplink as it really is {TRUTH}, primary eth0")

    ok(run.wait_hooks, [("verdict", i, *TRUTH[i][:2]) for i in ALL] + [("primary", "eth0")], SETTLE_S,
       latest=True, what="start-up hook lines for every uplink, primary eth0")
    return st


def status_json(run):
    proc = run.status("--json")
    try:
        return json.loads(proc.stdout)
    except ValueError:
        fail(run, f"status --json is not JSON (exit {proc.returncode}): {proc.stdout!r} {proc.stderr!r}")


def test_agent_reports_families_and_dns_in_state_and_status(dlab, agent):
    resolver_mark = dlab.dns_log_size("resolver")
    run = agent(dlab, agent_config(dlab))
    st = settle(run)
    wl = st["uplinks"]["wlan0"]
    if wl["portal_url"] != PORTAL_LOGIN_URL:
        fail(run, f"wlan0 (dns-hijack) portal must be the login page its portal names: {wl}")
    for iface in ALL:
        if iface != "wlan0" and st["uplinks"][iface]["portal_url"] != "-":
            fail(run, f"{iface} is not captive; PORTAL-URL must be '-': {st['uplinks'][iface]}")

    js = status_json(run)
    ups = {u["interface"]: u for u in js["uplinks"]}
    if sorted(ups) != sorted(ALL):
        fail(run, f"status --json must list {sorted(ALL)}: {js}")
    for iface, (verdict, reason, families, source) in TRUTH.items():
        u = ups[iface]
        want_fams = {f: ({"verdict": families[f][0], "reason": families[f][1]} if f in families else None)
                     for f in ("ipv4", "ipv6")}
        got = (u["verdict"], u["reason"], u["families"], u["dns_source"], u["dns_per_uplink"])
        want = (verdict, reason, want_fams, source, True)
        if got != want:
            fail(run, f"status --json {iface}:\n  {got}\nexpected\n  {want}")
    if js["primary"] != "eth0":
        fail(run, f"primary must be eth0: {js}")
    if dlab.resolver_queries(resolver_mark):
        fail(run, f"the system resolver was asked: {dlab.resolver_queries(resolver_mark)}")


def test_agent_ethernet_upstream_dead_others_stay_what_they_are(dlab, agent):
    lb = dlab
    run = agent(lb, agent_config(lb))
    resolver_mark = lb.dns_log_size("resolver")
    st0 = settle(run)
    hooks_mark = len(run.events())
    with lb.blackholed("inet", http=True, dns=True):
        st = ok(run.wait_state, lambda s: uplink_is(s, "eth0", "limited", "dns-failed")
                and s["primary"] == "wwan0", 20, "eth0 limited (dns-failed), primary wwan0")
        # Every other uplink must be probed again while eth0 is dead, and still be
        # what it really is: new queries from each of them reach their own resolver.
        marks = {role: lb.dns_log_size(role) for role in ("portal", "wwan", "v6", "dual")}
        clients = {"portal": "10.231.2.2", "wwan": "10.231.3.2", "v6": "2001:db8:231:5::2",
                   "dual": "10.231.6.2"}

        def reprobed():
            return all(any(c == clients[role] for _, _, c in lb.dns_queries(role, marks[role]))
                       for role in marks)
        ok(run.wait_until, reprobed, 15, "a new round on wlan0, wwan0, wwan1 and eth2 after eth0 died")
        # A second round each, so a change would have shown (hysteresis needs two).
        marks = {role: lb.dns_log_size(role) for role in marks}
        ok(run.wait_until, reprobed, 15, "a second round on wlan0, wwan0, wwan1 and eth2")
        st = run.state()
        for iface in ALL:
            if iface == "eth0":
                continue
            if not is_truth(st, iface) or st["uplinks"][iface]["since"] != st0["uplinks"][iface]["since"]:
                fail(run, f"{iface} must stay {TRUTH[iface][:2]} (since unchanged) while eth0's "
                          f"upstream is dead:\n  before {st0['uplinks'][iface]}\n  now    {st['uplinks'][iface]}")
        # eth0's own runs first (the hooks of one event after another): the
        # absence of any other uplink's below is then read after them.
        events = ok(run.wait_hooks, [("verdict", "eth0", "limited", "dns-failed"), ("primary", "wwan0")], 10,
                    since=hooks_mark)
        changed = [e.short for e in events[hooks_mark:]
                   if e.event == "verdict" and e.iface != "eth0"]
        if changed:
            fail(run, f"no other uplink may change verdict: {changed}")
        if lb.resolver_queries(resolver_mark):
            fail(run, f"the system resolver was asked: {lb.resolver_queries(resolver_mark)}")
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "online", "validated") and s["primary"] == "eth0",
       30, "eth0 back online and primary after the upstream returned")
