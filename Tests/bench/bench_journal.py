#!/usr/bin/env python3
"""What the outage journal costs the gateway's flash and its uplink: writes an idle
hour, writes per outage, bytes on disk per 1,000 records, MQTT bytes per outage and
per month of 30 outages. One Markdown table.

    sudo python3 Tests/bench/bench_journal.py [--binary PATH] [--idle-seconds S]
        [--heartbeat S] [--outages N] [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header and the
table. Nothing is asserted. Exit status 1 only when the lab could not run.

The agent runs in the failover lab (Tests/integration/failoverlab.py) at its defaults
with the shipped route-failover hook and MQTT to a broker on the lab's internet
(mosquitto in its cloud namespace, reached through the uplinks and cut with them),
its journal in a directory of its own, which this script watches with inotify (no
help from the agent): a write of the journal is a close after writing it (each append
opens, writes, fsyncs and closes it); a write of the checkpoint or of the delivered
mark is a rename onto it (each is written whole beside it, then renamed). MQTT bytes
are nftables counters in the broker's namespace (TCP port 1883, both directions, IP
and TCP headers included).

  idle     --idle-seconds (1800) with every uplink healthy, `journal-heartbeat`
           --heartbeat (600, the default): checkpoint writes and journal writes,
           and per hour.
  outages  --outages (5) times every uplink's carrier lost for 5 s, then back: the
           writes of each, from the cut until every uplink is online again, its
           records are written (a site record, one per uplink, a failover or two)
           and acknowledged by the broker (the delivered mark reaches the last);
           the MQTT bytes of the same window (every topic: the reconnect after the
           outage, state, uplinks, events, the journal's records and the summary),
           and the journal's and summary's own MQTT packets (PUBLISH and PUBACK
           from the subscriber's copies, without TCP/IP).
  size     the journal's bytes per record at the end, times 1,000.

--smoke: a 5-s idle window (no heartbeat falls in it) and one outage.
"""

import argparse
import ctypes
import json
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
from failoverlab import CLOUD_ROLE, FailoverLab  # noqa: E402
from lab import run as run_cmd  # noqa: E402
from mqttlab import MqttBroker, Subscriber  # noqa: E402

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
        """(journal writes, checkpoint writes, delivered-mark writes) between two
        monotonic times."""
        time.sleep(0.3)                     # the reader catches up
        with self.lock:
            window = [(m, n) for t, m, n in self.events if since <= t < until]
        return (sum(1 for m, n in window if m & IN_CLOSE_WRITE and n == journal_name),
                sum(1 for m, n in window if m & IN_MOVED_TO and n == journal_name + ".checkpoint"),
                sum(1 for m, n in window if m & IN_MOVED_TO and n == journal_name + ".delivered"))

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


def last_seq(path: Path) -> int:
    """The highest `seq=` among the journal's records."""
    numbers = [int(w[4:]) for line in records(path) for w in line.split() if w.startswith("seq=")]
    return max(numbers, default=0)


def delivered(path: Path) -> int:
    try:
        return int(path.with_name(path.name + ".delivered").read_text().split()[1])
    except (FileNotFoundError, IndexError, ValueError):
        return 0


COUNT_MQTT = "benchmqtt"


def count_mqtt(lb):
    """Counters of the broker's TCP port 1883 in its namespace, both directions."""
    ruleset = (f"table inet {COUNT_MQTT} {{\n"
               f"  counter mqtt {{ }}\n"
               f"  chain input {{ type filter hook input priority 0; policy accept;\n    tcp dport 1883 counter name mqtt\n  }}\n"
               f"  chain output {{ type filter hook output priority 0; policy accept;\n    tcp sport 1883 counter name mqtt\n  }}\n}}\n")
    run_cmd(lb.exec_argv(CLOUD_ROLE, ["nft", "-f", "-"]), input=ruleset)


def mqtt_bytes(lb) -> int:
    out = run_cmd(lb.exec_argv(CLOUD_ROLE, ["nft", "-j", "list", "counter", "inet", COUNT_MQTT, "mqtt"])).stdout
    return next(item["counter"]["bytes"] for item in json.loads(out)["nftables"] if "counter" in item)


def mqtt_packet_bytes(topic: str, payload: str) -> int:
    """One QoS 1 PUBLISH as MQTT 5 frames it (no properties) and its PUBACK."""
    remaining = 2 + len(topic.encode()) + 2 + 1 + len(payload.encode())
    length_bytes = 1 if remaining < 128 else 2 if remaining < 16384 else 3
    return 1 + length_bytes + remaining + 4


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
                             config=f"the failover lab's, `journal-heartbeat = {args.heartbeat:g}s`, "
                                    "`flap-penalty = 0`, MQTT to a broker on the lab's internet; "
                                    "hooks: 10-record, hooks/50-route-failover")
    if found is None:
        return 1
    binary, header = found
    with tempfile.TemporaryDirectory(prefix="bench-journal.") as tmp, FailoverLab(cloud=True) as lb:
        work = Path(tmp)
        journal_dir = work / "journal"
        journal_dir.mkdir()
        journal = journal_dir / "journal"
        watch = DirectoryWatch(journal_dir)
        broker = MqttBroker(lb, work / "broker", cloud=True).build().start()
        subscriber = Subscriber(broker, ["uplinkd/gw1/journal", "uplinkd/gw1/summary"], work / "sub.log")
        count_mqtt(lb)
        # Flap damping off: outages a minute apart would otherwise keep every uplink
        # suppressed, and it is not what is measured here.
        config = lb.agent_config(sections={"agent": {"journal-heartbeat": f"{args.heartbeat:g}s", "flap-penalty": "0"}})
        config += broker.mqtt_section(broker.credentials_file(work / "credentials"), node="gw1")
        run = AgentRun(lb, work / "agent", config, hooks=lb.agent_hooks(), binary=binary, verbose=1, journal=journal)
        per_outage_mqtt = []
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
                seen = len(subscriber.messages())
                bytes_before = mqtt_bytes(lb)
                start = time.monotonic()
                carriers(lb, up=False)
                run.wait_state(lambda s: s["primary"] == "-", 20, "no primary")
                time.sleep(5)
                carriers(lb, up=True)
                run.wait_state(lambda s: all(s["uplinks"][i]["verdict"] == "online" for i in UPLINKS), 60,
                               "every uplink online again")
                run.wait_until(lambda: len([r for r in records(journal)[before:] if r.startswith("uplink ")])
                               >= len(UPLINKS), 10, "the uplink records")
                last = last_seq(journal)
                run.wait_until(lambda: delivered(journal) >= last, 60, f"the broker's acknowledgement of record {last}")
                time.sleep(1)                          # the last checkpoint after the last record
                writes = watch.count(start, time.monotonic(), journal.name)
                added = records(journal)[before:]
                per_outage.append((writes, [r.split()[0] for r in added]))
                sent = subscriber.messages()[seen:]
                own = sum(mqtt_packet_bytes(m.topic, m.payload) for m in sent)
                per_outage_mqtt.append((mqtt_bytes(lb) - bytes_before, own, len(sent)))
                progress(f"outage {k + 1}/{args.outages}: journal writes {writes[0]}, checkpoint writes {writes[1]}, "
                         f"delivered-mark writes {writes[2]}, records {' '.join(r.split()[0] for r in added)}; "
                         f"MQTT {per_outage_mqtt[-1][0]} B on the wire, {own} B of journal and summary packets "
                         f"({len(sent)} messages)")
                # Back to a healthy primary before the next.
                failoverlab.wait_settled(run, lb, 60)
            lines = records(journal)
            size = journal.stat().st_size if lines else 0
        finally:
            run.stop()
            run.close()
            watch.close()
            subscriber.stop()
            broker.destroy()
    hours = args.idle_seconds / 3600
    rows = ["| figure | measured | note |", "|---|---|---|",
            f"| idle, {args.idle_seconds:.0f} s at `journal-heartbeat = {args.heartbeat:g}s`: journal writes; checkpoint writes "
            f"| {idle[0]}; {idle[1]} ({idle[1] / hours:.1f} an hour) | one checkpoint per heartbeat; "
            f"delivered-mark writes: {idle[2]} |"]
    if per_outage:
        journal_writes = [w[0] for w, _ in per_outage]
        checkpoint_writes = [w[1] for w, _ in per_outage]
        mark_writes = [w[2] for w, _ in per_outage]
        rows.append(f"| per outage (every carrier lost 5 s), median (max) of {len(per_outage)}: journal writes; "
                    f"checkpoint writes; delivered-mark writes | {median(journal_writes):g} ({max(journal_writes)}); "
                    f"{median(checkpoint_writes):g} ({max(checkpoint_writes)}); {median(mark_writes):g} "
                    f"({max(mark_writes)}) | records of the last: {' '.join(per_outage[-1][1])} |")
        wire = [m[0] for m in per_outage_mqtt]
        own = [m[1] for m in per_outage_mqtt]
        rows.append(f"| MQTT per outage, median (max) of {len(wire)}: on the wire, every topic; the journal's and "
                    f"summary's packets | {median(wire):,.0f} B ({max(wire):,} B); {median(own):,.0f} B ({max(own):,} B) "
                    f"| from the cut until the broker acknowledged the last record |")
        rows.append(f"| MQTT for a month of 30 such outages: on the wire; journal and summary | "
                    f"{30 * median(wire) / 1e3:,.1f} kB; {30 * median(own) / 1e3:,.1f} kB | 30 times the medians |")
    if lines:
        rows.append(f"| bytes on disk per 1,000 records | {size / len(lines) * 1000 / 1e3:.0f} kB "
                    f"({size} B for {len(lines)} records) | header included |")
    print("\n".join(header + [""] + rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
