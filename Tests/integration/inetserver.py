#!/usr/bin/env python3
"""The lab's "internet" for the failover lab (failoverlab.py): one HTTP/1.1 server
on 203.0.113.80:80 (or, with --bind, [2001:db8:80::80]:80) inside an upstream
namespace that answers uplinkd's five BUILT-IN probe endpoints the way the real
ones do (stdlib only, and labserver.py beside it for the serve loop).

Run inside an upstream namespace (ip netns exec NS python3 inetserver.py ...);
prints "ready" on stdout once it listens. Each request is dispatched by its Host
header and path:

  captive.apple.com             /hotspot-detect.html  200 text/html, 68-byte Success page
  connectivitycheck.gstatic.com /generate_204         204, no body
  detectportal.firefox.com      /success.txt          200 text/plain "success\\n"
  www.msftconnecttest.com       /connecttest.txt      200 text/plain "Microsoft Connect Test"
  network-test.debian.org       /nm                   200 text/plain "NetworkManager is online\\n"
  any host                      /lan/NAME[?size=N]    200, N bytes (default 512) of LAN
                                                      client payload, X-Lab-Upstream: ROLE
  203.0.113.80 (IP literal)     one of the five paths the same answer as its named host
                                                      (the lab probes of agentrun.py);
                                                      [2001:db8:80::80] likewise
  anything else                                       404

Header sets follow public captures of the real endpoints (status line, header
names and order, typical values; Date is the current time), so that the bytes
a probe costs in the lab are within some tens of bytes of what it costs on the
real internet; the bodies are byte for byte the real ones. The ETag, request id
and Age values are fixed stand-ins.

Connections are HTTP/1.1 keep-alive unless the client asks for `Connection:
close` (or speaks HTTP/1.0); an idle connection is closed after --idle seconds
(default 5, like Apache's KeepAliveTimeout). --log FILE appends one line per
request: "WALLTIME CLIENT HOST PATH STATUS RESPONSE_BYTES".

--portal-file FILE (looked for before every request): while it exists, this
upstream is a captive portal: every built-in endpoint answers "302 Found" with
Location http://portal.lab.invalid/login (logged with status 302), as a venue's
Wi-Fi before its login.

--block-file FILE (read before every request) names endpoints, one per line
(apple, google, firefox, microsoft, debian), that are "blocked" as a firewall
dropping them would: the request is read and never answered (the connection is
held until the client gives up, at most 60 s); its log line has status
"blocked" and 0 bytes, written when the request arrived.
"""

import argparse
import os
import email.utils
import socket
import socketserver
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

from labserver import serve

INTERNET_ADDR = "203.0.113.80"
INTERNET6_ADDR = "2001:db8:80::80"        # failoverlab.FailoverLab(ipv6=True)
MAX_HEAD = 8192
MAX_LAN_BODY = 1 << 20

APPLE_BODY = b"<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"


def _date():
    return email.utils.formatdate(usegmt=True)


# name -> (host, path, status line, [(header, value or None for Date)], body)
ENDPOINTS = {
    "apple": ("captive.apple.com", "/hotspot-detect.html", "200 OK", [
        ("Content-Type", "text/html"),
        ("Content-Length", None),
        ("Date", None),
        ("Connection", None),
    ], APPLE_BODY),
    "google": ("connectivitycheck.gstatic.com", "/generate_204", "204 No Content", [
        ("Content-Length", "0"),
        ("Cross-Origin-Resource-Policy", "cross-origin"),
        ("Date", None),
    ], b""),
    "firefox": ("detectportal.firefox.com", "/success.txt", "200 OK", [
        ("Server", "nginx"),
        ("Content-Length", None),
        ("Via", "1.1 google"),
        ("Date", None),
        ("Age", "1537"),
        ("Content-Type", "text/plain"),
        ("Cache-Control", "public,must-revalidate,max-age=0,s-maxage=3600"),
    ], b"success\n"),
    "microsoft": ("www.msftconnecttest.com", "/connecttest.txt", "200 OK", [
        ("Cache-Control", "max-age=30, must-revalidate"),
        ("Content-Length", None),
        ("Content-Type", "text/plain"),
        ("Last-Modified", "Fri, 04 Aug 2017 16:12:09 GMT"),
        ("Accept-Ranges", "bytes"),
        ("ETag", '"0x8D4DB58E1F31F1D"'),
        ("Server", "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0"),
        ("x-ms-request-id", "9d2f7c3e-d01e-0052-4a1b-2c5e13000000"),
        ("x-ms-version", "2009-09-19"),
        ("x-ms-lease-status", "unlocked"),
        ("x-ms-blob-type", "BlockBlob"),
        ("Date", None),
        ("Connection", None),
    ], b"Microsoft Connect Test"),
    "debian": ("network-test.debian.org", "/nm", "200 OK", [
        ("Date", None),
        ("Server", "Apache"),
        ("X-NetworkManager-Status", "online"),
        ("Content-Length", None),
        ("Content-Type", "text/plain; charset=UTF-8"),
    ], b"NetworkManager is online\n"),
}
BY_HOST_PATH = {(host, path): name for name, (host, path, *_rest) in ENDPOINTS.items()}
BY_PATH = {path: name for name, (_host, path, *_rest) in ENDPOINTS.items()}


def build_response(status, headers, body, keep_alive, send_body=True):
    lines = [f"HTTP/1.1 {status}"]
    for key, value in headers:
        if value is None:
            if key == "Date":
                value = _date()
            elif key == "Content-Length":
                value = str(len(body))
            elif key == "Connection":
                value = "keep-alive" if keep_alive else "close"
        lines.append(f"{key}: {value}")
    if not any(k == "Connection" for k, _ in headers) and not keep_alive:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + (body if send_body else b"")


def endpoint(host, path):
    """The name of the built-in endpoint a request is for, or None."""
    name = BY_HOST_PATH.get((host, path))
    if name is None and host in (INTERNET_ADDR, f"[{INTERNET6_ADDR}]", ""):
        name = BY_PATH.get(path)
    return name


PORTAL_ANSWER = ("302 Found", [("Date", None), ("Location", "http://portal.lab.invalid/login"),
                                ("Content-Type", "text/html"), ("Content-Length", None), ("Connection", None)],
                 b"<html><body>Please log in.</body></html>\n")


def answer(host, target, role):
    """(status, headers, body) for one request."""
    parts = urlsplit(target)
    path = parts.path
    host = host.lower()
    if path.startswith("/lan/"):
        try:
            size = int(parse_qs(parts.query).get("size", ["512"])[0])
        except ValueError:
            size = 512
        size = max(0, min(size, MAX_LAN_BODY))
        return "200 OK", [("Date", None), ("Content-Type", "application/octet-stream"),
                          ("Content-Length", None), ("X-Lab-Upstream", role),
                          ("Connection", None)], b"x" * size
    name = endpoint(host, path)
    if name is not None:
        _host, _path, status, headers, body = ENDPOINTS[name]
        return status, headers, body
    return "404 Not Found", [("Date", None), ("Content-Type", "text/html"),
                             ("Content-Length", None), ("Connection", None)], \
        b"<html><body><h1>404 Not Found</h1></body></html>\n"


def receive_until(sock, buf, done, limit=None):
    """buf and what the client sends after it, until done(bytes so far); None
    when the client closes, stays idle past the socket's timeout, fails, or
    sends more than `limit` bytes first."""
    while not done(buf):
        try:
            chunk = sock.recv(4096)
        except OSError:                              # socket.timeout included
            return None
        if not chunk:
            return None
        buf += chunk
        if limit is not None and len(buf) > limit:
            return None
    return buf


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        sock.settimeout(self.server.idle)
        buf = b""
        while True:
            buf = receive_until(sock, buf, lambda b: b"\r\n\r\n" in b, MAX_HEAD)
            if buf is None:
                return
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            try:
                method, target, version = lines[0].split(" ", 2)
            except ValueError:
                return
            headers = {}
            for line in lines[1:]:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0") or 0)
            buf = receive_until(sock, buf, lambda b: len(b) >= length)   # a body we do not use
            if buf is None:
                return
            buf = buf[length:]
            conn = headers.get("connection", "").lower()
            keep_alive = version == "HTTP/1.1" and conn != "close"
            host = headers.get("host", "")
            if not host.startswith("["):
                host = host.split(":", 1)[0]
            if endpoint(host.lower(), urlsplit(target).path) in self.server.blocked():
                self.server.record(self.client_address[0], host or "-", target, "blocked", 0)
                sock.settimeout(60)
                try:
                    while sock.recv(4096):
                        pass
                except OSError:
                    pass
                return
            if self.server.captive() and endpoint(host.lower(), urlsplit(target).path) is not None:
                status, hdrs, body = PORTAL_ANSWER
            else:
                status, hdrs, body = answer(host, target, self.server.role)
            data = build_response(status, hdrs, body, keep_alive, send_body=method != "HEAD")
            try:
                sock.sendall(data)
            except OSError:
                return
            self.server.record(self.client_address[0], host or "-", target, status.split()[0], len(data))
            if not keep_alive:
                return


class InetServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, role, log_path, idle, block_file=None, portal_file=None):
        if ":" in addr[0]:                 # an IPv6 address (FailoverLab(ipv6=True))
            self.address_family = socket.AF_INET6
        super().__init__(addr, Handler)
        self.role, self.idle, self.block_file, self.portal_file = role, idle, block_file, portal_file
        self._lock = threading.Lock()
        self._log = open(log_path, "a", buffering=1) if log_path else None

    def blocked(self):
        if not self.block_file:
            return set()
        try:
            with open(self.block_file) as f:
                return {line.strip() for line in f if line.strip()}
        except OSError:
            return set()

    def captive(self):
        return bool(self.portal_file) and os.path.exists(self.portal_file)

    def record(self, client, host, target, status, nbytes):
        if self._log is None:
            return
        with self._lock:
            self._log.write(f"{time.time():.6f} {client} {host} {target} {status} {nbytes}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bind", default=INTERNET_ADDR, help="address to listen on, IPv4 or IPv6")
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--role", default="inet", help="named in X-Lab-Upstream of LAN answers")
    ap.add_argument("--log", help="append one line per request to this file")
    ap.add_argument("--idle", type=float, default=5.0, help="keep-alive idle timeout, s")
    ap.add_argument("--block-file", help="endpoints to leave unanswered, one name a line")
    ap.add_argument("--portal-file", help="while this file exists, every endpoint redirects to a portal")
    args = ap.parse_args()
    serve(InetServer((args.bind, args.port), args.role, args.log, args.idle, args.block_file, args.portal_file),
          poll_interval=0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
