"""Self-tests of the lab itself (no uplinkd needed), so a broken lab is not
mistaken for an uplinkd bug. The HTTP checks use curl inside the gateway
namespace and are skipped if curl is not installed."""

import json
import shutil
import subprocess
import time

import pytest

URL = "http://203.0.113.80"
needs_curl = pytest.mark.skipif(shutil.which("curl") is None,
                                reason="curl not installed (apt-get install -y curl)")


def curl(lb, iface, path, max_time=3):
    """(curl exit code, 'HTTP_CODE REDIRECT_URL', body) of one request from gw."""
    argv = ["curl", "-s", "--max-time", str(max_time), "-w", "\n%{http_code} %{redirect_url}"]
    if iface:
        argv += ["--interface", iface]
    argv.append(URL + path)
    p = subprocess.run(lb.exec_argv("gw", argv), capture_output=True, text=True, timeout=30)
    body, _, meta = p.stdout.rpartition("\n")
    return p.returncode, meta.strip(), body


def test_topology(lab):
    links = {l["ifname"]: l for l in json.loads(lab.ip("gw", "-j", "addr", "show").stdout)}
    want = {"eth0": "10.231.1.2", "wlan0": "10.231.2.2", "wwan0": "10.231.3.2", "eth1": "169.254.23.2"}
    for iface, addr in want.items():
        assert iface in links, links.keys()
        assert "LOWER_UP" in links[iface]["flags"] and "UP" in links[iface]["flags"]
        v4 = [a["local"] for a in links[iface]["addr_info"] if a["family"] == "inet"]
        assert v4 == [addr]
    route = lab.ip("gw", "route", "get", "203.0.113.80").stdout
    assert " dev wwan0 " in route, f"preferred default route must be the dead uplink: {route}"


@needs_curl
def test_internet_bound_and_unbound(lab, serve, tmp_path):
    srv = serve(lab, "inet", "internet", log=tmp_path / "log")
    assert curl(lab, "eth0", "/generate_204")[:2] == (0, "204")
    rc, meta, body = curl(lab, "eth0", "/hotspot-detect.html")
    assert (rc, meta) == (0, "200") and "Success" in body
    assert curl(lab, "eth0", "/success.txt")[1:] == ("200", "success\n")
    assert curl(lab, "eth0", "/nope")[1] == "404"
    assert {ln[0] for ln in srv.log_lines()} == {"10.231.1.2"}
    # Without binding, traffic follows the preferred route (wwan0 -> refused).
    assert curl(lab, None, "/generate_204")[0] == 7


@needs_curl
@pytest.mark.parametrize("mode, code, needle", [
    ("portal-302", "302 http://203.0.113.80/login?orig=1", ""),
    ("portal-200", "200", "<LoginURL>http://203.0.113.80/wispr/login?res=1</LoginURL>"),
    ("portal-meta", "200", 'url=http://203.0.113.80/portal/welcome"'),
    ("portal-511", "511", 'url=http://203.0.113.80/portal/511login"'),
    ("proxy-garbage", "200", "OK"),
    ("proxy-5xx", "502", ""),
])
def test_portal_modes(lab, serve, mode, code, needle):
    serve(lab, "portal", mode)
    rc, meta, body = curl(lab, "wlan0", "/generate_204")
    assert rc == 0 and meta == code and needle in body


@needs_curl
def test_dead_refused_and_blackhole(lab, blackhole):
    assert curl(lab, "wwan0", "/generate_204")[0] == 7       # RST: couldn't connect
    blackhole(lab, "dead")
    start = time.monotonic()
    assert curl(lab, "wwan0", "/generate_204", max_time=1)[0] == 28   # timed out
    assert time.monotonic() - start >= 0.9


def test_peer_down_drops_carrier(fresh_lab):
    role, peer = fresh_lab.peer_of("eth0")
    fresh_lab.ip(role, "link", "set", peer, "down")
    fresh_lab.wait_lower_up("eth0", False)
    fresh_lab.ip(role, "link", "set", peer, "up")
    fresh_lab.wait_lower_up("eth0", True)
