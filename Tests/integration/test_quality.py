"""Link quality and flap damping in the failover lab (failoverlab.py), the agent
at its defaults with the shipped route-failover hook:

- 30 % random loss each way on the primary's upstream (nftables numgen, DNS,
  probes and LAN traffic alike): eth0 stays `online` (lossy is not dead), reports
  its loss near the true figure, and the primary moves at most once (to the
  healthy unmetered wlan0, for degradation, with that reason);
- a primary that flaps twice within its hold-down (upstream cuts) is suppressed by
  flap damping: it stays out of the primary role after its hold-down, the state
  file says SUPPRESSED, the log says why, and each primary change carries its
  reason in the hook environment.

Run as root: sudo python3 -m pytest -v Tests/integration/test_quality.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd. Bounds are generous:
Tests/bench/bench_quality.py measures the figures over ten minutes.
"""

import time

import failoverlab
from pytesthelp import fail, ok

SETTLE_S = 30
LOSS_PERCENT = 30


def start(lb, agent, sections=None):
    run = agent(lb, lb.agent_config(sections=sections), hooks=lb.agent_hooks())
    ok(failoverlab.wait_settled, run, lb, SETTLE_S)
    return run


def changes(run, since, wanted=()):
    """The primary changes and eth0's verdict changes since `since`, read once the
    hook runs `wanted` (agentrun.AgentRun.wait_hooks items) are there."""
    events = [e for e in ok(run.wait_hooks, wanted, 10, after=since) if e.t >= since]
    return ([e for e in events if e.event == "primary"],
            [e for e in events if e.event == "verdict" and e.iface == "eth0"])


def test_lossy_primary_stays_online_and_reports_its_loss(fresh_flab, agent):
    lb = fresh_flab
    client = lb.lan_client()
    run = start(lb, agent)
    client.wait_flowing("eth")
    t0 = time.time()
    lb.lossy("eth0", LOSS_PERCENT)
    try:
        # The loss figure needs 16 first SYNs: light rounds every 10 s, full rounds on doubt.
        st = ok(run.wait_state, lambda s: s["uplinks"]["eth0"].get("loss_pct", "-") != "-", 240,
                "a loss figure for eth0")
        # Let the estimate rest on a full window before reading it.
        ok(run.wait_until, lambda: time.time() - t0 >= 150, 200, "150 s of loss")
        st = run.state()
        seen = lb.loss_counts("eth0")
    finally:
        lb.lossless("eth0")
    primaries, verdicts = changes(run, t0)
    eth0 = st["uplinks"]["eth0"]
    print(f"\n{LOSS_PERCENT} % loss for {time.time() - t0:.0f} s: eth0 {eth0['verdict']}, loss "
          f"{eth0['loss_pct']} %, rtt {eth0['rtt_ms']} ms, degraded {eth0['degraded']}; "
          f"dropped {seen}; primary changes {[e.short + ' ' + e.primary_reason for e in primaries]}; "
          f"eth0 verdict changes {[e.short for e in verdicts]}")
    if len(verdicts) > 2:
        fail(run, f"eth0 flapped under loss: {[e.short for e in verdicts]}")
    if len(primaries) > 1:
        fail(run, f"more than one primary change under loss: {[e.short for e in primaries]}")
    if any(e.primary_reason not in ("degraded", "lost") for e in primaries):
        fail(run, f"primary change without its reason: {primaries}")
    if eth0["verdict"] != "online":
        fail(run, f"a lossy eth0 must stay online (TCP works across it), not {eth0['verdict']}")
    loss = int(eth0["loss_pct"])
    if not LOSS_PERCENT - 15 <= loss <= LOSS_PERCENT + 15:
        fail(run, f"eth0 reports {loss} % loss for a true {LOSS_PERCENT} % each way")
    if eth0["degraded"] != "yes":
        fail(run, f"{loss} % loss is past the 10 % mark: eth0 must be degraded")


def test_flapping_primary_is_suppressed_and_changes_say_why(fresh_flab, agent):
    lb = fresh_flab
    client = lb.lan_client()
    hold_down = 10
    run = start(lb, agent, sections={"agent": {"hold-down": f"{hold_down}s"}})
    client.wait_flowing("eth")
    t0 = time.time()
    # First flap: the primary's upstream cut until the primary moves.
    with lb.cut_off("eth0"):
        ok(run.wait_state, lambda s: s["primary"] == "wlan0" and s["uplinks"]["eth0"]["verdict"] != "online",
           30, "primary wlan0 after eth0's first cut")
    ok(run.wait_state, lambda s: s["uplinks"]["eth0"]["verdict"] == "online", 30, "eth0 online again")
    # Second flap within its hold-down: the proving probes catch it.
    with lb.cut_off("eth0"):
        ok(run.wait_state, lambda s: s["uplinks"]["eth0"]["verdict"] != "online", 30,
           "eth0 out of online again during its hold-down")
    st = ok(run.wait_state, lambda s: s["uplinks"]["eth0"]["verdict"] == "online", 30, "eth0 online again")
    eth0 = st["uplinks"]["eth0"]
    if eth0["suppressed"] != "yes" or int(eth0["flap_penalty"]) < 1500:
        fail(run, f"two flaps within a minute must suppress eth0: {eth0}")
    # Well past its hold-down, eth0 stays out of the primary role.
    back = time.time()
    ok(run.wait_until, lambda: time.time() - back >= 2 * hold_down + 5, 3 * hold_down + 10,
       "twice the hold-down after eth0's return")
    st = run.state()
    if st["primary"] != "wlan0" or st["uplinks"]["eth0"]["verdict"] != "online":
        fail(run, f"a suppressed eth0 must stay a backup while wlan0 works: primary {st['primary']}")
    primaries, _verdicts = changes(run, t0, [("primary", "wlan0")])
    if [(e.primary, e.primary_reason) for e in primaries] != [("wlan0", "lost")]:
        fail(run, f"expected one primary change eth0->wlan0 (lost): {[(e.short, e.primary_reason) for e in primaries]}")
    log = run.stderr_path.read_text(errors="replace")
    if "suppressed by flap damping" not in log:
        fail(run, "the log does not say that flap damping suppressed eth0")
    print(f"\neth0 suppressed with penalty {st['uplinks']['eth0']['flap_penalty']}; "
          f"primary change: {[(e.short, e.primary_reason) for e in primaries]}")
