"""The portal-login hook (hooks/60-portal-login) behind DNS-hijacking portals, and
`uplinkd resolve`, the command it resolves with.

Run as root: sudo python3 -m pytest -v Tests/integration/test_portal_login.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).

A lab of its own (lab.Lab's scheme, two uplinks), quick to build:

    gw:eth0  10.231.1.2/24 <-> inet:up-eth0 10.231.1.1/24      default route, metric 100
             10.231.1.1:53 dnsmasq: eth0's DNS and the gateway namespace's system
             resolver (/etc/netns/GW/resolv.conf); *.portal.test and *.uplinkd.test
             -> 203.0.113.80, other .test names do not exist; its query log is the
             evidence that nothing asked the system resolver
    gw:wlan0 10.231.2.2/24 <-> portal:up-wlan0 10.231.2.1/24   default route, metric 200
             portalserver.py, started per test: HTTP on port 80 of every address of
             the portal namespace, DNS on 10.231.2.1:53 answering every name with
             10.231.2.1 until the client logged in (then the lab internet,
             203.0.113.80, except *.portal.test); its pages name their hosts under
             http://login.portal.test

The agent watches wlan0 only, with `[dns] sources = configured` (eth0 10.231.1.1,
wlan0 10.231.2.1) and two probes on .test names, so wlan0 is captive (dns-hijack)
with the portal's login URL, and the hook (METHOD=click-through or wispr,
the agent giving it UPLINK_CONFIG, uplinkd in its PATH) must log in
with no human action: wlan0 then becomes online, the portal's DNS heard the
login host from wlan0, and eth0's resolver heard nothing at all.
"""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentrun import AGENT_DEFAULTS
from lab import ETC_NETNS, Lab, LabError, Uplink, missing_tools, read_log, tool
from pytesthelp import ok, require_binary, skip_or_fail

HERE = Path(__file__).resolve().parent
HOOKS = HERE.parents[1] / "hooks"
HOOK = HOOKS / "60-portal-login"
HOOK_LIB = HOOKS / "lib" / "uplinkd-hook.sh"
PORTALSERVER = HERE / "portalserver.py"

RESOLVER = "10.231.1.1"        # eth0's DNS, and the gateway's system resolver
PORTAL = "10.231.2.1"          # the portal: its DNS, its web server, its every answer
CLIENT = "10.231.2.2"          # the gateway on wlan0
ETH0_CLIENT = "10.231.1.2"
INTERNET_ADDR = "203.0.113.80"
LOGIN_HOST = "login.portal.test"
PASSWORD = "s3cret &pass!"     # labserver.py's WISPr credentials
PROBES = (
    ("a", "http://probe.uplinkd.test/generate_204", ()),
    ("b", "http://detect.uplinkd.test/success.txt", (("expect-body", "success"),)),
)


class PortalLoginLab(Lab):
    roles = ("gw", "inet", "portal")
    uplinks = (Uplink("eth0", "inet", "10.231.1.2/24", f"{RESOLVER}/24", RESOLVER, 100),
               Uplink("wlan0", "portal", f"{CLIENT}/24", f"{PORTAL}/24", PORTAL, 200))

    def _make(self):
        super()._make()
        self._make_files("portal-login", ("logs", "run"))
        self.resolver_log = self.dir / "logs" / "dnsmasq-eth0.log"
        self.resolver_log.touch()
        self.procs.start("dnsmasq-eth0", "inet", [
            tool("dnsmasq"), "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv",
            "--no-hosts", "--no-poll", "--bind-interfaces", f"--listen-address={RESOLVER}",
            f"--pid-file={self.dir / 'run' / 'dnsmasq-eth0.pid'}", f"--log-facility={self.resolver_log}",
            "--log-queries", "--local=/test/", f"--address=/portal.test/{INTERNET_ADDR}",
            f"--address=/uplinkd.test/{INTERNET_ADDR}"])
        self.netns_etc = Path(ETC_NETNS) / self.gw
        self.netns_etc.mkdir(parents=True, exist_ok=True)
        (self.netns_etc / "resolv.conf").write_text(
            f"# test_portal_login.py {self.gw}: eth0's resolver is the system resolver\nnameserver {RESOLVER}\n")
        deadline = time.monotonic() + 15
        while self.nettool("gw", ["dns", RESOLVER, LOGIN_HOST, "--timeout", "0.5"], 0.5,
                           dev="eth0").get("answers") != [INTERNET_ADDR]:
            self.procs.check_running()
            if time.monotonic() > deadline:
                raise LabError(f"dnsmasq at {RESOLVER} does not answer\n{self.procs.logs_text()}")
            time.sleep(0.05)
        self.portals = 0

    def destroy(self):
        super().destroy()
        if getattr(self, "netns_etc", None) is not None:
            shutil.rmtree(self.netns_etc, ignore_errors=True)
            self.netns_etc = None

    def resolver_mark(self) -> int:
        return self.resolver_log.stat().st_size

    def resolver_queries(self, mark: int) -> list:
        """The lines eth0's resolver logged for queries since `mark`."""
        return [line for line in read_log(self.resolver_log, mark).splitlines() if "query[" in line]

    def start_portal(self, mode):
        """portalserver.py in `mode`, with fresh logs and nobody logged in."""
        self.portals += 1
        logs = self.dir / "logs"
        portal = Portal(logs / f"portal-{self.portals}-http.log", logs / f"portal-{self.portals}-dns.log")
        portal.proc = self.procs.start_ready(f"portal-{self.portals}", "portal", [
            sys.executable, PORTALSERVER, "--mode", mode, "--dns", PORTAL,
            "--log", portal.http_log, "--dns-log", portal.dns_log])
        return portal


class Portal:
    def __init__(self, http_log, dns_log):
        self.http_log, self.dns_log, self.proc = http_log, dns_log, None

    def paths(self, client=CLIENT) -> list:
        return [line.split(" ", 1)[1] for line in read_log(self.http_log).splitlines()
                if line.startswith(client + " ")]

    def dns_queries(self) -> list:
        """(type, name, client) of each query the portal's DNS answered."""
        out = []
        for line in read_log(self.dns_log).splitlines():
            kind, name, _, client = line.split()
            out.append((kind[len("query["):-1], name, client))
        return out


@pytest.fixture(scope="module")
def plab(netns_ok):
    missing = missing_tools(("dnsmasq", "curl"))
    if missing:
        skip_or_fail(f"the portal-login lab needs {', '.join(missing)} (Debian: dnsmasq-base, curl)",
                     "the portal-login lab")
    with PortalLoginLab() as lb:
        yield lb


@pytest.fixture
def portal(plab):
    """portal(mode) -> a running portalserver.py, stopped at teardown."""
    started = []

    def start(mode):
        started.append(plab.start_portal(mode))
        return started[-1]

    yield start
    for p in started:
        plab.procs.stop(p.proc)


def config_text() -> str:
    lines = ["# written by test_portal_login.py: lab probes and lab DNS only",
             "[check]", "timeout = 2s", "default-probes = no", "", "[agent]"]
    lines += [f"{k} = {v}" for k, v in AGENT_DEFAULTS.items()]
    lines += ["", "[uplinks]", "interfaces = wlan0", "",
              "[dns]", "sources = configured", "timeout = 1s", "",
              "[interface wlan0]", f"dns = {PORTAL}", "",
              "[interface eth0]", f"dns = {RESOLVER}"]
    for name, url, expects in PROBES:
        lines += ["", f"[probe {name}]", f"url = {url}"] + [f"{k} = {v}" for k, v in expects]
    return "\n".join(lines) + "\n"


def hook_setup(tmp_path, method):
    """(agent configuration text, the portal-login hook for the agent's hooks
    directory): the shipped hook with its settings in tmp_path, the repository's
    hook library, and a PATH where `uplinkd` is the binary under test."""
    config = tmp_path / "uplinkd.conf"
    config.write_text(config_text())
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "uplinkd").symlink_to(require_binary().resolve())
    creds = tmp_path / "portal-credentials"
    creds.write_text(f"USERNAME=labuser\nPASSWORD={PASSWORD}\n")
    creds.chmod(0o600)
    conf = tmp_path / "portal-login.conf"
    conf.write_text(f"METHOD={method}\nINTERFACES=wlan0\nCREDENTIALS={creds}\n")
    wrapper = (f"#!/bin/sh\nPATH='{bindir}':\"$PATH\" UPLINKD_HOOK_LIB='{HOOK_LIB}' "
               f"UPLINKD_PORTAL_CONF='{conf}' exec '{HOOK}'\n")
    return config.read_text(), wrapper


def verdict(run):
    st = run.state()
    return st["uplinks"].get("wlan0", {}).get("verdict") if st else None


@pytest.mark.parametrize("mode, method, portal_url, success, paths, never", [
    # Click-through behind redirects and a cookie check: the hook follows the
    # portal's 302 (relative Location) with the session cookie to the form page.
    ("portal-session", "click-through", f"http://{LOGIN_HOST}/portal/start?orig=1",
     "click-through: submitted the portal form on wlan0",
     ["/portal/start?orig=1", "/portal/terms", "/accept", "/portal/done"], []),
    # WISPr on a 200 page: the agent hands over the LoginURL, whose GET gives a
    # plain form without a block; the hook POSTs to it all the same.
    ("portal-wispr-200", "wispr", f"http://{LOGIN_HOST}/wispr/login?res=1",
     "WISPr: login on wlan0 succeeded", ["/wispr/login?res=1"], []),
    # WISPr on a redirect: the block is in the body of the 302 that sets the
    # session cookie; the hook stops there (never fetches the human page).
    ("portal-wispr-redirect", "wispr", f"http://{LOGIN_HOST}/wispr/start",
     "WISPr: login on wlan0 succeeded", ["/wispr/start", "/wispr/login?res=1"], ["/wispr/welcome"]),
])
def test_hook_logs_in_through_the_uplinks_own_dns(plab, portal, agent, tmp_path, mode, method, portal_url,
                                                   success, paths, never):
    p = portal(mode)
    mark = plab.resolver_mark()
    config, wrapper = hook_setup(tmp_path, method)
    run = agent(plab, config, hooks={"60-portal-login": wrapper})
    ok(run.wait_until, lambda: verdict(run) == "online", 25, "wlan0 online after the hook's login")
    events = ok(run.wait_hooks, [("verdict", "wlan0", "captive")], 10)
    captive = [e for e in events if e.iface == "wlan0" and e.verdict == "captive"]
    assert captive and (captive[0].reason, captive[0].portal) == ("dns-hijack", portal_url), \
        [(e.short, e.portal) for e in events]
    log = run.stderr_since(0)
    assert success in log, log
    assert "s3cret" not in log and "s3cret" not in run.state_text(), "the password reached the log"
    # The primary uplink's resolver (the system resolver) heard nothing; the login
    # host was resolved by the portal's DNS, asked from wlan0.
    assert plab.resolver_queries(mark) == [], plab.resolver_queries(mark)
    assert ("A", LOGIN_HOST, CLIENT) in p.dns_queries(), p.dns_queries()
    seen = p.paths()
    assert all(path in seen for path in paths), seen
    assert not any(path in seen for path in never), seen
    run.stop()


def resolve(lb, config, *args):
    argv = [str(require_binary()), "resolve", *args, "--config", str(config)]
    return subprocess.run(lb.exec_argv("gw", argv), capture_output=True, text=True, timeout=30)


def test_resolve_asks_the_uplinks_own_dns_only(plab, portal, tmp_path):
    p = portal("portal-session")
    config = tmp_path / "uplinkd.conf"
    config.write_text(config_text())

    mark = plab.resolver_mark()
    done = resolve(plab, config, "wlan0", LOGIN_HOST)
    assert (done.returncode, done.stdout) == (0, f"{PORTAL}\n"), done
    assert plab.resolver_queries(mark) == [], "wlan0's name went to eth0's resolver"
    assert sorted(p.dns_queries()) == [("A", LOGIN_HOST, CLIENT), ("AAAA", LOGIN_HOST, CLIENT)], p.dns_queries()

    done = resolve(plab, config, "eth0", LOGIN_HOST, "--family", "4")
    assert (done.returncode, done.stdout) == (0, f"{INTERNET_ADDR}\n"), done
    assert [q for q in p.dns_queries() if q[2] != CLIENT] == [], "eth0's name went to the portal"
    assert any(f"query[A] {LOGIN_HOST} from {ETH0_CLIENT}" in line for line in plab.resolver_queries(mark))

    # No address: a name that does not exist, a family without records.
    for args in (("eth0", "nosuch.test"), ("eth0", LOGIN_HOST, "--family", "6")):
        done = resolve(plab, config, *args)
        assert (done.returncode, done.stdout) == (1, ""), done
        assert "has no address through eth0" in done.stderr, done.stderr
    # An address is printed back, no DNS asked.
    done = resolve(plab, config, "wlan0", "192.0.2.7")
    assert (done.returncode, done.stdout) == (0, "192.0.2.7\n"), done
    # Usage, no DNS server known (lo has none configured), no such interface.
    assert resolve(plab, config, "a/b", LOGIN_HOST).returncode == 64
    assert resolve(plab, config, "wlan0", "not a name").returncode == 64
    assert resolve(plab, config, "wlan0").returncode == 64
    done = resolve(plab, config, "lo", LOGIN_HOST)
    assert done.returncode == 69 and "no DNS server known for lo" in done.stderr, done
    assert resolve(plab, config, "nosuch0", LOGIN_HOST).returncode == 69
    bad = tmp_path / "bad.conf"
    bad.write_text("[dns]\nsources = carrier-pigeon\n")
    done = resolve(plab, bad, "wlan0", LOGIN_HOST)
    assert done.returncode == 78 and "bad.conf" in done.stderr, done
