// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// A test HTTP/1.1 server (Node's http: keep-alive, chunked bodies) for the
// request tests. Every body it sends holds SECRET; it writes its port to
// READY and serves until SIGTERM.
//   SECRET=... node server.mjs READY   (not on the command line: that is recorded)
//   GET /json         a Content-Length body
//   GET /chunked      a chunked body, in four writes
//   GET /sse          an event stream (chunked), ending with data: [DONE]
//   POST /echo        reads the body, answers with its length
//   GET /missing      404
import { createServer } from "node:http";
import { writeFileSync } from "node:fs";

const [ready] = process.argv.slice(2);
const secret = process.env.SECRET;
const server = createServer((req, res) => {
	const body = [];
	req.on("data", (d) => body.push(d));
	req.on("end", () => {
		const path = req.url.split("?")[0];
		if (path === "/json") {
			const b = JSON.stringify({ ok: true, secret });
			res.writeHead(200, { "Content-Type": "application/json",
				"Content-Length": Buffer.byteLength(b) });
			res.end(b);
		} else if (path === "/chunked") {
			res.writeHead(200, { "Content-Type": "text/plain" });
			let n = 0;
			const more = () => {
				if (n++ < 3) {
					res.write(`part ${n} ${secret}\n`);
					setImmediate(more);
				} else {
					res.end(`last ${secret}\n`);
				}
			};
			more();
		} else if (path === "/sse") {
			res.writeHead(200, { "Content-Type": "text/event-stream" });
			let n = 0;
			const tick = () => {
				if (n++ < 3) {
					res.write(`data: {"token": ${n}, "secret": "${secret}"}\n\n`);
					setImmediate(tick);
				} else {
					res.end("data: [DONE]\n\n");
				}
			};
			tick();
		} else if (path === "/echo" && req.method === "POST") {
			const b = `got ${Buffer.concat(body).length} bytes, ${secret}`;
			res.writeHead(201, { "Content-Length": Buffer.byteLength(b) });
			res.end(b);
		} else {
			res.writeHead(404, { "Content-Length": 0 });
			res.end();
		}
	});
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => writeFileSync(ready, `${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
