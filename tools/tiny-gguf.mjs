#!/usr/bin/env node
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Writes a tiny llama-architecture GGUF with random weights, for tests that
// run the real llama.cpp without downloading a model: an SPM tokenizer made
// of the three special tokens and the 256 byte tokens, F32 tensors.
//   node tools/tiny-gguf.mjs OUT.gguf [--embd 256] [--layers 2] [--ff 512] [--ctx 512] [--seed 1]
import { writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const out = args.find((a, i) => !a.startsWith("--") && !(i > 0 && args[i - 1].startsWith("--")));
const opt = (name, def) => {
	const i = args.indexOf("--" + name);
	return i >= 0 ? Number(args[i + 1]) : def;
};
if (!out) {
	console.error("usage: tiny-gguf.mjs OUT.gguf [--embd N] [--layers N] [--ff N] [--ctx N] [--seed N]");
	process.exit(2);
}
const nEmbd = opt("embd", 256), nLayer = opt("layers", 2), nFf = opt("ff", 512);
const nCtx = opt("ctx", 512), nHead = 4;
let seed = opt("seed", 1) >>> 0 || 1;

// vocabulary: <unk> <s> </s>, then <0x00>..<0xFF> (byte fallback)
const tokens = ["<unk>", "<s>", "</s>"];
const types = [2, 3, 3]; // unknown, control, control
for (let b = 0; b < 256; b++) {
	tokens.push("<0x" + b.toString(16).toUpperCase().padStart(2, "0") + ">");
	types.push(6); // byte
}
const nVocab = tokens.length;

// GGUF value types
const U32 = 4, I32 = 5, F32 = 6, STR = 8, ARR = 9;
const chunks = [];
const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); chunks.push(b); };
const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); chunks.push(b); };
const f32 = (v) => { const b = Buffer.alloc(4); b.writeFloatLE(v); chunks.push(b); };
const str = (s) => { const b = Buffer.from(s, "utf8"); u64(b.length); chunks.push(b); };

const kv = [
	["general.architecture", STR, "llama"],
	["general.name", STR, "gpumemtrace tiny random llama"],
	["general.alignment", U32, 32],
	["llama.context_length", U32, nCtx],
	["llama.embedding_length", U32, nEmbd],
	["llama.block_count", U32, nLayer],
	["llama.feed_forward_length", U32, nFf],
	["llama.attention.head_count", U32, nHead],
	["llama.attention.head_count_kv", U32, nHead],
	["llama.attention.layer_norm_rms_epsilon", F32, 1e-5],
	["llama.rope.dimension_count", U32, nEmbd / nHead],
	["llama.vocab_size", U32, nVocab],
	["tokenizer.ggml.model", STR, "llama"],
	["tokenizer.ggml.tokens", ARR, [STR, tokens]],
	["tokenizer.ggml.scores", ARR, [F32, tokens.map(() => 0)]],
	["tokenizer.ggml.token_type", ARR, [I32, types]],
	["tokenizer.ggml.bos_token_id", U32, 1],
	["tokenizer.ggml.eos_token_id", U32, 2],
	["tokenizer.ggml.unknown_token_id", U32, 0],
	["tokenizer.ggml.add_bos_token", 7, true],
];

function value(type, v) {
	if (type === U32) u32(v);
	else if (type === I32) { const b = Buffer.alloc(4); b.writeInt32LE(v); chunks.push(b); }
	else if (type === F32) f32(v);
	else if (type === STR) str(v);
	else if (type === 7) chunks.push(Buffer.from([v ? 1 : 0]));
	else if (type === ARR) {
		const [et, items] = v;
		u32(et);
		u64(items.length);
		for (const x of items) value(et, x);
	}
}

const tensors = [["token_embd.weight", [nEmbd, nVocab]], ["output_norm.weight", [nEmbd]],
	["output.weight", [nEmbd, nVocab]]];
for (let i = 0; i < nLayer; i++) {
	const p = `blk.${i}.`;
	tensors.push([p + "attn_norm.weight", [nEmbd]], [p + "attn_q.weight", [nEmbd, nEmbd]],
		[p + "attn_k.weight", [nEmbd, nEmbd]], [p + "attn_v.weight", [nEmbd, nEmbd]],
		[p + "attn_output.weight", [nEmbd, nEmbd]], [p + "ffn_norm.weight", [nEmbd]],
		[p + "ffn_gate.weight", [nEmbd, nFf]], [p + "ffn_up.weight", [nEmbd, nFf]],
		[p + "ffn_down.weight", [nFf, nEmbd]]);
}

chunks.push(Buffer.from("GGUF"));
u32(3);
u64(tensors.length);
u64(kv.length);
for (const [k, t, v] of kv) {
	str(k);
	u32(t);
	value(t, v);
}
const align = (n) => Math.ceil(n / 32) * 32;
let off = 0;
for (const [name, dims] of tensors) {
	str(name);
	u32(dims.length);
	for (const d of dims) u64(d);
	u32(0); // GGML_TYPE_F32
	u64(off);
	off = align(off + dims.reduce((a, b) => a * b, 1) * 4);
}
let head = Buffer.concat(chunks);
head = Buffer.concat([head, Buffer.alloc(align(head.length) - head.length)]);

// xorshift32: the same file for the same seed
const rand = () => {
	seed ^= seed << 13; seed >>>= 0;
	seed ^= seed >>> 17;
	seed ^= seed << 5; seed >>>= 0;
	return seed / 4294967296 - 0.5;
};
const data = Buffer.alloc(off);
off = 0;
for (const [name, dims] of tensors) {
	const n = dims.reduce((a, b) => a * b, 1);
	for (let i = 0; i < n; i++)
		data.writeFloatLE(name.endsWith("norm.weight") ? 1 : rand() * 0.1, off + i * 4);
	off = align(off + n * 4);
}
writeFileSync(out, Buffer.concat([head, data]));
console.log(JSON.stringify({ file: out, bytes: head.length + data.length, n_vocab: nVocab,
	n_embd: nEmbd, n_layer: nLayer, n_ff: nFf, n_ctx_train: nCtx }));
