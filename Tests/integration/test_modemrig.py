"""Self-tests of the modem rig (modemrig.py, atmodem.py) with the real
ModemManager and mmcli, no uplinkd: a broken rig must not be mistaken for an
adapter bug. Each test gets a rig of its own (about half a second to build);
every wait polls for exactly what it reads, with a deadline."""

import time

import pytest

import modemrig


MODEM_TIMEOUT = 15.0


@pytest.fixture
def rig(request, rig_ok):
    """A fresh rig; its logs are printed when the test fails."""
    with modemrig.rig_for_test(request) as r:
        yield r


def modem(rig, path):
    return rig.mmcli_json("-m", path)["modem"]


def wait_mmcli(rig, path, what, predicate, timeout=5.0):
    """Poll `mmcli -J -m PATH` until predicate(modem) holds; the modem dict."""
    deadline = time.monotonic() + timeout
    while True:
        m = modem(rig, path)
        if predicate(m):
            return m
        if time.monotonic() >= deadline:
            pytest.fail(f"mmcli never showed {what} within {timeout}s; last:\n"
                        f"generic={m['generic']}\n3gpp={m['3gpp']}", pytrace=False)
        time.sleep(0.05)


def state(m):
    return m["generic"]["state"]


def registration(m):
    return m["3gpp"]["registration-state"]


def enable(rig, path):
    rig.mmcli("-m", path, "--enable")
    return wait_mmcli(rig, path, "state registered",
                      lambda m: state(m) == "registered" and registration(m) == "home")


def test_modem_appears_with_the_equipment_id(rig):
    path = rig.modem_path()
    assert path is not None and path.startswith("/org/freedesktop/ModemManager1/Modem/")
    assert rig.mmcli_json("-L")["modem-list"] == [path]
    g = modem(rig, path)["generic"]
    assert g["equipment-identifier"] == rig.equipment_id
    assert g["plugin"] == "fibocom"
    assert g["state"] == "disabled"
    assert sorted(g["ports"]) == sorted(f"{p} (at)" for p in rig.ports)
    # The emulator was really asked (not a cached answer from somewhere else).
    assert "AT+CGSN" in rig.commands()


def test_enable_registers_on_the_configured_network(rig):
    rig.set_operator("Lab Mobile", "00199")
    path = rig.modem_path()
    m = enable(rig, path)
    m = wait_mmcli(rig, path, "operator and signal quality",
                   lambda m: m["3gpp"]["operator-name"] == "Lab Mobile"
                   and m["generic"]["signal-quality"]["value"] == "64")
    assert m["3gpp"]["operator-code"] == "00199"
    assert m["generic"]["access-technologies"] == ["lte"]
    commands = rig.commands()
    for cmd in ("AT+CREG=2", "AT+CGREG=2", "AT+CEREG=2", "AT+CSQ"):
        assert cmd in commands


def test_registration_change_arrives_unsolicited(rig):
    path = rig.modem_path()
    enable(rig, path)
    mark = rig.log_mark()
    started = time.monotonic()
    rig.set_registration("roaming")
    wait_mmcli(rig, path, "registration roaming", lambda m: registration(m) == "roaming", timeout=2.0)
    seen_after = time.monotonic() - started
    entries = rig.log(mark)
    urcs = [e["urc"] for e in entries if "urc" in e]
    assert any(u.startswith("+CEREG: 5,") for u in urcs), entries
    # ModemManager learnt it from the unsolicited line, not by asking.
    queries = [e["cmd"] for e in entries if e.get("cmd") in ("AT+CREG?", "AT+CGREG?", "AT+CEREG?")]
    assert queries == [], entries
    assert seen_after < 2.0


def test_registration_lost_and_regained(rig):
    path = rig.modem_path()
    enable(rig, path)
    rig.set_registration("searching")
    m = wait_mmcli(rig, path, "searching", lambda m: state(m) == "searching", timeout=2.0)
    assert registration(m) == "searching"
    assert m["3gpp"]["operator-code"] == "--"
    rig.set_registration("idle")
    m = wait_mmcli(rig, path, "registration idle", lambda m: registration(m) == "idle", timeout=2.0)
    assert state(m) == "enabled"
    rig.set_registration("denied")
    m = wait_mmcli(rig, path, "registration denied", lambda m: registration(m) == "denied", timeout=2.0)
    assert state(m) == "enabled"
    rig.set_registration("home")
    wait_mmcli(rig, path, "registered again",
               lambda m: state(m) == "registered" and registration(m) == "home", timeout=2.0)


def test_sim_missing_fails_the_modem(rig):
    old = rig.modem_path()
    rig.set_sim("missing")
    rig.replug()
    rig.wait_gone(old)
    path = rig.wait_modem(MODEM_TIMEOUT, other_than=old)
    g = wait_mmcli(rig, path, "state failed", lambda m: state(m) == "failed")["generic"]
    assert g["state-failed-reason"] == "sim-missing"
    assert g["sim"] == "--"
    assert rig.mmcli("-m", path, "--enable", check=False).returncode != 0


def test_sim_pin_locks_the_modem_until_the_pin_is_sent(rig):
    old = rig.modem_path()
    rig.set_network(sim="pin", pin="4321")
    rig.replug()
    rig.wait_gone(old)
    path = rig.wait_modem(MODEM_TIMEOUT, other_than=old)
    g = wait_mmcli(rig, path, "state locked", lambda m: state(m) == "locked")["generic"]
    assert g["unlock-required"] == "sim-pin"
    assert rig.mmcli("-i", g["sim"], "--pin=1111", check=False).returncode != 0
    rig.mmcli("-i", g["sim"], "--pin=4321")
    wait_mmcli(rig, path, "state disabled after the PIN", lambda m: state(m) == "disabled")


def test_signal_setup_reports_lte_values_from_the_emulator(rig):
    rig.set_signal(rsrp_dbm=-87, rsrq_db=-8.5)
    path = rig.modem_path()
    enable(rig, path)
    rig.mmcli("-m", path, "--signal-setup=5")

    def lte():
        return rig.mmcli_json("-m", path, "--signal-get")["modem"]["signal"]["lte"]

    def wait_lte(rsrp, rsrq, timeout):
        deadline = time.monotonic() + timeout
        while True:
            got = lte()
            if (got["rsrp"], got["rsrq"]) == (rsrp, rsrq):
                return
            if time.monotonic() >= deadline:
                pytest.fail(f"--signal-get never showed rsrp {rsrp} rsrq {rsrq}: {got}", pytrace=False)
            time.sleep(0.1)

    wait_lte("-87.00", "-8.50", 3.0)
    rig.set_signal(rsrp_dbm=-110, rsrq_db=-15)
    wait_lte("-110.00", "-15.00", 5.0 + 3.0)       # the next poll at the 5-s rate
    assert "AT+CESQ" in rig.commands()


def test_simple_connect_gives_a_connected_ppp_bearer_and_disconnects(rig):
    path = rig.modem_path()
    enable(rig, path)
    rig.mmcli("-m", path, "--simple-connect=apn=internet")
    m = wait_mmcli(rig, path, "state connected", lambda m: state(m) == "connected")
    [bearer] = m["generic"]["bearers"]
    b = rig.mmcli_json("-b", bearer)["bearer"]
    assert b["status"]["connected"] == "yes"
    assert b["status"]["interface"] == rig.properties(path)["PrimaryPort"]
    assert b["properties"]["apn"] == "internet"
    assert b["ipv4-config"]["method"] == "ppp"
    assert "ATD*99***1#" in rig.commands()
    assert rig.emulator_state()["contexts"]["1"] == {"type": "IP", "apn": "internet", "active": True}

    rig.mmcli("-m", path, "--simple-disconnect")
    wait_mmcli(rig, path, "state registered after disconnect", lambda m: state(m) == "registered")
    assert rig.mmcli_json("-b", bearer)["bearer"]["status"]["connected"] == "no"
    assert rig.emulator_state()["contexts"]["1"]["active"] is False


def test_network_ending_a_ppp_call_is_ignored_by_modemmanager(rig):
    """The emulator ends the call as a modem does (+CGEV: NW PDN DEACT on the
    control port, NO CARRIER on the data port). ModemManager 1.20 reads the
    +CGEV, then ignores it for a PPP bearer (pppd is expected to notice): the
    bearer stays Connected on D-Bus. What the adapter sees for this case."""
    path = rig.modem_path()
    enable(rig, path)
    rig.mmcli("-m", path, "--simple-connect=apn=internet")
    [bearer] = wait_mmcli(rig, path, "state connected", lambda m: state(m) == "connected")["generic"]["bearers"]
    mark = rig.log_mark()
    assert rig.drop_data() == [1]
    urcs = [e["urc"] for e in rig.log(mark) if "urc" in e]
    assert "+CGEV: NW PDN DEACT 1" in urcs and "NO CARRIER" in urcs, urcs
    rig.wait_until(lambda: "network request to deactivate context (cid 1)" in rig.modemmanager_log(),
                   5.0, "ModemManager reading the +CGEV")
    rig.wait_until(lambda: "ignoring disconnection report" in rig.modemmanager_log(),
                   5.0, "ModemManager deciding about the report")
    assert rig.mmcli_json("-b", bearer)["bearer"]["status"]["connected"] == "yes"
    assert state(modem(rig, path)) == "connected"


def test_connect_fails_when_the_network_refuses_data(rig):
    path = rig.modem_path()
    enable(rig, path)
    rig.set_data_ok(False)
    proc = rig.mmcli("-m", path, "--simple-connect=apn=internet", check=False)
    assert proc.returncode != 0
    assert "NoCarrier" in proc.stderr, proc.stderr
    m = wait_mmcli(rig, path, "state registered", lambda m: state(m) == "registered")
    for bearer in m["generic"]["bearers"]:
        assert rig.mmcli_json("-b", bearer)["bearer"]["status"]["connected"] == "no"


def test_reset_drops_the_modem_and_it_returns_at_a_new_path(rig):
    path = rig.modem_path()
    enable(rig, path)
    boots = rig.emulator_state()["boots"]
    rig.mmcli("-m", path, "--reset")
    rig.wait_gone(path, timeout=5.0)
    new = rig.wait_modem(MODEM_TIMEOUT, other_than=path)
    assert new != path
    assert rig.emulator_state()["boots"] == boots + 1
    assert "AT+CFUN=15" in rig.commands()
    m = modem(rig, new)
    assert m["generic"]["equipment-identifier"] == rig.equipment_id
    assert state(m) == "disabled"
    enable(rig, new)


def test_modemmanager_restart_brings_the_modem_back(rig):
    path = rig.modem_path()
    enable(rig, path)
    owner = rig.name_owner(modemrig.MM_SERVICE)
    new = rig.restart_modemmanager()
    assert rig.name_owner(modemrig.MM_SERVICE) not in (None, owner)
    assert modem(rig, new)["generic"]["equipment-identifier"] == rig.equipment_id
    enable(rig, new)
