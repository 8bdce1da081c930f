"""`uplinkd wait-online` against a running agent in the network-namespace lab:
it waits for the agent's state file to say the wanted uplinks are
online, exits 1 naming what is missing when its time is up, never trusts the facts
of an agent that stopped or died, and refuses usage mistakes with 64.

Run as root: sudo python3 -m pytest -v Tests/integration/test_wait_online.py
(the usage and hand-written-state tests at the end need neither root nor the lab).

wait-online runs outside the lab: it only reads the state file and asks whether
the agent's process exists. Every wait is for a condition with a deadline; the
short `--timeout`s are wait-online's own, and the tests check it took at least
that long before giving up.
"""

import os
import signal
import subprocess
import time

import pytest

from agentrun import AgentError, AgentRun, config_text, uplink_is
from pytesthelp import fail, ok, require_binary

SETTLE_S = 15           # first verdicts with a 1 s probe time limit
EXIT_S = 20             # a waiting wait-online to notice what it waits for


# -- helpers -------------------------------------------------------------------

def wait_online(state, *args, timeout=30):
    """Runs `uplinkd wait-online --state STATE ARGS...` to its end:
    (CompletedProcess, seconds it took)."""
    argv = [str(require_binary()), "wait-online", "--state", str(state), *map(str, args)]
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    return proc, time.monotonic() - start


@pytest.fixture
def waiters():
    """start(state, *args) -> a running `wait-online` (Popen); all killed at teardown."""
    started = []

    def start(state, *args):
        argv = [str(require_binary()), "wait-online", "--state", str(state), *map(str, args)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


@pytest.fixture
def agents(tmp_path):
    """make(lab, name, state=None, config=None) -> an AgentRun NOT yet started (call
    .start()), its files in tmp_path/name, its state file `state` if given (so a
    second agent can take over the first one's file). Closed at teardown."""
    made = []

    def make(lb, name="agent", state=None, config=None):
        try:
            run = AgentRun(lb, tmp_path / name, config or config_text())
        except AgentError as exc:
            pytest.fail(str(exc), pytrace=False)
        if state is not None:
            run.state_path = state
        made.append(run)
        return run

    yield make
    for run in made:
        run.close()


def exited(run, proc, what, timeout=EXIT_S):
    """Waits (bounded) for a waiting wait-online to end; its (exit status, stderr)."""
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=10)
        fail(run, f"wait-online {' '.join(proc.args[2:])} did not return within {timeout}s after {what}")
    return proc.returncode, err


def still_waiting(run, proc, what):
    if proc.poll() is not None:
        _, err = proc.communicate()
        fail(run, f"wait-online {' '.join(proc.args[2:])} returned {proc.returncode} while {what} "
                  f"(it must still wait): {err!r}")


def timed_out(run, proc_elapsed, limit_s, missing):
    """The one-line timeout report: exit 1, not before the limit, saying `missing`."""
    proc, elapsed = proc_elapsed
    want = f"uplinkd: wait-online: timed out after {limit_s}: {missing}\n"
    if (proc.returncode, proc.stderr) != (1, want) or proc.stdout:
        fail(run, f"wait-online {' '.join(proc.args[2:])}: exit {proc.returncode}, stderr {proc.stderr!r}, "
                  f"stdout {proc.stdout!r}; expected exit 1 and {want!r}")
    limit = float(limit_s.split()[0])
    if elapsed < limit:
        fail(run, f"wait-online gave up after {elapsed:.2f}s, before its {limit_s} limit")


def satisfied(run, proc_elapsed):
    proc, _ = proc_elapsed
    if (proc.returncode, proc.stdout, proc.stderr) != (0, "", ""):
        fail(run, f"wait-online {' '.join(proc.args[2:])} must exit 0 silently: exit {proc.returncode}, "
                  f"stdout {proc.stdout!r}, stderr {proc.stderr!r}")


def settle(run, primary, **verdicts):
    def pred(st):
        return st["primary"] == primary and all(uplink_is(st, i, v) for i, v in verdicts.items())
    return ok(run.wait_state, pred, SETTLE_S, f"start-up: primary {primary}, {verdicts}")


# -- (a) it really waits ---------------------------------------------------------------

def test_waits_for_the_agent_then_for_the_uplink(lab, serve, blackhole, agents, waiters):
    """Started before the agent exists (no state file, not even its directory), every
    mode keeps waiting through start-up and while eth0's upstream is cut, and returns
    once the agent says eth0 is online."""
    serve(lab, "inet", "internet")
    serve(lab, "portal", "portal-302")
    blackhole(lab, "inet")
    run = agents(lab)
    run.state_path = run.dir / "run" / "state"      # a directory the agent makes
    named = waiters(run.state_path, "eth0", "--timeout", "0")
    primary = waiters(run.state_path, "--timeout", "60")
    any_up = waiters(run.state_path, "--any")
    if run.state_path.parent.exists():
        fail(run, "the state directory must not exist before the agent starts")

    run.start()
    ok(run.wait_state, lambda s: uplink_is(s, "eth0", "limited", "timeout") and s["primary"] == "-"
       and uplink_is(s, "wlan0", "captive") and uplink_is(s, "wwan0", "limited"),
       SETTLE_S, "eth0 limited (its upstream cut), no primary")
    for proc in (named, primary, any_up):
        still_waiting(run, proc, "no uplink is online")

    lab.unblackhole("inet")
    for proc in (named, primary, any_up):
        status, err = exited(run, proc, "eth0's upstream came back")
        st = run.state()
        if status != 0 or err:
            fail(run, f"wait-online {' '.join(proc.args[2:])}: exit {status}, stderr {err!r}")
        # It returned on the agent's word: the file says so, and the agent runs.
        if not (st and st["stopped"] == "no" and uplink_is(st, "eth0", "online") and st["primary"] == "eth0"):
            fail(run, f"wait-online returned 0 but the state file does not say eth0 online and primary: {st}")


# -- (b) a timeout names what is missing ----------------------------------------------

def test_times_out_naming_what_is_missing(lab, serve, agents):
    serve(lab, "inet", "internet")
    serve(lab, "portal", "portal-302")
    run = agents(lab).start()
    settle(run, "eth0", eth0="online", wlan0="captive", wwan0="limited")
    state = run.state_path

    # What holds already holds at once.
    for args in ((), ("--any",), ("eth0",), ("eth0", "--timeout", "0")):
        satisfied(run, wait_online(state, *args))

    timed_out(run, wait_online(state, "wwan0", "--timeout", "1.5"), "1.5 s", "wwan0 is limited (refused)")
    timed_out(run, wait_online(state, "eth0", "wwan0", "wlan0", "eth1", "--timeout", "500ms"), "0.5 s",
              "wwan0 is limited (refused), wlan0 is captive (redirect), eth1 is not among the agent's uplinks")

    role, peer = lab.peer_of("wwan0")
    lab.ip(role, "link", "set", peer, "down")
    try:
        ok(run.wait_state, lambda s: uplink_is(s, "wwan0", "down", "no-carrier"), 5, "wwan0 down (no-carrier)")
        timed_out(run, wait_online(state, "wwan0", "--timeout", "1"), "1 s", "wwan0 is down (no-carrier)")
    finally:
        lab.ip(role, "link", "set", peer, "up")
        lab.wait_lower_up("wwan0", True)


# -- (c) --captive-ok --------------------------------------------------------------------

def test_captive_ok_accepts_the_portal_uplink(lab, serve, blackhole, agents):
    serve(lab, "inet", "internet")
    serve(lab, "portal", "portal-302")
    blackhole(lab, "inet")
    run = agents(lab).start()
    settle(run, "-", eth0="limited", wlan0="captive", wwan0="limited")
    state = run.state_path

    timed_out(run, wait_online(state, "wlan0", "--timeout", "1"), "1 s", "wlan0 is captive (redirect)")
    proc, _ = wait_online(state, "--any", "--timeout", "1")
    if proc.returncode != 1 or not proc.stderr.startswith("uplinkd: wait-online: timed out after 1 s: no uplink online: ") \
            or "wlan0 is captive (redirect)" not in proc.stderr or "eth0 is limited (timeout)" not in proc.stderr:
        fail(run, f"--any without --captive-ok must time out naming each uplink: {proc.returncode} {proc.stderr!r}")
    for args in (("wlan0", "--captive-ok"), ("--any", "--captive-ok"), ("--captive-ok",)):
        satisfied(run, wait_online(state, *args, "--timeout", "10"))
    # Captive is accepted, limited still is not.
    timed_out(run, wait_online(state, "wlan0", "eth0", "--captive-ok", "--timeout", "1"), "1 s",
              "eth0 is limited (timeout)")


# -- (d) stale facts ---------------------------------------------------------------------

def test_stale_state_never_satisfies_until_an_agent_runs_again(lab, serve, agents, waiters):
    """A state file saying eth0 online and primary, left by a killed agent, does not
    satisfy wait-online; a new agent writing the same file does. A stopped agent's
    final state does not either."""
    serve(lab, "inet", "internet")
    serve(lab, "portal", "portal-302")
    first = agents(lab, "first").start()
    settle(first, "eth0", eth0="online")
    dead_pid = first.pid
    first.kill()
    st = first.state()
    if (st["stopped"], st["primary"], st["pid"]) != ("no", "eth0", str(dead_pid)):
        fail(first, f"a killed agent leaves its last state as it was: {st}")
    if first.status().returncode != 3:
        fail(first, "status must call that state file stale (exit 3), as wait-online does")
    timed_out(first, wait_online(first.state_path, "--timeout", "1"), "1 s",
              f"the agent that wrote the state file (pid {dead_pid}) is not running")
    timed_out(first, wait_online(first.state_path, "eth0", "--captive-ok", "--timeout", "1"), "1 s",
              f"the agent that wrote the state file (pid {dead_pid}) is not running")

    waiter = waiters(first.state_path, "eth0", "--timeout", "0")
    second = agents(lab, "second", state=first.state_path)
    still_waiting(first, waiter, "the file is stale")
    second.start()
    status, err = exited(second, waiter, "a new agent started on the same state file")
    st = second.state()
    if status != 0 or err or st["pid"] != str(second.pid) or not uplink_is(st, "eth0", "online"):
        fail(second, f"wait-online must return 0 once the new agent says eth0 online: exit {status} {err!r}, {st}")

    if second.stop() != 0:
        fail(second, "TERM must exit 0")
    timed_out(second, wait_online(second.state_path, "--any", "--timeout", "1"), "1 s",
              f"the agent stopped (pid {second.pid} wrote its final state)")


# -- (e) usage, and hand-written state files (no root, no lab) --------------------------

@pytest.mark.parametrize("args, message", [
    (("--bogus",), "unknown argument '--bogus' for wait-online"),
    (("eth0/1",), "wait-online: interface name 'eth0/1' contains a character the kernel does not allow"),
    (("averyveryverylongname",), "longer than 15 bytes"),
    (("eth0", "--any"), "--any and interface names exclude each other"),
    (("--timeout", "soon"), "--timeout: expected seconds"),
    (("--timeout", "-1"), "--timeout: expected seconds"),
    (("--timeout", "86401"), "--timeout: expected seconds"),
    (("--timeout", "25h"), "--timeout: expected seconds"),
    (("--timeout",), "--timeout needs a value"),
    (("--any=yes",), "--any takes no value"),
    (("--state",), "--state needs a value"),
])
def test_usage_mistakes_exit_64(tmp_path, args, message):
    proc, _ = wait_online(tmp_path / "state", *args, timeout=10)
    assert proc.returncode == 64, proc
    assert message in proc.stderr, proc
    assert proc.stdout == "", proc


def state_text(pid, primary="-", uplinks=(), stopped=False):
    now = int(time.time())
    lines = ["# uplinkd state, format 1 (see uplinkd-state(5))", "format 1", f"written {now}", f"pid {pid}",
             f"state {'stopped' if stopped else 'running'}", f"primary {primary}"]
    lines += [f"uplink {name} ethernet {verdict} {reason} {now} {verdict} - 0 - no -"
              for name, verdict, reason in uplinks]
    return "\n".join(lines) + "\n"


def replace(path, text):
    """As the agent does: a temporary file renamed over the state file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.rename(temporary, path)


def test_a_hand_written_state_of_a_live_process(tmp_path):
    """The decision on real files without an agent: the pid is this test's own (a
    live process). No file yet, then no primary: it waits; the file replaced by one
    with a primary: it returns."""
    state = tmp_path / "state"
    proc, elapsed = wait_online(state, "--timeout", "300ms", timeout=10)
    assert (proc.returncode, proc.stderr) == (
        1, f"uplinkd: wait-online: timed out after 0.3 s: no state file {state} yet (is 'uplinkd run' running?)\n"), proc
    assert elapsed >= 0.3

    replace(state, state_text(os.getpid(), uplinks=[("eth0", "unknown", "starting")]))
    waiter = subprocess.Popen([str(require_binary()), "wait-online", "--state", str(state), "--timeout", "20"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # It must have read the first file and still wait: ask with a short limit too.
        short, _ = wait_online(state, "--timeout", "200ms", timeout=10)
        assert short.stderr.endswith("no primary uplink: eth0 has no verdict yet\n"), short
        assert waiter.poll() is None, waiter.communicate()
        replace(state, state_text(os.getpid(), "eth0", [("eth0", "online", "validated")]))
        _, err = waiter.communicate(timeout=15)
        assert (waiter.returncode, err) == (0, "")
        for limit in ("2m", "1h", "0"):     # what holds returns at once, whatever the limit
            satisfied_now, _ = wait_online(state, "--timeout", limit, timeout=10)
            assert (satisfied_now.returncode, satisfied_now.stderr) == (0, ""), satisfied_now
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate(timeout=10)

    # The same facts from a stopped agent, or a process that is gone, do not count.
    replace(state, state_text(os.getpid(), "eth0", [("eth0", "online", "validated")], stopped=True))
    proc, _ = wait_online(state, "--timeout", "200ms", timeout=10)
    assert proc.returncode == 1 and "the agent stopped" in proc.stderr, proc
    gone = subprocess.Popen(["true"])
    gone.wait()
    replace(state, state_text(gone.pid, "eth0", [("eth0", "online", "validated")]))
    proc, _ = wait_online(state, "--timeout", "200ms", timeout=10)
    assert proc.returncode == 1 and f"(pid {gone.pid}) is not running" in proc.stderr, proc


def state_text_2(pid, primary, uplinks, decision, hooks_done):
    """A format 2 file: node facts, then each uplink's named facts."""
    now = int(time.time())
    lines = ["# uplinkd state, format 2 (see uplinkd-state(5))", "format 2", f"written {now}", f"pid {pid}",
             "stopped no", f"primary {primary}", f"decision {decision}", f"hooks_done {hooks_done}"]
    for name, verdict, reason in uplinks:
        lines += [f"uplink {name} kind ethernet", f"uplink {name} verdict {verdict}", f"uplink {name} reason {reason}",
                  f"uplink {name} since {now}"]
    return "\n".join(lines) + "\n"


def test_it_waits_for_the_hooks_of_the_latest_decision(tmp_path):
    """A primary the hooks have not acted on yet (hooks_done behind decision) is not
    yet online for a unit ordered after wait-online: the route may still be the old
    one. Once the file says they caught up, it returns."""
    state = tmp_path / "state"
    replace(state, state_text_2(os.getpid(), "eth0", [("eth0", "online", "validated")], decision=3, hooks_done=2))
    waiter = subprocess.Popen([str(require_binary()), "wait-online", "--state", str(state), "--timeout", "20"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        short, _ = wait_online(state, "--timeout", "200ms", timeout=10)
        assert short.returncode == 1, short
        assert short.stderr.endswith("the hooks of decision 3 have not run yet (done up to 2)\n"), short
        assert waiter.poll() is None, waiter.communicate()
        replace(state, state_text_2(os.getpid(), "eth0", [("eth0", "online", "validated")], decision=3, hooks_done=3))
        _, err = waiter.communicate(timeout=15)
        assert (waiter.returncode, err) == (0, "")
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate(timeout=10)
