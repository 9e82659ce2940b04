#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""One streaming POST /completion that asks for more tokens than it will
get: prints "streaming" once the first tokens arrive, then reads until the
server closes the connection (or dies), and prints how many bytes came.
  stream.py PORT"""
import json
import socket
import sys

port = int(sys.argv[1])
body = json.dumps({"prompt": "request 0: red blue cat", "n_predict": 1000000, "stream": True,
                   "ignore_eos": True, "grammar": "root ::= [a-z ]+"}).encode()
s = socket.create_connection(("127.0.0.1", port), timeout=120)
s.sendall(b"POST /completion HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: %d\r\n\r\n" % len(body) + body)
buf = b""
while b"data:" not in buf:
    d = s.recv(65536)
    if not d:
        sys.exit("closed before any token")
    buf += d
print("streaming", flush=True)
n = len(buf)
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        n += len(d)
except OSError:
    pass
print("closed after %d bytes" % n, flush=True)
