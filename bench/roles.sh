#!/bin/bash
# What share of the real llama-server's live GPU memory its stacks explain:
# the server started by gpumemtrace (stacks unwound by the call frame
# information at start-up), four requests, then the tracer stopped with the
# server still up (everything still live), and tests/llama/roles_share.py on
# its report.
# Usage: sudo bench/roles.sh [-- SERVER ARGS]   (default: -ngl 99 on lavapipe)
#   LLAMA_DIR: the build (default tools/llama-server.sh's); GMT: the tracer;
#   MODEL: a GGUF (default: tools/tiny-gguf.mjs --embd 256 --layers 4)
set -eu
cd "$(dirname "$0")/.."
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || set -- -ngl 99
gmt=${GMT:-./gpumemtrace}
dir=${LLAMA_DIR:-$(tools/llama-server.sh)}
export GGML_VK_VISIBLE_DEVICES=${GGML_VK_VISIBLE_DEVICES:-0}
tmp=$(mktemp -d)
trap 'pkill -x llama-server; wait 2>/dev/null; rm -rf "$tmp"' EXIT
model=${MODEL:-$tmp/tiny.gguf}
[ -n "${MODEL:-}" ] || node tools/tiny-gguf.mjs "$tmp/tiny.gguf" --embd 256 --layers 4 >/dev/null
mkfifo "$tmp/err"
"$gmt" --no-tui --json -- "$dir/llama-server" -m "$model" --host 127.0.0.1 --port 0 \
	-np 1 -c 4096 "$@" >"$tmp/r.json" 2>"$tmp/err" &
gm=$!
while IFS= read -r -t 120 line; do
	[[ $line =~ listening\ on\ http://127\.0\.0\.1:([0-9]+) ]] && port=${BASH_REMATCH[1]} && break
done <"$tmp/err"
cat "$tmp/err" >/dev/null &
python3 tests/llama/client.py "$port" --requests 4 --tokens 16 >/dev/null
kill -INT "$gm"
wait "$gm"
python3 tests/llama/roles_share.py "$tmp/r.json"
[ -z "${KEEP:-}" ] || cp "$tmp/r.json" "$KEEP"
