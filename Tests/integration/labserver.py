#!/usr/bin/env python3
"""Fake upstream HTTP server for the uplinkd netns lab (stdlib only).

Runs inside an upstream namespace (ip netns exec NS python3 labserver.py ...),
bound to the lab "internet" address 203.0.113.80:80 (--bind: another address,
IPv6 too, e.g. 2001:db8:ffff::80). Prints "ready" on stdout
once the socket is listening. Modes:

  internet       /generate_204 -> 204, /hotspot-detect.html -> Success page,
                 /success.txt -> "success\\n", /words.txt -> the 29 bytes of words
                 and spaces on which ^(\\w+\\s?)+$ backtracks catastrophically
                 (test_check.py, test_agent.py), anything else -> 404
  internet-slow  as internet, each answer 300 ms late
  portal-302     every path -> 302 to http://203.0.113.80/login?orig=1; /login -> 200
  portal-200     every path -> 200 login page with a WISPr XML block
  portal-meta    every path -> 200 login page with a meta refresh
  portal-511     every path -> 511 with a meta refresh (RFC 6585 example)
  proxy-garbage  every path -> 200 "OK"
  proxy-5xx      every path -> 502
  portal-wispr   a WISPr hotspot: every path -> 200 page with a WISPr block until the
                 client POSTs UserName=labuser, Password=s3cret &pass! to
                 /wispr/login (WISPr reply 120/50; wrong credentials 120/100);
                 then the internet for that client
  portal-click   a click-through portal: every path -> 200 page with a form (hidden
                 token, "accept" checkbox) until the client POSTs token and
                 accept=yes to /accept; then the internet for that client

With --mode-file FILE the mode is read from FILE (one mode name) before every
request, so a test can switch a running server's behaviour without a gap in
which connections are refused; --mode is the fallback while FILE is missing,
empty or names no mode.
"""

import argparse
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

BASE = "http://203.0.113.80"

SUCCESS_HTML = b"<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"
# With Swift Regex, matching ^(\w+\s?)+$ against this ran for more than 20 s.
WORDS = b"aaaa aaaa aaaa aaaa aaaa aaa!"

LOGIN_HTML = (b"<!DOCTYPE html>\n<html><head><title>Lab Hotspot Login</title></head>\n"
              b"<body><h1>Welcome to the lab hotspot</h1>\n"
              b"<form method=\"post\" action=\"/login\"><input name=\"user\">"
              b"<input type=\"password\" name=\"pass\"><button>Log in</button></form>\n"
              b"</body></html>\n")

WISPR_BLOCK = (
    '<!--<?xml version="1.0" encoding="UTF-8"?><WISPAccessGatewayParam '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:noNamespaceSchemaLocation="http://www.acmewisp.com/WISPAccessGatewayParam.xsd">'
    '<Redirect><AccessProcedure>1.0</AccessProcedure><AccessLocation>lab</AccessLocation>'
    '<LocationName>lab</LocationName><LoginURL>' + BASE + '/wispr/login?res=1</LoginURL>'
    '<MessageType>100</MessageType><ResponseCode>0</ResponseCode></Redirect>'
    '</WISPAccessGatewayParam>-->')

WISPR_HTML = ("<!DOCTYPE html>\n<html><head><title>Lab Hotspot</title>\n"
              "<meta charset=\"utf-8\"></head>\n<body>\n" + WISPR_BLOCK + "\n"
              "<h1>Lab hotspot</h1>\n<p>Please log in to use the internet. By using this "
              "service you accept the terms of use of the lab network.</p>\n"
              "<form method=\"post\" action=\"/wispr/login?res=1\"><input name=\"user\">"
              "<input type=\"password\" name=\"pass\"><button>Log in</button></form>\n"
              "</body></html>\n").encode()

META_HTML = ("<!DOCTYPE html>\n<html><head><title>Lab Hotspot</title>\n"
             "<meta http-equiv=\"refresh\" content=\"0; url=" + BASE + "/portal/welcome\">\n"
             "</head><body><p>Redirecting to the <a href=\"" + BASE + "/portal/welcome\">"
             "lab hotspot login page</a>. Please log in to use the internet.</p>\n"
             "<p>If you are not redirected automatically, follow the link above.</p>\n"
             "</body></html>\n").encode()

NETAUTH_HTML = ("<html>\n<head>\n<title>Network Authentication Required</title>\n"
                "<meta http-equiv=\"refresh\" content=\"0; url=" + BASE + "/portal/511login\">\n"
                "</head>\n<body>\n<p>You need to <a href=\"" + BASE + "/portal/511login\">"
                "authenticate with the local network</a> in order to gain access.</p>\n"
                "</body>\n</html>\n").encode()

WISPR_USER, WISPR_PASSWORD = "labuser", "s3cret &pass!"

CLICK_HTML = (b"<!DOCTYPE html>\n<html><head><title>Free lab Wi-Fi</title></head><body>\n"
              b"<h1>Free Wi-Fi</h1><p>Accept the terms of use to continue.</p>\n"
              b"<form method=\"post\" action=\"/accept\">\n"
              b"<input type=\"hidden\" name=\"token\" value=\"t0k3n\">\n"
              b"<input type=\"checkbox\" name=\"accept\" value=\"yes\"> I accept\n"
              b"<button type=\"submit\">Continue</button></form>\n</body></html>\n")


def wispr_reply(code, message):
    return ("<html><body><!--<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
            "<WISPAccessGatewayParam><AuthenticationReply><MessageType>120</MessageType>"
            f"<ResponseCode>{code}</ResponseCode><ReplyMessage>{message}</ReplyMessage>"
            "</AuthenticationReply></WISPAccessGatewayParam>--></body></html>\n").encode()


HTML = [("Content-Type", "text/html; charset=utf-8")]
TEXT = [("Content-Type", "text/plain; charset=utf-8")]


def internet(path):
    if path == "/generate_204":
        return 204, [], b""
    if path == "/hotspot-detect.html":
        return 200, HTML, SUCCESS_HTML
    if path == "/success.txt":
        return 200, TEXT, b"success\n"
    if path == "/words.txt":
        return 200, TEXT, WORDS
    return 404, TEXT, b"not found\n"


def internet_slow(path):
    time.sleep(0.3)
    return internet(path)


def portal_302(path):
    if path == "/login":
        return 200, HTML, LOGIN_HTML
    loc = BASE + "/login?orig=1"
    body = ('<html><body>Moved: <a href="' + loc + '">login</a></body></html>\n').encode()
    return 302, [("Location", loc)] + HTML, body


MODES = {
    "internet": internet,
    "internet-slow": internet_slow,
    "portal-302": portal_302,
    "portal-200": lambda path: (200, HTML, WISPR_HTML),
    "portal-meta": lambda path: (200, HTML, META_HTML),
    "portal-511": lambda path: (511, HTML, NETAUTH_HTML),
    "proxy-garbage": lambda path: (200, TEXT, b"OK"),
    "proxy-5xx": lambda path: (502, TEXT, b"Bad Gateway\n"),
}


def portal_wispr(server, client, path, form):
    if client in server.granted:
        return internet(path)
    if path == "/wispr/login" and form is not None:
        if form.get("UserName") == WISPR_USER and form.get("Password") == WISPR_PASSWORD:
            server.granted.add(client)
            return 200, HTML, wispr_reply(50, "Login succeeded")
        return 200, HTML, wispr_reply(100, "Invalid credentials")
    return 200, HTML, WISPR_HTML


def portal_click(server, client, path, form):
    if client in server.granted:
        return internet(path)
    if path == "/accept" and form is not None:
        if form.get("token") == "t0k3n" and form.get("accept") == "yes":
            server.granted.add(client)
            return 200, HTML, b"<html><body>Thank you, enjoy.</body></html>\n"
        return 403, HTML, b"<html><body>Please accept the terms.</body></html>\n"
    return 200, HTML, CLICK_HTML


STATEFUL = {"portal-wispr": portal_wispr, "portal-click": portal_click}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "labserver/1"
    sys_version = ""

    def log_message(self, fmt, *args):  # keep stderr quiet; it is a diagnostics file
        pass

    def do_GET(self):
        self._respond(send_body=True)

    def do_HEAD(self):
        self._respond(send_body=False)

    def do_POST(self):
        length = min(int(self.headers.get("Content-Length") or 0), 65536)
        raw = self.rfile.read(length) if length else b""
        form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True).items()}
        self._respond(send_body=True, form=form)

    def _respond(self, send_body, form=None):
        self.server.record(self.client_address[0], self.path)
        mode = self.server.current_mode()
        path = urlsplit(self.path).path
        if mode in STATEFUL:
            status, headers, body = STATEFUL[mode](self.server, self.client_address[0], path, form)
        else:
            status, headers, body = MODES[mode](path)
        self._send(status, headers, body, send_body)

    def _send(self, status, headers, body, send_body):
        """One answer, closing the connection (portalserver.py's handler shares it)."""
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        if status != 204 and status >= 200:
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        if send_body and body and status != 204:
            self.wfile.write(body)


class LabHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, mode, log_path, mode_file=None):
        if ":" in addr[0]:                 # an IPv6 address (dnslab.py's v6 upstreams)
            self.address_family = socket.AF_INET6
        super().__init__(addr, Handler)
        self.mode = mode
        self.mode_file = mode_file
        self.granted = set()
        self._lock = threading.Lock()
        self._log = open(log_path, "a", buffering=1) if log_path else None

    def server_bind(self):
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse lookup through the
        # system resolver; the lab never asks a resolver outside its namespaces.
        socketserver.TCPServer.server_bind(self)
        self.server_name = str(self.server_address[0])
        self.server_port = self.server_address[1]

    def current_mode(self):
        if self.mode_file:
            try:
                with open(self.mode_file) as f:
                    name = f.read().strip()
            except OSError:
                name = ""
            if self.knows(name):
                return name
        return self.mode

    def knows(self, mode):
        """Whether `mode` is one this server serves (portalserver.py adds its own)."""
        return mode in MODES or mode in STATEFUL

    def record(self, client, path):
        if self._log is None:
            return
        with self._lock:
            self._log.write(f"{client} {path}\n")
            self._log.flush()


def serve(server, poll_interval=0.2):
    """Print "ready" (the socket listens: what the labs wait for) and serve until
    interrupted (SIGINT; the labs stop servers with SIGTERM, which just ends
    the process). inetserver.py serves with this too."""
    print("ready", flush=True)
    try:
        server.serve_forever(poll_interval=poll_interval)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", required=True, choices=sorted(list(MODES) + list(STATEFUL)))
    ap.add_argument("--bind", default="203.0.113.80",
                    help="address to listen on, IPv4 or IPv6 (2001:db8:ffff::80)")
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--log", help="append 'CLIENT_IP PATH' per request to this file")
    ap.add_argument("--mode-file", help="read the mode from this file before every request")
    args = ap.parse_args()
    serve(LabHTTPServer((args.bind, args.port), args.mode, args.log, args.mode_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
