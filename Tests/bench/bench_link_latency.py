"""Benchmark: carrier change to `uplinkd links --watch --json` output (prints figures).

    sudo python3 Tests/bench/bench_link_latency.py [PATH_TO_UPLINKD] [--flips N]
        [--iface wlan0|eth0|wwan0|eth1] [--gap SECONDS]

For each flip, `ip -n UPSTREAM link set PEER down` is run and the time from just
before that command starts to the arrival of uplinkd's `carrier-down` line on our
end of its stdout pipe is measured; then the peer is set up again and the
`carrier-up` line awaited before the next flip. This is netlink-to-stdout latency
INCLUDING the pipe to this process (and the kernel's own delay in sending the
notification); it says nothing about probing. The lower bound (measured from the
return of the `ip` command) is printed too.

As a baseline, `ip -o monitor link` runs in the same namespace and its line for
the same change is timed the same way: the difference is uplinkd's own cost.
That matters because the kernel's linkwatch treats a veth whose ifindex equals
its peer's (eth0 of the lab: 2 and 2) as non-urgent and sends its carrier-down up
to 1 s late, rate-limited to one run a second; hence the default --iface wlan0
(ifindex 3, peer 2: urgent) and a pause (--gap) before each flip.
"""

import argparse
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from benchstats import summary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))   # the lab
import lab as labmod  # noqa: E402
from linkswatch import LinksWatch, WatchError, match  # noqa: E402


class IpMonitor:
    """`ip -o monitor link` in gw, read with the same select loop as uplinkd's output."""

    def __init__(self, lb):
        self.proc = subprocess.Popen(["ip", "-n", lb.gw, "-o", "monitor", "link"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=0)
        self.fd = self.proc.stdout.fileno()
        self.buf = b""
        self.lines = []     # (arrival, line)
        self.pos = 0

    def read_once(self):
        chunk = os.read(self.fd, 65536)
        if not chunk:
            raise RuntimeError("ip monitor exited")
        now = time.monotonic()
        self.buf += chunk
        *done, self.buf = self.buf.split(b"\n")
        self.lines += [(now, ln) for ln in done]

    def find(self, iface: str, carrier: bool):
        """Arrival time of the next line showing iface with that carrier, or None."""
        tag = f": {iface}@".encode()
        while self.pos < len(self.lines):
            t, line = self.lines[self.pos]
            self.pos += 1
            if tag in line and b"<" in line:
                flags = line.split(b"<", 1)[1].split(b">", 1)[0].split(b",")
                if (b"LOWER_UP" in flags and b"NO-CARRIER" not in flags) == carrier:
                    return t
        return None

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=5)
        self.proc.stdout.close()


def await_both(watch, mon, iface, carrier, timeout=5.0):
    """(arrival of uplinkd's carrier event, arrival of ip monitor's line), both
    read in one select loop so that neither reader is favoured."""
    pred = match("carrier-up" if carrier else "carrier-down", iface)
    deadline = time.monotonic() + timeout
    got_w = got_m = None
    while True:
        if got_w is None:
            for i in range(watch.cursor, len(watch.events)):
                if pred(watch.events[i]):
                    watch.cursor = i + 1
                    got_w = watch.arrivals[i]
                    break
        if got_m is None:
            got_m = mon.find(iface, carrier)
        if got_w is not None and got_m is not None:
            return got_w, got_m
        left = deadline - time.monotonic()
        if left <= 0 or watch.eof:
            raise TimeoutError(f"carrier={carrier} on {iface}: uplinkd "
                               f"{'seen' if got_w else 'NOT seen'}, ip monitor "
                               f"{'seen' if got_m else 'NOT seen'} within {timeout}s\n"
                               f"{watch.transcript(40)}")
        readable, _, _ = select.select([watch.fd, mon.fd], [], [], left)
        if watch.fd in readable:
            watch.pump(time.monotonic())      # readable: does not block
        if mon.fd in readable:
            mon.read_once()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?", default=str(labmod.uplinkd_path()))
    parser.add_argument("--flips", type=int, default=20)
    parser.add_argument("--iface", default="wlan0", choices=sorted(labmod.UPLINK_BY_IFACE))
    parser.add_argument("--gap", type=float, default=1.1,
                        help="pause before each flip, seconds (kernel linkwatch pacing)")
    args = parser.parse_args()
    if args.flips < 1:
        parser.error("--flips must be at least 1")
    problem = labmod.preflight(args.binary)
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return 1

    iface = args.iface
    with labmod.Lab() as lb:
        role, peer = lb.peer_of(iface)
        mon = IpMonitor(lb)
        try:
            watch = LinksWatch(lb, args.binary, all_=True)   # --all: eth1 is no uplink
        except WatchError as exc:
            mon.stop()
            print(f"bench: {exc}", file=sys.stderr)
            return 1
        down_before, down_after, up_before, base_before = [], [], [], []
        try:
            for _ in range(args.flips):
                for carrier in (False, True):
                    time.sleep(args.gap)
                    t0 = time.monotonic()
                    lb.ip(role, "link", "set", peer, "up" if carrier else "down")
                    t1 = time.monotonic()
                    arrived, base = await_both(watch, mon, iface, carrier)
                    if carrier:
                        up_before.append(arrived - t0)
                    else:
                        down_before.append(arrived - t0)
                        down_after.append(arrived - t1)
                        base_before.append(base - t0)
        except (WatchError, TimeoutError, RuntimeError) as exc:
            print(f"bench: {exc}", file=sys.stderr)
            return 1
        finally:
            rc = watch.stop()
            mon.stop()
        n = len(down_before)
        print(f"uplinkd links --watch --json: {iface} carrier, {n} flips "
              f"(peer {peer} in the {role} namespace; pause {args.gap}s before each change)")
        print(summary("carrier-down, from before `ip` started", down_before))
        print(summary("carrier-down, from after `ip` returned", down_after))
        print(summary("carrier-up, from before `ip` started", up_before))
        print(summary("baseline `ip monitor link`, carrier-down", base_before))
        print(summary("uplinkd minus baseline (per flip)", [u - b for u, b in zip(down_before, base_before)]))
        print(f"  (includes the pipe to this process; uplinkd exit status on SIGTERM: {rc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
