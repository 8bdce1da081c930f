"""Cellular uplinks as modems, end to end: the real ModemManager (modemrig.py: its
test mode, an emulated AT modem, a private D-Bus bus) beside the failover lab, the
agent following it over sd-bus with `[interface wwan0] modem = IMEI` (the rig's
bearer is PPP-style, without a network device, so the lab's veth wwan0 stands for
the modem's data interface).

What is shown: registration lost makes wwan0 down (modem-not-registered) without a
probe byte on its wire while it lasts, and back online after one round; a weak
signal degrades it and a cellular primary hands over; a modem registered while its
upstream is dead gets its bearer reconnected (the emulator sees the commands) and
then a reset; ModemManager restarted is followed again, and so is the whole system
bus restarted; without ModemManager the agent works as it did, and without a cellular
uplink it never looks for the bus. Timings are measured by Tests/bench/bench_modem.py, not here.
"""

import time

import pytest

import modemrig
from agentrun import uplink_is
from failoverlab import wait_settled

IMEI = modemrig.DEFAULT_IMEI
SETTLE = 60.0


@pytest.fixture
def rig(request, rig_ok, failover_ok):
    """A rig whose modem's bearer is connected, as a connection manager would leave it."""
    with modemrig.rig_for_test(request, connect=True) as r:
        yield r


def modem_config(lb, wwan0=None, agent=None):
    keys = {"modem": IMEI}
    keys.update(wwan0 or {})
    return lb.agent_config(interfaces={"wwan0": keys}, sections={"agent": agent or {}})


def start(agent, lb, rig, config, **kw):
    env = {"DBUS_SYSTEM_BUS_ADDRESS": rig.bus_address} if rig is not None else {}
    env.update(kw.pop("env", {}))
    return agent(lb, config=config, hooks=lb.agent_hooks(), env=env, **kw)


def wwan0(run):
    return run.state()["uplinks"]["wwan0"]


def wwan0_bytes_out(lb):
    return lb.counters()["wwan0"]["local_out"][1]


def test_registration_lost_is_down_without_a_probe_and_back_after_one_round(fresh_flab, rig, agent):
    run = start(agent, fresh_flab, rig, modem_config(fresh_flab))
    wait_settled(run, fresh_flab, SETTLE)
    run.wait_state(lambda st: st["uplinks"]["wwan0"].get("modem_equipment_id") == IMEI, 10, "wwan0's modem in the state file")
    assert wwan0(run)["modem_registration"] == "home" and wwan0(run)["modem_state"] == "connected"

    rig.set_registration("searching")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "down", "modem-not-registered"), 10,
                   "wwan0 down (modem-not-registered)")
    sent = wwan0_bytes_out(fresh_flab)
    requests = len(fresh_flab.probe_requests("wwan0"))
    # Unregistered for a while: not one probe byte leaves on wwan0.
    deadline = time.monotonic() + 12
    while time.monotonic() < deadline:
        assert wwan0_bytes_out(fresh_flab) == sent, "wwan0 sent bytes while its modem was unregistered"
        time.sleep(0.5)
    assert len(fresh_flab.probe_requests("wwan0")) == requests
    assert wwan0(run)["verdict"] == "down"

    back = len(fresh_flab.probe_requests("wwan0"))
    rig.set_registration("home")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "online"), 15, "wwan0 online again")
    # One full round decided it (its probes, every one of them once).
    decided = fresh_flab.probe_requests("wwan0")[back:]
    assert 1 <= len(decided) <= 5, decided
    # The state file is written before the hooks run: wait for the verdict hook read.
    runs = run.wait_hooks([("verdict", "wwan0", "online", "validated")], 10, latest=True,
                          what="wwan0's verdict hook back online")
    down = [e for e in runs if e.event == "verdict" and e.iface == "wwan0"]
    assert [(e.previous, e.verdict, e.reason) for e in down[-2:]] == [
        ("online", "down", "modem-not-registered"), ("down", "online", "validated")]


def test_each_word_of_the_modem_is_a_reason(fresh_flab, rig, agent):
    run = start(agent, fresh_flab, rig, modem_config(fresh_flab))
    wait_settled(run, fresh_flab, SETTLE)
    rig.set_registration("denied")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "down", "modem-not-registered"), 10, "denied: not registered")
    rig.set_registration("home")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "online"), 15, "wwan0 online")
    # The bearer disconnected (ModemManager 1.20 ignores a network-side end of a PPP
    # call, so it is ended from ModemManager's side here).
    rig.mmcli("-m", rig.modem_path(), "--simple-disconnect")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "down", "bearer-disconnected"), 10,
                   "the bearer disconnected: bearer-disconnected")
    status = run.status("--json")
    assert '"modem":{"equipment_id":"861234567890128"' in status.stdout, status.stdout
    human = run.status().stdout
    assert "wwan0: down (wwan, bearer-disconnected)" in human and "modem registered home" in human, human


def test_a_weak_signal_degrades_a_cellular_primary_which_hands_over(fresh_flab, rig, agent):
    config = modem_config(fresh_flab, agent={"priority": "wwan0 ethernet wifi", "degraded-for": "3s",
                                             "modem-signal-interval": "5s", "avoid-degraded": "any"})
    run = start(agent, fresh_flab, rig, config)
    wait_settled(run, fresh_flab, SETTLE, primary="wwan0")
    rig.set_signal(rsrp_dbm=-121)
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["degraded"] == "yes", 20, "wwan0 degraded by its RSRP")
    assert wwan0(run)["modem_rsrp_dbm"] == "-121"
    run.wait_state(lambda st: st["primary"] == "eth0", 20, "the primary handed over to eth0")
    # The state file is written before the hooks run: wait for the primary hook read.
    handover = [e for e in run.wait_hooks([("primary", "eth0")], 10, latest=True,
                                          what="the primary hook for eth0") if e.event == "primary"][-1]
    assert (handover.previous_primary, handover.primary, handover.primary_reason) == ("wwan0", "eth0", "degraded")


def recovery_config(lb):
    # wwan0 is probed every 2 s here so that its dead upstream is found at once; the
    # ladder's own timing is the subject.
    return modem_config(lb, wwan0={"interval": "2s", "recover-after": "10s", "reset-after": "25s"},
                        agent={"priority": "wwan0 ethernet wifi"})


def wait_commands(run, rig, since, predicate, timeout, what):
    return run.wait_until(lambda: [c for c in rig.commands(since) if predicate(c)], timeout, what)


def reconnect_command(command):
    return command.startswith("AT+CGACT=0") or command.startswith("ATH")


def test_a_dead_bearer_is_reconnected_and_the_uplink_comes_back(fresh_flab, rig, agent):
    run = start(agent, fresh_flab, rig, recovery_config(fresh_flab))
    wait_settled(run, fresh_flab, SETTLE, primary="wwan0")
    mark = rig.log_mark()
    fresh_flab.cut("wwan0")
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["verdict"] != "online", 15, "wwan0 no longer online")
    wait_commands(run, rig, mark, reconnect_command, 30, "the bearer disconnected by the ladder")
    wait_commands(run, rig, mark, lambda c: c.startswith("ATD"), 30, "the bearer dialled again")
    fresh_flab.restore("wwan0")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "online"), 30, "wwan0 online after the reconnect")
    assert wwan0(run)["modem_recoveries_total"] == "1" and wwan0(run)["modem_recovery_step"] == "reconnect"
    assert not [c for c in rig.commands(mark) if "CFUN=15" in c]
    assert "recovery step reconnect" in run.stderr()


def test_a_modem_still_dead_after_the_reconnect_is_reset_and_comes_back(fresh_flab, rig, agent, tmp_path):
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    from agentrun import env_dump_hook, parse_env_dumps
    hooks = dict(fresh_flab.agent_hooks())
    hooks["20-env"] = env_dump_hook(dumps)
    run = agent(fresh_flab, config=recovery_config(fresh_flab), hooks=hooks,
                env={"DBUS_SYSTEM_BUS_ADDRESS": rig.bus_address})
    wait_settled(run, fresh_flab, SETTLE, primary="wwan0")
    first_path = rig.modem_path()
    mark = rig.log_mark()
    fresh_flab.cut("wwan0")
    wait_commands(run, rig, mark, reconnect_command, 40, "the reconnect step")
    wait_commands(run, rig, mark, lambda c: "CFUN=15" in c, 60, "the reset step (AT+CFUN=15)")
    fresh_flab.restore("wwan0")
    # The modem re-enumerates under a new path and is connected again.
    rig.wait_modem(timeout=30, other_than=first_path)
    run.wait_state(lambda st: uplink_is(st, "wwan0", "online") and st["uplinks"]["wwan0"]["modem_state"] == "connected",
                   60, "wwan0 online on the reset modem")
    assert wwan0(run)["modem_recoveries_total"] == "2" and wwan0(run)["modem_recovery_step"] == "reset"
    recover = [d for d in parse_env_dumps(dumps) if d.get("UPLINK_EVENT") == "recover"]
    assert [d["UPLINK_RECOVERY_STEP"] for d in recover] == ["reconnect", "reset"]
    assert all(d["UPLINK_INTERFACE"] == "wwan0" and d["UPLINK_MODEM_EQUIPMENT_ID"] == IMEI for d in recover)


def test_modemmanager_restarted_is_followed_again(fresh_flab, rig, agent):
    run = start(agent, fresh_flab, rig, modem_config(fresh_flab))
    wait_settled(run, fresh_flab, SETTLE)
    offset = run.stderr_size()
    rig.stop_modemmanager()
    run.wait_stderr(r"ModemManager left the bus", 10, offset)
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["modem_equipment_id"] == "-", 10, "no modem while ModemManager is away")
    assert wwan0(run)["verdict"] == "online"
    rig.start_modemmanager()
    rig.mmcli("-m", rig.modem_path(), "--simple-connect=apn=internet")
    run.wait_stderr(r"ModemManager \(re\)started on the bus", 20, offset)
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["modem_state"] == "connected", 20, "the modem followed again")
    rig.set_registration("searching")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "down", "modem-not-registered"), 10,
                   "the new ModemManager's word taken")


def test_the_system_bus_restarted_is_followed_again(fresh_flab, rig, agent):
    """dbus-daemon away for 10 s, then back with ModemManager: the agent attaches
    again (its new connection's descriptor often has the old one's number, which the
    loop once refused with epoll_ctl ENOENT, five times over 20 s)."""
    run = start(agent, fresh_flab, rig, modem_config(fresh_flab))
    wait_settled(run, fresh_flab, SETTLE)
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["modem_state"] == "connected", 20, "the modem followed")
    offset = run.stderr_size()
    path = rig.restart_bus(away_seconds=10)
    rig.mmcli("-m", path, "--simple-connect=apn=internet")
    back = time.monotonic()
    run.wait_state(lambda st: st["uplinks"]["wwan0"]["modem_state"] == "connected", 30,
                   "the modem followed again after the bus came back")
    print(f"followed again {time.monotonic() - back:.1f} s after ModemManager was back with its modem")
    print("\n".join(l for l in run.stderr_since(offset).splitlines() if "modem" in l or "bus" in l))
    later = run.stderr_since(offset)
    assert "cannot watch the connection" not in later, later
    rig.set_registration("searching")
    run.wait_state(lambda st: uplink_is(st, "wwan0", "down", "modem-not-registered"), 10,
                   "the word of ModemManager on the new bus taken")


def test_without_modemmanager_the_agent_works_as_before(fresh_flab, agent, tmp_path):
    run = start(agent, fresh_flab, None, modem_config(fresh_flab),
                env={"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"})
    wait_settled(run, fresh_flab, SETTLE)
    assert wwan0(run)["modem_equipment_id"] == "-"
    assert run.stderr().count("modems: no system bus") >= 1
    assert "error" not in run.stderr().lower()


def test_without_a_cellular_uplink_the_agent_never_looks_for_the_bus(fresh_flab, agent, tmp_path):
    """`modemmanager = auto` (the default) with one ethernet uplink: the modem watch
    never starts, so a gateway without a system bus says nothing of it, not even at
    debug level (the agent runs with -v -v). An agent that followed ModemManager from
    its start logged "modems: no system bus" before its first round."""
    config = fresh_flab.agent_config(sections={"uplinks": {"interfaces": "eth0"}})
    run = start(agent, fresh_flab, None, config, env={"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"})
    run.wait_state(lambda st: uplink_is(st, "eth0", "online") and st["primary"] == "eth0", SETTLE,
                   "eth0 online and primary")
    log = run.stderr()
    assert "modems:" not in log and "system bus" not in log, log


def test_check_and_links_show_the_modem_and_check_takes_its_word(fresh_flab, rig):
    env = {"DBUS_SYSTEM_BUS_ADDRESS": rig.bus_address}
    conf = fresh_flab.dir / "modem-check.conf"
    conf.write_text(modem_config(fresh_flab))
    import json
    import subprocess
    from lab import uplinkd_path

    def uplinkd(*args):
        argv = fresh_flab.exec_argv("gw", ["env", *(f"{k}={v}" for k, v in env.items()), str(uplinkd_path()), *args])
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    done = uplinkd("check", "wwan0", "--json", "--config", str(conf))
    report = json.loads(done.stdout)
    assert report["verdict"] == "online" and report["modem"]["equipment_id"] == IMEI, done.stdout
    assert report["modem"]["registration"] == "home"
    links = [json.loads(line) for line in uplinkd("links", "--json", "--config", str(conf)).stdout.splitlines()]
    assert [l["modem"]["equipment_id"] for l in links if l["interface"] == "wwan0"] == [IMEI]
    assert all(l["modem"] is None for l in links if l["interface"] != "wwan0")
    requests = len(fresh_flab.probe_requests("wwan0"))
    rig.set_registration("idle")
    # ModemManager hears of it at its next look at the modem: `check` asks it after.
    rig.wait_property(rig.modem_path(), "RegistrationState", lambda state: state == 0, 30,  # IDLE
                      interface="org.freedesktop.ModemManager1.Modem.Modem3gpp")
    done = uplinkd("check", "wwan0", "--json", "--config", str(conf))
    report = json.loads(done.stdout)
    assert (report["verdict"], report["reason"]) == ("down", "modem-not-registered"), done.stdout
    assert done.returncode == 3
    assert len(fresh_flab.probe_requests("wwan0")) == requests
