// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// gpumemtrace's requests (its --json report) against the truth: what the
// client measured with its own clock and what llama-server said of each
// request (`timings`) and in all (/metrics). Prints a table and a summary
// line; exits 1, after "# " lines saying what was off, when anything is.
//   node compare.mjs REPORT.json CLIENT.json [--no-metrics]
// Requests are paired by path and by the client's start and end against the
// tool's (same machine, both on CLOCK_REALTIME), one to one.
// Tolerances: latency and time to first byte within 10% (or 5 ms: the tool
// counts from the server's first read of the request, the client from its
// send, and on a loaded machine a request can wait that long for a server
// thread); tokens exact; decode rate within 5%.
import { readFileSync } from "node:fs";

const [reportPath, clientPath, ...flags] = process.argv.slice(2);
const report = JSON.parse(readFileSync(reportPath, "utf8"));
const client = JSON.parse(readFileSync(clientPath, "utf8"));
const t0 = report.session.start_realtime_ns / 1e6;
const proc = report.processes[0];
// requests the server read and closed without an answer (llama-server
// closes a kept connection after an event stream) are not the client's
const tool = proc.requests.filter((r) => r.method === "POST" && r.status != null);
const unanswered = proc.requests.filter((r) => r.method === "POST" && r.status == null).length;
const bad = [];
const within = (a, b, rel, abs) => a != null && b != null && Math.abs(a - b) <= Math.max(rel * Math.abs(b), abs);

// one to one: each client request to the tool request of its path nearest in start and end
const used = new Set();
const rows = client.requests.map((c) => {
	let best, cost = Infinity;
	for (const [i, r] of tool.entries()) {
		if (used.has(i) || r.path !== c.path || r.end_s == null) continue;
		const d = Math.abs(t0 + r.start_s * 1000 - c.start_ms) + Math.abs(t0 + r.end_s * 1000 - c.end_ms);
		if (d < cost) [best, cost] = [i, d];
	}
	if (best === undefined || cost > 1000) return { c };
	used.add(best);
	return { c, r: tool[best] };
});

const pct = (a, b) => (a == null || !b ? "-" : `${(((a - b) / b) * 100).toFixed(1)}%`);
const ms = (s) => (s == null ? "-" : (s * 1000).toFixed(1));
const out = [];
let latErr = 0, ttfbErr = 0, rateErr = 0, tokOk = 0;
out.push(["#", "path", "stream", "keep", "latency ms tool/client", "ttfb ms tool/client",
	"prompt tool/server", "gen tool/server", "tok/s tool/server", "err"].join("\t"));
for (const { c, r } of rows) {
	const t = c.timings || {};
	if (!r) {
		bad.push(`request ${c.k} (${c.path}, ${c.stream ? "stream" : "json"}) not found`);
		out.push([c.k, c.path, c.stream, c.keep_alive, "not found"].join("\t"));
		continue;
	}
	if (c.status !== 200) bad.push(`request ${c.k}: the server answered ${c.status}: ${c.error}`);
	if (r.status !== c.status) bad.push(`request ${c.k}: status ${r.status}, the client got ${c.status}`);
	if (!within(r.latency_s * 1000, c.latency_ms, 0.1, 5))
		bad.push(`request ${c.k}: latency ${ms(r.latency_s)} ms, the client measured ${c.latency_ms.toFixed(1)} ms (end: ${r.end})`);
	if (!within(r.ttfb_s * 1000, c.ttfb_ms, 0.1, 5))
		bad.push(`request ${c.k}: time to first byte ${ms(r.ttfb_s)} ms, the client measured ${c.ttfb_ms.toFixed(1)} ms`);
	if (r.event_stream !== c.stream) bad.push(`request ${c.k}: event stream ${r.event_stream}, sent ${c.stream}`);
	if (r.prompt_tokens !== t.prompt_n)
		bad.push(`request ${c.k}: ${r.prompt_tokens} prompt tokens, the server says ${t.prompt_n}`);
	if (r.generated_tokens !== t.predicted_n)
		bad.push(`request ${c.k}: ${r.generated_tokens} generated tokens, the server says ${t.predicted_n}`);
	if (r.prompt_tokens === t.prompt_n && r.generated_tokens === t.predicted_n) tokOk++;
	if (t.predicted_n > 2 && !within(r.decode_tokens_per_s, t.predicted_per_second, 0.05, 0))
		bad.push(`request ${c.k}: ${r.decode_tokens_per_s} tokens/s, the server says ${t.predicted_per_second}`);
	latErr = Math.max(latErr, Math.abs(r.latency_s * 1000 - c.latency_ms) / c.latency_ms);
	ttfbErr = Math.max(ttfbErr, Math.abs(r.ttfb_s * 1000 - c.ttfb_ms) / c.ttfb_ms);
	if (t.predicted_n > 2 && r.decode_tokens_per_s != null)
		rateErr = Math.max(rateErr, Math.abs(r.decode_tokens_per_s - t.predicted_per_second) / t.predicted_per_second);
	out.push([c.k, c.path, c.stream ? "yes" : "no", c.keep_alive ? "yes" : "no",
		`${ms(r.latency_s)}/${c.latency_ms.toFixed(1)}`, `${ms(r.ttfb_s)}/${c.ttfb_ms.toFixed(1)}`,
		`${r.prompt_tokens}/${t.prompt_n}`, `${r.generated_tokens}/${t.predicted_n}`,
		`${r.decode_tokens_per_s?.toFixed(1) ?? "-"}/${t.predicted_per_second?.toFixed(1) ?? "-"}`,
		pct(r.decode_tokens_per_s, t.predicted_per_second)].join("\t"));
}
if (tool.length !== client.requests.length)
	bad.push(`the tool saw ${tool.length} POST requests, the client sent ${client.requests.length}`);

const sum = (f) => tool.reduce((a, r) => a + (f(r) || 0), 0);
const m = client.metrics;
let sums = "";
if (!flags.includes("--no-metrics")) {
	if (!m) bad.push("no /metrics from the server (start it with --metrics)");
	else {
		const checks = [
			["prompt tokens", sum((r) => r.prompt_tokens), m.prompt_tokens_total],
			["generated tokens", sum((r) => r.generated_tokens), m.tokens_predicted_total],
			["decode calls", proc.llama?.decodes - proc.llama?.decodes_before_requests,
				m.n_decode_total],
		];
		for (const [what, got, want] of checks)
			if (got !== want) bad.push(`${what}: ${got} in all, /metrics says ${want}`);
		sums = checks.map(([w, g, t]) => `${w} ${g}/${t}`).join(", ");
	}
}
console.log(out.join("\n"));
console.log(`found ${rows.filter((x) => x.r).length}/${client.requests.length}; tokens exact ${tokOk}/${client.requests.length}; ` +
	`worst latency error ${(latErr * 100).toFixed(1)}%, ttfb ${(ttfbErr * 100).toFixed(1)}%, ` +
	`decode rate ${(rateErr * 100).toFixed(2)}%${sums ? "; sums tool/metrics: " + sums : ""}` +
	`${unanswered ? `; ${unanswered} read and closed unanswered` : ""}`);
for (const b of bad) console.log("# " + b);
process.exit(bad.length ? 1 : 0);
