#!/usr/bin/env python3
"""What the outage journal costs the gateway's flash: writes an idle hour, writes per
outage, bytes on disk per 1,000 records. One Markdown table.

    sudo python3 Tests/bench/bench_journal.py [--binary PATH] [--idle-seconds S]
        [--heartbeat S] [--outages N] [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header and the
table. Nothing is asserted. Exit status 1 only when the lab could not run.

The agent runs in the failover lab (Tests/integration/failoverlab.py) at its defaults
with the shipped route-failover hook, its journal in a directory of its own, which
this script watches with inotify (no help from the agent): a write of the journal is
a close after writing it (each append opens, writes, fsyncs and closes it); a write
of the checkpoint is a rename onto it (each is written whole beside it, then renamed).

  idle     --idle-seconds (1800) with every uplink healthy, `journal-heartbeat`
           --heartbeat (600, the default): checkpoint writes and journal writes,
           and per hour.
  outages  --outages (5) times every uplink's carrier lost for 5 s, then back: the
           writes of each, from the cut until every uplink is online again and its
           record is written (a site record, one per uplink, a failover or two).
  size     the journal's bytes per record at the end, times 1,000.

--smoke: a 5-s idle window (no heartbeat falls in it) and one outage.
"""

import argparse
import ctypes
import os
import select
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchstats import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
from agentrun import AgentRun  # noqa: E402
from bench_compare import parse_bench_args  # noqa: E402
from bench_failover import lab_bench_header, progress  # noqa: E402
from failoverlab import FailoverLab  # noqa: E402

FULL = {"idle_seconds": 1800.0, "heartbeat": 600.0, "outages": 5}
SMOKE = {"idle_seconds": 5.0, "heartbeat": 60.0, "outages": 1}
UPLINKS = ("eth0", "wlan0", "wwan0")
IN_CLOSE_WRITE, IN_MOVED_TO = 0x8, 0x80


class DirectoryWatch:
    """inotify on one directory: names closed after writing, and names renamed into it,
    each stamped when read by a thread of its own (as it happens, give or take 0.1 s)."""

    def __init__(self, directory: Path):
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if self.libc.inotify_add_watch(self.fd, str(directory).encode(), IN_CLOSE_WRITE | IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory}")
        self.events = []                    # (monotonic, mask, name)
        self.lock = threading.Lock()
        self.closing = False
        self.reader = threading.Thread(target=self.follow, daemon=True)
        self.reader.start()

    def follow(self):
        while not self.closing:
            self.drain(wait=0.1)

    def drain(self, wait=0.0):
        while select.select([self.fd], [], [], wait)[0]:
            data = os.read(self.fd, 65536)
            offset = 0
            while offset < len(data):
                _, mask, _, length = struct.unpack_from("iIII", data, offset)
                name = data[offset + 16: offset + 16 + length].rstrip(b"\0").decode()
                with self.lock:
                    self.events.append((time.monotonic(), mask, name))
                offset += 16 + length
            wait = 0.0

    def count(self, since, until, journal_name):
        """(journal writes, checkpoint writes) between two monotonic times."""
        time.sleep(0.3)                     # the reader catches up
        with self.lock:
            window = [(m, n) for t, m, n in self.events if since <= t < until]
        return (sum(1 for m, n in window if m & IN_CLOSE_WRITE and n == journal_name),
                sum(1 for m, n in window if m & IN_MOVED_TO and n == journal_name + ".checkpoint"))

    def close(self):
        self.closing = True
        self.reader.join(timeout=2)
        os.close(self.fd)


def carriers(lb, up):
    for iface in UPLINKS:
        role, peer = lb.peer_of(iface)
        lb.ip(role, "link", "set", peer, "up" if up else "down")


def records(path: Path):
    """The journal's record lines (none before the agent's first record)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--idle-seconds", type=float, help="idle window, s (1800)")
    ap.add_argument("--heartbeat", type=float, help="journal-heartbeat, s (600, the default)")
    ap.add_argument("--outages", type=int, help="cuts of every carrier (5)")
    args = parse_bench_args(ap, "--smoke", "a 5-s idle window, one outage", SMOKE, FULL)
    found = lab_bench_header(args, "# uplinkd: the outage journal's writes and size",
                             "a 5-s idle window, one outage",
                             config=f"the failover lab's, `journal-heartbeat = {args.heartbeat:g}s`; "
                                    "hooks: 10-record, hooks/50-route-failover")
    if found is None:
        return 1
    binary, header = found
    with tempfile.TemporaryDirectory(prefix="bench-journal.") as tmp, FailoverLab() as lb:
        work = Path(tmp)
        journal_dir = work / "journal"
        journal_dir.mkdir()
        journal = journal_dir / "journal"
        watch = DirectoryWatch(journal_dir)
        config = lb.agent_config(sections={"agent": {"journal-heartbeat": f"{args.heartbeat:g}s"}})
        run = AgentRun(lb, work / "agent", config, hooks=lb.agent_hooks(), binary=binary, verbose=1, journal=journal)
        try:
            run.start()
            failoverlab.wait_settled(run, lb, 60)
            progress(f"idle: {args.idle_seconds:.0f} s, heartbeat {args.heartbeat:g} s")
            idle_start = time.monotonic()
            time.sleep(args.idle_seconds)
            idle = watch.count(idle_start, time.monotonic(), journal.name)
            per_outage = []
            for k in range(args.outages):
                before = len(records(journal))
                start = time.monotonic()
                carriers(lb, up=False)
                run.wait_state(lambda s: s["primary"] == "-", 20, "no primary")
                time.sleep(5)
                carriers(lb, up=True)
                run.wait_state(lambda s: all(s["uplinks"][i]["verdict"] == "online" for i in UPLINKS), 60,
                               "every uplink online again")
                run.wait_until(lambda: len([r for r in records(journal)[before:] if r.startswith("uplink ")])
                               >= len(UPLINKS), 10, "the uplink records")
                time.sleep(1)                          # the last checkpoint after the last record
                writes = watch.count(start, time.monotonic(), journal.name)
                added = records(journal)[before:]
                per_outage.append((writes, [r.split()[0] for r in added]))
                progress(f"outage {k + 1}/{args.outages}: journal writes {writes[0]}, checkpoint writes {writes[1]}, "
                         f"records {' '.join(r.split()[0] for r in added)}")
                # Back to a healthy primary before the next.
                failoverlab.wait_settled(run, lb, 60)
            lines = records(journal)
            size = journal.stat().st_size if lines else 0
        finally:
            run.stop()
            run.close()
            watch.close()
    hours = args.idle_seconds / 3600
    rows = ["| figure | measured | note |", "|---|---|---|",
            f"| idle, {args.idle_seconds:.0f} s at `journal-heartbeat = {args.heartbeat:g}s`: journal writes; checkpoint writes "
            f"| {idle[0]}; {idle[1]} ({idle[1] / hours:.1f} an hour) | one checkpoint per heartbeat |"]
    if per_outage:
        journal_writes = [w[0] for w, _ in per_outage]
        checkpoint_writes = [w[1] for w, _ in per_outage]
        rows.append(f"| per outage (every carrier lost 5 s), median (max) of {len(per_outage)}: journal writes; "
                    f"checkpoint writes | {median(journal_writes):g} ({max(journal_writes)}); "
                    f"{median(checkpoint_writes):g} ({max(checkpoint_writes)}) | records of the last: "
                    f"{' '.join(per_outage[-1][1])} |")
    if lines:
        rows.append(f"| bytes on disk per 1,000 records | {size / len(lines) * 1000 / 1e3:.0f} kB "
                    f"({size} B for {len(lines)} records) | header included |")
    print("\n".join(header + [""] + rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
