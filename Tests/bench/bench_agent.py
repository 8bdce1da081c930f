#!/usr/bin/env python3
"""Benchmark of `uplinkd run` (the agent) in the namespace lab (prints figures).

    sudo python3 Tests/bench/bench_agent.py [PATH_TO_UPLINKD] [--flips N]
        [--idle-seconds S] [--iface wlan0|eth0] [--gap SECONDS] [--fast-runs N]
        [--default-runs N] [--idle-profile default|fast|both]
        [--skip carrier,cut,default,idle]

PATH defaults to $UPLINKD, else .build/release/uplinkd if present, else
.build/debug/uplinkd (the output says which). Lab probes only: every
configuration says `default-probes = no` and probes http://203.0.113.80/.

How "hook started" is timed: the hook is one POSIX sh builtin printf of the
UPLINK_* variables into a FIFO that this process keeps open; a reader thread
stamps each line with CLOCK_MONOTONIC on arrival. So a latency runs from
time.monotonic() just before the `ip`/`nft` command is started to the moment the
hook's shell has started and written its line (fork/exec of /bin/sh included).

1. Carrier loss -> hook started. `ip -n UPSTREAM link set PEER down` on
   --iface (default wlan0, not the primary), then the verdict hook's line
   (`verdict IFACE online -> down`) is awaited; the peer is set up again and the
   return to online awaited. Each change waits --gap (1.2 s) after the previous
   one: the kernel's linkwatch delays a carrier change that follows another within
   1 s. eth0 (ifindex equal to its peer's) is also "non-urgent" for linkwatch and
   reported up to 1 s late; hence wlan0 as the default.

2. Upstream cut with carrier up -> primary moved. eth0 (primary) and wlan0 both
   online; `nft` drops everything to 203.0.113.80 in eth0's upstream namespace;
   the time to the hook line `primary eth0 -> wlan0` is measured. A fresh agent
   per run; the cut falls at a random moment, uniform over [0, interval) after
   the agent's first eth0 round ended. Two profiles (all other keys at defaults):
     (a) default:  [agent] interval 5m, suspect-interval 1s,
                   failures-to-leave-online 2; [check] timeout 5s
     (b) fast:     [agent] interval = 1s, suspect-interval = 200ms,
                   failures-to-leave-online = 2; [check] timeout = 800ms
   Hold-down stays at its default (it only delays a move TO a recovered uplink).
   With the default 5-minute interval the time is dominated by where in the
   interval the cut falls: detection = (wait for the next scheduled round,
   uniform over [0, interval)) + D, where D (the two failing rounds, the suspect
   pause and the decision) is measured per run from the scheduled round (end of
   the previous round + interval, taken from the agent's debug log). Printed:
   the measured totals, D, and expected value interval/2 + median D and bound
   interval + max D. Whatever the phase, a default-profile run lasts about
   interval + D (~5 min 11 s): the agent's first round is at start-up and the
   next one 5 minutes later, so --default-runs 3 takes ~16 min (0 skips it).

3. Idle CPU and memory: the agent with the three lab uplinks (eth0 online,
   wlan0 captive portal-302, wwan0 refused), after its first rounds, for
   --idle-seconds (default 600): utime+stime from /proc/PID/stat before and after
   (CPU seconds and CPU s/hour extrapolated); VmRSS and the sum of Private_Dirty
   from /proc/PID/smaps_rollup at the end. Logging at the default level (no -v).
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchstats import median, summary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import lab as labmod  # noqa: E402
from agentrun import (AgentError, AgentRun, config_text, proc_memory,  # noqa: E402
                      proc_stat_cpu)

# The profiles leave hold-down at its default: it only delays a move TO a preferred
# uplink that recovered, never the measured move away from eth0 (and start-up is not
# a recovery, so eth0 becomes primary as soon as its first round validates).
# The 5-minute setting (uplinkd's defaults before per-class settings), written out:
# uplinkd's own defaults now differ per class of uplink.
DEFAULT_PROFILE = {"agent": {"interval": "5m", "suspect-interval": "1s", "failures-to-leave-online": "2"},
                   "timeout": None}
FAST_PROFILE = {"agent": {"interval": "1s", "suspect-interval": "200ms",
                          "failures-to-leave-online": "2"},
                "timeout": "800ms"}
PROFILE_INTERVAL_S = {"default": 300.0, "fast": 1.0}
PROFILE_TEXT = {
    "default": "the 5-minute setting: interval 5m, suspect-interval 1s, failures-to-leave-online 2; "
               "[check] timeout 5s",
    "fast": "interval 1s, suspect-interval 200ms, failures-to-leave-online 2, timeout 800ms",
}
PROFILES = {"default": DEFAULT_PROFILE, "fast": FAST_PROFILE}


def has_run(binary: Path) -> bool:
    """Whether this build knows `uplinkd run` (a stale release build may not)."""
    try:
        out = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=10)
    except OSError:
        return False
    return "uplinkd run" in out.stdout + out.stderr


def default_binary():
    """(binary, note): $UPLINKD, else the release build if it has `run`, else debug."""
    if os.environ.get("UPLINKD"):
        return Path(os.environ["UPLINKD"]), ""
    release = labmod.REPO_ROOT / ".build" / "release" / "uplinkd"
    debug = labmod.REPO_ROOT / ".build" / "debug" / "uplinkd"
    if release.is_file() and has_run(release):
        return release, ""
    why = "has no `run` command (stale build)" if release.is_file() else "is missing"
    return debug, (f"NOTE: {release} {why}; using the DEBUG build, "
                   f"so CPU and memory figures are pessimistic")


def lab_binary(path, tools=(), lab_problem=None, hint=""):
    """(binary, note) for a benchmark of `uplinkd run` in the lab: `path` (its
    command-line argument) if given, else default_binary(), resolved. None, with
    the reason on stderr, when it has no `run` (`hint`: how to build one) or the
    lab cannot run it (lab.preflight with `tools`, then lab_problem() if given)."""
    binary, note = (Path(path), "") if path else default_binary()
    binary = binary.resolve()
    if not os.access(binary, os.X_OK) or not has_run(binary):
        print(f"bench: no uplinkd with `run` at {binary}{hint}", file=sys.stderr)
        return None
    if note:
        print(note, file=sys.stderr)
    problem = labmod.preflight(binary, tools=tools) or (lab_problem() if lab_problem else None)
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return None
    return binary, note


def profile_config(name: str, **options) -> str:
    """The configuration of a profile; options go to config_text (probes=...)."""
    p = PROFILES[name]
    return config_text(p["agent"], timeout=p["timeout"], defaults=False, **options)


class Fifo:
    """A FIFO the hook writes one line per run into; arrivals stamped (monotonic)."""

    def __init__(self, path: Path):
        self.path = path
        os.mkfifo(path, 0o600)
        self.fd = os.open(path, os.O_RDWR)      # RDWR: never EOF, never blocks a writer
        self.lines = []                          # (monotonic, [fields])
        self.cond = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def hook(self) -> str:
        return ("#!/bin/sh\n"
                "printf '%s %s %s %s %s\\n' \"$UPLINK_EVENT\" \"$UPLINK_INTERFACE\" "
                f"\"$UPLINK_PREVIOUS\" \"$UPLINK_VERDICT\" \"$UPLINK_PRIMARY\" > '{self.path}'\n")

    def _pump(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                return
            now = time.monotonic()
            buf += chunk
            *done, buf = buf.split(b"\n")
            with self.cond:
                self.lines += [(now, ln.decode().split(" ")) for ln in done]
                self.cond.notify_all()

    def mark(self) -> int:
        with self.cond:
            return len(self.lines)

    def wait(self, pred, since: int, timeout: float, what: str, run=None):
        """First line after index `since` with pred(fields): (arrival, index).
        Gives up early when `run` (the agent) has exited."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i in range(since, len(self.lines)):
                    if pred(self.lines[i][1]):
                        return self.lines[i][0], i
                left = deadline - time.monotonic()
                dead = run is not None and not run.running()
                if left <= 0 or dead:
                    got = [" ".join(f) for _, f in self.lines[since:]]
                    raise TimeoutError(f"{what}: not seen within {timeout}s "
                                       f"{'(agent exited)' if dead else ''}; hook lines: {got}"
                                       + (f"\n{run.transcript()}" if run is not None else ""))
                self.cond.wait(min(left, 0.5))


def wait_line(run, needle, timeout):
    """Arrival time of the agent's first stderr line containing needle."""
    deadline = time.monotonic() + timeout
    while True:
        for t, line in list(run.lines):
            if needle in line:
                return t
        if time.monotonic() >= deadline:
            raise AgentError(f"no stderr line with {needle!r} within {timeout}s\n{run.transcript()}")
        time.sleep(0.01)


def verdict_line(iface, verdict):
    return lambda f: f[0] == "verdict" and f[1] == iface and f[3] == verdict


def primary_line(primary):
    return lambda f: f[0] == "primary" and f[4] == primary


class Bench:
    def __init__(self, lb, binary, workdir: Path):
        self.lab, self.binary, self.dir = lb, binary, workdir
        self.fifo = Fifo(workdir / "hook.fifo")
        self.seq = 0

    def agent(self, config, verbose=2) -> AgentRun:
        self.seq += 1
        run = AgentRun(self.lab, self.dir / f"agent{self.seq}", config, binary=self.binary,
                       record=False, hooks={"10-fifo": self.fifo.hook()}, verbose=verbose)
        return run.start(timed=True)

    # -- 1 ---------------------------------------------------------------------
    def flip_carrier(self, run, iface, flips, gap, down, up, timeout=15.0, jitter=0.0):
        """Sets the carrier of iface's upstream peer down and up again `flips` times,
        each change `gap` seconds after the previous one (each loss a further uniform
        [0, jitter) later: a random phase for tools that poll), and waits for the hook
        lines down(fields) and up(fields) after each. `run` (an AgentRun or anything
        with its running()/transcript()) is already started and settled. Returns three
        lists of seconds: down line from before `ip` started, from after it
        returned, and up line from before `ip` started."""
        role, peer = self.lab.peer_of(iface)
        before, after, back = [], [], []
        last_change = time.monotonic()
        for _ in range(flips):
            for carrier in (False, True):
                pause = last_change + gap - time.monotonic()
                if not carrier and jitter > 0:
                    pause = max(pause, 0.0) + random.uniform(0.0, jitter)
                if pause > 0:
                    time.sleep(pause)          # linkwatch pacing, not a condition wait
                since = self.fifo.mark()
                t0 = time.monotonic()
                self.lab.ip(role, "link", "set", peer, "up" if carrier else "down")
                t1 = last_change = time.monotonic()
                arrived, _ = self.fifo.wait(up if carrier else down, since, timeout,
                                            f"{iface} carrier {carrier}", run=run)
                if carrier:
                    back.append(arrived - t0)
                else:
                    before.append(arrived - t0)
                    after.append(arrived - t1)
        return before, after, back

    def carrier(self, iface, flips, gap):
        role, peer = self.lab.peer_of(iface)
        start = self.fifo.mark()
        run = self.agent(profile_config("default"))
        try:
            self.fifo.wait(primary_line("eth0"), start, 30, "start-up primary eth0", run=run)
            self.fifo.wait(verdict_line(iface, "online"), start, 30, f"{iface} online", run=run)
            before, after, up = self.flip_carrier(run, iface, flips, gap,
                                                  verdict_line(iface, "down"),
                                                  verdict_line(iface, "online"))
        finally:
            rc = run.stop()
            run.close()
        print(f"1. carrier loss -> verdict hook started: {iface} (peer {peer} in {role}), "
              f"{len(before)} flips, {gap}s between changes")
        print(summary("carrier-down, from before `ip` started", before))
        print(summary("carrier-down, from after `ip` returned", after))
        print(summary("carrier-up -> online hook (includes a probe)", up))
        print(f"  (agent exit status on TERM: {rc})")

    # -- 2 ---------------------------------------------------------------------
    def random_cut(self, run, interval, needle, moved, cut, restore, what, timeout=None):
        """The cut at a random phase: after the first stderr line of `run` containing
        `needle` (the end of a probe round), waits a uniform moment in [0, interval),
        calls cut(), waits for the hook line moved(fields) (at most `timeout`, default
        interval + 60 s), then restore(). Returns (cut -> moved, D, phase) in seconds:
        D runs from the round scheduled after the cut (end of the last round before it
        + interval; the cut itself if later) to the move, phase from the end of that
        round to the cut."""
        round_end = wait_line(run, needle, 10)
        cut_at = round_end + random.uniform(0.0, interval)
        while True:                                  # a sleep until a chosen moment
            left = cut_at - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(left, 1.0))
        ends = [t for t, ln in list(run.lines) if needle in ln]
        last_end = ends[-1]                          # the round before the cut
        since = self.fifo.mark()
        t0 = time.monotonic()
        cut()
        try:
            arrived, _ = self.fifo.wait(moved, since, timeout or interval + 60, what, run=run)
        finally:
            restore()
        scheduled = last_end + interval
        return arrived - t0, arrived - max(scheduled, t0), t0 - last_end

    def cut_run(self, profile):
        interval = PROFILE_INTERVAL_S[profile]
        since = self.fifo.mark()
        run = self.agent(profile_config(profile))
        try:
            self.fifo.wait(primary_line("eth0"), since, 30, "start-up primary eth0", run=run)
            self.fifo.wait(verdict_line("wlan0", "online"), since, 30, "wlan0 online", run=run)
            return self.random_cut(run, interval, "round on eth0: ", primary_line("wlan0"),
                                   lambda: self.lab.blackhole("inet"),
                                   lambda: self.lab.unblackhole("inet"),
                                   "primary eth0 -> wlan0")
        finally:
            run.stop()
            run.close()

    def cut(self, profile, runs):
        interval = PROFILE_INTERVAL_S[profile]
        totals, ds, phases = [], [], []
        for _ in range(runs):
            total, d, ph = self.cut_run(profile)
            totals.append(total)
            ds.append(d)
            phases.append(ph)
        print(f"2{'a' if profile == 'default' else 'b'}. upstream cut (carrier up) -> primary hook, "
              f"profile {profile} ({PROFILE_TEXT[profile]}), {runs} runs")
        print(f"  cut at a uniform moment in [0, {interval:g}) s after an eth0 round "
              f"(= the probe interval); phases used: "
              + ", ".join(f"{x:.2f}" for x in phases) + " s")
        print(summary("measured: cut -> primary moved", totals, "s"))
        print(summary("D: scheduled round -> primary moved", ds, "s"))
        print(f"  expected for a cut at a random moment: interval/2 + median D = "
              f"{interval / 2 + median(ds):.2f} s; bound interval + max D = "
              f"{interval + max(ds):.2f} s")

    # -- 3 ---------------------------------------------------------------------
    def idle(self, profile, seconds, portal):
        portal.set_mode("portal-302")
        since = self.fifo.mark()
        run = self.agent(profile_config(profile), verbose=0)
        try:
            self.fifo.wait(primary_line("eth0"), since, 30, "start-up primary eth0", run=run)
            self.fifo.wait(verdict_line("wlan0", "captive"), since, 30, "wlan0 captive", run=run)
            self.fifo.wait(verdict_line("wwan0", "limited"), since, 30, "wwan0 limited", run=run)
            pid = run.pid
            c0, w0 = proc_stat_cpu(pid), time.monotonic()
            time.sleep(seconds)                      # the measurement window itself
            c1, w1 = proc_stat_cpu(pid), time.monotonic()
            rss, dirty = proc_memory(pid)
            state = run.state()
        finally:
            run.stop()
            run.close()
            portal.set_mode("internet")
        cpu, wall = c1 - c0, w1 - w0
        verdicts = " ".join(f"{n}={u['verdict']}" for n, u in state["uplinks"].items())
        print(f"3. idle, profile {profile}, {wall:.0f} s window ({verdicts}, primary {state['primary']})")
        print(f"  CPU {cpu:.2f} s (utime+stime, {os.sysconf('SC_CLK_TCK')} Hz ticks) = "
              f"{cpu * 3600 / wall:.2f} CPU s/hour; VmRSS {rss} KiB; Private_Dirty {dirty} KiB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", nargs="?", default=None)
    ap.add_argument("--flips", type=int, default=20)
    ap.add_argument("--iface", default="wlan0", choices=["wlan0", "eth0"])
    ap.add_argument("--gap", type=float, default=1.2)
    ap.add_argument("--fast-runs", type=int, default=7)
    ap.add_argument("--default-runs", type=int, default=3)
    ap.add_argument("--idle-seconds", type=float, default=600)
    ap.add_argument("--idle-profile", default="default", choices=["default", "fast", "both"])
    ap.add_argument("--skip", default="", help="comma list of carrier,cut,default,idle")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    skip = set(filter(None, args.skip.split(",")))
    if args.flips < 1 or args.fast_runs < 1 or args.default_runs < 0:
        ap.error("--flips and --fast-runs must be at least 1, --default-runs at least 0")
    binary, note = (Path(args.binary), "") if args.binary else default_binary()
    problem = labmod.preflight(binary)
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return 1
    build = "release" if "/release/" in str(binary.resolve()) else \
        "debug" if "/debug/" in str(binary.resolve()) else "unknown build"
    print(f"uplinkd run benchmark: {binary} ({build}), {os.cpu_count()} CPUs")
    if note:
        print(note)
    if not has_run(binary):
        print(f"bench: {binary} has no `run` command", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp, labmod.Lab() as lb:
        lb.serve("inet", "internet")
        portal = lb.serve("portal", "internet")
        bench = Bench(lb, binary, Path(tmp))
        try:
            if "carrier" not in skip:
                bench.carrier(args.iface, args.flips, args.gap)
            if "cut" not in skip:
                bench.cut("fast", args.fast_runs)
            if "default" not in skip and args.default_runs > 0:
                bench.cut("default", args.default_runs)
            if "idle" not in skip:
                for profile in (["default", "fast"] if args.idle_profile == "both"
                                else [args.idle_profile]):
                    bench.idle(profile, args.idle_seconds, portal)
        except (AgentError, TimeoutError, labmod.LabError) as exc:
            print(f"bench: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("bench: interrupted", file=sys.stderr)
            return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
