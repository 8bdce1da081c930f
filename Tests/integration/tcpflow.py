#!/usr/bin/env python3
"""A long-lived TCP flow for the failover lab (failoverlab.py), stdlib only: what a
LAN host's SSH session or VPN tunnel looks like to the gateway.

    tcpflow.py serve --role ROLE --log FILE [--bind ADDR] [--port N] [--role-of PREFIX=ROLE ...]
    tcpflow.py client --log FILE [--target ADDR] [--port N] [--period S] [--timeout S]
                      [--payload BYTES] [--source ADDR] [--pause-file PATH]
    tcpflow.py burst --log FILE --count N [--target ADDR] [--port N] [--timeout S]
                     [--source ADDR ...] [--parallel K] [--deadline S]

serve (in an upstream namespace): accepts connections on ADDR:PORT (default
203.0.113.80:5002) and answers every line it receives with "ROLE\\n", so the
client learns which upstream carries its connection. Logs one line per connection
accepted: "TIME accepted CLIENT-ADDRESS". With --role-of (repeatable; the first
prefix holding the peer's address wins) the answer is the role of the peer's
address instead: one server behind every upstream (the failover lab's cloud host)
then tells through which upstream its answers go back, by the source address it
sees (an upstream's carrier-grade NAT address, or the gateway's address on that
uplink); a peer no prefix holds gets ROLE.

client (in the LAN namespace): keeps ONE connection open as long as it works,
sending a line (--payload bytes, default 64, then a newline) every --period
seconds (default 0.1) and waiting at most --timeout (default 1.0) for its answer.
Only when the connection fails does it open a new one (at the next period). Each
event appends one line to --log:

    TIME CONNECTION EVENT UPSTREAM

TIME is wall-clock seconds (time.time(), the clock of the hook log), CONNECTION
the number of the connection (1, 2, ...), EVENT `connected`, `answer`, `reset`
(the peer reset it: ECONNRESET, EPIPE), `timeout`, `refused`, `unreachable`,
`closed` (the peer closed it) or `error`, UPSTREAM the role that answered (`-`
for anything but an answer). Both print "ready" on stdout once their log is open.

--source binds the client's connections to one of the LAN host's addresses (a
second LAN host, as the gateway sees it). --pause-file: while that file exists the
client sends nothing and keeps its connection as it is, an idle session (`paused`
once when it notices the file, `resumed` when it is gone, both with UPSTREAM `-`).

burst (in the LAN namespace): opens --count short connections, each one line out,
its answer back, then closed by the client, --parallel at a time (default 1), each
from the next of the --source addresses in turn (the kernel's choice without one);
no new connection after --deadline seconds (default: none). One line per connection
in --log, in the order they end:

    TIME NUMBER SOURCE EVENT UPSTREAM

SOURCE the address asked for (`-` for the kernel's choice), EVENT and UPSTREAM as
the client's. Prints "done N" on stdout at the end (N connections tried).
"""

import argparse
import errno
import ipaddress
import itertools
import os
import signal
import socket
import socketserver
import sys
import threading
import time

stop = False
PORT = 5002
ADDRESS = "203.0.113.80"
MAX_LINE = 65536


def on_term(_sig, _frame):
    global stop
    stop = True


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        peer = self.client_address[0]
        self.server.record(f"accepted {peer}")
        answer = self.server.role_of(peer).encode() + b"\n"
        while True:
            try:
                line = self.rfile.readline(MAX_LINE)
            except OSError:
                return
            if not line:
                return
            try:
                self.wfile.write(answer)
            except OSError:
                return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # Bursts of short connections (burst --parallel) must not meet a full backlog
    # (socketserver's default is 5): a dropped SYN costs its client a second.
    request_queue_size = 128

    def __init__(self, address, role, log, roles=()):
        super().__init__(address, Handler)
        self.role, self.log, self.lock = role, log, threading.Lock()
        self.roles = tuple(roles)            # ((network, role), ...), first match wins

    def role_of(self, peer: str) -> str:
        address = ipaddress.ip_address(peer)
        return next((role for net, role in self.roles if address in net), self.role)

    def record(self, text):
        with self.lock:
            self.log.write(f"{time.time():.6f} {text}\n")
            self.log.flush()


def prefix_role(text: str):
    """(network, role) of a --role-of PREFIX=ROLE argument."""
    prefix, sep, role = text.partition("=")
    if not sep or not role or any(c.isspace() for c in role):
        raise argparse.ArgumentTypeError(f"not PREFIX=ROLE: {text!r}")
    try:
        return ipaddress.ip_network(prefix), role
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def serve(args) -> int:
    with open(args.log, "a") as log:
        server = Server((args.bind, args.port), args.role, log, args.role_of)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print("ready", flush=True)
        while not stop:
            time.sleep(0.2)
        server.shutdown()
    return 0


def failure(exc) -> str:
    if isinstance(exc, socket.timeout):
        return "timeout"
    code = getattr(exc, "errno", None)
    if code in (errno.ECONNRESET, errno.EPIPE):
        return "reset"
    if code == errno.ECONNREFUSED:
        return "refused"
    if code in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        return "unreachable"
    return "error"


def exchange(sock, payload: bytes, timeout: float, buf: bytes):
    """Send one line, wait at most `timeout` for one line back: (answer, rest of
    the buffer). socket.timeout, OSError, or ConnectionError("closed")."""
    sock.settimeout(timeout)
    sock.sendall(payload)
    deadline = time.monotonic() + timeout
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout()
        sock.settimeout(left)
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    line, _, buf = buf.partition(b"\n")
    return line.decode(errors="replace") or "-", buf


def client(args) -> int:
    payload = b"x" * args.payload + b"\n"
    source = (args.source, 0) if args.source else None
    with open(args.log, "a") as log:
        def record(number, event, upstream="-"):
            log.write(f"{time.time():.6f} {number} {event} {upstream}\n")
            log.flush()

        print("ready", flush=True)
        number, sock, buf = 0, None, b""
        paused = False
        next_at = time.monotonic()
        while not stop:
            if args.pause_file:
                if os.path.exists(args.pause_file) != paused:
                    paused = not paused
                    record(number, "paused" if paused else "resumed")
                if paused:
                    next_at += args.period
                    time.sleep(max(0.0, next_at - time.monotonic()))
                    continue
            try:
                if sock is None:
                    number += 1
                    buf = b""
                    sock = socket.create_connection((args.target, args.port), timeout=args.timeout,
                                                    source_address=source)
                    record(number, "connected")
                upstream, buf = exchange(sock, payload, args.timeout, buf)
                record(number, "answer", upstream)
            except (OSError, ConnectionError) as exc:
                record(number, "closed" if str(exc) == "closed" else failure(exc))
                if sock is not None:
                    sock.close()
                sock = None
            next_at += args.period
            time.sleep(max(0.0, next_at - time.monotonic()))
        if sock is not None:
            sock.close()
    return 0


def burst(args) -> int:
    """--count short connections, --parallel threads taking the next number."""
    payload = b"x" * args.payload + b"\n"
    sources = args.source or [None]
    numbers = itertools.count(1)
    lock = threading.Lock()
    end = time.monotonic() + args.deadline if args.deadline else None
    tried = []
    with open(args.log, "a") as log:
        def worker():
            while not stop:
                with lock:
                    number = next(numbers)
                    if number > args.count or (end is not None and time.monotonic() >= end):
                        return
                    tried.append(number)
                source = sources[(number - 1) % len(sources)]
                sock, event, upstream = None, "answer", "-"
                try:
                    sock = socket.create_connection((args.target, args.port), timeout=args.timeout,
                                                    source_address=(source, 0) if source else None)
                    upstream, _ = exchange(sock, payload, args.timeout, b"")
                except (OSError, ConnectionError) as exc:
                    event = "closed" if str(exc) == "closed" else failure(exc)
                finally:
                    if sock is not None:
                        sock.close()
                with lock:
                    log.write(f"{time.time():.6f} {number} {source or '-'} {event} {upstream}\n")
                    log.flush()

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, args.parallel))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(f"done {len(tried)}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--role", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--bind", default=ADDRESS)
    s.add_argument("--port", type=int, default=PORT)
    s.add_argument("--role-of", type=prefix_role, action="append", default=[])
    c = sub.add_parser("client")
    c.add_argument("--log", required=True)
    c.add_argument("--target", default=ADDRESS)
    c.add_argument("--port", type=int, default=PORT)
    c.add_argument("--period", type=float, default=0.1)
    c.add_argument("--timeout", type=float, default=1.0)
    c.add_argument("--payload", type=int, default=64)
    c.add_argument("--source")
    c.add_argument("--pause-file")
    b = sub.add_parser("burst")
    b.add_argument("--log", required=True)
    b.add_argument("--count", type=int, required=True)
    b.add_argument("--target", default=ADDRESS)
    b.add_argument("--port", type=int, default=PORT)
    b.add_argument("--timeout", type=float, default=1.0)
    b.add_argument("--payload", type=int, default=64)
    b.add_argument("--source", action="append")
    b.add_argument("--parallel", type=int, default=1)
    b.add_argument("--deadline", type=float)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    return {"serve": serve, "client": client, "burst": burst}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
