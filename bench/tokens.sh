#!/bin/bash
# Generation speed of the real llama-server, untraced and with gpumemtrace
# -p attached, in PAIRS alternating runs on one warm server: tokens/s by the
# server's own `timings` (predicted_n / predicted_ms, over every request of
# the run) and by the client's clock (tests/llama/client.py). Prints a table
# and the median of the paired ratios traced / untraced.
# Usage: sudo bench/tokens.sh [PAIRS] [REQUESTS] [TOKENS] [-- SERVER ARGS]
#   LLAMA_DIR: the build to run (default: tools/llama-server.sh's, the CPU
#   backend; on lavapipe add -- -ngl 99 with GGML_VK_VISIBLE_DEVICES=0)
#   GMT: the tracer (default ./gpumemtrace); GMT_ARGS: its options (say,
#   --touch-sample 0); MODEL: a GGUF (default: a tiny
#   random one, tools/tiny-gguf.mjs --embd 256 --layers 4)
set -eu
cd "$(dirname "$0")/.."
pairs=${1:-5} n=${2:-8} tokens=${3:-64}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = -- ] && shift
gmt=${GMT:-./gpumemtrace}
dir=${LLAMA_DIR:-$(tools/llama-server.sh)}
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
model=${MODEL:-$tmp/tiny.gguf}
[ -n "${MODEL:-}" ] || node tools/tiny-gguf.mjs "$tmp/tiny.gguf" --embd 256 --layers 4 >/dev/null
mkfifo "$tmp/log"
"$dir/llama-server" -m "$model" --host 127.0.0.1 --port 0 -np 1 -c 4096 \
	--cache-ram 0 "$@" >"$tmp/log" 2>&1 &
srv=$!
while IFS= read -r -t 120 line; do
	[[ $line =~ listening\ on\ http://127\.0\.0\.1:([0-9]+) ]] && port=${BASH_REMATCH[1]} && break
done <"$tmp/log"
cat "$tmp/log" >/dev/null &
drive() { # drive OUT: one run of the client; prints "server_tok_s client_tok_s"
	python3 tests/llama/client.py "$port" --requests "$n" --tokens "$tokens" --stream no \
		--paths /completion >"$1"
	python3 -c 'import json, sys
r = [x for x in json.load(open(sys.argv[1]))["requests"] if x.get("timings")]
n = sum(x["timings"]["predicted_n"] for x in r)
print(n * 1000 / sum(x["timings"]["predicted_ms"] for x in r), n * 1000 / sum(x["latency_ms"] for x in r))' "$1"
}
drive "$tmp/warm.json" >/dev/null
for i in $(seq "$pairs"); do
	u=$(drive "$tmp/u.json")
	rm -f "$tmp/gm"
	mkfifo "$tmp/gm"
	"$gmt" --no-tui --json ${GMT_ARGS:-} -p "$srv" >"$tmp/r.json" 2>"$tmp/gm" &
	gm=$!
	while IFS= read -r -t 60 line && [[ $line != *"tracing pid"* ]]; do :; done <"$tmp/gm"
	cat "$tmp/gm" >/dev/null &
	t=$(drive "$tmp/t.json")
	kill -INT "$gm"
	wait "$gm" || true
	echo "$u $t $(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["processes"][0]["requests"]))' "$tmp/r.json")"
done >"$tmp/runs"
echo "kernel $(uname -r), $(nproc) CPUs; $pairs pairs of $n requests of $tokens tokens, server $*; tracer ${GMT_ARGS:-}"
echo
echo "| pair | untraced tok/s (server) | traced tok/s (server) | untraced tok/s (client) | traced tok/s (client) | requests in the report |"
echo "|---|---|---|---|---|---|"
awk '{ printf "| %d | %.1f | %.1f | %.1f | %.1f | %d |\n", NR, $1, $3, $2, $4, $5 }' "$tmp/runs"
echo
awk '{ print $3 / $1, $4 / $2 }' "$tmp/runs" | sort -n -k1 | awk '{ a[NR] = $1 } END {
	printf "median traced/untraced, server timings: %.3f\n", a[int((NR + 1) / 2)] }'
awk '{ print $4 / $2 }' "$tmp/runs" | sort -n | awk '{ a[NR] = $1 } END {
	printf "median traced/untraced, client clock: %.3f\n", a[int((NR + 1) / 2)] }'
