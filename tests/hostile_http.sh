# HTTP traffic that a hostile client controls (issue 32): nothing of a body
# leaves the kernel, whatever it looks like, and requests are counted where
# they really are. The server is tests/http/hostile.py (raw sockets), traced
# with -p; its client is a child it starts once the tracer is attached.

# hostile_serve SCENARIO: the server traced into $T/h.gmt, its report in
# $T/gmt.out (JSON), its output in $T/out
hostile_serve() {
	local pid
	mkfifo "$T/ready" "$T/hold"
	SECRET=$SECRET python3 "$ROOT/tests/http/hostile.py" "$1" "$T/ready" "$T/hold" >"$T/out" 2>&1 &
	pid=$!
	await_line "$T/ready" "$pid" "tests/http/hostile.py" "$T/out" >/dev/null || return 1
	start_tracer record -o "$T/h.gmt" --json -p "$pid" || return 1
	echo go >"$T/hold"
	wait_tracer || return 1
	expect 'grep -q "^served" "$T/out"' "the server served: $(cat "$T/out")"
}

# no byte of $SECRET in the recording, nor in its events, nor in the report
no_secret() {
	node "$ROOT/tests/http/undump.mjs" "$T/h.gmt" >"$T/raw" || return 1
	"$GMT" replay --events "$T/h.gmt" >"$T/events" || return 1
	expect '[ "$(wc -c <"$T/raw")" -gt 1000 ]' "the recording decompressed" || return 1
	expect '! grep -qa "$SECRET" "$T/raw" "$T/events" "$T/gmt.out"' \
		"the secret is out: $(grep -la "$SECRET" "$T/raw" "$T/events" "$T/gmt.out")"
}

Q='.processes[0].requests'

# request bodies whose lines look like request lines: at a body's start, after
# a blank line inside a body, and as a read of its own after 100 Continue.
# Each once counted as a request, its secret as the path.
test_http_body_lines_are_not_requests() {
	need_root
	command -v node >/dev/null || skip "no node (tests/http/undump.mjs reads the recording)"
	SECRET=sk-gmt-$RANDOM$RANDOM
	hostile_serve body || return 1
	expect '[ "$(jq -c "[$Q[] | \"\(.method) \(.path) \(.status)\"]" "$T/gmt.out")" = "[\"POST /a 200\",\"POST /b 200\",\"POST /c 200\"]" ]' \
		"the three requests, nothing from their bodies: $(jq -c "[$Q[] | \"\(.method) \(.path) \(.status)\"]" "$T/gmt.out")" ||
		return 1
	expect '[ "$(jq -c "[$Q[] | .end]" "$T/gmt.out")" = "[\"length\",\"length\",\"length\"]" ]' \
		"each ends at its length (a 100 Continue is no answer): $(jq -c "[$Q[] | .end]" "$T/gmt.out")" ||
		return 1
	no_secret
}

# 50 requests in one write, answered by 50 responses in one: all counted
test_http_pipelined_fifty_in_one_write() {
	need_root
	SECRET=unused
	hostile_serve pipelined || return 1
	expect '[ "$(jq "[$Q[] | select(.status == 200 and .end == \"length\")] | length" "$T/gmt.out")" = 50 ]' \
		"50 requests answered: $(jq -c "[$Q[] | \"\(.path) \(.status) \(.end)\"]" "$T/gmt.out" | head -c 600)" ||
		return 1
	expect '[ "$(jq -r "[$Q[] | .path] | unique | length" "$T/gmt.out")" = 50 ]' \
		"each path once: $(jq -c "[$Q[] | .path]" "$T/gmt.out" | head -c 600)"
}

# a request line sent and read one byte at a time
test_http_request_line_one_byte_per_read() {
	need_root
	SECRET=unused
	hostile_serve bytewise || return 1
	expect '[ "$(jq -c "[$Q[] | \"\(.method) \(.path) \(.status) \(.end)\"]" "$T/gmt.out")" = "[\"GET /bytewise 200 length\"]" ]' \
		"the request seen: $(jq -c "$Q" "$T/gmt.out")"
}

# a status line whose code is not three digits is no status (it once read as
# 60085): the request stays unanswered, ended by the close
test_http_bad_status_line_is_no_status() {
	need_root
	SECRET=unused
	hostile_serve badstatus || return 1
	expect '[ "$(jq -c "[$Q[] | \"\(.path) \(.status) \(.end)\"]" "$T/gmt.out")" = "[\"/badstatus null close\"]" ]' \
		"unanswered: $(jq -c "$Q" "$T/gmt.out")" || return 1
	expect '! grep -q 60085 "$T/gmt.out"' "no status 60085"
}

# a chunk whose data reads "0\r\n\r\n" does not end the response: it ends at
# the real last chunk, with all its bytes
test_http_chunk_data_that_looks_like_the_end() {
	need_root
	local sent
	SECRET=unused
	hostile_serve chunk0 || return 1
	sent=$(sed -n 's/^sent //p' "$T/out")
	expect '[ "$(jq -c "[$Q[] | \"\(.path) \(.status) \(.end) \(.bytes_out)\"]" "$T/gmt.out")" = "[\"/chunk0 200 chunked $sent\"]" ]' \
		"one response of $sent bytes, ended by its last chunk: $(jq -c "$Q" "$T/gmt.out")"
}

# a HEAD request's answer has no body, whatever its Content-Length says: it
# ends with its headers, and the next response on the connection is the
# next request's
test_http_head_answer_has_no_body() {
	need_root
	SECRET=unused
	hostile_serve head || return 1
	expect '[ "$(jq -c "[$Q[] | \"\(.method) \(.path) \(.status) \(.end)\"]" "$T/gmt.out")" = "[\"HEAD /h 200 length\",\"GET /g 200 length\"]" ]' \
		"both answered, each by its own response: $(jq -c "[$Q[] | \"\(.method) \(.path) \(.status) \(.end)\"]" "$T/gmt.out")"
}

# --api-key "tok1 SECRET": each secret option's value is redacted as the
# argument it is, spaces and all, and in its --api-key=VALUE form; for a
# command gpumemtrace starts and for one it attaches to (-p)
test_http_api_key_with_spaces_is_redacted() {
	need_root
	local pid f
	SECRET=gmtsecret$RANDOM
	"$GMT" record -o "$T/h.gmt" --json -- sh -c : sh --api-key "tok1 $SECRET" \
		--hf-token="x $SECRET" -hft "y ${SECRET}y" >"$T/gmt.out" 2>"$T/gmt.err" || return 1
	no_secret || return 1
	expect 'grep -q "sh --api-key \*\** --hf-token=\*\** -hft \*\**\"" "$T/gmt.out"' \
		"the options stay, their values starred: $(grep -o '"cmdline":"[^"]*"' "$T/gmt.out" | head -1)" ||
		return 1
	mkfifo "$T/go"
	sh -c 'read x <"$1"' sh "$T/go" --api-key "tok1 $SECRET" --api-key="a $SECRET" &
	pid=$!
	for f in 1 2 3 4 5 6 7 8 9 10; do
		grep -q api-key "/proc/$pid/cmdline" 2>/dev/null && break
		read -r -t 0.1 <> <(:) || true
	done
	start_tracer record -o "$T/h.gmt" --json -p "$pid" || { kill "$pid"; return 1; }
	echo go >"$T/go"
	wait_tracer || return 1
	no_secret
}
# llama-server's own figures, read from its answers (issue 33), where the
# content that a client steers (a prompt echoed, a model's output, a key of
# its own) spells "timings", "prompt_n" and "index": only the real objects'
# figures count, a stream's last per task, an array's tasks summed, and no
# byte of the content leaves the kernel (tests/http/hostile.py timings)
test_http_timings_not_read_from_strings() {
	need_root
	command -v node >/dev/null || skip "no node (tests/http/undump.mjs reads the recording)"
	local got want
	SECRET=sk-gmt-$RANDOM$RANDOM
	hostile_serve timings || return 1
	got=$(jq -c "[$Q[] | [.tokens_from, .prompt_tokens, .generated_tokens, .cached_tokens,
		(.decode_tokens_per_s // 0 | . * 100 | round / 100)]]" "$T/gmt.out")
	want='[["server",11,7,5,59.7],["server",21,9,null,88.89],[null,0,0,null,0],["server",10,5,null,150]]'
	expect '[ "$got" = "$want" ]' "tokens from the real objects: $got, not $want" || return 1
	expect '[ "$("$GMT" replay --events "$T/h.gmt" | jq -s "[.[] | select(.type == \"timings\")] | length")" = 5 ]' \
		"five objects read (the stream sent two): $("$GMT" replay --events "$T/h.gmt" | jq -c "select(.type == \"timings\")")" ||
		return 1
	no_secret
}


# the framing's fuzzer (tests/fuzz/http.c) over seeds of each kind, a short
# run: the byte-wise, skipping and split parses agree, and request lines
# come only where a message can start
test_http_parse_fuzzer_short_run() {
	local fz=$ROOT/.output/tests/fuzz-http
	# make test builds it: not built is a failure, not a skip
	[ -x "$fz" ] || { echo "# $fz is not built: make .output/tests/fuzz-http"; return 1; }
	mkdir "$T/seeds"
	printf '\0GET /a?q HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 5\r\n\r\nGET /c HTTP/1.1\r\n\r\n' >"$T/seeds/req"
	printf '\0PUT /c HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: 1\r\n\r\nGET /d HTTP/1.1\r\n\r\n' >"$T/seeds/chunked"
	printf '\1HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n0\r\n\r\n\r\n0\r\n\r\nHTTP/1.1 204 x\r\n\r\n' >"$T/seeds/resp"
	printf '\16\1\2\3\4\5\6\7GET /bytewise HTTP/1.1\r\ncontent-length:3\r\n\r\nabcGET /x HTTP/1.1\r\n\r\n' >"$T/seeds/split"
	expect '"$fz" -runs=50000 -max_len=4096 -seed=1 "$T/seeds" >"$T/fuzz.log" 2>&1' \
		'@the fuzzer failed: $(grep -a "http fuzz\|ERROR\|SUMMARY" "$T/fuzz.log" | head -5)'
}

# the timings scanner against any content a client can steer into an
# answer (tests/fuzz/timings.c): escaped as a string, a key or both, before
# a real timings object, only that object is read
test_timings_scan_fuzzer_short_run() {
	local fz=$ROOT/.output/tests/fuzz-timings
	[ -x "$fz" ] || { echo "# $fz is not built: make .output/tests/fuzz-timings"; return 1; }
	# what it found before (an escape-blind scanner's), each input once
	expect '(cd "$T" && "$fz" "$ROOT"/tests/fuzz/regressions/timings-* >"$T/found.log" 2>&1)' \
		'@the inputs found before: $(grep -a "timings fuzz\|ERROR\|SUMMARY" "$T/found.log" | head -5)' ||
		return 1
	mkdir "$T/seeds"
	printf '\7\5"timings":{"prompt_n":1}' >"$T/seeds/key"
	printf '\7\5a\\"b\\\\"index":9,' >"$T/seeds/escapes"
	expect '"$fz" -runs=100000 -max_len=512 -seed=1 "$T/seeds" >"$T/fuzz.log" 2>&1' \
		'@the fuzzer failed: $(grep -a "timings fuzz\|ERROR\|SUMMARY" "$T/fuzz.log" | head -5)'
}
