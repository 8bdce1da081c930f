"""Route failover by policy routing, in the failover lab
(failoverlab.py) with IPv6 on every uplink and DHCP-style IPv4 default routes:
the agent at its defaults (built-in probes, both families) with the shipped
route-failover hook, whose picture is, per family, two rules of protocol 77
(32500: the main table without its default routes, `suppress_prefixlength 0`;
32501: table 7077) and the family's primary's default route in table 7077,
the main table left alone. Every assertion about where traffic goes is an
`ip route get` in the gateway, for its own traffic and for a packet forwarded
from the LAN (`from 192.168.77.2 iif lan0`), and the LAN client's answers say
which upstream carried them.

- wlan0's IPv4 default route has metric 0 (as ifupdown with dhclient installs
  it), wwan0's 5, eth0's 100: traffic still leaves through the primary
  eth0, moves to wlan0 when eth0's upstream is cut and back after the
  hold-down; a lookup bound to a backup (`oif wlan0`: the probes'
  SO_BINDTODEVICE) still leaves through that backup, and a bound request works.
- eth0's IPv6 broken, its IPv4 fine: IPv4 primary eth0, IPv6 primary wlan0
  (state file, `status --json`), `ip -6 route get` through wlan0 and
  `ip route get` through eth0.
- the hook's rules and route deleted by hand while the agent runs come back
  within 2 s (a `repair` hook event); a clean stop removes rules and table in
  both families; SIGKILL and a restart leave exactly one rule per priority and
  family; keep-routes-on-stop = yes keeps them across a stop, `uplinkd routes`
  lists them and `uplinkd routes --remove` removes them.
- CONNTRACK_FLUSH=yes: LAN flows NATed through the failed eth0 are deleted,
  those NATed through wlan0 (a hand-made rule at priority 1000, which the agent
  leaves alone) are not.

Run as root: sudo python3 -m pytest -v Tests/integration/test_policy_routing.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd. One lab serves the
module; each test leaves it as it found it (cuts undone, uplinkd's routing
entries cleared). Waiting is always for a condition with a deadline.
"""

import json
import subprocess
import sys
import time

import pytest

import failoverlab
from agentrun import AgentError
from failoverlab import (INTERNET6_ADDR, LAN_HOST, LAN_IFACE_GW, LAN_IFACE_HOST, LAN_PREFIX,
                         ROUTE_TABLE, RULE_PRIORITY, FailoverLab, rules_as_contracted)
from lab import INTERNET_ADDR, tool_path
from pytesthelp import fail, ok, skip_or_fail

SETTLE_S = 30
FAILOVER_S = 30          # a cut upstream: the primary moves (test_failover.py's bound, doubled)
REPAIR_S = 2.0           # the contract: uplinkd's entries re-applied within 2 s
UPLINKS = ("eth0", "wlan0", "wwan0")
# DHCP-style: the backups' IPv4 default routes below the primary's, wlan0's at
# metric 0 (ifupdown with dhclient). Not both at 0: the kernel refuses a second
# default route of equal metric (dhclient-script's `ip route add` fails for the
# second uplink), and libnl's route cache, which keys IPv4 routes without their
# interface, would keep only one of two appended ones.
METRICS = {"wlan0": 0, "wwan0": 5}
LAN_HOST2 = "192.168.77.3"           # the LAN host's second address (hand-made rule)
HAND_TABLE, HAND_PREF = 100, 1000
UDP_PORT = 5001


@pytest.fixture(scope="module")
def prlab(failover_ok):
    with FailoverLab(ipv6=True, metrics=METRICS) as lb:
        yield lb


@pytest.fixture
def routing_lab(prlab):
    """The module's lab, no uplinkd routing entries in it; put back as found.
    (Request it before `agent`: torn down after the agent is closed.)"""
    prlab.clear_routing()
    yield prlab
    for iface in UPLINKS:
        prlab.restore(iface)
        prlab.mend_ipv6(iface)
    prlab.clear_routing()


def lan_dev(lb, source=LAN_HOST):
    """Where the gateway sends a packet to the lab internet forwarded from `source`."""
    return lb.route_dev("gw", INTERNET_ADDR, "from", source, "iif", LAN_IFACE_GW)


def routing_problems(lb, v4, v6):
    """What differs from the contracted picture with IPv4 primary `v4` and IPv6
    primary `v6` (None: no primary, table empty); [] when nothing does."""
    wrong = []
    for family, primary, dest in ((4, v4, INTERNET_ADDR), (6, v6, INTERNET6_ADDR)):
        rules = lb.owned_rules(family)
        if not rules_as_contracted(rules):
            wrong.append(f"IPv{family} rules {rules}")
        want = []
        if primary:
            u = lb.uplink(primary)
            want = [("default", u.router if family == 4 else u.router6, primary, "77")]
        table = lb.owned_table(family)
        if table != want:
            wrong.append(f"IPv{family} table {ROUTE_TABLE} {table}, expected {want}")
        if primary and lb.route_dev("gw", dest) != primary:
            wrong.append(f"`ip -{family} route get {dest}`: {lb.route_get(dest)!r}")
    if v4 and lan_dev(lb) != v4:
        wrong.append(f"forwarded from {LAN_HOST}: {lb.route_get(INTERNET_ADDR, 'from', LAN_HOST, 'iif', LAN_IFACE_GW)!r}")
    for family in (4, 6):
        if lb.main_table_owned(family):
            wrong.append(f"protocol 77 routes in the IPv{family} main table: {lb.main_table_owned(family)!r}")
    return wrong


def main_defaults(lb) -> set:
    """The main table's IPv4 default routes as (gateway, device, metric)."""
    routes = json.loads(lb.ip("gw", "-4", "-j", "route", "show", "table", "main", "default").stdout)
    return {(r.get("gateway"), r.get("dev"), r.get("metric", 0)) for r in routes}


def picture(lb) -> str:
    """The gateway's rules, table 7077 and main-table defaults, both families."""
    parts = []
    for family in (4, 6):
        for args in (("rule", "show"), ("route", "show", "table", str(ROUTE_TABLE)),
                     ("route", "show", "default")):
            done = lb.ip("gw", f"-{family}", *args, check=False)
            parts.append(f"$ ip -{family} {' '.join(args)}\n{done.stdout}{done.stderr}")
    return "".join(parts)


def wait_routes(run, lb, v4, v6, timeout, what=""):
    """Wait (bounded) until routing_problems(lb, v4, v6) is empty; fails the test
    with what is still wrong, the routing picture and the run's transcript."""
    try:
        run.wait_until(lambda: not routing_problems(lb, v4, v6), timeout,
                       what or f"routes through {v4} (IPv4) and {v6} (IPv6)")
    except AgentError as exc:
        pytest.fail(f"{exc}\nstill wrong: {routing_problems(lb, v4, v6)}\n{picture(lb)}", pytrace=False)


def start(lb, agent, agent_keys=None, name="agent"):
    """The agent at its defaults (plus `agent_keys` in [agent]) with the shipped
    route-failover hook, settled: every uplink online in both families, eth0
    primary of both, the hook's picture in place."""
    run = agent(lb, lb.agent_config(sections={"agent": agent_keys} if agent_keys else None),
                hooks=lb.agent_hooks(), name=name)
    ok(failoverlab.wait_settled, run, lb, SETTLE_S)
    ok(run.wait_state, lambda s: s.get("primary_ipv4") == "eth0" and s.get("primary_ipv6") == "eth0"
       and all(s["uplinks"][i]["ipv4_verdict"] == s["uplinks"][i]["ipv6_verdict"] == "online" for i in UPLINKS),
       SETTLE_S, "eth0 primary of both families, every uplink online in both")
    wait_routes(run, lb, "eth0", "eth0", 10)
    return run


def wait_primaries(run, v4, v6, timeout, what):
    return ok(run.wait_state, lambda s: s.get("primary_ipv4") == v4 and s.get("primary_ipv6") == v6,
              timeout, what)


# --- 1. DHCP-style metric-0 backups -----------------------------------------------------

def test_metric_zero_backups_do_not_take_the_traffic(routing_lab, agent):
    lb = routing_lab
    # The lab as built: the kernel's own order prefers a metric-0 backup.
    assert lb.route_dev() == "wlan0" and lan_dev(lb) == "wlan0", picture(lb)
    client = lb.lan_client(name="lan-metric0")
    try:
        run = start(lb, agent, {"hold-down": "3s"})
        client.wait_flowing("eth")
        defaults = main_defaults(lb)
        assert defaults == {(u.router, u.iface, u.metric) for u in lb.uplinks}, defaults
        # A lookup bound to a backup (SO_BINDTODEVICE) falls through to its own route,
        # and a request bound to it is answered through it.
        for iface in ("wlan0", "wwan0"):
            for dest in (INTERNET_ADDR, INTERNET6_ADDR):
                got = lb.route_dev("gw", dest, "oif", iface)
                if got != iface:
                    fail(run, f"`ip route get {dest} oif {iface}` leaves through {got!r}\n{picture(lb)}")
                answer = lb.http_get(iface, "/generate_204", address=dest)
                if answer.get("status") != 204:
                    fail(run, f"a request to {dest} bound to {iface}: {answer}\n{picture(lb)}")

        cut = time.time()
        lb.cut("eth0")
        wait_primaries(run, "wlan0", "wlan0", FAILOVER_S, "wlan0 primary of both families after the cut")
        wait_routes(run, lb, "wlan0", "wlan0", 10)
        try:
            client.wait_flowing("wifi", since=cut, timeout=15)
        except failoverlab.LabError as exc:
            fail(run, f"LAN traffic did not follow the primary to wlan0: {exc}")
        print(f"\neth0 cut -> LAN traffic through wlan0 {client.outage(cut, 'wifi')[1] - cut:.2f} s later")

        lb.restore("eth0")
        back = time.time()
        wait_primaries(run, "eth0", "eth0", FAILOVER_S, "eth0 primary again after its hold-down")
        wait_routes(run, lb, "eth0", "eth0", 10)
        try:
            client.wait_flowing("eth", since=back, timeout=15)
        except failoverlab.LabError as exc:
            fail(run, f"LAN traffic did not come back to eth0: {exc}")
        print(f"eth0 restored -> LAN traffic back through eth0 {client.outage(back, 'eth')[1] - back:.2f} s later")
    finally:
        client.stop()
    assert run.stop() == 0


# --- 2. a primary per family ---------------------------------------------------------------

def test_broken_ipv6_moves_only_the_ipv6_primary(routing_lab, agent):
    lb = routing_lab
    mark = {u.iface: lb.http6_log(u.iface).stat().st_size if lb.http6_log(u.iface).exists() else 0
            for u in lb.uplinks}
    run = start(lb, agent)
    # The agent really probes IPv6: the built-in endpoints over IPv6, each uplink.
    for u in lb.uplinks:
        clients = {f[1] for f in failoverlab.log_fields(lb.http6_log(u.iface), 6, mark[u.iface])}
        if u.address6 not in clients:
            fail(run, f"no IPv6 probe from {u.address6} reached {u.iface}'s upstream: {clients}")
    lb.break_ipv6("eth0")
    broke = time.time()
    st = wait_primaries(run, "eth0", "wlan0", 60, "IPv4 primary eth0, IPv6 primary wlan0")
    print(f"\neth0's IPv6 broken -> IPv6 primary wlan0 in the state file {time.time() - broke:.1f} s later")
    eth0 = st["uplinks"]["eth0"]
    if st["primary"] != "eth0" or eth0["ipv4_verdict"] != "online" or eth0["ipv6_verdict"] == "online":
        fail(run, f"expected eth0 primary, its IPv4 online and its IPv6 not: primary {st['primary']}, {eth0}")
    wait_routes(run, lb, "eth0", "wlan0", 10)
    status = run.status("--json")
    try:
        js = json.loads(status.stdout)
    except ValueError:
        fail(run, f"status --json: exit {status.returncode}: {status.stdout!r} {status.stderr!r}")
    got = (js.get("primary"), js.get("primary_ipv4"), js.get("primary_ipv6"))
    if got != ("eth0", "eth0", "wlan0"):
        fail(run, f"status --json primary, primary_ipv4, primary_ipv6: {got}")
    if lb.route_dev("gw", INTERNET6_ADDR) != "wlan0" or lb.route_dev("gw", INTERNET_ADDR) != "eth0":
        fail(run, f"ip route get: {lb.route_get(INTERNET_ADDR)!r} / {lb.route_get(INTERNET6_ADDR)!r}")
    lb.mend_ipv6("eth0")
    assert run.stop() == 0


# --- 3. owned and self-healing ---------------------------------------------------------

def seconds_until(check, deadline_s, grace_s=8.0, t0=None):
    """Seconds from t0 (now) until check() holds, polled without pause; None when
    it does not within deadline_s + grace_s (the grace only tells how late)."""
    t0 = time.monotonic() if t0 is None else t0
    while True:
        if check():
            return time.monotonic() - t0
        if time.monotonic() - t0 > deadline_s + grace_s:
            return None


def test_deleted_rules_and_routes_come_back_within_2s(routing_lab, agent):
    lb = routing_lab
    run = start(lb, agent)
    eth0 = lb.uplink("eth0")
    deletions = (
        (("rule", "del", "pref", str(RULE_PRIORITY)), 4),
        (("-6", "rule", "del", "pref", str(RULE_PRIORITY + 1)), 6),
        (("route", "flush", "table", str(ROUTE_TABLE)), 4),
        (("-6", "route", "flush", "table", str(ROUTE_TABLE)), 6),
    )
    times, problems = {}, []
    for args, family in deletions:
        command = "ip " + " ".join(args)
        before = (lb.owned_rules(family), lb.owned_table(family))
        wall = time.time()
        t0 = time.monotonic()
        lb.ip("gw", *args)
        after = (lb.owned_rules(family), lb.owned_table(family))
        if after == before:
            problems.append(f"`{command}` changed nothing: {before}")
            continue
        took = seconds_until(lambda: not routing_problems(lb, "eth0", "eth0"), REPAIR_S, t0=t0)
        times[command] = took
        if took is None or took > REPAIR_S:
            problems.append(f"`{command}`: restored {'never within 10 s' if took is None else f'after {took:.2f} s'}"
                            f"; still wrong: {routing_problems(lb, 'eth0', 'eth0')}")
            continue
        # The agent re-applied them through the hooks: a `repair` event (hooks run
        # one at a time, the recording hook first, so its line comes first).
        try:
            events = run.wait_hooks([("repair", None)], 5, after=wall, what=f"a repair hook event after `{command}`")
        except AgentError:
            problems.append(f"`{command}`: restored, but no `repair` line in the hook log")
            events = []
        ev = next((e for e in events if e.event == "repair" and e.t >= wall), None)
        if ev is not None and ev.primary != "eth0":
            problems.append(f"`{command}`: repair event with UPLINK_PRIMARY {ev.primary!r}")
    print("\nrestored after: " + ", ".join(f"{c}: {'never' if t is None else f'{t:.3f} s'}"
                                           for c, t in times.items()))
    if problems:
        fail(run, "self-healing:\n  " + "\n  ".join(problems) + f"\n{picture(lb)}")
    assert lb.owned_table(4) == [("default", eth0.router, "eth0", "77")]
    assert run.stop() == 0


def test_clean_stop_removes_rules_and_table(routing_lab, agent):
    lb = routing_lab
    run = start(lb, agent)
    assert run.stop() == 0
    left = {f: (lb.owned_rules(f), lb.owned_table(f)) for f in (4, 6)}
    if any(rules or table for rules, table in left.values()):
        fail(run, f"left after a clean stop (rules, table {ROUTE_TABLE}): {left}\n{picture(lb)}")
    # The main table's own order applies again: the metric-0 backup.
    assert lb.route_dev() == "wlan0" and lan_dev(lb) == "wlan0", picture(lb)
    assert lb.route_dev("gw", INTERNET6_ADDR) == "eth0", picture(lb)


def test_sigkill_and_restart_leave_one_rule_each(routing_lab, agent):
    lb = routing_lab
    first = start(lb, agent, name="killed")
    first.kill()
    # A crash leaves the entries behind (nothing could remove them).
    assert not routing_problems(lb, "eth0", "eth0"), picture(lb)
    second = start(lb, agent, name="restarted")
    for family in (4, 6):
        prefs = sorted(r["priority"] for r in lb.owned_rules(family))
        if prefs != [RULE_PRIORITY, RULE_PRIORITY + 1]:
            fail(second, f"IPv{family} rules of protocol 77 after SIGKILL and restart: {prefs}\n{picture(lb)}")
    # Killed again, then started without the route hook: the agent itself removes
    # the stale entries, before its first hook event (the hook cannot have done it).
    second.kill()
    assert not routing_problems(lb, "eth0", "eth0"), picture(lb)
    third = agent(lb, lb.agent_config(), name="no-route-hook")
    ok(third.wait_hooks, [(None, None)], SETTLE_S, what="the first hook event")
    stale = {f: (lb.owned_rules(f), lb.owned_table(f)) for f in (4, 6)}
    if any(rules or table for rules, table in stale.values()):
        fail(third, f"stale entries left at the first hook event after a crash: {stale}\n{picture(lb)}")
    assert third.stop() == 0


def uplinkd_routes(run, lb, *extra):
    """`uplinkd routes [extra] --config CONFIG` in the gateway namespace."""
    argv = [str(run.binary), "routes", *extra, "--config", str(run.config)]
    return subprocess.run(lb.exec_argv("gw", argv), capture_output=True, text=True, timeout=30)


def test_keep_routes_on_stop_and_routes_command(routing_lab, agent):
    lb = routing_lab
    eth0 = lb.uplink("eth0")
    run = start(lb, agent, {"keep-routes-on-stop": "yes"})
    problems = []
    listed = uplinkd_routes(run, lb)
    out = listed.stdout
    print(f"\n$ uplinkd routes\n{out}{listed.stderr}")
    lines = out.splitlines()
    # Each entry as `ip rule` / `ip route` show it: rule 32500 with its
    # suppress_prefixlength 0 (without it, the rule would hide table 7077).
    wanted = {"rule 32500 with suppress_prefixlength 0":
              lambda l: f"{RULE_PRIORITY}:" in l and "lookup main" in l and "suppress_prefixlength 0" in l,
              "rule 32501": lambda l: f"{RULE_PRIORITY + 1}:" in l and f"lookup {ROUTE_TABLE}" in l,
              "IPv4 route": lambda l: f"via {eth0.router} " in l and "dev eth0" in l,
              "IPv6 route": lambda l: f"via {eth0.router6} " in l and "dev eth0" in l}
    missing = [k for k, pred in wanted.items() if not any(pred(l) for l in lines)]
    if listed.returncode != 0 or missing:
        problems.append(f"`uplinkd routes`: exit {listed.returncode}, missing {missing}")
    for priority in (RULE_PRIORITY, RULE_PRIORITY + 1):
        count = sum(f"{priority}:" in l for l in lines)
        if count != 2:
            problems.append(f"`uplinkd routes` lists {count} rules {priority}, expected one per family")
    if run.stop() != 0:
        problems.append("the agent's stop did not exit 0")
    # Kept across the stop: traffic still leaves through eth0.
    if routing_problems(lb, "eth0", "eth0"):
        problems.append(f"keep-routes-on-stop = yes, after the stop: {routing_problems(lb, 'eth0', 'eth0')}")
    removed = uplinkd_routes(run, lb, "--remove")
    print(f"$ uplinkd routes --remove\n{removed.stdout}{removed.stderr}")
    if removed.returncode != 0:
        problems.append(f"`uplinkd routes --remove`: exit {removed.returncode}")
    left = {f: (lb.owned_rules(f), lb.owned_table(f)) for f in (4, 6)}
    if any(rules or table for rules, table in left.values()):
        problems.append(f"left after `uplinkd routes --remove`: {left}")
    after = uplinkd_routes(run, lb)
    if after.returncode != 0 or any(f"{p}:" in after.stdout for p in (RULE_PRIORITY, RULE_PRIORITY + 1)) \
            or eth0.router in after.stdout:
        problems.append(f"`uplinkd routes` after --remove: exit {after.returncode}\n{after.stdout}")
    if lb.route_dev() != "wlan0":
        problems.append("after --remove the main table's order must apply: the metric-0 wlan0")
    if problems:
        fail(run, "keep-routes-on-stop and `uplinkd routes`:\n  " + "\n  ".join(problems) + f"\n{picture(lb)}")


# --- 4. conntrack ------------------------------------------------------------------------

def conntrack_udp(lb) -> list:
    """The gateway's UDP conntrack entries to the lab's UDP_PORT as
    (original source, original source port, reply destination) tuples."""
    done = subprocess.run(lb.exec_argv("gw", [tool_path("conntrack"), "-L", "-p", "udp",
                                              "--dport", str(UDP_PORT)]),
                          capture_output=True, text=True, timeout=30)
    entries = []
    for line in done.stdout.splitlines():
        fields = {}
        for token in line.split():
            key, eq, value = token.partition("=")
            if eq:
                fields.setdefault(key, []).append(value)
        if len(fields.get("src", [])) >= 2 and len(fields.get("dst", [])) >= 2:
            entries.append((fields["src"][0], fields["sport"][0], fields["dst"][1]))
    return entries


def send_udp(lb, source, sport):
    """One datagram from the LAN host's `source`:sport to the lab internet's UDP_PORT
    (nothing listens there: the flow stays as the gateway's conntrack saw it)."""
    code = ("import socket, sys\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "s.bind((sys.argv[1], int(sys.argv[2])))\n"
            "s.sendto(b'uplinkd lab', (sys.argv[3], int(sys.argv[4])))\n")
    subprocess.run(lb.exec_argv("lan", [sys.executable, "-c", code, source, str(sport), INTERNET_ADDR,
                                        str(UDP_PORT)]), check=True, timeout=30)


@pytest.fixture
def hand_made(routing_lab):
    """A hand-made policy route (an administrator's): LAN_HOST2 (a second address of
    the LAN host) leaves through wlan0 by rule 1000 and table 100; removed after."""
    lb = routing_lab
    wlan0 = lb.uplink("wlan0")
    lb.ip("lan", "addr", "add", f"{LAN_HOST2}/{LAN_PREFIX}", "dev", LAN_IFACE_HOST)
    lb.ip("gw", "route", "add", "default", "via", wlan0.router, "dev", "wlan0", "table", str(HAND_TABLE))
    lb.ip("gw", "rule", "add", "from", LAN_HOST2, "lookup", str(HAND_TABLE), "pref", str(HAND_PREF))
    yield lb
    lb.ip("gw", "rule", "del", "pref", str(HAND_PREF), check=False)
    lb.ip("gw", "route", "flush", "table", str(HAND_TABLE), check=False)
    lb.ip("lan", "addr", "del", f"{LAN_HOST2}/{LAN_PREFIX}", "dev", LAN_IFACE_HOST, check=False)


def test_conntrack_flush_only_the_failed_uplinks_flows(hand_made, agent):
    lb = hand_made
    if tool_path("conntrack") is None:
        skip_or_fail("conntrack is not installed (Debian: conntrack)", "conntrack")
    eth0, wlan0 = lb.uplink("eth0"), lb.uplink("wlan0")
    # Entries outlive the test (600 s): only a flush can make one go.
    lb._sysctl("gw", "net.netfilter.nf_conntrack_udp_timeout=600",
               "net.netfilter.nf_conntrack_udp_timeout_stream=600")
    lb.route_hook_conf.write_text("CONNTRACK_FLUSH=yes\n")
    try:
        run = start(lb, agent)
        hand_rule = lb.ip("gw", "rule", "show", "pref", str(HAND_PREF)).stdout.strip()
        # Coexistence: the hand-made rule (priority 1000) decides before uplinkd's.
        if lan_dev(lb, LAN_HOST2) != "wlan0" or lan_dev(lb) != "eth0":
            fail(run, f"forwarded: from {LAN_HOST2} {lan_dev(lb, LAN_HOST2)!r}, from {LAN_HOST} "
                      f"{lan_dev(lb)!r}\n{picture(lb)}")
        via_eth0 = (LAN_HOST, "40001", eth0.address)
        via_wlan0 = (LAN_HOST2, "40002", wlan0.address)
        send_udp(lb, LAN_HOST, 40001)
        send_udp(lb, LAN_HOST2, 40002)
        ok(run.wait_until, lambda: {via_eth0, via_wlan0} <= set(conntrack_udp(lb)), 5,
           "both LAN flows in the gateway's conntrack table, NATed to eth0 and to wlan0")
        cut = time.time()
        lb.cut("eth0")
        if via_eth0 not in conntrack_udp(lb):
            fail(run, f"the eth0 flow went before any failover: {conntrack_udp(lb)}")
        wait_primaries(run, "wlan0", "wlan0", FAILOVER_S, "wlan0 primary after eth0's cut")
        # The hooks run after the state is written, the recording hook first.
        ok(run.wait_hooks, [("primary", "wlan0")], 10, after=cut, what="the primary hook event for wlan0")
        try:
            run.wait_until(lambda: via_eth0 not in conntrack_udp(lb), 10,
                           "the LAN flow NATed to eth0's address flushed")
        except AgentError as exc:
            fail(run, f"{exc}\nconntrack: {conntrack_udp(lb)}")
        entries = conntrack_udp(lb)
        if via_wlan0 not in entries:
            fail(run, f"the LAN flow NATed through wlan0 was flushed too: {entries}")
        if any(e[2] == eth0.address for e in entries):
            fail(run, f"a LAN flow NATed to eth0's address is left: {entries}")
        if lb.ip("gw", "rule", "show", "pref", str(HAND_PREF)).stdout.strip() != hand_rule \
                or f"via {wlan0.router} dev wlan0" not in lb.ip("gw", "route", "show", "table",
                                                                str(HAND_TABLE)).stdout:
            fail(run, f"the hand-made rule or table {HAND_TABLE} changed\n{picture(lb)}")
        print(f"\nconntrack after the failover: {entries}")
        assert run.stop() == 0
        assert lb.ip("gw", "rule", "show", "pref", str(HAND_PREF)).stdout.strip() == hand_rule, \
            "a stop must remove uplinkd's rules only"
    finally:
        lb.route_hook_conf.write_text("# failover lab: the hook's defaults\n")
        lb.restore("eth0")
