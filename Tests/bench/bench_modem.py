#!/usr/bin/env python3
"""Cellular uplinks as modems: timings and cost of `uplinkd run` following the REAL
ModemManager (Tests/integration/modemrig.py: its test mode, an emulated AT modem, a
private D-Bus bus) beside the failover lab (Tests/integration/failoverlab.py): one
Markdown table.

    sudo python3 Tests/bench/bench_modem.py [--binary PATH] [--runs N]
        [--unregistered-seconds S] [--recover-after S] [--reset-after S]
        [--ladder-runs N] [--healthy-minutes M] [--settle S] [--skip PARTS]
        [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header (date,
machine, binary, ModemManager, command) and the table. Nothing is asserted: the
targets are printed beside the figures. Exit status 1 only when a part could not
run at all (a lab, the rig or the agent failed); a step that did not come within
its bound is a figure ("not seen"), not an error.

Every agent runs as test_modem.py's: in the lab's gw namespace with
DBUS_SYSTEM_BUS_ADDRESS = the rig's bus, `[interface wwan0] modem = IMEI` (the rig's
bearer is PPP-style, without a network device, so the lab's veth wwan0 stands for
the modem's data interface), the lab's configuration otherwise (built-in probes,
`dns = ROUTER`, every other setting at its default), its hooks 10-record and the
shipped 50-route-failover, plus 05-fifo: one POSIX sh printf of the hook's
variables into a FIFO this process holds open, stamped with CLOCK_MONOTONIC on
arrival (bench_agent.py's Fifo). The emulator stamps every AT line it receives
with time.monotonic() as well, so "hook started" and "command received" are on one
clock. The rig's modem is connected (`mmcli --simple-connect=apn=internet`)
before each agent starts, as a connection manager would leave it.

Parts (--skip takes their names):

  registration  wwan0 a metered backup at the defaults (eth0 primary). --runs
                times: just before the emulator's control call that makes it
                `searching` -> the verdict hook `wwan0 online -> down` started
                (also from the +CREG/+CEREG URC the emulator sent ModemManager);
                then for --unregistered-seconds the nftables counter of the
                gateway's own IPv4 output on wwan0 (FailoverLab.counters()
                local_out) and the probe requests its upstream logged; then
                `home` again and the time to the `down -> online` hook.
  recovery      wwan0 the primary (`[agent] priority = wwan0 ethernet wifi`),
                probed every 2 s (`[interface wwan0] interval = 2s`) so that its
                dead upstream is found at once, `recover-after` and `reset-after`
                from --recover-after / --reset-after (defaults: the agent's,
                120 s and 600 s). Run A: the upstream is cut (FailoverLab.cut:
                carrier up, DNS answering, the internet address dropped); from
                the hook `wwan0 online -> ...` to the first reconnect command the
                emulator received (AT+CGACT=0 or ATH); the upstream is restored
                as soon as that command is seen; from it to wwan0 online on the
                re-dialled modem. Run B (a fresh agent, same rig): the cut stays
                until the reset (AT+CFUN=15), then is restored; left online ->
                reconnect, left online -> reset, reset -> online on the
                re-dialled modem. "Online on the re-dialled modem": the first
                `-> online` hook line at or after the modem's next dial (ATD*99:
                its bearer is up when CONNECT is answered), or the dial itself
                when wwan0 was online already then. The rig's data path is the
                lab's veth, which a modem's reset or disconnect does not take
                away, so a probe round begun before the step can validate before
                the modem is back; such `-> online` lines between the step and
                the dial are counted apart, and each run's story (hook lines,
                the emulator's commands, the agent's notices, from the cut) is
                printed under the table. --ladder-runs pairs of runs (A, B),
                each with its own agent.
  healthy       two labs side by side, each with an agent, for --healthy-minutes
                after --settle seconds: agent M follows the rig's modem (adapter
                active), agent N has `[agent] modemmanager = no` and is otherwise
                identical (same configuration, same bus address in its
                environment). Counted over the window: recovery steps (the state
                file's RECOVERIES, reconnect/reset commands in the emulator's
                log), wwan0 verdict changes of each; the CPU of each agent
                (utime+stime from /proc/PID/stat, 10 ms ticks, and the summed
                run time of its threads from /proc/PID/task/*/schedstat, ns);
                M - N per hour is the cost of the D-Bus traffic (signal refresh
                every 30 s, the default modem-signal-interval). The AT commands
                ModemManager sent the emulator in the window are counted too.
  memory        VmRSS and Private_Dirty (/proc/PID/status, smaps_rollup) of the
                two agents at the end of the window (also their maxima, sampled
                every 5 s), and the difference M - N. Measured on the healthy
                part's pair; with `healthy` skipped the pair runs a window of
                --settle seconds only.

In a full run, healthy (with memory) runs in labs of its own in parallel with
registration and recovery one after the other (all mostly asleep; CPU is
accounted per process). With --smoke every part is very short and all run in
parallel (a check that the benchmark runs, not figures).
"""

import argparse
import inspect
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchstats import NONE, Parts, fmt_s, median, p95

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
import modemrig  # noqa: E402
from agentrun import AgentError, AgentRun, proc_memory, proc_stat_cpu  # noqa: E402
from bench_agent import Fifo  # noqa: E402
from bench_compare import Sampler, parse_bench_args, tree_cpu  # noqa: E402
from bench_failover import lab_bench_header, skipped_parts  # noqa: E402
from failoverlab import FailoverLab  # noqa: E402

IMEI = modemrig.DEFAULT_IMEI
PARTS = ("registration", "recovery", "healthy", "memory")
FULL = {"runs": 10, "unregistered_seconds": 5.0, "recover_after": 120.0, "reset_after": 600.0,
        "ladder_runs": 1, "healthy_minutes": 30.0, "settle": 60.0}
SMOKE = {"runs": 1, "unregistered_seconds": 2.0, "recover_after": 10.0, "reset_after": 15.0,
         "ladder_runs": 1, "healthy_minutes": 0.25, "settle": 3.0}
SETTLE_TIMEOUT_S = 60.0
VERDICT_TIMEOUT_S = 30.0          # a modem's word, or one round, must show within this
ONLINE_AFTER_RECONNECT_S = 30.0   # the targets of the ladder's returns
ONLINE_AFTER_RESET_S = 60.0
STEP_SLACK_S = 5.0                # a ladder step is due at its setting, target + this
RECONNECT_PREFIXES = ("AT+CGACT=0", "ATH")
RESET_COMMAND = "AT+CFUN=15"
LOG_POLL_S = 0.05
MEMORY_EVERY_S = 5.0
T0 = time.monotonic()


def progress(msg):
    print(f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - T0:5.0f}s] {msg}",
          file=sys.stderr, flush=True)


def is_reconnect(cmd):
    return cmd.startswith(RECONNECT_PREFIXES)


def is_reset(cmd):
    return cmd.startswith(RESET_COMMAND)


class StampedHook(Fifo):
    """bench_agent.Fifo whose lines carry the reason too: event, interface,
    previous verdict, verdict, primary, reason (fields 0-5)."""

    def hook(self) -> str:
        return ("#!/bin/sh\n"
                "printf '%s %s %s %s %s %s\\n' \"$UPLINK_EVENT\" \"$UPLINK_INTERFACE\" "
                "\"$UPLINK_PREVIOUS\" \"$UPLINK_VERDICT\" \"$UPLINK_PRIMARY\" \"$UPLINK_REASON\" "
                f"> '{self.path}'\n")

    def fields(self, index):
        return self.lines[index][1]

    def arrival_after(self, pred, since, not_before, timeout, run):
        """Arrival of the first line from index `since` on with pred(fields) that
        arrived at or after monotonic `not_before`; None after `timeout` s or when
        the agent `run` exited."""
        deadline = time.monotonic() + max(timeout, 0.0)
        with self.cond:
            while True:
                for t, f in self.lines[since:]:
                    if t >= not_before and pred(f):
                        return t
                left = deadline - time.monotonic()
                if left <= 0 or not run.running():
                    return None
                self.cond.wait(min(left, 0.5))


def wwan0_verdict(pred):
    """A Fifo predicate: a verdict line of wwan0 with pred(previous, verdict, reason)."""
    return lambda f: len(f) >= 6 and f[0] == "verdict" and f[1] == "wwan0" and pred(f[2], f[3], f[5])


def verdict_trail(hook, since):
    """wwan0's verdict changes from hook line `since` on: 'online→down (reason)', ..."""
    with hook.cond:
        lines = [f for _, f in hook.lines[since:]]
    return [f"{f[2]}→{f[3]} ({f[5]})" for f in lines
            if len(f) >= 6 and f[0] == "verdict" and f[1] == "wwan0"]


def wwan0_out_bytes(lb):
    return lb.counters()["wwan0"]["local_out"][1]


def modem_config(lb, wwan0=None, agent=None):
    keys = {"modem": IMEI}
    keys.update(wwan0 or {})
    return lb.agent_config(interfaces={"wwan0": keys}, sections={"agent": agent or {}})


def connected_rig():
    """A started rig whose modem has its bearer up (the caller closes it)."""
    rig = modemrig.ModemRig().start()
    try:
        rig.mmcli("-m", rig.modem_path(), "--simple-connect=apn=internet")
    except BaseException:
        rig.close()
        raise
    return rig


def first_command(rig, since, pred, timeout, agent):
    """The first emulator log entry from `since` on whose command satisfies pred,
    polled every LOG_POLL_S; None at the deadline or when the agent exited."""
    deadline = time.monotonic() + timeout
    while True:
        for entry in rig.log(since):
            if "cmd" in entry and pred(entry["cmd"]):
                return entry
        if time.monotonic() >= deadline or not agent.running():
            return None
        time.sleep(LOG_POLL_S)


class ModemScene:
    """A failover lab, the modem rig (or none) and agents started in it one after
    the other (a context manager; closes everything it started)."""

    def __init__(self, binary, workdir: Path, name: str, rig=True, verbose=1):
        self.binary, self.dir, self.name, self.with_rig, self.verbose = binary, workdir / name, name, rig, verbose
        self.lab = self.rig = self.run = None
        self.agents = 0

    def __enter__(self):
        try:
            self.lab = FailoverLab().build()
            if self.with_rig:
                self.rig = connected_rig()
            self.dir.mkdir(parents=True, exist_ok=True)
            self.hook = StampedHook(self.dir / "hook.fifo")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def start_agent(self, config, primary="eth0", bus=None):
        """Stop the agent running, if any; start one with `config` (DBUS_SYSTEM_BUS_ADDRESS:
        `bus`, else the scene's rig's) and wait until it settled with `primary`."""
        self.stop_agent()
        self.agents += 1
        bus = bus or (self.rig.bus_address if self.rig else None)
        self.run = AgentRun(self.lab, self.dir / f"agent{self.agents}", config,
                            hooks={**self.lab.agent_hooks(), "05-fifo": self.hook.hook()},
                            binary=self.binary, verbose=self.verbose,
                            env={"DBUS_SYSTEM_BUS_ADDRESS": bus} if bus else {}).start(timed=True)
        failoverlab.wait_settled(self.run, self.lab, SETTLE_TIMEOUT_S, primary=primary)
        if self.rig is not None and "modemmanager = no" not in config:
            self.run.wait_state(lambda st: st["uplinks"]["wwan0"].get("modem_equipment_id") == IMEI, 10,
                                "wwan0's modem in the state file")
        return self.run

    def stop_agent(self):
        if self.run is not None:
            try:
                self.run.stop()
            finally:
                self.run.close()

    def __exit__(self, *exc):
        try:
            self.stop_agent()
        finally:
            try:
                if self.rig is not None:
                    self.rig.close()
            finally:
                if self.lab is not None:
                    self.lab.destroy()
        return False


# -- registration ------------------------------------------------------------------------

def urc_time(rig, since):
    """monotonic time of the first registration URC (+CREG/+CGREG/+CEREG) the
    emulator sent from log entry `since` on, or None."""
    return next((e["t"] for e in rig.log(since) if e.get("urc", "").startswith(("+CREG", "+CGREG", "+CEREG"))),
                None)


def registration_part(binary, workdir, runs, window):
    samples = []
    with ModemScene(binary, workdir, "registration") as sc:
        lb, rig, hook = sc.lab, sc.rig, sc.hook
        run = sc.start_agent(modem_config(lb))
        for k in range(runs):
            s = {}
            mark, log_mark = hook.mark(), rig.log_mark()
            t0 = time.monotonic()
            rig.set_registration("searching")
            try:
                arrived, index = hook.wait(wwan0_verdict(lambda p, v, r: p == "online" and v != "online"),
                                           mark, VERDICT_TIMEOUT_S, "wwan0 out of online", run=run)
            except TimeoutError:
                s["down"] = None
            else:
                urc = urc_time(rig, log_mark)
                s.update(down=arrived - t0, urc=None if urc is None else arrived - urc,
                         verdict=hook.fields(index)[3], reason=hook.fields(index)[5])
                sent, requests = wwan0_out_bytes(lb), len(lb.probe_requests("wwan0"))
                w0 = time.monotonic()
                time.sleep(window)                            # the unregistered window itself
                s.update(bytes=wwan0_out_bytes(lb) - sent, requests=len(lb.probe_requests("wwan0")) - requests,
                         window=time.monotonic() - w0,
                         still=(lambda u: f"{u['verdict']} {u['reason']}")(run.state()["uplinks"]["wwan0"]))
            back_mark = hook.mark()
            t1 = time.monotonic()
            rig.set_registration("home")
            s["back"] = None
            if s["down"] is not None:
                try:
                    arrived, _ = hook.wait(wwan0_verdict(lambda p, v, r: v == "online"), back_mark,
                                           VERDICT_TIMEOUT_S, "wwan0 online again", run=run)
                    s["back"] = arrived - t1
                except TimeoutError:
                    pass
            s["trail"] = verdict_trail(hook, mark)
            samples.append(s)
            progress(f"registration {k + 1}/{runs}: "
                     + (f"down hook after {s['down']:.3f} s ({s['verdict']} {s['reason']}), "
                        f"{s['bytes']} B out on wwan0 in {s['window']:.1f} s"
                        if s["down"] is not None else f"not down within {VERDICT_TIMEOUT_S:g} s")
                     + (f"; online again after {s['back']:.2f} s" if s["back"] is not None else "; not back"))
            if s["down"] is not None and s["back"] is None:
                raise AgentError(f"wwan0 not online again after its registration came back\n{run.transcript()}")
        lines = [ln for ln in run.stderr().splitlines() if "modem" in ln.lower()]
    return {"samples": samples, "lines": lines[:4] + (["..."] if len(lines) > 8 else []) + lines[4:][-4:]}


# -- recovery ------------------------------------------------------------------------------

def wwan0_verdict_at(hook, since, t):
    """wwan0's verdict as the hook lines from index `since` on tell it at monotonic
    `t` (None before the first of them)."""
    with hook.cond:
        lines = [(at, f) for at, f in hook.lines[since:] if at <= t]
    verdicts = [f[3] for _, f in lines if len(f) >= 6 and f[0] == "verdict" and f[1] == "wwan0"]
    return verdicts[-1] if verdicts else None


def online_after_dial(hook, since, dial_t, timeout, run):
    """(monotonic time, how) the uplink was online on its re-dialled modem: the
    first `-> online` hook line at or after the dial (the bearer is up again the
    moment CONNECT is answered); the dial itself when wwan0 was online already
    then (a round that began before the step validated it: the rig's data path,
    a veth, never went away); (None, "") when neither within `timeout`."""
    if wwan0_verdict_at(hook, since, dial_t) == "online":
        return dial_t, "already online at the re-dial"
    t = hook.arrival_after(wwan0_verdict(lambda p, v, r: v == "online"), since, dial_t, timeout, run)
    return t, ""


def timeline(sc, run, since, log_mark, base):
    """The run's story, times from `base`: wwan0 verdict and recover hooks, the
    ladder's and the dials' AT commands, the agent's notices and warnings on
    wwan0 or modems."""
    with sc.hook.cond:
        hooks = [(t, "hook: " + " ".join(x for x in f if x)) for t, f in sc.hook.lines[since:]
                 if len(f) >= 6 and f[1] == "wwan0"]
    at = [(e["t"], f"emulator got {e['cmd']}") for e in sc.rig.log(log_mark)
          if "cmd" in e and (is_reconnect(e["cmd"]) or is_reset(e["cmd"]) or e["cmd"].startswith("ATD"))]
    agent = [(t, ln) for t, ln in list(run.lines) if t >= base and ("wwan0" in ln or "modem" in ln)
             and (": notice: " in ln or ": warning: " in ln)]
    return [f"{t - base:+8.3f} s  {what}" for t, what in sorted(hooks + at + agent)]


def ladder_run(sc, config, until_reset, recover_after, reset_after):
    """One run of the ladder on a fresh agent (see the module doc, runs A and B)."""
    lb, rig, hook = sc.lab, sc.rig, sc.hook
    run = sc.start_agent(config, primary="wwan0")
    first_path = rig.modem_path()
    res = {"kind": "B" if until_reset else "A"}
    mark, log_mark = hook.mark(), rig.log_mark()
    cut_at = time.monotonic()
    lb.cut("wwan0")
    restored = False
    try:
        left, _ = hook.wait(wwan0_verdict(lambda p, v, r: p == "online" and v != "online"), mark,
                            VERDICT_TIMEOUT_S, "wwan0 out of online after the cut", run=run)
        res["left"] = left - cut_at
        reconnect = first_command(rig, log_mark, is_reconnect, recover_after + 60, run)
        if not until_reset:
            lb.restore("wwan0")
            restored = True
        if reconnect is None:
            return res
        res["reconnect"] = reconnect["t"] - left
        step, limit = reconnect, ONLINE_AFTER_RECONNECT_S
        if until_reset:
            reset = first_command(rig, log_mark, is_reset, reset_after + 60, run)
            lb.restore("wwan0")
            restored = True
            if reset is None:
                return res
            res["reset"] = reset["t"] - left
            step, limit = reset, ONLINE_AFTER_RESET_S
            try:
                rig.wait_modem(timeout=limit, other_than=first_path)
                res["new_path"] = True
            except modemrig.RigError:
                res["new_path"] = False
        dial = first_command(rig, step["seq"], lambda c: c.startswith("ATD"), limit + 30, run)
        if dial is None:
            return res
        res["dial"] = dial["t"] - step["t"]
        online, how = online_after_dial(hook, mark, dial["t"], step["t"] + limit + 30 - time.monotonic(), run)
        res["online"] = None if online is None else online - step["t"]
        res["online_how"] = how
        res["premature"] = [f"{f[2]}→{f[3]} ({f[5]}) {t - step['t']:+.3f} s" for t, f in list(hook.lines[mark:])
                            if step["t"] <= t < dial["t"] and len(f) >= 6 and f[0] == "verdict"
                            and f[1] == "wwan0" and f[3] == "online"]
        st = run.state()["uplinks"]["wwan0"]
        res.update(recoveries=st["modem_recoveries_total"], step=st["modem_recovery_step"], penalty=st["flap_penalty"],
                   suppressed=st["suppressed"], resets=len([c for c in rig.commands(log_mark) if is_reset(c)]))
    finally:
        if not restored:
            lb.restore("wwan0")
        res["trail"] = verdict_trail(hook, mark)
        res["timeline"] = timeline(sc, run, mark, log_mark, cut_at)
    return res


def recovery_part(binary, workdir, recover_after, reset_after, ladder_runs):
    results = []
    with ModemScene(binary, workdir, "recovery") as sc:
        config = modem_config(sc.lab, wwan0={"interval": "2s", "recover-after": f"{recover_after:g}s",
                                             "reset-after": f"{reset_after:g}s"},
                              agent={"priority": "wwan0 ethernet wifi"})
        for k in range(ladder_runs):
            for until_reset in (False, True):
                res = ladder_run(sc, config, until_reset, recover_after, reset_after)
                results.append(res)
                progress(f"recovery {k + 1}/{ladder_runs} run {res['kind']}: "
                         + ", ".join(f"{key} {fmt_s(res.get(key))}" for key in
                                     ("left", "reconnect", "dial", "reset", "online") if key in res)
                         + f"; verdicts {', '.join(res['trail'])}")
    return results


# -- healthy + memory ----------------------------------------------------------------------

def pair_part(binary, workdir, settle, window):
    """Agents M (adapter active) and N (modemmanager = no) side by side; see the module doc."""
    res = {}
    with ModemScene(binary, workdir, "pair-m", verbose=0) as m, \
            ModemScene(binary, workdir, "pair-n", rig=False, verbose=0) as n:
        run_m = m.start_agent(modem_config(m.lab))
        run_n = n.start_agent(modem_config(n.lab, agent={"modemmanager": "no"}), bus=m.rig.bus_address)
        time.sleep(settle)                                        # settling after start-up itself
        runs = {"M": run_m, "N": run_n}
        marks = {"M": m.hook.mark(), "N": n.hook.mark()}
        log_mark = m.rig.log_mark()
        rec0 = run_m.state()["uplinks"]["wwan0"]["modem_recoveries_total"]
        samplers = {k: Sampler(r.pid, MEMORY_EVERY_S) for k, r in runs.items()}
        cpu0 = {k: (proc_stat_cpu(r.pid), tree_cpu(r.pid)) for k, r in runs.items()}
        w0, wall0 = time.monotonic(), time.time()
        for s in samplers.values():
            s.start()
        time.sleep(window)                                        # the observation window itself
        cpu1 = {k: (proc_stat_cpu(r.pid), tree_cpu(r.pid)) for k, r in runs.items()}
        wall = time.monotonic() - w0
        for s in samplers.values():
            s.stop()
        res["wall"] = wall
        res["cpu_ticks"] = {k: cpu1[k][0] - cpu0[k][0] for k in runs}
        res["cpu_sched"] = {k: cpu1[k][1] - cpu0[k][1] for k in runs}
        res["memory"] = {k: proc_memory(r.pid) for k, r in runs.items()}
        res["memory_max"] = {k: (max((x[0] for x in s.samples), default=None),
                                 max((x[1] for x in s.samples), default=None), len(s.samples))
                             for k, s in samplers.items()}
        states = {k: r.state() for k, r in runs.items()}
        res["modem"] = {k: states[k]["uplinks"]["wwan0"]["modem_equipment_id"] for k in runs}
        res["verdicts"] = {k: " ".join(f"{i}={u['verdict']}" for i, u in states[k]["uplinks"].items())
                           for k in runs}
        res["recoveries"] = (rec0, states["M"]["uplinks"]["wwan0"]["modem_recoveries_total"])
        res["rsrp"] = states["M"]["uplinks"]["wwan0"]["modem_rsrp_dbm"]
        commands = m.rig.commands(log_mark)
        res["ladder_commands"] = [c for c in commands if is_reconnect(c) or is_reset(c)]
        res["at_commands"] = len(commands)
        res["signal_commands"] = len([c for c in commands if c.startswith(("AT+CESQ", "AT+CSQ"))])
        res["trails"] = {k: verdict_trail(sc.hook, marks[k]) for k, sc in (("M", m), ("N", n))}
        res["primary_changes"] = {k: [e.short for e in runs[k].events() if e.event == "primary" and e.t >= wall0]
                                  for k in runs}
        res["n_modem_lines"] = [ln for ln in run_n.stderr().splitlines() if "modem" in ln.lower()][:5]
        res["m_lines"] = [ln for ln in run_m.stderr().splitlines() if "modem" in ln.lower()][-8:]
    return res


# -- the table ---------------------------------------------------------------------------------

def table(res, args):
    rows = []

    def section(title):
        rows.append((f"**{title}**", "", ""))

    def row(figure, value, target="–"):
        rows.append((figure, value, target))

    def stats(xs):
        return (f"{fmt_s(median(xs))} / {fmt_s(p95(xs))} / {fmt_s(max(xs))}" if xs else NONE)

    reg = res.get("registration", {}).get("samples", [])
    if "registration" in res:
        section(f"Registration lost → wwan0 down (defaults; wwan0 a metered backup, eth0 primary), "
                f"{len(reg)} runs")
        down = [s["down"] for s in reg if s.get("down") is not None]
        missed = len(reg) - len(down)
        row(f"`searching` set → verdict hook started: median / p95 / max (n={len(down)}"
            + (f"; {missed} not down within {VERDICT_TIMEOUT_S:g} s" if missed else "") + ")",
            stats(down), "median ≤ 2 s")
        row("each run", ", ".join(fmt_s(s.get("down")) if s.get("down") is not None else "not down" for s in reg))
        row("emulator's registration URC → hook started (ModemManager + agent): median / p95 / max",
            stats([s["urc"] for s in reg if s.get("urc") is not None]))
        got = [f"{s['verdict']} {s['reason']}" for s in reg if s.get("down") is not None]
        row("verdict and reason (runs)", ", ".join(f"{g} ({got.count(g)})" for g in sorted(set(got))) or NONE,
            "down modem-not-registered")
        sent = [s["bytes"] for s in reg if "bytes" in s]
        windows = [s["window"] for s in reg if "window" in s]
        row(f"wwan0 bytes out on the wire while unregistered (nftables local_out; {len(sent)} windows of "
            f"{median(windows) or 0:.1f} s): total, max of a window",
            f"{sum(sent)} B, {max(sent, default=0)} B" if sent else NONE, "0 B")
        row("wwan0 probe requests its upstream logged while unregistered (total)",
            str(sum(s["requests"] for s in reg if "requests" in s)) if sent else NONE, "0")
        still = [s["still"] for s in reg if "still" in s]
        row("state file at the end of each window", ", ".join(f"{x} ({still.count(x)})" for x in sorted(set(still)))
            or NONE, "down modem-not-registered")
        row("`home` set → `online` hook started (one round): median / p95 / max",
            stats([s["back"] for s in reg if s.get("back") is not None]))
        odd = [", ".join(s["trail"]) or "none" for s in reg if len(s["trail"]) != 2
               or not s["trail"][0].startswith("online→down") or not s["trail"][1].startswith("down→online")]
        row("runs whose verdicts were not exactly online→down, down→online",
            f"{len(odd)}" + (f": {'; '.join(odd)}" if odd else ""), "0")

    if "recovery" in res:
        section(f"Recovery ladder (wwan0 primary, `interval = 2s`, recover-after {args.recover_after:g} s, "
                f"reset-after {args.reset_after:g} s; upstream cut with the carrier up)")
        for r in res["recovery"]:
            kind = r["kind"]
            row(f"run {kind}: cut → wwan0 left online (hook)", fmt_s(r.get("left")))
            row(f"run {kind}: left online → first reconnect command (AT+CGACT=0 / ATH)",
                fmt_s(r.get("reconnect")) if r.get("reconnect") is not None else
                f"not seen within {args.recover_after + 60:g} s",
                f"≤ {args.recover_after + STEP_SLACK_S:g} s")
            if kind == "B":
                row("run B: left online → reset (AT+CFUN=15), upstream cut until then",
                    fmt_s(r.get("reset")) if r.get("reset") is not None else
                    f"not seen within {args.reset_after + 60:g} s", f"≈ {args.reset_after:g} s")
                if "new_path" in r:
                    row("run B: the modem re-enumerated (new object path)", "yes" if r["new_path"] else "no", "yes")
            step = "reconnect" if kind == "A" else "reset"
            if r.get(step) is not None:
                row(f"run {kind}: {step} → the modem dialled again (ATD)",
                    fmt_s(r["dial"]) if r.get("dial") is not None else "not seen")
                row(f"run {kind}: {step} → wwan0 online on the re-dialled modem"
                    + (" (upstream restored at the reconnect)" if kind == "A" else " (upstream restored at the reset)"),
                    (fmt_s(r["online"]) + (f" ({r['online_how']})" if r.get("online_how") else ""))
                    if r.get("online") is not None else "not online", "≤ 30 s" if kind == "A" else "≤ 60 s")
                if "premature" in r:
                    row(f"run {kind}: `→ online` hooks between the {step} and the re-dial",
                        f"{len(r['premature'])}" + (f": {', '.join(r['premature'])}" if r["premature"] else ""),
                        "0")
            if "recoveries" in r:
                row(f"run {kind}: state file RECOVERIES / RECOVERY-STEP; AT+CFUN=15 sent",
                    f"{r['recoveries']} / {r['step']}; {r['resets']}",
                    "1 / reconnect; 0" if kind == "A" else "2 / reset; 1")
            row(f"run {kind}: wwan0 verdict changes", ", ".join(r["trail"]) or NONE)
            if "penalty" in r:
                row(f"run {kind}: wwan0 flap penalty, suppressed (state file, at the end)",
                    f"{r['penalty']}, {r['suppressed']}")

    p = res.get("pair")
    if p:
        hours = p["wall"] / 3600
        if "healthy" in res.get("selected", ()):
            section(f"Healthy modem, {p['wall'] / 60:.1f} min after {args.settle:g} s: agent M (adapter active) "
                    f"beside agent N (`modemmanager = no`), each in its own lab")
            r0, r1 = p["recoveries"]
            row("recovery steps in the window: RECOVERIES (state file) before → after; reconnect/reset commands",
                f"{r0} → {r1}; {len(p['ladder_commands'])}" + (f" ({', '.join(p['ladder_commands'])})"
                                                               if p["ladder_commands"] else ""), "0")
            row("wwan0 verdict changes in the window, M / N",
                f"{len(p['trails']['M'])} / {len(p['trails']['N'])}"
                + "".join(f"; {k}: {', '.join(t)}" for k, t in p["trails"].items() if t), "0")
            row("verdicts at the end, M; N", f"M: {p['verdicts']['M']}; N: {p['verdicts']['N']}")
            pc = p["primary_changes"]
            row("primary changes in the window, M / N", f"{len(pc['M'])} / {len(pc['N'])}"
                + "".join(f"; {k}: {', '.join(c)}" for k, c in pc.items() if c), "0")
            row("wwan0's modem in the state file, M / N; M's RSRP", f"{p['modem']['M']} / {p['modem']['N']}; "
                f"{p['rsrp']} dBm", f"{IMEI} / -")
            for key, what in (("cpu_ticks", "utime+stime"), ("cpu_sched", "schedstat run time")):
                c = p[key]
                row(f"CPU ({what}): M, N in {p['wall']:.0f} s",
                    f"M {c['M']:.3f} s = {c['M'] / hours:.3f} s/h; N {c['N']:.3f} s = {c['N'] / hours:.3f} s/h")
                row(f"CPU added by the adapter (M − N, {what})", f"{(c['M'] - c['N']) / hours:+.3f} s/h",
                    "≤ 0.1 s/h")
            row("AT commands ModemManager sent the emulator in the window (signal reads)",
                f"{p['at_commands']} ({p['signal_commands']}) = {p['at_commands'] / (p['wall'] / 60):.1f} a minute")
        if "memory" in res.get("selected", ()):
            when = ("the end of the healthy window" if "healthy" in res["selected"]
                    else f"the end of a {p['wall']:.0f} s window")
            build = str(args.binary_used)
            build = "release" if "/release/" in build else "debug" if "/debug/" in build else "this"
            section(f"Resident memory after settling, at {when} ({build} build), M (adapter active) vs N "
                    f"(`modemmanager = no`)")
            mm, nn = p["memory"]["M"], p["memory"]["N"]
            row("VmRSS: M, N; growth M − N", f"{mm[0]} KiB, {nn[0]} KiB; {mm[0] - nn[0]:+d} KiB", "≤ 1024 KiB")
            row("Private_Dirty: M, N; growth M − N", f"{mm[1]} KiB, {nn[1]} KiB; {mm[1] - nn[1]:+d} KiB",
                "≤ 1024 KiB")
            mx = p["memory_max"]
            row(f"maxima over samples every {MEMORY_EVERY_S:g} s (VmRSS, Private_Dirty): M; N",
                f"M {mx['M'][0]}, {mx['M'][1]} KiB; N {mx['N'][0]}, {mx['N'][1]} KiB (n={mx['M'][2]})")

    lines = ["| figure | value | target |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def evidence(res):
    """Agent log lines worth reading beside the table (stderr of the runs)."""
    out = []
    if res.get("registration", {}).get("lines"):
        out.append("registration: agent stderr lines naming modems (first and last):")
        out += [f"    {ln}" for ln in res["registration"]["lines"]]
    for r in res.get("recovery", []):
        if r.get("timeline"):
            out.append(f"recovery run {r['kind']}, from the cut (hook lines, emulator's commands, agent's notices):")
            out += [f"    {ln}" for ln in r["timeline"]]
    p = res.get("pair")
    if p and p.get("m_lines"):
        out.append("agent M (adapter active), its last stderr lines naming modems:")
        out += [f"    {ln}" for ln in p["m_lines"]]
    if p and p.get("n_modem_lines"):
        out.append("agent N (modemmanager = no), stderr lines naming modems:")
        out += [f"    {ln}" for ln in p["n_modem_lines"]]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--runs", type=int, help="registration losses (10)")
    ap.add_argument("--unregistered-seconds", type=float, help="wire-byte window per loss, s (5)")
    ap.add_argument("--recover-after", type=float, help="wwan0's recover-after, s, at least 10 (120: the default)")
    ap.add_argument("--reset-after", type=float, help="wwan0's reset-after, s, above recover-after (600: the default)")
    ap.add_argument("--ladder-runs", type=int, help="pairs of ladder runs (reconnect, reset) (1)")
    ap.add_argument("--healthy-minutes", type=float, help="healthy window, min (30)")
    ap.add_argument("--settle", type=float, help="wait after start-up before the healthy window, s (60)")
    ap.add_argument("--skip", default="", help="comma list of " + ",".join(PARTS))
    args = parse_bench_args(ap, "--smoke", "every part very short, all in parallel (CI)", SMOKE, FULL)
    skip = skipped_parts(ap, args, PARTS)
    if args.runs < 1 or args.ladder_runs < 1 or args.unregistered_seconds <= 0 or args.settle < 0 \
            or args.healthy_minutes <= 0:
        ap.error("--runs and --ladder-runs must be at least 1; --unregistered-seconds and --healthy-minutes "
                 "above 0; --settle at least 0")
    if args.recover_after < 10 or args.recover_after != int(args.recover_after) \
            or args.reset_after <= args.recover_after or args.reset_after != int(args.reset_after):
        ap.error("--recover-after: whole seconds, at least 10 (the agent's bound); "
                 "--reset-after: whole seconds, above --recover-after")
    problem = modemrig.unavailable_reason()
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return 1
    started = lab_bench_header(
        args, "uplinkd cellular uplinks with the real ModemManager (Tests/bench/bench_modem.py)",
        "very short windows, single runs, recover-after/reset-after at the agent's minimum",
        config=("the failover lab's (built-in probes, `dns = ROUTER`) + `[interface wwan0] modem = IMEI`; "
                "recovery adds `interval = 2s`, recover-after, reset-after and `[agent] priority = wwan0 "
                "ethernet wifi`; hooks: 05-fifo, 10-record, hooks/50-route-failover"))
    if started is None:
        return 1
    binary, header = started
    args.binary_used = binary
    mm_version = subprocess.run([modemrig.labmod.tool("ModemManager"), "--version"], capture_output=True,
                                text=True).stdout.splitlines()
    plugin = inspect.signature(modemrig.ModemRig).parameters["plugin"].default
    header.insert(5, f"- ModemManager: {mm_version[0] if mm_version else '?'} (test mode, plugin {plugin}, "
                     f"the emulated AT modem Tests/integration/atmodem.py, a private bus)")

    parts = Parts()
    res, errors, attempt = parts.results, parts.errors, parts.attempt
    res["selected"] = [p for p in PARTS if p not in skip]
    window = args.healthy_minutes * 60 if "healthy" not in skip else args.settle
    with tempfile.TemporaryDirectory(prefix="bench-modem-") as tmp:
        workdir = Path(tmp)
        jobs, serial = [], []
        if "healthy" not in skip or "memory" not in skip:
            jobs.append(("pair", lambda: pair_part(binary, workdir, args.settle, window)))
        if "registration" not in skip:
            serial.append(("registration", lambda: registration_part(binary, workdir, args.runs,
                                                                     args.unregistered_seconds)))
        if "recovery" not in skip:
            serial.append(("recovery", lambda: recovery_part(binary, workdir, args.recover_after,
                                                             args.reset_after, args.ladder_runs)))
        reg_s = args.runs * (args.unregistered_seconds + 5) + 30
        ladder_s = args.ladder_runs * (args.recover_after + args.reset_after + 120)
        pair_s = args.settle + window + 30 if jobs else 0
        serial_s = (reg_s if "registration" not in skip else 0) + (ladder_s if "recovery" not in skip else 0)
        progress(f"about {max(pair_s, serial_s if not args.smoke else max(reg_s, ladder_s)) / 60:.0f} min; "
                 f"{binary}" + (" (smoke: all parts in parallel)" if args.smoke else ""))
        threads = []
        try:
            if args.smoke:
                jobs += serial
                serial = []
            for name, fn in jobs:
                progress(f"{name}: started in a lab of its own")
                t = threading.Thread(target=attempt, args=(name, fn), daemon=True)
                t.start()
                threads.append(t)
            for name, fn in serial:
                progress(f"{name}: started")
                attempt(name, fn)
            for t in threads:
                while t.is_alive():
                    t.join(timeout=1.0)
        except KeyboardInterrupt:
            print("bench: interrupted", file=sys.stderr)
            return 130
    print("\n".join(header))
    print()
    print(table(res, args))
    print()
    print("Method: see the docstring of Tests/bench/bench_modem.py. Every figure above was produced by the "
          "command in the header. Times run from just before the action (the emulator's control call, the "
          "`nft` command of the cut) or from the emulator's stamp of the command it received, to the "
          "arrival of the hook's line in the FIFO (CLOCK_MONOTONIC throughout). s/h = CPU seconds per hour "
          "of the window.")
    extra = evidence(res)
    if extra:
        print()
        print("Evidence:")
        print("\n".join(extra))
    for err in errors:
        print(f"\nNOT MEASURED, {err}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
