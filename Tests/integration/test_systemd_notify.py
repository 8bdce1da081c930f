"""The agent speaks sd_notify(3) when systemd gives it NOTIFY_SOCKET, in the lab.

Run as root: sudo python3 -m pytest -v Tests/integration/test_systemd_notify.py
The binary is $UPLINKD, or <repo>/.build/debug/uplinkd (run `swift build`).

The test plays systemd: it binds an AF_UNIX datagram socket (a path in a temporary
directory, or an abstract name bound inside the lab's gateway namespace, since
abstract names belong to a network namespace), starts `uplinkd run` with
NOTIFY_SOCKET naming it and WATCHDOG_USEC set, and records every datagram with its
arrival time and its sender's pid (SO_PASSCRED, as systemd's NotifyAccess=main
checks it). When READY=1 arrives the state file is read at once: readiness must
mean that the state file already says something about every uplink.

The scene: eth0's upstream is a working internet, wlan0's and wwan0's upstreams
refuse HTTP (no server), so eth0 is the only online uplink and the primary.
"""

import ctypes
import secrets
import signal
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

from agentrun import config_text, env_dump_hook, parse_state, uplink_is
from pytesthelp import fail, ok

SETTLE_S = 15
CLONE_NEWNET = 0x40000000
UCRED = struct.Struct("iII")                 # pid, uid, gid (struct ucred)
# Nothing of systemd's own may reach the agent from the test's environment.
NO_SYSTEMD = {"NOTIFY_SOCKET": None, "WATCHDOG_USEC": None, "WATCHDOG_PID": None}


@dataclass
class Datagram:
    t: float                                  # time.monotonic() at arrival
    pid: int                                  # the sender, from SCM_CREDENTIALS
    text: str
    state_text: Optional[str] = None          # the state file read right at READY=1

    @property
    def fields(self) -> dict:
        return dict(line.split("=", 1) for line in self.text.split("\n") if "=" in line)

    def has(self, assignment: str) -> bool:
        return assignment in self.text.split("\n")


@dataclass
class NotifySocket:
    """A bound datagram socket playing systemd's notification socket; a thread
    records what arrives."""
    sock: socket.socket
    address: str                              # what NOTIFY_SOCKET says
    state_path: Optional[Path] = None
    got: list = field(default_factory=list)

    def start(self):
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()
        return self

    def _receive(self):
        while not self._stop.is_set():
            try:
                data, ancdata, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(UCRED.size))
            except socket.timeout:
                continue
            except OSError:
                return
            t = time.monotonic()
            pid = next((UCRED.unpack(d[:UCRED.size])[0] for level, kind, d in ancdata
                        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS), -1)
            gram = Datagram(t, pid, data.decode(errors="replace"))
            if gram.has("READY=1") and self.state_path is not None:
                try:
                    gram.state_text = self.state_path.read_text()
                except FileNotFoundError:
                    gram.state_text = ""
            self.got.append(gram)

    def close(self):
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()

    def since(self, mark: int) -> list:
        return list(self.got[mark:])


def path_socket(directory: Path) -> NotifySocket:
    path = directory / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    return NotifySocket(sock, str(path))


def abstract_socket_in(lb, role="gw") -> NotifySocket:
    """A socket bound to an abstract name inside namespace `role`: abstract names
    are per network namespace, so it must be bound where the agent runs. Bound on a
    thread of its own that enters the namespace (setns changes only that thread)."""
    name = f"uplinkd-test-{secrets.token_hex(6)}"
    made = {}

    def bind_there():
        libc = ctypes.CDLL(None, use_errno=True)
        with open(f"/run/netns/{lb.ns[role]}") as ns:
            if libc.setns(ns.fileno(), CLONE_NEWNET) != 0:
                made["error"] = OSError(ctypes.get_errno(), "setns")
                return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind("\0" + name)
        made["sock"] = sock

    t = threading.Thread(target=bind_there)
    t.start()
    t.join()
    if "error" in made:
        raise made["error"]
    return NotifySocket(made["sock"], "@" + name)


@pytest.fixture
def notify_socket():
    """notify_socket(kind, lab=None, directory=None) -> a started NotifySocket
    ("path" in directory, or "abstract" in the lab's gw namespace); closed at teardown."""
    opened = []

    def make(kind, lb=None, directory=None):
        ns = path_socket(directory) if kind == "path" else abstract_socket_in(lb)
        opened.append(ns)
        return ns.start()

    yield make
    for ns in opened:
        ns.close()


def notify_config(agent=None, **kw) -> str:
    return config_text({"ready-timeout": "20s", **(agent or {})}, **kw)


def start_notified(agent, lb, ns, config=None, env=None, **kw):
    """The agent with NOTIFY_SOCKET naming `ns` and WATCHDOG_USEC = 1 s (heartbeat
    every 0.5 s); the socket reads the run's state file when READY=1 arrives."""
    environment = {**NO_SYSTEMD, "NOTIFY_SOCKET": ns.address, "WATCHDOG_USEC": "1000000", **(env or {})}
    run = agent(lb, config or notify_config(), env=environment, **kw)
    ns.state_path = run.state_path
    return run


def wait_gram(run, ns, predicate, timeout, what, mark=0) -> Datagram:
    """The first datagram from `mark` on satisfying predicate (waited for)."""
    def found():
        return next((g for g in ns.since(mark) if predicate(g)), None)
    return ok(run.wait_until, found, timeout, what)


def transcript(ns, mark=0) -> str:
    return "datagrams:\n" + "".join(f"  {g.t:.3f} pid {g.pid}: {g.text!r}\n" for g in ns.since(mark))


def scene(lb, serve):
    serve(lb, "inet", "internet")         # wlan0's and wwan0's upstreams: nothing on port 80


def expected_status(st) -> str:
    """What STATUS= should say for a state file (AgentState.summaryLine)."""
    head = f"primary {st['primary']}" if st["primary"] != "-" else "no primary"
    parts = []
    for name in st["order"]:
        u = st["uplinks"][name]
        text = f"{name} {u['verdict']}"
        if u["verdict"] not in ("online", "unknown"):
            text += f" ({u['reason']})"
        if u.get("degraded") == "yes":
            text += " degraded"
        parts.append(text)
    return f"{head}; {', '.join(parts)}" if parts else f"{head}; no uplinks"


def test_ready_status_watchdog_reload_and_stop(fresh_lab, serve, agent, notify_socket, tmp_path):
    lb = fresh_lab
    scene(lb, serve)
    ns = notify_socket("path", directory=tmp_path)
    run = start_notified(agent, lb, ns)

    # READY=1 only once the state file has a verdict for every uplink.
    ready = wait_gram(run, ns, lambda g: g.has("READY=1"), SETTLE_S, "READY=1")
    if not ready.state_text:
        fail(run, f"no state file when READY=1 arrived\n{transcript(ns)}")
    st = parse_state(ready.state_text)
    unknown = [n for n, u in st["uplinks"].items() if u["verdict"] == "unknown"]
    if sorted(st["uplinks"]) != ["eth0", "wlan0", "wwan0"] or unknown:
        fail(run, f"READY=1 came with uplinks still unknown in the state file: {unknown}\n"
                  f"{ready.state_text}\n{transcript(ns)}")
    status = ready.fields.get("STATUS", "")
    if status != expected_status(st) or not status.startswith("primary eth0; eth0 online"):
        fail(run, f"READY=1 carries STATUS={status!r}; the state file says {expected_status(st)!r}\n"
                  f"{transcript(ns)}")
    before = ns.got[:ns.got.index(ready)]
    if any(g.has("READY=1") for g in before) or not any(
            g.fields.get("STATUS", "").startswith("starting; ") for g in before):
        fail(run, f"before READY=1 the STATUS must say 'starting; ...'\n{transcript(ns)}")
    if {g.pid for g in ns.got} != {run.pid}:
        fail(run, f"every datagram must come from the agent (pid {run.pid}): NotifyAccess=main\n"
                  f"{transcript(ns)}")

    # The watchdog: WATCHDOG_USEC = 1 s, so WATCHDOG=1 about every 0.5 s.
    mark = len(ns.got)
    t0 = time.monotonic()
    ok(run.wait_until, lambda: sum(g.has("WATCHDOG=1") for g in ns.since(mark)) >= 3, 3.0,
       "3 WATCHDOG=1 within 3 s")
    beats = [g.t for g in ns.since(mark) if g.has("WATCHDOG=1")]
    if beats[0] - t0 > 1.0:
        fail(run, f"the first heartbeat came {beats[0] - t0:.2f}s after asking; WatchdogSec=1s "
                  f"would have fired\n{transcript(ns, mark)}")

    # HUP: RELOADING=1 with MONOTONIC_USEC (CLOCK_MONOTONIC in µs; exactly how fresh
    # it must be is test_reload_stamp_is_not_older_than_the_signal), then READY=1.
    mark = len(ns.got)
    sent_usec, reloading, ready2, arrived_usec = hup(run, ns)
    if ns.got.index(ready2) < ns.got.index(reloading):
        fail(run, f"READY=1 must follow RELOADING=1\n{transcript(ns, mark)}")
    stamp = reloading.fields.get("MONOTONIC_USEC", "")
    if not stamp.isdigit() or not sent_usec - 1_000_000 <= int(stamp) <= arrived_usec:
        fail(run, f"RELOADING=1 must carry MONOTONIC_USEC= of CLOCK_MONOTONIC, in µs: got {stamp!r}, "
                  f"signal sent at {sent_usec}, READY=1 seen at {arrived_usec}\n{transcript(ns, mark)}")
    if not ready2.fields.get("STATUS", "").startswith("primary eth0;"):
        fail(run, f"READY=1 after the reload must say the status again\n{transcript(ns, mark)}")

    # A verdict change changes STATUS=: wlan0 loses its carrier.
    mark = len(ns.got)
    role, peer = lb.peer_of("wlan0")
    lb.ip(role, "link", "set", peer, "down")
    st = ok(run.wait_state, lambda s: uplink_is(s, "wlan0", "down", "no-carrier"), 5, "wlan0 down")
    changed = wait_gram(run, ns, lambda g: "wlan0 down (no-carrier)" in g.fields.get("STATUS", ""), 5,
                        "STATUS= naming wlan0 down", mark)
    if changed.fields["STATUS"] != expected_status(st) or changed.has("READY=1"):
        fail(run, f"STATUS after the carrier cut: {changed.text!r}, expected {expected_status(st)!r} "
                  f"without READY=1\n{transcript(ns, mark)}")
    statuses = [g.fields["STATUS"] for g in ns.since(mark) if "STATUS" in g.fields]
    if len(statuses) != len(set(statuses)):
        fail(run, f"STATUS= is sent only when it changed\n{transcript(ns, mark)}")

    # TERM: STOPPING=1 while the agent still runs its stop, then the exit.
    mark = len(ns.got)
    rc = run.stop()
    stopping = [g for g in ns.since(mark) if g.has("STOPPING=1")]
    if rc != 0 or len(stopping) != 1:
        fail(run, f"TERM: exit {rc}, STOPPING=1 sent {len(stopping)} times (want 0 and once)\n"
                  f"{transcript(ns, mark)}")
    after = ns.since(ns.got.index(stopping[0]) + 1)
    if any(g.has("READY=1") or g.fields.get("STATUS", "stopping") != "stopping" for g in after):
        fail(run, f"nothing but heartbeats after STOPPING=1\n{transcript(ns, mark)}")


def hup(run, ns):
    """SIGHUP; waits for RELOADING=1 and the READY=1 after it. Returns (CLOCK_MONOTONIC
    µs just before the signal, the RELOADING=1 datagram, the READY=1 one, µs when
    READY=1 was seen)."""
    mark = len(ns.got)
    sent_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    run.send(signal.SIGHUP)
    reloading = wait_gram(run, ns, lambda g: g.has("RELOADING=1"), 5, "RELOADING=1", mark)
    ready = wait_gram(run, ns, lambda g: g.has("READY=1"), 5, "READY=1 after the reload", mark)
    return sent_usec, reloading, ready, time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def test_reload_stamp_is_not_older_than_the_signal(fresh_lab, serve, agent, notify_socket, tmp_path):
    """With Type=notify-reload, systemd takes RELOADING=1 as the answer to its SIGHUP
    only when MONOTONIC_USEC >= the CLOCK_MONOTONIC time at which it sent the signal
    (service.c: `monotonic_usec >= s->reload_begin_usec`); an older stamp leaves the
    reload waiting until its time-out. Five reloads, each stamp checked."""
    lb = fresh_lab
    scene(lb, serve)
    ns = notify_socket("path", directory=tmp_path)
    run = start_notified(agent, lb, ns)
    wait_gram(run, ns, lambda g: g.has("READY=1"), SETTLE_S, "READY=1")
    stale = []
    for _ in range(5):
        sent_usec, reloading, _, _ = hup(run, ns)
        stamp = int(reloading.fields.get("MONOTONIC_USEC", "-1"))
        if stamp < sent_usec:
            stale.append(f"MONOTONIC_USEC={stamp} is {sent_usec - stamp} µs older than the SIGHUP "
                         f"(sent at {sent_usec})")
    if stale:
        fail(run, "RELOADING=1 stamps older than the signal (systemd would ignore them):\n  "
                  + "\n  ".join(stale) + f"\n{transcript(ns)}")


def test_heartbeat_comes_from_the_turning_loop(fresh_lab, serve, agent, notify_socket, tmp_path):
    """A stopped process (standing in for a stuck loop: SIGSTOP freezes every thread)
    sends no WATCHDOG=1, so systemd's WatchdogSec= fires; once it runs again the
    heartbeat resumes. Nothing but the loop's own timer sends it."""
    lb = fresh_lab
    scene(lb, serve)
    ns = notify_socket("path", directory=tmp_path)
    run = start_notified(agent, lb, ns)
    wait_gram(run, ns, lambda g: g.has("READY=1"), SETTLE_S, "READY=1")
    mark = len(ns.got)
    ok(run.wait_until, lambda: sum(g.has("WATCHDOG=1") for g in ns.since(mark)) >= 2, 3.0, "2 WATCHDOG=1")
    run.send(signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        # 2 s without a turn of the loop: twice WatchdogSec=1s.
        ok(run.wait_until, lambda: time.monotonic() - frozen_at >= 2.0, 3.0, "2 s frozen")
        frozen = [g for g in ns.got[mark:] if g.has("WATCHDOG=1") and g.t > frozen_at + 0.05]
    finally:
        run.send(signal.SIGCONT)
    if frozen:
        fail(run, f"WATCHDOG=1 arrived while the process was stopped\n{transcript(ns, mark)}")
    resumed = len(ns.got)
    ok(run.wait_until, lambda: any(g.has("WATCHDOG=1") for g in ns.since(resumed)), 2.0,
       "the heartbeat resuming after SIGCONT")
    if run.stop() != 0:
        fail(run, "TERM must exit 0")


def test_abstract_socket_name(fresh_lab, serve, agent, notify_socket):
    """NOTIFY_SOCKET=@NAME: an abstract socket of the agent's network namespace."""
    lb = fresh_lab
    scene(lb, serve)
    ns = notify_socket("abstract", lb)
    run = start_notified(agent, lb, ns)
    ready = wait_gram(run, ns, lambda g: g.has("READY=1"), SETTLE_S, "READY=1 on the abstract socket")
    if not ready.fields.get("STATUS", "").startswith("primary eth0;"):
        fail(run, f"READY=1 carries STATUS={ready.fields.get('STATUS')!r}\n{transcript(ns)}")
    mark = len(ns.got)
    if run.stop() != 0 or not any(g.has("STOPPING=1") for g in ns.since(mark)):
        fail(run, f"TERM: exit 0 with STOPPING=1 expected\n{transcript(ns)}")


def test_ready_timeout_announces_ready_while_an_uplink_is_unknown(fresh_lab, serve, blackhole, agent,
                                                                   notify_socket, tmp_path):
    """eth0's upstream drops every probe and a probe may take 10 s, so eth0 stays
    unknown for 10 s: READY=1 must come at `ready-timeout` (2 s) all the same,
    with the state file still saying unknown, and the log naming eth0."""
    lb = fresh_lab
    serve(lb, "inet", "internet")
    blackhole(lb, "inet")
    ns = notify_socket("path", directory=tmp_path)
    t0 = time.monotonic()
    run = start_notified(agent, lb, ns, config=notify_config({"ready-timeout": "2s"}, timeout="10s",
                                                             uplinks="eth0"))
    ready = wait_gram(run, ns, lambda g: g.has("READY=1"), 6, "READY=1 at ready-timeout")
    took = ready.t - t0
    st = parse_state(ready.state_text) if ready.state_text else None
    if st is None or not uplink_is(st, "eth0", "unknown"):
        fail(run, f"the scene must keep eth0 unknown past the ready-timeout: {ready.state_text!r}")
    if not 1.8 <= took <= 5.0:
        fail(run, f"READY=1 came {took:.2f}s after the start; ready-timeout is 2 s\n{transcript(ns)}")
    if ready.fields.get("STATUS") != "no primary; eth0 unknown":
        fail(run, f"READY=1 at the time-out must say where things stand: {ready.text!r}")
    ok(run.wait_stderr, r"ready after ready-timeout; still without a verdict: eth0$", 2)
    if run.stop() != 0:
        fail(run, "TERM must exit 0")


def test_hooks_get_no_systemd_variables(fresh_lab, serve, agent, notify_socket, tmp_path):
    """A hook must not be able to speak for the agent: no NOTIFY_SOCKET,
    WATCHDOG_USEC or WATCHDOG_PID in its environment."""
    lb = fresh_lab
    scene(lb, serve)
    dumps = tmp_path / "env"
    dumps.mkdir()
    ns = notify_socket("path", directory=tmp_path)
    run = start_notified(agent, lb, ns, env={"WATCHDOG_PID": "1"}, hooks={"20-env": env_dump_hook(dumps)})
    wait_gram(run, ns, lambda g: g.has("READY=1"), SETTLE_S, "READY=1")
    envs = ok(run.wait_hooks, [("verdict", "eth0", "online"), ("verdict", "wlan0", "limited"),
                               ("verdict", "wwan0", "limited"), ("primary", "eth0")], 10, dumps=dumps)
    leaked = [sorted(set(e) & {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"}) for e in envs]
    if any(leaked) or not all(e.get("UPLINK_EVENT") in ("verdict", "primary") for e in envs):
        fail(run, f"hook environments carry systemd's variables: {leaked}\n{envs}")
    # WATCHDOG_PID=1 names another process: the watchdog is not this agent's.
    mark = len(ns.got)
    ok(run.wait_stderr, r"round on eth0: ", 10, offset=run.stderr_size())
    if any(g.has("WATCHDOG=1") for g in ns.got):
        fail(run, f"WATCHDOG_PID named another process, yet WATCHDOG=1 was sent\n{transcript(ns, mark)}")
    if run.stop() != 0:
        fail(run, "TERM must exit 0")


def test_unreachable_notify_socket_is_logged_once_and_harmless(fresh_lab, serve, agent, tmp_path):
    """NOTIFY_SOCKET names nothing (systemd gone): one warning, not one per
    heartbeat, and the agent works and stops as ever."""
    lb = fresh_lab
    scene(lb, serve)
    env = {**NO_SYSTEMD, "NOTIFY_SOCKET": str(tmp_path / "nobody.sock"), "WATCHDOG_USEC": "200000"}
    run = agent(lb, notify_config(), env=env)
    ok(run.wait_state, lambda s: s["primary"] == "eth0" and uplink_is(s, "wwan0", "limited"), SETTLE_S,
       "primary eth0 without anyone listening on NOTIFY_SOCKET")
    # At 0.1 s heartbeats, 1 s is ten failed sends.
    ok(run.wait_stderr, r"round on eth0: ", 10, offset=run.stderr_size())
    warnings = run.stderr().count("cannot notify systemd")
    if warnings != 1:
        fail(run, f"an unreachable NOTIFY_SOCKET must be logged once, was {warnings} times")
    if run.stop() != 0 or run.state()["stopped"] != "yes":
        fail(run, "TERM must exit 0 and write the final state")
