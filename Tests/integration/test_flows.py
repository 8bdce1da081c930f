"""Flow pinning (`[flows] pinning = yes`), end to end in the failover lab with one
host "on the internet" behind every upstream and a carrier-grade NAT in each
(FailoverLab(cloud=True, upstream_nat=True)): the cloud's flow server
(tcpflow.py at 203.0.113.10) sees one source address per uplink and answers every
line with the upstream that carried it, so a connection whose packets leave by
another uplink than the one it started on is reset, as on the real internet. The
agent runs with its built-in probes, the shipped route-failover hook (table 7077,
beside the agent's own flow entries) and `[agent] hold-down = 5s`, `flap-penalty
= 0`, so a failback comes within seconds.

What the agent is held to (its [flows] contract): every connection gets a
conntrack mark for the uplink its first packet left by (slot << 24, mask
0x1f000000); policy rules of protocol 78 (32400: main with suppress_prefixlength
0; 32400 + slot: that mark to table 7100 + slot, a copy of the uplink's default
route) keep its later packets on that uplink; new connections follow the current
choice (the primary, or a weighted spread over the primary's tier); an uplink
that is no longer online has its connections released (their entries deleted by
mark); nftables table `inet uplinkd` is put back when something removes it.

- failback, pinned: eth0 cut, wlan0 primary, 10 long-lived connections from the
  LAN (through wlan0), eth0 back and primary again: all 10 keep their connection
  and their answers from the wifi upstream for 60 s after the failback (no reset,
  no timeout; their conntrack entries keep wlan0's mark), and a new connection
  leaves through eth0.
- failback, `pinning = no` (today): the same 10 connections are reset at the
  failback and their clients' next connections answer through eth0. This is what
  shows the lab punishes a moved connection, so the pinned test can fail.
- real outage: connections through eth0 (with an answer timeout of 30 s, so only
  the network can end them), eth0 cut: once eth0 is no longer online they are
  reset (released: the next retransmission meets no pin and leaves through wlan0,
  where the cloud knows no such connection), no LAN entry keeps eth0's mark, and
  the clients' next connections answer through wlan0.
- weights: eth0 `weight = 3`, wlan0 `weight = 1`, both `tier = 1`: of 2,000 short
  connections eth0 carries 75 % within 5 points, wwan0 (metered, no tier) none.
  `sticky = host`: 32 LAN hosts (addresses of the LAN namespace), 20 connections
  each: every host's connections on one uplink, both uplinks used.
- a class (`protocol = tcp`, `ports = 5003`, `uplinks = eth0 wwan0`) beside a 1:1
  spread over eth0 and wlan0: its connections all take eth0; eth0 cut, they take
  wwan0 while the rest go to wlan0 only.
- `inet uplinkd` removed (an admin's firewall reload: `flush ruleset` and the
  lab's own tables in one transaction, as `systemctl reload nftables` does; or
  `nft delete table inet uplinkd`): back within 5 s; a busy connection through the
  primary keeps answering, an idle one pinned to wlan0 by a class (silent while
  the table was away) goes on through wlan0 with the same connection, and new
  connections follow the class and the primary again.

Run as root: sudo python3 -m pytest -v Tests/integration/test_flows.py
Each test builds its own lab and agent and runs alone, e.g. `-k failback`,
`-k outage`, `-k weights`, `-k sticky`, `-k class`, `-k removed`. About 75 s in
all (the two failbacks take 20-25 s each). The binary is $UPLINKD, or <repo>/.build/debug/uplinkd. conntrack
(Debian: conntrack) is needed by the failback and outage tests. Waiting is always
for a condition with a deadline.
"""

import json
import subprocess
import time
from collections import Counter

import pytest

import failoverlab
from failoverlab import CLOUD_ADDR, FLOW_PORT, LAN_HOST, FailoverLab, LabError
from lab import tool_path
from pytesthelp import fail, ok, skip_or_fail

UPLINKS = ("eth0", "wlan0", "wwan0")
SETTLE_S = 30            # start-up: every uplink online, eth0 primary, hooks, flow entries
FAILOVER_S = 30          # a cut upstream: wlan0 primary (test_failover.py's bound, doubled)
FAILBACK_S = 45          # eth0 online again, its hold-down (5 s), the primary hook
OBSERVE_S = 60           # the pinned connections watched after the failback
TABLE_BACK_S = 5         # `inet uplinkd` put back after a removal
CHOICE_S = 10            # a new connection follows a new choice
AGENT = {"hold-down": "5s", "flap-penalty": "0"}
CLASS_PORT = 5003
LONG_LIVED = 10
HOSTS, PER_HOST = 32, 20
SHORT = 2000
# The [flows] contract's numbers (FlowSettings' defaults).
FLOW_PROTOCOL, FLOW_PRIORITY, FLOW_TABLE_BASE = 78, 32400, 7100
MARK_SHIFT, MARK_MASK = 24, 0x1f000000
FLOW_TABLE = ("inet", "uplinkd")


@pytest.fixture
def cloud_lab(failover_ok):
    """A private failover lab with the cloud host and upstream NAT."""
    with FailoverLab(cloud=True, upstream_nat=True) as lb:
        yield lb


@pytest.fixture
def hosts_lab(failover_ok):
    """The same with HOSTS LAN addresses (LAN hosts as the gateway sees them)."""
    with FailoverLab(cloud=True, upstream_nat=True, lan_hosts=HOSTS) as lb:
        yield lb


def need_conntrack():
    if tool_path("conntrack") is None:
        skip_or_fail("conntrack is not installed (Debian: conntrack)", "conntrack")


# --- the agent's flow entries ----------------------------------------------------------

def flow_table_text(lb) -> str:
    """`nft list table inet uplinkd` in gw ("" while there is none)."""
    done = subprocess.run(lb.exec_argv("gw", [tool_path("nft") or "nft", "list", "table", *FLOW_TABLE]),
                          capture_output=True, text=True, timeout=10)
    return done.stdout if done.returncode == 0 else ""


def flow_entries(lb):
    """({iface: slot}, [problems]) from the gateway's IPv4 rules of protocol 78 and
    their tables, held to the contract: 32400 looks up main with
    suppress_prefixlength 0; 32400 + slot sends mark slot << 24 / 0x1f000000 to
    table 7100 + slot, which holds one default route, through the uplink of that
    slot (the uplink is known by that route)."""
    rules = [r for r in json.loads(lb.ip("gw", "-4", "-j", "rule", "show").stdout or "[]")
             if str(r.get("protocol")) == str(FLOW_PROTOCOL)]
    slots, problems = {}, []
    if not any(r.get("priority") == FLOW_PRIORITY and str(r.get("table")) == "main"
               and r.get("suppress_prefixlen") == 0 for r in rules):
        problems.append(f"no rule {FLOW_PRIORITY} lookup main suppress_prefixlength 0")
    for r in rules:
        if "fwmark" not in r:
            continue
        mark, mask = int(str(r["fwmark"]), 16), int(str(r.get("fwmask", "0xffffffff")), 16)
        slot = mark >> MARK_SHIFT
        table = str(r.get("table"))
        if mask != MARK_MASK or mark != slot << MARK_SHIFT or r.get("priority") != FLOW_PRIORITY + slot \
                or table != str(FLOW_TABLE_BASE + slot):
            problems.append(f"rule not as contracted: {r}")
            continue
        routes = json.loads(lb.ip("gw", "-4", "-j", "route", "show", "table", table, check=False).stdout or "[]")
        devs = [x.get("dev") for x in routes if x.get("dst") == "default"]
        if len(devs) != 1:
            problems.append(f"table {table} (slot {slot}) holds {routes}, not one default route")
            continue
        if devs[0] in slots:
            problems.append(f"{devs[0]} has two slots: {slots[devs[0]]} and {slot}")
        slots[devs[0]] = slot
    return slots, problems


def flow_entries_ready(lb, uplinks=UPLINKS):
    """The table, the rules and a table per uplink, as contracted (else None)."""
    slots, problems = flow_entries(lb)
    return slots if flow_table_text(lb) and not problems and set(uplinks) <= set(slots) else None


def mark_of(slots, iface) -> int:
    return slots[iface] << MARK_SHIFT


def lan_entries(lb, port=FLOW_PORT) -> list:
    """The gateway's conntrack entries of LAN connections to the cloud's `port`:
    [(state, original source port, mark)]."""
    done = subprocess.run(lb.exec_argv("gw", [tool_path("conntrack"), "-L", "-p", "tcp", "-s", LAN_HOST,
                                              "-d", CLOUD_ADDR, "--dport", str(port)]),
                          capture_output=True, text=True, timeout=10)
    entries = []
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[0] != "tcp":
            continue
        keys = {}
        for f in fields:
            k, sep, v = f.partition("=")
            if sep and k not in keys:          # the first of each: the original direction
                keys[k] = v
        entries.append((fields[3], int(keys.get("sport", 0)), int(keys.get("mark", 0))))
    return entries


# --- the agent in the lab ----------------------------------------------------------------

def start(lb, agent, *, pinning=True, flows=None, interfaces=None, classes=None, name="agent"):
    """The agent with the route-failover hook, AGENT's timing, `[flows]` (pinning
    and `flows`), `interfaces` and `classes` ({name: keys} as `[class NAME]`),
    settled: every uplink online, eth0 primary, hooks caught up, and with pinning
    the flow entries in place as contracted."""
    sections = {"agent": dict(AGENT), "flows": {"pinning": "yes" if pinning else "no", **(flows or {})}}
    for cls, keys in (classes or {}).items():
        sections[f"class {cls}"] = keys
    run = agent(lb, lb.agent_config(interfaces, sections), hooks=lb.agent_hooks(), name=name)
    ok(failoverlab.wait_settled, run, lb, SETTLE_S)
    if pinning:
        try:
            ok(run.wait_until, lambda: flow_entries_ready(lb), SETTLE_S,
               "the flow entries: table inet uplinkd, rules of protocol 78, a table per uplink")
        except BaseException:
            print(f"flow entries: {flow_entries(lb)}\n{flow_table_text(lb) or '(no table inet uplinkd)'}")
            raise
    return run


def lab_ok(run, fn, *args, **kw):
    """A lab waiter (FlowClients.wait_all...); its LabError is a clean failure with
    the agent's transcript."""
    try:
        return fn(*args, **kw)
    except LabError as exc:
        msg = str(exc)
    fail(run, msg)


def new_flow_via(lb, via, port=FLOW_PORT) -> bool:
    """One new connection from the LAN (at most 0.5 s) answered through `via`."""
    flows = lb.short_flows(1, port=port, timeout=0.5)
    return bool(flows) and flows[0].ok and flows[0].upstream == via


def wait_new_flow(run, lb, via, timeout=CHOICE_S, port=FLOW_PORT):
    """Wait until a new connection answers through `via`: the choice for new
    connections has reached the packets (the state file and the hooks come first)."""
    ok(run.wait_until, lambda: new_flow_via(lb, via, port), timeout,
       f"a new connection to port {port} answered through {via}")


def wait_spread(run, lb, roles, port=FLOW_PORT, batch=40):
    """Wait until one batch of short connections is answered through every role in
    `roles` (with weights 3:1 all 40 miss wlan0 once in 100,000): the spread is in
    place, not just the primary's route."""
    def both():
        seen = {f.upstream for f in lb.short_flows(batch, port=port, timeout=0.5)}
        return set(roles) <= seen
    ok(run.wait_until, both, CHOICE_S, f"a batch of {batch} new connections through {' and '.join(roles)}")


def wait_primary(run, lb, primary, online, timeout, since=None):
    """The state file's primary, the hook lines and the route hook's table 7077
    caught up (failoverlab.wait_settled); the primary hook event (after `since`)."""
    ok(failoverlab.wait_settled, run, lb, timeout, primary=primary, online=online)
    events = ok(run.wait_hooks, [("primary", primary)], 5, after=since, latest=True,
                what=f"the primary hook line for {primary}")
    return [e for e in events if e.event == "primary" and e.primary == primary
            and (since is None or e.t >= since)][0]


def cut_eth0(run, lb):
    """eth0's upstream cut while a LAN client fetches a page every 100 ms (its
    unanswered packets are the cheap evidence a primary is found dead by; an idle
    LAN leaves it to the primary's slow schedule), until wlan0 is primary with
    eth0 no longer online, its hooks run and the route hook's table through wlan0."""
    client = lb.lan_client()
    try:
        lab_ok(run, client.wait_flowing, None, None, 10)
        lb.cut("eth0")
        ok(run.wait_state, lambda s: s["uplinks"]["eth0"]["verdict"] != "online", FAILOVER_S,
           "eth0 no longer online")
        wait_primary(run, lb, "wlan0", ("wlan0", "wwan0"), FAILOVER_S)
    finally:
        client.stop()


def long_lived(run, lb, via, count=LONG_LIVED, **kw):
    """`count` long-lived clients, each answered 5 times through `via` on its first
    connection."""
    clients = lb.flow_clients(count, **kw)
    lab_ok(run, clients.wait_all, lambda c: len(c.answers(via, connection=1)) >= 5, 10,
           f"{count} long-lived connections answered through {via}")
    return clients


# --- failback ----------------------------------------------------------------------------

def failback(lb, agent, pinning):
    """eth0 cut, wlan0 primary, LONG_LIVED connections through wlan0, eth0 restored
    and primary again: (agent, clients, the failback's primary hook event, wlan0's
    slot or None)."""
    run = start(lb, agent, pinning=pinning)
    cut_eth0(run, lb)
    wait_new_flow(run, lb, "wifi")
    clients = long_lived(run, lb, "wifi")
    slots = None
    if pinning:
        slots = flow_entries(lb)[0]
        marks = Counter(mark & MARK_MASK for state, _port, mark in lan_entries(lb) if state == "ESTABLISHED")
        if marks != {mark_of(slots, "wlan0"): LONG_LIVED}:
            fail(run, f"the long-lived connections' marks: {dict(marks)}, expected {LONG_LIVED} x "
                      f"{mark_of(slots, 'wlan0'):#x} (wlan0, slot {slots['wlan0']})")
    restored = time.time()
    lb.restore("eth0")
    ev = wait_primary(run, lb, "eth0", UPLINKS, FAILBACK_S, since=restored)
    print(f"\neth0 restored, primary again {ev.t - restored:.1f} s later ({ev.primary_reason})")
    return run, clients, ev, slots


def test_failback_keeps_pinned_connections(cloud_lab, agent):
    """What pinning is for: a primary change costs the LAN nothing on an uplink
    that still works. The connections opened through wlan0 during eth0's outage
    keep wlan0's mark across the failback, so their packets keep leaving by wlan0
    (any packet leaving by eth0 would be reset: the next test shows it), for
    OBSERVE_S seconds of answers every 100 ms; only new connections take eth0."""
    need_conntrack()
    lb = cloud_lab
    run, clients, ev, slots = failback(lb, agent, pinning=True)
    wait_new_flow(run, lb, "eth")
    fresh = lb.short_flows(20)
    if [f.upstream for f in fresh] != ["eth"] * 20:
        fail(run, f"new connections after the failback (eth0 primary, no tiers): {Counter(f.upstream for f in fresh)}")
    until = ev.t + OBSERVE_S
    lab_ok(run, clients.wait_all, lambda c: c.events(since=until), OBSERVE_S + 5,
           f"the long-lived clients' lines {OBSERVE_S} s after the failback")
    problems = []
    for c in clients:
        evs = c.events()
        after = c.answers(since=ev.t)
        if any(e.ended for e in evs) or {e.connection for e in evs} != {1}:
            problems.append(f"connection lost: {c.tail(8)}")
        elif {e.upstream for e in after} != {"wifi"} or len(after) < OBSERVE_S / 0.1 / 2:
            problems.append(f"{len(after)} answers after the failback, through {sorted({e.upstream for e in after})}: "
                            f"{c.tail(4)}")
    marks = Counter(mark & MARK_MASK for state, _port, mark in lan_entries(lb) if state == "ESTABLISHED")
    if marks != {mark_of(slots, "wlan0"): LONG_LIVED}:
        problems.append(f"the long-lived connections' marks after the failback: {dict(marks)}")
    if problems:
        fail(run, "pinned connections through wlan0 at the failback to eth0:\n  " + "\n  ".join(problems))
    print(f"{LONG_LIVED} connections answered through wifi for {OBSERVE_S} s after the failback; "
          f"new ones through eth")


def test_failback_without_pinning_resets_connections(cloud_lab, agent):
    """Today's behaviour (`pinning = no`, the route hook alone): at the failback
    the LAN's traffic moves to eth0, each long-lived connection's next packet is
    masqueraded to eth0's address and reaches the cloud through eth's NAT, which
    answers with a reset; the clients' next connections go through eth0."""
    lb = cloud_lab
    run, clients, ev, _slots = failback(lb, agent, pinning=False)
    lab_ok(run, clients.wait_all, lambda c: c.answers("eth", since=ev.t), 10,
           "the clients' next connections answered through eth")
    problems = []
    for c in clients:
        end = c.end_of(c.connection_at(ev.t) or 1)
        # The recording hook starts before the route hook moves the route.
        if end is None or end.event != "reset" or not ev.t <= end.t < ev.t + 5:
            problems.append(f"not reset within 5 s of the failback: {c.tail(8)}")
    if problems:
        fail(run, "without pinning the failback must reset the connections through wlan0 (else the lab "
                  "does not punish a moved connection):\n  " + "\n  ".join(problems))
    print(f"{LONG_LIVED} connections reset at the failback, the next ones through eth")


# --- a false alarm ---------------------------------------------------------------------------

STEP_ONE_WAY_MS = 300    # eth0's round trip steps from 10 ms to 600 ms ...
STEP_S = 40              # ... for this long, while it answers every packet


@pytest.fixture
def slow_lab(failover_ok):
    """The cloud lab with a delay relay on eth0 (5 ms each way), whose delay a test
    changes while it runs."""
    with FailoverLab(cloud=True, upstream_nat=True, delays={"eth0": 5}) as lb:
        yield lb


def test_a_latency_step_keeps_open_connections(slow_lab, agent):
    """A false alarm (a path that got slow, not dead) must cost the open connections
    nothing, whether or not the primary moved: eth0's round trip steps from 10 to
    600 ms for 40 s under a LAN client's traffic (the passive alarm's evidence);
    the long-lived connections through eth0 (answers allowed 5 s) keep their
    connection and keep being answered through eth during the step and after it."""
    lb = slow_lab
    run = start(lb, agent)
    wait_new_flow(run, lb, "eth")
    clients = long_lived(run, lb, "eth", timeout=5.0)
    client = lb.lan_client()
    try:
        lab_ok(run, client.wait_flowing, None, None, 10)
        step = time.time()
        lb.set_delay("eth0", STEP_ONE_WAY_MS)
        # The step is the scenario: it lasts STEP_S whatever the agent does; meanwhile
        # the state says when new connections avoided eth0 (the doubt's provisional choice).
        doubts = set()
        while time.time() < step + STEP_S:
            st = run.state() or {}
            if st.get("provisional") not in (None, "", "-"):
                doubts.add(round(time.time() - step))
            time.sleep(0.1)
        lb.set_delay("eth0", 5)
        ended = time.time()
    finally:
        client.stop()
    lab_ok(run, clients.wait_all, lambda c: len(c.answers("eth", since=ended + 2.0)) >= 5, 15,
           "answers through eth after the step")
    moved = [e for e in run.events() if e.t >= step and e.event == "primary"]
    problems = []
    for c in clients:
        evs = c.events()
        during = c.answers("eth", since=step + 2.0)
        if any(e.ended for e in evs) or {e.connection for e in evs} != {1}:
            problems.append(f"connection lost: {c.tail(8)}")
        elif len([e for e in during if e.t < ended]) < 10:
            problems.append(f"{len(during)} answers through eth during the step: {c.tail(4)}")
    if problems:
        fail(run, f"open connections through eth0 across a {2 * STEP_ONE_WAY_MS} ms latency step "
                  f"(primary events meanwhile: {[(e.previous_primary, e.primary) for e in moved]}):\n  "
                  + "\n  ".join(problems))
    print(f"\n{LONG_LIVED} connections kept through a {2 * STEP_ONE_WAY_MS} ms step of {STEP_S} s; "
          f"primary changes meanwhile: {len(moved)}; new connections avoided eth0 in second(s) {sorted(doubts)}")


# --- a real outage ------------------------------------------------------------------------

def test_outage_releases_pinned_connections(cloud_lab, agent):
    """A pin must not outlive its uplink: once eth0 is no longer online its
    connections are released, so their next retransmission is routed as a new
    connection (through wlan0, where the cloud resets it) and the clients learn at
    once instead of retransmitting into the dead uplink until their own timeout
    (30 s here, longer than the test waits). The released entries (the short
    connections' TIME_WAIT entries through eth0 too) are gone from conntrack."""
    need_conntrack()
    lb = cloud_lab
    run = start(lb, agent)
    slots = flow_entries(lb)[0]
    wait_new_flow(run, lb, "eth")
    # An answer timeout far beyond the failover: only the network ends these.
    clients = long_lived(run, lb, "eth", count=4, timeout=30.0)
    cut = time.time()
    lb.cut("eth0")
    ok(run.wait_state, lambda s: s["uplinks"]["eth0"]["verdict"] != "online", FAILOVER_S, "eth0 no longer online")
    events = ok(run.wait_hooks, [("verdict", "eth0")], 5, after=cut, what="eth0's verdict hook line")
    left = next(e for e in events if e.event == "verdict" and e.iface == "eth0" and e.t >= cut)
    detect = left.t - cut
    # The stalled line's retransmissions back off (doubling): the first one after the
    # release comes at most about as long after it as the cut was before it.
    within = detect + 3.0
    lab_ok(run, clients.wait_all, lambda c: c.answers("wifi", since=cut), within + 5,
           "the clients' next connections answered through wifi")
    problems = []
    for c in clients:
        end = c.end_of(1)
        if end is None or end.event != "reset" or not left.t - 1.0 <= end.t <= left.t + within:
            problems.append(f"connection 1 not reset after eth0 left online ({left.t - cut:.2f} s after the cut): "
                            f"{c.tail(8)}")
            continue
        nxt = c.answers("wifi", since=end.t)
        if not nxt or nxt[0].t - end.t > 3.0:
            problems.append(f"the next connection not answered through wifi within 3 s: {c.tail(8)}")
    pinned = [e for e in lan_entries(lb) if e[2] & MARK_MASK == mark_of(slots, "eth0")]
    if pinned:
        problems.append(f"LAN entries still carrying eth0's mark {mark_of(slots, 'eth0'):#x}: {pinned}")
    if problems:
        fail(run, "eth0 cut, its connections must be released:\n  " + "\n  ".join(problems))
    print(f"\neth0 left online {detect:.2f} s after the cut ({left.reason}); connections reset "
          + ", ".join(f"{c.end_of(1).t - cut:.2f}" for c in clients) + " s after the cut")


# --- the spread -------------------------------------------------------------------------

TIER_3_1 = {"eth0": {"tier": "1", "weight": "3"}, "wlan0": {"tier": "1", "weight": "1"}}


def test_weights_spread_new_connections(cloud_lab, agent):
    """New connections shared by weight within the primary's tier, counted by the
    upstream that answered each: with 2,000 of them a 3:1 share is 75 % within
    5.2 standard deviations (5 points), so a wrong weight fails and chance does not."""
    lb = cloud_lab
    run = start(lb, agent, interfaces=TIER_3_1)
    wait_spread(run, lb, ("eth", "wifi"))
    flows = lb.short_flows(SHORT)
    counts = Counter(f.upstream if f.ok else f.event for f in flows)
    share = 100.0 * counts["eth"] / max(1, counts["eth"] + counts["wifi"])
    print(f"\n{SHORT} new connections: {dict(counts)}; eth0's share {share:.1f} %")
    if len(flows) != SHORT or set(counts) - {"eth", "wifi"}:
        fail(run, f"every connection through eth0 or wlan0 (wwan0 is metered and has no tier): {dict(counts)} "
                  f"of {len(flows)}")
    if abs(share - 75.0) > 5.0:
        fail(run, f"weights 3:1: eth0 carried {share:.1f} % of {SHORT} new connections, not 75 % within 5 points")


def test_sticky_host_keeps_each_lan_host_on_one_uplink(hosts_lab, agent):
    """`sticky = host`: a LAN host's new connections all take one uplink (a bank's
    session sees one address), chosen by a hash of its address with the same
    weights. 32 hosts rather than 2: with 2, both hashing to eth0 (a chance of
    9 in 16) could not be told from no spread at all."""
    lb = hosts_lab
    run = start(lb, agent, flows={"sticky": "host"}, interfaces=TIER_3_1)
    # One connection per host until the hosts' choices use both uplinks: with the
    # spread in place 32 hosts all hash to eth0 once in 10,000.
    ok(run.wait_until, lambda: {f.upstream for f in lb.short_flows(HOSTS, sources=lb.lan_hosts, timeout=0.5)}
       >= {"eth", "wifi"}, CHOICE_S, f"{HOSTS} LAN hosts' new connections through eth and wifi")
    flows = lb.short_flows(HOSTS * PER_HOST, sources=lb.lan_hosts)
    by_host = {}
    for f in flows:
        by_host.setdefault(f.source, Counter())[f.upstream if f.ok else f.event] += 1
    split = {h: dict(c) for h, c in by_host.items() if len(c) != 1}
    uplinks = Counter(next(iter(c)) for c in by_host.values() if len(c) == 1)
    print(f"\nsticky = host: {len(by_host)} hosts, {dict(uplinks)} (hosts per uplink), split: {len(split)}")
    if len(flows) != HOSTS * PER_HOST or len(by_host) != HOSTS:
        fail(run, f"{len(flows)} connections from {len(by_host)} hosts, expected {HOSTS * PER_HOST} from {HOSTS}")
    if split:
        fail(run, f"sticky = host: hosts whose new connections took more than one uplink: {split}")
    if set(uplinks) != {"eth", "wifi"}:
        fail(run, f"sticky = host with weights 3:1: the hosts' uplinks {dict(uplinks)}, expected eth and wifi")


# --- a traffic class ----------------------------------------------------------------------

def test_class_takes_its_uplinks_in_order(cloud_lab, agent):
    """A class's new connections take the first usable of its uplinks, whatever
    the spread (1:1 over eth0 and wlan0 here, so "all through eth0" is the class's
    doing), and the next one in its list when the first is not usable: wwan0,
    which the rest never take (metered, no tier)."""
    lb = cloud_lab
    run = start(lb, agent, interfaces={"eth0": {"tier": "1"}, "wlan0": {"tier": "1"}},
                classes={"tunnel": {"protocol": "tcp", "ports": str(CLASS_PORT), "uplinks": "eth0 wwan0"}})
    wait_spread(run, lb, ("eth", "wifi"))
    classed = Counter(f.upstream if f.ok else f.event for f in lb.short_flows(100, port=CLASS_PORT))
    if classed != {"eth": 100}:
        fail(run, f"the class's connections with eth0 usable: {dict(classed)}, expected all through eth0")
    cut_eth0(run, lb)
    wait_new_flow(run, lb, "cell", port=CLASS_PORT)
    classed = Counter(f.upstream if f.ok else f.event for f in lb.short_flows(100, port=CLASS_PORT))
    others = Counter(f.upstream if f.ok else f.event for f in lb.short_flows(100))
    print(f"\neth0 cut: the class {dict(classed)}, the rest {dict(others)}")
    if classed != {"cell": 100}:
        fail(run, f"the class (uplinks eth0 wwan0) with eth0 cut: {dict(classed)}, expected all through wwan0")
    if others != {"wifi": 100}:
        fail(run, f"the rest with eth0 cut: {dict(others)}, expected all through wlan0 (wwan0: no tier)")


# --- the table removed ----------------------------------------------------------------------

@pytest.mark.parametrize("how", ["firewall-reload", "delete-table"])
def test_removed_table_comes_back(cloud_lab, agent, how):
    """`firewall-reload`: what an admin's `systemctl reload nftables` does with an
    /etc/nftables.conf that starts with `flush ruleset` (Debian's does) and holds
    the LAN's NAT: one transaction, every table gone, the admin's own loaded
    again (the lab's masquerade and counters), so the LAN's NAT never lapses and
    only uplinkd's table must come back. `delete-table`: another tool deleting
    uplinkd's table alone."""
    lb = cloud_lab
    run = start(lb, agent, classes={"wifi-only": {"protocol": "tcp", "ports": str(CLASS_PORT),
                                                  "uplinks": "wlan0"}})
    wait_new_flow(run, lb, "eth")
    wait_new_flow(run, lb, "wifi", port=CLASS_PORT)
    busy = long_lived(run, lb, "eth", count=1, name="busy")
    idle = long_lived(run, lb, "wifi", count=1, name="idle", port=CLASS_PORT)
    idle[0].pause()
    lab_ok(run, idle.wait_all, lambda c: [e for e in c.events() if e.event == "paused"], 5, "the idle client paused")
    removed = time.monotonic()
    since = time.time()
    if how == "firewall-reload":
        lb.reload_firewall()
    else:
        subprocess.run(lb.exec_argv("gw", [tool_path("nft") or "nft", "delete", "table", *FLOW_TABLE]),
                       check=True, timeout=10)
    ok(run.wait_until, lambda: flow_entries_ready(lb), TABLE_BACK_S, "table inet uplinkd back")
    back = time.monotonic() - removed
    idle[0].resume()
    lab_ok(run, idle.wait_all, lambda c: len(c.answers(since=since)) >= 5, 5,
           "the idle connection answering again")
    problems = []
    for c, via in ((busy[0], "eth"), (idle[0], "wifi")):
        if any(e.ended for e in c.events()) or {e.connection for e in c.events()} != {1}:
            problems.append(f"{c.name}'s connection lost: {c.tail(8)}")
        elif {e.upstream for e in c.answers(since=since)} != {via}:
            problems.append(f"{c.name}'s answers after the removal not all through {via}: {c.tail(8)}")
    fresh = Counter(f.upstream for f in lb.short_flows(20))
    classed = Counter(f.upstream for f in lb.short_flows(20, port=CLASS_PORT))
    if fresh != {"eth": 20} or classed != {"wifi": 20}:
        problems.append(f"new connections after the table came back: {dict(fresh)}, the class's {dict(classed)}")
    if problems:
        fail(run, f"{how}: table inet uplinkd back after {back:.2f} s, but:\n  " + "\n  ".join(problems))
    print(f"\n{how}: table inet uplinkd back after {back:.2f} s; both connections alive")
