#!/bin/bash
# The verdicts on real CUDA (a machine with an NVIDIA GPU; CI has none):
# gpumemtrace -p on tests/cuda/server_variants.py, each variant driven with
# N requests; prints each run's findings.
# Usage: sudo tests/cuda/variants.sh [GPUMEMTRACE] [N]
set -u
cd "$(dirname "$0")/../.."
GMT=$(realpath "${1:-./gpumemtrace}")
N=${2:-12}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT

post() { # post PORT N: N requests, one at a time
	python3 -c 'import sys, urllib.request
for i in range(int(sys.argv[2])):
    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s/" % sys.argv[1], data=b"{}")).read()' "$1" "$2"
}

for v in ${VARIANTS:-unchanged leak keep3 graph graphops}; do
	rm -f "$tmp/port"
	python3 tests/cuda/server_variants.py "$v" "$tmp/port" &
	pid=$!
	while [ ! -s "$tmp/port" ]; do sleep 0.2; done
	# the first request loads cuBLAS and warms the caching allocator
	post "$(cat "$tmp/port")" 1
	"$GMT" record -i 0.05 -o "$tmp/$v.gmt" --json -p "$pid" >"$tmp/$v.json" 2>"$tmp/$v.err" &
	gmt=$!
	until grep -q "tracing pid" "$tmp/$v.err" 2>/dev/null || ! kill -0 $gmt 2>/dev/null; do
		sleep 0.2
	done
	sleep 2 # an NVML sample before the first request
	post "$(cat "$tmp/port")" "$N"
	sleep 2 # and one after the last
	kill -INT "$gmt"
	wait "$gmt"
	kill "$pid"
	wait "$pid" 2>/dev/null
	echo "== $v"
	jq -r '.findings[] | "\(.kind) \(.category) bytes/request=\(.bytes_per_request) ceiling=\(.ceiling_bytes) confidence=\(.confidence)\n    \(.message)"' "$tmp/$v.json"
	cp "$tmp/$v.json" "${OUT:-/tmp}/variant-$v.json" 2>/dev/null
	cp "$tmp/$v.gmt" "${OUT:-/tmp}/variant-$v.gmt" 2>/dev/null
done
