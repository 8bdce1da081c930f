"""Network-namespace lab for the uplinkd integration tests.

Builds a gateway namespace ("gw") whose uplinks are veth pairs, each leading
to its own upstream namespace:

    gw:eth0  <-> inet:up-eth0    10.231.1.2/24 <-> 10.231.1.1/24   default metric 300
    gw:wlan0 <-> portal:up-wlan0 10.231.2.2/24 <-> 10.231.2.1/24   default metric 200
    gw:wwan0 <-> dead:up-wwan0   10.231.3.2/24 <-> 10.231.3.1/24   default metric 100
    gw:eth1  <-> ll:up-eth1      169.254.23.2/16 (gw side only, no route)

Every upstream namespace carries 203.0.113.80/32 on its loopback, so the
"internet" address exists only inside the lab. All commands are run through
subprocess with argument lists; nothing ever talks to a host outside the
namespaces created here.

Namespace names are "ul<pid>-<seq>-<role>"; namespaces of that pattern whose
pid is no longer alive are swept (leftovers of a crashed run).
"""

import atexit
import itertools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
LABSERVER = HERE / "labserver.py"
REPO_ROOT = HERE.parents[1]

INTERNET_ADDR = "203.0.113.80"
PREFIX = f"ul{os.getpid()}"
ROLES = ("gw", "inet", "portal", "dead", "ll")
# Any role name: dnslab.py builds other topologies with the same naming scheme.
_NAME_RE = re.compile(r"^ul(\d+)-(\d+)-([a-z0-9]+)$")
_seq = itertools.count(1)
NFT_TABLE = "uplinkd_lab"
ETC_NETNS = "/etc/netns"      # `ip netns exec NAME` bind-mounts /etc/netns/NAME/* over /etc


class LabError(RuntimeError):
    pass


@dataclass(frozen=True)
class Uplink:
    iface: str            # name inside the gw namespace
    role: str             # upstream namespace role
    gw_addr: str
    up_addr: Optional[str]
    gateway: Optional[str]
    metric: Optional[int]

    @property
    def peer(self) -> str:
        return f"up-{self.iface}"


UPLINKS = (
    Uplink("eth0", "inet", "10.231.1.2/24", "10.231.1.1/24", "10.231.1.1", 300),
    Uplink("wlan0", "portal", "10.231.2.2/24", "10.231.2.1/24", "10.231.2.1", 200),
    Uplink("wwan0", "dead", "10.231.3.2/24", "10.231.3.1/24", "10.231.3.1", 100),
    Uplink("eth1", "ll", "169.254.23.2/16", None, None, None),
)
UPLINK_BY_IFACE = {u.iface: u for u in UPLINKS}


def uplinkd_path() -> Path:
    """$UPLINKD if set, else <repo root>/.build/debug/uplinkd."""
    env = os.environ.get("UPLINKD")
    return Path(env) if env else REPO_ROOT / ".build" / "debug" / "uplinkd"


def binary_problem(binary=None) -> Optional[str]:
    """Why `binary` (default uplinkd_path()) cannot be run, or None."""
    binary = Path(binary) if binary else uplinkd_path()
    if not binary.is_file() or not os.access(binary, os.X_OK):
        return (f"uplinkd binary not found at {binary}: run `swift build` first "
                f"(or set UPLINKD=/path/to/uplinkd)")
    return None


def run(argv, *, check=True, input=None, timeout=30):
    """Run argv (a list, never a shell string); raise LabError on failure."""
    proc = subprocess.run(argv, input=input, capture_output=True, text=True,
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise LabError(f"command failed (exit {proc.returncode}): {' '.join(argv)}\n"
                       f"{proc.stderr.strip()}")
    return proc


def _netns_names():
    out = run(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_ns_pids(ns: str):
    """Kill processes we started inside one of our own lab namespaces."""
    proc = run(["ip", "netns", "pids", ns], check=False)
    for tok in proc.stdout.split():
        if tok.isdigit():
            try:
                os.kill(int(tok), signal.SIGKILL)
            except ProcessLookupError:
                pass


def _delete_ns(ns: str):
    _kill_ns_pids(ns)
    run(["ip", "netns", "delete", ns], check=False)


def _sweep_etc_netns(owner_matches):
    """Remove /etc/netns/NAME directories of lab namespaces whose creator pid
    satisfies owner_matches(pid)."""
    try:
        names = os.listdir(ETC_NETNS)
    except OSError:
        return
    for name in names:
        m = _NAME_RE.match(name)
        if m and owner_matches(int(m.group(1))):
            shutil.rmtree(os.path.join(ETC_NETNS, name), ignore_errors=True)


def sweep_stale():
    """Delete lab namespaces left behind by dead test runs (our prefix only), and
    their /etc/netns/NAME directories (dnslab.py creates some)."""
    for name in _netns_names():
        m = _NAME_RE.match(name)
        if m and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            _delete_ns(name)
    _sweep_etc_netns(lambda pid: pid != os.getpid() and not _pid_alive(pid))


def sweep_own():
    """Delete every lab namespace created by this process (atexit safety net)."""
    try:
        names = _netns_names()
    except Exception:
        return
    for name in names:
        m = _NAME_RE.match(name)
        if m and int(m.group(1)) == os.getpid():
            _delete_ns(name)
    _sweep_etc_netns(lambda pid: pid == os.getpid())


atexit.register(sweep_own)


def unavailable_reason() -> Optional[str]:
    """Why the lab cannot run here, or None if network namespaces work."""
    if not sys.platform.startswith("linux"):
        return "network-namespace tests need Linux"
    if os.geteuid() != 0:
        return "network-namespace tests need root (run: sudo python3 -m pytest -v Tests/integration)"
    if shutil.which("ip") is None:
        return "iproute2 ('ip') is not installed"
    probe = f"{PREFIX}-0-probe"
    proc = run(["ip", "netns", "add", probe], check=False)
    if proc.returncode != 0:
        return f"'ip netns add' failed: {proc.stderr.strip()}"
    run(["ip", "netns", "delete", probe], check=False)
    return None


def preflight(binary=None, tools=()) -> Optional[str]:
    """What keeps a standalone script (a benchmark) from running `binary`
    in the lab, or None: a missing tool, no network namespaces, no binary."""
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (bash .ci/setup installs it)"
    reason = unavailable_reason()
    if reason is not None:
        return f"cannot build the namespace lab: {reason}"
    return binary_problem(binary)


class LabServer:
    """labserver.py running inside one upstream namespace."""

    def __init__(self, ns: str, mode: str, log: Optional[Path] = None,
                 ready_timeout: float = 10.0, bind: str = INTERNET_ADDR):
        self.ns, self.mode, self.log, self.bind = ns, mode, log, bind
        self._stderr = tempfile.TemporaryFile()
        self._mode_dir = tempfile.mkdtemp(prefix="labserver-mode-")
        self.mode_file = Path(self._mode_dir) / "mode"
        self.mode_file.write_text(mode + "\n")
        argv = ["ip", "netns", "exec", ns, sys.executable, str(LABSERVER),
                "--mode", mode, "--mode-file", str(self.mode_file),
                "--bind", bind, "--port", "80"]
        if log is not None:
            argv += ["--log", str(log)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self._stderr)
        try:
            self._wait_ready(ready_timeout)
        except BaseException:
            self.stop()
            raise

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def _wait_ready(self, timeout: float):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        buf = b""
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LabError(f"labserver ({self.mode}) in {self.ns} not ready after "
                               f"{timeout}s; stderr:\n{self.stderr_text()}")
            readable, _, _ = select.select([fd], [], [], left)
            if readable:
                chunk = os.read(fd, 256)
                if not chunk:
                    self.proc.wait(timeout=5)
                    raise LabError(f"labserver ({self.mode}) in {self.ns} exited with "
                                   f"{self.proc.returncode} before ready; stderr:\n"
                                   f"{self.stderr_text()}")
                buf += chunk
        if buf.split(b"\n", 1)[0].strip() != b"ready":
            raise LabError(f"labserver printed {buf!r} instead of 'ready'")

    def set_mode(self, mode: str):
        """Switch the running server to another mode; takes effect with the next
        request (the file is replaced atomically, so no request sees a torn name)."""
        tmp = self.mode_file.with_name("mode.tmp")
        tmp.write_text(mode + "\n")
        os.replace(tmp, self.mode_file)
        self.mode = mode

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if self.proc.stdout:
            self.proc.stdout.close()
        self._stderr.close()
        shutil.rmtree(self._mode_dir, ignore_errors=True)

    def log_lines(self):
        if self.log is None or not Path(self.log).exists():
            return []
        return [ln.split() for ln in Path(self.log).read_text().splitlines() if ln.strip()]


class Lab:
    """The namespace topology. Use as a context manager; destroy() is idempotent.
    Subclasses (dnslab.DnsLab) set other `roles` and `uplinks`."""

    roles = ROLES
    uplinks = UPLINKS

    def __init__(self):
        self.tag = f"{PREFIX}-{next(_seq)}"
        self.ns = {role: f"{self.tag}-{role}" for role in self.roles}
        self._created = []
        self._servers = []

    @property
    def gw(self) -> str:
        return self.ns["gw"]

    # -- helpers ---------------------------------------------------------
    def exec_argv(self, role: str, argv) -> list:
        return ["ip", "netns", "exec", self.ns[role], *map(str, argv)]

    def ip(self, role: str, *args, check=True):
        return run(["ip", "-n", self.ns[role], *args], check=check)

    def link(self, iface: str, role: str = "gw") -> dict:
        out = self.ip(role, "-j", "link", "show", "dev", iface).stdout
        return json.loads(out)[0]

    def has_lower_up(self, iface: str, role: str = "gw") -> bool:
        return "LOWER_UP" in self.link(iface, role).get("flags", [])

    def wait_lower_up(self, iface: str, want: bool, role: str = "gw",
                      timeout: float = 5.0):
        """Poll (bounded) until LOWER_UP is present (want=True) or absent."""
        deadline = time.monotonic() + timeout
        while True:
            if self.has_lower_up(iface, role) == want:
                return
            if time.monotonic() >= deadline:
                raise LabError(f"{role}:{iface} LOWER_UP did not become {want} "
                               f"within {timeout}s: {self.link(iface, role)}")
            time.sleep(0.02)

    def links(self, role: str = "gw") -> dict:
        """{name: `ip -j link` object} of every interface in a namespace."""
        return {l["ifname"]: l for l in json.loads(self.ip(role, "-j", "link", "show").stdout)}

    def addresses(self, iface: str, role: str = "gw") -> list:
        """The `addr_info` list of `ip -j addr show dev IFACE`."""
        return json.loads(self.ip(role, "-j", "addr", "show", "dev", iface).stdout)[0]["addr_info"]

    def ip_batch(self, role: str, commands):
        """Run many ip commands in one `ip -n NS -batch -` process (a real burst)."""
        return run(["ip", "-n", self.ns[role], "-batch", "-"],
                   input="".join(f"{c}\n" for c in commands), timeout=120)

    def wait_links(self, predicate, what: str, role: str = "gw", timeout: float = 10.0) -> dict:
        """Poll (bounded) `ip -j link` until predicate(links()) is true; returns links()."""
        deadline = time.monotonic() + timeout
        while True:
            links = self.links(role)
            if predicate(links):
                return links
            if time.monotonic() >= deadline:
                raise LabError(f"{role}: {what} not reached within {timeout}s")
            time.sleep(0.02)

    def peer_of(self, iface: str):
        """(role, peer interface name) of the far end of a gw uplink."""
        u = {u.iface: u for u in self.uplinks}[iface]
        return u.role, u.peer

    # -- build / destroy -------------------------------------------------
    def build(self):
        sweep_stale()
        try:
            for role in self.roles:
                run(["ip", "netns", "add", self.ns[role]])
                self._created.append(self.ns[role])
                self.ip(role, "link", "set", "lo", "up")
                for key in ("all", "default"):
                    run(self.exec_argv(role, ["sysctl", "-q", "-w",
                                              f"net.ipv4.conf.{key}.rp_filter=0"]))
                if role != "gw":
                    self.ip(role, "addr", "add", f"{INTERNET_ADDR}/32", "dev", "lo")
                    # Upstreams play routers, which send no router solicitations
                    # (Linux hosts keep sending them): no packets on an idle uplink
                    # that no real upstream would send.
                    run(self.exec_argv(role, ["sysctl", "-q", "-w",
                                              "net.ipv6.conf.all.router_solicitations=0",
                                              "net.ipv6.conf.default.router_solicitations=0"]))
            for u in self.uplinks:
                # Created directly with its final name inside gw; peer inside upstream.
                self.ip("gw", "link", "add", u.iface, "type", "veth",
                        "peer", "name", u.peer, "netns", self.ns[u.role])
                self.ip("gw", "addr", "add", u.gw_addr, "dev", u.iface)
                if u.up_addr:
                    self.ip(u.role, "addr", "add", u.up_addr, "dev", u.peer)
                self.ip(u.role, "link", "set", u.peer, "up")
                self.ip("gw", "link", "set", u.iface, "up")
            for u in self.uplinks:
                self.wait_lower_up(u.iface, True)
                if u.gateway:
                    self.ip("gw", "route", "add", "default", "via", u.gateway,
                            "dev", u.iface, "metric", str(u.metric))
        except BaseException:
            self.destroy()
            raise
        return self

    def destroy(self):
        for srv in self._servers:
            try:
                srv.stop()
            except Exception:
                pass
        self._servers.clear()
        for ns in reversed(self._created):
            _delete_ns(ns)
        self._created.clear()

    def __enter__(self):
        return self.build()

    def __exit__(self, *exc):
        self.destroy()
        return False

    # -- upstream behaviours ---------------------------------------------
    def serve(self, role: str, mode: str, log: Optional[Path] = None,
              bind: str = INTERNET_ADDR) -> LabServer:
        """Start labserver.py in an upstream namespace; returns once it listens
        (on `bind`, port 80: the lab internet address unless told otherwise)."""
        srv = LabServer(self.ns[role], mode, log, bind=bind)
        self._servers.append(srv)
        return srv

    def stop_server(self, srv: LabServer):
        srv.stop()
        if srv in self._servers:
            self._servers.remove(srv)

    def blackhole(self, role: str = "dead"):
        ruleset = (f"table inet {NFT_TABLE} {{\n"
                   f"  chain input {{\n"
                   f"    type filter hook input priority 0; policy accept;\n"
                   f"    ip daddr {INTERNET_ADDR} drop\n"
                   f"  }}\n"
                   f"}}\n")
        run(self.exec_argv(role, ["nft", "-f", "-"]), input=ruleset)

    def unblackhole(self, role: str = "dead"):
        run(self.exec_argv(role, ["nft", "delete", "table", "inet", NFT_TABLE]),
            check=False)

    @contextmanager
    def blackholed(self, role: str, **options):
        """blackhole(role, **options) for the duration of a with-block (subclasses
        take options: DnsLab's http= and dns=)."""
        self.blackhole(role, **options)
        try:
            yield
        finally:
            self.unblackhole(role)
