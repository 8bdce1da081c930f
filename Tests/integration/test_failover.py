"""Failover at the agent's defaults, in the failover lab (failoverlab.py): the
agent runs with its BUILT-IN probes (resolved through each uplink's own DNS
server), every setting at its default except what a test names, and the
shipped route-failover hook, so the LAN behind the gateway follows the primary
as on a real gateway.

Run as root: sudo python3 -m pytest -v Tests/integration/test_failover.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd.

- a LAN client's traffic through the primary eth0, eth0's upstream cut with the
  carrier up: the primary moves (state file, hook log) and the LAN traffic with it;
- the same cut with no LAN traffic (no passive evidence: probes alone);
- a dead backup skipped: wlan0 (next in priority) dead but still "online" from
  its last round, eth0 cut: the primary goes to wwan0, never to wlan0;
- one blocked probe endpoint on the primary never causes a failover;
- a metered backup (wwan0, `interval = 20s` here) that stays online gets one
  light probe per interval and no more, no DNS query within the answers' TTL,
  and the agent's byte count of it matches the wire (nftables) within 10 %;
- `metered = auto`: cellular, and a DHCP lease with option 43 "ANDROID_METERED"
  (a phone hotspot), are metered; `metered = yes|no` per interface and per kind
  override it (state file METERED column, `status --json` "metered").

Bounds are generous (they assert behaviour, not speed: Tests/bench/bench_failover.py
measures the times). Waiting is always for a condition with a deadline.
"""

import json
import time

import pytest

import failoverlab
from failoverlab import FailoverLab
from pytesthelp import fail, ok, skip_or_fail

SETTLE_S = 30          # start-up: first full rounds on three uplinks, hooks, route
UPLINKS = ("eth0", "wlan0", "wwan0")


def all_online(st):
    return all(st["uplinks"].get(i, {}).get("verdict") == "online" for i in UPLINKS)


def start(lb, agent, interfaces=None, sections=None, name="agent"):
    """The agent at its defaults (plus `interfaces`/`sections`, see
    FailoverLab.agent_config) with the route-failover hook, settled: every uplink
    online, primary eth0, its hook run and the LAN route through eth0."""
    run = agent(lb, lb.agent_config(interfaces, sections), hooks=lb.agent_hooks(), name=name)
    ok(failoverlab.wait_settled, run, lb, SETTLE_S)
    return run


def primary_events(events, since):
    return [e for e in events if e.event == "primary" and e.t >= since]


def cut_and_wait_primary(run, lb, iface, bound, want):
    """Cut iface's upstream; wait for the state file's primary to become `want`
    and for its primary hook line; returns (cut time, hook event)."""
    cut = time.time()
    lb.cut(iface)
    st = ok(run.wait_state, lambda s: s["primary"] not in (iface, "-"), bound,
            f"a new primary after {iface}'s upstream was cut")
    if st["primary"] != want:
        fail(run, f"primary became {st['primary']!r}, expected {want}")
    events = ok(run.wait_hooks, [("primary", want)], max(1.0, bound - (time.time() - cut)), after=cut,
                what=f"the primary hook line for {want}")
    ev = next(e for e in primary_events(events, cut) if e.primary == want)
    print(f"\n{iface} cut -> primary hook for {want} after {ev.t - cut:.2f} s")
    return cut, ev


# --- cut with the carrier up -------------------------------------------------------

def test_cut_with_lan_traffic_moves_primary_and_traffic(fresh_flab, agent):
    lb = fresh_flab
    client = lb.lan_client()
    run = start(lb, agent)
    client.wait_flowing("eth")
    cut, ev = cut_and_wait_primary(run, lb, "eth0", 15, "wlan0")
    ok(run.wait_state, lambda s: s["uplinks"]["eth0"]["verdict"] != "online", 15,
       "eth0 no longer online")
    try:
        client.wait_flowing("wifi", since=cut, timeout=15)
    except failoverlab.LabError as exc:
        fail(run, f"LAN traffic did not follow the primary to wlan0: {exc}")
    last_ok, first_ok = client.outage(cut, "wifi")
    print(f"LAN traffic: last answer {last_ok - cut:+.2f} s, first through wlan0 "
          f"{first_ok - cut:+.2f} s after the cut")


def test_cut_without_traffic_moves_primary(fresh_flab, agent):
    lb = fresh_flab
    run = start(lb, agent)
    cut_and_wait_primary(run, lb, "eth0", 30, "wlan0")
    ok(run.wait_state, lambda s: s["uplinks"]["eth0"]["verdict"] != "online", 15,
       "eth0 no longer online")
    ok(run.wait_until, lambda: lb.route_dev() == "wlan0", 15, "the gateway's route through wlan0")


def test_dead_backup_is_skipped(fresh_flab, agent):
    """wlan0 (preferred over wwan0) is dead, but its last verdict is a stale
    "online" (a long interval keeps it from finding out by itself): when eth0 is
    cut, wlan0 must be verified before promotion, found dead and skipped."""
    lb = fresh_flab
    client = lb.lan_client()
    run = start(lb, agent, interfaces={"wlan0": {"interval": "5m", "liveness-interval": "off"}})
    client.wait_flowing("eth")
    lb.cut("wlan0")
    # Let wlan0's last validation age past the "older than 5 s" verification rule.
    last = max((r.t for r in lb.probe_requests("wlan0")), default=time.time())
    ok(run.wait_until, lambda: time.time() - last > 7.0, 15, "wlan0's last probe 7 s old")
    st = run.state()
    if st["uplinks"]["wlan0"]["verdict"] != "online" or st["primary"] != "eth0":
        fail(run, "wlan0 must still be (stale) online and eth0 primary before eth0 is cut")
    cut, _ev = cut_and_wait_primary(run, lb, "eth0", 30, "wwan0")
    ok(run.wait_state, lambda s: s["uplinks"]["wlan0"]["verdict"] != "online", 30,
       "wlan0 found dead (no longer online)")
    wrong = [e for e in primary_events(ok(run.wait_hooks, [("primary", "wwan0")], 5, after=cut), cut)
             if e.primary == "wlan0"]
    if wrong:
        fail(run, f"the dead backup wlan0 was made primary: {[e.short for e in wrong]}")
    if run.state()["primary"] != "wwan0":
        fail(run, "primary must stay wwan0")
    try:
        client.wait_flowing("cell", since=cut, timeout=15)
    except failoverlab.LabError as exc:
        fail(run, f"LAN traffic did not follow the primary to wwan0: {exc}")


def test_one_blocked_endpoint_never_fails_over(fresh_flab, agent):
    """The primary's upstream stops answering one of the five built-in probes:
    the light round that draws it fails, a full round follows, and the quorum
    of the other four keeps eth0 online and primary."""
    lb = fresh_flab
    run = start(lb, agent)
    mark = time.time()
    with lb.blocked("eth0", "apple"):
        hit = ok(run.wait_until, lambda: next((r for r in lb.probe_requests("eth0", since=mark)
                                               if r.status == "blocked"), None),
                 90, "a probe of eth0 drawing the blocked endpoint (apple)")
        # The failed light round starts a full round: wait for it to be answered.
        ok(run.wait_until, lambda: len([r for r in lb.probe_requests("eth0", since=hit.t)
                                        if r.status != "blocked"]) >= 4, 30,
           "a full round on eth0 after the blocked probe")
        ok(run.wait_until, lambda: time.time() - hit.t > 12, 20, "the full round's time limit")
    # Nothing may have run: the hooks' output so far, with no run to wait for.
    changes = [e.short for e in ok(run.wait_hooks, [], 1) if e.t >= mark]
    if changes:
        fail(run, f"one blocked endpoint changed verdicts or the primary: {changes}")
    st = run.state()
    if st["primary"] != "eth0" or st["uplinks"]["eth0"]["verdict"] != "online":
        fail(run, "eth0 must stay online and primary")


# --- a metered backup ------------------------------------------------------------------

WINDOW_S = 65
WWAN0_INTERVAL_S = 20


def test_metered_backup_probed_at_its_interval_only(fresh_flab, agent):
    """wwan0 (cellular: metered) stays online as a backup with `interval = 20s`:
    in 65 s it gets at most 65/20 + 1 probes, each a light round (one request,
    never a burst), no DNS query (the answers' TTL is 300 s), and the agent's
    count of its bytes matches the wire (nftables, IPv4) within 10 %."""
    lb = fresh_flab
    before = lb.counters()["wwan0"]
    run = start(lb, agent, interfaces={"wwan0": {"interval": f"{WWAN0_INTERVAL_S}s"}})
    t0 = time.time()
    dns_mark = lb.dns_log_size("wwan0")
    ok(run.wait_until, lambda: time.time() - t0 >= WINDOW_S, WINDOW_S + 10, f"{WINDOW_S} s window")
    window = [r for r in lb.probe_requests("wwan0") if t0 <= r.t < t0 + WINDOW_S]
    problems = []
    most = WINDOW_S // WWAN0_INTERVAL_S + 1
    if len(window) > most:
        problems.append(f"{len(window)} requests at wwan0's upstream in {WINDOW_S} s; at most {most} "
                        f"allowed by interval {WWAN0_INTERVAL_S} s")
    if len(window) < WINDOW_S // WWAN0_INTERVAL_S - 1:
        problems.append(f"only {len(window)} requests in {WINDOW_S} s: is `interval = 20s` applied?")
    gaps = [b.t - a.t for a, b in zip(window, window[1:])]
    if any(g < WWAN0_INTERVAL_S * 0.5 for g in gaps):
        problems.append(f"requests closer than half the interval (a full round, or more than one "
                        f"light probe per round): gaps {[round(g, 2) for g in gaps]}")
    queries = lb.dns_queries("wwan0", offset=dns_mark)
    if queries:
        problems.append(f"DNS queries within the answers' TTL (300 s) on light rounds: {queries}")
    st = run.state()
    if st["primary"] != "eth0" or st["uplinks"]["wwan0"]["verdict"] != "online":
        problems.append("wwan0 must stay an online backup, eth0 primary")
    if st["uplinks"]["wwan0"].get("metered") != "yes":
        problems.append(f"wwan0's METERED column: {st['uplinks']['wwan0'].get('metered')!r}")

    # Bytes: everything since the agent started, read when no round is in flight.
    def quiet():
        last = max((r.t for r in lb.probe_requests("wwan0")), default=0.0)
        return time.time() - last > 2.0
    ok(run.wait_until, quiet, 30, "no probe of wwan0 in flight")
    agent_bytes = int(run.state()["uplinks"]["wwan0"]["bytes_today"])
    after = lb.counters()["wwan0"]
    wire = sum(after[k][1] - before[k][1] for k in ("local_in", "local_out"))
    print(f"\nwwan0: {len(window)} requests in {WINDOW_S} s (gaps {[round(g, 1) for g in gaps]}); "
          f"bytes since start: agent {agent_bytes}, wire {wire}")
    if wire <= 0 or abs(agent_bytes - wire) > 0.10 * wire:
        problems.append(f"bytes_today of wwan0 {agent_bytes} vs {wire} on the wire (nftables, IPv4, "
                        f"both directions): more than 10 % apart")
    if problems:
        fail(run, "metered backup:\n  " + "\n  ".join(problems))


# --- metered = auto / yes / no --------------------------------------------------------

@pytest.fixture(scope="module")
def hotspot_lab(failover_ok):
    """wlan0 gets its address and DNS server by DHCP from a "phone hotspot"
    (option 43 ANDROID_METERED); eth0 and wwan0 are static."""
    reason = failoverlab.dhcp_unavailable_reason()
    if reason is not None:
        skip_or_fail(reason, "DHCP in the failover lab")
    with FailoverLab(dhcp=("wlan0",), metered_dhcp=("wlan0",)) as lb:
        yield lb


def metered_flags(run):
    """({iface: METERED column}, {iface: status --json "metered"})."""
    st = run.state()
    column = {i: u.get("metered") for i, u in st["uplinks"].items()}
    proc = run.status("--json")
    try:
        js = {u["interface"]: u.get("metered") for u in json.loads(proc.stdout)["uplinks"]}
    except (ValueError, KeyError):
        fail(run, f"status --json: exit {proc.returncode}: {proc.stdout!r} {proc.stderr!r}")
    return column, js


@pytest.mark.parametrize("case", ["auto", "override"])
def test_metered_auto_and_override(hotspot_lab, agent, case):
    lb = hotspot_lab
    if case == "auto":
        interfaces, sections = None, None
        want = {"eth0": False, "wlan0": True, "wwan0": True}
    else:
        interfaces = {"eth0": {"metered": "yes"}, "wlan0": {"metered": "no"}}
        sections = {"kind wwan": {"metered": "no"}}
        want = {"eth0": True, "wlan0": False, "wwan0": False}
    run = agent(lb, lb.agent_config(interfaces, sections), hooks=lb.agent_hooks(), name=case)
    ok(run.wait_state, all_online, SETTLE_S, "eth0 wlan0 wwan0 online")
    column, js = metered_flags(run)
    if js != want:
        fail(run, f"status --json metered: {js}, expected {want}")
    if column != {i: "yes" if m else "no" for i, m in want.items()}:
        fail(run, f"state file METERED column: {column}, expected {want}")
    if case == "auto" and run.state()["uplinks"]["wlan0"]["dns_source"] != "dhclient":
        fail(run, "wlan0's DNS server must come from its dhclient lease")
