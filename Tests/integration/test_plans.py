"""Metered uplinks as operators run them, end to end in the failover lab
(failoverlab.py: eth0, wlan0, wwan0 with the shipped route-failover hook; the agent
at its defaults except where a test says), the counting checked against the wire:
the lab's nftables counters (IPv4 at the IP level) and the kernel's own link
statistics (`ip -s link`), read while the agent is stopped (`keep-routes-on-stop`
keeps the LAN's traffic flowing meanwhile) or while wwan0 is quiet.

- LAN traffic (small requests, 1 MB downloads, a long-lived upload) through wwan0
  once eth0 and wlan0 are cut is counted within 1 % of the nftables counters,
  across a restart.
- Exact across restarts (clean, and SIGKILL) and the interface deleted and created
  again mid-cycle: the plan grows by exactly what the devices carried at the IP
  level, traffic while the agent was stopped included, nothing twice.
- A capped wwan0 (at-cap last-resort; priority eth0 wwan0 wlan0) is passed over for
  wlan0 when eth0 fails, is primary only once wlan0 fails too, and hands back to
  wlan0 as soon as it is online (no hold-down); hooks got plan events at 75, 95 and
  100 % with the UPLINK_PLAN_* variables; `uplinkd plan --reset` starts a new cycle.
- A cold wwan0 sends no byte (nftables) while eth0 is primary, and takes over when
  eth0 is cut; with the modem rig, `standby-bearer = disconnected` keeps its bearer
  down meanwhile and connects it for the failover.
- wwan0 primary (eth0 and wlan0 cut), the LAN idle: its upstream cut is found
  within 2 minutes.
- Billing cycles follow the agent's local time (TZ=Europe/Berlin: the cycle runs
  from Berlin's midnight on the 1st to the next month's); without a running agent
  `plan --reset` changes the plan file, for an uplink with a plan only.
- Failback flush (FAILBACK_FLUSH=yes): a long-lived TCP connection from the LAN
  through wlan0 is reset at the failback to eth0, and its client's next connection
  leaves through eth0; without the setting, the connection is not told (only its
  client's own timeout ends it) and its NAT entry to wlan0's address stays (the test
  can fail). The gateway uses static SNAT here and eth0's upstream drops foreign
  source addresses: behind masquerade Linux drops a flow whose packets change
  interface by itself, and the lab's upstreams are separate islands.
- `uplinkd run --plan-file FILE` keeps the counts in FILE and never touches the
  machine's /var/lib/uplinkd/plans (every test agent has a plan file of its own).

Run as root: sudo python3 -m pytest -v Tests/integration/test_plans.py
"""

import signal
import subprocess
import time
from pathlib import Path

import pytest

import modemrig
from agentrun import config_text, env_dump_hook, parse_env_dumps, uplink_is
from failoverlab import wait_settled
from lab import tool_path
from plansupport import (Bulk, TcpFlows, device_counters, fetch, ip_bytes, plan_file, plan_used, recreate,
                         quiet_link, snat_to_fixed_addresses, validate_sources,
                         wire_bytes)
from pytesthelp import skip_or_fail

SETTLE = 60.0
FAILOVER = 30.0


def config(lb, tmp_path, wwan0=None, agent=None, others=None):
    """The lab's configuration with a plan file in tmp_path and wwan0's keys."""
    keys = {"plan-file": str(tmp_path / "plans")}
    keys.update(agent or {})
    interfaces = dict(others or {})
    interfaces["wwan0"] = dict(wwan0 or {})
    return lb.agent_config(interfaces=interfaces, sections={"agent": keys})


def start(agent, lb, text, name="agent", hooks=None, **kw):
    all_hooks = dict(lb.agent_hooks())
    all_hooks.update(hooks or {})
    return agent(lb, config=text, hooks=all_hooks, name=name, **kw)


def first_event(run, predicate, what, timeout=10):
    """The first hook event matching predicate, waited for: the state file says a
    change happened before the recording hook has run for it."""
    return run.wait_until(lambda: next((e for e in run.events() if predicate(e)), None), timeout, what)


def wait_primary(run, name, timeout, what=None):
    return run.wait_state(lambda st: st["primary"] == name, timeout, what or f"{name} primary")


def test_lan_traffic_through_wwan0_is_counted_within_1_percent_of_the_wire(fresh_flab, agent, tmp_path):
    lb = fresh_flab
    text = config(lb, tmp_path, {"plan": "10GB"}, {"keep-routes-on-stop": "yes"})
    run = start(agent, lb, text)
    wait_settled(run, lb, SETTLE)
    lb.cut("eth0")
    lb.cut("wlan0")
    wait_primary(run, "wwan0", FAILOVER)
    assert run.stop() == 0
    used, wire = plan_used(tmp_path / "plans", "wwan0"), wire_bytes(lb, "wwan0")
    # A new agent: the routes stay, so the LAN's traffic leaves through wwan0 at once.
    run = start(agent, lb, text, name="second")
    wait_primary(run, "wwan0", FAILOVER)
    lan = lb.lan_client()
    bulk = Bulk(lb)
    flows = TcpFlows(lb)
    flows.client(payload=1400, period=0.02)
    lan.wait_flowing(via="cell")
    flows.wait(lambda ev: [e for e in ev if e[2] == "answer" and e[3] == "cell"][50:], 20, "the upload answered")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and bulk.received < 8 << 20:
        time.sleep(0.5)
    lan.stop()
    bulk.stop()
    flows.stop_client()
    assert run.stop() == 0
    counted = plan_used(tmp_path / "plans", "wwan0") - used
    carried = wire_bytes(lb, "wwan0") - wire
    print(f"\nwwan0: counted {counted} bytes, nftables {carried} bytes "
          f"({100 * (counted - carried) / carried:+.3f} %), {bulk.received} bytes of downloads")
    assert bulk.received >= 4 << 20, "too little bulk traffic to judge"
    assert abs(counted - carried) <= carried / 100


def test_exact_across_restarts_and_the_interface_created_again(fresh_flab, agent, tmp_path):
    lb = fresh_flab
    # Cold: the agent sends nothing on wwan0 while eth0 is primary, so its counters
    # move only with what this test sends through it.
    text = config(lb, tmp_path, {"plan": "10GB", "standby": "cold"})
    quiet_link(lb, "wwan0")
    run = start(agent, lb, text)
    wait_settled(run, lb, SETTLE)
    assert fetch(lb, "gw", 300_000, "wwan0") == 300_000
    assert run.stop() == 0
    used0, device0 = plan_used(tmp_path / "plans", "wwan0"), device_counters(lb, "wwan0")
    # While no agent runs.
    assert fetch(lb, "gw", 200_000, "wwan0") == 200_000
    # An agent killed (no last reading, no file written at its stop).
    run = start(agent, lb, text, name="killed")
    wait_settled(run, lb, SETTLE)
    assert fetch(lb, "gw", 100_000, "wwan0") == 100_000
    run.stop(signal.SIGKILL)
    # The next one goes on from the file; then wwan0 is deleted and created again.
    run = start(agent, lb, text, name="third")
    wait_settled(run, lb, SETTLE)
    assert fetch(lb, "gw", 150_000, "wwan0") == 150_000
    # wwan0 is quiet now (cold, eth0 primary): wait for the reading that has all of it,
    # since a veth's last word at its removal leaves out what it received.
    old = device_counters(lb, "wwan0")
    before = used0 + ip_bytes(old) - ip_bytes(device0)
    run.wait_state(lambda st: int(st["uplinks"]["wwan0"]["plan_used_bytes"]) == before, 15,
                   f"a reading with all wwan0 carried ({before} bytes)")
    recreate(lb, "wwan0")
    quiet_link(lb, "wwan0")
    run.wait_stderr(r"wwan0: removed; its last counters go to its data plan", 10)
    run.wait_state(lambda st: uplink_is(st, "wwan0", "online"), 30, "the new wwan0 online")
    assert fetch(lb, "gw", 250_000, "wwan0") == 250_000
    assert run.stop() == 0
    new = device_counters(lb, "wwan0")
    counted = plan_used(tmp_path / "plans", "wwan0") - used0
    carried = ip_bytes(old) - ip_bytes(device0) + ip_bytes(new)
    print(f"\nwwan0: counted {counted}, the devices carried {carried} IP bytes (first device {device0} at the "
          f"first stop, {old} before its deletion; the new one {new}; plan file {plan_file(tmp_path / 'plans')})")
    assert counted == carried


MACHINE_PLAN_FILE = Path("/var/lib/uplinkd/plans")


def file_mark(path: Path):
    """(size, mtime) of a file, None when there is none."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


def test_run_plan_file_keeps_the_counts_there_and_never_in_the_machines_file(fresh_flab, agent, tmp_path):
    """`uplinkd run --plan-file FILE` (AgentRun passes one when the configuration
    names none): the counts go there, and the machine's /var/lib/uplinkd/plans is
    not touched. Without it every test agent and soaked gateway shared that one
    file, each restoring the counts another left (same boot, same ifindex)."""
    lb = fresh_flab
    text = lb.agent_config(interfaces={"wwan0": {"plan": "10GB"}})
    before = file_mark(MACHINE_PLAN_FILE)
    run = start(agent, lb, text)
    wait_settled(run, lb, SETTLE)
    assert fetch(lb, "gw", 100_000, "wwan0") == 100_000
    assert run.stop() == 0
    assert plan_used(run.plan_path, "wwan0") >= 100_000
    assert file_mark(MACHINE_PLAN_FILE) == before, f"{MACHINE_PLAN_FILE} changed"


def test_a_capped_backup_is_the_last_resort_and_hands_back_at_once(fresh_flab, agent, tmp_path):
    lb = fresh_flab
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    text = config(lb, tmp_path, {"plan": "1MB"}, {"priority": "eth0 wwan0 wlan0"})
    run = start(agent, lb, text, hooks={"20-env": env_dump_hook(dumps)})
    wait_settled(run, lb, SETTLE)
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["plan_used_bytes"] != "-", 15, "wwan0's plan counting")
    # The lab's server sends at most 1 MiB: with the request and the headers, past 1 MB.
    assert fetch(lb, "gw", 1 << 20, "wwan0") == 1 << 20
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["plan_capped"] == "yes", 15, "wwan0's plan used up")
    def plan_events():
        events = [d for d in parse_env_dumps(dumps) if d.get("UPLINK_EVENT") == "plan"]
        return events if len(events) >= 3 else None

    plans = run.wait_until(plan_events, 10, "three plan events")
    assert [d["UPLINK_PLAN_THRESHOLD"] for d in plans] == ["75", "95", "100"]
    cap = plans[-1]
    assert cap["UPLINK_INTERFACE"] == "wwan0" and cap["UPLINK_PLAN_BYTES"] == "1000000"
    assert int(cap["UPLINK_PLAN_USED_BYTES"]) >= 1_000_000 and int(cap["UPLINK_PLAN_PERCENT"]) >= 100
    assert int(cap["UPLINK_PLAN_RESETS"]) > time.time()
    lb.cut("eth0")
    wait_primary(run, "wlan0", FAILOVER, "wlan0 primary, the capped wwan0 passed over")
    lb.cut("wlan0")
    wait_primary(run, "wwan0", FAILOVER, "wwan0 primary as the last resort")
    back = time.time()
    lb.restore("wlan0")
    run.wait_state(lambda st: st["primary"] == "wlan0", FAILOVER, "wlan0 primary again")
    handover = first_event(run, lambda e: e.event == "primary" and e.primary == "wlan0" and e.t >= back,
                           "the hook event of wlan0's return")
    print(f"\nwlan0 back: primary again after {handover.t - back:.1f} s ({handover.primary_reason})")
    assert handover.previous_primary == "wwan0" and handover.primary_reason == "capped"
    assert handover.t - back < 25, "a capped primary hands over without the 30 s hold-down"
    # A new cycle by hand (the running agent takes it on SIGUSR1): the cap is gone.
    done = run_plan(run, "wwan0", "--reset")
    assert done.returncode == 0, done.stderr
    st = run.state()["uplinks"]["wwan0"]
    assert st["plan_capped"] == "no" and int(st["plan_used_bytes"]) < 100_000
    shown = run_plan(run, "wwan0")
    assert shown.returncode == 0 and "wwan0: " in shown.stdout and "of 1 MB used" in shown.stdout, shown.stdout


def run_plan(run, *args):
    argv = [str(run.binary), "plan", *args, "--state", str(run.state_path), "--config", str(run.config)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def test_a_cold_backup_sends_nothing_and_takes_over_on_a_cut(fresh_flab, agent, tmp_path):
    lb = fresh_flab
    text = config(lb, tmp_path, {"standby": "cold"}, {"priority": "eth0 wwan0 wlan0"})
    run = start(agent, lb, text)
    wait_settled(run, lb, SETTLE)
    # Its first round is over once it is online; from then on, nothing.
    before = lb.counters()["wwan0"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = lb.counters()["wwan0"]
        assert now == before, f"bytes on wwan0's wire while eth0 was primary: {before} -> {now}"
        time.sleep(0.5)
    assert run.state()["uplinks"]["wwan0"]["standby"] == "cold"
    lan = lb.lan_client()
    lan.wait_flowing(via="eth")
    cut = time.time()
    lb.cut("eth0")
    wait_primary(run, "wwan0", FAILOVER, "wwan0 primary after eth0's cut")
    lan.wait_flowing(via="cell", since=cut)
    last, first = lan.outage(cut, "cell")
    print(f"\ncold wwan0: LAN traffic back {first - cut:.2f} s after the cut")
    lan.stop()


def test_a_metered_primary_with_an_idle_lan_finds_its_dead_upstream_within_2_minutes(fresh_flab, agent, tmp_path):
    lb = fresh_flab
    run = start(agent, lb, config(lb, tmp_path))
    wait_settled(run, lb, SETTLE)
    lb.cut("eth0")
    lb.cut("wlan0")
    wait_primary(run, "wwan0", FAILOVER)
    cut = time.time()
    lb.cut("wwan0")
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["verdict"] != "online", 130, "wwan0 no longer online")
    left = first_event(run, lambda e: e.event == "verdict" and e.iface == "wwan0" and e.t >= cut,
                       "the hook event of wwan0's verdict")
    print(f"\nwwan0 primary, idle: left online {left.t - cut:.1f} s after its upstream was cut ({left.reason})")
    assert left.t - cut <= 120


def failback(lb, agent, tmp_path, flush: bool):
    """eth0 cut, a long-lived connection from the LAN through wlan0, eth0 back:
    (the agent, the flows, when the failback hook started)."""
    if tool_path("conntrack") is None:
        skip_or_fail("conntrack is not installed (Debian: conntrack)", "conntrack")
    lb.route_hook_conf.write_text("FAILBACK_FLUSH=yes\n" if flush else "# the hook's defaults\n")
    snat_to_fixed_addresses(lb)
    validate_sources(lb, "eth0")
    run = start(agent, lb, config(lb, tmp_path, agent={"hold-down": "5s"}))
    wait_settled(run, lb, SETTLE)
    flows = TcpFlows(lb)
    lb.cut("eth0")
    wait_primary(run, "wlan0", FAILOVER)
    # The state file names the new primary before the route hook has run: the client
    # starts once the hook's default route leads through wlan0, or its first
    # connection is still sent out of eth0 and times out.
    wlan0 = lb.uplink("wlan0")
    run.wait_until(lambda: lb.owned_table() == [("default", wlan0.router, "wlan0", "77")], FAILOVER,
                   "the route hook's default route through wlan0", poll=0.1)
    flows.client()
    flows.wait(lambda ev: [e for e in ev if e[2] == "answer" and e[3] == "wifi"][20:], 20, "the flow through wlan0")
    restored = time.time()
    lb.restore("eth0")
    wait_primary(run, "eth0", FAILOVER, "eth0 primary again (failback)")
    hook = first_event(run, lambda e: e.event == "primary" and e.primary == "eth0" and e.t >= restored,
                       "the failback's hook event")
    assert hook.primary_reason == "recovered"
    return run, flows, hook.t


def connection_through(flows, upstream: str, before: float) -> int:
    """The client's connection last answered through `upstream` before a time: the
    long-lived one the failback finds (not necessarily the client's first)."""
    return [e for e in flows.events() if e[0] < before and e[2] == "answer" and e[3] == upstream][-1][1]


def test_failback_flush_moves_a_long_lived_lan_connection_to_the_primary(fresh_flab, agent, tmp_path):
    run, flows, at = failback(fresh_flab, agent, tmp_path, flush=True)
    moved = flows.wait(lambda ev: [e for e in ev if e[0] >= at and e[2] == "answer" and e[3] == "eth"], 10,
                       "an answer through eth0 after the failback")[0]
    events = [e for e in flows.events() if e[0] >= at]
    print(f"\nfailback flush: answers through eth0 {moved[0] - at:.2f} s after the failback hook started; "
          f"events: {[e[2] for e in events[:6]]}")
    old = connection_through(flows, "wifi", before=at)
    assert any(e[1] == old and e[2] in ("reset", "closed") for e in events), "the old connection was not reset"
    assert moved[1] > old, "the answer through eth0 came on a new connection"
    assert "conntrack entries NATed to" in run.stderr()


def test_without_the_flush_the_long_lived_connection_does_not_move(fresh_flab, agent, tmp_path):
    lb = fresh_flab
    run, flows, at = failback(lb, agent, tmp_path, flush=False)
    # The client is never told: its connection stays NATed to wlan0's address, its
    # packets now leave through eth0 with that address and meet nothing, and only
    # its own 1 s answer timeout ends it (with the flush: a reset at once).
    old = connection_through(flows, "wifi", before=at)
    ended = flows.wait(lambda ev: [e for e in ev if e[0] >= at and e[1] == old and e[2] != "answer"], 10,
                       "the old connection's end")[0]
    assert ended[2] == "timeout", flows.events()
    wlan0 = lb.uplink("wlan0").address
    entries = subprocess.run(lb.exec_argv("gw", [tool_path("conntrack") or "conntrack", "-L", "-p", "tcp",
                                                 "--dport", "5002", "--reply-dst", wlan0]),
                             capture_output=True, text=True, timeout=10).stdout
    print(f"\nwithout the flush, after the failback: the old connection {ended[2]} "
          f"{ended[0] - at:.2f} s after the hook; its entry: {entries.strip()}")
    assert f"dst={wlan0}" in entries, "the old connection's NAT entry to wlan0 is still there"
    assert "conntrack entries NATed to" not in run.stderr()


@pytest.fixture
def rig(request, failover_ok):
    reason = modemrig.unavailable_reason()
    if reason is not None:
        skip_or_fail(reason, "the modem rig")
    with modemrig.ModemRig() as r:
        r.mmcli("-m", r.modem_path(), "--simple-connect=apn=internet")
        yield r
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            print(f"\n--- modem rig logs ({r.dir}) ---\n{r.logs_text()}")


def test_a_cold_modem_keeps_its_bearer_down_until_it_is_needed(fresh_flab, rig, agent, tmp_path):
    lb = fresh_flab
    text = config(lb, tmp_path, {"modem": modemrig.DEFAULT_IMEI, "standby": "cold", "standby-bearer": "disconnected"},
                  {"priority": "eth0 wwan0 wlan0"})
    mark = rig.log_mark()
    run = start(agent, lb, text, env={"DBUS_SYSTEM_BUS_ADDRESS": rig.bus_address})
    run.wait_state(lambda st: st["primary"] == "eth0", SETTLE, "eth0 primary")
    run.wait_until(lambda: [c for c in rig.commands(mark) if c.startswith("AT+CGACT=0") or c.startswith("ATH")], 30,
                   "the bearer disconnected for the standby")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "down", "standby"), 30, "wwan0 down (standby)")
    before = lb.counters()["wwan0"]
    # Parked: no probe, no recovery step.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        assert lb.counters()["wwan0"] == before
        time.sleep(0.5)
    assert run.state()["uplinks"]["wwan0"]["modem_recoveries_total"] == "0"
    dial = rig.log_mark()
    cut = time.time()
    lb.cut("eth0")
    run.wait_until(lambda: [c for c in rig.commands(dial) if c.startswith("ATD")], 30, "the bearer dialled")
    wait_primary(run, "wwan0", FAILOVER, "wwan0 primary after eth0's cut")
    hook = first_event(run, lambda e: e.event == "primary" and e.primary == "wwan0" and e.t >= cut,
                       "the failover's hook event")
    print(f"\ncold wwan0 with its bearer down: primary {hook.t - cut:.1f} s after eth0's cut")
    assert hook.previous_primary == "eth0", "one primary change, not two"


def test_billing_cycles_follow_the_agents_local_time(lab, serve, agent, tmp_path):
    """`plan-start = 1` with the agent's TZ=Europe/Berlin: the cycle starts at Berlin's
    midnight on the 1st (the C library's local time, as the agent reads it), an hour
    or two before UTC's, and ends at the next one; the same agent under UTC would
    start at UTC's midnight. Then, the agent stopped, `plan --reset` changes the plan
    file itself, for an uplink with a plan only. The basic lab: the agent only has to
    count."""
    import datetime
    import json
    try:
        import zoneinfo
        berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    except Exception as exc:   # no tzdata: the agent's zone could not be checked either
        skip_or_fail(f"no time zone data for Europe/Berlin ({exc})", "the local-time test")
    serve(lab, "inet", "internet")
    text = config_text({"plan-file": str(tmp_path / "plans")},
                       extra="\n[interface wwan0]\nplan = 5GB\nplan-start = 1\n")
    run = agent(lab, config=text, env={"TZ": "Europe/Berlin"})

    def plan():
        proc = run.status("--json")
        if proc.returncode != 0:
            return None
        ups = {u["interface"]: u for u in json.loads(proc.stdout)["uplinks"]}
        return ups.get("wwan0", {}).get("plan")
    got = run.wait_until(plan, 30, "wwan0's plan in status --json")
    start = datetime.datetime.fromtimestamp(got["cycle_start"], berlin)
    end = datetime.datetime.fromtimestamp(got["cycle_end"], berlin)
    next_month = (start.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)
    midnight_on_the_1st = lambda t: (t.day, t.hour, t.minute, t.second) == (1, 0, 0, 0)
    if not (midnight_on_the_1st(start) and midnight_on_the_1st(end) and (end.year, end.month) == (next_month.year, next_month.month)
            and got["cycle_start"] <= time.time() < got["cycle_end"]):
        raise AssertionError(f"cycle {start.isoformat()} .. {end.isoformat()} (Berlin): not from the 1st's midnight "
                             f"to the next month's, around now\n{run.transcript()}")
    # Stopped, `plan --reset` changes the plan file itself, and only for an uplink the
    # configuration gives a plan.
    assert run.stop() == 0
    asked = int(time.time())
    refused = run_plan(run, "eth0", "--reset")
    assert refused.returncode == 1 and "eth0 has no data plan" in refused.stderr, refused
    done = run_plan(run, "wwan0", "--reset")
    assert done.returncode == 0 and "the agent is not running" in done.stdout, done
    assert plan_file(tmp_path / "plans")["wwan0"][0] >= asked and "eth0" not in plan_file(tmp_path / "plans")
