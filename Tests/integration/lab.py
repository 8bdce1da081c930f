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

The other labs (dnslab.py, failoverlab.py) subclass Lab (their own roles,
uplinks and _make(); files and programs through _make_files() and
LabProcesses, which start, log and stop what they run in their namespaces)
and share its helpers: wait_ready_line (a server's "ready" line), read_log,
tool/missing_tools, Lab.nettool and Lab.wait_uplinks.
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
NETTOOL = HERE / "nettool.py"
REPO_ROOT = HERE.parents[1]

INTERNET_ADDR = "203.0.113.80"
PREFIX = f"ul{os.getpid()}"
ROLES = ("gw", "inet", "portal", "dead", "ll")
# Any role name: dnslab.py builds other topologies with the same naming scheme.
_NAME_RE = re.compile(r"^ul(\d+)-(\d+)-([a-z0-9]+)$")
_seq = itertools.count(1)
NFT_TABLE = "uplinkd_lab"
ETC_NETNS = "/etc/netns"      # `ip netns exec NAME` bind-mounts /etc/netns/NAME/* over /etc
# No duplicate address detection: IPv6 addresses usable at once (Lab.namespace_sysctls).
NO_DAD = ("net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")


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


def tool_path(name: str) -> Optional[str]:
    """Where program `name` is installed: on PATH, else in /usr/sbin or /sbin
    (often not on a user's PATH); None if nowhere."""
    found = shutil.which(name)
    if found:
        return found
    return next((str(Path(d, name)) for d in ("/usr/sbin", "/sbin") if Path(d, name).exists()), None)


def tool(name: str) -> str:
    """tool_path(name), or LabError when it is not installed."""
    path = tool_path(name)
    if path is None:
        raise LabError(f"{name} is not installed")
    return path


def missing_tools(names) -> list:
    """The programs among `names` that tool_path() does not find."""
    return [n for n in names if tool_path(n) is None]


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


def first_line(popen: subprocess.Popen, timeout: float, what: str, details, error=None) -> str:
    """The first line `popen` writes to its stdout (a pipe), waited for with a
    bound. `error` (LabError unless given) on a timeout or an early exit: it names
    `what` and ends with details() (stderr, logs)."""
    error = error or LabError
    deadline = time.monotonic() + timeout
    fd = popen.stdout.fileno()
    buf = b""
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise error(f"{what}: no line after {timeout}s{details()}")
        readable, _, _ = select.select([fd], [], [], left)
        if readable:
            chunk = os.read(fd, 512)
            if not chunk:
                popen.wait(timeout=5)
                raise error(f"{what} exited with {popen.returncode} before its first line{details()}")
            buf += chunk
    return buf.split(b"\n", 1)[0].decode(errors="replace").strip()


def wait_ready_line(popen: subprocess.Popen, timeout: float, what: str, details):
    """Wait (bounded) for the first line on `popen`'s stdout (a pipe) and check
    that it says "ready" (labserver.py, inetserver.py and lanclient.py print it
    once they work). LabError on a timeout, an early exit or another line."""
    line = first_line(popen, timeout, what, details)
    if line != "ready":
        raise LabError(f"{what} printed {line!r} instead of 'ready'{details()}")


def read_log(path: Path, offset: int = 0) -> str:
    """The text of a log file from byte `offset` on ("" while there is no file)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except FileNotFoundError:
        return ""


class LabProcess:
    """One program a lab started in one of its namespaces (LabProcesses.start)."""

    def __init__(self, name: str, popen: subprocess.Popen, log: Path, file):
        self.name, self.popen, self.log, self._file = name, popen, log, file

    def running(self) -> bool:
        return self.popen.poll() is None

    def signal_group(self, sig):
        """Send sig to the program's process group (it leads a session of its own)."""
        try:
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:
            pass


class LabProcesses:
    """The programs a lab runs in its namespaces (dnsmasq, DHCP clients, servers,
    clients) for dnslab.DnsLab and failoverlab.FailoverLab. Each runs through
    `exec_argv(role, argv)` in a session of its own, its output (stdout and
    stderr; stderr only when stdout is the "ready" pipe) appended to
    LOGS/NAME.out; stopping one ends its whole process group (TERM, KILL after
    5 s), so whatever it started (a DHCP client's script) goes with it."""

    def __init__(self, logs: Path, exec_argv):
        self.logs, self._exec_argv = logs, exec_argv
        self._procs = []

    def start(self, name: str, role: str, argv, stdout=None) -> LabProcess:
        log = self.logs / f"{name}.out"
        f = open(log, "ab")
        p = subprocess.Popen(self._exec_argv(role, argv), stdin=subprocess.DEVNULL,
                             stdout=stdout if stdout is not None else f,
                             stderr=f if stdout is not None else subprocess.STDOUT,
                             start_new_session=True)
        proc = LabProcess(name, p, log, f)
        self._procs.append(proc)
        return proc

    def start_ready(self, name: str, role: str, argv, timeout: float = 15.0) -> LabProcess:
        """start() a program that prints "ready" on stdout; wait (bounded) for it."""
        proc = self.start(name, role, argv, stdout=subprocess.PIPE)
        try:
            wait_ready_line(proc.popen, timeout, f"{name} in {role}", lambda: f"\n{self.logs_text()}")
        except BaseException:
            self.stop(proc)
            raise
        proc.popen.stdout.close()
        return proc

    def _reap(self, proc: LabProcess, timeout: float):
        try:
            proc.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.signal_group(signal.SIGKILL)
            proc.popen.wait(timeout=5)
        if not proc._file.closed:
            proc._file.close()
        if proc.popen.stdout and not proc.popen.stdout.closed:
            proc.popen.stdout.close()

    def stop(self, proc: LabProcess):
        if proc.running():
            proc.signal_group(signal.SIGTERM)
        self._reap(proc, 5)
        if proc in self._procs:
            self._procs.remove(proc)

    def stop_all(self):
        """Stop every program, newest first, all TERMed before any is waited for."""
        for proc in reversed(self._procs):
            if proc.running():
                proc.signal_group(signal.SIGTERM)
        deadline = time.monotonic() + 5
        for proc in reversed(self._procs):
            self._reap(proc, max(0.1, deadline - time.monotonic()))
        self._procs.clear()

    def check_running(self):
        """LabError (with the logs) if any program has exited."""
        dead = [p.name for p in self._procs if not p.running()]
        if dead:
            raise LabError(f"lab processes exited: {dead}\n{self.logs_text()}")

    def logs_text(self, tail: int = 4000) -> str:
        """The tail of every file in LOGS (for failure messages): the programs'
        output and the logs they write there themselves."""
        parts = []
        for path in sorted(self.logs.iterdir()):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            parts.append(f"--- {path.name} ---\n{text[-tail:]}")
        return "\n".join(parts)


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
        wait_ready_line(self.proc, timeout, f"labserver ({self.mode}) in {self.ns}",
                        lambda: f"; stderr:\n{self.stderr_text()}")

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
    Subclasses (dnslab.DnsLab, failoverlab.FailoverLab) set other `roles`,
    `uplinks` and `namespace_sysctls`, build in _make() (build() destroys what
    was made if it fails), and may keep files and programs (_make_files())."""

    roles = ROLES
    uplinks = UPLINKS
    # Set in every namespace: no IPv4 reverse-path filter (several default
    # routes); "default" is what interfaces created later inherit.
    namespace_sysctls = ("net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")

    def __init__(self):
        self.tag = f"{PREFIX}-{next(_seq)}"
        self.ns = {role: f"{self.tag}-{role}" for role in self.roles}
        self._created = []
        self._servers = []
        self.dir: Optional[Path] = None
        self.procs: Optional[LabProcesses] = None

    def _make_files(self, kind: str, subdirs):
        """self.dir, a temporary directory with `subdirs` (logs/ among them), all
        readable by dnsmasq (it runs unprivileged), and self.procs, whose programs
        log to dir/logs. destroy() stops the programs and removes the directory."""
        self.dir = Path(tempfile.mkdtemp(prefix=f"{self.tag}-{kind}-"))
        os.chmod(self.dir, 0o755)
        for sub in subdirs:
            (self.dir / sub).mkdir()
            os.chmod(self.dir / sub, 0o755)
        self.procs = LabProcesses(self.dir / "logs", self.exec_argv)

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

    def uplink(self, iface: str):
        """The entry of `uplinks` for gw interface `iface` (KeyError if none)."""
        return {u.iface: u for u in self.uplinks}[iface]

    def peer_of(self, iface: str):
        """(role, peer interface name) of the far end of a gw uplink."""
        u = self.uplink(iface)
        return u.role, u.peer

    def nettool(self, role: str, args, timeout: float, dev: Optional[str] = None) -> dict:
        """nettool.py ARGS (bound to `dev` if given) in namespace `role`: its JSON answer."""
        if dev:
            args = [*args, "--dev", dev]
        proc = run(self.exec_argv(role, [sys.executable, NETTOOL, *args]), timeout=timeout + 10)
        return json.loads(proc.stdout)

    def wait_uplinks(self, missing, timeout: float, what: str, period: float = 0.1):
        """Poll (bounded) until missing(uplink) is None for every uplink (else it
        says what is missing). LabError, with the programs' logs, when `timeout`
        passes first or a program of the lab exits."""
        deadline = time.monotonic() + timeout
        while True:
            left = {u.iface: m for u in self.uplinks if (m := missing(u))}
            if not left:
                return
            if self.procs is not None:
                self.procs.check_running()
            if time.monotonic() >= deadline:
                logs = f"\n{self.procs.logs_text()}" if self.procs is not None else ""
                raise LabError(f"{what} within {timeout}s: {left}{logs}")
            time.sleep(period)

    # -- build / destroy -------------------------------------------------
    def build(self):
        sweep_stale()
        try:
            self._make()
        except BaseException:
            self.destroy()
            raise
        return self

    def _make(self):
        self._make_namespaces()
        for u in self.uplinks:
            self._add_veth(u)
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

    def _sysctl(self, role: str, *settings):
        run(self.exec_argv(role, ["sysctl", "-q", "-w", *settings]))

    def _make_namespaces(self):
        """Every role's namespace, lo up, namespace_sysctls set; the upstreams
        (the uplinks' roles) get the lab internet address on lo."""
        upstreams = {u.role for u in self.uplinks}
        for role in self.roles:
            run(["ip", "netns", "add", self.ns[role]])
            self._created.append(self.ns[role])
            self.ip(role, "link", "set", "lo", "up")
            self._sysctl(role, *self.namespace_sysctls)
            if role in upstreams:
                self.ip(role, "addr", "add", f"{INTERNET_ADDR}/32", "dev", "lo")
                # Upstreams play routers, which send no router solicitations
                # (Linux hosts keep sending them, backing off): no packets on an
                # idle uplink that no real upstream would send.
                self._sysctl(role, "net.ipv6.conf.all.router_solicitations=0",
                             "net.ipv6.conf.default.router_solicitations=0")

    def _add_veth(self, u):
        """Uplink u's veth: created directly with its final name inside gw, its
        peer (u.peer) inside the upstream namespace u.role."""
        self.ip("gw", "link", "add", u.iface, "type", "veth",
                "peer", "name", u.peer, "netns", self.ns[u.role])

    def destroy(self):
        if self.procs is not None:
            self.procs.stop_all()
        for srv in self._servers:
            try:
                srv.stop()
            except Exception:
                pass
        self._servers.clear()
        for ns in reversed(self._created):
            _delete_ns(ns)
        self._created.clear()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

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
