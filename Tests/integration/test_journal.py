"""The outage journal in the failover lab (failoverlab.py), the agent at its
defaults with the shipped route-failover hook, each run with a journal of its own
(`run --journal`):

- every uplink's carrier lost for 30 s: `uplinkd history` lists the outage as
  ongoing while it lasts, then one site record
  whose duration matches the carriers' time down (within 1 s) and whose reasons
  name each uplink, one record for each uplink back online, and `uplinkd
  availability` counts the one site outage;
- the agent killed (SIGKILL) in the middle of such an outage and started again:
  still one site record, from before the kill to after the return, and an
  `absent` record (cause lost) covering the time the agent did not run;
- the shipped notify example at its defaults, with a backup uplink flapping and
  then flapping (its upstream cut) through a site outage: one `outage` hook event
  and one notification for the one site record, none for the flaps.

Run as root: sudo python3 -m pytest -v Tests/integration/test_journal.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd.
"""

import json
import subprocess
import time

import failoverlab
from agentrun import AgentRun
from lab import REPO_ROOT
from pytesthelp import fail, ok

SETTLE_S = 30
UPLINKS = ("eth0", "wlan0", "wwan0")


def carriers(lb, up):
    for iface in UPLINKS:
        role, peer = lb.peer_of(iface)
        lb.ip(role, "link", "set", peer, "up" if up else "down")


def history(run, *args):
    done = subprocess.run([str(run.binary), "history", "--journal", str(run.journal_path), "--json", *args],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        fail(run, f"uplinkd history failed ({done.returncode}): {done.stderr}")
    return [json.loads(line) for line in done.stdout.splitlines()]


def primary_event(run, primary, since):
    return ok(run.wait_until, lambda: next((e for e in run.events() if e.event == "primary" and e.t >= since
                                            and (e.primary or "") == primary), None), 20,
              f"the primary hook event to {primary or 'none'}")


def settled_then_cut(lb, agent):
    """An agent settled at eth0, then every carrier lost: (the run, the cut's time)."""
    run = agent(lb, lb.agent_config(), hooks=lb.agent_hooks())
    ok(failoverlab.wait_settled, run, lb, SETTLE_S)
    cut = time.time()
    carriers(lb, up=False)
    ok(run.wait_state, lambda s: s["primary"] == "-", 20, "no primary once every carrier is lost")
    return run, cut


def test_a_cut_of_every_uplink_is_one_site_record(fresh_flab, agent):
    lb = fresh_flab
    run, cut = settled_then_cut(lb, agent)
    lost = primary_event(run, "", cut)
    # While it lasts, history lists it from the checkpoint as ongoing.
    going = ok(run.wait_until, lambda: [r for r in history(run) if r["kind"] == "site"], 10, "the ongoing site outage")
    if len(going) != 1 or not going[0].get("ongoing") or going[0]["primary_after"] is not None:
        fail(run, f"one ongoing site outage expected while every carrier is lost: {going}")
    time.sleep(max(0.0, cut + 30 - time.time()))     # the 30 s outage itself
    restored = time.time()
    carriers(lb, up=True)
    back_at = time.time()
    ok(run.wait_state, lambda s: s["primary"] != "-", 60, "a primary again")
    back = primary_event(run, run.state()["primary"], restored)
    # The site record is written when the primary returns: before its hook runs.
    sites = ok(run.wait_until, lambda: [r for r in history(run) if r["kind"] == "site"], 10, "the site record")
    print(f"\nsite record {sites}; primary hooks {lost.t - cut:.2f} s after the cut, "
          f"{back.t - restored:.2f} s after the restore")
    if len(sites) != 1:
        fail(run, f"one outage must give one site record, not {len(sites)}: {sites}")
    site = sites[0]
    # The carriers went down and came back by the test's own commands: the record spans
    # them, give or take the agent's reaction (the hooks' start lags their queue).
    expected = restored - cut
    if abs(site["duration_ms"] / 1000 - expected) > 1.0:
        fail(run, f"site record lasts {site['duration_ms']} ms; the carriers were down from {cut:.2f} to "
                  f"{restored:.2f} (commands done at {back_at:.2f}), {expected:.2f} s")
    seen = {(r["interface"], r["reason"]) for r in site["reasons"]}
    if seen != {(iface, "no-carrier") for iface in UPLINKS}:
        fail(run, f"site record reasons {site['reasons']}: each uplink's no-carrier expected")
    # The carriers go one after the other: the primary may have moved on before the last.
    if site["primary_before"] not in UPLINKS or site["primary_after"] not in UPLINKS:
        fail(run, f"site record primaries {site['primary_before']} -> {site['primary_after']}")
    # eth0 and wlan0 are online again (wwan0, the metered backup, may rest unproven).
    uplinks = ok(run.wait_until, lambda: (lambda rs: rs if {"eth0", "wlan0"} <= {r["interface"] for r in rs} else None)(
        [r for r in history(run) if r["kind"] == "uplink"]), 30, "eth0's and wlan0's uplink records")
    names = [r["interface"] for r in uplinks]
    if len(names) != len(set(names)):
        fail(run, f"one record per uplink and outage expected: {uplinks}")
    only_wlan0 = history(run, "wlan0")
    if any(r["kind"] == "uplink" and r["interface"] != "wlan0" for r in only_wlan0) or not any(
            r["kind"] == "uplink" for r in only_wlan0):
        fail(run, f"history wlan0 must list wlan0's uplink record and no other's: {only_wlan0}")
    done = subprocess.run([str(run.binary), "availability", "--journal", str(run.journal_path), "--json"],
                          capture_output=True, text=True, timeout=30)
    figures = json.loads(done.stdout)
    print(f"availability: {figures}")
    if figures["site"]["outages"] != 1 or abs(figures["site"]["outage_seconds"] - expected) > 1.5:
        fail(run, f"availability counts {figures['site']}, expected one outage of {expected:.1f} s")


def test_a_kill_in_the_middle_of_an_outage_keeps_one_record_and_shows_the_gap(fresh_flab, agent, tmp_path):
    lb = fresh_flab
    run, cut = settled_then_cut(lb, agent)
    checkpoint = run.journal_path.with_name(run.journal_path.name + ".checkpoint")
    ok(run.wait_until, lambda: checkpoint.exists() and "open site " in checkpoint.read_text(), 10,
       "the open site period in the checkpoint")
    killed = time.time()
    run.kill()
    time.sleep(3)                                     # the gateway's agent is away
    again = AgentRun(lb, tmp_path / "again", lb.agent_config(), hooks=lb.agent_hooks(),
                     journal=run.journal_path)
    try:
        again.start()
        # Decided again, still without a primary: the outage goes on.
        ok(again.wait_state, lambda s: s["primary"] == "-" and all(
            s["uplinks"][i]["verdict"] == "down" for i in UPLINKS), 30, "the restarted agent sees no primary")
        restored = time.time()
        carriers(lb, up=True)
        ok(again.wait_state, lambda s: s["primary"] != "-", 60, "a primary again")
        records = ok(again.wait_until, lambda: (lambda rs: rs if any(r["kind"] == "site" for r in rs) else None)(
            history(again)), 10, "the site record")
    finally:
        again.close()
    sites = [r for r in records if r["kind"] == "site"]
    absent = [r for r in records if r["kind"] == "absent"]
    print(f"\nsite {sites}\nabsent {absent}")
    if len(sites) != 1:
        fail(run, f"an outage across a restart must stay one site record, not {len(sites)}: {sites}")
    if not (cut - 1 <= sites[0]["start"] <= killed and sites[0]["end"] >= int(restored)):
        fail(run, f"site record {sites[0]} does not span the cut ({cut:.0f}) to the restore ({restored:.0f})")
    if len(absent) != 1 or absent[0]["cause"] != "lost":
        fail(run, f"one absent record, cause lost, expected: {absent}")
    if not (absent[0]["start"] <= killed + 1 and absent[0]["end"] >= int(killed) + 3):
        fail(run, f"absent record {absent[0]} does not cover the kill at {killed:.0f} and the 3 s after it")


def notify_hook() -> str:
    """The shipped notify example as a gateway runs it (hooks get only PATH and
    UPLINK_*: the wrapper names its library and a settings file that does not exist,
    so EVENTS is at its default)."""
    return (f"#!/bin/sh\nUPLINKD_HOOK_LIB='{REPO_ROOT}/hooks/lib/uplinkd-hook.sh' "
            f"UPLINKD_NOTIFY_CONF=/nonexistent/notify.conf exec '{REPO_ROOT}/hooks/90-notify'\n")


NOTIFIED = "hook 90-notify: site offline for "


def test_the_notify_hook_tells_once_per_outage_under_a_flapping_uplink(fresh_flab, agent):
    lb = fresh_flab
    hooks = dict(lb.agent_hooks(), **{"90-notify": notify_hook()})
    run = agent(lb, lb.agent_config(), hooks=hooks)
    ok(failoverlab.wait_settled, run, lb, SETTLE_S)
    role, wlan0_peer = lb.peer_of("wlan0")

    # The backup wlan0 flaps while eth0 carries the site: its verdicts change, the
    # site never goes offline, and nobody is told.
    for _ in range(3):
        lb.ip(role, "link", "set", wlan0_peer, "down")
        ok(run.wait_state, lambda s: s["uplinks"]["wlan0"]["verdict"] == "down", 10, "wlan0 down")
        lb.ip(role, "link", "set", wlan0_peer, "up")
        ok(run.wait_state, lambda s: s["uplinks"]["wlan0"]["verdict"] == "online", 30, "wlan0 online again")
    if NOTIFIED in run.stderr():
        fail(run, "a flapping backup made the notify hook tell of an outage")

    # A site outage during which wlan0 flaps: its upstream is cut too, so each time
    # its carrier returns it is judged again (not online) and loses it again.
    lb.cut("wlan0")
    cut = time.time()
    carriers(lb, up=False)
    ok(run.wait_state, lambda s: s["primary"] == "-", 20, "no primary once every carrier is lost")
    for _ in range(3):
        lb.ip(role, "link", "set", wlan0_peer, "up")
        ok(run.wait_state, lambda s: s["uplinks"]["wlan0"]["reason"] != "no-carrier", 30,
           "wlan0 judged with its carrier back")
        lb.ip(role, "link", "set", wlan0_peer, "down")
        ok(run.wait_state, lambda s: s["uplinks"]["wlan0"]["reason"] == "no-carrier", 10, "wlan0 without carrier")
    lb.restore("wlan0")
    carriers(lb, up=True)
    ok(run.wait_state, lambda s: s["primary"] != "-", 60, "a primary again")
    sites = ok(run.wait_until, lambda: [r for r in history(run) if r["kind"] == "site"], 10, "the site record")
    # Every decision so far has had its hooks run, the notify hook's included.
    ok(run.wait_state, lambda s: s["hooks_done"] == s["decision"], 30, "the hooks caught up")
    sites = [r for r in history(run) if r["kind"] == "site"]
    outages = [e for e in run.events() if e.event == "outage"]
    told = run.stderr().count(NOTIFIED)
    wlan0_verdicts = [e for e in run.events() if e.event == "verdict" and e.iface == "wlan0" and e.t >= cut]
    print(f"\n{len(sites)} site records, {len(outages)} outage events, {told} notifications; "
          f"{len(wlan0_verdicts)} verdict events of wlan0 during the outage")
    if len(wlan0_verdicts) < 2:
        fail(run, f"wlan0 did not flap during the outage: {wlan0_verdicts}")
    if not (len(sites) == len(outages) == told == 1):
        fail(run, f"one site record, one outage event and one notification expected: {len(sites)} records "
                  f"{sites}, {len(outages)} events, {told} notifications")
    line = next(l for l in run.stderr().splitlines() if NOTIFIED in l)
    if "eth0:no-carrier" not in line or "primary now " not in line:
        fail(run, f"the notification names neither the reasons nor the primary: {line}")
