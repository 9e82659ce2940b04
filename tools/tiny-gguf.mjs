#!/usr/bin/env node
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Writes a tiny GGUF with random weights, for tests that run the real
// llama.cpp without downloading a model: an SPM tokenizer made of the three
// special tokens and the 256 byte tokens, F32 tensors. A llama-architecture
// model, or with --arch mamba2 a recurrent one (its state is --state values
// a channel, the same size whatever the prompt: field report 2's entries),
// or with --arch qwen35 report 2's own hybrid: gated delta net layers, every
// fourth one attention; --arch gemma3 a Gemma-3 text model (sliding-window
// attention) and --arch gemma3-mmproj its vision projector (a SigLIP encoder
// of --vembd, images of 128x128 in 8x8 patches, 16 image tokens), for
// --mmproj (report 4); --arch qwen3vl and qwen3vl-mmproj the same for a
// Qwen3-VL-style pair (M-RoPE; the qwen3vl_merger projector; report 1). Names and shapes: src/models/*.cpp,
// src/llama-arch.cpp, tools/mtmd/clip.cpp and clip-impl.h.
//   node tools/tiny-gguf.mjs OUT.gguf [--arch llama|mamba2|qwen35|gemma3|gemma3-mmproj] [--embd 256] [--layers 2]
//        [--ff 512] [--ctx 512] [--state 16] [--seed 1] [--ascii] [--repeat N]
import { writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const out = args.find((a, i) => !a.startsWith("--") && !(i > 0 && args[i - 1].startsWith("--")));
const opt = (name, def) => {
	const i = args.indexOf("--" + name);
	return i >= 0 ? Number(args[i + 1]) : def;
};
const ai = args.indexOf("--arch");
const arch = ai >= 0 ? args[ai + 1] : "llama";
const arches = ["llama", "mamba2", "qwen35", "gemma3", "gemma3-mmproj", "qwen3vl", "qwen3vl-mmproj"];
if (!out || !arches.includes(arch)) {
	console.error(`usage: tiny-gguf.mjs OUT.gguf [--arch ${arches.join("|")}] [--embd N] [--layers N] [--ff N] [--ctx N] [--state N] [--vembd N] [--seed N] [--ascii] [--repeat N]`);
	process.exit(2);
}
const nEmbd = opt("embd", 256), nLayer = opt("layers", 2), nFf = opt("ff", 512);
const nCtx = opt("ctx", 512), nHead = 4;
// mamba2: an inner width of twice the embedding in heads of 64, one group
const dConv = 4, dInner = 2 * nEmbd, dState = opt("state", 16), nGroup = 1;
const dtRank = Math.max(1, dInner / 64), convDim = dInner + 2 * nGroup * dState;
// qwen35: heads of 64; the delta net's keys in 2 heads and values in 4, of
// --state each; layer i is attention where (i + 1) % 4 == 0
const headDim = 64, qHeads = nEmbd / headDim, kHeads = 2, vHeads = 4;
const keyDim = dState * kHeads, valueDim = dState * vHeads, qConvDim = 2 * keyDim + valueDim;
const isAttn = (i) => (i + 1) % 4 === 0;
// gemma3's projector: a vision encoder of vEmbd, its tokens pooled 4x4 and
// projected to the text model's --embd
const vEmbd = opt("vembd", 64), imgSize = 128, patch = 8, nPatches = (imgSize / patch) ** 2;
const isClip = arch.endsWith("-mmproj");
const qvl = arch === "qwen3vl-mmproj";
let seed = opt("seed", 1) >>> 0 || 1;

// vocabulary: <unk> <s> </s>, then <0x00>..<0xFF> (byte fallback); with
// --ascii only tab, newline and the printable ASCII bytes, so that whatever
// random weights sample is text (llama.cpp's own suite parses answers)
const ascii = args.includes("--ascii");
const tokens = ["<unk>", "<s>", "</s>"];
const types = [2, 3, 3]; // unknown, control, control
for (let b = 0; b < 256; b++) {
	if (ascii && !(b === 9 || b === 10 || (b >= 32 && b < 127)))
		continue;
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

const clipKv = [
	["general.architecture", STR, "clip"],
	["general.name", STR, "gpumemtrace tiny random gemma3 projector"],
	["general.alignment", U32, 32],
	["clip.projector_type", STR, qvl ? "qwen3vl_merger" : "gemma3"],
	["clip.has_vision_encoder", 7, true],
	["clip.use_gelu", 7, true],
	["clip.vision.image_size", U32, imgSize],
	["clip.vision.patch_size", U32, patch],
	["clip.vision.embedding_length", U32, vEmbd],
	["clip.vision.feed_forward_length", U32, 2 * vEmbd],
	["clip.vision.block_count", U32, nLayer],
	["clip.vision.projection_dim", U32, nEmbd],
	["clip.vision.attention.head_count", U32, 4],
	["clip.vision.attention.layer_norm_epsilon", F32, 1e-6],
	["clip.vision.image_mean", ARR, [F32, [0.5, 0.5, 0.5]]],
	["clip.vision.image_std", ARR, [F32, [0.5, 0.5, 0.5]]],
];
const textKv = [
	["general.architecture", STR, arch],
	["general.name", STR, `gpumemtrace tiny random ${arch}`],
	["general.alignment", U32, 32],
	[arch + ".context_length", U32, nCtx],
	[arch + ".embedding_length", U32, nEmbd],
	[arch + ".block_count", U32, nLayer],
	...(arch === "llama" ? [
		["llama.feed_forward_length", U32, nFf],
		["llama.attention.head_count", U32, nHead],
		["llama.attention.head_count_kv", U32, nHead],
		["llama.attention.layer_norm_rms_epsilon", F32, 1e-5],
		["llama.rope.dimension_count", U32, nEmbd / nHead],
		["llama.vocab_size", U32, nVocab],
	] : arch === "gemma3" ? [
		["gemma3.feed_forward_length", U32, nFf],
		["gemma3.attention.head_count", U32, nEmbd / 64],
		["gemma3.attention.head_count_kv", U32, 1],
		["gemma3.attention.key_length", U32, 64],
		["gemma3.attention.value_length", U32, 64],
		["gemma3.attention.layer_norm_rms_epsilon", F32, 1e-6],
		["gemma3.attention.sliding_window", U32, 128],
		["gemma3.rope.freq_base", F32, 1000000],
		["gemma3.vocab_size", U32, nVocab],
	] : arch === "qwen3vl" ? [
		["qwen3vl.feed_forward_length", U32, nFf],
		["qwen3vl.attention.head_count", U32, nEmbd / 64],
		["qwen3vl.attention.head_count_kv", U32, nEmbd / 64],
		["qwen3vl.attention.key_length", U32, 64],
		["qwen3vl.attention.value_length", U32, 64],
		["qwen3vl.attention.layer_norm_rms_epsilon", F32, 1e-6],
		["qwen3vl.rope.dimension_sections", ARR, [I32, [12, 10, 10, 0]]],
		["qwen3vl.rope.freq_base", F32, 5000000],
		["qwen3vl.vocab_size", U32, nVocab],
	] : arch === "qwen35" ? [
		["qwen35.feed_forward_length", U32, nFf],
		["qwen35.attention.head_count", U32, qHeads],
		["qwen35.attention.head_count_kv", U32, qHeads],
		["qwen35.attention.key_length", U32, headDim],
		["qwen35.attention.value_length", U32, headDim],
		["qwen35.attention.layer_norm_rms_epsilon", F32, 1e-6],
		["qwen35.rope.dimension_count", U32, headDim],
		["qwen35.rope.dimension_sections", ARR, [I32, [11, 11, 10, 0]]],
		["qwen35.rope.freq_base", F32, 10000000],
		["qwen35.ssm.conv_kernel", U32, dConv],
		["qwen35.ssm.inner_size", U32, valueDim],
		["qwen35.ssm.state_size", U32, dState],
		["qwen35.ssm.time_step_rank", U32, vHeads],
		["qwen35.ssm.group_count", U32, kHeads],
		["qwen35.full_attention_interval", U32, 4],
		["qwen35.vocab_size", U32, nVocab],
	] : [
		["mamba2.ssm.conv_kernel", U32, dConv],
		["mamba2.ssm.inner_size", U32, dInner],
		["mamba2.ssm.state_size", U32, dState],
		["mamba2.ssm.time_step_rank", U32, dtRank],
		["mamba2.ssm.group_count", U32, nGroup],
		["mamba2.attention.layer_norm_rms_epsilon", F32, 1e-5],
	]),
	["tokenizer.ggml.model", STR, "llama"],
	["tokenizer.ggml.tokens", ARR, [STR, tokens]],
	["tokenizer.ggml.scores", ARR, [F32, tokens.map(() => 0)]],
	["tokenizer.ggml.token_type", ARR, [I32, types]],
	["tokenizer.ggml.bos_token_id", U32, 1],
	["tokenizer.ggml.eos_token_id", U32, 2],
	["tokenizer.ggml.unknown_token_id", U32, 0],
	["tokenizer.ggml.add_bos_token", 7, true],
];

const kv = isClip ? clipKv : textKv;

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

const tensors = qvl ? [["v.patch_embd.weight", [patch, patch, 3, vEmbd]],
	["v.patch_embd.weight.1", [patch, patch, 3, vEmbd]], ["v.patch_embd.bias", [vEmbd]],
	["v.position_embd.weight", [vEmbd, nPatches]], ["v.post_ln.weight", [vEmbd]],
	["v.post_ln.bias", [vEmbd]], ["mm.0.weight", [4 * vEmbd, 4 * vEmbd]], ["mm.0.bias", [4 * vEmbd]],
	["mm.2.weight", [4 * vEmbd, nEmbd]], ["mm.2.bias", [nEmbd]]] :
	isClip ? [["v.patch_embd.weight", [patch, patch, 3, vEmbd]],
	["v.patch_embd.bias", [vEmbd]], ["v.position_embd.weight", [vEmbd, nPatches]],
	["v.post_ln.weight", [vEmbd]], ["v.post_ln.bias", [vEmbd]],
	["mm.input_projection.weight", [nEmbd, vEmbd]], ["mm.soft_emb_norm.weight", [vEmbd]]] :
	[["token_embd.weight", [nEmbd, nVocab]], ["output_norm.weight", [nEmbd]],
		["output.weight", [nEmbd, nVocab]]];
for (let i = 0; i < nLayer; i++) {
	const p = `blk.${i}.`;
	if (isClip) {
		const v = `v.blk.${i}.`;
		if (qvl)
			tensors.push([v + "attn_qkv.weight", [vEmbd, 3 * vEmbd]], [v + "attn_qkv.bias", [3 * vEmbd]],
				[v + "attn_out.weight", [vEmbd, vEmbd]], [v + "attn_out.bias", [vEmbd]]);
		else
			for (const t of ["attn_q", "attn_k", "attn_v", "attn_out"])
				tensors.push([v + t + ".weight", [vEmbd, vEmbd]], [v + t + ".bias", [vEmbd]]);
		tensors.push([v + "ln1.weight", [vEmbd]], [v + "ln1.bias", [vEmbd]],
			[v + "ln2.weight", [vEmbd]], [v + "ln2.bias", [vEmbd]],
			[v + "ffn_up.weight", [vEmbd, 2 * vEmbd]], [v + "ffn_up.bias", [2 * vEmbd]],
			[v + "ffn_down.weight", [2 * vEmbd, vEmbd]], [v + "ffn_down.bias", [vEmbd]]);
		continue;
	}
	if (arch === "qwen3vl") {
		tensors.push([p + "attn_norm.weight", [nEmbd]], [p + "attn_q.weight", [nEmbd, nEmbd]],
			[p + "attn_k.weight", [nEmbd, nEmbd]], [p + "attn_v.weight", [nEmbd, nEmbd]],
			[p + "attn_output.weight", [nEmbd, nEmbd]], [p + "attn_q_norm.weight", [64]],
			[p + "attn_k_norm.weight", [64]], [p + "ffn_norm.weight", [nEmbd]],
			[p + "ffn_gate.weight", [nEmbd, nFf]], [p + "ffn_up.weight", [nEmbd, nFf]],
			[p + "ffn_down.weight", [nFf, nEmbd]]);
		continue;
	}
	if (arch === "gemma3") {
		tensors.push([p + "attn_norm.weight", [nEmbd]], [p + "attn_q.weight", [nEmbd, nEmbd]],
			[p + "attn_k.weight", [nEmbd, 64]], [p + "attn_v.weight", [nEmbd, 64]],
			[p + "attn_output.weight", [nEmbd, nEmbd]], [p + "post_attention_norm.weight", [nEmbd]],
			[p + "attn_q_norm.weight", [64]], [p + "attn_k_norm.weight", [64]],
			[p + "ffn_norm.weight", [nEmbd]], [p + "ffn_gate.weight", [nEmbd, nFf]],
			[p + "ffn_up.weight", [nEmbd, nFf]], [p + "ffn_down.weight", [nFf, nEmbd]],
			[p + "post_ffw_norm.weight", [nEmbd]]);
		continue;
	}
	if (arch === "qwen35") {
		tensors.push([p + "attn_norm.weight", [nEmbd]], [p + "post_attention_norm.weight", [nEmbd]]);
		if (isAttn(i))
			tensors.push([p + "attn_q.weight", [nEmbd, 2 * headDim * qHeads]],
				[p + "attn_k.weight", [nEmbd, headDim * qHeads]],
				[p + "attn_v.weight", [nEmbd, headDim * qHeads]],
				[p + "attn_output.weight", [headDim * qHeads, nEmbd]],
				[p + "attn_q_norm.weight", [headDim]], [p + "attn_k_norm.weight", [headDim]]);
		else
			tensors.push([p + "attn_qkv.weight", [nEmbd, qConvDim]],
				[p + "attn_gate.weight", [nEmbd, valueDim]],
				[p + "ssm_conv1d.weight", [dConv, qConvDim]], [p + "ssm_dt.bias", [vHeads]],
				[p + "ssm_a", [vHeads]], [p + "ssm_beta.weight", [nEmbd, vHeads]],
				[p + "ssm_alpha.weight", [nEmbd, vHeads]], [p + "ssm_norm.weight", [dState]],
				[p + "ssm_out.weight", [valueDim, nEmbd]]);
		tensors.push([p + "ffn_gate.weight", [nEmbd, nFf]], [p + "ffn_up.weight", [nEmbd, nFf]],
			[p + "ffn_down.weight", [nFf, nEmbd]]);
		continue;
	}
	if (arch === "mamba2") {
		tensors.push([p + "attn_norm.weight", [nEmbd]],
			[p + "ssm_in.weight", [nEmbd, dInner + convDim + dtRank]],
			[p + "ssm_conv1d.weight", [dConv, convDim]], [p + "ssm_conv1d.bias", [convDim]],
			[p + "ssm_dt.bias", [dtRank]], [p + "ssm_a", [1, dtRank]], [p + "ssm_d", [1, dtRank]],
			[p + "ssm_norm.weight", [dInner / nGroup, nGroup]],
			[p + "ssm_out.weight", [dInner, nEmbd]]);
		continue;
	}
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
// --repeat N: the same N random values over and over, so that a large
// model compresses to almost nothing (to carry it to another machine)
const repeat = opt("repeat", 0);
const table = Array.from({ length: repeat }, rand);
const next = repeat ? (i) => table[i % repeat] : () => rand();
const data = Buffer.alloc(off);
off = 0;
for (const [name, dims] of tensors) {
	const n = dims.reduce((a, b) => a * b, 1);
	for (let i = 0; i < n; i++)
		// norms 1; a state that decays (A < 0), skips through (D = 1)
		data.writeFloatLE(name.endsWith("norm.weight") || name.endsWith("ssm_d") ||
			/ln[12]?\.weight$|post_ln\.weight$/.test(name) ? 1 :
			name.endsWith("ssm_a") ? -1 - next(i) : next(i) * 0.1, off + i * 4);
	off = align(off + n * 4);
}
writeFileSync(out, Buffer.concat([head, data]));
console.log(JSON.stringify({ file: out, arch, bytes: head.length + data.length, n_vocab: nVocab,
	n_embd: nEmbd, n_layer: nLayer, n_ff: nFf, n_ctx_train: nCtx }));
