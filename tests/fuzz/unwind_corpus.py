#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Seeds for tests/fuzz/unwind.c (its header says the layout): a call
chain that unwinds by plain CFI, and the hostile rules of issue 32 (a
return address saved at 0xfffffffffffffffa, through DW_OP_deref, a CFA
expression, a DW_OP_skip that jumps to itself, a deep expression stack,
huge offsets), in .eh_frame and in .debug_frame.

  unwind_corpus.py DIR
"""
import os
import struct
import sys

BASE, TEXT, SP = 0x400000, 0x200, 0x7FFD00000000
HOSTILE = struct.pack("<Q", 0xFFFFFFFFFFFFFFFA)


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out.append(b | (0 if done else 0x80))
        if done:
            return bytes(out)


def pad(body):
    # the length field and the body, a multiple of 8, DW_CFA_nop-padded
    body += b"\0" * (-(len(body) + 4) % 8)
    return struct.pack("<I", len(body)) + body


# the CIE's rules: CFA = rsp + 8, rip at CFA - 8
CIE_RULES = b"\x0c\x07\x08" + b"\x90\x01"


def eh_frame(fde_rules):
    cie = pad(b"\0\0\0\0" + b"\x01zR\0" + uleb(1) + sleb(-8) + uleb(16) + uleb(1) + b"\x00" +
              CIE_RULES)
    # CIE pointer: from the field to the CIE's start
    fde = pad(struct.pack("<I", len(cie) + 4) + struct.pack("<QQ", TEXT, 0x100) + uleb(0) +
              fde_rules)
    return cie + fde


def debug_frame(fde_rules):
    cie = pad(b"\xff\xff\xff\xff" + b"\x03\0" + uleb(1) + sleb(-8) + uleb(16) + CIE_RULES)
    fde = pad(struct.pack("<I", 0) + struct.pack("<QQ", TEXT, 0x100) + fde_rules)
    return cie + fde


def expression(reg, ops):
    return b"\x10" + uleb(reg) + uleb(len(ops)) + ops


RULES = {
    "plain": b"",
    "ra-at-top": expression(16, b"\x0e" + HOSTILE),
    "ra-deref-top": expression(16, b"\x0e" + HOSTILE + b"\x06"),
    "cfa-at-top": b"\x0f" + uleb(9) + b"\x0e" + HOSTILE,
    "skip-to-itself": expression(16, b"\x2f" + struct.pack("<h", -3)),
    "deep-stack": expression(16, b"\x30" * 250 + b"\x77\x00"),
    "huge-cfa-offset": b"\x0c\x07" + uleb(1 << 63),
    "huge-breg": expression(16, b"\x77" + sleb(-(1 << 62))),
    "ra-is-rsp": b"\x16\x10\x02\x77\x00",  # DW_CFA_val_expression rip = rsp
    # a rule for register 268,420,218: libdw's frame state grows to 2 GiB
    "huge-register": b"\x10" + uleb(268420218) + uleb(0),
    # states remembered deeper than the checker allows
    "deep-remember": b"\x0a" * 100,
    "unknown-op": expression(16, b"\x96\xe0"),  # DW_OP_nop, DW_OP_GNU_push_tls_address
}


def seed(rules, debug=False, flags=0):
    # a chain of return addresses into the text, one a frame
    stack = b"".join(struct.pack("<Q", BASE + TEXT + 0x10 * (i + 1)) for i in range(32))
    regs = [0] * 17
    regs[7] = SP
    cfi = debug_frame(rules) if debug else eh_frame(rules)
    flags |= 2 if debug else 0
    hdr = struct.pack("<BBHHH", flags, 64, TEXT + 4, len(stack), len(cfi))
    return hdr + struct.pack("<17Q", *regs) + stack + cfi


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, rules in RULES.items():
        open(os.path.join(out, name), "wb").write(seed(rules))
        open(os.path.join(out, name + ".debug"), "wb").write(seed(rules, debug=True))


if __name__ == "__main__":
    main()
