"""The captive-portal API (RFC 8908) announced by DHCP option 114 (RFC 8910): a
real dhclient records the URI, and `uplinkd check` and the agent ask the API.

Run as root: sudo python3 -m pytest -v Tests/integration/test_capport.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).

A lab of its own (lab.Lab's scheme, one uplink):

    gw:wlan0 10.232.2.2/24 <-> venue:up-wlan0 10.232.2.1/24
    10.232.2.1:53,67  dnsmasq: DHCP (10.232.2.20) with option 114 = https://capport.uplinkd.test/api,
                      DNS answering capport.uplinkd.test with 10.232.2.1 (nothing else)
    10.232.2.1:443    capportserver.py: the API, HTTPS with a certificate of a test CA
                      made for this lab (openssl), answering the JSON the test writes
    10.232.2.1:80     labserver.py: the probe http://10.232.2.1/generate_204, as the
                      internet (204) or as a portal (302), switched per test
    gw                dhclient -4 with `option captive-portal code 114 = text;` in its
                      dhclient.conf (uplinkd(8), CAPTIVE-PORTAL API), its lease file in
                      the lab; its script is /bin/true, so the lab's addresses stay

uplinkd reads the lease from the lab's directory (`[dns] dhclient-leases`), trusts
the lab's CA (`[check] ca-file`), and has one IP-literal probe: nothing is asked
outside the lab.
"""

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from agentrun import parse_state
from labserver import BASE
from lab import Lab, LabError, Uplink, missing_tools, run, tool
from pytesthelp import fail, ok, require_binary, skip_or_fail


@contextlib.contextmanager
def web_mode(clab, mode):
    """The lab's web server in `mode` for the block, back to "internet" after it
    (the module's lab is shared: the next test must not find a portal)."""
    clab.web.set_mode(mode)
    try:
        yield
    finally:
        clab.web.set_mode("internet")


VENUE = "10.232.2.1"
CLIENT = "10.232.2.2"
LEASED = "10.232.2.20"
API_HOST = "capport.uplinkd.test"
API_URI = f"https://{API_HOST}/api"
LOGIN = f"https://{API_HOST}/portal"
PROBE = f"http://{VENUE}/generate_204"
# Where labserver.py's portal-302 mode sends every probe (its Location).
LOCATION = f"{BASE}/login?orig=1"
HTTP_PAGE = "http://portal.lab/login"
REFUSED_HTTP_PAGE = f"user-portal-url {HTTP_PAGE} refused: not https (RFC 8908)"

DHCLIENT_CONF = """# test_capport.py: Debian's request list and the captive-portal option (RFC 8910)
option captive-portal code 114 = text;
request subnet-mask, broadcast-address, time-offset, routers,
        domain-name, domain-name-servers, domain-search, host-name,
        interface-mtu, ntp-servers, captive-portal;
initial-interval 1;
backoff-cutoff 2;
"""


class CapportLab(Lab):
    """wlan0 at a venue whose DHCP announces a captive-portal API."""

    roles = ("gw", "venue")
    uplinks = (Uplink("wlan0", "venue", f"{CLIENT}/24", f"{VENUE}/24", VENUE, 200),)

    def _make(self):
        super()._make()
        self._make_files("capport", ("logs", "run", "tls", "leases"))
        self._make_ca()
        self.answer = self.dir / "run" / "answer.json"
        self.set_answer({"captive": False})
        self.api_log = self.dir / "logs" / "api.log"
        self.api_log.touch()
        log = self.dir / "logs" / "dnsmasq.log"
        log.touch()
        self.procs.start("dnsmasq", "venue", [
            tool("dnsmasq"), "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--no-poll", "--bind-interfaces", f"--listen-address={VENUE}", "--local=/#/",
            f"--pid-file={self.dir / 'run' / 'dnsmasq.pid'}", f"--log-facility={log}", "--log-queries", "--log-dhcp",
            f"--address=/{API_HOST}/{VENUE}",
            f"--dhcp-leasefile={self.dir / 'run' / 'dnsmasq.leases'}", "--dhcp-authoritative",
            # Another address than the lab's own: dnsmasq pings before it offers, and
            # the lease only matters for its options (the client's script does nothing).
            f"--dhcp-range={LEASED},{LEASED},255.255.255.0,1h",
            f"--dhcp-option=option:router,{VENUE}", f"--dhcp-option=option:dns-server,{VENUE}",
            f"--dhcp-option=114,{API_URI}"])
        self.procs.start_ready("capportserver", "venue", [
            "python3", str(Path(__file__).resolve().parent / "capportserver.py"), "--bind", VENUE,
            "--cert", self.dir / "tls" / "server.pem", "--key", self.dir / "tls" / "server.key",
            "--answer", self.answer, "--log", self.api_log])
        self.web = self.serve("venue", "internet", self.dir / "logs" / "http.log", bind=VENUE)
        conf = self.dir / "run" / "dhclient.conf"
        conf.write_text(DHCLIENT_CONF)
        self.lease_file = self.dir / "leases" / "dhclient.wlan0.leases"
        self.procs.start("dhclient", "gw", [
            tool("dhclient"), "-4", "-d", "-v", "-cf", conf, "-lf", self.lease_file,
            "-pf", self.dir / "run" / "dhclient.pid", "-sf", "/bin/true", "wlan0"])
        deadline = time.monotonic() + 20
        while "captive-portal" not in (self.lease_file.read_text() if self.lease_file.exists() else ""):
            self.procs.check_running()
            if time.monotonic() > deadline:
                raise LabError(f"dhclient recorded no captive-portal option in 20 s\n{self.procs.logs_text()}")
            time.sleep(0.1)

    def _make_ca(self):
        """A CA and a server certificate for API_HOST, made for this lab only."""
        tls = self.dir / "tls"
        def openssl(*args):
            run([tool("openssl"), *map(str, args)])
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=uplinkd lab CA",
                "-keyout", tls / "ca.key", "-out", tls / "ca.pem")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={API_HOST}",
                "-keyout", tls / "server.key", "-out", tls / "server.csr")
        (tls / "ext.cnf").write_text(f"subjectAltName=DNS:{API_HOST}\n")
        openssl("x509", "-req", "-in", tls / "server.csr", "-CA", tls / "ca.pem", "-CAkey", tls / "ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", tls / "ext.cnf", "-out", tls / "server.pem")
        self.ca = tls / "ca.pem"

    def set_answer(self, document):
        self.answer.write_text(json.dumps(document))

    def api_requests(self):
        return [json.loads(line) for line in self.api_log.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def clab(netns_ok):
    missing = missing_tools(("dnsmasq", "dhclient", "openssl"))
    if missing:
        skip_or_fail(f"the captive-portal API lab needs {', '.join(missing)} "
                     "(Debian: dnsmasq-base, isc-dhcp-client, openssl)", "the captive-portal API lab")
    with CapportLab() as lb:
        yield lb


def config(lb, trust_ca=True):
    lines = ["# written by test_capport.py: the lab's probe, DNS, leases and CA only",
             "[check]", "timeout = 2s", "default-probes = no"]
    if trust_ca:
        lines.append(f"ca-file = {lb.ca}")
    lines += ["", "[agent]", "interval = 2s", "",
              "[dns]", "sources = configured", f"dhclient-leases = {lb.lease_file.parent}", "timeout = 1s", "",
              "[interface wlan0]", f"dns = {VENUE}", "", "[probe lab]", f"url = {PROBE}"]
    return "\n".join(lines) + "\n"


def check(lb, tmp_path, trust_ca=True):
    cfg = Path(tmp_path) / "uplinkd.conf"
    cfg.write_text(config(lb, trust_ca))
    argv = [str(require_binary()), "check", "wlan0", "--json", "--config", str(cfg)]
    mark = len(lb.api_requests())
    proc = subprocess.run(lb.exec_argv("gw", argv), capture_output=True, text=True, timeout=30)
    try:
        rec = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"not one JSON record\n$ {' '.join(argv)}\nexit={proc.returncode}\n{proc.stdout}\n{proc.stderr}",
                    pytrace=False)
    return rec, proc.returncode, lb.api_requests()[mark:]


def describe(rec, code, requests):
    return f"exit={code}\nrecord={json.dumps(rec, indent=1)}\nAPI requests={requests}"


def test_the_lease_carries_the_api_uri(clab):
    lease = clab.lease_file.read_text()
    assert f'option captive-portal "{API_URI}";' in lease, lease


@pytest.mark.parametrize("web", ["internet", "portal-302"])
def test_an_api_saying_captive_gives_capport_and_its_login_page(clab, tmp_path, web):
    """An https user-portal-url is the portal URL, whatever the probes heard."""
    clab.set_answer({"captive": True, "user-portal-url": LOGIN, "venue-info-url": f"https://{API_HOST}/venue"})
    with web_mode(clab, web):
        rec, code, requests = check(clab, tmp_path)
    info = describe(rec, code, requests)
    assert (rec["verdict"], rec["reason"], rec["portal_url"], code) == ("captive", "capport", LOGIN, 1), info
    assert rec["families"]["ipv4"]["portal_url"] == LOGIN, info
    api = rec["captive_portal_api"]
    assert (api["uri"], api["captive"], api["user_portal_url"], api["problem"]) == (API_URI, True, LOGIN, None), info
    # Asked once, from the uplink's address, for its JSON.
    assert [(r["client"], r["path"], r["accept"]) for r in requests] == [(CLIENT, "/api", "application/captive+json")], info


@pytest.mark.parametrize("answer, refused", [
    ({"captive": True, "user-portal-url": HTTP_PAGE}, REFUSED_HTTP_PAGE),
    ({"captive": True}, None),
], ids=["http-user-portal-url", "no-user-portal-url"])
def test_an_api_without_an_https_page_leaves_the_portal_url_to_the_probes(clab, tmp_path, answer, refused):
    """RFC 8908 wants an https login page: without one, the probes' Location is the
    portal URL; the API's own URI (JSON, not a page) is never offered, and
    captive_portal_api says what the API answered and what was refused."""
    clab.set_answer(answer)
    with web_mode(clab, "portal-302"):
        rec, code, requests = check(clab, tmp_path)
    info = describe(rec, code, requests)
    assert (rec["verdict"], rec["reason"], rec["portal_url"], code) == ("captive", "capport", LOCATION, 1), info
    ipv4 = rec["families"]["ipv4"]
    assert (ipv4["verdict"], ipv4["reason"], ipv4["portal_url"]) == ("captive", "capport", LOCATION), info
    assert [p["status"] for p in rec["probes"]] == [302], info
    api = rec["captive_portal_api"]
    assert (api["uri"], api["captive"], api["user_portal_url"], api["problem"]) == (API_URI, True, None, refused), info
    assert API_URI not in json.dumps({k: v for k, v in rec.items() if k != "captive_portal_api"}), info
    assert len(requests) == 1, info


def test_an_api_saying_captive_with_no_page_and_no_portal_heard_offers_none(clab, tmp_path):
    """The probes validate (the portal lets them through) and the API names no https
    page: captive by the API's word, with no portal URL rather than the API's URI."""
    clab.set_answer({"captive": True, "user-portal-url": HTTP_PAGE})
    clab.web.set_mode("internet")
    rec, code, requests = check(clab, tmp_path)
    info = describe(rec, code, requests)
    assert (rec["verdict"], rec["reason"], rec["portal_url"], code) == ("captive", "capport", None, 1), info
    assert rec["captive_portal_api"]["problem"] == REFUSED_HTTP_PAGE, info
    assert API_URI not in json.dumps({k: v for k, v in rec.items() if k != "captive_portal_api"}), info


def test_an_api_saying_not_captive_is_no_proof_while_http_is_intercepted(clab, tmp_path):
    clab.set_answer({"captive": False})
    with web_mode(clab, "portal-302"):
        rec, code, requests = check(clab, tmp_path)
    info = describe(rec, code, requests)
    assert rec["verdict"] == "captive" and rec["reason"] == "redirect", info
    assert rec["captive_portal_api"]["captive"] is False and len(requests) == 1, info


def test_an_open_session_is_online_with_what_it_has_left(clab, tmp_path):
    clab.set_answer({"captive": False, "seconds-remaining": 600, "bytes-remaining": 1000000, "can-extend-session": True})
    clab.web.set_mode("internet")
    rec, code, requests = check(clab, tmp_path)
    info = describe(rec, code, requests)
    assert (rec["verdict"], rec["reason"], code) == ("online", "validated", 0), info
    api = rec["captive_portal_api"]
    assert (api["seconds_remaining"], api["bytes_remaining"], api["can_extend_session"]) == (600, 1000000, True), info


def test_an_untrusted_certificate_is_no_answer(clab, tmp_path):
    """Without the lab's CA the API's certificate fails verification: its word is
    not taken, and the probes decide."""
    clab.set_answer({"captive": True, "user-portal-url": LOGIN})
    clab.web.set_mode("internet")
    rec, code, requests = check(clab, tmp_path, trust_ca=False)
    info = describe(rec, code, requests)
    assert (rec["verdict"], rec["reason"]) == ("online", "validated"), info
    assert rec["captive_portal_api"]["captive"] is None and rec["captive_portal_api"]["problem"], info


def test_the_agent_publishes_the_session(clab, tmp_path):
    """The agent's state file and `status --json` carry when the session ends."""
    clab.set_answer({"captive": False, "seconds-remaining": 900, "bytes-remaining": 5000})
    clab.web.set_mode("internet")
    cfg = Path(tmp_path) / "uplinkd.conf"
    cfg.write_text(config(clab))
    state = Path(tmp_path) / "state"
    hooks = Path(tmp_path) / "hooks"
    hooks.mkdir()
    binary = str(require_binary())
    agent = subprocess.Popen(clab.exec_argv("gw", [binary, "run", "--config", str(cfg), "--state", str(state),
                                                   "--hooks-dir", str(hooks)]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    started = time.time()
    try:
        deadline = time.monotonic() + 20
        status = None
        while time.monotonic() < deadline:
            if state.exists():
                done = subprocess.run([binary, "status", "--json", "--state", str(state)], capture_output=True, text=True)
                status = json.loads(done.stdout) if done.stdout.strip() else None
                uplink = next((u for u in (status or {}).get("uplinks", []) if u["interface"] == "wlan0"), None)
                if uplink and uplink["verdict"] == "online" and uplink["session_ends"] is not None:
                    break
            time.sleep(0.1)
        else:
            pytest.fail(f"no online wlan0 with a session in the state file within 20 s: {status}", pytrace=False)
        assert started + 900 - 5 <= uplink["session_ends"] <= time.time() + 900 + 1, status
        assert uplink["session_bytes_remaining"] == 5000, status
        assert " 5000\n" in state.read_text() or " 5000 " in state.read_text(), state.read_text()
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(timeout=15)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait()


def test_the_agent_state_file_and_hooks_get_the_probes_page(clab, tmp_path, agent):
    """The agent decides the portal URL the same way: an http user-portal-url is
    refused, the probes' Location goes to the state file, `status` and the hooks."""
    clab.set_answer({"captive": True, "user-portal-url": HTTP_PAGE})
    with web_mode(clab, "portal-302"):
        run = agent(clab, config(clab))
        st = ok(run.wait_state, lambda s: s["uplinks"].get("wlan0", {}).get("verdict") == "captive", 20,
                "wlan0 captive in the state file")
        events = ok(run.wait_hooks, [("verdict", "wlan0", "captive", "capport")], 10)
        hook = next(e for e in events if e.event == "verdict" and e.iface == "wlan0")
        if hook.portal != LOCATION:
            fail(run, f"UPLINK_PORTAL_URL {hook.portal!r}, expected the probes' Location {LOCATION}")
        if st["uplinks"]["wlan0"]["portal_url"] != LOCATION:
            fail(run, f"the state file's PORTAL-URL must be {LOCATION}: {st['uplinks']['wlan0']}")
        status = json.loads(run.status("--json").stdout)
        uplink = next(u for u in status["uplinks"] if u["interface"] == "wlan0")
        if (uplink["verdict"], uplink["portal_url"]) != ("captive", LOCATION):
            fail(run, f"status --json: {uplink}")
        if API_URI in run.state_text() or API_URI in json.dumps(status):
            fail(run, "the API's URI is offered as a page")
        if REFUSED_HTTP_PAGE not in run.stderr():
            fail(run, f"the agent's log must say what it refused: {REFUSED_HTTP_PAGE}")
        if run.stop() != 0:
            fail(run, "TERM must exit 0")
        final = parse_state(run.state_text())
        if final["uplinks"]["wlan0"]["portal_url"] != LOCATION:
            fail(run, f"the final state keeps the portal URL: {final['uplinks']['wlan0']}")
