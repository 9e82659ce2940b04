#!/bin/bash
# What the tracer itself costs over time on a steadily loaded real
# llama-server: gpumemtrace -p stays attached for MINUTES while a client sends
# one request of TOKENS tokens every GAP ms; once a minute it prints the
# tracer's CPU (utime + stime from /proc), its RSS and peak RSS, and the
# requests and tokens the server answered (the client's count and the
# server's own timings), then the CPU and RSS growth per hour.
# Usage: sudo bench/soak.sh [MINUTES] [GAP_MS] [TOKENS] [-- SERVER ARGS]
#   LLAMA_DIR, MODEL, GMT, GMT_ARGS: as bench/llama-server.sh
set -eu
cd "$(dirname "$0")/.."
minutes=${1:-20} gap=${2:-500} tokens=${3:-64}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = -- ] && shift
gmt=${GMT:-./gpumemtrace}
dir=${LLAMA_DIR:-$(tools/llama-server.sh)}
tmp=$(mktemp -d)
srv= gm= cl=
trap '[ -n "$cl" ] && kill -- -$cl 2>/dev/null; [ -n "$gm" ] && kill -INT $gm 2>/dev/null
	[ -n "$srv" ] && kill $srv 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
model=${MODEL:-$tmp/tiny.gguf}
[ -n "${MODEL:-}" ] || node tools/tiny-gguf.mjs "$tmp/tiny.gguf" --embd 256 --layers 4 >/dev/null
mkfifo "$tmp/log"
"$dir/llama-server" -m "$model" --host 127.0.0.1 --port 0 -np 2 -c 4096 "$@" >"$tmp/log" 2>&1 &
srv=$!
while IFS= read -r -t 120 line; do
	[[ $line =~ listening\ on\ http://127\.0\.0\.1:([0-9]+) ]] && port=${BASH_REMATCH[1]} && break
done <"$tmp/log"
[ -n "${port:-}" ] || { echo "llama-server did not start" >&2; exit 1; }
cat "$tmp/log" >/dev/null &
mkfifo "$tmp/gm"
# shellcheck disable=SC2086 # GMT_ARGS: words
"$gmt" --no-tui --json ${GMT_ARGS:-} -p "$srv" >"$tmp/r.json" 2>"$tmp/gm" &
gm=$!
while IFS= read -r -t 60 line && [[ $line != *"tracing pid"* ]]; do :; done <"$tmp/gm"
cat "$tmp/gm" >/dev/null &
tck=$(getconf CLK_TCK)
# the load: batches of 60 requests, the client's answers kept per batch; in
# its own process group, so that the trap stops the client with the loop
setsid bash -c 'for ((i = 0; ; i++)); do
	python3 tests/llama/client.py "$1" --requests 60 --tokens "$2" --gap "$3" \
		--stream no --paths /completion >"$4/c.$i.json" || exit 1
done' - "$port" "$tokens" "$gap" "$tmp" &
cl=$!
sample() { # minute: tracer CPU ms, RSS KiB, peak KiB; answered requests, tokens
	local cpu rss hwm
	cpu=$(awk -v t="$tck" '{ print int(($14 + $15) * 1000 / t) }' "/proc/$gm/stat")
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$gm/status")
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$gm/status")
	set -- "$tmp"/c.*.json
	python3 -c 'import json, sys
n = t = 0
for f in sys.argv[2:]:
    try:
        r = json.load(open(f))["requests"]
    except (OSError, ValueError):
        continue # the batch still running
    n += len(r)
    t += sum(x["timings"]["predicted_n"] for x in r if x.get("timings"))
print(sys.argv[1], n, t)' "$cpu $rss $hwm" "$@" 2>/dev/null
}
echo "kernel $(uname -r), $(nproc) CPUs; $minutes minutes, a request of $tokens tokens every $gap ms; tracer ${GMT_ARGS:-}"
echo
echo "| minute | tracer CPU s | RSS MiB | peak RSS MiB | requests answered (finished batches) | tokens |"
echo "|---|---|---|---|---|---|"
: >"$tmp/rows"
for m in $(seq 0 "$minutes"); do
	[ "$m" -gt 0 ] && sleep 60 # a sample a minute
	kill -0 "$gm" 2>/dev/null || { echo "the tracer exited" >&2; exit 1; }
	kill -0 "$cl" 2>/dev/null || { echo "the client failed" >&2; exit 1; }
	s=$(sample)
	echo "$m $s" >>"$tmp/rows"
	awk '{ printf "| %d | %.2f | %.1f | %.1f | %d | %d |\n", $1, $2 / 1000, $3 / 1024, $4 / 1024, $5, $6 }' <<<"$m $s"
done
echo
# per hour: the slope from minute 1 (after the start-up symbolization) to the end,
# from minute 0 if that is all there is
awk 'NR == 1 || NR == 2 && !short { c = $2; r = $3; m = $1 } END { h = ($1 - m) / 60
	printf "tracer CPU per hour: %.1f s (%.2f%% of one CPU); RSS change per hour: %+.1f MiB (%.1f to %.1f MiB)\n",
		($2 - c) / 1000 / h, ($2 - c) / 1000 / h / 36, ($3 - r) / 1024 / h, r / 1024, $3 / 1024 }' short=$((minutes < 2)) "$tmp/rows"
