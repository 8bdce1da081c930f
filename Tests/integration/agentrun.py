"""Drives `uplinkd run` (the agent) for the tests (through conftest.py's `agent`
fixture) and the benchmarks (Tests/bench/bench_agent.py, bench_compare.py).

AgentRun writes a configuration and a hooks directory, starts
`ip netns exec GW uplinkd run --config F --state F --hooks-dir D -v -v` with
stderr going to a file, and offers parsers for the state file and for the log
of the recording hook, plus wait_until(predicate, timeout) polling those files
with a deadline, and wait_hooks(): the one way tests wait for hook output,
for exactly the runs (event, interface) they read. Every configuration it writes says `default-probes = no` and
lists only probes to the lab address 203.0.113.80.
"""

import os
import re
import signal
import subprocess
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from lab import INTERNET_ADDR, binary_problem, uplinkd_path

PROBES = (
    ("a", f"http://{INTERNET_ADDR}/generate_204", ()),
    ("b", f"http://{INTERNET_ADDR}/success.txt", (("expect-body", "success"),)),
)
AGENT_DEFAULTS = {
    "interval": "3s",
    "suspect-interval": "200ms",
    "failures-to-leave-online": "2",
    "successes-to-return": "2",
    "hold-down": "2s",
    "hook-timeout": "5s",
}
PORTAL_URL = f"http://{INTERNET_ADDR}/login?orig=1"
# One tab-separated line per run; empty variables stay empty fields.
HOOK_FIELDS = ("t", "event", "iface", "kind", "previous", "verdict", "reason",
               "portal", "primary", "previous_primary", "time", "primary_reason", "rtt_ms", "loss_pct")
_HOOK_VARS = ("UPLINK_EVENT", "UPLINK_INTERFACE", "UPLINK_KIND", "UPLINK_PREVIOUS",
              "UPLINK_VERDICT", "UPLINK_REASON", "UPLINK_PORTAL_URL", "UPLINK_PRIMARY",
              "UPLINK_PREVIOUS_PRIMARY", "UPLINK_TIME", "UPLINK_PRIMARY_REASON", "UPLINK_RTT_MS",
              "UPLINK_LOSS_PCT")


class AgentError(AssertionError):
    pass


def require_binary(path=None) -> Path:
    problem = binary_problem(path)
    if problem is not None:
        raise AgentError(problem)
    return Path(path) if path else uplinkd_path()


def config_text(agent=None, *, timeout="1s", uplinks=None, extra="", defaults=True,
                probes=PROBES) -> str:
    """An uplinkd.conf: [check] with lab probes only (`probes`: (name, url, expects)
    tuples, PROBES unless told), [agent] = AGENT_DEFAULTS updated by `agent` (a value
    None drops the key), optional [uplinks]."""
    keys = dict(AGENT_DEFAULTS) if defaults else {}
    keys.update(agent or {})
    lines = ["# written by agentrun.py: lab probes only", "[check]"]
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    lines += ["default-probes = no", "", "[agent]"]
    lines += [f"{k} = {v}" for k, v in keys.items() if v is not None]
    if uplinks:
        lines += ["", "[uplinks]", f"interfaces = {uplinks}"]
    for name, url, expects in probes:
        assert url.startswith(f"http://{INTERNET_ADDR}/"), f"not a lab probe: {url}"
        lines += ["", f"[probe {name}]", f"url = {url}"]
        lines += [f"{k} = {v}" for k, v in expects]
    text = "\n".join(lines) + "\n" + extra
    assert "default-probes = no" in text
    return text


def record_hook(log: Path) -> str:
    """POSIX sh hook appending one tab-separated line per run to `log`."""
    fmt = "\\t".join(["%s"] * len(HOOK_FIELDS)) + "\\n"
    args = " ".join(f'"${v}"' for v in _HOOK_VARS)
    return (f"#!/bin/sh\n"
            f"printf '{fmt}' \"$(date +%s.%N)\" {args} >> '{log}'\n")


def env_dump_hook(directory: Path) -> str:
    """POSIX sh hook writing its whole environment (`env -0`) to a new file in
    `directory` on every run; parse_env_dumps() reads them back in run order. Each
    file is written beside the directory and renamed into it, so a file a test sees
    there is complete."""
    part = f"'{directory}.part.'$$"
    return (f"#!/bin/sh\n"
            f"env -0 > {part} && mv {part} '{directory}/'\"$(date +%s%N).$$\"\n")


def parse_env_dumps(directory: Path) -> list:
    """[{name: value}] of every env_dump_hook run, oldest first."""
    return [env for _, env in _timed_env_dumps(directory)]


def _timed_env_dumps(directory: Path) -> list:
    """[(wall-clock seconds the hook wrote it, {name: value})] of every
    env_dump_hook run, oldest first (the file name is date +%s%N and the pid)."""
    dumps = []
    for path in sorted(Path(directory).iterdir(), key=lambda p: tuple(map(int, p.name.split(".")))):
        pairs = (item.split("=", 1) for item in path.read_bytes().decode().split("\0") if item)
        dumps.append((int(path.name.split(".")[0]) / 1e9, {k: v for k, v in pairs}))
    return dumps


def hook_fields(run) -> tuple:
    """(event, interface, verdict, reason) of one hook run, as the recording hook's
    log (HookEvent) or an env_dump_hook file (dict) tells it."""
    if isinstance(run, dict):
        return tuple(run.get(k) for k in ("UPLINK_EVENT", "UPLINK_INTERFACE", "UPLINK_VERDICT", "UPLINK_REASON"))
    return run.event, run.iface, run.verdict, run.reason


def _matches(item, run) -> bool:
    return all(w is None or w == f for w, f in zip(item, hook_fields(run)))


def hook_runs_missing(runs, wanted, latest=False) -> list:
    """The items of `wanted` that `runs` (HookEvents or env dicts, oldest first)
    do not hold. An item is (event, interface[, verdict[, reason]]); None matches
    anything. By default an item listed twice needs two runs, and each run answers
    one item, the most specific items first (so a wildcard never takes a run a
    specific item needs). latest=True: the item must be the latest run of its
    event about its interface (of a `primary` event, the latest primary event:
    its interface is the new primary), as a state that hooks have caught up with."""
    if latest:
        def last(item):
            return next((r for r in reversed(runs) if hook_fields(r)[0] == item[0]
                         and (item[0] == "primary" or item[1] is None or hook_fields(r)[1] == item[1])), None)
        return [item for item in wanted if (r := last(item)) is None or not _matches(item, r)]
    left = list(runs)
    missing = []
    for item in sorted(wanted, key=lambda w: sum(x is None for x in w)):
        match = next((i for i, r in enumerate(left) if _matches(item, r)), None)
        if match is None:
            missing.append(item)
        else:
            del left[match]
    return missing


@dataclass(frozen=True)
class HookEvent:
    t: float                 # wall clock when the hook started (date +%s.%N)
    event: str
    iface: str
    kind: str
    previous: str
    verdict: str
    reason: str
    portal: str
    primary: str
    previous_primary: str
    time: str
    primary_reason: str
    rtt_ms: str
    loss_pct: str

    @property
    def short(self) -> str:
        if self.event == "primary":
            return f"primary {self.previous_primary or '-'}->{self.primary or '-'}"
        if self.event == "outage":
            return f"outage over, primary {self.primary or '-'}"
        return f"verdict {self.iface} {self.previous}->{self.verdict} {self.reason}"


def parse_hook_log(text: str):
    events = []
    for line in text.splitlines():
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != len(HOOK_FIELDS):
            raise AgentError(f"hook log line has {len(fields)} fields, expected "
                             f"{len(HOOK_FIELDS)}: {line!r}")
        events.append(HookEvent(float(fields[0]), *fields[1:]))
    return events


def manual_facts() -> dict:
    """{'node': [names], 'uplink': [names]}: the facts uplinkd-state(5) lists between its
    "facts: begin" and "facts: end" comments (a unit test holds that list to the code's
    table), so these tests read by the names users read. Each fact is an entry whose
    tag is `.BI "NAME " FORM`, under `.SS Node facts` or `.SS Uplink facts`."""
    page = (Path(__file__).resolve().parents[2] / "packaging/debian/uplinkd-state.5").read_text()
    block = page.split('.\\" facts: begin\n', 1)[1].split('.\\" facts: end', 1)[0]
    facts = {"node": [], "uplink": []}
    subject = None
    for line in block.splitlines():
        if line.startswith(".SS "):
            subject = {"Node facts": "node", "Uplink facts": "uplink"}.get(line[4:])
        elif line.startswith('.BI "') and subject:
            facts[subject].append(line[5:].split(" ", 1)[0].replace("\\-", "-"))
    if not facts["node"] or not facts["uplink"]:
        raise AgentError("uplinkd-state.5 has no list of facts between its facts markers")
    return facts


def parse_state(text: str) -> dict:
    """The state file (format 2) by name: {'format', node facts ('written', 'pid',
    'stopped', 'primary', 'decision', 'hooks_done'...), 'uplinks': {name: {fact: value}},
    'order': [names]}; values percent-decoded, "-" for none. Refuses what a reader by
    uplinkd-state(5)'s rules could not read: a line that is not one fact, a fact repeated."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# uplinkd state, format 2"):
        raise AgentError(f"state file does not start with the format comment:\n{text}")
    st = {"uplinks": {}, "order": []}
    for line in lines:
        if not line or line.startswith("#"):
            continue
        fields = line.split(" ")
        if fields[0] == "uplink":
            if len(fields) != 4:
                raise AgentError(f"uplink line is not 'uplink IFACE FACT VALUE': {line!r}\n{text}")
            _, name, fact, value = fields
            if name not in st["uplinks"]:
                st["uplinks"][name] = {}
                st["order"].append(name)
            if fact in st["uplinks"][name]:
                raise AgentError(f"uplink fact {name} {fact} repeated\n{text}")
            st["uplinks"][name][fact] = value if value == "-" else urllib.parse.unquote(value)
        else:
            if len(fields) != 2:
                raise AgentError(f"node line is not 'FACT VALUE': {line!r}\n{text}")
            if fields[0] in st:
                raise AgentError(f"state key {fields[0]!r} repeated\n{text}")
            st[fields[0]] = fields[1]
    for key in ("format", "written", "pid", "stopped", "primary", "decision", "hooks_done"):
        if key not in st:
            raise AgentError(f"state file lacks {key!r}:\n{text}")
    return st


class AgentRun:
    """One `uplinkd run` inside the gw namespace of a lab, with its files in workdir."""

    def __init__(self, lb, workdir, config: str, *, hooks=None, binary=None,
                 record=True, verbose=2, env=None, journal=None):
        self.lab = lb
        # Variables set (a value None: removed) in the agent's environment.
        self.env = dict(env or {})
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config = self.dir / "uplinkd.conf"
        self.state_path = self.dir / "state"
        # Each run's outage journal of its own (never the machine's), unless a test
        # hands one on to a restarted agent.
        self.journal_path = Path(journal) if journal else self.dir / "journal"
        # Its data plans' counts of its own as well (the machine's plan file is shared
        # by every agent that reads it: each would restore the others' counts), unless
        # the configuration names one.
        self.plan_path = None if re.search(r"^\s*plan-file\s*=", config, re.M) else self.dir / "plans"
        self.hooks_dir = self.dir / "hooks.d"
        self.hook_log = self.dir / "hooks.log"
        self.stderr_path = self.dir / "agent.stderr"
        self.binary = require_binary(binary)
        self.config.write_text(config)
        self.hooks_dir.mkdir(exist_ok=True)
        if record:
            self.add_hook("10-record", record_hook(self.hook_log))
        for name, body in (hooks or {}).items():
            mode = 0o755
            if isinstance(body, tuple):
                body, mode = body
            self.add_hook(name, body, mode)
        self.verbose = verbose
        self.proc = None
        self._stderr = None

    def add_hook(self, name, body, mode=0o755):
        path = self.hooks_dir / name
        path.write_text(body)
        os.chmod(path, mode)
        return path

    def argv(self):
        argv = [str(self.binary), "run", "--config", str(self.config),
                "--state", str(self.state_path), "--hooks-dir", str(self.hooks_dir),
                "--journal", str(self.journal_path)]
        if self.plan_path:
            argv += ["--plan-file", str(self.plan_path)]
        return argv + ["-v"] * self.verbose

    def start(self, timed=False):
        """Start the agent. timed=True: stderr comes through a pipe read by a thread
        that copies it to the file and keeps (monotonic arrival, line) in self.lines."""
        self._stderr = open(self.stderr_path, "ab")
        self.lines = []
        # `ip netns exec` execs the program: self.proc.pid is the agent's pid.
        self.proc = subprocess.Popen(self.lab.exec_argv("gw", self.argv()),
                                     stdin=subprocess.DEVNULL, stdout=self._stderr,
                                     stderr=subprocess.PIPE if timed else self._stderr,
                                     **self.popen_options())
        if timed:
            self._reader = threading.Thread(target=self._pump, daemon=True)
            self._reader.start()
        return self

    def popen_options(self) -> dict:
        """Extra subprocess.Popen arguments (subclasses driving other programs):
        the environment when `env` changed it."""
        if not getattr(self, "env", None):
            return {}
        merged = {**os.environ, **self.env}
        return {"env": {k: v for k, v in merged.items() if v is not None}}

    def _pump(self):
        pipe, out = self.proc.stderr, self._stderr
        for raw in iter(pipe.readline, b""):
            self.lines.append((time.monotonic(), raw.decode(errors="replace").rstrip("\n")))
            out.write(raw)
            out.flush()
        pipe.close()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def deliver(self, sig):
        """Sends sig to what was started (subclasses: its whole process group).
        Called only while the process is unreaped, so its pid is still its own."""
        os.kill(self.proc.pid, sig)

    def send(self, sig):
        if self.running():
            self.deliver(sig)

    def stop(self, sig=signal.SIGTERM, timeout=15.0) -> Optional[int]:
        """Send sig and wait; returns the exit status, None if it had to be killed."""
        if self.proc is None:
            return None
        if self.proc.returncode is None:
            self.deliver(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        return self.proc.returncode

    def kill(self):
        if self.proc is not None and self.proc.returncode is None:
            self.deliver(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def close(self):
        self.kill()
        reader = getattr(self, "_reader", None)
        if reader is not None:
            reader.join(timeout=5)
        if self._stderr:
            self._stderr.close()
            self._stderr = None

    # -- files --------------------------------------------------------------
    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stderr_size(self) -> int:
        try:
            return self.stderr_path.stat().st_size
        except FileNotFoundError:
            return 0

    def stderr_since(self, offset: int) -> str:
        with open(self.stderr_path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def state_text(self) -> str:
        try:
            return self.state_path.read_text()
        except FileNotFoundError:
            return ""

    def state(self) -> Optional[dict]:
        text = self.state_text()
        return parse_state(text) if text else None

    def status(self, *extra, state=None, timeout=30) -> subprocess.CompletedProcess:
        """`uplinkd status --state STATE [extra...]` (default: this run's state file),
        run outside the lab: it only reads the file."""
        argv = [str(self.binary), "status", "--state", str(state or self.state_path), *extra]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def events(self):
        try:
            return parse_hook_log(self.hook_log.read_text())
        except FileNotFoundError:
            return []

    def transcript(self) -> str:
        rc = None if self.proc is None else self.proc.poll()
        return (f"$ {' '.join(self.argv())}\n"
                f"agent: {'running' if rc is None else f'exited {rc}'}\n"
                f"--- config ---\n{self.config.read_text()}"
                f"--- state file ---\n{self.state_text() or '(none)'}\n"
                f"--- hook log ---\n"
                + "".join(f"{e.t:.3f} {e.short} portal={e.portal or '-'}\n" for e in self.events())
                + f"--- stderr ---\n{self.stderr()}")

    # -- waiting ------------------------------------------------------------
    def wait_until(self, predicate, timeout: float, what: str, poll: float = 0.02):
        """Poll predicate() until truthy (returned) or the deadline (AgentError)."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if not self.running():
                value = predicate()
                if value:
                    return value
                raise AgentError(f"agent exited while waiting for {what}\n{self.transcript()}")
            if time.monotonic() >= deadline:
                raise AgentError(f"{what}: not reached within {timeout}s\n{self.transcript()}")
            time.sleep(poll)

    def wait_state(self, predicate, timeout: float, what: str) -> dict:
        def check():
            st = self.state()
            return st if st is not None and predicate(st) else None
        return self.wait_until(check, timeout, what)

    def wait_hooks(self, wanted, timeout: float, *, since: int = 0, after: Optional[float] = None,
                   latest: bool = False, dumps: Optional[Path] = None, what: str = ""):
        """Wait until the hook output a test reads holds a run for each item of
        `wanted` ((event, interface[, verdict[, reason]]), None for any; `latest`:
        as the latest runs; see hook_runs_missing), then return that whole output,
        oldest first. With nothing wanted it returns what has run so far, for a
        test that asserts that something did not run.

        The output is the recording hook's log (HookEvents), or with `dumps` the
        env_dump_hook files in that directory (dicts): hooks run one after another
        in name order, so one hook's output says nothing about another's, and the
        state file is written before any of them runs. Only runs after the first
        `since` count, and with `after` only those at or after that wall-clock
        time (time.time(); the recording hook's start, an env dump's writing). On the deadline: AgentError naming what is
        missing, with the transcript."""
        wanted = [tuple(w) for w in wanted]
        assert all(2 <= len(w) <= 4 for w in wanted), f"bad hook items: {wanted}"

        def read():
            if dumps is None:
                return [(e.t, e) for e in self.events()]
            return _timed_env_dumps(dumps)

        def runs_of(timed):
            return [r for t, r in timed[since:] if after is None or t >= after]

        def check():
            timed = read()
            # A one-item tuple: truthy even when no hook has run yet.
            return (not hook_runs_missing(runs_of(timed), wanted, latest)) and ([r for _, r in timed],)

        try:
            return self.wait_until(check, timeout, what or f"hook runs {wanted}")[0]
        except AgentError as exc:
            runs = runs_of(read())
            raise AgentError(f"hook runs still missing: {hook_runs_missing(runs, wanted, latest)} among "
                             f"{[hook_fields(r) for r in runs]}"
                             + (f" in {dumps}" if dumps is not None else "") + f"\n{exc}") from None

    def wait_stderr(self, pattern: str, timeout: float, offset: int = 0, count: int = 1):
        rx = re.compile(pattern, re.M)
        return self.wait_until(lambda: len(rx.findall(self.stderr_since(offset))) >= count
                               and rx.findall(self.stderr_since(offset)),
                               timeout, f"stderr matching /{pattern}/ x{count}")


def uplink_is(st: dict, iface: str, verdict: str, reason: Optional[str] = None) -> bool:
    u = st["uplinks"].get(iface)
    return u is not None and u["verdict"] == verdict and (reason is None or u["reason"] == reason)


def proc_stat_cpu(pid: int):
    """(utime + stime) of a process in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data.rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])          # utime, stime (fields 14, 15)
    return ticks / os.sysconf("SC_CLK_TCK")


def proc_memory(pid: int):
    """(VmRSS KiB, sum of Private_Dirty KiB from smaps_rollup)."""
    rss = None
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    dirty = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Private_Dirty:"):
                dirty += int(line.split()[1])
    return rss, dirty
