"""Benchmark of `expect-regex` against hostile bodies (not a test: prints figures).

    sudo python3 Tests/bench/bench_regex.py [PATH_TO_UPLINKD] [--runs N] [--time-limit S] [--only CASE,...] [--smoke]

With Swift Regex, ^(\\w+\\s?)+$ on a 29-byte body ran past 20 s, (a+)+$ and
a*a*a*a*b on 4 KiB past 45 s, freezing the agent's one loop. Each case here is a
pattern and the body that makes it backtrack; the body is served by a small HTTP
server in the lab's "internet" namespace and fetched by `uplinkd check eth0` with
a configuration holding that one probe (body-limit 64 KiB). Printed per case: the
verdict and reason, the median wall time of `check`, and that minus the median of
the same check with the pattern `^x` (decided at once) on the same body: the time
the search took. A run past --time-limit is killed and printed as such (that is
how an older binary is measured).

The cases include two that PCRE2's own match limit does not stop (it restarts at
every start position, so they cost body length squared: 25 s and 32 s on 64 KiB in
the interpreter); uplinkd's step budget spans the whole search. \\d{30000} shows what
the budget does not count: a repeated item that scans and then fails.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import median, ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import lab as labmod  # noqa: E402

ADDR = labmod.INTERNET_ADDR
WORDS = b"aaaa aaaa aaaa aaaa aaaa aaa!"            # as labserver.py's /words.txt


def fill(unit: bytes, total: int, tail: bytes = b"") -> bytes:
    body = (unit * (total // len(unit) + 1))[:total - len(tail)]
    return body + tail


# (name, pattern, body). Names are file names on the server.
CASES = [
    ("words29", r"^(\w+\s?)+$", WORDS),
    ("nested4k", r"(a+)+$", fill(b"a", 4096, b"b")),
    ("stars4k", r"a*a*a*a*b", fill(b"a", 4096, b"cb")),
    ("stars4k-no-b", r"a*a*a*a*b", fill(b"a", 4096)),
    ("alternation4k", r"(a|aa)+$", fill(b"a", 4096, b"b")),
    ("dotstar64k", r"(?s)<.*W.*>", fill(b"<", 65536, b">")),
    ("class64k", r"<[^W]*X", fill(b"<", 65536, b"WX")),
    ("repeat64k", r"\d{30000}", fill(b"9" * 29999 + b"a", 65536)),
]
SMOKE_CASES = {"words29", "nested4k", "dotstar64k"}

SERVER = r"""
import http.server, sys
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
    def __init__(self, *a, **k): super().__init__(*a, directory=sys.argv[1], **k)
s = http.server.ThreadingHTTPServer((sys.argv[2], 80), H)
print("ready", flush=True)
s.serve_forever()
"""


def config(path: Path, name: str, pattern: str) -> None:
    path.write_text("[check]\ndefault-probes = no\nbody-limit = 65536\ntimeout = 5s\n\n"
                    f"[probe {name}]\nurl = http://{ADDR}/{name}\nexpect-regex = {pattern}\n")


def run_check(lab, binary, conf: Path, limit: float):
    """(wall seconds, record or None); None when killed at `limit`."""
    argv = lab.exec_argv("gw", [binary, "check", "eth0", "--json", "--config", conf])
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return time.monotonic() - start, None
    wall = time.monotonic() - start
    if proc.returncode < 0 or proc.returncode > 3:
        raise RuntimeError(f"check exited {proc.returncode}: {proc.stderr.strip()}")
    return wall, json.loads(proc.stdout.splitlines()[0])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=str(labmod.uplinkd_path()))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per check before it is killed")
    parser.add_argument("--only", help="comma-separated case names (default: all)")
    parser.add_argument("--smoke", action="store_true", help="three cases, one run each (Tests/bench/smoke)")
    args = parser.parse_args()
    problem = labmod.preflight(args.binary)
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return 1
    cases = [c for c in CASES if c[0] in SMOKE_CASES] if args.smoke else CASES
    if args.only:
        wanted = set(args.only.split(","))
        if wanted - {c[0] for c in CASES}:
            print(f"bench: no case {sorted(wanted - {c[0] for c in CASES})}; cases: {[c[0] for c in CASES]}", file=sys.stderr)
            return 1
        cases = [c for c in cases if c[0] in wanted]
    runs = 1 if args.smoke else args.runs
    try:
        return measure(str(Path(args.binary).resolve()), cases, runs, args.time_limit)
    except RuntimeError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1


def measure(binary, cases, runs, limit) -> int:
    with labmod.Lab() as lab, tempfile.TemporaryDirectory(prefix="bench-regex-") as tmp:
        root = Path(tmp)
        (root / "www").mkdir()
        os.chmod(root, 0o755)
        for name, _, body in cases:
            (root / "www" / name).write_bytes(body)
        server = subprocess.Popen(lab.exec_argv("inet", [sys.executable, "-c", SERVER, root / "www", ADDR]),
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            if server.stdout.readline().strip() != "ready":
                raise RuntimeError("the body server did not start")
            print(f"binary: {binary}; median of {runs} run(s); a check is killed after {limit:.0f} s")
            print(f"{'case':<14} {'pattern':<14} {'body':>7}  {'verdict (reason), looks':<40} {'check':>10} {'search':>10}")
            for name, pattern, body in cases:
                conf, base = root / f"{name}.conf", root / f"{name}.base.conf"
                config(conf, name, pattern)
                config(base, name, "^")
                walls, base_walls, record = [], [], None
                for _ in range(runs):
                    base_walls.append(run_check(lab, binary, base, limit)[0])
                    wall, record = run_check(lab, binary, conf, limit)
                    walls.append(wall)
                    if record is None:
                        break                       # killed: once is enough
                if record is None:
                    result, check, search = "killed", f">{limit:.0f} s", "-"
                else:
                    result = f"{record['verdict']} ({record['reason']}), {record.get('looks', 1)} look(s)"
                    check = f"{ms(median(walls)):.1f} ms"
                    search = f"{ms(median(walls) - median(base_walls)):.1f} ms"
                print(f"{name:<14} {pattern:<14} {len(body):>7}  {result:<40} {check:>10} {search:>10}", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
