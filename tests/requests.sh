# HTTP requests and llama.cpp stand-ins (tests/e2e): requests, tokens, verdicts, the demo.
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

# HTTP requests from the server's own syscalls: Node's http server (keep-alive,
# chunked, event streams), concurrent clients, a pipelined pair. Request and
# response bodies hold a secret that must not reach the recording.
test_http_requests() {
	need_root
	command -v node >/dev/null || skip "no node (the machine's Node.js runs the test server)"
	local secret=gmt-secret-$RANDOM$RANDOM port pid r=$T/gmt.out q='.processes[0].requests'
	mkfifo "$T/ready"
	SECRET=$secret node "$ROOT/tests/http/server.mjs" "$T/ready" 2>"$T/server.err" &
	pid=$!
	port=$(await_line "$T/ready" "$pid" "the test server" "$T/server.err") || return 1
	start_tracer record -o "$T/h.gmt" --json -p "$pid" || return 1
	SECRET=$secret node "$ROOT/tests/http/client.mjs" "$port" 4 3 >"$T/client.json" || return 1
	kill -TERM "$pid"
	wait_tracer || return 1
	expect '[ "$(jqr "$q | length" "$r")" = "$(jqr .requests "$T/client.json")" ]' \
		"every request once: $(jqr "$q | length" "$r") of $(jqr .requests "$T/client.json")" ||
		return 1
	expect '[ "$(jq -cS "[$q[] | \"\(.method) \(.path) \(.status)\"] | group_by(.) | map({(.[0]): length}) | add" "$r")" = "$(jq -cS .count "$T/client.json")" ]' \
		"methods, paths and statuses: $(jq -c "[$q[] | \"\(.method) \(.path) \(.status)\"]" "$r")" ||
		return 1
	expect '[ "$(jq "[$q[] | select(.end == \"open\" or .ttfb_s > .latency_s or .end_s < .start_s)] | length" "$r")" = 0 ]' \
		"every request ended, first byte before the end" || return 1
	expect '[ "$(jq "[$q[] | select(.path == \"/sse\" and .event_stream and .end == \"chunked\")] | length" "$r")" = 4 ]' \
		"event streams end at the chunked terminator" || return 1
	expect '[ "$(jq "[$q[] | select(.path == \"/json\" and .end == \"length\")] | length" "$r")" = 5 ]' \
		"Content-Length responses end at their length" || return 1
	expect '[ "$(jqr .processes[0].tls_connections "$r")" = 1 ]' "the TLS connection noticed" ||
		return 1
	# nothing of a body, nor the query string, leaves the kernel
	node "$ROOT/tests/http/undump.mjs" "$T/h.gmt" >"$T/raw" || return 1
	expect '[ "$(wc -c <"$T/raw")" -gt 1000 ]' "the recording decompressed" || return 1
	expect '! grep -qa "$secret" "$T/raw"' "the secret is nowhere in the recording"
}

# Real llama.cpp behind an OpenAI-style front end (tests/e2e/server.mjs):
# gpumemtrace -p on the running server; each request once, with the server's
# own token count exactly and its decode rate within 10%
test_llama_requests() {
	need_root
	need_lavapipe
	need_llama
	local port pid r=$T/gmt.out c=$T/client.json q='.processes[0].requests' i n want got
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" >/dev/null || return 1
	mkfifo "$T/ready"
	GGML_VK_VISIBLE_DEVICES=0 node "$E2E/server.mjs" "$T/tiny.gguf" "$T/ready" 2>"$T/server.err" &
	pid=$!
	port=$(await_line "$T/ready" "$pid" "node-llama-cpp's server" "$T/server.err") || return 1
	start_tracer record -o "$T/e.gmt" --json -p "$pid" || return 1
	expect 'grep -q "attached llama.cpp decode" "$T/gmt.err"' "llama_decode probed" || return 1
	node "$E2E/client.mjs" "$port" 6 8 >"$c" || return 1
	kill -TERM "$pid"
	wait_tracer || return 1
	n=$(jqr '.requests | length' "$c")
	expect '[ "$(jqr "$q | length" "$r")" = "$n" ]' "each request once" || return 1
	for ((i = 0; i < n; i++)); do
		expect '[ "$(jqr "$q[$i].path" "$r")" = "$(jqr ".requests[$i].path" "$c")" ]' "path of $i" ||
			return 1
		want=$(jqr ".requests[$i].completion_tokens" "$c")
		got=$(jqr "$q[$i].generated_tokens" "$r")
		expect '[ "$got" = "$want" ]' "request $i: $got generated tokens, the server says $want" ||
			return 1
		want=$(jqr ".requests[$i].tokens_per_s" "$c")
		got=$(jqr "$q[$i].decode_tokens_per_s" "$r")
		[ "$want" = null ] && continue
		expect 'awk -v a="$got" -v b="$want" "BEGIN { exit !(a > 0.9 * b && a < 1.1 * b) }"' \
			"request $i: $got tokens/s, the server says $want" || return 1
	done
	expect '[ "$(jq "[$q[] | select(.prompt_tokens < 1 or .decodes < 2)] | length" "$r")" = 0 ]' \
		"every request has its prompt and decodes"
}

# The verdicts on real llama.cpp: the front end above with GMT_VARIANT, traced
# with -p after the model is loaded. llama.cpp's own memory log says what
# each context costs: the sum of the buffers it logs between two requests.
llama_variant() { # llama_variant VARIANT REQUESTS: $T/r.json, $T/per_ctx (bytes)
	local pid port
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" >/dev/null || return 1
	mkfifo "$T/ready"
	GGML_VK_VISIBLE_DEVICES=0 GGML_VK_MEMORY_LOGGER=1 GMT_VARIANT=$1 \
		node "$E2E/server.mjs" "$T/tiny.gguf" "$T/ready" 2>"$T/server.err" &
	pid=$!
	port=$(await_line "$T/ready" "$pid" "node-llama-cpp's server" "$T/server.err") || return 1
	start_tracer record -o "$T/v.gmt" --json -p "$pid" || return 1
	node "$E2E/client.mjs" "$port" "$2" 4 >"$T/client.json" || return 1
	kill -TERM "$pid"
	wait_tracer || return 1
	cp "$T/gmt.out" "$T/r.json"
	# what llama.cpp allocated in request 2 (the first pays for warm-up too)
	sed -n '/^=== request 2$/,/^=== request 3$/p' "$T/server.err" |
		grep -oP '^ggml_vulkan memory: Vulkan0: \+\K[0-9.]+ [KMG]?i?B' |
		while read -r v u; do to_bytes "$v" "$u"; done | awk '{ s += $1 } END { print s + 0 }' >"$T/per_ctx"
}

# findings of one kind in one category
finding() { jq -c "[.findings[] | select(.kind == \"$1\" and .category == \"$2\")]" "$T/r.json"; }

test_llama_unchanged_is_steady() {
	need_root
	need_lavapipe
	need_llama
	llama_variant "" 8 || return 1
	expect '[ "$(jq "[.findings[] | select(.kind == \"leak\" or .kind == \"bounded_cache\")] | length" "$T/r.json")" = 0 ]' \
		"no leak or cache: $(jq -c '[.findings[] | [.kind, .category]]' "$T/r.json")" || return 1
	expect '[ "$(jq -r "[.findings[] | select(.category == \"vulkan_device\")][0].kind" "$T/r.json")" != null ]' \
		"Vulkan memory was judged" || return 1
}

test_llama_context_leak_is_a_vulkan_leak() {
	need_root
	need_lavapipe
	need_llama
	local f want
	llama_variant leak 8 || return 1
	f=$(finding leak vulkan_device)
	want=$(cat "$T/per_ctx")
	expect '[ "$(jq length <<<"$f")" = 1 ]' "a Vulkan device leak: $(jq -c '[.findings[] | [.kind, .category]]' "$T/r.json")" || return 1
	expect 'jq -e --argjson w "$want" ".[0].bytes_per_request - \$w | fabs <= 0.01 * \$w" <<<"$f" >/dev/null' \
		"$(jq .[0].bytes_per_request <<<"$f") bytes a request, llama.cpp logged $want a context" || return 1
	expect 'jq -e ".[0].stacks[0].label | test(\"ggml_vk\")" <<<"$f" >/dev/null' \
		"held by llama.cpp's Vulkan buffers: $(jq -c .[0].stacks[0].label <<<"$f")" || return 1
	expect 'jq -e ".[0].stacks[0].stack | length > 0" <<<"$f" >/dev/null' "with its stack" || return 1
	"$GMT" replay "$T/v.gmt" >"$T/r.txt" || return 1
	expect 'grep -q "^  LEAK: Vulkan device memory" "$T/r.txt"' "the text says it first" || return 1
}

test_llama_keep_three_is_a_bounded_cache() {
	need_root
	need_lavapipe
	need_llama
	local f want
	llama_variant keep3 10 || return 1
	f=$(finding bounded_cache vulkan_device)
	want=$(cat "$T/per_ctx")
	expect '[ "$(jq length <<<"$f")" = 1 ]' "a bounded cache: $(jq -c '[.findings[] | [.kind, .category]]' "$T/r.json")" || return 1
	# traced from after the model loaded: the level is what the contexts hold
	expect 'jq -e --argjson w "$want" ".[0].ceiling_bytes - 3 * \$w | fabs <= 0.01 * 3 * \$w" <<<"$f" >/dev/null' \
		"ceiling $(jq .[0].ceiling_bytes <<<"$f"), three contexts are $((3 * want))" || return 1
	expect '[ "$(jq .[0].since_request <<<"$f")" = 3 ]' "full after three requests" || return 1
	expect '[ "$(jq "[.findings[] | select(.kind == \"leak\" and .category == \"vulkan_device\")] | length" "$T/r.json")" = 0 ]' \
		"not a leak" || return 1
}

# `make run`'s demo, run for 90 s: the real llama-server on lavapipe, its
# requests (streams end at their last chunk) and its prompt cache filling to
# --cache-ram, judged a bounded cache or settled growth, said while it runs
# and in the report
test_demo_shows_the_prompt_cache() {
	need_root
	need_lavapipe
	need_llama
	(cd "$ROOT" && DEMO_SECONDS=90 DEMO_OUT="$T/demo.gmt" tools/demo.sh) >"$T/r.txt" 2>"$T/err" ||
		return 1
	# DEMO_KEEP=DIR keeps the recording and the report, to replay a failure
	[ -z "${DEMO_KEEP:-}" ] || cp "$T/demo.gmt" "$T/r.txt" "$DEMO_KEEP/"
	# a cache of fixed steps to its limit, or growth that levelled off. On a
	# busy machine there are fewer requests (in 60 s, 32 to 43 with a CPU hog
	# against 51 to 72 without; in 90 s, 33 to 44 here on 2026-12-07 and 36
	# in CI), and the allocator's creep once the cache is full (+109 KiB a
	# request in CI's run of 36, after +645 KiB) needs more of them to tell
	# from growth: under 45 requests, growth that is slowing down, held by
	# the prompt cache, too early to tell, is right too; never a leak or
	# steady
	local n v
	n=$(grep -oP "^HTTP requests of pid [0-9]+ \(llama-server\): \K[0-9]+" "$T/r.txt" | head -1)
	v=$(sed -n "/^Verdicts/,/^HTTP/p" "$T/r.txt" | tr -s "\n " "  ")
	echo "# $n requests in 90 s"
	expect 'grep -q "^  BOUNDED CACHE: host heap\|^  SETTLED: host heap" "$T/r.txt" ||
		{ [ "${n:-0}" -lt 45 ] && grep -q "GROWING: host heap .* slowing down and may be levelling off\. Too early to tell.* prompt cache" <<<"$v"; }' \
		"the verdict: $(head -c 1200 <<<"$v")" || return 1
	expect 'tr -s "\n " "  " <"$T/r.txt" | grep -q -- "--cache-ram 8 MiB, from the command line"' \
		"it names the limit" || return 1
	expect '[ "$(grep -c " 200 .* chunked " "$T/r.txt")" -ge 4 ]' \
		"streamed requests end at their last chunk: $(grep -A 6 "^HTTP requests" "$T/r.txt")" ||
		return 1
	expect 'grep -q "bounded_cache host_anon\|settled host_anon" "$T/err"' "said while it ran"
}

# servers that peek before they read, read into vectors whose first piece is
# short (the path is read across the pieces, never from the memory after the
# first: a secret lies there), and end connections by close_range and dup2
test_http_peek_vectors_close_range_dup2() {
	need_root
	local secret=gmt-secret-$RANDOM$RANDOM pid q='.processes[0].requests'
	mkfifo "$T/ready" "$T/hold"
	SECRET=$secret python3 "$ROOT/tests/http/edges.py" "$T/ready" "$T/hold" >"$T/out" 2>&1 &
	pid=$!
	await_line "$T/ready" "$pid" "tests/http/edges.py" "$T/out" >/dev/null || return 1
	start_tracer record -o "$T/e.gmt" --json -p "$pid" || return 1
	echo go >"$T/hold"
	wait_tracer || return 1
	expect 'grep -q "served 4" "$T/out"' "the server served: $(cat "$T/out")" || return 1
	expect '[ "$(jq -c "[$q[] | .path]" "$T/gmt.out")" = "[\"/peeked\",\"/vector-path-beyond\",\"/close-range\",\"/dup2\"]" ]' \
		"each request once, the vector's path read across its pieces: $(jq -c "[$q[] | .path]" "$T/gmt.out")" ||
		return 1
	expect '[ "$(jq -c "[$q[] | .end]" "$T/gmt.out")" = "[\"length\",\"length\",\"close\",\"close\"]" ]' \
		"ends (the vector's length from its second piece): $(jq -c "[$q[] | .end]" "$T/gmt.out")" || return 1
	node "$ROOT/tests/http/undump.mjs" "$T/e.gmt" >"$T/raw" || return 1
	expect '! grep -qa "$secret" "$T/raw"' "the secret is nowhere in the recording"
}

# Requests a traced process sends (tests/http/peers.py): to itself over
# IPv4 (its IPv6 socket sees an IPv4-mapped address) and IPv6, from a child
# it forks (traced, -f), and a connection to itself with no request; each
# marked with its sender. A client not traced is marked with none.
test_http_requests_a_traced_process_sends() {
	need_root
	local pid port r=$T/gmt.out q='.processes[] | select(.pid == $p) | .requests'
	mkfifo "$T/ready" "$T/hold"
	python3 "$ROOT/tests/http/peers.py" "$T/ready" "$T/hold" >"$T/sent.json" 2>"$T/err" &
	pid=$!
	port=$(await_line "$T/ready" "$pid" "tests/http/peers.py" "$T/err") || return 1
	start_tracer record -o "$T/p.gmt" --json -f -p "$pid" || return 1
	python3 -c 'import sys, urllib.request as u; u.urlopen(f"http://127.0.0.1:{sys.argv[1]}/outside", timeout=30).read()' \
		"$port" || return 1
	echo go >"$T/hold"
	wait_tracer || return 1
	expect '[ "$(jq -c .self "$T/sent.json")" = "[\"self-v4\",\"self-v6\"]" ] &&
		[ "$(jq ".child | length" "$T/sent.json")" = 1 ]' "the server sent: $(cat "$T/sent.json" "$T/err")" ||
		return 1
	expect '[ "$(jq -c --argjson p "$pid" "[$q[] | [.path, .status, .sent_by]]" "$r")" = "[[\"/outside\",200,null],[\"/self-v4\",200,{\"pid\":$pid,\"comm\":\"python3\",\"itself\":true}],[\"/self-v6\",200,{\"pid\":$pid,\"comm\":\"python3\",\"itself\":true}],[\"/child\",200,{\"pid\":$(jq .child[0].pid "$T/sent.json"),\"comm\":\"python3\",\"itself\":false}]]" ]' \
		"each request with its sender: $(jq -c --argjson p "$pid" "[$q[] | [.path, .status, .sent_by]]" "$r")" ||
		return 1
	# the text report says it, from the recording alone
	"$GMT" replay "$T/p.gmt" >"$T/replay.txt" 2>&1 || return 1
	expect 'grep -q "^HTTP requests of pid $pid (python3): 4 (2 sent by the server itself, 1 by traced pid $(jq .child[0].pid "$T/sent.json") (python3))" "$T/replay.txt"' \
		"the replay's header: $(grep "HTTP requests" "$T/replay.txt")"
}
