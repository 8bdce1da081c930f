#!/usr/bin/env python3
"""Metered uplinks as operators run them: the figures of data plans, cold standby, the
metered primary's own cadence and the failback flush, in the failover lab
(Tests/integration/failoverlab.py): one Markdown table with the targets beside.

    sudo python3 Tests/bench/bench_plans.py [--binary PATH] [--traffic-seconds S]
        [--cold-seconds S] [--runs N] [--primary-runs N] [--primary-seconds S]
        [--failback-runs N] [--skip PARTS] [--smoke] [--command TEXT]

The binary is --binary, else $UPLINKD, else .build/release/uplinkd if it has `run`,
else .build/debug/uplinkd. Progress goes to stderr; stdout gets a header and the
table. Nothing is asserted. Exit status 1 only when a part could not run at all.

The lab: eth0 (ethernet, primary), wlan0 (Wi-Fi), wwan0 (cellular, metered), a LAN
behind the gateway, the agent at its defaults with the shipped route-failover hook
and a recording hook, plus what each part sets. Parts (--skip takes their names):

  accounting  wwan0 with `plan = 10GB`; eth0 and wlan0 cut, so the LAN's traffic
              leaves through wwan0: 100 ms requests (lanclient), 1 MB downloads one
              after the other (curl) and a long-lived upload (tcpflow.py, 1400-byte
              lines every 20 ms) for --traffic-seconds (600). The plan's growth is
              compared with the nftables counters of wwan0 (IPv4, IP level: the
              gateway's own traffic and the forwarded traffic, both ways). Both are
              read while no agent runs (`keep-routes-on-stop = yes` keeps the LAN's
              route meanwhile): the agent writes its count at its stop.
  exact       wwan0 with a plan and `standby = cold` (the agent sends nothing on it
              while eth0 is primary): traffic through it (curl bound to it) with an
              agent running, with none, with one killed (SIGKILL), and across the
              interface deleted and created again (a modem re-enumerating). The
              plan's growth against what the kernel's link statistics say the
              devices carried at the IP level (less 14 bytes of Ethernet header a
              packet): the difference should be 0.
  cold        `[interface wwan0] standby = cold`, priority eth0 wwan0 wlan0: bytes
              on wwan0's wire (nftables) over --cold-seconds (1800) with a healthy
              eth0; then --runs (10) cuts of eth0 with LAN traffic (from just before
              the nft command to the first LAN answer through wwan0's upstream) and
              --runs without (to the start of the primary hook for wwan0). Between
              runs eth0 is restored and the agent waits until wwan0's last proof is
              older than verify-age, as in steady state.
  bearer      the same failover with the modem rig (Tests/integration/modemrig.py:
              the real ModemManager, an emulated modem) and `standby-bearer =
              disconnected`: the bearer is down while eth0 is primary, and the
              failover includes dialling it (--runs cuts with LAN traffic).
  primary     eth0 and wlan0 cut, wwan0 primary, the LAN idle: --primary-runs (5)
              cuts of wwan0's upstream, each timed to the hook event that takes it
              out of online; and the probe bytes on wwan0's wire: over the first
              120 s of primary service (the takeover's rounds, paid once per
              failover), then over --primary-seconds (1800) of steady primary
              service, given per month.
  failback    `hold-down = 5s`; eth0 cut, a long-lived TCP connection from the LAN
              through wlan0 (tcpflow.py, a line every 100 ms), eth0 restored: with
              FAILBACK_FLUSH=yes in the route hook's file, from the start of the
              failback hook to the first answer on the flow through eth0's upstream
              (--failback-runs, 5); without it, whether the flow got any answer
              through eth0 or a reset within 10 s.

accounting, cold and primary run in labs of their own in parallel (mostly asleep),
then the others in parallel (--smoke: all at once). cold and bearer use `hold-down =
5s` so eth0 is back sooner between runs (the failover figures do not depend on it). --smoke: every part very short (a check that the benchmark runs).
"""

import argparse
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchstats import NONE, Parts, fmt_s, median

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import failoverlab  # noqa: E402
import modemrig  # noqa: E402
from agentrun import AgentRun  # noqa: E402
from bench_agent import lab_binary  # noqa: E402
from bench_compare import header_lines, parse_bench_args  # noqa: E402
from failoverlab import FailoverLab  # noqa: E402
from plansupport import (Bulk, TcpFlows, device_counters, fetch, ip_bytes, plan_used, quiet_link,  # noqa: E402
                         recreate, snat_to_fixed_addresses, validate_sources, wire_bytes)

PARTS = ("accounting", "exact", "cold", "bearer", "primary", "failback")
FULL = {"traffic_seconds": 600.0, "cold_seconds": 1800.0, "runs": 10, "primary_runs": 5,
        "primary_seconds": 1800.0, "failback_runs": 5, "primary_interval": 0.0}
SMOKE = {"traffic_seconds": 10.0, "cold_seconds": 10.0, "runs": 1, "primary_runs": 1,
         "primary_seconds": 20.0, "failback_runs": 1, "primary_interval": 10.0}
MONTH_S = 30 * 86400
SETTLE_S = 60.0
# The takeover's own rounds (the verification, a full round with names resolved)
# are paid once per failover, not by the month: counted apart (--smoke: 5 s).
PRIMARY_START_S = 120.0
FAILOVER_S = 60.0
VERIFY_AGE_S = 5.0
T0 = time.monotonic()


def progress(msg):
    print(f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - T0:5.0f}s] {msg}", file=sys.stderr, flush=True)


def mb(n_bytes):
    return NONE if n_bytes is None else (f"{n_bytes / 1e6:.2f} MB" if n_bytes >= 1e5 else f"{n_bytes / 1e3:.1f} kB")


class Scene:
    """A failover lab, the agent in it, and what one part needs (a context manager)."""

    def __init__(self, binary, workdir: Path, name: str, wwan0=None, agent=None, hooks=None, env=None):
        self.binary, self.dir, self.name = binary, workdir / name, name
        self.wwan0, self.agent_keys, self.hooks, self.env = wwan0 or {}, agent or {}, hooks or {}, env
        self.lab = self.run = None
        self.runs = 0

    def config(self) -> str:
        # The cuts are repeated on one agent: flap damping, which damps exactly such
        # an uplink, would keep eth0 from the primary after the second.
        keys = {"plan-file": str(self.dir / "plans"), "flap-penalty": "0"}
        keys.update(self.agent_keys)
        return self.lab.agent_config(interfaces={"wwan0": self.wwan0}, sections={"agent": keys})

    def start(self, settle=True):
        self.runs += 1
        self.run = AgentRun(self.lab, self.dir / f"agent{self.runs}", self.config(),
                            hooks={**self.lab.agent_hooks(), **self.hooks}, binary=self.binary, verbose=1,
                            env=self.env).start()
        if settle:
            failoverlab.wait_settled(self.run, self.lab, SETTLE_S)
        return self.run

    def stop(self, sig=signal.SIGTERM):
        if self.run is not None:
            try:
                self.run.stop(sig)
            finally:
                self.run.close()
            self.run = None

    def __enter__(self):
        self.lab = FailoverLab().build()
        return self

    def __exit__(self, *exc):
        self.stop()
        if self.lab is not None:
            self.lab.destroy()
        return False

    def wait_primary(self, name, timeout=FAILOVER_S):
        return self.run.wait_state(lambda st: st["primary"] == name, timeout, f"{name} primary")

    def primary_event(self, name, since):
        """The hook event, waited for: the state file says so before the hook has run."""
        return self.event(lambda e: e.event == "primary" and e.primary == name and e.t >= since, f"{name}'s primary event")

    def event(self, predicate, what):
        return self.run.wait_until(lambda: next((e for e in self.run.events() if predicate(e)), None), 10, what)


def accounting(binary, workdir, seconds):
    with Scene(binary, workdir, "accounting", wwan0={"plan": "10GB"}, agent={"keep-routes-on-stop": "yes"}) as sc:
        lb = sc.lab
        sc.start()
        lb.cut("eth0")
        lb.cut("wlan0")
        sc.wait_primary("wwan0")
        sc.stop()
        used, wire = plan_used(sc.dir / "plans", "wwan0"), wire_bytes(lb, "wwan0")
        sc.start(settle=False)
        sc.wait_primary("wwan0")
        progress(f"accounting: {seconds:.0f} s of LAN traffic through wwan0")
        lan, bulk, flows = lb.lan_client(), Bulk(lb), TcpFlows(lb)
        flows.client(payload=1400, period=0.02)
        time.sleep(seconds)
        lan.stop()
        bulk.stop()
        flows.stop_client()
        sc.stop()
        counted = plan_used(sc.dir / "plans", "wwan0") - used
        carried = wire_bytes(lb, "wwan0") - wire
        return {"counted": counted, "carried": carried, "seconds": seconds}


def exact(binary, workdir):
    with Scene(binary, workdir, "exact", wwan0={"plan": "10GB", "standby": "cold"}) as sc:
        lb = sc.lab
        quiet_link(lb, "wwan0")       # no ARP, no IPv6: its wire carries only what is sent here
        sc.start()
        fetch(lb, "gw", 2_000_000, "wwan0")
        sc.stop()
        used0, device0 = plan_used(sc.dir / "plans", "wwan0"), device_counters(lb, "wwan0")
        fetch(lb, "gw", 1_000_000, "wwan0")                        # no agent
        sc.start()
        fetch(lb, "gw", 1_000_000, "wwan0")
        sc.stop(signal.SIGKILL)                                     # no last reading
        run = sc.start()
        fetch(lb, "gw", 1_000_000, "wwan0")
        old = device_counters(lb, "wwan0")
        # A veth's last word leaves out what it received: the reading with all of it first.
        before = used0 + ip_bytes(old) - ip_bytes(device0)
        run.wait_state(lambda st: int(st["uplinks"]["wwan0"]["plan_used_bytes"]) >= before, 20, "a reading with all of it")
        recreate(lb, "wwan0")
        quiet_link(lb, "wwan0")
        run.wait_stderr(r"wwan0: removed; its last counters go to its data plan", 10)
        run.wait_state(lambda st: st["uplinks"]["wwan0"]["verdict"] == "online", 30, "the new wwan0 online")
        fetch(lb, "gw", 1_000_000, "wwan0")
        sc.stop()
        counted = plan_used(sc.dir / "plans", "wwan0") - used0
        carried = ip_bytes(old) - ip_bytes(device0) + ip_bytes(device_counters(lb, "wwan0"))
        return {"counted": counted, "carried": carried}


def failovers(sc, runs, traffic):
    """Cuts of eth0 with the cold wwan0 next: seconds to the first LAN answer through
    wwan0's upstream (traffic) or to the start of its primary hook (idle)."""
    lb = sc.lab
    times = []
    for i in range(runs):
        lan = lb.lan_client(name=f"lan-{traffic}-{i}") if traffic else None
        if lan:
            lan.wait_flowing(via="eth")
        cut = time.time()
        lb.cut("eth0")
        sc.wait_primary("wwan0")
        if lan:
            lan.wait_flowing(via="cell", since=cut, timeout=FAILOVER_S)
            times.append(lan.outage(cut, "cell")[1] - cut)
            lan.stop()
        else:
            times.append(sc.primary_event("wwan0", cut).t - cut)
        progress(f"{sc.name}: {'traffic' if traffic else 'idle'} failover {i + 1}/{runs}: {times[-1]:.2f} s")
        lb.restore("eth0")
        sc.wait_primary("eth0", 120)
        # As in steady state: wwan0's last proof older than verify-age, resting again.
        time.sleep(3 * VERIFY_AGE_S)
    return times


def cold(binary, workdir, seconds, runs):
    # hold-down 5 s: eth0 takes the primary back sooner between runs (no failover figure
    # depends on it).
    with Scene(binary, workdir, "cold", wwan0={"standby": "cold"},
               agent={"priority": "eth0 wwan0 wlan0", "hold-down": "5s"}) as sc:
        lb = sc.lab
        sc.start()
        progress(f"cold: {seconds:.0f} s with a healthy eth0")
        before = lb.counters()["wwan0"]
        time.sleep(seconds)
        after = lb.counters()["wwan0"]
        wire = sum(after[k][1] - before[k][1] for k in ("local_in", "local_out", "fwd_in", "fwd_out"))
        return {"seconds": seconds, "wire": wire, "traffic": failovers(sc, runs, True), "idle": failovers(sc, runs, False)}


def bearer(binary, workdir, runs):
    if modemrig.unavailable_reason():
        raise RuntimeError(modemrig.unavailable_reason())
    with modemrig.ModemRig() as rig:
        rig.mmcli("-m", rig.modem_path(), "--simple-connect=apn=internet")
        with Scene(binary, workdir, "bearer", wwan0={"modem": modemrig.DEFAULT_IMEI, "standby": "cold",
                                                   "standby-bearer": "disconnected"},
                   agent={"priority": "eth0 wwan0 wlan0", "hold-down": "5s"},
                   env={"DBUS_SYSTEM_BUS_ADDRESS": rig.bus_address}) as sc:
            lb = sc.lab
            run = sc.start(settle=False)
            sc.wait_primary("eth0", SETTLE_S)
            times, dials = [], []
            for i in range(runs):
                run.wait_state(lambda st: st["uplinks"]["wwan0"]["reason"] == "standby", 60, "wwan0 parked")
                lan = lb.lan_client(name=f"lan-bearer-{i}")
                lan.wait_flowing(via="eth")
                mark = rig.log_mark()
                cut = time.time()
                lb.cut("eth0")
                sc.wait_primary("wwan0")
                lan.wait_flowing(via="cell", since=cut, timeout=FAILOVER_S)
                times.append(lan.outage(cut, "cell")[1] - cut)
                dials.append(bool([c for c in rig.commands(mark) if c.startswith("ATD")]))
                lan.stop()
                progress(f"bearer: failover {i + 1}/{runs}: {times[-1]:.2f} s")
                lb.restore("eth0")
                sc.wait_primary("eth0", 120)
            return {"traffic": times, "dialled": all(dials)}


def primary(binary, workdir, runs, seconds, interval, start_seconds=PRIMARY_START_S):
    wwan0 = {"primary-interval": f"{interval:g}s"} if interval else {}
    with Scene(binary, workdir, "primary", wwan0=wwan0) as sc:
        lb = sc.lab
        sc.start()
        lb.cut("eth0")
        lb.cut("wlan0")
        sc.wait_primary("wwan0")
        progress(f"primary: {start_seconds + seconds:.0f} s of wwan0 as the primary, the LAN idle")
        taken = lb.counters()["wwan0"]
        time.sleep(start_seconds)
        before = lb.counters()["wwan0"]
        time.sleep(seconds)
        after = lb.counters()["wwan0"]
        start_bytes = sum(before[k][1] - taken[k][1] for k in ("local_in", "local_out"))
        probe_bytes = sum(after[k][1] - before[k][1] for k in ("local_in", "local_out"))
        times = []
        for i in range(runs):
            cut = time.time()
            lb.cut("wwan0")
            sc.run.wait_state(lambda st: st["uplinks"]["wwan0"]["verdict"] != "online", 300, "wwan0 out of online")
            event = sc.event(lambda e: e.event == "verdict" and e.iface == "wwan0" and e.t >= cut, "wwan0's verdict event")
            times.append(event.t - cut)
            progress(f"primary: cut {i + 1}/{runs}: out of online after {times[-1]:.1f} s")
            lb.restore("wwan0")
            sc.run.wait_state(lambda st: st["primary"] == "wwan0" and st["uplinks"]["wwan0"]["verdict"] == "online",
                              120, "wwan0 primary again")
            # A cut at a random phase of the cadence, as a real one would fall.
            time.sleep((i * 37) % 100)
        return {"times": times, "bytes": probe_bytes, "seconds": seconds, "start_bytes": start_bytes,
                "start_seconds": start_seconds}


def failback(binary, workdir, runs, flush):
    name = "failback-flush" if flush else "failback-none"
    with Scene(binary, workdir, name, agent={"hold-down": "5s"}) as sc:
        lb = sc.lab
        lb.route_hook_conf.write_text("FAILBACK_FLUSH=yes\n" if flush else "# the hook's defaults\n")
        # Static SNAT (behind masquerade Linux itself drops a flow whose packets change
        # interface) and eth0's upstream dropping foreign sources, as a provider does.
        snat_to_fixed_addresses(lb)
        validate_sources(lb, "eth0")
        sc.start()
        flows = TcpFlows(lb)
        results = []
        for i in range(runs if flush else 1):
            lb.cut("eth0")
            sc.wait_primary("wlan0")
            flows.client(name=f"flow{i}")
            flows.wait(lambda ev: [e for e in ev if e[2] == "answer" and e[3] == "wifi"][10:], 20,
                       "the flow through wlan0", name=f"flow{i}")
            restored = time.time()
            lb.restore("eth0")
            sc.wait_primary("eth0")
            at = sc.primary_event("eth0", restored).t
            deadline = at + 10
            moved = None
            while time.time() < deadline and moved is None:
                moved = next((e for e in flows.events(f"flow{i}") if e[0] >= at and e[2] == "answer" and e[3] == "eth"),
                             None)
                time.sleep(0.05)
            events = [e for e in flows.events(f"flow{i}") if e[0] >= at]
            first = events[0][1] if events else None
            results.append({"moved": None if moved is None else moved[0] - at,
                            "reset": any(e[1] == first and e[2] == "reset" for e in events)})
            flows.stop_client(f"flow{i}")
            progress(f"{name}: {i + 1}: {results[-1]}")
        return results


def table(parts, args):
    r = parts.results
    rows = ["| figure | measured | target |", "|---|---|---|"]
    if "accounting" in r:
        a = r["accounting"]
        err = 100 * (a["counted"] - a["carried"]) / a["carried"] if a["carried"] else None
        rows.append(f"| accounting: LAN traffic through wwan0 over {a['seconds']:.0f} s, plan vs nftables | "
                    f"{mb(a['counted'])} vs {mb(a['carried'])}: {NONE if err is None else f'{err:+.3f} %'} | within 1 % |")
    if "exact" in r:
        e = r["exact"]
        rows.append(f"| accounting across a stop, a SIGKILL and a re-creation, plan vs link statistics | "
                    f"{e['counted']} vs {e['carried']} bytes: {e['counted'] - e['carried']:+d} | 0 |")
    if "cold" in r:
        c = r["cold"]
        rows.append(f"| cold wwan0: bytes on its wire over {c['seconds']:.0f} s with a healthy eth0 | {c['wire']} | 0 |")
        rows.append(f"| cold wwan0: failover with LAN traffic, median (n={len(c['traffic'])}) | "
                    f"{fmt_s(median(c['traffic']))} (max {fmt_s(max(c['traffic'], default=None))}) | ≤ 4 s |")
        rows.append(f"| cold wwan0: failover idle, median (n={len(c['idle'])}) | "
                    f"{fmt_s(median(c['idle']))} (max {fmt_s(max(c['idle'], default=None))}) | ≤ 12 s |")
    if "bearer" in r:
        b = r["bearer"]
        rows.append(f"| cold wwan0, bearer down (modem rig): failover with LAN traffic, dialling included, "
                    f"median (n={len(b['traffic'])}) | {fmt_s(median(b['traffic']))} (max "
                    f"{fmt_s(max(b['traffic'], default=None))}; dialled every time: {b['dialled']}) | ≤ 4 s |")
    if "primary" in r:
        p = r["primary"]
        setting = f", primary-interval {args.primary_interval:g} s" if args.primary_interval else ""
        rows.append(f"| wwan0 primary, idle LAN{setting}: upstream cut to out of online, median (n={len(p['times'])}) | "
                    f"{fmt_s(median(p['times']))} (max {fmt_s(max(p['times'], default=None))}) | ≤ 120 s |")
        rows.append(f"| wwan0 primary: probe bytes on its wire in its first {p['start_seconds']:.0f} s as primary "
                    f"(the takeover's rounds, once per failover) | {mb(p['start_bytes'])} | – |")
        rows.append(f"| wwan0 primary: probe bytes on its wire, per month of steady primary service "
                    f"({mb(p['bytes'])} in {p['seconds']:.0f} s after those) | {mb(p['bytes'] * MONTH_S / p['seconds'])} | ≤ 10 MB |")
    if "failback-flush" in r:
        f = r["failback-flush"]
        moved = [x["moved"] for x in f if x["moved"] is not None]
        rows.append(f"| failback, FAILBACK_FLUSH=yes: failback hook to the long-lived flow answered through eth0, "
                    f"median (n={len(f)}) | {fmt_s(median(moved))} (max {fmt_s(max(moved, default=None))}; "
                    f"moved {len(moved)}/{len(f)}) | ≤ 2 s |")
    if "failback-none" in r:
        n = r["failback-none"][0]
        rows.append(f"| failback without the flush: the long-lived connection | "
                    f"{'reset at the failback' if n['reset'] else 'not reset: its packets leave with wlan0 address and meet nothing'}"
                    f"; first answer through eth0 {NONE if n['moved'] is None else fmt_s(n['moved'])} after the hook "
                    f"(a new connection once the client's own 1 s timeout gave up) | not moved by the agent |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", help="the uplinkd to measure")
    ap.add_argument("--traffic-seconds", type=float, help="accounting: LAN traffic, s (600)")
    ap.add_argument("--cold-seconds", type=float, help="cold: healthy-primary window, s (1800)")
    ap.add_argument("--runs", type=int, help="cold and bearer: failovers of each kind (10)")
    ap.add_argument("--primary-runs", type=int, help="primary: cuts (5)")
    ap.add_argument("--primary-seconds", type=float, help="primary: bytes window, s (1800)")
    ap.add_argument("--failback-runs", type=int, help="failback: runs with the flush (5)")
    ap.add_argument("--primary-interval", type=float,
                    help="primary: wwan0's primary-interval, s (0: the default, 90 s; --smoke: 10)")
    ap.add_argument("--skip", default="", help=f"parts to leave out: {','.join(PARTS)}")
    args = parse_bench_args(ap, "--smoke", "every part very short", SMOKE, FULL)
    skip = set(filter(None, args.skip.split(",")))
    if skip - set(PARTS):
        ap.error(f"--skip: unknown parts {sorted(skip - set(PARTS))}; known: {','.join(PARTS)}")
    found = lab_binary(args.binary, tools=("nft", "dnsmasq", "curl"), lab_problem=failoverlab.unavailable_reason)
    if found is None:
        return 1
    binary, note = found
    import subprocess
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    header = header_lines("# uplinkd: data plans, cold standby, the metered primary, failback flush",
                          f"{version} ({binary})", args.command)
    header.append("- configuration: the failover lab's (`[interface X] dns = ROUTER`, built-in probes), "
                  "`flap-penalty = 0` (repeated cuts), plus each part's keys; hooks: 10-record, hooks/50-route-failover")
    if args.smoke:
        header.append("- NOTE: --smoke: every part very short, to check that the benchmark runs; not figures")
    if note:
        header.append(f"- {note}")
    parts = Parts()
    with tempfile.TemporaryDirectory(prefix="bench-plans.") as tmp:
        workdir = Path(tmp)
        # Long, mostly asleep parts in labs of their own at once; the short ones after
        # them (--smoke: all at once, to stay short).
        first, then = [], []
        if "accounting" not in skip:
            first.append(("accounting", lambda: accounting(binary, workdir, args.traffic_seconds)))
        if "cold" not in skip:
            first.append(("cold", lambda: cold(binary, workdir, args.cold_seconds, args.runs)))
        if "primary" not in skip:
            first.append(("primary", lambda: primary(binary, workdir, args.primary_runs, args.primary_seconds,
                                                     args.primary_interval, 5.0 if args.smoke else PRIMARY_START_S)))
        if "exact" not in skip:
            then.append(("exact", lambda: exact(binary, workdir)))
        if "bearer" not in skip:
            then.append(("bearer", lambda: bearer(binary, workdir, args.runs)))
        if "failback" not in skip:
            then.append(("failback-flush", lambda: failback(binary, workdir, args.failback_runs, True)))
            then.append(("failback-none", lambda: failback(binary, workdir, 1, False)))
        groups = [first + then] if args.smoke else [first, then]
        for group in groups:
            threads = [threading.Thread(target=parts.attempt, args=part) for part in group]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    print("\n".join(header + [""] + table(parts, args)))
    if parts.errors:
        print("\nparts that could not run:\n" + "\n".join(f"- {e}" for e in parts.errors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
