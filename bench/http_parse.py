#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/http_parse.sh's server: N keep-alive requests with browser-sized
# headers and a 200-byte body, each answered by an event stream in 11 writes;
#   http_parse.py N READY HOLD DONE (FIFOs: it waits on HOLD before and after)
import socket, subprocess, sys, os
N = int(sys.argv[1]); ready, hold, done = sys.argv[2:5]
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8)
port = srv.getsockname()[1]
open(ready, "w").write("ready\n")
open(hold).read()
cl = subprocess.Popen([sys.executable, "-c", f"""
import socket
s = socket.create_connection(("127.0.0.1", {port}))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
req = b"POST /v1/chat/completions HTTP/1.1\\r\\nHost: localhost:8080\\r\\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\\r\\nAccept: */*\\r\\nAccept-Language: en-US,en;q=0.9\\r\\nAuthorization: Bearer sk-0123456789abcdef0123456789abcdef\\r\\nContent-Type: application/json\\r\\nCookie: session=abcdefabcdefabcdefabcdef; theme=dark\\r\\nContent-Length: 200\\r\\n\\r\\n" + b"x" * 200
for i in range({N}):
    s.sendall(req)
    buf = b""
    while not buf.endswith(b"0\\r\\n\\r\\n"):
        buf += s.recv(65536)
s.close()
"""])
conn, _ = srv.accept()
conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
buf = b""
for i in range(N):
    while b"\r\n\r\n" not in buf:
        buf += conn.recv(4096)
    h, _, rest = buf.partition(b"\r\n\r\n")
    while len(rest) < 200:
        rest += conn.recv(4096)
    buf = rest[200:]
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    for k in range(9):
        conn.sendall(b"1c\r\ndata: {\"token\": 12345678901}\n\n\r\n")
    conn.sendall(b"0\r\n\r\n")
cl.wait()
open(done, "w").write("done\n")
open(hold).read()
