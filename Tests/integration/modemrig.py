"""A real ModemManager driving an emulated AT modem, on a private D-Bus bus.

    network namespace "ul<pid>-<seq>-mm" (abstract unix sockets live per namespace)
    +--------------------------------------------------------------------------+
    |  dbus-daemon (system-bus-like config; everything allowed)                |
    |     socket: DIR/bus  (a filesystem path: reachable from any namespace)   |
    |  polkitd stand-in: python3-dbusmock's polkitd template, AllowUnknown     |
    |  ModemManager --test-enable --no-auto-scan --test-no-udev ... --debug    |
    |     connects to  "abstract:ul<pid>-<seq>-mm:port0" / ":port1"            |
    |  atmodem.py: listens there, answers AT; control socket DIR/atmodem.sock  |
    |  announcer (this file, `announce`): udev's part, see below               |
    +--------------------------------------------------------------------------+

ModemRig() builds it (a context manager), calls
org.freedesktop.ModemManager1.Test.SetProfile(id, "fibocom", ports) and waits
(polling the bus with a deadline) until the modem object exists. Clients (mmcli,
busctl, uplinkd) reach it with DBUS_SYSTEM_BUS_ADDRESS=rig.bus_address.

Why the announcer: ModemManager 1.20 in test mode has no udev. When the
emulator's ports go away (AT+CFUN=15, or unplug on the control channel)
ModemManager only marks them "forced close" and keeps the dead modem on the
bus; a virtual device cannot be removed through ReportKernelEvent (it has no
port probes) nor through InhibitDevice (that needs a disable that cannot run).
What does remove it is SetProfile with the same id: the device is replaced, the
old modem's interfaces are removed from the bus, and the replacement, whose
ports do not answer yet, fails initialisation fatally and is never exported.
So the announcer, subscribed to the emulator's events, calls SetProfile when
the ports go ("remove") and again when they are back ("add"): the modem
vanishes at once and reappears under a new object path, as with udev.

The plugin is "fibocom": its Modem.Reset is AT+CFUN=15 (the generic plugin
has no Reset at all); its bearer, without a net port, is the generic PPP one
(ATD*99***<cid>#, Interface = the data port's name).

Files of one rig live in rig.dir: logs/ModemManager-N.log (--debug), logs/
atmodem.log (every AT line), logs/polkitd.log (every authorisation asked),
logs/announcer.log, logs/*.out (stdout/stderr). logs_text() gives their tails
for failure messages.
"""

import argparse
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lab as labmod  # noqa: E402

HERE = Path(__file__).resolve().parent
ATMODEM = HERE / "atmodem.py"
MM_SERVICE = "org.freedesktop.ModemManager1"
MM_PATH = "/org/freedesktop/ModemManager1"
MM_MODEM = "org.freedesktop.ModemManager1.Modem"
POLKIT_SERVICE = "org.freedesktop.PolicyKit1"
POLKIT_PATH = "/org/freedesktop/PolicyKit1/Authority"
DEFAULT_IMEI = "861234567890128"
POLL_SECONDS = 0.05
_seq = itertools.count(1)

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- A private bus that looks like the system bus to its clients; root (the
     only user here) may own, call and receive everything. -->
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
"""


class RigError(RuntimeError):
    pass


def dbusmock_python() -> Optional[str]:
    """A Python interpreter that has python3-dbusmock (the test runner's, else
    Debian's /usr/bin/python3), or None."""
    for py in dict.fromkeys((sys.executable, "/usr/bin/python3")):
        if Path(py).exists() and subprocess.run(
                [py, "-c", "import dbusmock"], capture_output=True, timeout=30).returncode == 0:
            return py
    return None


def unavailable_reason() -> Optional[str]:
    """What keeps the rig from running here (beyond namespaces), or None."""
    missing = labmod.missing_tools(("dbus-daemon", "ModemManager", "mmcli", "busctl"))
    if missing:
        return (f"the modem rig needs {', '.join(missing)} "
                f"(Debian: dbus-daemon, modemmanager, systemd)")
    helptext = subprocess.run([labmod.tool("ModemManager"), "--help"], capture_output=True,
                              text=True, timeout=30).stdout
    if "--test-enable" not in helptext:
        return "this ModemManager was built without its test interface (--test-enable)"
    if dbusmock_python() is None:
        return "the modem rig needs python3-dbusmock (its polkitd template)"
    return None


def unwrap(value):
    """busctl --json variants ({"type", "data"}) to plain values, recursively."""
    if isinstance(value, dict):
        if set(value) == {"type", "data"}:
            return unwrap(value["data"])
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


def busctl_argv(address, *args) -> list:
    return ["busctl", f"--address={address}", "--json=short", "--timeout=10", *args]


def set_profile_argv(address, profile_id, plugin, ports) -> list:
    return busctl_argv(address, "call", MM_SERVICE, MM_PATH, "org.freedesktop.ModemManager1.Test",
                       "SetProfile", "ssas", profile_id, plugin, str(len(ports)), *ports)


def first_line(popen: subprocess.Popen, timeout: float, what: str, details) -> str:
    """The first line a program writes to its stdout pipe (bounded wait)."""
    return labmod.first_line(popen, timeout, what, details, error=RigError)


class ModemRig:
    """See the module docstring. `netns`: run in this existing namespace (it is
    not deleted) instead of a namespace of the rig's own. `network`: emulator
    settings (atmodem.py "set" keys) applied before the modem is announced,
    e.g. {"sim": "missing"}."""

    def __init__(self, netns: Optional[str] = None, equipment_id: str = DEFAULT_IMEI,
                 plugin: str = "fibocom", network: Optional[dict] = None,
                 ready_timeout: float = 20.0):
        if not re.fullmatch(r"[0-9]{15}", equipment_id):
            raise RigError(f"equipment_id {equipment_id!r}: expected 15 digits (an IMEI)")
        self.tag = f"{labmod.PREFIX}-{next(labmod._seq)}-mm"
        self.own_netns = netns is None
        self.netns = netns or self.tag
        self.equipment_id = equipment_id
        self.plugin = plugin
        self.network = dict(network or {})
        self.ready_timeout = ready_timeout
        self.profile_id = f"uplinkd-{self.tag}"
        self.ports = [f"abstract:{self.tag}:port0", f"abstract:{self.tag}:port1"]
        self.dir: Optional[Path] = None
        self.logs: Optional[Path] = None
        self.bus_address: Optional[str] = None
        self.control_path: Optional[Path] = None
        self.procs = None
        self.mm = None
        self.mm_starts = 0
        self._ns_made = False
        self._polkit_python = None

    # -- life cycle --------------------------------------------------------
    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
        return False

    def start(self):
        labmod.sweep_stale()
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self):
        self._polkit_python = dbusmock_python()
        if self._polkit_python is None:
            raise RigError("python3-dbusmock is not installed")
        self.dir = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        self.logs = self.dir / "logs"
        self.logs.mkdir()
        self.control_path = self.dir / "atmodem.sock"
        bus_socket = self.dir / "bus"
        self.bus_address = f"unix:path={bus_socket}"
        if self.own_netns:
            labmod.run(["ip", "netns", "add", self.netns])
            self._ns_made = True
            labmod.run(["ip", "-n", self.netns, "link", "set", "lo", "up"])
        self.procs = labmod.LabProcesses(self.logs, lambda _role, argv: self.exec_argv(argv))

        self._bus_config = self.dir / "bus.conf"
        self._bus_config.write_text(BUS_CONFIG.format(socket=bus_socket))
        self._start_bus()
        self.procs.start_ready("atmodem", "mm", [
            sys.executable, ATMODEM, *[a for p in self.ports for a in ("--port", p)],
            "--control", self.control_path, "--log", self.logs / "atmodem.log",
            "--imei", self.equipment_id])
        if self.network:
            self.control({"op": "set", **self.network})
        self._start_announcer()
        self.start_modemmanager()

    def _start_bus(self):
        """dbus-daemon and the polkitd stand-in on it."""
        self._bus = self.procs.start("dbus-daemon", "mm", [
            labmod.tool("dbus-daemon"), f"--config-file={self._bus_config}", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE)
        address = first_line(self._bus.popen, 10, "dbus-daemon", self._details)
        if not address.startswith(self.bus_address):
            raise RigError(f"dbus-daemon listens on {address!r}, expected {self.bus_address}")
        self._polkit = self.procs.start("polkitd", "mm", [
            self._polkit_python, "-m", "dbusmock", "--system", "--template", "polkitd",
            "--logfile", str(self.logs / "polkitd.log")])
        self.wait_until(lambda: self.name_owner(POLKIT_SERVICE), 10, "the polkitd stand-in on the bus")
        self.busctl("call", POLKIT_SERVICE, POLKIT_PATH, "org.freedesktop.DBus.Mock",
                    "AllowUnknown", "b", "true")

    def _start_announcer(self):
        self._announcer = self.procs.start_ready("announcer", "mm", [
            sys.executable, Path(__file__).resolve(), "announce", "--control", self.control_path,
            "--bus", self.bus_address, "--id", self.profile_id, "--plugin", self.plugin,
            "--log", self.logs / "announcer.log", *[a for p in self.ports for a in ("--port", p)]])

    def restart_bus(self, away_seconds: float) -> str:
        """The system bus goes away for `away_seconds` (dbus-daemon stopped, and with
        it everything on the bus: ModemManager, the polkitd stand-in, the announcer),
        then comes back with all of them; the modem's new path. The emulated modem
        keeps running (it is not on the bus)."""
        # The daemon first, as when it crashes or is restarted: its clients see their
        # connections end, then they go too.
        for proc in (self._bus, self._announcer, self._polkit):
            self.procs.stop(proc)
        if self.mm is not None:
            self.procs.stop(self.mm)
            self.mm = None
        time.sleep(away_seconds)                    # the outage itself, not a wait
        self._start_bus()
        self._start_announcer()
        return self.start_modemmanager()

    def close(self):
        """Stop everything, delete the rig's namespace and files (idempotent)."""
        if self.procs is not None:
            self.procs.stop_all()
            self.procs = None
        self.mm = None
        if self._ns_made:
            labmod._delete_ns(self.netns)
            self._ns_made = False
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def exec_argv(self, argv) -> list:
        return ["ip", "netns", "exec", self.netns, "env",
                f"DBUS_SYSTEM_BUS_ADDRESS={self.bus_address}", *map(str, argv)]

    # -- ModemManager ------------------------------------------------------
    def start_modemmanager(self, announce: bool = True):
        """Start ModemManager (test mode, debug log in logs/ModemManager-N.log
        for the Nth start), wait for its name on the bus, then (announce)
        SetProfile and wait for the modem object."""
        if self.mm is not None and self.mm.running():
            raise RigError("ModemManager is already running")
        self.mm_starts += 1
        self.mm = self.procs.start("ModemManager", "mm", [
            labmod.tool("ModemManager"), "--test-enable", "--no-auto-scan", "--test-no-udev",
            "--test-no-suspend-resume", "--test-no-qrtr", "--debug", "--log-level=DEBUG",
            "--log-timestamps", f"--log-file={self.logs / f'ModemManager-{self.mm_starts}.log'}"])
        self.wait_until(lambda: self.name_owner(MM_SERVICE), self.ready_timeout, "ModemManager on the bus",
                   watch=self.mm)
        if announce:
            self.set_profile()
            return self.wait_modem()
        return None

    def stop_modemmanager(self):
        """SIGTERM ModemManager and wait for it (KILL after 5 s) and its name to go."""
        if self.mm is not None:
            self.procs.stop(self.mm)
            self.mm = None
        self.wait_until(lambda: not self.name_owner(MM_SERVICE), 5, "ModemManager's name to leave the bus")

    def restart_modemmanager(self) -> str:
        """Stop and start ModemManager, announce the modem again; its new path."""
        self.stop_modemmanager()
        return self.start_modemmanager()

    def set_profile(self):
        """Announce the emulator's ports to ModemManager (what udev does for a
        real device)."""
        self._run(set_profile_argv(self.bus_address, self.profile_id, self.plugin, self.ports))

    # -- D-Bus -------------------------------------------------------------
    def _run(self, argv, timeout=15) -> subprocess.CompletedProcess:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RigError(f"command failed (exit {proc.returncode}): {' '.join(argv)}\n"
                           f"{proc.stderr.strip()}{self._details()}")
        return proc

    def busctl(self, *args):
        """busctl --address=BUS --json=short ARGS: the parsed, unwrapped JSON
        ("data" of a reply), or None for a reply without data."""
        out = self._run(busctl_argv(self.bus_address, *args)).stdout.strip()
        if not out:
            return None
        return unwrap(json.loads(out))

    def name_owner(self, name: str) -> Optional[str]:
        proc = subprocess.run(busctl_argv(self.bus_address, "call", "org.freedesktop.DBus",
                                          "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                          "GetNameOwner", "s", name),
                              capture_output=True, text=True, timeout=15)
        if proc.returncode != 0:
            return None
        return unwrap(json.loads(proc.stdout))[0]

    def managed_objects(self) -> dict:
        """ModemManager's ObjectManager view: {path: {interface: {prop: value}}}."""
        return self.busctl("call", MM_SERVICE, MM_PATH, "org.freedesktop.DBus.ObjectManager",
                           "GetManagedObjects")[0]

    def modems(self) -> dict:
        """{path: Modem interface properties} of the objects that carry the
        Modem interface (objects left without interfaces are not modems)."""
        return {path: ifaces[MM_MODEM] for path, ifaces in self.managed_objects().items()
                if MM_MODEM in ifaces}

    def modem_path(self) -> Optional[str]:
        """The path of the rig's modem (by equipment id), or None."""
        for path, props in self.modems().items():
            if props.get("EquipmentIdentifier") == self.equipment_id:
                return path
        return None

    def properties(self, path: str, interface: str = MM_MODEM) -> dict:
        return self.managed_objects().get(path, {}).get(interface, {})

    def wait_modem(self, timeout: float = 15.0, other_than: Optional[str] = None) -> str:
        """Wait until the modem is on the bus (at another path than
        `other_than`); its path."""
        def found():
            path = self.modem_path()
            return path if path and path != other_than else None
        return self.wait_until(found, timeout, "the modem object" +
                          (f" at a path other than {other_than}" if other_than else ""))

    def wait_gone(self, path: str, timeout: float = 10.0):
        """Wait until no modem is at `path` any more."""
        self.wait_until(lambda: path not in self.modems(), timeout, f"{path} to leave the bus")

    def wait_property(self, path: str, name: str, predicate, timeout: float = 10.0,
                      interface: str = MM_MODEM):
        """Wait until predicate(value of property `name`) holds; the value."""
        last = []

        def check():
            value = self.properties(path, interface).get(name)
            last[:] = [value]
            return (value,) if predicate(value) else None
        try:
            return self.wait_until(check, timeout, f"{interface}.{name} of {path}")[0]
        except RigError as exc:
            raise RigError(f"{exc}\nlast value: {last[0] if last else None!r}") from None

    # -- mmcli -------------------------------------------------------------
    def mmcli(self, *args, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        """mmcli ARGS against the rig's bus (no shell)."""
        argv = ["mmcli", *args]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": self.bus_address})
        if check and proc.returncode != 0:
            raise RigError(f"mmcli failed (exit {proc.returncode}): {' '.join(argv)}\n"
                           f"{proc.stdout}{proc.stderr}{self._details()}")
        return proc

    def mmcli_json(self, *args) -> dict:
        """mmcli -J ARGS, parsed."""
        return json.loads(self.mmcli("-J", *args).stdout)

    # -- the emulator ------------------------------------------------------
    def control(self, request: dict) -> dict:
        """One request on the emulator's control channel; RigError if refused."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(str(self.control_path))
            s.sendall((json.dumps(request) + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
        reply = json.loads(buf)
        if not reply.get("ok"):
            raise RigError(f"atmodem refused {request}: {reply.get('error')}")
        return reply

    def set_network(self, **settings) -> dict:
        """atmodem "set" (see atmodem.py); the emulator's state afterwards."""
        return self.control({"op": "set", **settings})["state"]

    def set_registration(self, state: str) -> dict:
        return self.set_network(registration=state)

    def set_operator(self, name: str, code: str) -> dict:
        return self.set_network(operator_name=name, operator_code=code)

    def set_act(self, act: str) -> dict:
        return self.set_network(act=act)

    def set_signal(self, **levels) -> dict:
        """csq_rssi=, csq_ber=, rsrp_dbm=, rsrq_db=, rscp_dbm=, ecno_db=, rxlev=."""
        return self.set_network(**levels)

    def set_sim(self, state: str) -> dict:
        return self.set_network(sim=state)

    def set_data_ok(self, ok: bool) -> dict:
        return self.set_network(data_ok=ok)

    def drop_data(self) -> list:
        """The network ends the data call (see atmodem.py); the cids dropped."""
        return self.control({"op": "drop_data"})["dropped"]

    def emulator_state(self) -> dict:
        return self.control({"op": "get"})["state"]

    def log(self, since: int = 0) -> list:
        """The emulator's log entries from sequence number `since` on."""
        return self.control({"op": "log", "since": since})["entries"]

    def log_mark(self) -> int:
        """The sequence number the next log entry will get (for log(since=))."""
        return self.control({"op": "log", "since": 1 << 62})["next"]

    def commands(self, since: int = 0) -> list:
        return [e["cmd"] for e in self.log(since) if "cmd" in e]

    def replug(self, seconds: float = 1.0):
        """The modem drops off and comes back after `seconds` (a USB replug):
        the announcer removes and re-adds it."""
        self.control({"op": "unplug", "seconds": seconds})

    # -- helpers -----------------------------------------------------------
    def wait_until(self, fn, timeout: float, what: str, watch=None):
        """Poll fn() every 50 ms until it returns something true (returned);
        RigError naming `what`, with the logs, after `timeout` seconds or when
        the LabProcess `watch` exits first."""
        deadline = time.monotonic() + timeout
        while True:
            value = fn()
            if value:
                return value
            if watch is not None and not watch.running():
                raise RigError(f"{watch.name} exited ({watch.popen.returncode}) while waiting "
                               f"for {what}{self._details()}")
            if time.monotonic() >= deadline:
                raise RigError(f"no {what} within {timeout}s{self._details()}")
            time.sleep(POLL_SECONDS)

    def _details(self) -> str:
        return f"\n{self.logs_text()}" if self.logs is not None else ""

    def modemmanager_log(self) -> str:
        """The debug log of the current (latest) ModemManager run."""
        return labmod.read_log(self.logs / f"ModemManager-{self.mm_starts}.log")

    def logs_text(self, tail: int = 6000) -> str:
        """The tails of the rig's logs (ModemManager's debug log, the emulator's
        command log, polkit, announcer, programs' output)."""
        if self.procs is None or self.logs is None or not self.logs.exists():
            return ""
        return self.procs.logs_text(tail)


# -- the announcer (udev's part) -------------------------------------------------

@contextlib.contextmanager
def rig_for_test(request, connect=False):
    """A fresh ModemRig for one pytest test (`request`), its modem's bearer connected
    when `connect` (as a connection manager would leave it); its logs are printed
    when the test failed."""
    with ModemRig() as rig:
        if connect:
            rig.mmcli("-m", rig.modem_path(), "--simple-connect=apn=internet")
        yield rig
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            print(f"\n--- modem rig logs ({rig.dir}) ---\n{rig.logs_text()}")


def announce_main(argv=None) -> int:
    """Subscribe to the emulator's port events and call SetProfile on each
    ("gone": ModemManager drops the modem; "back": it creates a new one).
    Events that queued up while a call ran are coalesced into the latest."""
    ap = argparse.ArgumentParser(prog="modemrig.py announce")
    ap.add_argument("--control", required=True)
    ap.add_argument("--bus", required=True)
    ap.add_argument("--id", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--port", action="append", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(args.log, "a", buffering=1) as log, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(args.control)
        s.sendall(b'{"op": "watch"}\n')
        buf = b""
        first = None
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return 0                       # the emulator is gone
            buf += chunk
            *lines, buf = buf.split(b"\n")
            events = [json.loads(line) for line in lines if line.strip()]
            if first is None and events:
                first = events.pop(0)
                if not first.get("ok"):
                    print(f"watch refused: {first}", file=sys.stderr)
                    return 1
                log.write(f"{time.monotonic():.6f} watching (up={first['up']}, boots={first['boots']})\n")
                print("ready", flush=True)
            if not events:
                continue
            event = events[-1]
            started = time.monotonic()
            proc = subprocess.run(set_profile_argv(args.bus, args.id, args.plugin, args.port),
                                  capture_output=True, text=True, timeout=30)
            skipped = "".join(f" (after {e['event']}, coalesced)" for e in events[:-1])
            log.write(f"{started:.6f} ports {event['event']} (boot {event['boots']}){skipped}: "
                      f"SetProfile exit {proc.returncode} in {time.monotonic() - started:.3f}s "
                      f"{proc.stderr.strip()}\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "announce":
        sys.exit(announce_main(sys.argv[2:]))
    print("usage: modemrig.py announce --control PATH --bus ADDRESS --id ID --plugin NAME "
          "--port PORT... --log FILE", file=sys.stderr)
    sys.exit(64)
