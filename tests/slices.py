#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What the stack slices that left the kernel kept (GMT_TEST_USTACK_DUMP).

  slices.py DUMP MAPS SECRET

DUMP: the USTACK records as gpumemtrace read them; MAPS: the target's
/proc/PID/maps. Every nonzero register and stack word must be an address
in the thread's stack (16 MiB above its stack pointer) or in an executable
mapping, SECRET must appear nowhere, and each slice must keep some code
address (an unwinder's return addresses). Prints a summary; exits 1 if not."""
import platform
import struct
import sys

# gmt_events.h's GMT_USTACK_REGS, GMT_USTACK_SP and GMT_USTACK_PC here
NREGS, SP, PC = (33, 31, 32) if platform.machine() == "aarch64" else (17, 7, 16)

dump, maps, secret = open(sys.argv[1], "rb").read(), sys.argv[2], sys.argv[3].encode()
code = []
for line in open(maps):
    a, perms = line.split()[:2]
    if "x" in perms:
        lo, hi = (int(x, 16) for x in a.split("-"))
        code.append((lo, hi))

in_code = lambda v: any(lo <= v < hi for lo, hi in code)
off = slices = words = kept = bad = 0
problems = []
while off + 24 <= len(dump):
    ts, pid, tid, typ, ln, cpu = struct.unpack_from("<QIIHHI", dump, off)
    rec = dump[off:off + ln]
    off += ln
    regs = struct.unpack_from("<%dQ" % NREGS, rec, 24)
    size = struct.unpack_from("<I", rec, 24 + 8 * NREGS)[0]
    data = rec[24 + 8 * NREGS + 8:24 + 8 * NREGS + 8 + size]
    sp = regs[SP]
    slices += 1
    code_words = 0
    vals = [v for i, v in enumerate(regs) if i not in (SP, PC)]
    vals += list(struct.unpack_from("<%dQ" % (len(data) // 8), data))
    for v in vals:
        words += 1
        if not v:
            continue
        kept += 1
        if in_code(v):
            code_words += 1
        elif not (sp <= v < sp + (16 << 20)):
            bad += 1
            if len(problems) < 5:
                problems.append("slice %d: kept %#x, neither stack nor code" % (slices, v))
    if not code_words:
        problems.append("slice %d kept no code address" % slices)
if secret in dump:
    problems.append("the secret left the kernel")
print("%d slices, %d words, %d kept, %d neither stack nor code" % (slices, words, kept, bad))
for p in problems[:8]:
    print(p)
sys.exit(1 if problems or slices < 5 else 0)
