#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Drives the real llama-server and measures it with a clock of its own.

CLIENTS clients at once (threads), each sending REQUESTS requests one after
another, going round /completion, /v1/completions and /v1/chat/completions,
streaming and not, on a kept connection and not. Request k asks for
TOKENS + SPREAD * k tokens, grammar-bound to ASCII (random weights emit bytes that
are not UTF-8, which the server answers with 500). Prints JSON: each request
as the client saw it and what the server said of it (its `timings`), and
the server's /metrics at the end.

The clock: the kernel times the request as it leaves (SO_TIMESTAMPING, read
back from the error queue) and the answer's first and last bytes as they
arrive (SO_TIMESTAMPNS), so the client's own scheduling adds nothing: with
four client threads, Python's lock alone can hold one for its 5 ms switch
interval between reading a clock and sending.

  client.py PORT [--clients N] [--requests N] [--tokens N] [--spread N]
                 [--words N] [--word-spread N] [--gap MS] [--paths a,b]
                 [--stream yes|no|both] [--images]
Request k's prompt has WORDS + WORD_SPREAD * k words; with --images, each
chat request also carries a PNG of its own size (a vision model's --mmproj).
"""
import argparse
import base64
import gc
import json
import re
import socket
import struct
import sys
import threading
import time
import zlib

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SO_TIMESTAMPING = getattr(socket, "SO_TIMESTAMPING", 37)
# SOF_TIMESTAMPING_TX_SOFTWARE | _SOFTWARE | _OPT_TSONLY (linux/net_tstamp.h)
TX_STAMPS = (1 << 1) | (1 << 4) | (1 << 11)
VOCAB = ["red", "blue", "cat", "sun", "river", "stone", "north", "glass", "seven", "tree"]


def prompt(k, words):
    x, w = k * 7919 + 17, []
    for _ in range(words):
        x = (x * 1103515245 + 12345) % 2147483648
        w.append(VOCAB[x % len(VOCAB)])
    return f"request {k}: {' '.join(w)}"


def png(w, h, seed):
    """an RGB PNG of w x h pseudo-random pixels"""
    rows, x = [], seed * 7919 + 1
    for _ in range(h):
        row = bytearray(b"\0")
        for _ in range(w * 3):
            x = (x * 1103515245 + 12345) & 0x7fffffff
            row.append(x >> 16 & 255)
        rows.append(bytes(row))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b""))


def body(path, k, n, stream, words, image=False):
    common = {"stream": stream, "grammar": "root ::= [a-z ]+", "ignore_eos": True,
              "temperature": 0.8, "seed": k}
    if path == "/completion":
        return {**common, "prompt": prompt(k, words), "n_predict": n}
    if path.endswith("/chat/completions"):
        content = prompt(k, words)
        if image:
            # an image of its own size each request: the encoder sees new shapes
            url = "data:image/png;base64," + base64.b64encode(
                png(64 + 16 * (k % 4), 48 + 16 * (k % 3), k)).decode()
            content = [{"type": "text", "text": content},
                       {"type": "image_url", "image_url": {"url": url}}]
        return {**common, "messages": [{"role": "user", "content": content}], "max_tokens": n}
    return {**common, "prompt": prompt(k, words), "max_tokens": n}


def complete(buf):
    """(headers, body) once the answer is whole, else None"""
    head = buf.find(b"\r\n\r\n")
    if head < 0:
        return None
    h = buf[:head].decode("latin-1").lower()
    rest = buf[head + 4:]
    m = re.search(r"content-length: *([0-9]+)", h)
    if m:
        n = int(m.group(1))
        return (h, rest[:n]) if len(rest) >= n else None
    if not re.search(r"transfer-encoding: *chunked", h):
        return None
    parts = []
    while True:
        eol = rest.find(b"\r\n")
        if eol < 0:
            return None
        n = int(rest[:eol].split(b";")[0], 16)
        if len(rest) < eol + 2 + n + 2:
            return None
        if not n:
            return h, b"".join(parts)
        parts.append(rest[eol + 2:eol + 2 + n])
        rest = rest[eol + 2 + n + 2:]


def timings_of(text, stream):
    if not stream:
        return json.loads(text).get("timings")
    t = None
    for line in text.split("\n"):
        if line.startswith("data: {"):
            d = json.loads(line[6:])
            t = d.get("timings", t)
    return t


def wall_minus_mono():
    """CLOCK_REALTIME less CLOCK_MONOTONIC, in ms"""
    return (time.clock_gettime_ns(time.CLOCK_REALTIME) -
            time.clock_gettime_ns(time.CLOCK_MONOTONIC)) / 1e6


def kernel_ms(anc):
    """the arrival time the kernel stamped on the bytes, in ms since the epoch"""
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("qq", data[:16])
            return sec * 1e3 + nsec / 1e6
    return time.time_ns() / 1e6


class Closed(Exception):
    """the server closed the connection before it answered"""

    def __init__(self, unread):
        super().__init__("the connection closed before the answer ended")
        self.unread = unread


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, TX_STAMPS)
    return s


def sent_ms(s):
    """when the kernel sent the request: the first send timestamp waiting on
    the socket's error queue (the answer has come, so it is there)"""
    first = None
    while True:
        try:
            _, anc, _, _ = s.recvmsg(0, 512, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return first
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING and first is None:
                sec, nsec = struct.unpack("qq", data[:16])
                first = sec * 1e3 + nsec / 1e6


def exchange(s, k, path, stream, keep, opt):
    n = opt.tokens + opt.spread * k
    data = json.dumps(body(path, k, n, stream, opt.words + opt.word_spread * k,
                           opt.images)).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: {'keep-alive' if keep else 'close'}"
            "\r\n\r\n").encode()
    r = {"k": k, "path": path, "stream": stream, "keep_alive": keep, "n_predict": n}
    buf = b""
    sent_ms(s)  # what an earlier request on this connection left
    off_start = wall_minus_mono()
    user_ms = time.time_ns() / 1e6
    s.sendall(head + data)
    while True:
        d, anc, _, _ = s.recvmsg(65536, 256)
        if not d:
            raise Closed(not buf)
        t = kernel_ms(anc)
        if not buf:
            first = t
        buf += d
        done = complete(buf)
        if done:
            break
    kernel = sent_ms(s)
    # the wall clock less CLOCK_MONOTONIC as the request went and came: the
    # kernel's stamps are on the wall clock, which a VM's time sync can step
    r["wall_minus_mono_ms"] = [off_start, wall_minus_mono()]
    r["start_ms"] = kernel or user_ms
    # the kernel stamps the write's last byte: a server may read the first
    # before it leaves (a body of several segments), never before the write
    r["send_ms"] = user_ms
    r["start_clock"] = "kernel" if kernel else "user"
    r["ttfb_ms"] = first - r["start_ms"]
    r["end_ms"] = t
    r["bytes"] = len(buf)
    r["latency_ms"] = t - r["start_ms"]
    h, text = done[0], done[1].decode("utf-8", "replace")
    r["status"] = int(re.match(r"http/1\.[01] ([0-9]{3})", h).group(1))
    try:
        r["timings"] = timings_of(text, stream)
    except ValueError as e:
        r["error"] = str(e)[:200]
    if r["status"] != 200:
        r["error"] = text[:200]
    return r, "connection: close" in h


def client(c, opt, out):
    kept = None
    for i in range(opt.requests):
        k = c + i * opt.clients
        if i and opt.gap:
            time.sleep(opt.gap / 1000)
        stream = k % 2 == 1 if opt.stream == "both" else opt.stream == "yes"
        keep = (k // 2) % 2 == 0
        path = opt.paths[k % len(opt.paths)]
        while True:
            reused = keep and kept is not None
            s = kept if reused else connect(opt.port)
            try:
                r, close = exchange(s, k, path, stream, keep, opt)
                r["fresh"] = not reused
                break
            except Closed as e:
                # llama-server closes a kept connection after an event
                # stream; what it never read is sent again on a new one
                s.close()
                kept = None
                if not (reused and e.unread):
                    raise
        if keep and not close:
            kept = s
        else:
            s.close()
            kept = None if keep else kept
        out.append(r)
    if kept:
        kept.close()


def metrics(port):
    s = connect(port)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    s.close()
    done = complete(buf)
    if not done or not done[0].startswith("http/1.1 200"):
        return None
    m = {}
    for line in done[1].decode().split("\n"):
        x = re.match(r"^llamacpp:([a-z_]+) ([0-9.e+-]+)$", line)
        if x:
            m[x.group(1)] = float(x.group(2))
    return m


def main():
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("--clients", type=int, default=1)
    p.add_argument("--requests", type=int, default=6)
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--spread", type=int, default=1)
    p.add_argument("--words", type=int, default=8)
    p.add_argument("--word-spread", type=int, default=0)
    p.add_argument("--images", action="store_true",
                   help="each chat request carries a PNG of its own size")
    p.add_argument("--gap", type=float, default=0)
    p.add_argument("--paths", default="/completion,/v1/completions,/v1/chat/completions")
    p.add_argument("--stream", default="both", choices=["yes", "no", "both"])
    opt = p.parse_args()
    opt.paths = opt.paths.split(",")
    # a thread keeps the interpreter from the clock reading to the send: a
    # switch in between would count another client's parsing as latency
    sys.setswitchinterval(10)
    gc.disable()  # nor a collection
    out, errors, threads = [], [], []
    t0 = time.time()

    def run(c):
        try:
            client(c, opt, out)
        except Exception as e:  # reported, and the run fails
            errors.append(f"client {c}: {e}")

    for c in range(opt.clients):
        threads.append(threading.Thread(target=run, args=(c,)))
        threads[-1].start()
    for t in threads:
        t.join()
    out.sort(key=lambda r: r["k"])
    json.dump({"requests": out, "seconds": time.time() - t0, "metrics": metrics(opt.port),
               "errors": errors}, sys.stdout)
    print()
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
