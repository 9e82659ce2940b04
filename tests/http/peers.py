#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""An HTTP server on both IPv4 and IPv6 (one socket on "::") that sends
requests to itself, as llama-server's proxy fetches its own /models: once
over IPv4 (its socket sees an IPv4-mapped address) and once over IPv6, then
from a child it forks (another process, traced with -f), and a connection
to itself that sends nothing before it closes. A client the test runs
itself (not traced) sends one more, before the FIFO HOLD is written.

  peers.py READY HOLD   (READY: a FIFO it writes its port to; then it
  waits for a line on HOLD, sends its own requests, prints what it sent
  and exits)
"""
import json
import os
import socket
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        r.read()
        return r.status


def main():
    srv = Server(("::", 0), Handler)
    port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    with open(sys.argv[1], "w") as f:
        f.write(f"{port}\n")
    with open(sys.argv[2]) as f:
        f.readline()
    sent = {"pid": os.getpid(), "self": [], "child": []}
    for url in (f"http://127.0.0.1:{port}/self-v4", f"http://[::1]:{port}/self-v6"):
        get(url)
        sent["self"].append(url.rsplit("/", 1)[1])
    # a connection to itself that carries no request
    socket.create_connection(("127.0.0.1", port)).close()
    child = os.fork()
    if child == 0:
        code = 0
        try:
            get(f"http://127.0.0.1:{port}/child")
        except Exception:
            code = 1
        os._exit(code)
    _, status = os.waitpid(child, 0)
    if status == 0:
        sent["child"] = [{"pid": child, "path": "child"}]
    srv.shutdown()
    print(json.dumps(sent))


if __name__ == "__main__":
    main()
