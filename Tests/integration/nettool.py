#!/usr/bin/env python3
"""Tiny DNS and HTTP clients for the uplinkd DNS lab (stdlib only).

Run inside a lab namespace (ip netns exec NS python3 nettool.py ...), each
query or request bound to one interface with SO_BINDTODEVICE, so the lab can
check its own wiring without dig, curl or the system resolver:

  nettool.py dns SERVER NAME [--type A|AAAA] [--dev IFACE] [--timeout S]
      one UDP query to SERVER (an IP literal); prints JSON
      {"rcode": N, "answers": [...], "ttls": [...]} (a TTL per answer) or
      {"error": "timeout"|"refused"|...}
  nettool.py http ADDRESS PATH [--dev IFACE] [--timeout S]
      one HTTP/1.0 GET to ADDRESS:80 (an IP literal); prints JSON
      {"status": N, "body": "..."} or {"error": ...}
  nettool.py rs IFACE
      sends one ICMPv6 Router Solicitation to ff02::2 out of IFACE (the
      router answers with a Router Advertisement at once); prints JSON {}
  nettool.py getaddrinfo NAME
      the system resolver's answer (used once, to show which resolver the
      namespace's /etc/resolv.conf points at); prints JSON
"""

import argparse
import json
import os
import socket
import struct
import sys

SO_BINDTODEVICE = getattr(socket, "SO_BINDTODEVICE", 25)
QTYPES = {"A": 1, "AAAA": 28}


def _family(address: str):
    return socket.AF_INET6 if ":" in address else socket.AF_INET


def _bind_dev(sock, dev):
    if dev:
        sock.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE, dev.encode() + b"\0")


def build_query(qid: int, name: str, qtype: int) -> bytes:
    header = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)   # RD
    qname = b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"
    return header + qname + struct.pack("!HH", qtype, 1)


def _skip_name(msg: bytes, off: int) -> int:
    while True:
        length = msg[off]
        if length == 0:
            return off + 1
        if length & 0xC0 == 0xC0:
            return off + 2
        off += 1 + length


def parse_reply(msg: bytes, qid: int):
    rid, flags, qd, an, _ns, _ar = struct.unpack("!HHHHHH", msg[:12])
    if rid != qid:
        raise ValueError("reply id mismatch")
    off = 12
    for _ in range(qd):
        off = _skip_name(msg, off) + 4
    answers, ttls = [], []
    for _ in range(an):
        off = _skip_name(msg, off)
        rtype, _rclass, ttl, rdlen = struct.unpack("!HHIH", msg[off:off + 10])
        off += 10
        rdata = msg[off:off + rdlen]
        off += rdlen
        if rtype == 1 and rdlen == 4:
            answers.append(socket.inet_ntop(socket.AF_INET, rdata))
            ttls.append(ttl)
        elif rtype == 28 and rdlen == 16:
            answers.append(socket.inet_ntop(socket.AF_INET6, rdata))
            ttls.append(ttl)
    return {"rcode": flags & 0xF, "answers": answers, "ttls": ttls}


def _exchange(kind, address, port, dev, timeout, talk):
    """talk(sock) on a socket of `kind` bound to dev and connected to address:port;
    its result, or {"error": "timeout"|"refused"|...} when the network says no."""
    sock = socket.socket(_family(address), kind)
    try:
        _bind_dev(sock, dev)
        sock.settimeout(timeout)
        sock.connect((address, port))
        return talk(sock)
    except socket.timeout:
        return {"error": "timeout"}
    except ConnectionRefusedError:
        return {"error": "refused"}
    except OSError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        sock.close()


def dns(server, name, qtype="A", dev=None, timeout=2.0):
    qid = int.from_bytes(os.urandom(2), "big")

    def talk(sock):
        sock.send(build_query(qid, name, QTYPES[qtype]))
        return parse_reply(sock.recv(4096), qid)
    return _exchange(socket.SOCK_DGRAM, server, 53, dev, timeout, talk)


def http(address, path, dev=None, timeout=2.0):
    def talk(sock):
        host = f"[{address}]" if ":" in address else address
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        data = b""
        while len(data) < 65536:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        return {"status": status, "body": body.decode(errors="replace")}
    return _exchange(socket.SOCK_STREAM, address, 80, dev, timeout, talk)


def router_solicitation(dev):
    sock = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    try:
        _bind_dev(sock, dev)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
        index = socket.if_nametoindex(dev)
        # type 133, code 0, checksum (the kernel fills it in for ICMPv6), reserved
        sock.sendto(struct.pack("!BBHI", 133, 0, 0, 0), ("ff02::2", 0, 0, index))
        return {}
    except OSError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        sock.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dns")
    d.add_argument("server")
    d.add_argument("name")
    d.add_argument("--type", default="A", choices=sorted(QTYPES))
    d.add_argument("--dev")
    d.add_argument("--timeout", type=float, default=2.0)
    h = sub.add_parser("http")
    h.add_argument("address")
    h.add_argument("path")
    h.add_argument("--dev")
    h.add_argument("--timeout", type=float, default=2.0)
    r = sub.add_parser("rs")
    r.add_argument("dev")
    g = sub.add_parser("getaddrinfo")
    g.add_argument("name")
    args = ap.parse_args()
    if args.cmd == "dns":
        out = dns(args.server, args.name, args.type, args.dev, args.timeout)
    elif args.cmd == "http":
        out = http(args.address, args.path, args.dev, args.timeout)
    elif args.cmd == "rs":
        out = router_solicitation(args.dev)
    else:
        try:
            out = {"addresses": sorted({ai[4][0] for ai in socket.getaddrinfo(
                args.name, 80, proto=socket.IPPROTO_TCP)})}
        except socket.gaierror as exc:
            out = {"error": str(exc)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
