#!/usr/bin/env python3
"""A long-lived TCP flow for the failover lab (failoverlab.py), stdlib only: what a
LAN host's SSH session or VPN tunnel looks like to the gateway.

    tcpflow.py serve --role ROLE --log FILE [--bind ADDR] [--port N]
    tcpflow.py client --log FILE [--target ADDR] [--port N] [--period S] [--timeout S]
                      [--payload BYTES]

serve (in an upstream namespace): accepts connections on ADDR:PORT (default
203.0.113.80:5002) and answers every line it receives with "ROLE\\n", so the
client learns which upstream carries its connection. Logs one line per connection
accepted: "TIME accepted CLIENT-ADDRESS".

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
"""

import argparse
import errno
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
        self.server.record(f"accepted {self.client_address[0]}")
        while True:
            try:
                line = self.rfile.readline(MAX_LINE)
            except OSError:
                return
            if not line:
                return
            try:
                self.wfile.write(self.server.role.encode() + b"\n")
            except OSError:
                return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, role, log):
        super().__init__(address, Handler)
        self.role, self.log, self.lock = role, log, threading.Lock()

    def record(self, text):
        with self.lock:
            self.log.write(f"{time.time():.6f} {text}\n")
            self.log.flush()


def serve(args) -> int:
    with open(args.log, "a") as log:
        server = Server((args.bind, args.port), args.role, log)
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


def client(args) -> int:
    payload = b"x" * args.payload + b"\n"
    with open(args.log, "a") as log:
        def record(number, event, upstream="-"):
            log.write(f"{time.time():.6f} {number} {event} {upstream}\n")
            log.flush()

        print("ready", flush=True)
        number, sock, buf = 0, None, b""
        next_at = time.monotonic()
        while not stop:
            try:
                if sock is None:
                    number += 1
                    buf = b""
                    sock = socket.create_connection((args.target, args.port), timeout=args.timeout)
                    record(number, "connected")
                sock.settimeout(args.timeout)
                sock.sendall(payload)
                deadline = time.monotonic() + args.timeout
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
                record(number, "answer", line.decode(errors="replace") or "-")
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--role", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--bind", default=ADDRESS)
    s.add_argument("--port", type=int, default=PORT)
    c = sub.add_parser("client")
    c.add_argument("--log", required=True)
    c.add_argument("--target", default=ADDRESS)
    c.add_argument("--port", type=int, default=PORT)
    c.add_argument("--period", type=float, default=0.1)
    c.add_argument("--timeout", type=float, default=1.0)
    c.add_argument("--payload", type=int, default=64)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    return serve(args) if args.mode == "serve" else client(args)


if __name__ == "__main__":
    sys.exit(main())
