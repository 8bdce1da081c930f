#!/usr/bin/env python3
"""A bursty LAN upload for the failover lab (failoverlab.py), stdlib only: a UDP
stream whose answers come back in bursts, every few seconds.

    udpburst.py responder --bind ADDR --port P --role ROLE --every S --burst N
    udpburst.py sender --target ADDR --port P --period S --size B --log FILE

The responder (in an upstream namespace) takes every datagram and answers
nothing at once: every --every seconds (default 2) it sends --burst datagrams
(default 4) back to the last sender it heard from, each saying
"reply ROLE SEQ" (ROLE: its upstream's role, so the LAN side knows which uplink
carried it). The sender (in the LAN namespace) sends a datagram of --size bytes
(default 200) every --period seconds (default 0.05: 20 a second) to the target
until TERM, and appends a line to --log for every reply it receives:

    TIME reply ROLE SEQ

TIME is wall-clock seconds (time.time()). Both print "ready" on stdout once
their socket is open. To a gateway this looks like one-way traffic that stalls
for up to --every seconds between answers: packets keep leaving with nothing
coming back, then a burst arrives.
"""

import argparse
import select
import signal
import socket
import sys
import time

stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


def responder(args) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((args.bind, args.port))
    print("ready", flush=True)
    peer, seq = None, 0
    next_burst = time.monotonic() + args.every
    while not stop:
        wait = max(0.0, next_burst - time.monotonic())
        try:
            readable, _, _ = select.select([sock], [], [], wait)
        except InterruptedError:
            continue
        if readable:
            try:
                _data, peer = sock.recvfrom(65536)
            except OSError:
                pass
        if time.monotonic() >= next_burst:
            next_burst += args.every
            if peer is not None:
                for _ in range(args.burst):
                    seq += 1
                    try:
                        sock.sendto(f"reply {args.role} {seq}".encode(), peer)
                    except OSError:
                        pass
    return 0


def sender(args) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    payload = b"u" * args.size
    with open(args.log, "a", buffering=1) as log:
        print("ready", flush=True)
        next_send = time.monotonic()
        while not stop:
            now = time.monotonic()
            if now >= next_send:
                try:
                    sock.sendto(payload, (args.target, args.port))
                except OSError:
                    pass                       # no route for a moment: the stream goes on
                next_send += args.period
                if next_send < now:
                    next_send = now + args.period
            try:
                readable, _, _ = select.select([sock], [], [], max(0.0, next_send - time.monotonic()))
            except InterruptedError:
                continue
            while readable:
                try:
                    data = sock.recv(2048)
                except (BlockingIOError, ConnectionRefusedError):
                    break
                except OSError:
                    break
                fields = data.decode(errors="replace").split()
                if len(fields) == 3 and fields[0] == "reply":
                    log.write(f"{time.time():.6f} reply {fields[1]} {fields[2]}\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("responder")
    r.add_argument("--bind", required=True)
    r.add_argument("--port", type=int, default=9000)
    r.add_argument("--role", required=True)
    r.add_argument("--every", type=float, default=2.0)
    r.add_argument("--burst", type=int, default=4)
    s = sub.add_parser("sender")
    s.add_argument("--target", required=True)
    s.add_argument("--port", type=int, default=9000)
    s.add_argument("--period", type=float, default=0.05)
    s.add_argument("--size", type=int, default=200)
    s.add_argument("--log", required=True)
    args = ap.parse_args()
    if args.mode == "responder" and (args.every <= 0 or not 1 <= args.burst <= 100):
        ap.error("--every must be positive and --burst within 1..100")
    if args.mode == "sender" and (args.period <= 0 or not 1 <= args.size <= 1400):
        ap.error("--period must be positive and --size within 1..1400")
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    return responder(args) if args.mode == "responder" else sender(args)


if __name__ == "__main__":
    sys.exit(main())
