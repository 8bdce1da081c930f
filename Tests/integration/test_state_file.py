"""The state file as other services read it, end to end: format 2's named facts read by
the package's POSIX sh example, packaging/examples/state-reader.sh (a modem whose
operator name has a space, a data plan, a standby), by `uplinkd status --get`, by
`status --json` and by the hooks under the same names; a reader that waits for
`hooks_done` to reach `decision` finds the route hook's route in place even when the
hooks lag the decision; and `[agent] state-format = 1` keeps format 1's readers (awk
by column, `status`, `wait-online`) working.
"""

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

import modemrig
from agentrun import env_dump_hook, parse_env_dumps, parse_state
from failoverlab import wait_settled

IMEI = modemrig.DEFAULT_IMEI
SETTLE = 60.0
# Installed as /usr/share/doc/uplinkd/examples/state-reader.sh; uplinkd-state(5) points to it.
READER = Path(__file__).resolve().parents[2] / "packaging/examples/state-reader.sh"


@pytest.fixture
def rig(request, rig_ok, failover_ok):
    """A rig whose modem registers on "Vodafone DE" (a name with a space: set before
    the modem is enabled, as ModemManager reads it at registration) and whose bearer
    is connected, as a connection manager would leave it."""
    with modemrig.rig_for_test(request) as r:
        r.set_operator("Vodafone DE", "26202")
        r.mmcli("-m", r.modem_path(), "--simple-connect=apn=internet")
        yield r


def example_reader() -> Path:
    """The packaged reader as it is; `sh -n` must pass."""
    checked = subprocess.run(["sh", "-n", str(READER)], capture_output=True, text=True, timeout=10)
    assert checked.returncode == 0, f"{READER} is not valid sh: {checked.stderr}"
    return READER


def test_a_shell_reader_reads_every_uplink_by_name(fresh_flab, rig, agent, tmp_path):
    dumps = tmp_path / "env"
    dumps.mkdir()
    hooks = {**fresh_flab.agent_hooks(), "20-env": env_dump_hook(dumps)}
    config = fresh_flab.agent_config(interfaces={"wwan0": {"modem": IMEI, "plan": "10GB"}})
    run = agent(fresh_flab, config=config, hooks=hooks, env={"DBUS_SYSTEM_BUS_ADDRESS": rig.bus_address})
    wait_settled(run, fresh_flab, SETTLE)
    st = run.wait_state(lambda s: s["uplinks"]["wwan0"]["modem_operator"] == "Vodafone DE"
                        and s["uplinks"]["wwan0"]["plan_used_bytes"] != "-" and s["hooks_done"] == s["decision"],
                        SETTLE, "wwan0's operator and plan in the state file, the hooks caught up")
    assert "\nuplink wwan0 modem_operator Vodafone%20DE\n" in run.state_text()

    reader = example_reader()
    done = subprocess.run(["sh", str(reader)], capture_output=True, text=True, timeout=30,
                          env={"PATH": "/usr/bin:/bin", "UPLINKD_STATE": str(run.state_path)})
    assert done.returncode == 0, done
    lines = done.stdout.splitlines()
    assert lines[0] == "primary uplink: eth0", done.stdout
    for iface in ("eth0", "wlan0", "wwan0"):
        u = st["uplinks"][iface]
        assert f"{iface} is online ({u['reason']})" in lines, done.stdout
    assert "wwan0 operator: Vodafone DE" in lines, done.stdout
    used = [line for line in lines if line.startswith("wwan0 plan: ")]
    assert len(used) == 1 and used[0].endswith(" bytes used, standby warm"), done.stdout
    assert int(used[0].split()[2]) >= 0

    # One value without parsing; the names uplinkd-state(5) gives and no other.
    def get(*words):
        return run.status("--get", *words)
    assert (get("wwan0", "modem_operator").returncode, get("wwan0", "modem_operator").stdout) == (0, "Vodafone DE\n")
    assert get("primary").stdout == "eth0\n" and get("wwan0", "standby").stdout == "warm\n"
    assert get("eth0", "modem_operator").stdout == "\n"
    wrong = get("wwan0", "operator")
    assert wrong.returncode == 64 and "no uplink fact 'operator'" in wrong.stderr, wrong
    absent = get("wwan9", "verdict")
    assert absent.returncode == 1 and "wwan9" in absent.stderr, absent

    # The same names in the JSON and, as UPLINK_NAME, for the hooks.
    js = json.loads(run.status("--json").stdout)
    wwan0 = next(u for u in js["uplinks"] if u["interface"] == "wwan0")
    assert (wwan0["modem_operator"], wwan0["standby"], wwan0["plan_bytes"]) == ("Vodafone DE", "warm", 10_000_000_000)
    # A hook's environment is the state at its event, and wwan0's verdict may well
    # have come before ModemManager's operator: so read an event that comes after it
    # (wwan0's carrier lost).
    role, peer = fresh_flab.peer_of("wwan0")
    fresh_flab.ip(role, "link", "set", peer, "down")

    def lost():
        return [d for d in parse_env_dumps(dumps) if d.get("UPLINK_EVENT") == "verdict"
                and d.get("UPLINK_INTERFACE") == "wwan0" and d.get("UPLINK_VERDICT") == "down"]
    told = run.wait_until(lost, SETTLE, "the hooks told of wwan0's carrier loss")
    assert told[-1]["UPLINK_MODEM_OPERATOR"] == "Vodafone DE", told[-1:]
    assert told[-1]["UPLINK_PLAN_BYTES"] == "10000000000" and told[-1]["UPLINK_STANDBY"] == "warm"


SLOW_HOOK = """#!/bin/sh
# Before the route hook: a primary change's route comes a while after the decision.
[ "$UPLINK_EVENT" = primary ] && sleep 1.5
exit 0
"""


def test_a_reader_waiting_for_the_hooks_finds_the_route_in_place(fresh_flab, agent):
    hooks = {**fresh_flab.agent_hooks(), "40-slow": SLOW_HOOK}
    run = agent(fresh_flab, config=fresh_flab.agent_config(), hooks=hooks)
    wait_settled(run, fresh_flab, SETTLE)

    seen = {"ahead": [], "caught_up": []}
    stop = threading.Event()

    def read():
        while not stop.is_set():
            text = run.state_text()
            if text:
                st = parse_state(text)
                if st["hooks_done"] != st["decision"]:
                    seen["ahead"].append(st["primary"])
                else:
                    routes = fresh_flab.owned_routes()
                    # Counted only if nothing was decided while the routes were read.
                    if run.state_text() == text:
                        seen["caught_up"].append((st["primary"], st["decision"], routes))
            time.sleep(0.01)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        fresh_flab.cut("eth0")
        run.wait_state(lambda s: s["primary"] != "eth0" and s["hooks_done"] == s["decision"], SETTLE,
                       "a new primary with its hooks run")
        # One more look by the reader after the hooks caught up.
        deadline = time.monotonic() + 5
        while not any(p != "eth0" for p, _, _ in seen["caught_up"]) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        reader.join(10)
    primary = run.state()["primary"]
    # The premise: the file named the new primary before its route existed.
    assert primary in seen["ahead"], f"the reader never saw the decision ahead of its hooks: {seen['ahead']}"
    moved = [(p, d, r) for p, d, r in seen["caught_up"] if p == primary]
    assert moved, f"the reader never saw {primary} with the hooks caught up: {seen['caught_up'][-3:]}"
    for p, d, routes in seen["caught_up"]:
        assert f"dev {p} " in routes + " ", f"decision {d} caught up with primary {p}, but table 7077 has: {routes!r}"


def test_format_1_readers_keep_working_with_the_setting(fresh_flab, agent):
    config = fresh_flab.agent_config(sections={"agent": {"state-format": "1"}})
    run = agent(fresh_flab, config=config, hooks=fresh_flab.agent_hooks())
    run.wait_until(lambda: "\nprimary eth0\n" in run.state_text()
                   and all(f"\nuplink {i} " in run.state_text() for i in ("eth0", "wlan0", "wwan0")),
                   SETTLE, "a format 1 state file with eth0 primary")
    text = run.state_text()
    assert text.startswith("# uplinkd state, format 1"), text
    # A format 1 reader: columns, in the order uplinkd-state(5)'s FORMAT 1 lists them.
    old = subprocess.run(["awk", '$1 == "uplink" && $2 == "eth0" { print $4 }', str(run.state_path)],
                         capture_output=True, text=True, timeout=10)
    assert old.stdout == "online\n", (old, text)
    assert run.status().returncode == 0
    assert run.status("--get", "eth0", "verdict").stdout == "online\n"
    assert run.status("--get", "primary").stdout == "eth0\n"
    # wait-online reads it too (a format 1 file cannot tell of the hooks: taken at its word).
    waited = subprocess.run([str(run.binary), "wait-online", "--state", str(run.state_path), "--timeout", "20"],
                            capture_output=True, text=True, timeout=30)
    assert waited.returncode == 0, waited
