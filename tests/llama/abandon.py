#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Clients that give up: a /completion request not streamed, then one
streamed, each sent and then abandoned after GIVE_UP seconds (the socket
closed), then one answered in full. Prints JSON: for each, the path,
whether it streamed, and the client's clock (CLOCK_MONOTONIC, ms: the
tracer's, which a step of the wall clock does not move) when it sent the
request and when it closed the socket (null for the last).

  abandon.py PORT [GIVE_UP]
"""
import json
import socket
import sys
import time


def mono_ms():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1e6


def request(port, stream, n):
    body = json.dumps({"prompt": "hello there", "n_predict": n, "stream": stream,
                       "grammar": "root ::= [a-z ]+", "ignore_eos": True}).encode()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /completion HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    return s, mono_ms()


def main():
    port = int(sys.argv[1])
    give_up = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
    out = []
    for stream in (False, True):
        s, sent = request(port, stream, 100000)
        time.sleep(give_up)  # the client's patience, not a wait for the server
        closed = mono_ms()
        s.close()
        out.append({"stream": stream, "sent_ms": sent, "closed_ms": closed})
    s, sent = request(port, False, 8)
    data = b""
    while not data.endswith(b"}}"):
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    out.append({"stream": False, "sent_ms": sent, "closed_ms": None,
                "answered": data.startswith(b"HTTP/1.1 200")})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
