#!/usr/bin/env python3
"""Failover in the setup most gateways have, at the agent's defaults: the ethernet
primary eth0, a captive Wi-Fi wlan0 (its portal never logged into) and the metered
cellular wwan0 as the backup, in the failover lab (Tests/integration/failoverlab.py),
with the shipped route-failover hook unless a part says otherwise. Each cut is of
eth0's upstream (carrier up), at a random phase; its time runs from just before the
`nft` command of the cut to the start of the primary hook (the hook log).

    sudo python3 Tests/bench/bench_cellular_failover.py --binary .build/release/uplinkd

Parts (--skip any):
  cut-sequential  one LAN client fetching a page at a time (lanclient.py, 1 s timeout,
                  100 ms between requests: an IoT device polling its cloud)
  cut-flows       LAN requests every 100 ms each on time (many flows)
  cut-idle        no LAN traffic, MQTT off
  cut-idle-mqtt   no LAN traffic, MQTT on, the broker on the internet side of the lab
                  (FailoverLab(cloud=True)); also the time from the primary hook to the
                  `state` naming wwan0 at a subscriber beside the broker, and whether it
                  came while eth0 was still cut
  mqtt-no-hook    as cut-idle-mqtt without the route hook (the main table keeps its
                  default route through eth0): hook to subscriber only
  all-dead        every upstream cut, the site without a primary for --dead-seconds, then
                  only wwan0's upstream restored: restore to wwan0's primary hook, and
                  what wwan0 put on the wire per hour without a primary (nftables
                  counters of the gateway's own traffic on wwan0, both directions)

Prints one Markdown table: median and p95 per part, every run, what raised the doubt.
"""

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from benchstats import NONE, fmt_s, median, p95

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
from agentrun import AgentError, AgentRun  # noqa: E402
from bench_compare import parse_bench_args  # noqa: E402
from bench_failover import STALL_RE, lab_bench_header, progress, skipped_parts  # noqa: E402
from failoverlab import FailoverLab  # noqa: E402
from mqttlab import MqttBroker, Subscriber  # noqa: E402

PARTS = ("cut-sequential", "cut-flows", "cut-idle", "cut-idle-mqtt", "mqtt-no-hook", "all-dead")
FULL = {"runs": 10, "dead_runs": 5, "dead_seconds": 60.0, "detect_timeout": 60.0, "back_timeout": 240.0}
SMOKE = {"runs": 1, "dead_runs": 1, "dead_seconds": 10.0, "detect_timeout": 45.0, "back_timeout": 120.0}
SETTLE_S = 90.0
PHASE_S = 30.0                      # eth0's light-round interval: the cut's random phase
LIVENESS_RE = r"round on eth0: eth0: \w+ .*\(liveness round\)$"
CONFIG = ("`[interface X] dns = ROUTER` only (built-in probes, every other setting at its default); "
          "wlan0 behind a captive portal; hooks: 10-record, hooks/50-route-failover (but mqtt-no-hook)")


class Scene:
    """A failover lab with a captive wlan0 and the agent at its defaults in it."""

    def __init__(self, binary, workdir: Path, name: str, *, client=None, mqtt=False, route_hook=True, interfaces=None):
        self.binary, self.dir, self.name = binary, workdir / name, name
        self.interfaces = interfaces
        self.client_mode, self.mqtt, self.route_hook = client, mqtt, route_hook
        self.lab = self.run = self.client = self.broker = self.subscriber = None

    def __enter__(self):
        self.lab = FailoverLab(cloud=self.mqtt).build()
        try:
            self.lab.captive("wlan0")
            config = self.lab.agent_config(interfaces=self.interfaces, sections={"agent": {"flap-penalty": "0"}})
            if self.mqtt:
                self.broker = MqttBroker(self.lab, self.dir / "broker", cloud=True).build().start()
                self.subscriber = Subscriber(self.broker, ["uplinkd/gw1/state"], self.dir / "sub.log")
                credentials = self.broker.credentials_file(self.dir / "credentials")
                config += self.broker.mqtt_section(credentials, node="gw1")
            if self.client_mode:
                self.client = self.lab.lan_client(concurrent=self.client_mode == "flows")
            self.run = AgentRun(self.lab, self.dir / "agent", config,
                                hooks=self.lab.agent_hooks() if self.route_hook else {},
                                binary=self.binary, verbose=2).start(timed=True)
            self.settled()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def settled(self, timeout=SETTLE_S):
        if self.route_hook:
            failoverlab.wait_settled(self.run, self.lab, timeout, online=("eth0", "wwan0"))
        else:
            self.run.wait_state(lambda s: s["primary"] == "eth0" and s["uplinks"]["wwan0"]["verdict"] == "online",
                                timeout, "eth0 primary, wwan0 online")
        self.run.wait_state(lambda s: s["uplinks"]["wlan0"]["verdict"] == "captive", timeout, "wlan0 captive")
        if self.client:
            self.client.wait_flowing("eth", timeout=30)

    def __exit__(self, *exc):
        for stop in (lambda: self.run and self.run.stop(), lambda: self.run and self.run.close(),
                     lambda: self.subscriber and self.subscriber.stop(), lambda: self.broker and self.broker.destroy(),
                     lambda: self.lab and self.lab.destroy()):
            try:
                stop()
            except Exception as exc:                                  # keep tearing down
                print(f"bench: teardown: {exc}", file=sys.stderr)
        return False

    def primary_hook(self, since, primary, timeout):
        return self.run.wait_until(lambda: next((e for e in self.run.events() if e.t >= since
                                                 and e.event == "primary" and e.primary == primary), None),
                                   timeout, f"the primary hook for {primary}")

    def cause(self, since_mono):
        lines = [line for t, line in list(self.run.lines) if t >= since_mono]
        for line in lines:
            if STALL_RE.search(line):
                return "lone-packet" if "lone-packet rule" in line else "stall"
            if "(liveness round)" in line and "round on eth0: eth0: limited" in line:
                return "liveness"
            if "(light round)" in line and "round on eth0: eth0: limited" in line:
                return "light"
        return "other"

    def state_at_subscriber(self, since, primary):
        for m in self.subscriber.messages():
            if m.t >= since and json.loads(m.payload).get("primary") == primary:
                return m
        return None


def cut_part(binary, workdir, name, runs, args, *, client=None, mqtt=False, route_hook=True):
    samples = []
    with Scene(binary, workdir, name, client=client, mqtt=mqtt, route_hook=route_hook) as sc:
        for k in range(runs):
            time.sleep(random.uniform(0.0, PHASE_S))
            t0, m0 = time.time(), time.monotonic()
            sc.lab.cut("eth0")
            sample = {}
            try:
                hook = sc.primary_hook(t0, "wwan0", args.detect_timeout)
                sample.update(detect=hook.t - t0, cause=sc.cause(m0))
                if mqtt:
                    seen = sc.run.wait_until(lambda: sc.state_at_subscriber(t0, "wwan0"), args.detect_timeout,
                                             "the state naming wwan0 at the subscriber")
                    sample.update(mqtt=seen.t - hook.t, during=sc.lab.is_cut("eth0"))
            except AgentError as exc:
                sample["error"] = str(exc).splitlines()[0]
            finally:
                sc.lab.restore("eth0")
            samples.append(sample)
            progress(f"{name} {k + 1}/{runs}: " + ", ".join(f"{key} {fmt(value)}" for key, value in sample.items()))
            if k < runs - 1:
                sc.settled(args.back_timeout)
    return samples


def all_dead_part(binary, workdir, runs, args):
    samples = []
    # --smoke: wwan0 as the primary is checked every 15 s, not its default 90 s, so
    # that the site is without a primary sooner (the smoke's figures are not read).
    interfaces = {"wwan0": {"primary-interval": "15s"}} if args.smoke else None
    with Scene(binary, workdir, "all-dead", interfaces=interfaces) as sc:
        for k in range(runs):
            for iface in ("eth0", "wlan0", "wwan0"):
                sc.lab.cut(iface)
            sample = {}
            try:
                # wwan0 takes over first; a metered primary is checked every 90 s when idle
                # (--smoke: 15 s).
                sc.run.wait_state(lambda s: s["primary"] == "-", max(args.detect_timeout, 120.0), "no primary")
                before = sc.lab.counters()["wwan0"]
                w0 = time.monotonic()
                time.sleep(args.dead_seconds)
                after = sc.lab.counters()["wwan0"]
                spent = (after["local_in"][1] + after["local_out"][1]) - (before["local_in"][1] + before["local_out"][1])
                sample["bytes_per_hour"] = spent * 3600 / (time.monotonic() - w0)
                t0 = time.time()
                sc.lab.restore("wwan0")
                hook = sc.primary_hook(t0, "wwan0", args.detect_timeout)
                sample["detect"] = hook.t - t0
            except AgentError as exc:
                sample["error"] = str(exc).splitlines()[0]
            finally:
                for iface in ("eth0", "wlan0", "wwan0"):
                    sc.lab.restore(iface)
            samples.append(sample)
            progress(f"all-dead {k + 1}/{runs}: " + ", ".join(f"{key} {fmt(value)}" for key, value in sample.items()))
            if k < runs - 1:
                sc.settled(args.back_timeout)
    return samples


def fmt(value):
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def table(results, args):
    lines = ["| figure | value | target |", "|---|---|---|"]

    def times(samples, key):
        return [s[key] for s in samples if s.get(key) is not None]

    def med_p95(xs):
        return f"{fmt_s(median(xs))} / {fmt_s(p95(xs))} (n={len(xs)})" if xs else NONE

    targets = {"cut-sequential": "median ≤ 1.0 s, p95 ≤ 1.5 s", "cut-flows": "median ≤ 1.0 s, p95 ≤ 1.5 s",
               "cut-idle": "median ≤ 3 s, p95 ≤ 5 s", "cut-idle-mqtt": "median ≤ 3 s, p95 ≤ 5 s"}
    for part in PARTS:
        samples = results.get(part)
        if samples is None:
            continue
        lines.append(f"| **{part}** |  |  |")
        if part != "mqtt-no-hook":
            label = "wwan0's upstream restored → primary hook" if part == "all-dead" else "cut → primary hook"
            lines.append(f"| {label}: median / p95 | {med_p95(times(samples, 'detect'))} | "
                         f"{targets.get(part, 'median ≤ 10 s' if part == 'all-dead' else NONE)} |")
            lines.append(f"| each run | {', '.join(fmt_s(x) for x in times(samples, 'detect'))} | – |")
        if part in ("cut-idle-mqtt", "mqtt-no-hook"):
            lines.append(f"| primary hook → `state` naming wwan0 at the cloud subscriber: median / p95 | "
                         f"{med_p95(times(samples, 'mqtt'))} | median ≤ 2 s |")
            during = [s.get("during") for s in samples if "during" in s]
            lines.append(f"| ... while eth0 was still cut | {sum(1 for d in during if d)} of {len(during)} | all |")
        causes = [s["cause"] for s in samples if s.get("cause")]
        if causes:
            lines.append(f"| what raised the doubt (runs) | "
                         f"{', '.join(f'{c} ({causes.count(c)})' for c in sorted(set(causes)))} | – |")
        if part == "all-dead":
            per_hour = times(samples, "bytes_per_hour")
            lines.append(f"| wwan0 on the wire per hour without a primary (median) | "
                         f"{median(per_hour) / 1000:.1f} kB | stated |" if per_hour else "| bytes | – | – |")
        errors = [s["error"] for s in samples if "error" in s]
        if errors:
            lines.append(f"| runs that failed | {len(errors)}: {errors[0]} | none |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--runs", type=int, help="cuts per cut part (10)")
    ap.add_argument("--dead-runs", type=int, help="runs of all-dead (5)")
    ap.add_argument("--dead-seconds", type=float, help="time without a primary in all-dead, s (60)")
    ap.add_argument("--detect-timeout", type=float, help="bound of one cut, s (60)")
    ap.add_argument("--back-timeout", type=float, help="bound of the return to eth0 between cuts, s (240)")
    ap.add_argument("--skip", default="", help="comma list of " + ",".join(PARTS))
    args = parse_bench_args(ap, "--smoke", "one short run of each part (CI)", SMOKE, FULL)
    skip = skipped_parts(ap, args, PARTS)
    started = lab_bench_header(args, "uplinkd failover with a metered cellular backup "
                                     "(Tests/bench/bench_cellular_failover.py)", "single runs", config=CONFIG)
    if started is None:
        return 1
    binary, header = started
    results, failed = {}, []
    plan = [
        ("cut-sequential", lambda w: cut_part(binary, w, "cut-sequential", args.runs, args, client="sequential")),
        ("cut-flows", lambda w: cut_part(binary, w, "cut-flows", args.runs, args, client="flows")),
        ("cut-idle", lambda w: cut_part(binary, w, "cut-idle", args.runs, args)),
        ("cut-idle-mqtt", lambda w: cut_part(binary, w, "cut-idle-mqtt", args.runs, args, mqtt=True)),
        ("mqtt-no-hook", lambda w: cut_part(binary, w, "mqtt-no-hook", args.runs, args, mqtt=True, route_hook=False)),
        ("all-dead", lambda w: all_dead_part(binary, w, args.dead_runs, args)),
    ]
    with tempfile.TemporaryDirectory(prefix="bench-cellular-") as tmp:
        for part, run in plan:
            if part in skip:
                continue
            progress(f"{part}: started")
            try:
                results[part] = run(Path(tmp))
            except Exception as exc:                        # a part that cannot run is reported
                failed.append(f"{part}: {exc}")
    print("\n".join(header))
    print()
    print(table(results, args))
    for error in failed:
        print(f"\nNOT MEASURED, {error}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
