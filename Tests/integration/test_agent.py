"""End-to-end tests of `uplinkd run` (the agent) in the network-namespace lab.

Run as root: sudo python3 -m pytest -v Tests/integration/test_agent.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).

Each test starts the agent (conftest.py's `agent` fixture) inside the lab's
gateway namespace with its own configuration (agentrun.config_text: lab probes
only, `default-probes = no`, interval 3s, suspect-interval 200ms, 2 failures to
leave online, 2 successes to return, hold-down 2s), state file and hooks
directory. The hook 10-record
appends one tab-separated line per run (start time, then the UPLINK_* variables);
every scenario checks the state file AND the order of those lines. Waiting is
always for a condition with a deadline (agentrun.AgentRun.wait_until).

eth0's veth has the same ifindex as its peer, so the kernel's linkwatch may
report its carrier changes up to ~1 s late ("non-urgent"); carrier bounds on
eth0 allow for that.
"""

import json
import re
import signal
import subprocess
import time

import pytest

from agentrun import PORTAL_URL, PROBES, AgentError, config_text, manual_facts, uplink_is
from lab import INTERNET_ADDR
from pytesthelp import fail, ok

SETTLE_S = 15          # start-up: first rounds (1 s probe timeout) and their hooks
HOLD_DOWN_S = 2.0
# The start-up hook runs of settled_agent's usual scene.
STARTUP_HOOKS = [("verdict", "eth0", "online"), ("verdict", "wlan0", "captive"),
                 ("verdict", "wwan0", "limited"), ("primary", "eth0")]
STARTUP_VERDICTS = {
    "verdict eth0 unknown->online validated",
    "verdict wlan0 unknown->captive redirect",
    "verdict wwan0 unknown->limited refused",
}


def shorts(events):
    return [e.short for e in events]


def settle(run, primary="eth0", **verdicts):
    """Wait for the first verdicts and primary in the state file AND in the hook log
    (the hooks run after the state is written). If wlan0's first round ends before
    eth0's, wlan0 is primary for the hold-down first (see
    test_startup_primary_is_best_uplink_at_once); this waits that out."""
    def pred(st):
        return st["primary"] == primary and all(uplink_is(st, i, v) for i, v in verdicts.items())
    st = ok(run.wait_state, pred, SETTLE_S, f"start-up: primary {primary}, {verdicts}")

    events = ok(run.wait_hooks, [("verdict", i, v) for i, v in verdicts.items()] + [("primary", primary)],
                SETTLE_S, what=f"start-up hook lines: primary {primary}, {verdicts}")
    latest = {e.iface: e.verdict for e in events if e.event == "verdict"}
    prim = [e.primary for e in events if e.event == "primary"]
    if prim[-1] != primary or any(latest.get(i) != v for i, v in verdicts.items()):
        fail(run, f"the hook lines must end where the state file is: primary {primary}, {verdicts}")
    return st


def settled_agent(lb, serve, agent, portal="portal-302", **kw):
    """The usual scene and an agent settled in it: eth0's upstream a working
    internet, wlan0's `portal` (a 302 captive portal, or "internet"), wwan0's
    refusing. Starts agent(lb, **kw) (the conftest fixture) and waits for primary
    eth0, wlan0 captive (online with "internet"), wwan0 limited.
    Returns (run, the state file after start-up)."""
    serve(lb, "inet", "internet")
    serve(lb, "portal", portal)
    run = agent(lb, **kw)
    wlan0 = "online" if portal == "internet" else "captive"
    return run, settle(run, eth0="online", wlan0=wlan0, wwan0="limited")


def expect_events(run, events, want, what):
    got = shorts(events)
    if got != want:
        fail(run, f"{what}: hook lines\n  {got}\nexpected\n  {want}")


def rounds_before(text, iface, result, notice, purpose="full"):
    """Debug 'round on IFACE: IFACE: RESULT ... (PURPOSE round)' lines before the first
    `notice` line (only full rounds can change a verdict)."""
    head = text.split(notice, 1)[0]
    return len(re.findall(rf"round on {iface}: {iface}: {result} .*\({purpose} round\)", head))


def peer(lb, iface, up):
    role, name = lb.peer_of(iface)
    lb.ip(role, "link", "set", name, "up" if up else "down")


# --- 1. start-up ---------------------------------------------------------------

def test_startup_verdicts_primary_and_hooks(lab, serve, agent):
    run, st = settled_agent(lab, serve, agent)
    events = ok(run.wait_hooks, STARTUP_HOOKS, 10)

    if (st["format"], st["stopped"], st["pid"]) != ("2", "no", str(run.pid)):
        fail(run, "state file must say format 2, stopped no and the agent's pid")
    if sorted(st["uplinks"]) != ["eth0", "wlan0", "wwan0"]:
        fail(run, "uplinks must be the interfaces with a default route (eth1 has none)")
    want = {
        "eth0": ("ethernet", "online", "validated", "online", "-", "-"),
        "wlan0": ("wifi", "captive", "redirect", "captive", "-", PORTAL_URL),
        "wwan0": ("wwan", "limited", "refused", "limited", "-", "-"),
    }
    for name, fields in want.items():
        u = st["uplinks"][name]
        got = (u["kind"], u["verdict"], u["reason"], u["ipv4_verdict"], u["ipv6_verdict"], u["portal_url"])
        if got != fields:
            fail(run, f"{name}: state fields {got}, expected {fields}")
        if abs(int(u["since"]) - time.time()) > 60 or u["budget_exhausted"] != "no" or u["budget_bytes"] != "-":
            fail(run, f"{name}: since/budget/exhausted implausible: {u}")
    metered = {name: st["uplinks"][name].get("metered") for name in want}
    if metered != {"eth0": "no", "wlan0": "no", "wwan0": "yes"}:
        fail(run, f"METERED column (metered = auto: only cellular): {metered}")
    if not (int(st["uplinks"]["eth0"]["bytes_today"]) > 0 and int(st["uplinks"]["wlan0"]["bytes_today"]) > 0):
        fail(run, "probe bytes of eth0 and wlan0 must be counted")
    # The agent runs with -v -v: libcurl's own sentence for wwan0's refused probes is logged.
    if not re.search(r"wwan0 ipv4 probe \w+: curl error 7: ", run.stderr_path.read_text(errors="replace")):
        fail(run, "libcurl's error text for wwan0's refused probes is not in the verbose log")

    if len(events) != 4:
        fail(run, "start-up must run the hooks exactly 4 times (3 verdicts, 1 primary)")
    if {e.short for e in events if e.event == "verdict"} != STARTUP_VERDICTS:
        fail(run, f"start-up verdict hook lines wrong; expected {sorted(STARTUP_VERDICTS)}")
    prim = [i for i, e in enumerate(events) if e.event == "primary"]
    eth0 = [i for i, e in enumerate(events) if e.short.startswith("verdict eth0")]
    if len(prim) != 1 or events[prim[0]].short != "primary -->eth0" or prim[0] < eth0[0]:
        fail(run, "exactly one primary line 'primary -> eth0', after eth0's verdict line")
    p = events[prim[0]]
    if (p.iface, p.kind, p.verdict) != ("eth0", "ethernet", "online"):
        fail(run, f"primary event: UPLINK_INTERFACE/KIND/VERDICT wrong: {p}")
    w = next(e for e in events if e.iface == "wlan0")
    if (w.kind, w.portal) != ("wifi", PORTAL_URL):
        fail(run, f"wlan0 verdict event: kind/portal URL wrong: {w}")
    if any(e.portal for e in events if e.iface != "wlan0"):
        fail(run, "UPLINK_PORTAL_URL must be empty unless captive")
    for e in events:
        if not e.time.isdigit() or abs(int(e.time) - e.t) > 60:
            fail(run, f"UPLINK_TIME must be the Unix time of the event: {e}")

    # Stable uplinks: later rounds (two more on every uplink) change nothing.
    start = run.stderr_size()
    for iface in ("eth0", "wlan0", "wwan0"):
        ok(run.wait_stderr, rf"round on {iface}: ", 15, offset=start, count=2)
    if len(ok(run.wait_hooks, [], 1)) != 4:
        fail(run, "rounds with unchanged results must not run hooks")


def test_startup_primary_is_best_uplink_at_once(lab, serve, agent):
    """At start-up no uplink has "recovered": when wlan0's first round ends before
    eth0's (eth0's server answers 300 ms late), eth0 must still become primary as
    soon as it is online, not after the hold-down meant for recovering uplinks."""
    serve(lab, "inet", "internet-slow")
    serve(lab, "portal", "internet")
    run = agent(lab, config_text({"hold-down": "10s"}))
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "online") and uplink_is(s, "wlan0", "online"),
       SETTLE_S, "eth0 and wlan0 online")
    online_at = time.monotonic()
    try:
        run.wait_state(lambda s: s["primary"] == "eth0", 3, "primary eth0")
    except AgentError:
        waited = run.wait_state(lambda s: s["primary"] == "eth0", 15, "primary eth0 at all")
        fail(run, f"eth0 (preferred, online since start-up) became primary only after "
                  f"{time.monotonic() - online_at:.1f}s: the 10 s hold-down was applied to an "
                  f"uplink that never lost anything; primary {waited['primary']}")
    # The hooks run after the state is written: wait for the primary line itself
    # and both verdict lines (4 lines when eth0 answered first, 5 when wlan0 was
    # primary for a moment).
    made_primary = ("primary -->eth0", "primary wlan0->eth0")
    events = ok(run.wait_hooks, [("verdict", "eth0", "online"), ("verdict", "wlan0", "online"),
                                 ("primary", "eth0")], 5, what="the hook lines making eth0 primary")
    if events[-1].short not in made_primary:
        fail(run, "the last hook line must make eth0 primary")


# --- 2. upstream cut with carrier up ------------------------------------------

def test_upstream_cut_moves_primary_and_back(fresh_lab, serve, blackhole, agent):
    lb = fresh_lab
    run, _ = settled_agent(lb, serve, agent, portal="internet")
    mark, offset = len(run.events()), run.stderr_size()

    cut = time.time()
    blackhole(lb, "inet")
    st = ok(run.wait_state, lambda s: uplink_is(s, "eth0", "limited", "timeout")
            and s["primary"] == "wlan0", 15, "eth0 limited (timeout), primary wlan0")
    if not uplink_is(st, "wlan0", "online"):
        fail(run, "wlan0 must stay online")
    text = run.stderr_since(offset)
    n = rounds_before(text, "eth0", "limited", "eth0: online -> limited (timeout)")
    if n != 2:
        fail(run, f"eth0 must leave online after exactly 2 failed full rounds, saw {n}")

    offset = run.stderr_size()
    lb.unblackhole("inet")
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "online", "validated")
       and s["primary"] == "eth0", 20, "eth0 online again and primary eth0")
    text = run.stderr_since(offset)
    n = rounds_before(text, "eth0", "online", "eth0: limited -> online (validated)")
    if n != 2:
        fail(run, f"eth0 must return after exactly 2 validated full rounds, saw {n}")

    events = ok(run.wait_hooks, [("verdict", "eth0", "limited"), ("primary", "wlan0"),
                                 ("verdict", "eth0", "online"), ("primary", "eth0")], 10, since=mark)
    new = events[mark:]
    expect_events(run, new, [
        "verdict eth0 online->limited timeout",
        "primary eth0->wlan0",
        "verdict eth0 limited->online validated",
        "primary wlan0->eth0",
    ], "upstream cut and repair")
    if new[0].t - cut < 2 * 1.0 - 0.1:
        fail(run, f"eth0 left online {new[0].t - cut:.2f}s after the cut: sooner than two "
                  f"1 s probe timeouts allow")
    if new[1].iface != "wlan0" or new[1].previous_primary != "eth0":
        fail(run, f"primary event must name the new primary: {new[1]}")
    gap = new[3].t - new[2].t
    if not HOLD_DOWN_S - 0.2 <= gap <= HOLD_DOWN_S + 1.5:
        fail(run, f"primary went back {gap:.2f}s after eth0 returned; hold-down is {HOLD_DOWN_S}s")


# --- 3. carrier loss -------------------------------------------------------------

def test_carrier_loss_is_immediate(fresh_lab, serve, agent):
    lb = fresh_lab
    run, _ = settled_agent(lb, serve, agent, portal="internet")
    mark = len(run.events())

    t0 = time.monotonic()
    peer(lb, "eth0", False)
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "down", "no-carrier")
       and s["primary"] == "wlan0", 3, "eth0 down (no-carrier), primary wlan0")
    took = time.monotonic() - t0
    if took > 2.0:          # linkwatch may hold eth0's carrier-down back up to 1 s
        fail(run, f"carrier loss reached the state file after {took:.2f}s")

    peer(lb, "eth0", True)
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "online") and s["primary"] == "eth0",
       10, "eth0 online and primary again")
    events = ok(run.wait_hooks, [("verdict", "eth0", "down"), ("primary", "wlan0"),
                                 ("verdict", "eth0", "online"), ("primary", "eth0")], 10, since=mark)
    expect_events(run, events[mark:], [
        "verdict eth0 online->down no-carrier",
        "primary eth0->wlan0",
        "verdict eth0 down->online validated",
        "primary wlan0->eth0",
    ], "carrier loss and return")
    gap = events[mark + 3].t - events[mark + 2].t
    if gap < HOLD_DOWN_S - 0.2:
        fail(run, f"primary went back {gap:.2f}s after eth0 returned; hold-down is {HOLD_DOWN_S}s")


# --- 4. portal appearing and going away --------------------------------------------

def test_portal_appears_and_goes_away(fresh_lab, serve, agent):
    lb = fresh_lab
    srv = serve(lb, "portal", "internet")
    run = agent(lb, config_text(uplinks="wlan0"))
    st = settle(run, primary="wlan0", wlan0="online")
    if sorted(st["uplinks"]) != ["wlan0"]:
        fail(run, "[uplinks] interfaces = wlan0 must restrict the uplinks to wlan0")

    srv.set_mode("portal-302")
    st = ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "captive", "redirect")
            and s["primary"] == "-", 15, "wlan0 captive (redirect), no primary")
    if st["uplinks"]["wlan0"]["portal_url"] != PORTAL_URL:
        fail(run, f"state file must carry the portal URL {PORTAL_URL}")

    srv.set_mode("internet")
    st = ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "online", "validated")
            and s["primary"] == "wlan0", 15, "wlan0 online again, primary wlan0")
    if st["uplinks"]["wlan0"]["portal_url"] != "-":
        fail(run, "the portal URL must be cleared once online")

    # The primary event with none left names the old primary as its interface; the
    # site's outage (no primary while wlan0 was captive) is told once it is over.
    events = ok(run.wait_hooks, [("verdict", "wlan0", "online"), ("primary", "wlan0"),
                                 ("verdict", "wlan0", "captive"), ("primary", "wlan0"),
                                 ("verdict", "wlan0", "online"), ("primary", "wlan0"), ("outage", "wlan0")], 10)
    expect_events(run, events, [
        "verdict wlan0 unknown->online validated",
        "primary -->wlan0",
        "verdict wlan0 online->captive redirect",
        "primary wlan0->-",
        "verdict wlan0 captive->online validated",
        "primary -->wlan0",
        "outage over, primary wlan0",
    ], "portal appearing and going away")
    if events[2].portal != PORTAL_URL or events[4].portal:
        fail(run, "UPLINK_PORTAL_URL: set for captive, empty for online")
    if (events[3].iface, events[3].primary) != ("wlan0", ""):
        fail(run, f"primary event with none left: UPLINK_INTERFACE must be the old "
                  f"primary and UPLINK_PRIMARY empty: {events[3]}")


# --- 5. HUP ---------------------------------------------------------------------

def test_hup_broken_config_is_refused_then_valid_reloads(fresh_lab, serve, agent):
    lb = fresh_lab
    run, _ = settled_agent(lb, serve, agent, portal="internet")

    bad = config_text({"interval": "5"})
    lineno = bad.splitlines().index("interval = 5") + 1
    run.config.write_text(bad)
    offset = run.stderr_size()
    run.send(signal.SIGHUP)
    ok(run.wait_stderr, "reload refused", 5, offset=offset)
    text = run.stderr_since(offset)
    rx = (rf"uplinkd: \w+: reload refused, keeping the running configuration: "
          rf"{re.escape(str(run.config))}:{lineno}: key 'interval': ")
    if not re.search(rx, text):
        fail(run, f"reload refusal must name {run.config}:{lineno} and key 'interval'")
    if "configuration reloaded" in text:
        fail(run, "a refused reload must not also report 'configuration reloaded'")

    # Still running with the old configuration: a carrier change is still tracked.
    mark = len(run.events())
    peer(lb, "wlan0", False)
    ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "down", "no-carrier"), 3,
       "wlan0 down after the refused reload")
    peer(lb, "wlan0", True)
    ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "online"), 10, "wlan0 online again")

    # A valid configuration preferring wifi: reloaded and applied.
    run.config.write_text(config_text({"priority": "wifi ethernet wwan"}))
    offset = run.stderr_size()
    run.send(signal.SIGHUP)
    ok(run.wait_stderr, "configuration reloaded", 5, offset=offset)
    if "reload refused" in run.stderr_since(offset):
        fail(run, "valid configuration refused")
    ok(run.wait_state, lambda s: s["primary"] == "wlan0", 10,
       "primary wlan0 after reloading with priority = wifi ethernet wwan")
    events = ok(run.wait_hooks, [("verdict", "wlan0", "down"), ("verdict", "wlan0", "online"),
                                 ("primary", "wlan0")], 10, since=mark)
    expect_events(run, events[mark:], [
        "verdict wlan0 online->down no-carrier",
        "verdict wlan0 down->online validated",
        "primary eth0->wlan0",
    ], "refused reload, carrier flip, valid reload")


def test_hup_with_a_crashing_regex_is_refused_and_the_agent_keeps_running(fresh_lab, serve, agent):
    # With Swift Regex, 3,000 nested brackets crashed the regex parser, so this HUP
    # killed the agent and left `state running` behind. Now the reload is refused.
    lb = fresh_lab
    run, _ = settled_agent(lb, serve, agent, portal="internet")
    hostile = ("hostile", f"http://{INTERNET_ADDR}/words.txt", (("expect-regex", "[" * 3000),))
    bad = config_text(probes=PROBES + (hostile,))
    lineno = bad.splitlines().index("expect-regex = " + "[" * 3000) + 1
    run.config.write_text(bad)
    offset = run.stderr_size()
    run.send(signal.SIGHUP)
    ok(run.wait_stderr, "reload refused", 5, offset=offset)
    rx = (rf"reload refused, keeping the running configuration: {re.escape(str(run.config))}:{lineno}: "
          rf"key 'expect-regex': regular expression of 3000 bytes, longer than the 1024 allowed")
    if not re.search(rx, run.stderr_since(offset)):
        fail(run, f"reload refusal must name {run.config}:{lineno}, key 'expect-regex' and the length")

    # Still running and answering: the state file says so and a carrier cut reaches it.
    if run.proc.poll() is not None or run.state()["stopped"] != "no":
        fail(run, "the agent must keep running after refusing the configuration")
    peer(lb, "wlan0", False)
    ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "down", "no-carrier") and s["stopped"] == "no", 3,
       "wlan0 down (no-carrier) after the refused reload")


def test_catastrophic_regex_is_limited_and_the_loop_keeps_answering(fresh_lab, serve, agent):
    # With Swift Regex, ^(\w+\s?)+$ on a 29-byte body froze the one loop for over 20 s;
    # a carrier loss 8 s later never reached the state file. Now every search stops
    # at its bound: the verdict says so, and the loop keeps tracking links.
    lb = fresh_lab
    serve(lb, "inet", "internet")
    serve(lb, "portal", "internet")
    words = ("words", f"http://{INTERNET_ADDR}/words.txt", (("expect-regex", r"^(\w+\s?)+$"),))
    run = agent(lb, config_text(probes=(words,)))
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "limited", "pattern-limit")
       and uplink_is(s, "wlan0", "limited", "pattern-limit"), SETTLE_S,
       "eth0 and wlan0 limited (pattern-limit)")
    # Rounds keep searching (suspect intervals); a carrier cut still lands at once.
    ok(run.wait_stderr, r"round on wlan0: wlan0: limited", SETTLE_S, count=3)
    peer(lb, "wlan0", False)
    ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "down", "no-carrier"), 3,
       "wlan0 down (no-carrier) while the pattern keeps hitting its bound")


# --- 6. TERM / INT -----------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_stop_signal_writes_final_state(lab, serve, agent, sig):
    run, before = settled_agent(lab, serve, agent)
    rc = run.stop(sig)
    if rc != 0:
        fail(run, f"exit status on {sig.name}: {rc}, expected 0")
    st = run.state()
    if (st["stopped"], st["primary"], st["pid"]) != ("yes", "eth0", before["pid"]):
        fail(run, "final state must say 'state stopped', keep primary eth0 and the pid")
    for name in ("eth0", "wlan0", "wwan0"):
        if st["uplinks"].get(name, {}).get("verdict") != before["uplinks"][name]["verdict"]:
            fail(run, f"final state lost {name}'s verdict")
    if st["uplinks"]["wlan0"]["portal_url"] != PORTAL_URL or int(st["written"]) < int(before["written"]):
        fail(run, "final state must keep the portal URL and a current 'written'")
    if not re.search(rf"stopping \({sig.name[3:]}\)", run.stderr()):
        fail(run, f"stderr should say 'stopping ({sig.name[3:]})'")


def test_term_lets_running_hook_finish(lab, serve, agent, tmp_path):
    serve(lab, "inet", "internet")
    gate, release, done = tmp_path / "gated", tmp_path / "release", tmp_path / "done"
    hook = (f"#!/bin/sh\ntouch '{gate}'\n"
            f"while [ ! -e '{release}' ]; do sleep 0.05; done\n"
            f"echo \"finished $UPLINK_EVENT\" >> '{done}'\n")
    run = agent(lab, config_text({"hook-timeout": "30s"}), hooks={"20-gate": hook})
    ok(run.wait_until, gate.exists, SETTLE_S, "the first hook run")
    offset = run.stderr_size()
    run.send(signal.SIGTERM)
    ok(run.wait_stderr, r"stopping \(TERM\)", 5, offset=offset)
    if not run.running():
        fail(run, "the agent exited while a hook was still running")
    release.touch()
    try:
        rc = run.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        fail(run, "the agent did not exit within 10 s after the running hook finished")
    runs = done.read_text().splitlines()
    # The running hook finishes (once), then the hooks run once more for the stop.
    if rc != 0 or len(runs) != 2 or runs[0] == "finished stop" or runs[1] != "finished stop":
        fail(run, f"exit {rc}; the running hook must finish once, then run for the stop event: {runs!r}")
    if run.state()["stopped"] != "yes":
        fail(run, "final state must say 'state stopped'")


# --- 7. failing and non-executable hooks ---------------------------------------------

def test_failing_and_non_executable_hooks(fresh_lab, serve, agent, tmp_path):
    lb = fresh_lab
    marker = tmp_path / "noexec-ran"
    run, _ = settled_agent(lb, serve, agent, hooks={
        "05-fail": "#!/bin/sh\nexit 1\n",
        "07-noexec": (f"#!/bin/sh\ntouch '{marker}'\n", 0o644),
    })
    peer(lb, "wlan0", False)
    ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "down", "no-carrier"), 3, "wlan0 down")
    events = ok(run.wait_hooks, STARTUP_HOOKS + [("verdict", "wlan0", "down")], 10)
    if events[-1].short != "verdict wlan0 captive->down no-carrier":
        fail(run, "10-record must run for the event after the failures too")
    err = run.stderr()
    notices = re.findall(r"^uplinkd: notice: (?:primary: |\w+: \w+ -> )", err, re.M)
    if len(events) != len(notices):
        fail(run, f"10-record ran {len(events)} times for {len(notices)} verdict/primary changes")
    fails = len(re.findall(r"hook 05-fail failed \(exit status 1\)", err))
    if fails != len(events):
        fail(run, f"05-fail's failure must be logged once per event: {fails} for {len(events)}")
    if not re.search(r"hook \S*/07-noexec is not executable; skipped", err):
        fail(run, "the non-executable hook must be logged as skipped")
    if marker.exists():
        fail(run, "the non-executable hook ran")


# --- 8. slow hooks -----------------------------------------------------------------

def test_slow_hook_gets_term_and_later_events_run(fresh_lab, serve, agent, tmp_path):
    lb = fresh_lab
    slow = tmp_path / "slow.log"
    hook = f"#!/bin/sh\necho start >> '{slow}'\nsleep 30\necho end >> '{slow}'\n"
    # Start-up: 4 events, each waiting out 20-slow's 2 s limit.
    run, _ = settled_agent(lb, serve, agent, config=config_text({"hook-timeout": "2s"}),
                           hooks={"20-slow": hook})
    ok(run.wait_stderr, r"hook 20-slow exceeded its time limit of 2000 ms; sending TERM", 5, count=4)
    events = ok(run.wait_hooks, STARTUP_HOOKS, 5)
    spacing = [b.t - a.t for a, b in zip(events, events[1:])]
    if not all(1.8 <= s <= 4.0 for s in spacing):
        fail(run, f"each event should wait for 20-slow's 2 s limit, no longer: {spacing}")
    peer(lb, "wlan0", False)
    events = ok(run.wait_hooks, STARTUP_HOOKS + [("verdict", "wlan0", "down")], 10)
    if events[4].short != "verdict wlan0 captive->down no-carrier":
        fail(run, "later events must still run the hooks")
    if "end" in slow.read_text():
        fail(run, "20-slow must not have finished its 30 s sleep")
    if not re.search(r"hook 20-slow failed \(exit status 143, timed out\)", run.stderr()):
        fail(run, "a timed-out hook's exit (TERM, 143) should be logged")


def test_hook_ignoring_term_gets_kill(lab, serve, agent, tmp_path):
    serve(lab, "inet", "internet")
    once = tmp_path / "stubborn-ran"
    hook = (f"#!/bin/sh\n[ -e '{once}' ] && exit 0\ntouch '{once}'\n"
            f"trap '' TERM\nexec sleep 30\n")
    run = agent(lab, config_text({"hook-timeout": "1s"}), hooks={"20-stubborn": hook})
    ok(run.wait_stderr, r"hook 20-stubborn ignored TERM; sending KILL", 10)
    # The first two hook runs, whichever events they are.
    events = ok(run.wait_hooks, [(None, None), (None, None)], 5)
    gap = events[1].t - events[0].t
    if not 1.0 + 5.0 - 0.3 <= gap <= 1.0 + 5.0 + 2.0:
        fail(run, f"second event ran {gap:.2f}s after the first: expected hook-timeout 1 s "
                  f"+ 5 s until KILL")
    if not re.search(r"hook 20-stubborn failed \(exit status 137, timed out\)", run.stderr()):
        fail(run, "a killed hook's exit (137) should be logged")


def test_queued_verdict_events_are_coalesced(fresh_lab, serve, agent, tmp_path):
    """wlan0 goes online -> down -> captive while a hook of another event runs:
    its two queued verdict events become one line with the latest verdict."""
    lb = fresh_lab
    serve(lb, "inet", "internet")
    srv = serve(lb, "portal", "internet")
    armed, gate, release = tmp_path / "armed", tmp_path / "gated", tmp_path / "release"
    gate_log = tmp_path / "gate.log"
    hook = (f"#!/bin/sh\nif [ -e '{armed}' ]; then rm -f '{armed}'; touch '{gate}'\n"
            f"  while [ ! -e '{release}' ]; do sleep 0.05; done\nfi\n"
            f"echo \"$UPLINK_EVENT $UPLINK_INTERFACE\" >> '{gate_log}'\n")
    run = agent(lb, config_text({"hook-timeout": "30s"}), hooks={"20-gate": hook})
    settle(run, eth0="online", wlan0="online", wwan0="limited")
    # The state file is written before the hooks run: arm the gate only once the gate
    # hook has run for every start-up event (10-record runs before it), or it would
    # hold one of those instead of wwan0's event.
    startup = [("verdict", "wwan0"), ("verdict", "eth0"), ("primary", None), ("verdict", "wlan0")]
    ok(run.wait_hooks, startup, 10)
    gate_runs = lambda: len(gate_log.read_text().splitlines()) if gate_log.exists() else 0
    ok(run.wait_until, lambda: gate_runs() == len(run.events()), 10, "the gate hook after every start-up event")
    mark = len(run.events())
    armed.touch()
    peer(lb, "wwan0", False)               # wwan0's event holds the hook runner
    ok(run.wait_until, gate.exists, 5, "the gated hook run")
    peer(lb, "wlan0", False)
    ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "down"), 3, "wlan0 down")
    srv.set_mode("portal-302")
    peer(lb, "wlan0", True)
    ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "captive"), 10, "wlan0 captive")
    release.touch()
    peer(lb, "wwan0", True)                # a later event: every queued one runs before it
    events = ok(run.wait_hooks, [("verdict", "wwan0", "down"), ("verdict", "wlan0", "captive"),
                                 ("verdict", "wwan0", "limited")], 15, since=mark)
    expect_events(run, events[mark:], [
        "verdict wwan0 limited->down no-carrier",
        "verdict wlan0 online->captive redirect",
        "verdict wwan0 down->limited refused",
    ], "wlan0's queued online->down and down->captive coalesced (previous = what hooks last saw)")
    wl = events[mark + 1]
    if wl.portal != PORTAL_URL:
        fail(run, f"the coalesced event must carry the latest portal URL: {wl}")


# --- 9. uplinkd status ---------------------------------------------------------------

# Each uplink's facts as uplinkd-state(5) names them, and the objects kept until format 1 goes.
UPLINK_KEYS = {"interface", *manual_facts()["uplink"], "families", "modem", "plan"}
NODE_KEYS = {"age_seconds", "agent_running", *manual_facts()["node"], "uplinks"}


def test_status_while_running_and_after_term(lab, serve, agent):
    run, _ = settled_agent(lab, serve, agent)

    proc = run.status("--json")
    try:
        js = json.loads(proc.stdout)
    except ValueError:
        fail(run, f"status --json output is not JSON (exit {proc.returncode}): {proc.stdout!r} {proc.stderr!r}")
    if (proc.returncode, js.get("primary"), js.get("agent_running"), js.get("stopped")) != (0, "eth0", True, False):
        fail(run, f"status --json while running: exit {proc.returncode}, {js}")
    if not (isinstance(js.get("age_seconds"), int) and 0 <= js["age_seconds"] < 120):
        fail(run, f"age_seconds implausible: {js}")
    if set(js) != NODE_KEYS:
        fail(run, f"status --json must have the keys {sorted(NODE_KEYS)}: {sorted(js)}")
    ups = {u["interface"]: u for u in js["uplinks"]}
    if sorted(ups) != ["eth0", "wlan0", "wwan0"] or any(set(u) != UPLINK_KEYS for u in ups.values()):
        fail(run, f"uplinks[] must list eth0, wlan0, wwan0 with keys {sorted(UPLINK_KEYS)}: {js}")
    got = {n: (u["kind"], u["verdict"], u["reason"], u["portal_url"], u["families"]["ipv4"],
               u["families"]["ipv6"], u["budget_bytes"], u["budget_exhausted"], u["metered"])
           for n, u in ups.items()}
    # metered = auto (the default): cellular is metered, the others are not.
    want = {"eth0": ("ethernet", "online", "validated", None, {"verdict": "online", "reason": "validated"}, None,
                     None, False, False),
            "wlan0": ("wifi", "captive", "redirect", PORTAL_URL, {"verdict": "captive", "reason": "redirect"}, None,
                      None, False, False),
            "wwan0": ("wwan", "limited", "refused", None, {"verdict": "limited", "reason": "refused"}, None,
                      None, False, True)}
    if got != want:
        fail(run, f"status --json uplinks:\n  {got}\nexpected\n  {want}")
    # No plan configured; a metered uplink waits warm, the others hot (the defaults).
    standby = {n: (u["plan"], u["standby"]) for n, u in ups.items()}
    if standby != {"eth0": (None, "hot"), "wlan0": (None, "hot"), "wwan0": (None, "warm")}:
        fail(run, f"status --json plan and standby: {standby}")
    if not all(isinstance(u["bytes_today"], int) and isinstance(u["since"], int) for u in ups.values()):
        fail(run, f"bytes_today and since must be integers: {js}")

    human = run.status()
    if human.returncode != 0 or not re.search(r"primary:? eth0", human.stdout) or \
            not all(n in human.stdout for n in ("wlan0", "wwan0", PORTAL_URL)):
        fail(run, f"human status must mention the primary and the uplinks:\n{human.stdout}{human.stderr}")

    if run.stop() != 0:
        fail(run, "TERM must exit 0")
    after = run.status("--json")
    js = json.loads(after.stdout)
    if (js.get("agent_running"), js.get("stopped"), js.get("primary")) != (False, True, "eth0"):
        fail(run, f"status --json after TERM: {js}")
    if after.returncode != 3:
        fail(run, f"status after TERM (the agent does not run: stale facts) must exit 3, got {after.returncode}")
    missing = run.status(state=run.dir / "no-such-state")
    if missing.returncode != 69:
        fail(run, f"status without a state file must exit 69, got {missing.returncode}")
