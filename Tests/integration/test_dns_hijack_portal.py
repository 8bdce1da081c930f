"""DNS-hijacking portals: the probe is still asked at the private address the
uplink's DNS gave, and the portal's answer names its login page.

Run as root: sudo python3 -m pytest -v Tests/integration/test_dns_hijack_portal.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).

A lab of its own (lab.Lab's scheme, one uplink), quick to build:

    gw:wlan0 10.231.2.2/24 <-> portal:up-wlan0 10.231.2.1/24, .53/24 and .54/24
    10.231.2.1:53   dnsmasq --address=/#/10.231.2.1   every name -> the portal
    10.231.2.1:80   labserver portal-302 / portal-meta / portal-200 (WISPr), switched
                    per test through its mode file
    10.231.2.53:53  dnsmasq --address=/#/127.0.0.1    every name -> loopback
    10.231.2.54:53  dnsmasq --address=/#/10.231.2.54  every name -> itself, where
                    nothing listens on port 80 (the HTTP exchange is refused)
    gw nft counter  TCP from the gateway namespace to 127.0.0.0/8: a probe sent to
                    a loopback answer counts there (bound to wlan0 it never
                    connects, it times out: the counter is the evidence)

uplinkd is configured with `default-probes = no`, two probes on names under the
reserved .test TLD, and `[interface wlan0] dns = ...` as its only DNS source, so
nothing is asked outside the lab. The portal's pages name their login pages at
http://203.0.113.80/... (labserver.py's BASE): those URLs are the assertion.
"""

import json
import subprocess
import time
from pathlib import Path

import pytest

from lab import NFT_TABLE, Lab, LabError, Uplink, missing_tools, run, tool
from pytesthelp import require_binary, skip_or_fail

PORTAL = "10.231.2.1"
LOOPBACK_DNS = "10.231.2.53"
REFUSING = "10.231.2.54"
CLIENT = "10.231.2.2"
PROBES = (
    ("a", "http://probe.uplinkd.test/generate_204", ()),
    ("b", "http://detect.uplinkd.test/success.txt", (("expect-body", "success"),)),
)
PROBE_URLS = {url for _, url, _ in PROBES}
PROBE_PATHS = {"/generate_204", "/success.txt"}
BASE = "http://203.0.113.80"           # labserver.py: where its portal pages point


class HijackLab(Lab):
    """wlan0 behind a portal whose DNS answers every name with its own address
    (and a second resolver answering every name with 127.0.0.1)."""

    roles = ("gw", "portal")
    uplinks = (Uplink("wlan0", "portal", f"{CLIENT}/24", f"{PORTAL}/24", PORTAL, 200),)

    def _make(self):
        super()._make()
        self._make_files("hijack", ("logs", "run"))
        answers = ((PORTAL, PORTAL), (LOOPBACK_DNS, "127.0.0.1"), (REFUSING, REFUSING))
        for server, answer in answers:
            if server != PORTAL:
                self.ip("portal", "addr", "add", f"{server}/24", "dev", "up-wlan0")
            self._dnsmasq(server, answer)
        self.login = self.serve("portal", "portal-302", self.dir / "logs" / "http-login.log", bind=PORTAL)
        run(self.exec_argv("gw", ["nft", "-f", "-"]), input=(
            f"table inet {NFT_TABLE} {{\n  chain output {{\n"
            f"    type filter hook output priority 0; policy accept;\n"
            f"    ip daddr 127.0.0.0/8 meta l4proto tcp counter\n  }}\n}}\n"))
        deadline = time.monotonic() + 15
        for server, answer in answers:
            while self.dns(server).get("answers") != [answer]:
                self.procs.check_running()
                if time.monotonic() > deadline:
                    raise LabError(f"dnsmasq at {server} does not answer {answer}\n{self.procs.logs_text()}")
                time.sleep(0.05)

    def _dnsmasq(self, listen, answer):
        name = f"dnsmasq-{listen}"
        log = self.dir / "logs" / f"{name}.log"
        log.touch()
        self.procs.start(name, "portal", [
            tool("dnsmasq"), "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv",
            "--no-hosts", "--no-poll", "--bind-interfaces", f"--listen-address={listen}",
            f"--pid-file={self.dir / 'run' / f'{name}.pid'}",
            f"--log-facility={log}", "--log-queries", f"--address=/#/{answer}"])

    def loopback_packets(self) -> int:
        """TCP packets the gateway namespace has sent to 127.0.0.0/8 so far."""
        listing = json.loads(run(self.exec_argv("gw", ["nft", "-j", "list", "table", "inet", NFT_TABLE])).stdout)
        return sum(expr["counter"]["packets"] for item in listing["nftables"] if "rule" in item
                   for expr in item["rule"]["expr"] if "counter" in expr)

    def dns(self, server):
        return self.nettool("gw", ["dns", server, "probe.uplinkd.test", "--timeout", "0.5"], 0.5, dev="wlan0")


@pytest.fixture(scope="module")
def hlab(netns_ok):
    missing = missing_tools(("dnsmasq", "nft"))
    if missing:
        skip_or_fail(f"the DNS-hijack portal lab needs {', '.join(missing)} (Debian: dnsmasq-base, nftables)",
                     "the DNS-hijack portal lab")
    with HijackLab() as lb:
        yield lb


def config(dns_server):
    lines = ["# written by test_dns_hijack_portal.py: lab probes and lab DNS only",
             "[check]", "timeout = 2s", "default-probes = no", "",
             "[dns]", "sources = configured", "timeout = 1s", "",
             "[interface wlan0]", f"dns = {dns_server}"]
    for name, url, expects in PROBES:
        lines += ["", f"[probe {name}]", f"url = {url}"] + [f"{k} = {v}" for k, v in expects]
    return "\n".join(lines) + "\n"


class Check:
    """`uplinkd check wlan0 --json` in the gateway namespace, with what the lab's
    HTTP servers saw during it."""

    def __init__(self, lb, tmp_path, dns_server):
        cfg = Path(tmp_path) / "uplinkd.conf"
        cfg.write_text(config(dns_server))
        self.argv = [str(require_binary()), "check", "wlan0", "--json", "--config", str(cfg)]
        login_mark, loopback_mark = len(lb.login.log_lines()), lb.loopback_packets()
        try:
            proc = subprocess.run(lb.exec_argv("gw", self.argv), capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"uplinkd check did not finish within 30 s: {exc}", pytrace=False)
        self.rc, self.out, self.err = proc.returncode, proc.stdout, proc.stderr
        self.login_requests = lb.login.log_lines()[login_mark:]
        self.loopback_packets = lb.loopback_packets() - loopback_mark
        try:
            self.rec = json.loads(self.out)
        except ValueError:
            self.fail("stdout is not one JSON record")

    def fail(self, msg):
        pytest.fail(f"{msg}\n$ {' '.join(self.argv)}\nexit={self.rc}\n--- stdout ---\n{self.out}"
                    f"--- stderr ---\n{self.err}--- portal login server saw ---\n{self.login_requests}\n"
                    f"--- TCP packets to 127.0.0.0/8 ---\n{self.loopback_packets}", pytrace=False)

    def expect(self, portal_urls, statuses, addresses):
        """captive (dns-hijack), exit 1, the portal URL (overall and IPv4) among
        `portal_urls`; every probe judged dns-hijack, with the HTTP status
        `statuses` gives for its name (None: no answer) and pinned to `addresses`."""
        rec = self.rec
        if (rec["verdict"], rec["reason"], self.rc) != ("captive", "dns-hijack", 1):
            self.fail("expected captive (dns-hijack), exit 1")
        fam = rec["families"].get("ipv4") or {}
        for where, url in (("portal_url", rec["portal_url"]), ("families.ipv4.portal_url", fam.get("portal_url"))):
            if url not in portal_urls:
                self.fail(f"{where} {url!r} not in {portal_urls}")
        if len(rec["probes"]) != len(PROBES):
            self.fail(f"expected {len(PROBES)} probe reports")
        for probe in rec["probes"]:
            want = ("dns-hijack", statuses.get(probe["name"]), addresses)
            if (probe["result"], probe["status"], probe["addresses"]) != want:
                self.fail(f"probe {probe['name']}: expected (result, status, addresses) {want}")
        if self.loopback_packets:
            self.fail("nothing may be sent to a loopback address")


def switch(lb, mode):
    lb.login.set_mode(mode)


@pytest.mark.parametrize("mode,status,login_url", [
    ("portal-302", 302, f"{BASE}/login?orig=1"),
    ("portal-meta", 200, f"{BASE}/portal/welcome"),
    ("portal-200", 200, f"{BASE}/wispr/login?res=1"),      # the WISPr block's LoginURL
])
def test_hijacking_portal_names_its_login_page(hlab, tmp_path, mode, status, login_url):
    switch(hlab, mode)
    c = Check(hlab, tmp_path, PORTAL)
    c.expect({login_url}, {"a": status, "b": status}, [PORTAL])
    # Both probes were sent to the portal's address, from wlan0, with their paths.
    if {r[0] for r in c.login_requests} != {CLIENT} or {r[1] for r in c.login_requests} != PROBE_PATHS:
        c.fail(f"each probe must have reached the portal at {PORTAL} from {CLIENT}")
    if not all(p["bytes"] > 300 for p in c.rec["probes"]):
        c.fail("each probe's bytes must count its HTTP exchange")


def test_hijacking_portal_that_names_nothing_keeps_the_probe_url(hlab, tmp_path):
    """The expected answer from a private address: still a hijack, and the portal
    named no login page."""
    switch(hlab, "internet")
    c = Check(hlab, tmp_path, PORTAL)
    c.expect(PROBE_URLS, {"a": 204, "b": 200}, [PORTAL])


def test_failed_exchange_keeps_the_probe_url(hlab, tmp_path):
    """Nothing answers HTTP at the hijacked address: the DNS evidence stands."""
    c = Check(hlab, tmp_path, REFUSING)
    c.expect(PROBE_URLS, {}, [REFUSING])


def test_loopback_answer_is_never_connected_to(hlab, tmp_path):
    switch(hlab, "portal-302")
    c = Check(hlab, tmp_path, LOOPBACK_DNS)
    c.expect(PROBE_URLS, {}, ["127.0.0.1"])
    if any(p["connect_ms"] is not None for p in c.rec["probes"]):
        c.fail("no connection may be attempted to a loopback answer")
    if c.login_requests:
        c.fail("the portal's web server must not be asked either")
