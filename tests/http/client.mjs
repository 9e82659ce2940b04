// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Drives tests/http/server.mjs: ROUNDS rounds of /json, /chunked, /sse,
// POST /echo (a body holding SECRET) and /missing?token=SECRET over
// CONCURRENCY keep-alive connections at once, then two requests pipelined
// on one raw connection, then the start of a TLS handshake. Prints what it
// did as JSON.
//   SECRET=... node client.mjs PORT [ROUNDS] [CONCURRENCY]
import { Agent, request } from "node:http";
import { connect } from "node:net";

const [port, rounds = "4", conc = "3"] = process.argv.slice(2);
const secret = process.env.SECRET;
const agent = new Agent({ keepAlive: true, maxSockets: Number(conc) });
const done = [];

function one(method, path, body) {
	return new Promise((resolve, reject) => {
		const req = request({ host: "127.0.0.1", port, method, path, agent }, (res) => {
			let n = 0;
			res.on("data", (d) => (n += d.length));
			res.on("end", () => {
				done.push({ method, path: path.split("?")[0], status: res.statusCode, bytes: n });
				resolve();
			});
		});
		req.on("error", reject);
		if (body) req.write(body);
		req.end();
	});
}

const jobs = [];
for (let r = 0; r < Number(rounds); r++) {
	jobs.push(() => one("GET", "/json"));
	jobs.push(() => one("GET", "/chunked"));
	jobs.push(() => one("GET", "/sse"));
	jobs.push(() => one("POST", "/echo", JSON.stringify({ prompt: `tell me ${secret}` })));
	jobs.push(() => one("GET", `/missing?token=${secret}`));
}
// CONCURRENCY requests in flight at a time
let next = 0;
async function worker() {
	while (next < jobs.length) await jobs[next++]();
}
await Promise.all(Array.from({ length: Number(conc) }, worker));
agent.destroy();

// two requests in one write on one connection: HTTP/1.1 pipelining
await new Promise((resolve, reject) => {
	const s = connect(Number(port), "127.0.0.1", () => {
		s.write("GET /json HTTP/1.1\r\nHost: x\r\n\r\nGET /missing HTTP/1.1\r\nHost: x\r\n\r\n");
	});
	let got = "";
	s.on("data", (d) => {
		got += d;
		if ((got.match(/HTTP\/1\.1 /g) || []).length === 2 && got.includes(secret)) {
			done.push({ method: "GET", path: "/json", status: 200, pipelined: true });
			done.push({ method: "GET", path: "/missing", status: 404, pipelined: true });
			s.end();
			resolve();
		}
	});
	s.on("error", reject);
});
// a TLS ClientHello's first bytes: the server answers 400 and closes; the
// tracer must say the connection spoke TLS, and count no request
await new Promise((resolve) => {
	const s = connect(Number(port), "127.0.0.1", () => {
		s.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]));
	});
	s.on("data", () => {});
	s.on("close", resolve);
	s.on("error", resolve);
});
const count = {};
for (const d of done) count[`${d.method} ${d.path} ${d.status}`] = (count[`${d.method} ${d.path} ${d.status}`] || 0) + 1;
console.log(JSON.stringify({ requests: done.length, count, tls_connections: 1 }));
