#!/usr/bin/env python3
"""A LAN host's traffic for the failover lab (failoverlab.py), stdlib only.

Runs inside the LAN namespace (ip netns exec LAN python3 lanclient.py ...) and,
until TERM, starts one HTTP GET every --period seconds (default 0.1) to
http://TARGET/lan/N?size=S: a new TCP connection each time, `Connection:
close`, at most --timeout seconds (default 1.0) for the whole exchange. A
request still running when the next one is due delays it (one at a time), so an
outage shows as requests that time out back to back. With --concurrent every
request starts on time in a thread of its own, whatever the earlier ones are
doing, as the connections of many LAN hosts do: the first answer after a failover
then tells when the gateway's route moved, not when the client's own time limit
for a request started before it ran out.

Each request appends one line to --log:

    START END RESULT UPSTREAM

START/END are wall-clock seconds (time.time(), the clock of the hook log's
`date +%s.%N`), RESULT is `ok` (a 200 with the whole body), `timeout`,
`refused`, `unreachable`, `reset`, `bad` (another status or a short body) or
`error`, and UPSTREAM is the X-Lab-Upstream header of the answer (the upstream
namespace's role, so the log shows which uplink carried it) or `-`.
Prints "ready" on stdout once the log is open.
"""

import argparse
import errno
import signal
import socket
import sys
import threading
import time

stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


def one(target, port, path, size, timeout):
    """(result, upstream) of one GET."""
    deadline = time.monotonic() + timeout
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect((target, port))
        req = (f"GET {path}?size={size} HTTP/1.1\r\nHost: {target}\r\n"
               f"User-Agent: lab-lan-client/1\r\nConnection: close\r\n\r\n").encode()
        sock.sendall(req)
        data = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout", "-"
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        upstream = "-"
        for line in lines[1:]:
            key, _, value = line.partition(":")
            if key.strip().lower() == "x-lab-upstream":
                upstream = value.strip() or "-"
        parts = lines[0].split(" ")
        if len(parts) < 2 or parts[1] != "200" or len(body) != size:
            return "bad", upstream
        return "ok", upstream
    except socket.timeout:
        return "timeout", "-"
    except ConnectionRefusedError:
        return "refused", "-"
    except ConnectionResetError:
        return "reset", "-"
    except OSError as exc:
        if exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return "unreachable", "-"
        return "error", "-"
    finally:
        sock.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="203.0.113.80")
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--period", type=float, default=0.1)
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--log", required=True)
    ap.add_argument("--concurrent", action="store_true")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    n = 0
    lock = threading.Lock()
    with open(args.log, "a", buffering=1) as log:
        print("ready", flush=True)
        next_at = time.monotonic()

        def request(number):
            start = time.time()
            result, upstream = one(args.target, args.port, f"/lan/{number}", args.size, args.timeout)
            with lock:
                log.write(f"{start:.6f} {time.time():.6f} {result} {upstream}\n")

        while not stop:
            n += 1
            if args.concurrent:
                threading.Thread(target=request, args=(n,), daemon=True).start()
            else:
                request(n)
            next_at += args.period
            pause = next_at - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            else:
                next_at = time.monotonic()
    return 0


if __name__ == "__main__":
    sys.exit(main())
