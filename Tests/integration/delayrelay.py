#!/usr/bin/env python3
"""A user-space delay line for the failover lab (failoverlab.py), stdlib only.

Runs inside a relay namespace of its own (ip netns exec RELAY python3
delayrelay.py --a IF --b IF --delay-ms N) between two veths, and forwards every
Ethernet frame that arrives on one to the other after a fixed one-way delay
(N ms each way: a 150 ms delay makes a 300 ms round trip), in order, as a
bridge would: ARP, IPv4 and IPv6 alike, MAC addresses untouched. It stands in
for netem, which the lab's kernels may not have.

How: one AF_PACKET raw socket bound to each interface, with PACKET_VNET_HDR, so
a frame comes with its virtio-net header (a checksum still to be completed, a
TCP super-frame still to be segmented) and goes out with it unchanged: the
interfaces' offloads need no change. The relay's own transmissions, which a
packet socket sees as outgoing, are skipped. An end taken down (carrier loss)
drops what is sent to it, and the relay carries on when it is up again. One thread, one select() loop; a
frame the kernel refuses (a full queue) is dropped and counted, as a real link
drops it.

With --delay-file PATH the delay can change while the relay runs (a latency
spike): the file holds a whole number of ms, read again within 100 ms of its
change; a new delay applies to frames arriving after it, and frames leave in the
order they came (a shorter delay waits behind the longer ones before it, as a
real queue drains).

Prints "ready" on stdout once both sockets are bound; on TERM it writes one line
to --log (or stderr): "a->b FRAMES DROPPED b->a FRAMES DROPPED".
"""

import argparse
import collections
import errno
import os
import select
import signal
import socket
import sys
import time

SOL_PACKET = 263
PACKET_VNET_HDR = 15
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
ETH_P_ALL = 0x0003
VNET_HDR_BYTES = 10
FRAME_BYTES = 65536 + VNET_HDR_BYTES        # a TCP super-frame with its header
BUFFER_BYTES = 4 * 1024 * 1024
MAX_DELAY_MS = 10_000
DELAY_FILE_CHECK_S = 0.1

stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


def open_socket(iface: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    try:
        sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    except OSError:
        pass                                  # older kernels: the pkttype check below
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER_BYTES)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER_BYTES)
    sock.bind((iface, ETH_P_ALL))
    sock.setblocking(False)
    return sock


class Direction:
    """Frames read from `src`, written to `dst` after the delay."""

    def __init__(self, name: str, src: socket.socket, dst: socket.socket, delay: float):
        self.name, self.src, self.dst, self.delay = name, src, dst, delay
        self.queue = collections.deque()      # (due, frame), due in arrival order
        self.frames = self.dropped = 0

    def read(self, now: float):
        while True:
            try:
                frame, address = self.src.recvfrom(FRAME_BYTES)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            except OSError as exc:
                # The interface went down (carrier loss played on the relay's end):
                # the socket reports it once and carries on when it is up again.
                if exc.errno in (errno.ENETDOWN, errno.ENXIO):
                    return
                raise
            if address[2] == PACKET_OUTGOING:
                continue
            self.queue.append((now + self.delay, frame))

    def write_due(self, now: float):
        while self.queue and self.queue[0][0] <= now:
            _due, frame = self.queue.popleft()
            try:
                self.dst.send(frame)
                self.frames += 1
            except OSError as exc:
                if exc.errno not in (errno.ENOBUFS, errno.EAGAIN, errno.EMSGSIZE, errno.ENETDOWN, errno.ENXIO):
                    raise
                self.dropped += 1

    def next_due(self):
        return self.queue[0][0] if self.queue else None


class DelayFile:
    """The one-way delay read from a file, again whenever its mtime changes."""

    def __init__(self, path: str, initial_ms: int):
        self.path, self.ms, self.mtime, self.checked = path, initial_ms, None, 0.0

    def delay_ms(self, now: float) -> int:
        if now - self.checked < DELAY_FILE_CHECK_S:
            return self.ms
        self.checked = now
        try:
            st = os.stat(self.path)
            if st.st_mtime_ns != self.mtime:
                self.mtime = st.st_mtime_ns
                with open(self.path) as f:
                    text = f.read().strip()
                if text.isdigit() and int(text) <= MAX_DELAY_MS:
                    self.ms = int(text)
                else:
                    print(f"delayrelay: {self.path}: {text[:40]!r} is not a whole number of ms "
                          f"in 0..{MAX_DELAY_MS}; keeping {self.ms} ms", file=sys.stderr)
        except OSError:
            pass                              # no file yet: the delay stays
        return self.ms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="one interface (in this namespace)")
    ap.add_argument("--b", required=True, help="the other interface")
    ap.add_argument("--delay-ms", type=int, required=True, help="one-way delay, each direction")
    ap.add_argument("--delay-file", help="a file whose whole number of ms, when it changes, is the new delay")
    ap.add_argument("--log", help="where the counts go at the end (default stderr)")
    args = ap.parse_args()
    if not 0 <= args.delay_ms <= MAX_DELAY_MS:
        ap.error(f"--delay-ms {args.delay_ms} out of 0..{MAX_DELAY_MS}")
    delay_file = DelayFile(args.delay_file, args.delay_ms) if args.delay_file else None
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    a, b = open_socket(args.a), open_socket(args.b)
    delay = args.delay_ms / 1000.0
    ways = [Direction(f"{args.a}->{args.b}", a, b, delay), Direction(f"{args.b}->{args.a}", b, a, delay)]
    by_socket = {way.src: way for way in ways}
    print("ready", flush=True)
    while not stop:
        now = time.monotonic()
        if delay_file:
            for way in ways:
                way.delay = delay_file.delay_ms(now) / 1000.0
        for way in ways:
            way.write_due(now)
        dues = [d for d in (way.next_due() for way in ways) if d is not None]
        wait = max(0.0, min(dues) - time.monotonic()) if dues else (DELAY_FILE_CHECK_S if delay_file else 1.0)
        try:
            readable, _, _ = select.select([a, b], [], [], wait)
        except InterruptedError:
            continue
        now = time.monotonic()
        for sock in readable:
            by_socket[sock].read(now)
    counts = " ".join(f"{way.name} {way.frames} {way.dropped}" for way in ways)
    if args.log:
        with open(args.log, "a") as f:
            f.write(counts + "\n")
    else:
        print(counts, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
