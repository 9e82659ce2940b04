#!/bin/sh
# `make run`: the real llama-server (tools/llama-server.sh builds it from the
# llama.cpp of node-llama-cpp's package and puts its prebuilt Vulkan backend
# beside it) on Mesa's lavapipe, one slot, a prompt cache of 8 MiB
# (--cache-ram 8, 32-bit KV so that each entry is about a megabyte), driven by
# a client that sends distinct prompts, half of them streamed, with
# gpumemtrace -p on it. On a terminal the live view shows the requests as they
# come (streams too), and host memory rising by a cache entry a request until
# the cache is full: the verdict is that it levelled off (a bounded cache, or
# growth that settled as malloc keeps some of what dropped entries used),
# against what --cache-ram allows. q (or DEMO_SECONDS, default 60) ends it
# with the report; DEMO_OUT names a trace file to record the run in.
set -eu
cd "$(dirname "$0")/.."
secs=${DEMO_SECONDS:-60}
dir=.output/demo
llama=$(tools/llama-server.sh)
mkdir -p "$dir"
rm -f "$dir/server.log"
node tools/tiny-gguf.mjs "$dir/tiny.gguf" --ctx 4096 >/dev/null
GGML_VK_VISIBLE_DEVICES=0 "$llama/llama-server" -m "$dir/tiny.gguf" --host 127.0.0.1 --port 0 \
	-ngl 99 -np 1 -c 4096 -ctk f32 -ctv f32 --cache-ram 8 -t 1 --metrics >"$dir/server.log" 2>&1 &
server=$!
client=""
trap 'kill $server $client 2>/dev/null || true' EXIT INT TERM
echo "demo: starting llama-server (Vulkan on lavapipe, the CPU's Vulkan driver)..."
port=""
for _ in $(seq 600); do
	port=$(grep -oP 'listening on http://127\.0\.0\.1:\K[0-9]+' "$dir/server.log" || true)
	[ -n "$port" ] && break
	kill -0 $server 2>/dev/null || break
	sleep 0.2
done
if [ -z "$port" ]; then
	echo "demo: llama-server did not start; its log ($dir/server.log) ends:" >&2
	tail -5 "$dir/server.log" >&2
	exit 1
fi
echo "demo: llama-server serves on port $port as pid $server, one slot, --cache-ram 8;"
echo "demo: a client sends distinct prompts one after another, every other one streamed:"
echo "demo: each new prompt saves the last one's state (about 1 MiB) to the prompt cache."
echo "demo: sudo ./gpumemtrace -d $secs -p $server    (q quits early)"
echo
python3 tests/llama/client.py "$port" --requests 200 --tokens 8 --spread 0 --words 40 \
	>"$dir/client.json" 2>/dev/null &
client=$!
./gpumemtrace -d "$secs" -p "$server" ${DEMO_OUT:+-o "$DEMO_OUT"}
