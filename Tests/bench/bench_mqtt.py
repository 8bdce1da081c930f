#!/usr/bin/env python3
"""Benchmark of the MQTT push channel (prints figures, judges nothing).

    sudo python3 Tests/bench/bench_mqtt.py [--binary PATH] [--gateways N]
        [--steady-seconds S] [--burst-seconds S] [--latency-samples N]
        [--skip fleet,latency,will,bytes,memory] [--smoke]

Stand-alone (no farm); everything runs in network namespaces this script makes,
against Debian's mosquitto. Parts:

fleet    One mosquitto (its own namespace, 127.0.0.1:1883, anonymous) and N simulated
         gateways (default 10,000) publishing the agent's pattern from one asyncio
         process speaking raw MQTT 3.1.1: connect with the will (availability
         `offline`, retained), `online`, `state` (1.4 KB) and three uplink topics
         (450 B each), all retained QoS 1; then a steady phase where each gateway
         sends one heartbeat (`state`) at a random moment of --steady-seconds (the
         15-minute heartbeat compressed); then the regional outage: every gateway
         fails over within --burst-seconds and publishes two events (QoS 1, not
         retained), `state` and one uplink topic. One subscriber on
         `uplinkd/+/event` measures delivery latency (send time in the payload, one
         clock). Printed per phase: messages/s published (PUBACKed), broker CPU
         (utime+stime of mosquitto from /proc over the phase's wall time), the load
         generator's own CPU (when it is at 100 % of a core, it and not the broker
         was the limit), latency percentiles, broker RSS.
latency  `uplinkd run` in the namespace lab (three uplinks; broker in a namespace of
         its own behind a non-uplink veth, mqttlab.py), eth0's carrier toggled until
         --latency-samples hook events happened: per event the time from the hook's
         start (its own clock stamp) to the MQTT event's arrival at mosquitto_sub,
         and from the carrier change to the arrival.
will     SIGKILL of the agent (keep-alive 60 s): time to the last will at the
         subscriber (the kernel closes the socket, so the broker knows at once); and a
         silent death (the gateway's packets to the broker dropped with nftables,
         then SIGKILL; keep-alive 10 s): time to the will, bound keep-alive x 1.5.
bytes    MQTT over TLS on the wire (nftables counters on the gateway's broker link,
         IP bytes both ways): (a) keep-alive 10 s, no heartbeat, 65 s: bytes per
         PINGREQ/PINGRESP exchange (pings counted from mosquitto's debug log);
         (b) keep-alive off in effect (65535 s), heartbeat 10 s, 65 s: bytes per
         heartbeat (state, uplinks whose figures moved, PUBACKs, TCP ACKs).
         Both with eth0 (the primary) metered, so the metered path is measured.
         Projected per 30 days at the metered defaults (keep-alive 25 min, heartbeat
         12 h) and at the unmetered ones (60 s, 15 min). (c) the shipped metered
         settings as they are for --steady-window (1800 s), projected.
memory   The agent idle for 30 s after settling, three uplinks, with and without
         `[mqtt]` (same binary): VmRSS and Private_Dirty.
"""

import argparse
import asyncio
import json
import os
import random
import re
import resource
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))

# --- raw MQTT 3.1.1 -------------------------------------------------------------


def _varint(n):
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _str(s):
    b = s.encode()
    return struct.pack("!H", len(b)) + b


def connect_packet(client_id, keepalive, will_topic=None, will_payload=b""):
    flags = 0x02
    body = _str("MQTT") + bytes([4])
    payload = _str(client_id)
    if will_topic:
        flags |= 0x04 | (1 << 3) | 0x20          # will, QoS 1, retained
        payload += _str(will_topic) + struct.pack("!H", len(will_payload)) + will_payload
    body += bytes([flags]) + struct.pack("!H", keepalive) + payload
    return bytes([0x10]) + _varint(len(body)) + body


def publish_packet(topic, payload, qos=1, retain=False, mid=1):
    head = 0x30 | (qos << 1) | (1 if retain else 0)
    body = _str(topic) + (struct.pack("!H", mid) if qos else b"") + payload
    return bytes([head]) + _varint(len(body)) + body


def subscribe_packet(topic, mid=1):
    body = struct.pack("!H", mid) + _str(topic) + bytes([1])
    return bytes([0x82]) + _varint(len(body)) + body


async def read_packet(reader):
    first = await reader.readexactly(1)
    length, shift = 0, 0
    while True:
        b = (await reader.readexactly(1))[0]
        length += (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return first[0], await reader.readexactly(length)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100 * len(values)))] if values else float("nan")


# --- fleet: runs inside the broker's namespace -------------------------------------

STATE = json.dumps({"primary": "eth0", "pad": "x" * 1300}).encode()
UPLINK = json.dumps({"interface": "eth0", "verdict": "online", "pad": "x" * 380}).encode()


class Gateway:
    def __init__(self, index):
        self.id = f"gw{index:05d}"
        self.base = f"uplinkd/{self.id}"
        self.mid = 0
        self.pending = {}
        self.reader = self.writer = None

    def next_mid(self):
        self.mid = self.mid % 65535 + 1
        return self.mid

    async def connect(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", 1883)
        self.writer.write(connect_packet(self.id, 1500, f"{self.base}/availability", b"offline"))
        kind, _ = await read_packet(self.reader)
        assert kind == 0x20, f"CONNACK expected, got {kind:#x}"
        self.task = asyncio.get_running_loop().create_task(self.acks())

    async def acks(self):
        try:
            while True:
                kind, body = await read_packet(self.reader)
                if kind == 0x40:
                    fut = self.pending.pop(struct.unpack("!H", body[:2])[0], None)
                    if fut and not fut.done():
                        fut.set_result(None)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass

    async def publish(self, messages):
        """messages: [(topic, payload, retain)], all QoS 1, written at once; returns
        when every PUBACK is in."""
        loop = asyncio.get_running_loop()
        futs, data = [], bytearray()
        for topic, payload, retain in messages:
            mid = self.next_mid()
            fut = loop.create_future()
            self.pending[mid] = fut
            futs.append(fut)
            data += publish_packet(topic, payload, 1, retain, mid)
        self.writer.write(bytes(data))
        await asyncio.gather(*futs)
        return len(messages)


def raise_file_limit():
    """The soft limit of open files up to the hard one (a socket per gateway)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def fleet_worker(args):
    raise_file_limit()
    broker_pid = args.broker_pid
    own = os.getpid()
    result = {}
    latencies = []

    # The observer.
    sr, sw = await asyncio.open_connection("127.0.0.1", 1883)
    sw.write(connect_packet("observer", 600))
    await read_packet(sr)
    sw.write(subscribe_packet("uplinkd/+/event"))
    await read_packet(sr)
    received = {"n": 0}

    async def observe():
        try:
            while True:
                kind, body = await read_packet(sr)
                if kind & 0xF0 == 0x30:
                    qos = (kind >> 1) & 3
                    tlen = struct.unpack("!H", body[:2])[0]
                    offset = 2 + tlen
                    if qos:
                        mid = body[offset:offset + 2]
                        offset += 2
                        sw.write(bytes([0x40, 2]) + mid)
                    sent_ns = int(body[offset:offset + 20].split(b",", 1)[0])
                    latencies.append((time.time_ns() - sent_ns) / 1e6)
                    received["n"] += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
    observer = asyncio.get_running_loop().create_task(observe())

    async def phase(name, work):
        b0, g0, t0 = cpu_seconds(broker_pid), cpu_seconds(own), time.monotonic()
        count = await work()
        wall = time.monotonic() - t0
        result[name] = {"messages": count, "seconds": round(wall, 2), "msgs_per_s": round(count / wall),
                        "broker_cpu_pct": round(100 * (cpu_seconds(broker_pid) - b0) / wall, 1),
                        "generator_cpu_pct": round(100 * (cpu_seconds(own) - g0) / wall, 1),
                        "broker_rss_kib": rss_kib(broker_pid)}

    gateways = [Gateway(i) for i in range(args.gateways)]
    gate = asyncio.Semaphore(400)

    async def connect_one(gw):
        async with gate:
            await gw.connect()
            return await gw.publish([(f"{gw.base}/availability", b"online", True), (f"{gw.base}/state", STATE, True)]
                                    + [(f"{gw.base}/uplink/{u}", UPLINK, True) for u in ("eth0", "wlan0", "wwan0")])

    async def connect_all():
        return sum(await asyncio.gather(*(connect_one(gw) for gw in gateways)))
    await phase("connect", connect_all)

    async def heartbeat(gw, span):
        await asyncio.sleep(random.uniform(0, span))
        return await gw.publish([(f"{gw.base}/state", STATE, True)])

    async def steady():
        return sum(await asyncio.gather(*(heartbeat(gw, args.steady_seconds) for gw in gateways)))
    await phase("steady", steady)

    def event(gw, kind):
        return json.dumps({"t": 0, "event": kind, "interface": "eth0", "pad": "x" * 700}).encode()

    async def failover(gw, span):
        await asyncio.sleep(random.uniform(0, span))
        now = time.time_ns()
        ev = [(f"{gw.base}/event", f"{now},".encode() + event(gw, k), False) for k in ("verdict", "primary")]
        return await gw.publish(ev + [(f"{gw.base}/state", STATE, True), (f"{gw.base}/uplink/eth0", UPLINK, True)])

    latencies.clear()

    async def burst():
        n = sum(await asyncio.gather(*(failover(gw, args.burst_seconds) for gw in gateways)))
        deadline = time.monotonic() + 60
        while received["n"] < 2 * len(gateways) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return n
    await phase("burst", burst)
    result["burst"]["events_delivered"] = received["n"]
    result["burst"]["latency_ms"] = {"p50": round(pct(latencies, 50), 1), "p90": round(pct(latencies, 90), 1),
                                     "p99": round(pct(latencies, 99), 1), "max": round(max(latencies or [0]), 1)}
    observer.cancel()
    for gw in gateways:
        gw.writer.close()
    print(json.dumps(result))


def run_fleet(args):
    import lab as labmod
    ns = f"{labmod.PREFIX}-{next(labmod._seq)}-mqfleet"
    work = Path(tempfile.mkdtemp(prefix="uplinkd-mqfleet-"))
    conf = work / "mosquitto.conf"
    conf.write_text("user root\nlistener 1883 127.0.0.1\nallow_anonymous true\nmax_queued_messages 100000\n"
                    "max_inflight_messages 0\npersistence false\nlog_dest none\n")
    labmod.run(["ip", "netns", "add", ns])
    broker = None
    try:
        labmod.run(["ip", "-n", ns, "link", "set", "lo", "up"])

        def limits():
            raise_file_limit()
        broker = subprocess.Popen(["ip", "netns", "exec", ns, labmod.tool("mosquitto"), "-c", str(conf)],
                                  preexec_fn=limits, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not labmod.run(["ip", "netns", "exec", ns, "ss", "-Hltn", "sport = :1883"], check=False).stdout.strip():
            if time.monotonic() > deadline or broker.poll() is not None:
                raise RuntimeError("mosquitto did not start")
            time.sleep(0.05)
        argv = ["ip", "netns", "exec", ns, sys.executable, __file__, "--fleet-worker", "--broker-pid", str(broker.pid),
                "--gateways", str(args.gateways), "--steady-seconds", str(args.steady_seconds),
                "--burst-seconds", str(args.burst_seconds)]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=900, preexec_fn=limits)
        if out.returncode != 0:
            raise RuntimeError(f"fleet worker failed: {out.stderr[-2000:]}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        if broker is not None:
            broker.terminate()
            broker.wait(timeout=10)
        labmod.run(["ip", "netns", "delete", ns], check=False)
    print(f"\n## fleet: {args.gateways} simulated gateways, one mosquitto 2.0.11 (MQTT 3.1.1, QoS 1)")
    print("| phase | messages | seconds | messages/s | broker CPU | generator CPU | broker RSS |")
    print("|---|---|---|---|---|---|---|")
    for name in ("connect", "steady", "burst"):
        r = result[name]
        print(f"| {name} | {r['messages']} | {r['seconds']} | {r['msgs_per_s']} | {r['broker_cpu_pct']} % | "
              f"{r['generator_cpu_pct']} % | {r['broker_rss_kib']} KiB |")
    lat = result["burst"]["latency_ms"]
    print(f"burst: {result['burst']['events_delivered']} of {2 * args.gateways} events delivered to one subscriber; "
          f"latency p50 {lat['p50']} ms, p90 {lat['p90']} ms, p99 {lat['p99']} ms, max {lat['max']} ms")


# --- the agent's own figures ----------------------------------------------------------


def agent_parts(args, parts):
    import lab as labmod
    from agentrun import AgentRun, config_text, uplink_is
    from mqttlab import MqttBroker, Subscriber, GW_IFACE

    binary = args.binary
    work = Path(tempfile.mkdtemp(prefix="uplinkd-mqbench-"))
    os.chmod(work, 0o755)
    with labmod.Lab() as lb, MqttBroker(lb, work / "broker", extra_config="log_type debug\n") as broker:
        lb.serve("inet", "internet")
        lb.serve("portal", "internet")
        creds = broker.credentials_file(work / "creds")

        def start(name, mqtt_extra="", tls=False, mqtt=True, verbose=2, agent=None):
            extra = broker.mqtt_section(creds, tls=tls, extra=mqtt_extra) if mqtt else ""
            run = AgentRun(lb, work / name, config_text(agent, uplinks="eth0 wlan0 wwan0", extra=extra),
                           binary=binary, verbose=verbose).start()
            run.wait_state(lambda s: uplink_is(s, "eth0", "online") and uplink_is(s, "wlan0", "online")
                           and s["primary"] == "eth0", 30, "settled")
            if mqtt and verbose:
                # With a metered primary the agent connects again once, with the
                # metered keep-alive, when that primary is known: wait for it, so no
                # measurement window holds that handshake.
                run.wait_stderr(r"mqtt: connected", 10, count=2 if "metered = yes" in mqtt_extra else 1)
            return run

        def peer(iface, up):
            role, name = lb.peer_of(iface)
            lb.ip(role, "link", "set", name, "up" if up else "down")

        if "latency" in parts:
            sub = Subscriber(broker, ["uplinkd/gw1/event"], work / "latency.out")
            # Flap damping off: the carrier is toggled on purpose, many times.
            run = start("latency", agent={"flap-penalty": "0"})
            before = len(run.events())
            up = False
            while len(run.events()) - before < args.latency_samples:
                mark = len(run.events())
                peer("eth0", up)
                run.wait_until(lambda: any(e.event == "primary" for e in run.events()[mark:]), 20, "a primary event")
                time.sleep(1.1)     # pacing: linkwatch holds a carrier change that follows another within 1 s
                up = not up
            events = run.events()
            msgs = {}
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(msgs) < len(events):
                msgs = {json.loads(m.payload)["seq"]: m for m in sub.messages()}
                time.sleep(0.05)
            hook_ms = [1000 * (m.t - events[seq - 1].t) for seq, m in msgs.items() if before < seq <= len(events)]
            print(f"\n## hook event -> MQTT event (n={len(hook_ms)})")
            print(f"arrival at mosquitto_sub minus the hook's start: median {statistics.median(hook_ms):.1f} ms, "
                  f"min {min(hook_ms):.1f}, max {max(hook_ms):.1f}; |difference| median "
                  f"{statistics.median(abs(x) for x in hook_ms):.1f} ms (negative: the message arrived before the "
                  f"hook's shell had started; both leave from the same decision)")
            run.stop()
            sub.stop()
            # The loop counts events, not toggles: it may end with eth0's carrier
            # down, and the next agent in this lab would never see eth0 online.
            peer("eth0", True)

        if "will" in parts:
            sub = Subscriber(broker, ["uplinkd/gw1/availability"], work / "will.out")
            delays = []
            for i in range(args.will_runs):
                run = start(f"will{i}")
                sub.wait_for(lambda ms: ms and ms[-1].payload == "online", 10, "online")
                mark = len(sub.messages())
                t0 = time.time()
                run.kill()
                m = sub.wait_for(lambda ms: next((x for x in ms[mark:] if x.payload == "offline"), None), 10, "will")
                delays.append(1000 * (m.t - t0))
                run.close()
            print(f"\n## last will after SIGKILL (keep-alive 60 s): {', '.join(f'{d:.0f}' for d in delays)} ms")
            run = start("silent", "keep-alive = 10s\n")
            sub.wait_for(lambda ms: ms and ms[-1].payload == "online", 10, "online")
            mark = len(sub.messages())
            rules = ("table inet uplinkd_mqsilent {\n  chain out {\n"
                     "    type filter hook output priority 0; policy accept;\n"
                     f"    oifname \"{GW_IFACE}\" drop\n  }}\n}}\n")
            labmod.run(lb.exec_argv("gw", ["nft", "-f", "-"]), input=rules)
            t0 = time.time()
            run.kill()
            m = sub.wait_for(lambda ms: next((x for x in ms[mark:] if x.payload == "offline"), None), 30, "will")
            labmod.run(lb.exec_argv("gw", ["nft", "delete", "table", "inet", "uplinkd_mqsilent"]), check=False)
            print(f"silent death (packets dropped, then SIGKILL; keep-alive 10 s): will after {m.t - t0:.1f} s "
                  f"(bound keep-alive x 1.5 = 15 s)")
            run.close()
            sub.stop()

        if "bytes" in parts:
            table = ("table inet uplinkd_mqbytes {\n"
                     "  chain i {\n    type filter hook input priority 0; policy accept;\n"
                     f"    iifname \"{GW_IFACE}\" counter\n  }}\n"
                     "  chain o {\n    type filter hook output priority 0; policy accept;\n"
                     f"    oifname \"{GW_IFACE}\" counter\n  }}\n}}\n")

            def counted():
                out = labmod.run(lb.exec_argv("gw", ["nft", "-j", "list", "table", "inet", "uplinkd_mqbytes"])).stdout
                return sum(x["counter"]["bytes"] for r in json.loads(out)["nftables"] if "rule" in r
                           for x in r["rule"]["expr"] if "counter" in x)
            labmod.run(lb.exec_argv("gw", ["nft", "-f", "-"]), input=table)
            window = args.bytes_window
            figures = {}
            metered = "\n[interface eth0]\nmetered = yes\n"     # the primary: the metered path
            for label, extra, what in (("ping", "metered-keep-alive = 10s\nmetered-heartbeat = 7d\n" + metered,
                                        "Received PINGREQ from uplinkd-gw1"),
                                       ("heartbeat", "metered-keep-alive = 65535s\nmetered-heartbeat = 10s\n" + metered,
                                        None)):
                run = start(f"bytes-{label}", extra, tls=True)
                time.sleep(2)   # the connect's own messages and acknowledgements are done
                log0, err0, b0 = broker.log.stat().st_size, run.stderr_size(), counted()
                time.sleep(window)  # a measurement window, not a wait for a condition
                b1 = counted()
                if what:
                    with open(broker.log, "rb") as f:
                        f.seek(log0)
                        n = f.read().decode(errors="replace").count(what)
                else:
                    n = len(re.findall(r"mqtt: sent uplinkd/gw1/state", run.stderr_since(err0)))
                figures[label] = (b1 - b0, n)
                run.stop()
            steady = None
            if args.steady_window:
                # The metered defaults as shipped, measured over the window as they are.
                run = start("bytes-steady", metered, tls=True)
                time.sleep(2)
                log0, b0 = broker.log.stat().st_size, counted()
                time.sleep(args.steady_window)  # the measurement window
                b1 = counted()
                with open(broker.log, "rb") as f:
                    f.seek(log0)
                    n = f.read().decode(errors="replace").count("Received PINGREQ from uplinkd-gw1")
                steady = (b1 - b0, n)
                run.stop()
            labmod.run(lb.exec_argv("gw", ["nft", "delete", "table", "inet", "uplinkd_mqbytes"]), check=False)
            (ping_bytes, pings), (beat_bytes, beats) = figures["ping"], figures["heartbeat"]
            per_ping = ping_bytes / max(1, pings)
            per_beat = (beat_bytes - 0) / max(1, beats)
            month = 30 * 86400
            metered = month / 1500 * per_ping + month / 43200 * per_beat
            unmetered = month / 60 * per_ping + month / 900 * per_beat
            print(f"\n## bytes on the wire (MQTT over TLS, IP bytes both ways, {window} s windows)")
            print(f"(a) {ping_bytes} B for {pings} keep-alive exchanges: {per_ping:.0f} B each")
            print(f"(b) {beat_bytes} B for {beats} heartbeats: {per_beat:.0f} B each")
            print(f"per 30 days at the metered defaults (keep-alive 25 min, heartbeat 12 h): "
                  f"{metered / 1e6:.2f} MB ({month / 1500:.0f} pings, {month / 43200:.0f} heartbeats)")
            print(f"per 30 days at the unmetered defaults (keep-alive 60 s, heartbeat 15 min): {unmetered / 1e6:.1f} MB")
            print("(heartbeats on a metered primary are `state` alone; unmetered ones add the uplinks whose "
                  "figures moved, so the unmetered figure is a lower bound)")
            if steady:
                print(f"(c) metered defaults as shipped, {args.steady_window} s at steady state: {steady[0]} B "
                      f"({steady[1]} keep-alive exchanges), {steady[0] * month / args.steady_window / 1e6:.2f} MB "
                      f"per 30 days projected (a window without a heartbeat: the line above counts them)")

        if "memory" in parts:
            print("\n## agent memory, idle 30 s after settling (three uplinks, same binary)")
            for label, mqtt in (("MQTT off", False), ("MQTT on", True)):
                run = start(f"mem-{label.split()[1]}", mqtt=mqtt, verbose=0)
                if mqtt:
                    broker_sub = Subscriber(broker, ["uplinkd/gw1/availability"], work / "mem.out")
                    broker_sub.wait_for(lambda ms: ms and ms[-1].payload == "online", 10, "online")
                    broker_sub.stop()
                time.sleep(args.memory_idle)   # idle window, measured after it
                from agentrun import proc_memory
                rss, dirty = proc_memory(run.pid)
                print(f"{label}: VmRSS {rss} KiB, Private_Dirty {dirty} KiB")
                run.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.environ.get("UPLINKD"))
    ap.add_argument("--gateways", type=int, default=10_000)
    ap.add_argument("--steady-seconds", type=float, default=30)
    ap.add_argument("--burst-seconds", type=float, default=5)
    ap.add_argument("--latency-samples", type=int, default=50)
    ap.add_argument("--will-runs", type=int, default=5)
    ap.add_argument("--bytes-window", type=int, default=65)
    ap.add_argument("--steady-window", type=int, default=1800,
                    help="seconds at the shipped metered settings (0: skip)")
    ap.add_argument("--memory-idle", type=int, default=30)
    ap.add_argument("--skip", default="")
    ap.add_argument("--smoke", action="store_true", help="tiny settings: that every part runs")
    ap.add_argument("--fleet-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--broker-pid", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fleet_worker:
        asyncio.run(fleet_worker(args))
        return 0
    if args.smoke:
        args.gateways, args.steady_seconds, args.burst_seconds = 200, 2, 1
        args.latency_samples, args.will_runs, args.bytes_window, args.memory_idle = 4, 1, 12, 2
        args.steady_window = 5
    if os.geteuid() != 0:
        print("bench_mqtt: needs root (network namespaces, nftables)", file=sys.stderr)
        return 1
    import lab as labmod
    import mqttlab
    problem = labmod.preflight(args.binary, tools=("nft",)) or mqttlab.unavailable_reason()
    if problem:
        print(f"bench_mqtt: {problem}", file=sys.stderr)
        return 1
    if args.binary is None:
        release = labmod.REPO_ROOT / ".build" / "release" / "uplinkd"
        args.binary = str(release if release.exists() else labmod.uplinkd_path())
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if "fleet" not in args.skip and hard < args.gateways + 100:
        args.gateways = hard - 100
        print(f"bench_mqtt: the open-files limit ({hard}) allows {args.gateways} gateways", file=sys.stderr)
    parts = [p for p in ("fleet", "latency", "will", "bytes", "memory") if p not in args.skip.split(",")]
    print(f"# bench_mqtt.py {' '.join(sys.argv[1:])}\nbinary: {args.binary}")
    if "fleet" in parts:
        run_fleet(args)
    agent_parts(args, parts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
