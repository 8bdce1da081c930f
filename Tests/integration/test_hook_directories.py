"""Where hooks come from and what they are told, with the agent in the lab.

Run as root: sudo python3 -m pytest -v Tests/integration/test_hook_directories.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).

- Two directories: the admin's (`--hooks-dir`, `[agent] hooks-dir`) and the
  vendors' (`[agent] vendor-hooks-dir`). Hooks of both run in name order; an admin
  hook replaces the vendor one of the same name; an admin link NAME -> /dev/null
  masks it silently; a hook not owned by root, writable by its group or by anyone,
  or a link to nothing is refused with a log line naming it, and the others still
  run. `uplinkd config check` prints the same warnings and exits 0.
- The stop event: on TERM every hook runs once more with UPLINK_EVENT=stop,
  describing the primary at the stop; the agent exits 0 after it ran.
- The per-family environment (UPLINK_IPV4_*, UPLINK_IPV6_*, UPLINK_DNS_SERVERS):
  eth0 gets an IPv6 address and default route besides its IPv4 ones, and DNS
  servers from `[interface eth0] dns` (the only DNS source allowed, so nothing of
  the host's leaks in); wlan0 has IPv4 only and no DNS server.

The lab (lab.py): eth0's upstream a working internet; wlan0's and wwan0's refuse
HTTP unless a test serves there. Hooks are written by the test, as root, mode 0755
unless a test wants otherwise.
"""

import os
import re
import subprocess
from pathlib import Path

from agentrun import config_text, env_dump_hook, uplink_is
from pytesthelp import fail, ok, require_binary

SETTLE_S = 15
NOBODY = 65534


def label_hook(log: Path, label: str) -> str:
    """A hook appending 'LABEL EVENT' to `log`: which copy ran, for what."""
    return f"#!/bin/sh\necho \"{label} $UPLINK_EVENT\" >> '{log}'\n"


def wait_labels(run, log: Path, want: list, what: str) -> list:
    """The lines of a label_hook log once it has every line of `want` (hooks run
    one at a time in name order: the recording hook's line for an event comes
    before these, so only this log tells that these ran)."""
    def have():
        got = lines(log)
        return all(got.count(w) >= want.count(w) for w in want) and got
    return ok(run.wait_until, have, SETTLE_S, what)


def write_hook(path: Path, body: str, mode=0o755) -> Path:
    path.write_text(body)
    os.chmod(path, mode)
    return path


def lines(path: Path) -> list:
    return path.read_text().splitlines() if path.exists() else []


def refusals(text: str) -> list:
    """The 'hook PATH WHY; skipped' sentences of a log or of config check's stderr."""
    return sorted(re.findall(r"^uplinkd: warning: (hook .*; skipped)$", text, re.M))


def test_vendor_admin_override_mask_and_refusals(fresh_lab, serve, agent, tmp_path):
    lb = fresh_lab
    serve(lb, "inet", "internet")
    log = tmp_path / "ran.log"
    vendor = tmp_path / "vendor.d"
    admin = tmp_path / "agent" / "hooks.d"      # the run's --hooks-dir (agentrun.AgentRun)
    vendor.mkdir()
    admin.mkdir(parents=True)
    write_hook(vendor / "20-both", label_hook(log, "vendor 20-both"))
    write_hook(vendor / "30-vendor", label_hook(log, "vendor 30-vendor"))
    write_hook(vendor / "40-masked", label_hook(log, "vendor 40-masked"))
    write_hook(admin / "20-both", label_hook(log, "admin 20-both"))
    (admin / "40-masked").symlink_to("/dev/null")
    os.chown(write_hook(admin / "50-foreign", label_hook(log, "admin 50-foreign")), NOBODY, NOBODY)
    write_hook(admin / "51-world", label_hook(log, "admin 51-world"), 0o757)
    write_hook(admin / "52-group", label_hook(log, "admin 52-group"), 0o775)
    (admin / "53-dangling").symlink_to(tmp_path / "uninstalled-hook")
    write_hook(admin / "25-edited~", label_hook(log, "admin 25-edited~"))   # an editor's backup
    config = config_text({"hooks-dir": admin, "vendor-hooks-dir": vendor}, uplinks="eth0")
    run = agent(lb, config)

    # Start-up: eth0's verdict and the primary, each through 20-both (the admin's)
    # and 30-vendor, in name order across both directories.
    want = ["admin 20-both verdict", "vendor 30-vendor verdict",
            "admin 20-both primary", "vendor 30-vendor primary"]
    ok(run.wait_hooks, [("verdict", "eth0", "online"), ("primary", "eth0")], SETTLE_S)
    wait_labels(run, log, want, "the start-up events through both directories' hooks")
    if lines(log) != want:
        fail(run, f"hooks that ran:\n  {lines(log)}\nexpected\n  {want}")

    err = run.stderr()
    want_refused = sorted([
        f"hook {admin}/50-foreign is owned by uid {NOBODY}, not root; skipped",
        f"hook {admin}/51-world is writable by anyone (mode 757); skipped",
        f"hook {admin}/52-group is writable by its group (mode 775); skipped",
        f"hook {admin}/53-dangling is a link to nothing; skipped",
    ])
    if sorted(set(refusals(err))) != want_refused:
        fail(run, f"refused hooks logged:\n  {sorted(set(refusals(err)))}\nexpected\n  {want_refused}")
    if "40-masked" in err or "25-edited~" in err:
        fail(run, "a masked hook and an editor's backup are left out without a word")

    # `uplinkd config check` sees the same.
    check = subprocess.run([str(require_binary()), "config", "check", "--config", str(run.config)],
                           capture_output=True, text=True, timeout=30)
    if check.returncode != 0 or refusals(check.stderr) != want_refused:
        fail(run, f"config check: exit {check.returncode} (want 0), warnings\n  {refusals(check.stderr)}\n"
                  f"expected\n  {want_refused}\nstderr:\n{check.stderr}")
    summary = f"configuration OK: {run.config}; 2 probes; 3 hooks in {admin} and {vendor}"
    if check.stdout.strip() != summary:
        fail(run, f"config check says {check.stdout.strip()!r}, expected {summary!r} "
                  f"(10-record, 20-both, 30-vendor)")

    # The stop event goes through the same two.
    if run.stop() != 0:
        fail(run, "TERM must exit 0")
    if lines(log)[4:] != ["admin 20-both stop", "vendor 30-vendor stop"]:
        fail(run, f"the stop event must run the same hooks once: {lines(log)[4:]}")


def test_stop_event_runs_every_hook_once_before_the_exit(fresh_lab, serve, agent, tmp_path):
    lb = fresh_lab
    serve(lb, "inet", "internet")
    dumps = tmp_path / "env"
    dumps.mkdir()
    done = tmp_path / "stop-hook-done"
    # The last hook takes its time on stop: the agent must wait for it.
    slow_stop = (f"#!/bin/sh\n[ \"$UPLINK_EVENT\" = stop ] || exit 0\n"
                 f"sleep 0.5\necho \"$UPLINK_PREVIOUS_PRIMARY\" >> '{done}'\n")
    run = agent(lb, hooks={"20-env": env_dump_hook(dumps), "90-slow-stop": slow_stop})
    ok(run.wait_state, lambda s: s["primary"] == "eth0" and uplink_is(s, "wwan0", "limited")
       and uplink_is(s, "wlan0", "limited"), SETTLE_S, "primary eth0, wlan0 and wwan0 limited")
    startup = [("verdict", "eth0", "online"), ("verdict", "wlan0", "limited"),
               ("verdict", "wwan0", "limited"), ("primary", "eth0")]
    ok(run.wait_hooks, startup, 10)
    # 20-env runs after 10-record: its dumps of the same four runs before the stop.
    ok(run.wait_hooks, startup, 10, dumps=dumps)
    before = len(run.events())

    rc = run.stop()
    if rc != 0:
        fail(run, f"TERM: exit {rc}, expected 0")
    if not done.exists() or done.read_text() != "eth0\n":
        fail(run, "the stop hook must run (once) and finish before the agent exits: "
                  f"{done.read_text() if done.exists() else 'never ran'!r}")
    # The agent has exited: every hook ran. The same one helper reads what they wrote.
    events = ok(run.wait_hooks, [("stop", "eth0")], 1)
    stops = [e for e in events if e.event == "stop"]
    if len(events) != before + 1 or len(stops) != 1 or events[-1] is not stops[0]:
        fail(run, f"exactly one more hook run, the stop event, expected: {[e.short for e in events]}")
    s = stops[0]
    got = (s.iface, s.primary, s.previous_primary, s.kind, s.verdict, s.reason)
    if got != ("eth0", "", "eth0", "ethernet", "online", "validated"):
        fail(run, f"stop event: (UPLINK_INTERFACE, UPLINK_PRIMARY, UPLINK_PREVIOUS_PRIMARY, KIND, "
                  f"VERDICT, REASON) = {got}")
    env = ok(run.wait_hooks, [("stop", "eth0")], 1, dumps=dumps)
    if [e["UPLINK_EVENT"] for e in env].count("stop") != 1 or env[-1]["UPLINK_EVENT"] != "stop":
        fail(run, f"20-env must see the stop event once, last: {[e['UPLINK_EVENT'] for e in env]}")
    if env[-1]["UPLINK_IPV4_ADDRESSES"] != "10.231.1.2/24" or env[-1]["UPLINK_IPV4_GATEWAY"] != "10.231.1.1":
        fail(run, f"the stop event describes eth0's network: {env[-1]}")
    st = run.state()
    if st["stopped"] != "yes" or st["primary"] != "eth0":
        fail(run, "the final state file must say stopped (primary eth0)")
    if run.state_path.stat().st_mtime < done.stat().st_mtime:
        fail(run, "the final state must be written after the stop hooks ran")


V6_NET = "2001:db8:231:1"


def test_per_family_environment(fresh_lab, serve, agent, tmp_path):
    lb = fresh_lab
    serve(lb, "inet", "internet")
    serve(lb, "portal", "internet")
    lb.ip("inet", "-6", "addr", "add", f"{V6_NET}::1/64", "dev", lb.peer_of("eth0")[1], "nodad")
    lb.ip("gw", "-6", "addr", "add", f"{V6_NET}::2/64", "dev", "eth0", "nodad")
    lb.ip("gw", "-6", "route", "add", "default", "via", f"{V6_NET}::1", "dev", "eth0", "metric", "300")
    dumps = tmp_path / "env"
    dumps.mkdir()
    extra = ("\n[dns]\nsources = configured\n"
             f"\n[interface eth0]\ndns = 10.231.1.1 {V6_NET}::1\n")
    run = agent(lb, config_text(uplinks="eth0 wlan0", extra=extra),
                hooks={"20-env": env_dump_hook(dumps)})
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "online") and uplink_is(s, "wlan0", "online")
       and s["primary"] == "eth0", SETTLE_S, "eth0 and wlan0 online, primary eth0")
    # The state file is written before the hooks run, and the hooks of different
    # uplinks' events run in any order (wlan0 may be online first, eth0 taking over
    # after its hold-down; wlan0's verdict may come after eth0's primary event):
    # wait for exactly the dumps read below.
    env = ok(run.wait_hooks, [("verdict", "eth0", "online"), ("primary", "eth0"),
                              ("verdict", "wlan0", "online")], 10, dumps=dumps)

    def first(event, iface):
        return next((e for e in env if e["UPLINK_EVENT"] == event and e["UPLINK_INTERFACE"] == iface), None)

    keys = ("UPLINK_IPV4_ADDRESSES", "UPLINK_IPV4_GATEWAY", "UPLINK_IPV4_DNS",
            "UPLINK_IPV6_ADDRESSES", "UPLINK_IPV6_GATEWAY", "UPLINK_IPV6_DNS", "UPLINK_DNS_SERVERS")
    eth0 = ("10.231.1.2/24", "10.231.1.1", "10.231.1.1",
            f"{V6_NET}::2/64", f"{V6_NET}::1", f"{V6_NET}::1", f"10.231.1.1 {V6_NET}::1")
    wlan0 = ("10.231.2.2/24", "10.231.2.1", "", "", "", "", "")
    for event, iface, want in (("verdict", "eth0", eth0), ("primary", "eth0", eth0),
                               ("verdict", "wlan0", wlan0)):
        e = first(event, iface)
        if e is None:
            fail(run, f"no {event} event for {iface} among {[(x['UPLINK_EVENT'], x['UPLINK_INTERFACE']) for x in env]}")
        got = tuple(e.get(k) for k in keys)
        if got != want:
            fail(run, f"{event} event of {iface}:\n  "
                      + "\n  ".join(f"{k}={g!r} (want {w!r})" for k, g, w in zip(keys, got, want)))
    if run.stop() != 0:
        fail(run, "TERM must exit 0")
