// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// A small OpenAI-style HTTP front end on the real llama.cpp (node-llama-cpp's
// Vulkan build), for the end-to-end tests: POST /v1/completions and
// /v1/chat/completions, streaming (text/event-stream) or not. One request is
// served at a time. Each answer carries the server's own figures:
// usage.completion_tokens and timings.predicted_per_second (tokens after the
// first over the time from the first token to the last).
//   GGML_VK_VISIBLE_DEVICES=0 [GMT_VARIANT=leak|keep3] node server.mjs MODEL READY
// READY gets the port once the model is loaded. SIGTERM stops it.
// GMT_VARIANT makes the bugs the verdicts must find: `leak` creates a context
// (KV cache and compute buffers in Vulkan memory) for each request and never
// frees it; `keep3` keeps the last three, a bounded cache. Each request then
// writes "=== request N" to stderr, between llama.cpp's own memory log lines.
import { createServer } from "node:http";
import { writeFileSync } from "node:fs";
import { getLlama, LlamaCompletion, LlamaLogLevel } from "node-llama-cpp";

const [modelPath, ready] = process.argv.slice(2);
const llama = await getLlama({ gpu: "vulkan", build: "never", logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath, gpuLayers: "max" });
const variant = process.env.GMT_VARIANT || "";
const context = await model.createContext({ contextSize: 512, batchSize: 128 });
let sequence = context.getSequence();
let completion = new LlamaCompletion({ contextSequence: sequence });
const kept = [];
let served = 0;

let queue = Promise.resolve();

/* the variants: a context per request, kept for ever or the last three */
async function nextContext() {
	console.error(`=== request ${++served}`);
	if (!variant)
		return;
	const c = await model.createContext({ contextSize: 512, batchSize: 128 });
	kept.push(c);
	if (variant === "keep3" && kept.length > 3)
		await kept.shift().dispose();
	sequence = c.getSequence();
	completion = new LlamaCompletion({ contextSequence: sequence });
}

async function generate(prompt, maxTokens, onToken) {
	let n = 0, first = 0, last = 0;
	await nextContext();
	await sequence.clearHistory();
	const before = sequence.tokenMeter.getState();
	const text = await completion.generateCompletion(prompt, {
		maxTokens,
		temperature: 0,
		onToken(tokens) {
			const now = performance.now();
			if (!n) first = now;
			last = now;
			n += tokens.length;
			onToken?.(model.detokenize(tokens));
		},
	});
	const used = sequence.tokenMeter.diff(before);
	const secs = (last - first) / 1000;
	/* node-llama-cpp's own count of what llama.cpp evaluated and sampled */
	return { text, tokens: used.usedOutputTokens, evaluated: used.usedInputTokens,
		callbacks: n, perSecond: n > 1 && secs > 0 ? (n - 1) / secs : null,
		promptTokens: model.tokenize(prompt).length };
}

function promptOf(path, body) {
	if (path === "/v1/chat/completions")
		return (body.messages || []).map((m) => `${m.role}: ${m.content}`).join("\n") + "\nassistant:";
	return String(body.prompt ?? "");
}

const server = createServer((req, res) => {
	const chunks = [];
	req.on("data", (d) => chunks.push(d));
	req.on("end", () => {
		const path = req.url.split("?")[0];
		let body;
		try {
			body = JSON.parse(Buffer.concat(chunks).toString() || "{}");
		} catch {
			res.writeHead(400, { "Content-Length": 0 });
			return res.end();
		}
		if (req.method !== "POST" || (path !== "/v1/completions" && path !== "/v1/chat/completions")) {
			res.writeHead(404, { "Content-Length": 0 });
			return res.end();
		}
		queue = queue.then(async () => {
			const prompt = promptOf(path, body), max = body.max_tokens ?? 8;
			if (body.stream) {
				res.writeHead(200, { "Content-Type": "text/event-stream" });
				const r = await generate(prompt, max, (t) =>
					res.write(`data: ${JSON.stringify({ choices: [{ text: t }] })}\n\n`));
				res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: r.promptTokens,
					completion_tokens: r.tokens, evaluated_tokens: r.evaluated },
					timings: { predicted_per_second: r.perSecond, callbacks: r.callbacks } })}\n\n`);
				res.end("data: [DONE]\n\n");
			} else {
				const r = await generate(prompt, max);
				const b = JSON.stringify({ choices: [{ text: r.text }],
					usage: { prompt_tokens: r.promptTokens, completion_tokens: r.tokens,
						evaluated_tokens: r.evaluated },
					timings: { predicted_per_second: r.perSecond, callbacks: r.callbacks } });
				res.writeHead(200, { "Content-Type": "application/json",
					"Content-Length": Buffer.byteLength(b) });
				res.end(b);
			}
		}).catch((e) => {
			console.error(e);
			res.destroy();
		});
	});
});
server.listen(0, "127.0.0.1", () => writeFileSync(ready, `${server.address().port}\n`));
process.on("SIGTERM", () => server.close(async () => {
	for (const c of kept)
		await c.dispose();
	await context.dispose();
	await model.dispose();
	await llama.dispose();
	process.exit(0);
}));
