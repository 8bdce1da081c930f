#!/usr/bin/env python3
"""A server that lies about an MQTT packet's size, for the agent's bound on what a
broker may send (test_mqtt.py). It listens on ADDRESS:PORT; on each connection it
reads what the client sends first (its CONNECT), answers with a CONNACK header that
announces the largest body MQTT can describe (268,435,455 bytes), then sends random
bytes as fast as the connection takes them, until the client closes it or --limit
bytes went. One line per connection to --log when it ends:

    connection N: ended after B bytes in S s (closed by the client|limit reached|error)

Plain TCP only; one connection at a time (the agent makes one).
"""

import argparse
import os
import socket
import time

HEADER = bytes([0x20, 0xFF, 0xFF, 0xFF, 0x7F])      # CONNACK, remaining length 2^28 - 1


def serve_one(conn, number, limit, log):
    started, sent, why = time.monotonic(), 0, "error"
    try:
        conn.settimeout(10)
        conn.recv(4096)                              # the CONNECT
        conn.sendall(HEADER)
        sent = len(HEADER)
        chunk = os.urandom(64 * 1024)
        while sent < limit:
            sent += conn.send(chunk)
        why = "limit reached"
    except (BrokenPipeError, ConnectionResetError):
        why = "closed by the client"
    except OSError as exc:
        why = f"error: {exc}"
    finally:
        conn.close()
    with open(log, "a") as f:
        f.write(f"connection {number}: ended after {sent} bytes in {time.monotonic() - started:.2f} s ({why})\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listen", required=True, help="ADDRESS:PORT")
    ap.add_argument("--log", required=True)
    ap.add_argument("--limit", type=int, default=64 * 1024 * 1024, help="most bytes per connection")
    args = ap.parse_args()
    address, port = args.listen.rsplit(":", 1)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((address, int(port)))
    server.listen(4)
    number = 0
    while True:
        conn, _ = server.accept()
        number += 1
        serve_one(conn, number, args.limit, args.log)


if __name__ == "__main__":
    main()
