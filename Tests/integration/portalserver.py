#!/usr/bin/env python3
"""A DNS-hijacking hotspot for the portal-login tests (test_portal_login.py), stdlib
only: labserver.py's HTTP portal, plus a DNS server of its own that answers every
name with the portal's address for a client that has not logged in yet, and
truthfully once it has, per client, as real hotspots do (dnsmasq cannot: its answers
know nothing of who logged in).

Runs inside the portal namespace (ip netns exec NS python3 portalserver.py ...):
HTTP on 0.0.0.0:80 (the portal's own address and the lab internet address alike:
a client not logged in gets the portal wherever it goes), DNS over UDP on
--dns ADDRESS:53. Prints "ready" once both listen.

DNS answers (A records, TTL 0; AAAA: no data): a client not logged in gets
--dns's address for every name; a logged-in client gets it for names under
portal.test and 203.0.113.80 (the lab internet) for any other name.

Pages name their hosts under --base (default http://login.portal.test) where
labserver.py's pages say http://203.0.113.80, so a login has names to resolve.
Modes: every labserver.py mode, and

  portal-session         click-through behind a cookie check: every path ->
                         302 to BASE/portal/start?orig=1, which sets a session
                         cookie and redirects (relative Location) to /portal/terms,
                         the form page (labserver's click-through form; 403 without
                         the cookie); POST /accept with the cookie, token and
                         accept=yes logs the client in (303 to BASE/portal/done)
  portal-wispr-redirect  WISPr on a redirect: every path -> 302 to BASE/wispr/start,
                         a 302 that sets a session cookie and carries the WISPr
                         block in its body, to BASE/wispr/welcome, a page for humans
                         without a block; POST /wispr/login with the cookie and
                         labserver's credentials logs in (WISPr 120/50; wrong
                         credentials 100; no cookie 255)
  portal-wispr-200       WISPr on a 200 page: every path -> labserver's page with
                         the block, except GET /wispr/login (the LoginURL), which
                         gives a plain login form without one, as many gateways do;
                         POST /wispr/login as labserver's portal-wispr

Logs "CLIENT PATH" per HTTP request (--log) and "query[TYPE] NAME from CLIENT" per
DNS query (--dns-log, dnsmasq's wording).
"""

import argparse
import socket
import socketserver
import struct
import sys
import threading
from urllib.parse import urlsplit

import labserver
from labserver import (BASE, HTML, MODES, STATEFUL, WISPR_BLOCK, WISPR_HTML, CLICK_HTML,
                       WISPR_PASSWORD, WISPR_USER, Handler, LabHTTPServer, internet, wispr_reply)

INTERNET_ADDR = "203.0.113.80"
SESSION = "labportal"

LOGIN_FORM = (b"<!DOCTYPE html>\n<html><head><title>Lab hotspot login</title></head><body>\n"
              b"<form method=\"post\" action=\"/wispr/login\"><input name=\"UserName\">"
              b"<input type=\"password\" name=\"Password\"><button>Log in</button></form>\n"
              b"</body></html>\n")
THANKS = b"<html><body>Thank you, enjoy.</body></html>\n"


def moved(location, extra=(), body_text=None):
    body = (body_text or f'<html><body>Moved: <a href="{location}">login</a></body></html>\n').encode()
    return 302, [("Location", location), *extra] + HTML, body


def has_session(handler, value):
    return f"{SESSION}={value}" in handler.headers.get("Cookie", "")


def wispr_login(handler, client, form, cookie):
    """POST /wispr/login: labserver's credentials (and the session cookie, if one)."""
    if cookie is not None and not has_session(handler, cookie):
        return 200, HTML, wispr_reply(255, "No session")
    if form.get("UserName") == WISPR_USER and form.get("Password") == WISPR_PASSWORD:
        handler.server.granted.add(client)
        return 200, HTML, wispr_reply(50, "Login succeeded")
    return 200, HTML, wispr_reply(100, "Invalid credentials")


def portal_session(handler, client, path, form):
    if path == "/portal/start":
        return moved("/portal/terms", [("Set-Cookie", f"{SESSION}=s3ss10n; Path=/")])
    if path == "/portal/terms":
        if not has_session(handler, "s3ss10n"):
            return 403, HTML, b"<html><body>Cookies are required.</body></html>\n"
        return 200, HTML, CLICK_HTML
    if path == "/accept" and form is not None:
        if has_session(handler, "s3ss10n") and form.get("token") == "t0k3n" and form.get("accept") == "yes":
            handler.server.granted.add(client)
            return 303, [("Location", BASE + "/portal/done")] + HTML, THANKS
        return 403, HTML, b"<html><body>Please accept the terms.</body></html>\n"
    if path == "/portal/done":
        return 200, HTML, THANKS
    if client in handler.server.granted:
        return internet(path)
    return moved(BASE + "/portal/start?orig=1")


def portal_wispr_redirect(handler, client, path, form):
    if path == "/wispr/login" and form is not None:
        return wispr_login(handler, client, form, cookie="w1spr")
    if client in handler.server.granted:
        return internet(path)
    if path == "/wispr/start":
        return moved(BASE + "/wispr/welcome", [("Set-Cookie", f"{SESSION}=w1spr; Path=/")],
                     "<html><body>" + WISPR_BLOCK + "</body></html>\n")
    if path == "/wispr/welcome":
        return 200, HTML, b"<html><body><h1>Welcome to the lab hotspot</h1></body></html>\n"
    return moved(BASE + "/wispr/start")


def portal_wispr_200(handler, client, path, form):
    if path == "/wispr/login":
        if form is not None:
            return wispr_login(handler, client, form, cookie=None)
        return 200, HTML, LOGIN_FORM
    if client in handler.server.granted:
        return internet(path)
    return 200, HTML, WISPR_HTML


PORTAL_MODES = {"portal-session": portal_session, "portal-wispr-redirect": portal_wispr_redirect,
                "portal-wispr-200": portal_wispr_200}


class PortalHandler(Handler):
    def _respond(self, send_body, form=None):
        self.server.record(self.client_address[0], self.path)
        mode = self.server.current_mode()
        client, path = self.client_address[0], urlsplit(self.path).path
        if mode in PORTAL_MODES:
            status, headers, body = PORTAL_MODES[mode](self, client, path, form)
        elif mode in STATEFUL:
            status, headers, body = STATEFUL[mode](self.server, client, path, form)
        else:
            status, headers, body = MODES[mode](path)
        base = self.server.base
        self._send(status, [(key, value.replace(BASE, base)) for key, value in headers],
                   body.replace(BASE.encode(), base.encode()), send_body)


class PortalHTTPServer(LabHTTPServer):
    def __init__(self, mode, log_path, mode_file, base):
        super().__init__(("0.0.0.0", 80), mode, log_path, mode_file)
        self.RequestHandlerClass = PortalHandler
        self.base = base

    def knows(self, mode):
        return mode in PORTAL_MODES or super().knows(mode)


def dns_reply(query: bytes, answer_for):
    """The reply to one DNS query (None: not a query worth answering), and what to
    log: (qtype name, name). answer_for(name) gives the IPv4 address."""
    if len(query) < 17:
        return None, None
    ident, flags, qdcount = struct.unpack("!3H", query[:6])
    if flags & 0x8000 or qdcount != 1:
        return None, None
    labels, pos = [], 12
    while pos < len(query) and query[pos] != 0:
        length = query[pos]
        if length & 0xC0 or pos + 1 + length > len(query):
            return None, None
        labels.append(query[pos + 1:pos + 1 + length].decode("ascii", "replace"))
        pos += 1 + length
    pos += 1
    if pos + 4 > len(query):
        return None, None
    qtype, _ = struct.unpack("!HH", query[pos:pos + 4])
    question = query[12:pos + 4]
    name = ".".join(labels).lower()
    answers = b""
    if qtype == 1:
        answers = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + socket.inet_aton(answer_for(name))
    # QR, AA, RA, the client's RD; NOERROR (AAAA and others: no data).
    header = struct.pack("!6H", ident, 0x8480 | (flags & 0x0100), 1, 1 if answers else 0, 0, 0)
    kind = {1: "A", 28: "AAAA"}.get(qtype, f"type={qtype}")
    return header + question + answers, (kind, name)


class HijackingDNS(socketserver.ThreadingUDPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, http, log_path):
        super().__init__((address, 53), DNSHandler)
        self.portal = address
        self.http = http
        self._lock = threading.Lock()
        self._log = open(log_path, "a", buffering=1) if log_path else None

    def answer_for(self, client, name):
        if client in self.http.granted and not (name == "portal.test" or name.endswith(".portal.test")):
            return INTERNET_ADDR
        return self.portal

    def record(self, kind, name, client):
        if self._log is not None:
            with self._lock:
                self._log.write(f"query[{kind}] {name} from {client}\n")


class DNSHandler(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        client = self.client_address[0]
        reply, logged = dns_reply(data, lambda name: self.server.answer_for(client, name))
        if reply is None:
            return
        self.server.record(*logged, client)
        sock.sendto(reply, self.client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", required=True,
                    choices=sorted(list(MODES) + list(STATEFUL) + list(PORTAL_MODES)))
    ap.add_argument("--dns", required=True, help="the portal's address: DNS listens there, and is its answer")
    ap.add_argument("--base", default="http://login.portal.test", help="where the portal's pages point")
    ap.add_argument("--log", help="append 'CLIENT_IP PATH' per HTTP request to this file")
    ap.add_argument("--dns-log", help="append 'query[TYPE] NAME from CLIENT' per DNS query to this file")
    ap.add_argument("--mode-file", help="read the mode from this file before every request")
    args = ap.parse_args()
    http = PortalHTTPServer(args.mode, args.log, args.mode_file, args.base)
    dns = HijackingDNS(args.dns, http, args.dns_log)
    threading.Thread(target=dns.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    labserver.serve(http)
    return 0


if __name__ == "__main__":
    sys.exit(main())
