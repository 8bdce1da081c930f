"""End-to-end tests of `uplinkd links` (snapshot and --watch) in the namespace lab.

Run as root: sudo python3 -m pytest -v Tests/integration/test_links.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).
Only netlink is exercised: links, addresses and routes change inside the lab's
namespaces; no packet leaves them.

Kernel facts these tests rely on (checked on Linux 6.x):
- IPv4 routes that die with an address or an admin-down link are flushed
  WITHOUT an RTM_DELROUTE notification; the tracker must infer it.
- A carrier change of a veth whose ifindex equals its peer's (eth0 here: 2 and 2)
  is "non-urgent" for linkwatch and reported up to ~1 s later.
"""

import json
import signal
import subprocess
import time

import pytest

from lab import UPLINKS, UPLINK_BY_IFACE, run
from linkswatch import LinksWatch, WatchError, links_argv, match, snapshot_problem
from pytesthelp import require_binary

KINDS = {"eth0": "ethernet", "wlan0": "wifi", "wwan0": "wwan", "eth1": "ethernet"}
GATEWAYS = [u for u in UPLINKS if u.gateway]          # eth0, wlan0, wwan0
MAIN_TABLE = 254


class Snapshot:
    """One run of `uplinkd links [--json] [--all] [--config F]` in gw."""

    def __init__(self, lb, *, json_out=True, all_=False, config=None):
        self.argv = lb.exec_argv("gw", links_argv(require_binary(), json_out=json_out,
                                                  all_=all_, config=config))
        try:
            proc = subprocess.run(self.argv, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"uplinkd links did not finish within 30s: {' '.join(self.argv)}\n"
                        f"stdout: {exc.stdout!r}\nstderr: {exc.stderr!r}", pytrace=False)
        self.rc, self.out, self.err = proc.returncode, proc.stdout, proc.stderr

    def __str__(self):
        return (f"$ {' '.join(self.argv)}\nexit={self.rc}\n--- stdout ---\n{self.out}"
                f"--- stderr ---\n{self.err}")

    def lines(self):
        return [ln for ln in self.out.splitlines() if ln.strip()]

    def by_name(self) -> dict:
        assert self.rc == 0, f"links must exit 0\n{self}"
        recs = {}
        for line in self.lines():
            try:
                rec = json.loads(line)
            except ValueError as exc:
                pytest.fail(f"stdout line is not JSON ({exc}): {line!r}\n{self}", pytrace=False)
            problem = snapshot_problem(rec)
            assert not problem, f"bad interface object ({problem}): {line}\n{self}"
            assert rec["interface"] not in recs, f"{rec['interface']} listed twice\n{self}"
            recs[rec["interface"]] = rec
        return recs


@pytest.fixture
def watch():
    """watch(lab, all_=False, config=None) -> LinksWatch; all stopped at teardown."""
    started = []

    def start(lb, **kw):
        try:
            w = LinksWatch(lb, require_binary(), **kw)
        except WatchError as exc:
            msg = str(exc)
        else:
            started.append(w)
            return w
        pytest.fail(msg, pytrace=False)

    yield start
    for w in started:
        w.stop()


def fail(w, msg):
    pytest.fail(f"{msg}\n{w.transcript()}", pytrace=False)


def wait(w, pred, timeout=5.0, what=""):
    try:
        return w.wait_for(pred, timeout, what)
    except WatchError as exc:
        msg = str(exc)        # failed outside the handler: no chained traceback
    pytest.fail(msg, pytrace=False)


def sync(w, lb, **kw):
    try:
        return w.sync(lb, **kw)
    except WatchError as exc:
        msg = str(exc)
    pytest.fail(msg, pytrace=False)


def expect_verdict(w, ev, verdict, reason):
    if (ev["verdict"], ev["reason"]) != (verdict, reason):
        fail(w, f"{ev['event']} on {ev['interface']}: verdict/reason {ev['verdict']}/{ev['reason']}, "
                f"expected {verdict}/{reason}: {ev}")


def expect_stopped_ok(w, sig=signal.SIGTERM):
    rc = w.stop(sig)
    if rc != 0:
        fail(w, f"uplinkd links --watch must exit 0 on {sig.name}, got "
                f"{'no exit within 5s (killed)' if rc is None else rc}")


def ifindex(lb, iface):
    return lb.link(iface)["ifindex"]


def subset(d, keys):
    return {k: d.get(k) for k in keys}


def is_link_local(addr_info) -> bool:
    local = addr_info["local"]
    return local.lower().startswith("fe80:") or local.startswith("169.254.")


# --- 1. snapshot ------------------------------------------------------------

def test_snapshot_lists_uplinks(lab):
    snap = Snapshot(lab)
    recs = snap.by_name()
    assert set(recs) == {"eth0", "wlan0", "wwan0"}, f"uplinks must be eth0, wlan0, wwan0\n{snap}"
    kernel = lab.links()
    for u in GATEWAYS:
        rec = recs[u.iface]
        got = subset(rec, ("index", "kind", "uplink", "admin_up", "carrier", "operstate"))
        want = {"index": kernel[u.iface]["ifindex"], "kind": KINDS[u.iface], "uplink": True,
                "admin_up": True, "carrier": True, "operstate": "up"}
        assert got == want, f"{u.iface}: {rec}\n{snap}"
        address, prefix = u.gw_addr.split("/")
        v4 = [subset(a, ("address", "prefix", "family", "scope", "link_local"))
              for a in rec["addresses"] if a["family"] == "ipv4"]
        assert v4 == [{"address": address, "prefix": int(prefix), "family": "ipv4",
                       "scope": "global", "link_local": False}], f"{u.iface}: {rec}\n{snap}"
        for a in rec["addresses"]:
            if a["family"] == "ipv6" and a["address"].lower().startswith("fe80:"):
                assert a["link_local"] is True and a["prefix"] == 64, f"{u.iface}: {a}\n{snap}"
        routes = [subset(r, ("family", "gateway", "metric", "table")) for r in rec["default_routes"]]
        assert routes == [{"family": "ipv4", "gateway": u.gateway, "metric": u.metric,
                           "table": MAIN_TABLE}], f"{u.iface}: {rec}\n{snap}"


def test_equal_metric_default_routes_on_two_uplinks_are_both_seen(fresh_lab):
    """Two uplinks' default routes of the same metric (networkd gives every DHCP link
    1024; `ip route append`): libnl's route cache keeps only one of the IPv4 pair, the
    raw dump both (and each next hop of a multipath route)."""
    lb = fresh_lab
    lb.ip("gw", "route", "del", "default", "dev", "wlan0")
    lb.ip("gw", "route", "append", "default", "via", "10.231.2.1", "dev", "wlan0", "metric", "300")
    lb.ip("gw", "route", "add", "default", "table", "100", "nexthop", "via", "10.231.1.1", "dev", "eth0",
          "nexthop", "via", "10.231.2.1", "dev", "wlan0")
    snap = Snapshot(lb)
    recs = snap.by_name()
    for iface, gateway in (("eth0", "10.231.1.1"), ("wlan0", "10.231.2.1")):
        routes = sorted((r["table"], r["metric"]) for r in recs.get(iface, {}).get("default_routes", [])
                        if r["family"] == "ipv4" and r["gateway"] == gateway)
        assert routes == [(100, 0), (MAIN_TABLE, 300)], f"{iface}: {recs.get(iface)}\n{snap}"


def test_snapshot_all(lab):
    snap = Snapshot(lab, all_=True)
    recs = snap.by_name()
    kernel = lab.links()
    assert set(recs) == set(kernel), f"--all must list every interface of gw: {sorted(kernel)}\n{snap}"
    for name, rec in recs.items():
        assert rec["index"] == kernel[name]["ifindex"], f"{name}: {rec}\n{snap}"
        assert rec["uplink"] is (name in ("eth0", "wlan0", "wwan0")), f"{name}: {rec}\n{snap}"
    assert recs["lo"]["uplink"] is False, str(snap)
    eth1 = recs["eth1"]
    assert (eth1["kind"], eth1["uplink"], eth1["carrier"], eth1["default_routes"]) == \
        ("ethernet", False, True, []), f"{eth1}\n{snap}"
    v4 = [subset(a, ("address", "prefix", "family", "link_local"))
          for a in eth1["addresses"] if a["family"] == "ipv4"]
    assert v4 == [{"address": "169.254.23.2", "prefix": 16, "family": "ipv4",
                   "link_local": True}], f"{eth1}\n{snap}"


def test_snapshot_human(lab):
    snap = Snapshot(lab, json_out=False)
    assert snap.rc == 0, str(snap)
    lines = snap.lines()
    assert len(lines) == 3, f"one line per uplink expected\n{snap}"
    for name in ("eth0", "wlan0", "wwan0"):
        mine = [ln for ln in lines if ln.startswith(name) and not ln[len(name):][:1].isalnum()]
        assert len(mine) == 1, f"no line starting with {name}\n{snap}"
        assert KINDS[name] in mine[0], f"kind {KINDS[name]} missing from {mine[0]!r}\n{snap}"


# --- 10. configuration overrides ----------------------------------------------

def test_config_uplinks_override(lab, tmp_path):
    cfg = tmp_path / "uplinkd.conf"
    cfg.write_text("[uplinks]\ninterfaces = eth1\n")
    snap = Snapshot(lab, config=cfg)
    recs = snap.by_name()
    assert list(recs) == ["eth1"], f"[uplinks] interfaces = eth1 must list only eth1\n{snap}"
    assert recs["eth1"]["uplink"] is True, str(snap)
    snap_all = Snapshot(lab, all_=True, config=cfg)
    uplinks = sorted(n for n, r in snap_all.by_name().items() if r["uplink"])
    assert uplinks == ["eth1"], f"with --all only eth1 may be an uplink\n{snap_all}"


def test_config_kind_override(lab, tmp_path):
    cfg = tmp_path / "uplinkd.conf"
    cfg.write_text("[interface eth0]\nkind = wifi\n\n[interface eth1]\nkind = wwan\n")
    snap = Snapshot(lab, all_=True, config=cfg)
    recs = snap.by_name()
    got = {n: (recs[n]["kind"], recs[n]["uplink"]) for n in ("eth0", "eth1", "wlan0")}
    # eth1 is a veth without a default route: not an uplink, whatever its kind.
    assert got == {"eth0": ("wifi", True), "eth1": ("wwan", False), "wlan0": ("wifi", True)}, str(snap)


def test_bridge_and_bond_ports_are_not_uplinks(fresh_lab):
    """A port of a bridge (an access point's Wi-Fi inside br-lan, say) serves the LAN:
    `links` names its master, and `interfaces = auto` never takes it as an uplink."""
    lb = fresh_lab
    lb.ip("gw", "link", "add", "br9", "type", "bridge")
    lb.ip("gw", "link", "set", "eth1", "master", "br9")
    snap = Snapshot(lb, all_=True)
    recs = snap.by_name()
    assert recs["eth1"]["master_index"] == recs["br9"]["index"], str(snap)
    assert recs["eth1"]["uplink"] is False and recs["eth0"]["master_index"] is None, str(snap)


# --- 2. carrier ---------------------------------------------------------------

def test_watch_carrier(fresh_lab, watch):
    w = watch(fresh_lab)
    names = sorted(o["interface"] for o in w.initial)
    if names != ["eth0", "wlan0", "wwan0"]:
        fail(w, f"the watch must first print the uplinks eth0, wlan0, wwan0; got {names}")
    index = ifindex(fresh_lab, "eth0")
    role, peer = fresh_lab.peer_of("eth0")
    fresh_lab.ip(role, "link", "set", peer, "down")
    ev = wait(w, match("carrier-down", "eth0"))
    assert ev["index"] == index, f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "down", "no-carrier")
    fresh_lab.ip(role, "link", "set", peer, "up")
    ev = wait(w, match("carrier-up", "eth0"))
    assert ev["index"] == index, f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "unknown", "needs-probe")
    expect_stopped_ok(w)


# --- 3. admin state, and events about uplinks only without --all --------------

def test_watch_admin_down_and_uplink_filter(fresh_lab, watch):
    w = watch(fresh_lab)
    fresh_lab.ip("gw", "link", "set", "wlan0", "down")
    # Admin-down also makes the kernel drop wlan0's default route, so wlan0 (a veth)
    # stops being an uplink with this very event; the event must still be printed,
    # or a consumer of the uplink stream never learns that wlan0 went down.
    ev = wait(w, match("admin-down", "wlan0"),
              what="admin-down wlan0 (an uplink until this event) without --all")
    assert ev["index"] == ifindex(fresh_lab, "wlan0"), f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "down", "admin-down")
    # eth1 is no uplink: without --all nothing about it may be printed.
    fresh_lab.ip("gw", "link", "set", "eth1", "down")
    fresh_lab.ip("gw", "link", "set", "eth1", "up")
    sync(w, fresh_lab)
    if w.about("eth1"):
        fail(w, f"events about eth1 (not an uplink) without --all: {w.about('eth1')}")
    expect_stopped_ok(w, signal.SIGINT)


def test_watch_admin_down_all(fresh_lab, watch):
    w = watch(fresh_lab, all_=True)
    fresh_lab.ip("gw", "link", "set", "wlan0", "down")
    ev = wait(w, match("admin-down", "wlan0"))
    assert ev["index"] == ifindex(fresh_lab, "wlan0"), f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "down", "admin-down")
    expect_stopped_ok(w, signal.SIGINT)


def test_watch_admin_up_after_silent_route_flush(fresh_lab, watch):
    """Admin-down makes the kernel drop wlan0's default route without telling
    (no RTM_DELROUTE); after admin-up the judgement must be no-route, not needs-probe."""
    w = watch(fresh_lab, all_=True)
    fresh_lab.ip("gw", "link", "set", "wlan0", "down")
    wait(w, match("admin-down", "wlan0"))
    fresh_lab.ip("gw", "link", "set", "wlan0", "up")
    ev = wait(w, match("admin-up", "wlan0"))
    routes = fresh_lab.ip("gw", "route", "show", "default", "dev", "wlan0").stdout.strip()
    assert routes == "", f"lab assumption broken: kernel kept {routes!r}"
    expect_verdict(w, ev, "down", "no-route")
    expect_stopped_ok(w)


# --- 4. addresses -------------------------------------------------------------

def test_watch_addresses(fresh_lab, watch, capsys):
    w = watch(fresh_lab, all_=True)
    index = ifindex(fresh_lab, "eth0")
    fresh_lab.ip("gw", "addr", "add", "10.231.1.7/24", "dev", "eth0")
    ev = wait(w, match("address-added", "eth0", address="10.231.1.7"))
    assert subset(ev, ("index", "prefix", "family")) == {"index": index, "prefix": 24, "family": "ipv4"}, \
        f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "unknown", "needs-probe")
    fresh_lab.ip("gw", "addr", "del", "10.231.1.7/24", "dev", "eth0")
    ev = wait(w, match("address-removed", "eth0", address="10.231.1.7"))
    assert subset(ev, ("index", "prefix", "family")) == {"index": index, "prefix": 24, "family": "ipv4"}, \
        f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "unknown", "needs-probe")

    start = len(w.events)
    fresh_lab.ip("gw", "addr", "flush", "dev", "eth0")
    left = fresh_lab.addresses("eth0")
    if not left:
        reason = "no-address"
    elif all(is_link_local(a) for a in left):
        reason = "link-local-only"
    else:
        pytest.fail(f"lab assumption broken: flush left {left}")
    ev = wait(w, match("address-removed", "eth0", address="10.231.1.2"))
    assert subset(ev, ("prefix", "family")) == {"prefix": 24, "family": "ipv4"}, f"{ev}\n{w.transcript()}"
    sync(w, fresh_lab)
    last = [e for e in w.about("eth0")][-1]
    expect_verdict(w, last, "down", reason)
    inferred = [e for e in w.events[start:] if e.get("interface") == "eth0" and e["event"] == "route-removed"]
    with capsys.disabled():
        print(f"\n[links] kernel left {len(left)} address(es) on eth0 -> {reason}; the kernel's silent "
              f"flush of eth0's default route was {'reported as ' + json.dumps(inferred) if inferred else 'not reported'}")
    expect_stopped_ok(w)


# --- 5. default routes --------------------------------------------------------

def test_watch_default_route(fresh_lab, watch):
    w = watch(fresh_lab, all_=True)
    u = UPLINK_BY_IFACE["eth0"]
    facts = {"index": ifindex(fresh_lab, "eth0"), "family": "ipv4", "gateway": u.gateway,
             "metric": u.metric, "table": MAIN_TABLE}
    fresh_lab.ip("gw", "route", "del", "default", "via", u.gateway, "dev", "eth0", "metric", str(u.metric))
    ev = wait(w, match("route-removed", "eth0"))
    assert subset(ev, facts) == facts, f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "down", "no-route")
    fresh_lab.ip("gw", "route", "add", "default", "via", u.gateway, "dev", "eth0", "metric", str(u.metric))
    ev = wait(w, match("route-added", "eth0"))
    assert subset(ev, facts) == facts, f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "unknown", "needs-probe")
    # A non-default route is no event.
    fresh_lab.ip("gw", "route", "add", "198.51.100.0/24", "via", u.gateway, "dev", "eth0")
    sync(w, fresh_lab)
    extra = [e for e in w.about("eth0") if e["event"].startswith("route-")][2:]
    if extra:
        fail(w, f"route events for a non-default route: {extra}")
    expect_stopped_ok(w)


# --- 6-8. interfaces appearing, disappearing, renamed ------------------------

def add_veth(lb, name, peer):
    lb.ip("gw", "link", "add", name, "type", "veth", "peer", "name", peer)
    return ifindex(lb, name)


def test_watch_veth_appears_and_disappears(fresh_lab, watch):
    w = watch(fresh_lab, all_=True)
    index = add_veth(fresh_lab, "wwan1", "wwan1p")
    ev = wait(w, match("appeared", "wwan1"))
    assert (ev["index"], ev["kind"]) == (index, "wwan"), f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "down", "admin-down")
    fresh_lab.ip("gw", "link", "del", "wwan1")
    ev = wait(w, match("disappeared", "wwan1"))
    assert ev["index"] == index, f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "down", "no-such-interface")
    expect_stopped_ok(w)


def test_watch_rename(fresh_lab, watch):
    w = watch(fresh_lab, all_=True)
    index = add_veth(fresh_lab, "wwan1", "wwan1p")
    wait(w, match("appeared", "wwan1"))
    fresh_lab.ip("gw", "link", "set", "wwan1", "down")
    fresh_lab.ip("gw", "link", "set", "wwan1", "name", "wwan9")
    ev = wait(w, match("renamed", "wwan9"))
    assert (ev["index"], ev["previous_name"]) == (index, "wwan1"), f"{ev}\n{w.transcript()}"
    expect_verdict(w, ev, "down", "admin-down")
    names = set(Snapshot(fresh_lab, all_=True).by_name())
    assert "wwan9" in names and "wwan1" not in names, names
    expect_stopped_ok(w)


def test_watch_recreated_interface_gets_new_index(fresh_lab, watch):
    w = watch(fresh_lab, all_=True)
    old = add_veth(fresh_lab, "wwan1", "wwan1p")
    wait(w, match("appeared", "wwan1", index=old))
    fresh_lab.ip("gw", "link", "del", "wwan1")
    fresh_lab.ip("gw", "link", "add", "wwan1", "type", "veth", "peer", "name", "wwan1p")
    new = ifindex(fresh_lab, "wwan1")
    assert new != old, "lab assumption broken: the kernel reused the ifindex"
    wait(w, match("disappeared", "wwan1", index=old))
    ev = wait(w, match("appeared", "wwan1"))
    assert (ev["index"], ev["kind"]) == (new, "wwan"), \
        f"re-created wwan1 must appear with its new index {new} (old {old}): {ev}\n{w.transcript()}"
    expect_stopped_ok(w)


# --- 9. burst with a tiny receive buffer -------------------------------------

PAIRS = 30
ROUNDS = 10
QUIESCE_S = 10.0     # the stream must agree with the kernel this long after the barrier
QUIET_S = 2.0        # ... and still agree after reading this much longer


def test_watch_burst_tiny_buffer(fresh_lab, watch, tmp_path, capsys):
    lb = fresh_lab
    a = [f"bst{i}" for i in range(PAIRS)]          # stay admin up; carrier follows the peer
    p = [f"bst{i}p" for i in range(PAIRS)]         # flipped admin down/up
    # No IPv6 on the burst links: no late DAD/addrconf notifications that could
    # overflow the buffer again after the burst and so mask lost updates.
    run(lb.exec_argv("gw", ["sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1"]))
    cmds = []
    for x, y in zip(a, p):
        cmds += [f"link add {x} type veth peer name {y}", f"link set {x} up", f"link set {y} up"]
    lb.ip_batch("gw", cmds)
    lb.wait_links(lambda L: all(L[n]["operstate"] == "UP" for n in a + p), "30 veth pairs up")

    cfg = tmp_path / "uplinkd.conf"
    cfg.write_text("[links]\nreceive-buffer = 4KiB\n")
    w = watch(lb, all_=True, config=cfg)
    init = {o["interface"]: o for o in w.initial}
    missing = [n for n in a + p if n not in init or not init[n]["carrier"]]
    if missing:
        fail(w, f"initial --all listing lacks (or shows without carrier) {missing}")

    down = set(range(PAIRS // 2))                    # final state: peers 0..14 down, 15..29 up
    burst = []
    for _ in range(ROUNDS):
        burst += [f"link set {y} down" for y in p]
        burst += [f"link set {y} up" for y in p]
    burst += [f"link set {p[i]} down" for i in sorted(down)]
    lb.ip_batch("gw", burst)

    want_state = {}
    for i in range(PAIRS):
        want_state[a[i]] = "LOWERLAYERDOWN" if i in down else "UP"
        want_state[p[i]] = "DOWN" if i in down else "UP"
    # operstate is set where linkwatch sends its (possibly deferred) notification.
    kernel = lb.wait_links(lambda L: all(L[n]["operstate"] == s for n, s in want_state.items()),
                           "final operstates after the burst", timeout=15)
    sync(w, lb, timeout=15)      # fails if notifications are lost without a resync
    barrier = time.monotonic()

    def stream_problems():
        """How the stream (initial listing folded with the events) differs from the end state."""
        carrier = {n: init[n]["carrier"] for n in a + p}
        admin = {n: init[n]["admin_up"] for n in a + p}
        last = {}
        for ev in w.events:
            n = ev.get("interface")
            if n not in carrier:
                continue
            last[n] = ev
            if ev["event"] in ("carrier-up", "carrier-down"):
                carrier[n] = ev["event"] == "carrier-up"
            elif ev["event"] in ("admin-up", "admin-down"):
                admin[n] = ev["event"] == "admin-up"
        problems = []
        for i in range(PAIRS):
            x, y = a[i], p[i]
            up = i not in down
            if carrier[x] != up:
                problems.append(f"{x}: stream says carrier {carrier[x]}, kernel {up}")
            if admin[y] != up:
                problems.append(f"{y}: stream says admin_up {admin[y]}, kernel {up}")
            for n, want in ((x, ("down", "no-carrier")), (y, ("down", "admin-down"))):
                ev = last.get(n)
                if not up:
                    if ev is None or (ev["verdict"], ev["reason"]) != want:
                        problems.append(f"{n}: last event must say {want}, got {ev}")
                elif ev is not None and ev["reason"] in ("no-carrier", "admin-down", "no-such-interface"):
                    problems.append(f"{n}: is up with carrier, but last event says {ev}")
        return problems

    # The stream may lag behind the barrier (a resync may be deferred): it must
    # converge on the end state within the deadline, then stay there while quiet.
    deadline = barrier + QUIESCE_S
    while (problems := stream_problems()) and time.monotonic() < deadline and not w.eof:
        w.pump(deadline)
    converged = time.monotonic() - barrier
    if problems:
        fail(w, f"{QUIESCE_S}s after the barrier the watch stream still disagrees with the "
                f"final state:\n  " + "\n  ".join(problems))
    quiet_end = time.monotonic() + QUIET_S       # read whatever still comes for QUIET_S
    while time.monotonic() < quiet_end and not w.eof:
        w.pump(quiet_end)
    problems = stream_problems()
    if problems:
        fail(w, "after converging, the watch stream changed away from the final state:\n  "
                + "\n  ".join(problems))
    resyncs = [i for i, e in enumerate(w.events) if e["event"] == "resync"]
    with capsys.disabled():
        print(f"\n[links burst] {len(burst)} ip commands, {len(w.events)} events read, "
              f"{len(resyncs)} resync event(s): " +
              ("resync path exercised" if resyncs else
               "the kernel never overflowed the 4KiB buffer, resync path NOT exercised") +
              f"; stream agreed with the kernel {converged:.2f}s after the barrier")

    snap = Snapshot(lb, all_=True)
    recs = snap.by_name()
    for n in a + p:
        flags = kernel[n]["flags"]
        got = (recs[n]["admin_up"], recs[n]["carrier"]) if n in recs else None
        want = ("UP" in flags, "LOWER_UP" in flags)
        if got != want:
            problems.append(f"{n}: links --all says (admin_up, carrier) {got}, kernel {want}")
    assert not problems, "\n".join(problems) + f"\n{snap}"
    expect_stopped_ok(w)
