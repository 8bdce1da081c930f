"""A captive-portal API server (RFC 8908) for the capport lab: HTTPS with a
certificate of the lab's own test CA, answering GET with the JSON held in a file
the test rewrites between checks, as `application/captive+json`.

Usage: capportserver.py --bind ADDR --cert PEM --key PEM --answer FILE --log FILE
Prints "ready" once it listens. Each request is logged as one JSON line: client
address, path, Accept header.
"""

import argparse
import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser()
    for name in ("--bind", "--cert", "--key", "--answer", "--log"):
        ap.add_argument(name, required=True)
    args = ap.parse_args()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def do_GET(self):
            with open(args.log, "a") as log:
                log.write(json.dumps({"client": self.client_address[0], "path": self.path,
                                      "accept": self.headers.get("Accept")}) + "\n")
            with open(args.answer, "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/captive+json")
            self.send_header("Cache-Control", "private")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((args.bind, 443), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("ready", flush=True)
    sys.stdout.close()
    server.serve_forever()


if __name__ == "__main__":
    main()
