# The real llama-server (tools/llama-server.sh builds it from the llama.cpp
# that node-llama-cpp ships), traced with -p while a client drives it. The
# truth is outside the tool: the client's clock, the server's own `timings`
# for each request and its /metrics (tests/llama/compare.mjs), its log.

# the cached build; make test builds it before the tests run
need_llama_server() {
	need_root
	LLAMA_DIR=$("$ROOT/tools/llama-server.sh" 2>"$T/build.err") || {
		echo "# no llama-server build: $(tail -3 "$T/build.err")"
		return 1
	}
}

# start_server ARGS...: llama-server on a port of its own (SERVER_PID, PORT),
# with a tiny random-weight model (TINY_ARGS for tiny-gguf.mjs); its log
# in $T/server.log; returns once it listens
start_server() {
	local line
	# shellcheck disable=SC2086 # words
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" ${TINY_ARGS:-} >/dev/null || return 1
	rm -f "$T/server.fifo"
	mkfifo "$T/server.fifo"
	"$LLAMA_DIR/llama-server" -m "$T/tiny.gguf" --host 127.0.0.1 --port 0 --metrics \
		--no-warmup "$@" >"$T/server.fifo" 2>&1 &
	SERVER_PID=$!
	exec 4<"$T/server.fifo"
	while IFS= read -r -t 120 line <&4; do
		echo "$line" >>"$T/server.log"
		if [[ $line =~ listening\ on\ http://127\.0\.0\.1:([0-9]+) ]]; then
			PORT=${BASH_REMATCH[1]}
			cat <&4 >>"$T/server.log" &
			return 0
		fi
	done
	echo "# llama-server did not start:"
	tail -5 "$T/server.log" | sed 's/^/#   /'
	return 1
}

# stop_server: SIGTERM, and its exit status
stop_server() {
	kill -TERM "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID"
}

# drive ARGS...: the client (tests/llama/client.py) on $PORT, then the server
# stopped and the tracer's report in $T/gmt.out; the client's in $T/client.json
drive() {
	python3 "$ROOT/tests/llama/client.py" "$PORT" "$@" >"$T/client.json" || return 1
	stop_server
	wait_tracer
}

# compare [FLAGS]: the report against the client and the server's figures
compare() {
	local out
	if ! out=$(node "$ROOT/tests/llama/compare.mjs" "$T/gmt.out" "$T/client.json" "$@"); then
		sed 's/^/# /' <<<"$out"
		return 1
	fi
	echo "# $(tail -1 <<<"$out")"
}

# one request at a time, over every endpoint, streaming and not, keep-alive
# and not: each found once, its figures the server's
test_server_requests_one_at_a_time() {
	need_llama_server || return 1
	start_server -np 1 -c 2048 -t 1 || return 1
	start_tracer --json -p "$SERVER_PID" || return 1
	drive --clients 1 --requests 12 --tokens 48 || return 1
	compare
}

# four slots, four clients at once: llama-server batches their tokens into
# one decode; each request still gets its own tokens and rate
test_server_concurrent_slots() {
	need_llama_server || return 1
	start_server -np 4 -c 4096 -t 1 || return 1
	start_tracer --json -p "$SERVER_PID" || return 1
	drive --clients 4 --requests 3 --tokens 32 --spread 4 --words 40 || return 1
	compare || return 1
	expect '[ "$(jq "[.processes[0].requests[] | .sequence] | unique | length" "$T/gmt.out")" -ge 4 ]' \
		"the four slots seen: $(jq -c "[.processes[0].requests[] | .sequence]" "$T/gmt.out")"
}
