#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A corpus for tests/fuzz/replay.c from real recordings: each trace file as
it is, and its records, decompressed, as the fuzzer's second kind of input
(docs/tracefile.md has the format).

  corpus.py DIR FILE.gmt...
"""
import os
import struct
import sys
import zlib


def records(path):
    data = open(path, "rb").read()
    if data[:8] != b"GMTTRACE":
        return b""
    info_len = struct.unpack_from("<I", data, 12)[0]
    off, out = 16 + info_len + 4, []
    while off + 16 <= len(data):
        magic, comp, raw, _ = struct.unpack_from("<IIII", data, off)
        if magic != 0x42544D47 or off + 16 + comp > len(data):
            break
        out.append(zlib.decompress(data[off + 16:off + 16 + comp]))
        off += 16 + comp
    return b"".join(out)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[2:]:
        name = os.path.basename(path)
        data = open(path, "rb").read()
        open(os.path.join(out, name), "wb").write(data)
        raw = records(path)
        if raw:
            open(os.path.join(out, name + ".records"), "wb").write(raw)


if __name__ == "__main__":
    main()
