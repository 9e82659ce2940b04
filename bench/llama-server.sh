#!/bin/bash
# What tracing costs the real llama-server, in PAIRS rounds on one warm
# server, each untraced, then with the floor (empty uprobe programs where
# gpumemtrace once probed llama.cpp each token: what any per-token uprobe
# tracer pays), then with gpumemtrace -p attached, then untraced again (the
# control: how far two untraced runs differ): the decode
# rate by the server's own `timings` (predicted_n / predicted_ms, over every
# request of the run) and by the client's clock (tests/llama/client.py), the
# prompt rate (prompt_n / prompt_ms). Prints a table, the median of the
# paired ratios traced / untraced with their range, and what each BPF
# program cost during the traced runs (kernel.bpf_stats_enabled), per
# generated token.
# Usage: sudo bench/llama-server.sh [PAIRS] [REQUESTS] [TOKENS] [-- SERVER ARGS]
#   (after make bench: the floor is .output/bench/floor)
#   LLAMA_DIR: the build to run (default: tools/llama-server.sh's, the CPU
#   backend; on lavapipe add -- -ngl 99 with GGML_VK_VISIBLE_DEVICES=0)
#   GMT: the tracer (default ./gpumemtrace); GMT_ARGS: its options (say,
#   --touch-sample 0); MODEL: a GGUF (default: a tiny
#   random one, tools/tiny-gguf.mjs --embd 256 --layers 4)
set -eu
cd "$(dirname "$0")/.."
pairs=${1:-10} n=${2:-8} tokens=${3:-64}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = -- ] && shift
gmt=${GMT:-./gpumemtrace}
dir=${LLAMA_DIR:-$(tools/llama-server.sh)}
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"
	sysctl -q kernel.bpf_stats_enabled=0 || true' EXIT
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
drive() { # drive OUT: one run of the client; prints "server_tok_s client_tok_s prompt_tok_s tokens"
	python3 tests/llama/client.py "$port" --requests "$n" --tokens "$tokens" --stream no \
		--paths /completion >"$1"
	python3 -c 'import json, sys
r = [x for x in json.load(open(sys.argv[1]))["requests"] if x.get("timings")]
n = sum(x["timings"]["predicted_n"] for x in r)
p = sum(x["timings"]["prompt_n"] for x in r)
pms = sum(x["timings"]["prompt_ms"] for x in r)
print(n * 1000 / sum(x["timings"]["predicted_ms"] for x in r), n * 1000 / sum(x["latency_ms"] for x in r),
      p * 1000 / pms if pms else 0, n)' "$1"
}
stats() { # every BPF program: id name runs ns (none without bpftool and jq)
	command -v bpftool >/dev/null && command -v jq >/dev/null || return 0
	bpftool prog show -j | jq -r '.[] | "\(.id) \(.name // "?") \(.run_cnt // 0) \(.run_time_ns // 0)"'
}
# the floor: empty programs where gpumemtrace probes llama.cpp (entry and
# return of llama_decode and llama_encode, entry of llama_synchronize)
lib=$(readlink -f "$dir/libllama.so")
floor_on() {
	coproc FL { .output/bench/floor .output/bench/floor.bpf.o "$srv" "$lib" \
		llama_decode llama_encode llama_synchronize:entry; }
	read -r -t 30 line <&"${FL[0]}" || true
	[ "$line" = attached ] || { echo "the floor did not attach: $line" >&2; exit 1; }
}
floor_off() {
	eval "exec ${FL[1]}>&-"
	wait "$FL_PID"
}
sysctl -q kernel.bpf_stats_enabled=1 || true
drive "$tmp/warm.json" >/dev/null
: >"$tmp/progs"
: >"$tmp/runs"
for _ in $(seq "$pairs"); do
	u=$(drive "$tmp/u.json")
	floor_on
	f=$(drive "$tmp/f.json")
	floor_off
	stats >"$tmp/others" # the programs that are not the tracer's
	rm -f "$tmp/gm"
	mkfifo "$tmp/gm"
	# shellcheck disable=SC2086 # GMT_ARGS: words
	"$gmt" --no-tui --json ${GMT_ARGS:-} -p "$srv" >"$tmp/r.json" 2>"$tmp/gm" &
	gm=$!
	while IFS= read -r -t 60 line && [[ $line != *"tracing pid"* ]]; do :; done <"$tmp/gm"
	cat "$tmp/gm" >/dev/null &
	stats >"$tmp/before"
	c0=$(awk '{ print $14 + $15 }' "/proc/$gm/stat")
	d0=$(date +%s%N)
	t=$(drive "$tmp/t.json")
	d1=$(date +%s%N)
	c1=$(awk '{ print $14 + $15 }' "/proc/$gm/stat")
	rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$gm/status")
	stats >"$tmp/after"
	# runs and time of each program during this traced drive
	[ -s "$tmp/after" ] && awk -v s="$(((d1 - d0) / 1000000))" 'FILENAME == ARGV[1] { other[$1] = 1; next }
		FILENAME == ARGV[2] { r[$1] = $3; ns[$1] = $4; next }
		!($1 in other) { print $2, $3 - r[$1], $4 - ns[$1], s }' \
		"$tmp/others" "$tmp/before" "$tmp/after" >>"$tmp/progs"
	# from SIGINT to the tracer's exit, the report written
	x0=$(date +%s%N)
	kill -INT "$gm"
	wait "$gm" || true
	x1=$(date +%s%N)
	# the control: untraced again, after the tracer has gone
	u2=$(drive "$tmp/u2.json")
	# u: 1-4, t: 5-8, requests in the report 9, f: 10-13, tracer CPU ms and peak RSS KiB 14-15,
	# SIGINT to exit ms 16, u2: 17-20
	echo "$u $t $(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["processes"][0]["requests"]))' "$tmp/r.json") $f $(((c1 - c0) * 1000 / $(getconf CLK_TCK))) $rss $(((x1 - x0) / 1000000)) $u2" |
		tee -a "$tmp/runs" | sed 's/^/round: /' >&2 # on stderr as it goes: a run cut short keeps its rounds
done
echo "kernel $(uname -r), $(nproc) CPUs; $pairs rounds of $n requests of $tokens tokens, server $*; tracer ${GMT_ARGS:-}"
echo
echo "| round | untraced tok/s (server) | floor tok/s | traced tok/s | untraced again | untraced tok/s (client) | floor | traced | untraced prompt tok/s | floor | traced | requests in the report | tracer CPU ms | tracer peak RSS MiB | SIGINT to exit ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
awk '{ printf "| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %d | %d | %.1f | %d |\n",
	NR, $1, $10, $5, $17, $2, $11, $6, $3, $12, $7, $9, $14, $15 / 1024, $16 }' "$tmp/runs"
echo
ratio() { # label: median, lowest and highest of the paired ratios on stdin
	sort -n | awk -v l="$1" '{ a[NR] = $1 } END {
		printf "%s: median %.3f (%.3f to %.3f)\n", l, a[int((NR + 1) / 2)], a[1], a[NR] }'
}
awk '{ print $5 / $1 }' "$tmp/runs" | ratio "traced/untraced decode rate, server timings"
awk '{ print $17 / $1 }' "$tmp/runs" | ratio "untraced again/untraced decode rate (the control)"
awk '{ print $10 / $1 }' "$tmp/runs" | ratio "floor/untraced decode rate, server timings"
awk '{ print $5 / $10 }' "$tmp/runs" | ratio "traced/floor decode rate, server timings"
awk '{ print $6 / $2 }' "$tmp/runs" | ratio "traced/untraced decode rate, client clock"
awk '$3 > 0 && $7 > 0 { print $7 / $3 }' "$tmp/runs" | ratio "traced/untraced prompt rate, server timings"
awk '{ print 1e6 / $5 - 1e6 / $1 }' "$tmp/runs" | ratio "us added per generated token, traced"
awk '{ print 1e6 / $10 - 1e6 / $1 }' "$tmp/runs" | ratio "us added per generated token, floor"
awk '{ print $14 / $9 }' "$tmp/runs" | ratio "tracer CPU ms per request"
awk '{ print $14 * 1000 / $8 }' "$tmp/runs" | ratio "tracer CPU ms per 1,000 generated tokens"
awk '{ print $16 }' "$tmp/runs" | ratio "ms from SIGINT to the tracer's exit"
echo
[ -s "$tmp/progs" ] || exit 0
echo "BPF programs during the traced runs ($(awk '{ s += $8 } END { print s }' "$tmp/runs") generated tokens; all"
echo "invocations, the server's and other processes' that the pid filter turns away)"
echo
echo "| BPF program | runs | runs per second | runs per generated token | average ns per run | ns per generated token |"
echo "|---|---|---|---|---|---|"
awk -v tok="$(awk '{ s += $8 } END { print s }' "$tmp/runs")" '{ r[$1] += $2; ns[$1] += $3; ms[$1] += $4 }
	END { for (p in r) if (r[p]) printf "| %s | %d | %.0f | %.3f | %.0f | %.1f |\n", p, r[p],
		r[p] * 1000 / ms[p], r[p] / tok, ns[p] / r[p], ns[p] / tok }' \
	"$tmp/progs" | sort -t'|' -k7 -gr
