"""Drives `uplinkd links` for test_links.py and Tests/bench/bench_link_latency.py.

LinksWatch runs `ip netns exec GW uplinkd links --watch --json [--all] [--config F]`,
reads its stdout with select() and a deadline (never a bare sleep), checks every
line against the contract, waits for {"event":"ready"} and then hands out events
with wait_for(predicate). Every line seen is kept for failure messages.
"""

import itertools
import json
import os
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from lab import binary_problem, uplinkd_path

DOWN_REASONS = {"no-carrier", "admin-down", "no-address", "link-local-only",
                "no-route", "no-such-interface"}
# Interface events and the fields each carries besides event/interface/index/verdict/reason.
EVENT_FIELDS = {
    "appeared": ("kind",),
    "disappeared": (),
    "renamed": ("previous_name",),
    "admin-up": (), "admin-down": (), "carrier-up": (), "carrier-down": (),
    "address-added": ("address", "prefix", "family"),
    "address-removed": ("address", "prefix", "family"),
    "route-added": ("family", "gateway", "metric", "table"),
    "route-removed": ("family", "gateway", "metric", "table"),
}
SNAPSHOT_KEYS = ("interface", "index", "kind", "uplink", "admin_up", "carrier",
                 "operstate", "master_index", "addresses", "default_routes")
_marker = itertools.count(1)


class WatchError(AssertionError):
    pass


def require_binary() -> Path:
    """The uplinkd binary; a missing one is a failure telling to run `swift build`."""
    problem = binary_problem()
    if problem is not None:
        raise WatchError(problem)
    return uplinkd_path()


def links_argv(binary, *, json_out=True, all_=False, watch=False, config=None) -> list:
    argv = [str(binary), "links"]
    if json_out:
        argv.append("--json")
    if all_:
        argv.append("--all")
    if watch:
        argv.append("--watch")
    if config is not None:
        argv += ["--config", str(config)]
    return argv


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def snapshot_problem(obj) -> str:
    """'' if obj is a well-formed interface object of `links --json`, else why not."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    missing = [k for k in SNAPSHOT_KEYS if k not in obj]
    if missing:
        return f"lacks {missing}"
    if not isinstance(obj["interface"], str) or not _is_int(obj["index"]):
        return "interface must be a string and index an integer"
    for key in ("uplink", "admin_up", "carrier"):
        if not isinstance(obj[key], bool):
            return f"{key} must be true or false"
    if not isinstance(obj["addresses"], list) or not isinstance(obj["default_routes"], list):
        return "addresses and default_routes must be lists"
    for a in obj["addresses"]:
        if not isinstance(a, dict) or {"address", "prefix", "family", "scope", "link_local"} - set(a):
            return f"bad address entry {a!r}"
    for r in obj["default_routes"]:
        if not isinstance(r, dict) or {"family", "gateway", "metric", "table"} - set(r):
            return f"bad default route entry {r!r}"
    return ""


def event_problem(ev) -> str:
    """'' if ev is a well-formed event line of `links --watch --json`, else why not."""
    if not isinstance(ev, dict) or not isinstance(ev.get("event"), str):
        return "not a JSON object with a string \"event\""
    name = ev["event"]
    if name in ("ready", "resync"):
        return ""
    if name not in EVENT_FIELDS:
        return f"unknown event {name!r}"
    if not isinstance(ev.get("interface"), str) or not _is_int(ev.get("index")):
        return "interface event needs string interface and integer index"
    missing = [k for k in ("verdict", "reason", *EVENT_FIELDS[name]) if k not in ev]
    if missing:
        return f"lacks {missing}"
    verdict, reason = ev["verdict"], ev["reason"]
    if verdict == "down":
        if reason not in DOWN_REASONS:
            return f"verdict down with unknown reason {reason!r}"
    elif verdict == "unknown":
        if reason != "needs-probe":
            return f"verdict unknown must have reason needs-probe, not {reason!r}"
    else:
        return f"verdict must be down or unknown, not {verdict!r}"
    if name.startswith("address-") and not (isinstance(ev["address"], str) and _is_int(ev["prefix"])):
        return "address must be a string and prefix an integer"
    if name.startswith("route-") and not (ev["gateway"] is None or isinstance(ev["gateway"], str)):
        return "gateway must be a string or null"
    return ""


def match(event, interface=None, **fields):
    """Predicate: an event named `event` (of `interface`) whose fields equal `fields`."""
    def pred(ev):
        if ev.get("event") != event:
            return False
        if interface is not None and ev.get("interface") != interface:
            return False
        return all(ev.get(k) == v for k, v in fields.items())
    pred.__doc__ = f"{event} {interface or ''} {fields or ''}".strip()
    return pred


class LinksWatch:
    """One `uplinkd links --watch --json` process inside the lab's gw namespace."""

    def __init__(self, lb, binary=None, *, all_=False, config=None, ready_timeout=15.0):
        binary = binary if binary is not None else require_binary()
        self.argv = lb.exec_argv("gw", links_argv(binary, all_=all_, watch=True, config=config))
        self._stderr = tempfile.TemporaryFile()
        # `ip netns exec` execs the command (no fork), so signals reach uplinkd itself.
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0)
        self.fd = self.proc.stdout.fileno()
        self._buf = b""
        self.eof = False
        self.ready = False
        self.initial = []     # interface objects printed before {"event":"ready"}
        self.events = []      # event objects after ready, in order
        self.arrivals = []    # time.monotonic() at which each event was read
        self.raw = []         # every stdout line, for failure messages
        self.cursor = 0       # wait_for() looks at events[cursor:]
        self._scanned = 0
        self.returncode = None
        self.closed = False
        try:
            self._wait_ready(ready_timeout)
        except BaseException:
            self.stop()
            raise

    # -- reading ---------------------------------------------------------
    def _take_line(self, raw: bytes, now: float):
        text = raw.decode("utf-8", errors="replace").strip()
        if not text:
            return
        self.raw.append(text)
        try:
            obj = json.loads(text)
        except ValueError as exc:
            raise WatchError(f"stdout line is not JSON ({exc}): {text!r}\n{self.transcript()}")
        if not self.ready:
            if isinstance(obj, dict) and obj.get("event") == "ready":
                self.ready = True
                return
            problem = snapshot_problem(obj) if not (isinstance(obj, dict) and "event" in obj) \
                else "event line before {\"event\":\"ready\"}"
            if problem:
                raise WatchError(f"bad line before ready ({problem}): {text}\n{self.transcript()}")
            self.initial.append(obj)
            return
        problem = event_problem(obj)
        if problem:
            raise WatchError(f"bad event line ({problem}): {text}\n{self.transcript()}")
        self.events.append(obj)
        self.arrivals.append(now)

    def pump(self, deadline: float) -> bool:
        """Read what arrives before `deadline`; False on timeout or end of output."""
        if self.eof:
            return False
        left = max(0.0, deadline - time.monotonic())
        readable, _, _ = select.select([self.fd], [], [], left)
        if not readable:
            return False
        chunk = os.read(self.fd, 65536)
        now = time.monotonic()
        if not chunk:
            self.eof = True
            if self._buf:
                self._take_line(self._buf, now)
                self._buf = b""
            return False
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            self._take_line(line, now)
        return True

    def _wait_ready(self, timeout: float):
        deadline = time.monotonic() + timeout
        while not self.ready:
            if self.eof:
                self._reap(5)
                raise WatchError(f"uplinkd exited before {{\"event\":\"ready\"}}\n{self.transcript()}")
            if time.monotonic() >= deadline:
                raise WatchError(f"no {{\"event\":\"ready\"}} within {timeout}s\n{self.transcript()}")
            self.pump(deadline)

    def wait_for(self, predicate, timeout: float = 5.0, what: str = ""):
        """The first event at or after the cursor satisfying predicate; moves the cursor past it."""
        deadline = time.monotonic() + timeout
        i = self.cursor
        while True:
            while i < len(self.events):
                if predicate(self.events[i]):
                    self.cursor = i + 1
                    return self.events[i]
                i += 1
            if self.eof or time.monotonic() >= deadline:
                why = "uplinkd's output ended" if self.eof else f"not seen within {timeout}s"
                if self.eof:
                    self._reap(5)
                desc = what or predicate.__doc__ or "matching event"
                raise WatchError(f"waiting for {desc}: {why} (looked from event #{self.cursor})\n"
                                 f"{self.transcript()}")
            self.pump(deadline)

    def sync(self, lb, iface: str = "wwan0", timeout: float = 10.0):
        """Barrier: add and remove a marker /32 on `iface` and wait for both events.

        The kernel queues every notification on the one netlink socket in order, so
        once the marker's events are out, uplinkd has reported everything before it
        (or, after an overflow, re-dumped past it). Moves the cursor past the marker.
        """
        addr = f"192.0.2.{next(_marker) % 250 + 1}"
        lb.ip("gw", "addr", "add", f"{addr}/32", "dev", iface)
        self.wait_for(match("address-added", iface, address=addr, prefix=32), timeout,
                      f"sync marker address-added {addr}/32 on {iface}")
        lb.ip("gw", "addr", "del", f"{addr}/32", "dev", iface)
        self.wait_for(match("address-removed", iface, address=addr, prefix=32), timeout,
                      f"sync marker address-removed {addr}/32 on {iface}")

    def about(self, iface: str) -> list:
        """Events (after ready) naming `iface`."""
        return [e for e in self.events if e.get("interface") == iface]

    # -- stopping --------------------------------------------------------
    def _reap(self, timeout: float):
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
            self.returncode = None

    def stop(self, sig=signal.SIGTERM, timeout: float = 5.0):
        """Send `sig`, read the rest of stdout, reap. Returns the exit status, or None
        if uplinkd had to be killed after `timeout` seconds. Idempotent."""
        if self.closed:
            return self.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        deadline = time.monotonic() + timeout
        while not self.eof and time.monotonic() < deadline:
            try:
                self.pump(deadline)
            except WatchError:
                pass            # keep stopping; the line stays in self.raw
        self._reap(max(0.1, deadline - time.monotonic()))
        self.closed = True
        self.proc.stdout.close()
        return self.returncode

    def stderr_text(self) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode(errors="replace")
        except ValueError:
            return "(closed)"

    def transcript(self, last: int = 200) -> str:
        lines = self.raw[-last:]
        skipped = len(self.raw) - len(lines)
        head = f"$ {' '.join(self.argv)}\nexit status: {self.proc.poll()}\n" \
               f"--- stdout ({len(self.raw)} lines{f', first {skipped} omitted' if skipped else ''}) ---\n"
        return head + "\n".join(lines) + f"\n--- stderr ---\n{self.stderr_text()[-4000:]}"
