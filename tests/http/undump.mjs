// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Writes the decompressed records of a trace file (docs/tracefile.md) to
// standard output, for tests that search what a recording holds.
//   node undump.mjs FILE
import { readFileSync } from "node:fs";
import { inflateSync } from "node:zlib";

const f = readFileSync(process.argv[2]);
if (f.toString("latin1", 0, 8) !== "GMTTRACE") throw new Error("not a trace file");
let off = 12 + f.readUInt32LE(12) + 4 + 4;
const out = [f.subarray(0, off)];
while (off + 16 <= f.length && f.toString("latin1", off, off + 4) === "GMTB") {
	const comp = f.readUInt32LE(off + 4);
	out.push(inflateSync(f.subarray(off + 16, off + 16 + comp)));
	off += 16 + comp;
}
process.stdout.write(Buffer.concat(out));
