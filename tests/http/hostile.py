#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A raw HTTP/1.1 server and a hostile client (issue 32): the server is the
traced process, the client a child process it starts once the tracer is
attached. Each scenario sends what once fooled the request tracer:

  body        request bodies whose lines look like request lines (one at
              the body's start, one after a CRLF CRLF inside a body, one
              read on its own after a 100 Continue); the secret in each
  pipelined   50 requests in one write, answered by 50 responses in one
  bytewise    a request line sent and read one byte at a time
  badstatus   a status line whose code is not three digits
  chunk0      a chunk whose data is "0\\r\\n\\r\\n", the response's end after
  head        a HEAD request answered with a Content-Length and no body, then
              a GET on the same connection
  timings     four completions answered as llama-server does, with a
              `timings` object, whose content (the secret with it) spells
              "timings", "prompt_n" and "index" in strings and in a key with
              an escaped quote: a JSON answer; an event stream that sends
              each task's figures so far with each token; an answer with
              none but in strings; an array of two tasks' results

  SECRET=... hostile.py SCENARIO READY HOLD
READY: a FIFO it writes "ready" to; HOLD: one it reads before serving.
It prints "served N" (the requests it answered) and, for chunk0, the bytes
of the chunked response ("sent N").
"""
import os
import socket
import subprocess
import sys

N_PIPELINED = 50


def read_until(conn, end, one=False):
    """bytes read until `end` was read (one byte a read with one)"""
    data = b""
    while not data.endswith(end):
        b = conn.recv(1 if one else 65536)
        if not b:
            raise SystemExit("the client went away: %r" % data[-64:])
        data += b
    return data


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        b = conn.recv(n - len(data))
        if not b:
            raise SystemExit("short body")
        data += b
    return data


def ok(body=b"ok"):
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


def timings_answers(secret):
    """the four answers of `timings`: what hides in strings says 999"""
    fake = (b'\\"timings\\":{\\"prompt_n\\":999,\\"predicted_n\\":999},'
            b'\\"index\\":999 %s' % secret)
    json1 = (b'{"content":"%s","a\\"timings":{"prompt_n":999,"predicted_n":999},'
             b'"index":0,"timings":{"cache_n":5,"prompt_n":11,"prompt_ms":20.25,'
             b'"predicted_n":7,"predicted_ms":100.5,"predicted_per_second":59.7}}' % fake)
    events = [b'data: {"choices":[{"index":0,"delta":{"content":"%s"}}],'
              b'"timings":{"prompt_n":21,"prompt_ms":4,"predicted_n":3,"predicted_ms":30}}\n\n'
              % fake,
              b'data: {"choices":[{"index":0,"delta":{"content":"\\\\"}}],'
              b'"timings":{"prompt_n":21,"prompt_ms":4,"predicted_n":9,"predicted_ms":90}}\n\n',
              b"data: [DONE]\n\n"]
    stream = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n" +
              b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n")
    none = b'{"content":"%s","tokens_predicted":999}' % fake
    array = (b'[{"index":0,"content":"%s","timings":{"prompt_n":4,"predicted_n":2,'
             b'"predicted_ms":10}},{"index":1,"timings":{"prompt_n":6,"predicted_n":3,'
             b'"predicted_ms":20}}]' % fake)
    return [ok(json1), stream, ok(none), ok(array)]


def serve(scenario, srv, secret):
    conn, _ = srv.accept()
    served = 0
    if scenario == "body":
        # a body that starts like a request line, read with its headers;
        # a body with a blank line and a request line inside it; a body
        # read on its own, after an interim 100 Continue
        for cont in (False, False, True):
            head = read_until(conn, b"\r\n\r\n")
            n = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            if cont:
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            read_exact(conn, n - (len(head) - head.index(b"\r\n\r\n") - 4))
            conn.sendall(ok())
        served = 3
    elif scenario == "pipelined":
        data = b""
        while data.count(b"\r\n\r\n") < N_PIPELINED:
            b = conn.recv(65536)
            if not b:
                raise SystemExit("the client went away")
            data += b
        conn.sendall(ok() * N_PIPELINED)
        served = N_PIPELINED
    elif scenario == "bytewise":
        read_until(conn, b"\r\n\r\n", one=True)
        conn.sendall(ok())
        served = 1
    elif scenario == "badstatus":
        read_until(conn, b"\r\n\r\n")
        conn.sendall(b"HTTP/1.1 \xff\xfe\xfd\r\nContent-Length: 2\r\n\r\nok")
        served = 1
    elif scenario == "head":
        read_until(conn, b"\r\n\r\n")
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        read_until(conn, b"\r\n\r\n")
        conn.sendall(ok())
        served = 2
    elif scenario == "timings":
        for body in timings_answers(secret):
            read_until(conn, b"\r\n\r\n")
            conn.sendall(body)
        served = 4
    elif scenario == "chunk0":
        read_until(conn, b"\r\n\r\n")
        # the first write ends with a chunk's data that reads "0\r\n\r\n"
        parts = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n0\r\n\r\n",
                 b"\r\n3\r\nabc\r\n", b"0\r\n\r\n"]
        for p in parts:
            conn.sendall(p)
        print("sent %d" % sum(len(p) for p in parts))
        served = 1
    conn.close()
    return served


def client(scenario, port, secret):
    s = socket.create_connection(("127.0.0.1", port))
    if scenario == "body":
        body = b"TOKEN /sk-%s HTTP/1.1\r\nHost: x\r\n\r\n" % secret
        s.sendall(b"POST /a HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        read_until(s, b"ok")
        inner = body + b"\r\n\r\n" + body.replace(b"TOKEN", b"APIKEY")
        s.sendall(b"POST /b HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s" % (len(inner), inner))
        read_until(s, b"ok")
        later = body.replace(b"TOKEN", b"SECRET")
        s.sendall(b"POST /c HTTP/1.1\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n"
                  % len(later))
        read_until(s, b"100 Continue\r\n\r\n")
        s.sendall(later)
        read_until(s, b"ok")
    elif scenario == "pipelined":
        s.sendall(b"".join(b"GET /p%d HTTP/1.1\r\nHost: x\r\n\r\n" % i
                           for i in range(N_PIPELINED)))
        read_until(s, ok() * N_PIPELINED)
    elif scenario == "bytewise":
        for b in b"GET /bytewise HTTP/1.1\r\nHost: x\r\n\r\n":
            s.sendall(bytes([b]))
        read_until(s, b"ok")
    elif scenario == "head":
        s.sendall(b"HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n")
        read_until(s, b"\r\n\r\n")
        s.sendall(b"GET /g HTTP/1.1\r\nHost: x\r\n\r\n")
        read_until(s, b"ok")
    elif scenario == "timings":
        for _ in range(4):
            s.sendall(b"POST /completion HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            data = b""
            while not (data.endswith(b"}") or data.endswith(b"]") or
                       data.endswith(b"0\r\n\r\n")):
                b = s.recv(65536)
                if not b:
                    raise SystemExit("the server went away")
                data += b
    elif scenario in ("badstatus", "chunk0"):
        s.sendall(b"GET /%s HTTP/1.1\r\nHost: x\r\n\r\n" % scenario.encode())
        while s.recv(4096):
            pass
    s.close()


def main():
    if sys.argv[1] == "client":
        client(sys.argv[2], int(sys.argv[3]), os.environ["SECRET"].encode())
        return
    scenario, ready, hold = sys.argv[1:4]
    secret = os.environ["SECRET"].encode()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]
    with open(ready, "w") as f:
        f.write("ready\n")
    open(hold).read()  # the tracer is attached
    cl = subprocess.Popen([sys.executable, __file__, "client", scenario, str(port)])
    served = serve(scenario, srv, secret)
    if cl.wait(timeout=60):
        raise SystemExit("the client failed")
    print("served %d" % served, flush=True)


if __name__ == "__main__":
    main()
