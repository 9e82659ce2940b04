#!/bin/bash
# Throughput of the real llama.cpp front end (tests/e2e/server.mjs, the tiny
# model on lavapipe), untraced and with gpumemtrace -p attached: requests/s
# and generated tokens/s seen by the client, best of REPS runs each (runs
# alternate, on one warm server).
# Usage: sudo bench/requests.sh [REQUESTS] [MAX_TOKENS] [REPS]   (after: make test)
set -eu
cd "$(dirname "$0")/.."
n=${1:-20}
max=${2:-16}
reps=${3:-3}
tmp=$(mktemp -d)
trap 'kill $srv 2>/dev/null; rm -rf "$tmp"' EXIT
node tools/tiny-gguf.mjs "$tmp/tiny.gguf" >/dev/null
mkfifo "$tmp/ready"
GGML_VK_VISIBLE_DEVICES=0 node tests/e2e/server.mjs "$tmp/tiny.gguf" "$tmp/ready" 2>/dev/null &
srv=$!
read -r port <"$tmp/ready"
node tests/e2e/client.mjs "$port" 4 "$max" >/dev/null # warm up

for i in $(seq "$reps"); do
	node tests/e2e/client.mjs "$port" "$n" "$max" | jq -r '"untraced \(.requests_per_s) \(.tokens_per_s)"'
	coproc GM { exec ./gpumemtrace -p "$srv" --json 2>&1 >"$tmp/report.json"; }
	while read -r line <&"${GM[0]}"; do [[ $line == *"tracing pid"* ]] && break; done
	node tests/e2e/client.mjs "$port" "$n" "$max" | jq -r '"traced \(.requests_per_s) \(.tokens_per_s)"'
	kill -INT "$GM_PID"
	wait "$GM_PID" || true
	seen=$(jq '.processes[0].requests | length' "$tmp/report.json")
	echo "traced run $i: $seen requests in the report" >&2
done >"$tmp/runs"

echo "kernel $(uname -r), $(nproc) CPUs; $n requests of up to $max tokens, one at a time; best of $reps"
echo
echo "| run | requests/s | tokens/s |"
echo "|---|---|---|"
for mode in untraced traced; do
	awk -v m=$mode '$1 == m { if ($2 > r) r = $2; if ($3 > t) t = $3 }
		END { printf "| %s | %.2f | %.1f |\n", m, r, t }' "$tmp/runs"
done
awk '$1 == "untraced" { if ($3 > u) u = $3 } $1 == "traced" { if ($3 > t) t = $3 }
	END { printf "\ntraced / untraced tokens/s: %.3f\n", t / u }' "$tmp/runs"
