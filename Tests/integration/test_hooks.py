"""Tests of the shipped hooks (hooks/ in the repository).

- 50-route-failover, with the agent running in the namespace lab: the route the
  gateway uses for the lab's internet address (`ip route get`) follows the primary
  uplink, and comes back after recovery and hold-down; the backups keep their own
  default routes.
- Every shipped hook passes `shellcheck -s sh` (POSIX sh, no bashisms).
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentrun import AgentError, AgentRun, config_text
from lab import INTERNET_ADDR

HOOKS = Path(__file__).resolve().parents[2] / "hooks"
SHIPPED = sorted(p for p in HOOKS.iterdir() if p.is_file() and p.name != "README.md")


def route_dev(lb) -> str:
    """The device the gateway would use for the lab's internet address."""
    out = lb.ip("gw", "route", "get", INTERNET_ADDR).stdout.split()
    return out[out.index("dev") + 1]


def owned_routes(lb) -> str:
    return lb.ip("gw", "-4", "route", "show", "default", "proto", "77").stdout.strip()


def wait(run, predicate, timeout, what):
    try:
        return run.wait_until(predicate, timeout, what)
    except AgentError as exc:
        pytest.fail(f"{exc}\n{run.transcript()}", pytrace=False)


def test_route_failover_follows_the_primary(fresh_lab, serve, blackhole, tmp_path):
    lb = fresh_lab
    serve(lb, "inet", "internet")
    serve(lb, "portal", "internet")
    # Without the hook the gateway prefers wwan0 (metric 100), the dead uplink.
    assert route_dev(lb) == "wwan0"
    # Strict reverse-path filtering on a backup: the hook's option makes it loose.
    subprocess.run(lb.exec_argv("gw", ["sysctl", "-q", "-w", "net.ipv4.conf.wlan0.rp_filter=1"]), check=True)
    conf = tmp_path / "route-failover.conf"
    conf.write_text("LOOSE_RP_FILTER=yes\n")
    wrapper = ("#!/bin/sh\n"
               f"UPLINKD_ROUTE_FAILOVER_CONF='{conf}' exec '{HOOKS / '50-route-failover'}'\n")
    run = AgentRun(lb, tmp_path / "agent", config_text(), hooks={"50-route-failover": wrapper})
    run.start()
    try:
        wait(run, lambda: route_dev(lb) == "eth0", 15, "route via eth0 once eth0 is primary")
        assert "dev eth0" in owned_routes(lb) and "metric 10" in owned_routes(lb)
        # The backups' own default routes stay, so probes bound to them keep working.
        defaults = lb.ip("gw", "-4", "route", "show", "default").stdout
        assert "dev wlan0" in defaults and "dev wwan0" in defaults and "metric 300" in defaults

        rp = lambda: subprocess.run(lb.exec_argv("gw", ["cat", "/proc/sys/net/ipv4/conf/wlan0/rp_filter"]),  # noqa: E731
                                    capture_output=True, text=True).stdout.strip()
        wait(run, lambda: rp() == "2", 10, "rp_filter on wlan0 loosened by the hook")

        blackhole(lb, "inet")
        wait(run, lambda: route_dev(lb) == "wlan0", 20, "route moved to wlan0 after eth0's upstream was cut")
        assert "dev eth0" not in owned_routes(lb)

        lb.unblackhole("inet")
        wait(run, lambda: route_dev(lb) == "eth0", 25, "route back on eth0 after recovery and hold-down")

        # No online uplink: the hook's routes go, the kernel's own order applies again.
        lb.ip("portal", "link", "set", lb.peer_of("wlan0")[1], "down")
        lb.ip("inet", "link", "set", lb.peer_of("eth0")[1], "down")
        wait(run, lambda: owned_routes(lb) == "", 15, "preferred routes removed with no online uplink")
        assert run.stop() == 0
    finally:
        run.close()


@pytest.mark.parametrize("hook", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_hooks_pass_shellcheck(hook):
    if shutil.which("shellcheck") is None:
        if os.environ.get("UPLINKD_REQUIRE_LAB"):
            pytest.fail("shellcheck is not installed; .ci/setup installs it")
        pytest.skip("shellcheck not installed (apt-get install shellcheck)")
    done = subprocess.run(["shellcheck", "-s", "sh", str(hook)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_hooks_are_shipped():
    assert SHIPPED, "hooks/ holds no hook"


WISPR_PASSWORD = "s3cret &pass!"


def portal_agent(lb, tmp_path, method, password=WISPR_PASSWORD):
    """The agent watching only wlan0, with the portal-login hook configured for
    `method` (its configuration and credentials in tmp_path, not /etc)."""
    conf = tmp_path / "portal-login.conf"
    creds = tmp_path / "portal-credentials"
    creds.write_text(f"USERNAME=labuser\nPASSWORD={password}\n")
    creds.chmod(0o600)
    conf.write_text(f"METHOD={method}\nINTERFACES=wlan0\nCREDENTIALS={creds}\n")
    wrapper = ("#!/bin/sh\n"
               f"UPLINKD_PORTAL_CONF='{conf}' exec '{HOOKS / '60-portal-login'}'\n")
    run = AgentRun(lb, tmp_path / "agent", config_text(uplinks="wlan0"),
                   hooks={"60-portal-login": wrapper})
    return run.start()


def state_of(run, iface):
    st = run.state()
    return st["uplinks"].get(iface, {}).get("verdict") if st else None


@pytest.mark.parametrize("mode, method, success_line", [
    ("portal-wispr", "wispr", "WISPr: login on wlan0 succeeded"),
    ("portal-click", "click-through", "click-through: submitted the portal form on wlan0"),
])
def test_portal_login_brings_the_uplink_online(fresh_lab, serve, tmp_path, mode, method, success_line):
    serve(fresh_lab, "portal", mode)
    run = portal_agent(fresh_lab, tmp_path, method)
    try:
        wait(run, lambda: state_of(run, "wlan0") == "online", 20, "wlan0 online after the portal login")
        # Hooks run after the state is written: wait for the recording hook's line too.
        wait(run, lambda: "verdict wlan0 captive->online validated" in [e.short for e in run.events()], 10,
             "the hook line for wlan0 coming online")
        shorts = [e.short for e in run.events()]
        assert shorts[0].startswith("verdict wlan0 unknown->captive"), shorts
        assert "verdict wlan0 captive->online validated" in shorts, shorts
        log = run.stderr_since(0)
        assert success_line in log, log
        assert WISPR_PASSWORD not in log and "s3cret" not in log, "the password reached the log"
        assert "s3cret" not in run.state_path.read_text()
    finally:
        run.close()


def test_wispr_wrong_credentials_stay_captive_with_a_clear_line(fresh_lab, serve, tmp_path):
    serve(fresh_lab, "portal", "portal-wispr")
    run = portal_agent(fresh_lab, tmp_path, "wispr", password="Xq9-not-it")
    try:
        wait(run, lambda: "wrong credentials" in run.stderr_since(0), 15, "the refused login logged")
        # The agent probed again after the hook; the portal still answers for itself.
        wait(run, lambda: run.stderr_since(0).count("round on wlan0") >= 2, 10, "a second round on wlan0")
        assert state_of(run, "wlan0") == "captive"
        assert "Xq9-not-it" not in run.stderr_since(0), "the password reached the log"
    finally:
        run.close()


def test_notify_example_logs_and_posts_the_event(tmp_path):
    """The notify example run by hand, as a hook author would: its log line, and its
    JSON POST to a receiver on this host's loopback."""
    import http.server
    import json
    import threading

    received = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.handle_request, daemon=True).start()
    conf = tmp_path / "notify.conf"
    conf.write_text(f"URL=http://127.0.0.1:{server.server_address[1]}/events\n")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "UPLINKD_NOTIFY_CONF": str(conf),
           "UPLINK_EVENT": "verdict", "UPLINK_INTERFACE": "wlan0", "UPLINK_KIND": "wifi",
           "UPLINK_VERDICT": "captive", "UPLINK_PREVIOUS": "online", "UPLINK_REASON": "redirect",
           "UPLINK_PORTAL_URL": 'http://portal.example/a"b', "UPLINK_PRIMARY": "eth0",
           "UPLINK_PREVIOUS_PRIMARY": "eth0", "UPLINK_TIME": "1795000000"}
    done = subprocess.run([str(HOOKS / "90-notify")], env=env, capture_output=True, text=True, timeout=30)
    server.server_close()
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'wlan0 (wifi): online -> captive (redirect), portal http://portal.example/a"b\n'
    assert len(received) == 1
    event = json.loads(received[0])
    assert event["verdict"] == "captive" and event["portal_url"] == 'http://portal.example/a"b'
    assert event["time"] == 1795000000 and event["primary"] == "eth0"


def test_portal_login_command_method_gets_the_portal_url(tmp_path):
    """METHOD=command runs the user's program with the portal URL (hook run by hand)."""
    seen = tmp_path / "seen"
    command = tmp_path / "my-login"
    command.write_text(f"#!/bin/sh\nprintf '%s %s\\n' \"$1\" \"$UPLINK_INTERFACE\" > '{seen}'\n")
    command.chmod(0o755)
    conf = tmp_path / "portal-login.conf"
    conf.write_text(f"METHOD=command\nCOMMAND={command}\n")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "UPLINKD_PORTAL_CONF": str(conf),
           "UPLINK_EVENT": "verdict", "UPLINK_VERDICT": "captive", "UPLINK_INTERFACE": "wlan0",
           "UPLINK_PORTAL_URL": "http://portal.example/login?a=1"}
    done = subprocess.run([str(HOOKS / "60-portal-login")], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert seen.read_text() == "http://portal.example/login?a=1 wlan0\n"
    # Not captive: nothing to do.
    env["UPLINK_VERDICT"] = "online"
    seen.unlink()
    assert subprocess.run([str(HOOKS / "60-portal-login")], env=env, timeout=30).returncode == 0
    assert not seen.exists()
