#!/bin/bash
# How long gpumemtrace takes to exit after SIGINT, attached with -p to the
# real llama-server on lavapipe (the Vulkan loader, lavapipe's driver,
# libllama and llama-server all probed): RUNS runs, each the seconds from
# the signal to the report's end in the output, and to the process's exit.
# Usage: sudo bench/exit.sh [RUNS] [-- SERVER ARGS]
#   GMT: the tracer (default ./gpumemtrace); GMT_ARGS: its options;
#   STRACE=DIR: each run under strace -f -T -tt, its log in DIR/RUN.strace
set -eu
cd "$(dirname "$0")/.."
runs=${1:-5}
shift $(($# < 1 ? $# : 1))
[ "${1:-}" = -- ] && shift
gmt=${GMT:-./gpumemtrace}
dir=${LLAMA_DIR:-$(tools/llama-server.sh)}
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
node tools/tiny-gguf.mjs "$tmp/tiny.gguf" >/dev/null
mkfifo "$tmp/log"
GGML_VK_VISIBLE_DEVICES=${GGML_VK_VISIBLE_DEVICES-0} "$dir/llama-server" -m "$tmp/tiny.gguf" \
	--host 127.0.0.1 --port 0 -np 1 -c 2048 --no-warmup -ngl 99 -t 1 "$@" >"$tmp/log" 2>&1 &
srv=$!
while IFS= read -r -t 120 line; do
	[[ $line =~ listening\ on\ http://127\.0\.0\.1:([0-9]+) ]] && port=${BASH_REMATCH[1]} && break
done <"$tmp/log"
cat "$tmp/log" >/dev/null &
for ((r = 1; r <= runs; r++)); do
	rm -f "$tmp/err"
	mkfifo "$tmp/err"
	# shellcheck disable=SC2086 # GMT_ARGS: words
	if [ -n "${STRACE:-}" ]; then
		strace -f --seccomp-bpf -T -tt -e trace=close,bpf,perf_event_open,ioctl,exit_group,write \
			-o "$STRACE/$r.strace" "$gmt" --json ${GMT_ARGS:-} -p "$srv" \
			>"$tmp/out" 2>"$tmp/err" &
	else
		"$gmt" --json ${GMT_ARGS:-} -p "$srv" >"$tmp/out" 2>"$tmp/err" &
	fi
	gmt_pid=$!
	links=0
	while IFS= read -r -t 60 line; do
		[[ $line == *attached* ]] && links=$((links + 1))
		[[ $line == *"tracing pid"* ]] && break
	done <"$tmp/err"
	cat "$tmp/err" >/dev/null &
	# the signal goes to gpumemtrace itself, not to strace
	[ -z "${STRACE:-}" ] || gmt_pid=$(pgrep -P "$gmt_pid" -x gpumemtrace)
	python3 tests/llama/client.py "$port" --requests 1 --tokens 8 >/dev/null
	# the report's end: the output file stops growing once the JSON parses
	t0=$(date +%s.%N)
	kill -INT "$gmt_pid"
	until [ -s "$tmp/out" ] && jq -e . "$tmp/out" >/dev/null 2>&1; do :; done
	t1=$(date +%s.%N)
	if [ -n "${STRACE:-}" ]; then
		tail --pid="$gmt_pid" -f /dev/null
	else
		wait "$gmt_pid" || true
	fi
	t2=$(date +%s.%N)
	printf 'run %d: %d libraries attached, report %.3f s, exit %.3f s after SIGINT\n' \
		"$r" "$links" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$(awk -v a="$t0" -v b="$t2" 'BEGIN { print b - a }')"
done
