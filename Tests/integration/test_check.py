"""End-to-end tests of `uplinkd check` inside the network-namespace lab.

Run as root: sudo python3 -m pytest -v Tests/integration
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).
"""

import json
import subprocess
import time

import pytest

from pytesthelp import require_binary

TIMEOUT_S = 2
PROBES = (
    ("http://203.0.113.80/generate_204", "--expect-status", "204"),
    ("http://203.0.113.80/hotspot-detect.html", "--expect-contains", "Success"),
    ("http://203.0.113.80/success.txt", "--expect-body", "success"),
)
KEYS = {"interface", "kind", "verdict", "reason", "portal_url", "elapsed_ms"}
EXIT = {"online": 0, "captive": 1, "limited": 2, "down": 3}


def check_argv(binary, *ifaces, json_out=True, timeout=TIMEOUT_S, probes=PROBES):
    """argv of `uplinkd check IFACE... [--json] --timeout N --url U --expect-... V ...`."""
    argv = [str(binary), "check", *ifaces]
    if json_out:
        argv.append("--json")
    argv += ["--timeout", str(timeout)]
    for url, flag, value in probes:
        argv += ["--url", url, flag, value]
    return argv


def _parse_json(line):
    try:
        return json.loads(line), None
    except ValueError as exc:
        return None, exc


class Result:
    def __init__(self, argv, proc, wall):
        self.argv, self.rc, self.out, self.err, self.wall = argv, proc.returncode, proc.stdout, proc.stderr, wall

    def __str__(self):
        return (f"$ {' '.join(self.argv)}\nexit={self.rc} wall={self.wall:.2f}s\n"
                f"--- stdout ---\n{self.out}--- stderr ---\n{self.err}")

    def records(self):
        recs = []
        for line in self.out.splitlines():
            if not line.strip():
                continue
            rec, err = _parse_json(line)
            if err is not None:
                pytest.fail(f"stdout line is not JSON ({err}): {line!r}\n{self}", pytrace=False)
            if not isinstance(rec, dict):
                pytest.fail(f"stdout line is not a JSON object: {line!r}\n{self}", pytrace=False)
            missing = KEYS - set(rec)
            assert not missing, f"JSON record lacks {sorted(missing)}: {rec}\n{self}"
            assert isinstance(rec["reason"], str), f"{rec}\n{self}"
            assert rec["portal_url"] is None or isinstance(rec["portal_url"], str), f"{rec}\n{self}"
            assert isinstance(rec["elapsed_ms"], (int, float)) and not isinstance(rec["elapsed_ms"], bool), f"{rec}\n{self}"
            recs.append(rec)
        return recs

    def record(self, iface):
        recs = self.records()
        assert len(recs) == 1, f"expected exactly one JSON line\n{self}"
        assert recs[0]["interface"] == iface, f"{recs[0]}\n{self}"
        return recs[0]


def uplinkd_check(lb, *ifaces, json_out=True, timeout=TIMEOUT_S, probes=PROBES):
    """Run `uplinkd check` inside the gateway namespace of lab `lb`."""
    argv = check_argv(require_binary(), *ifaces, json_out=json_out, timeout=timeout, probes=probes)
    full = lb.exec_argv("gw", argv)
    start = time.monotonic()
    try:
        proc = subprocess.run(full, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"uplinkd did not finish within 60s: {' '.join(full)}\n"
                    f"stdout: {exc.stdout!r}\nstderr: {exc.stderr!r}", pytrace=False)
    return Result(argv, proc, time.monotonic() - start)


def expect(res, iface, verdict, reason, portal_url=None, kind=None):
    rec = res.record(iface)
    got = (rec["verdict"], rec["reason"], rec["portal_url"])
    assert got == (verdict, reason, portal_url), f"got {rec}\n{res}"
    if kind is not None:
        assert rec["kind"] == kind, f"got {rec}\n{res}"
    assert res.rc == EXIT[verdict], f"exit {res.rc}, expected {EXIT[verdict]}\n{res}"
    return rec


# --- binary presence ------------------------------------------------------

def test_binary_present():
    require_binary()


# --- online ---------------------------------------------------------------

def test_eth0_online_bound_to_interface(lab, serve, tmp_path):
    log = tmp_path / "inet.log"
    srv = serve(lab, "inet", "internet", log=log)
    res = uplinkd_check(lab, "eth0")
    expect(res, "eth0", "online", "validated", None, kind="ethernet")
    lines = srv.log_lines()
    assert lines, f"inet server saw no requests\n{res}"
    clients = {ln[0] for ln in lines}
    assert clients == {"10.231.1.2"}, (
        f"probes must leave via eth0 (10.231.1.2) although the preferred default "
        f"route is wwan0; server log: {lines}\n{res}")


def test_human_output(lab, serve):
    serve(lab, "inet", "internet")
    res = uplinkd_check(lab, "eth0", json_out=False)
    assert res.rc == 0, str(res)
    lines = [ln for ln in res.out.splitlines() if ln.strip()]
    assert len(lines) == 1, str(res)
    for word in ("eth0", "online", "ethernet", "ms"):
        assert word in lines[0], f"{word!r} missing from human output\n{res}"


# --- captive portals ------------------------------------------------------

@pytest.mark.parametrize("mode, reason, portal_url", [
    ("portal-302", "redirect", "http://203.0.113.80/login?orig=1"),
    ("portal-200", "body-mismatch", "http://203.0.113.80/wispr/login?res=1"),
    ("portal-meta", "body-mismatch", "http://203.0.113.80/portal/welcome"),
    ("portal-511", "network-auth-required", "http://203.0.113.80/portal/511login"),
])
def test_wlan0_captive(lab, serve, mode, reason, portal_url):
    serve(lab, "portal", mode)
    res = uplinkd_check(lab, "wlan0")
    expect(res, "wlan0", "captive", reason, portal_url, kind="wifi")


# --- limited --------------------------------------------------------------

# Probes that expect an empty 204: a tiny 2xx body is a proxy's invention (limited).
# A probe that expects a body and gets another one sees a portal (captive), as the
# design's verdict table says, so the garbage case uses only 204 probes.
PROBES_204 = (
    ("http://203.0.113.80/generate_204", "--expect-status", "204"),
    ("http://203.0.113.80/generate_204?second", "--expect-status", "204"),
)


@pytest.mark.parametrize("mode, probes", [("proxy-garbage", PROBES_204), ("proxy-5xx", PROBES)])
def test_wlan0_bad_proxy(lab, serve, mode, probes):
    serve(lab, "portal", mode)
    res = uplinkd_check(lab, "wlan0", probes=probes)
    expect(res, "wlan0", "limited", "bad-proxy", None, kind="wifi")


def test_wwan0_blackhole_timeout(lab, blackhole):
    blackhole(lab, "dead")
    res = uplinkd_check(lab, "wwan0")
    rec = expect(res, "wwan0", "limited", "timeout", None, kind="wwan")
    assert rec["elapsed_ms"] < TIMEOUT_S * 1000 + 1500, (
        f"a blackholed uplink must be judged within --timeout {TIMEOUT_S}s plus slack\n{res}")


def test_wwan0_refused(lab):
    res = uplinkd_check(lab, "wwan0")
    expect(res, "wwan0", "limited", "refused", None, kind="wwan")


# --- bounded body patterns ---------------------------------------

WORDS_URL = "http://203.0.113.80/words.txt"
CATASTROPHIC = r"^(\w+\s?)+$"


def test_catastrophic_regex_ends_with_pattern_limit(lab, serve):
    # Swift Regex ran past 20 s on this 29-byte body. The search now stops at its
    # bound: limited with a reason of its own, neither online nor a portal.
    serve(lab, "inet", "internet")
    res = uplinkd_check(lab, "eth0", probes=((WORDS_URL, "--expect-regex", CATASTROPHIC),))
    expect(res, "eth0", "limited", "pattern-limit", None, kind="ethernet")
    # A generous bound (the search takes milliseconds), far below the 20 s it took.
    assert res.wall < 10, f"check took {res.wall:.1f}s\n{res}"


def test_matching_regex_still_validates(lab, serve):
    serve(lab, "inet", "internet")
    res = uplinkd_check(lab, "eth0", probes=((WORDS_URL, "--expect-regex", r"^(?:a+ )+a+!$"),))
    expect(res, "eth0", "online", "validated", None, kind="ethernet")


@pytest.mark.parametrize("pattern, message", [
    ("[" * 3000, "--expect-regex: regular expression of 3000 bytes, longer than the 1024 allowed"),
    ("(" * 65 + ")" * 65, "--expect-regex: invalid regular expression '" + "(" * 65 + ")" * 65
     + "': parentheses are too deeply nested at offset 65"),
])
def test_hostile_regex_is_a_usage_error_not_a_crash(lab, pattern, message):
    # 3,000 nested brackets made Swift's regex parser crash with SIGSEGV.
    res = uplinkd_check(lab, "eth0", probes=((WORDS_URL, "--expect-regex", pattern),))
    assert res.rc == 64, f"expected exit 64 (usage)\n{res}"
    assert message in res.err, f"expected {message!r} on stderr\n{res}"


# --- down -----------------------------------------------------------------

def test_eth0_no_carrier(fresh_lab):
    role, peer = fresh_lab.peer_of("eth0")
    fresh_lab.ip(role, "link", "set", peer, "down")
    fresh_lab.wait_lower_up("eth0", False)
    res = uplinkd_check(fresh_lab, "eth0")
    expect(res, "eth0", "down", "no-carrier", None, kind="ethernet")


def test_eth0_admin_down(fresh_lab):
    fresh_lab.ip("gw", "link", "set", "eth0", "down")
    res = uplinkd_check(fresh_lab, "eth0")
    expect(res, "eth0", "down", "admin-down", None, kind="ethernet")


def test_eth1_link_local_only(lab):
    res = uplinkd_check(lab, "eth1")
    expect(res, "eth1", "down", "link-local-only", None, kind="ethernet")


def test_eth0_no_address(fresh_lab, serve):
    serve(fresh_lab, "inet", "internet")
    fresh_lab.ip("gw", "addr", "flush", "dev", "eth0")
    res = uplinkd_check(fresh_lab, "eth0")
    expect(res, "eth0", "down", "no-address", None, kind="ethernet")


def test_eth0_no_route(fresh_lab, serve):
    serve(fresh_lab, "inet", "internet")
    fresh_lab.ip("gw", "route", "del", "default", "via", "10.231.1.1", "dev", "eth0")
    res = uplinkd_check(fresh_lab, "eth0")
    expect(res, "eth0", "down", "no-route", None, kind="ethernet")


def test_no_such_interface(lab):
    res = uplinkd_check(lab, "nosuch0")
    expect(res, "nosuch0", "down", "no-such-interface", None)


# --- usage errors ---------------------------------------------------------

@pytest.mark.parametrize("name", ["../etc", "a" * 20])
def test_bad_interface_name_is_usage_error(lab, name):
    res = uplinkd_check(lab, name)
    assert res.rc == 64, f"expected exit 64 (usage)\n{res}"
    assert res.err.strip(), f"expected a message on stderr\n{res}"


# --- several interfaces ---------------------------------------------------

def test_several_interfaces_highest_status(lab, serve):
    serve(lab, "inet", "internet")
    serve(lab, "portal", "portal-302")
    res = uplinkd_check(lab, "eth0", "wlan0", "wwan0")
    recs = res.records()
    assert len(recs) == 3, f"expected three JSON lines\n{res}"
    by_iface = {r["interface"]: r for r in recs}
    assert set(by_iface) == {"eth0", "wlan0", "wwan0"}, str(res)
    assert (by_iface["eth0"]["verdict"], by_iface["eth0"]["reason"]) == ("online", "validated"), str(res)
    assert (by_iface["wlan0"]["verdict"], by_iface["wlan0"]["reason"],
            by_iface["wlan0"]["portal_url"]) == ("captive", "redirect",
                                                 "http://203.0.113.80/login?orig=1"), str(res)
    assert (by_iface["wwan0"]["verdict"], by_iface["wwan0"]["reason"]) == ("limited", "refused"), str(res)
    assert res.rc == 2, f"exit status must be the highest per-interface status (2)\n{res}"
