#!/bin/sh
# `make run`: the real llama.cpp (node-llama-cpp's Vulkan build, on Mesa's
# lavapipe) behind a small OpenAI-style front end that leaks a context per
# request, driven by a client, with gpumemtrace -p on it. On a terminal the
# live view shows the requests, the Vulkan memory growing with each, and the
# verdict; q (or 60 s) ends it with the report.
#   DEMO_SECONDS (default 60): how long it traces
set -eu
cd "$(dirname "$0")/.."
secs=${DEMO_SECONDS:-60}
dir=.output/demo
mkdir -p "$dir"
rm -f "$dir/ready"
mkfifo "$dir/ready"
node tools/tiny-gguf.mjs "$dir/tiny.gguf" >/dev/null
GGML_VK_VISIBLE_DEVICES=0 GMT_VARIANT=leak node tests/e2e/server.mjs "$dir/tiny.gguf" \
	"$dir/ready" 2>"$dir/server.log" &
server=$!
trap 'kill $server $client 2>/dev/null || true' EXIT INT TERM
client=""
read -r port <"$dir/ready"
echo "demo: llama.cpp (Vulkan on lavapipe) serves on port $port as pid $server;"
echo "demo: it leaks a context (KV cache and compute buffers) on every request."
echo "demo: a client sends 100 requests, one every half second or so."
echo "demo: sudo ./gpumemtrace -d $secs -p $server    (q quits early)"
echo
node tests/e2e/client.mjs "$port" 100 8 500 >"$dir/client.json" &
client=$!
./gpumemtrace -d "$secs" -p "$server"
