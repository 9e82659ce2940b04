// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Sends N requests to tests/e2e/server.mjs, one at a time, alternating
// /v1/completions and /v1/chat/completions, streaming and not; prints each
// request's path and the server's own figures, and the throughput, as JSON.
//   node client.mjs PORT [N] [MAX_TOKENS] [GAP_MS]
// GAP_MS: a pause between requests (the demo's pace)
const [port, n = "4", maxTokens = "8", gap = "0"] = process.argv.slice(2);
const out = [];
const t0 = performance.now();
for (let i = 0; i < Number(n); i++) {
	if (i && Number(gap))
		await new Promise((r) => setTimeout(r, Number(gap)));
	const chat = i % 2 === 1, stream = i % 4 >= 2;
	const path = chat ? "/v1/chat/completions" : "/v1/completions";
	const body = chat ? { messages: [{ role: "user", content: `question ${i}` }] } : { prompt: `once upon a time ${i}` };
	const res = await fetch(`http://127.0.0.1:${port}${path}`, {
		method: "POST",
		headers: { "Content-Type": "application/json" },
		body: JSON.stringify({ ...body, max_tokens: Number(maxTokens), stream }),
	});
	let usage, timings;
	if (stream) {
		const text = await res.text();
		for (const line of text.split("\n"))
			if (line.startsWith("data: {")) {
				const d = JSON.parse(line.slice(6));
				if (d.usage) ({ usage, timings } = d);
			}
	} else {
		({ usage, timings } = await res.json());
	}
	out.push({ path, stream, status: res.status, completion_tokens: usage.completion_tokens,
		evaluated_tokens: usage.evaluated_tokens, prompt_tokens: usage.prompt_tokens,
		tokens_per_s: timings.predicted_per_second, callbacks: timings.callbacks });
}
const secs = (performance.now() - t0) / 1000;
const tokens = out.reduce((a, r) => a + r.completion_tokens, 0);
console.log(JSON.stringify({ requests: out, seconds: secs, requests_per_s: out.length / secs,
	tokens_per_s: tokens / secs }));
