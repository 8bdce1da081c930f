"""The Prometheus textfile (`[export] prometheus-textfile`) of `uplinkd run` in the
network-namespace lab: it passes `promtool check metrics` (lint included), shows
the uplinks' verdicts, the primary and the counters, follows a cut link, is left
with `uplinkd_running 0` at stop, moves on reload, and a path that cannot be
written is logged once without stopping the agent.

Run as root: sudo python3 -m pytest -v Tests/integration/test_metrics.py
promtool comes from Debian's `prometheus` package (.ci/setup unpacks it into /usr/local/bin); without it the promtool test
skips with the reason (fails when UPLINKD_REQUIRE_LAB is set).
"""

import re
import signal
import subprocess

from agentrun import config_text, uplink_is
from lab import tool_path
from pytesthelp import fail, ok, skip_or_fail

SETTLE_S = 15
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')
VERDICTS = ("unknown", "down", "limited", "captive", "online")


def exported(prom_path):
    """(name, frozenset of labels) -> float value, from the textfile; {} when there
    is none yet. Raises ValueError on a line that is no comment and no sample."""
    try:
        text = prom_path.read_text()
    except FileNotFoundError:
        return {}
    series = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError(f"not a sample line: {line!r}")
        labels = frozenset(LABEL.findall(m.group(2) or ""))
        series[(m.group(1), labels)] = float(m.group(3))
    return series


def value(series, name, **labels):
    """The value of the one series `name` whose labels include `labels`, else None."""
    found = [v for (n, ls), v in series.items() if n == name and set(labels.items()) <= set(ls)]
    if len(found) > 1:
        raise AssertionError(f"{len(found)} series {name} {labels}")
    return found[0] if found else None


def export_config(path):
    return config_text(extra=f"\n[export]\nprometheus-textfile = {path}\n")


def wait_metrics(run, prom, predicate, timeout, what):
    def check():
        series = exported(prom)
        return series if series and predicate(series) else None
    return ok(run.wait_until, check, timeout, f"{what} in {prom}")


def promtool_problems(promtool, prom):
    """promtool's complaints about the file (exit status and output), or None."""
    with open(prom, "rb") as f:
        proc = subprocess.run([promtool, "check", "metrics"], stdin=f, capture_output=True, timeout=30)
    out = (proc.stdout + proc.stderr).decode(errors="replace").strip()
    if proc.returncode != 0 or out:
        return f"promtool check metrics exited {proc.returncode}: {out}\n--- {prom} ---\n{prom.read_text()}"
    return None


def test_textfile_passes_promtool_and_follows_a_cut(fresh_lab, serve, agent, tmp_path):
    promtool = tool_path("promtool")
    if promtool is None:
        skip_or_fail("promtool is not installed (Debian package prometheus)", "promtool")
    lb = fresh_lab
    serve(lb, "inet", "internet")
    serve(lb, "portal", "internet")
    # A directory that does not exist yet: the agent makes it.
    prom = tmp_path / "node-exporter" / "uplinkd.prom"
    run = agent(lb, export_config(prom))

    def settled(s):
        return (value(s, "uplinkd_uplink_up", interface="eth0") == 1
                and value(s, "uplinkd_uplink_up", interface="wlan0") == 1
                and value(s, "uplinkd_uplink_verdict", interface="wwan0", verdict="limited") == 1
                and value(s, "uplinkd_uplink_primary", interface="eth0") == 1)
    series = wait_metrics(run, prom, settled, SETTLE_S, "eth0 and wlan0 up, wwan0 limited, primary eth0")
    problems = promtool_problems(promtool, prom)
    if problems:
        fail(run, problems)

    for iface, kind, verdict in (("eth0", "ethernet", "online"), ("wlan0", "wifi", "online"),
                                 ("wwan0", "wwan", "limited")):
        got = {v: value(series, "uplinkd_uplink_verdict", interface=iface, kind=kind, verdict=v) for v in VERDICTS}
        want = {v: 1.0 if v == verdict else 0.0 for v in VERDICTS}
        if got != want:
            fail(run, f"{iface}: one verdict series per value, only {verdict} at 1: {got}")
    if value(series, "uplinkd_uplink_up", interface="wwan0") != 0:
        fail(run, "wwan0 (limited) must not be up")
    if [value(series, "uplinkd_uplink_primary", interface=i) for i in ("wlan0", "wwan0")] != [0, 0]:
        fail(run, "only eth0 is primary")
    if value(series, "uplinkd_running") != 1 or value(series, "uplinkd_info") != 1:
        fail(run, "uplinkd_running and uplinkd_info must be 1 while the agent runs")
    if not value(series, "uplinkd_probe_bytes_total", interface="eth0"):
        fail(run, "eth0's probes must have spent bytes")
    before = {
        "eth0 changes": value(series, "uplinkd_verdict_changes_total", interface="eth0"),
        "primary changes": value(series, "uplinkd_primary_changes_total"),
        "eth0 since": value(series, "uplinkd_uplink_last_change_timestamp_seconds", interface="eth0"),
        "wlan0 bytes": value(series, "uplinkd_probe_bytes_total", interface="wlan0"),
    }
    if before["eth0 changes"] < 1 or before["primary changes"] < 1:
        fail(run, f"start-up's verdict and primary changes must be counted: {before}")

    role, name = lb.peer_of("eth0")
    lb.ip(role, "link", "set", name, "down")
    series = wait_metrics(run, prom, lambda s: value(s, "uplinkd_uplink_verdict", interface="eth0", verdict="down") == 1
                          and value(s, "uplinkd_uplink_primary", interface="wlan0") == 1,
                          SETTLE_S, "eth0 down and primary wlan0")
    after = {
        "eth0 changes": value(series, "uplinkd_verdict_changes_total", interface="eth0"),
        "primary changes": value(series, "uplinkd_primary_changes_total"),
        "eth0 since": value(series, "uplinkd_uplink_last_change_timestamp_seconds", interface="eth0"),
        "wlan0 bytes": value(series, "uplinkd_probe_bytes_total", interface="wlan0"),
    }
    if (after["eth0 changes"], after["primary changes"]) != (before["eth0 changes"] + 1, before["primary changes"] + 1):
        fail(run, f"one more verdict change of eth0 and one more primary change: before {before}, after {after}")
    if after["eth0 since"] < before["eth0 since"] or after["wlan0 bytes"] < before["wlan0 bytes"]:
        fail(run, f"last change time and byte counters must not go back: before {before}, after {after}")
    if value(series, "uplinkd_uplink_up", interface="eth0") != 0 or \
            value(series, "uplinkd_uplink_verdict", interface="eth0", verdict="online") != 0:
        fail(run, "eth0 is down: up 0 and its online series 0")
    # The counters are the hook events: once the hooks caught up, the numbers agree.
    events = ok(run.wait_hooks, [("verdict", "eth0")] * int(after["eth0 changes"])
                + [("primary", None)] * int(after["primary changes"]), 10,
                what="as many hook events as counted changes")
    counted = (len([e for e in events if e.event == "verdict" and e.iface == "eth0"]),
               len([e for e in events if e.event == "primary"]))
    if counted != (after["eth0 changes"], after["primary changes"]):
        fail(run, f"hook events (eth0 verdicts, primary changes) {counted}, counted changes "
                  f"{(after['eth0 changes'], after['primary changes'])}")
    problems = promtool_problems(promtool, prom)
    if problems:
        fail(run, problems)

    if run.stop(signal.SIGTERM) != 0:
        fail(run, "TERM must stop the agent with status 0")
    series = exported(prom)
    if value(series, "uplinkd_running") != 0 or run.state()["stopped"] != "yes":
        fail(run, "the file left at stop must say uplinkd_running 0 (and the state file stopped)")
    if value(series, "uplinkd_primary_changes_total") != after["primary changes"]:
        fail(run, "stopping is no primary change")
    leftovers = [p.name for p in prom.parent.iterdir() if p.name != prom.name]
    if leftovers:
        fail(run, f"temporary files left next to the textfile: {leftovers}")


def test_unwritable_path_is_logged_once_and_reload_moves_the_file(lab, serve, agent, tmp_path):
    serve(lab, "inet", "internet")
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the textfile's directory should be\n")
    bad = blocker / "uplinkd.prom"
    run = agent(lab, export_config(bad))
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "online"), SETTLE_S, "eth0 online")
    # Every round changes the state (its probe bytes): three more writes that fail.
    offset = run.stderr_size()
    ok(run.wait_stderr, r"round on eth0: ", 15, offset=offset, count=3)
    # Logged once above debug level (a lasting failure: again at most once an hour);
    # the agent runs with -v -v, so each retry shows at debug level as well.
    warnings = re.findall(r"^uplinkd: (?!debug:)\w+: writing metrics textfile: .*", run.stderr(), re.M)
    retries = re.findall(r"^uplinkd: debug: writing metrics textfile: .*", run.stderr(), re.M)
    if len(warnings) != 1 or str(bad) not in warnings[0] or not retries:
        fail(run, f"a failing textfile must be logged once, naming it: {warnings}; retries at debug level: {len(retries)}")

    good = tmp_path / "a" / "uplinkd.prom"
    run.config.write_text(export_config(good))
    run.send(signal.SIGHUP)
    wait_metrics(run, good, lambda s: value(s, "uplinkd_uplink_up", interface="eth0") == 1, 10,
                 "eth0 up after the reload")
    ok(run.wait_stderr, rf"metrics textfile {re.escape(str(good))} written again", 5)

    moved = tmp_path / "b" / "uplinkd.prom"
    run.config.write_text(export_config(moved))
    run.send(signal.SIGHUP)
    wait_metrics(run, moved, lambda s: value(s, "uplinkd_uplink_up", interface="eth0") == 1, 10,
                 "eth0 up after the second reload")
    if good.exists():
        fail(run, f"{good} must be removed when the textfile moves (it would be exported stale)")
    if not run.running():
        fail(run, "the agent must keep running")
