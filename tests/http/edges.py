#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""An HTTP server that does what real servers sometimes do and the request
tracer must survive: a peek before the read (MSG_PEEK), a read into a vector
whose first piece is short (with a secret right after it in memory), a
response written as a vector, and connections that end by close_range and
by dup2 instead of close. It serves four requests from its own client,
then waits on the FIFO HOLD so the tracer can read its maps, and exits.

  SECRET=... edges.py READY HOLD   (READY: a FIFO it writes "ready" to)
"""
import ctypes
import os
import socket
import sys
import threading

libc = ctypes.CDLL(None, use_errno=True)
SYS_close_range = 436  # x86-64 and arm64 alike


def respond(conn, status=200, body=b"ok"):
    conn.sendall(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body))


def serve(srv, secret):
    # 1: peeked, then read: one request
    conn, _ = srv.accept()
    conn.recv(64, socket.MSG_PEEK)
    conn.recv(4096)
    respond(conn)
    conn.close()
    # 2: read into a vector whose first piece is 5 bytes, with the secret
    # just after it in memory; answered with a vector
    conn, _ = srv.accept()
    mem = bytearray(5) + bytearray(secret.encode())
    first = memoryview(mem)[:5]
    rest = bytearray(4096)
    conn.recvmsg_into([first, rest])
    conn.sendmsg([b"HTTP/1.1 200 X\r\n", b"Content-Length: 2\r\n\r\nok"])
    conn.close()
    # 3: a response cut short by close_range
    conn, _ = srv.accept()
    conn.recv(4096)
    conn.sendall(b"HTTP/1.1 200 X\r\nContent-Length: 100\r\n\r\npartial")
    fd = conn.detach()
    if libc.syscall(SYS_close_range, fd, fd, 0):
        sys.exit("close_range: %s" % os.strerror(ctypes.get_errno()))
    # 4: a response cut short by dup2 over the connection
    conn, _ = srv.accept()
    conn.recv(4096)
    conn.sendall(b"HTTP/1.1 200 X\r\nContent-Length: 100\r\n\r\npartial")
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, conn.fileno())
    os.close(null)
    conn.close()


def client(port, done):
    for path in ["/peeked", "/vector-path-beyond", "/close-range", "/dup2"]:
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path.encode())
        while s.recv(4096):
            pass
        s.close()
    done.set()


def main():
    ready, hold = sys.argv[1:3]
    secret = os.environ["SECRET"]
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]
    with open(ready, "w") as f:
        f.write("ready\n")
    open(hold).read()  # the tracer is attached
    done = threading.Event()
    threading.Thread(target=client, args=(port, done), daemon=True).start()
    serve(srv, secret)
    done.wait(30)
    print("served 4")


if __name__ == "__main__":
    main()
