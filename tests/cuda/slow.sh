#!/bin/bash
# Why it got slow, on a machine with an NVIDIA GPU (CI has none; run by
# hand there, as tests/cuda/llama-server.sh is): llama-server built with
# CUDA from the same source, traced with -p while tests/llama/client.py
# drives it, and judged against the server's own `timings`, /proc and
# NVML:
#   1. a steady server, all layers on the GPU: no slowdown; the GPU's clock
#      and its reasons as NVML reads them; graphs instantiated a request;
#   2. the same with CUDA graphs off (GGML_CUDA_DISABLE_GRAPHS=1): no slowdown;
#   3. partial offload (-ngl 2 of 4 layers): its own rate is its baseline,
#      no slowdown;
#   4. partial offload, its CPU layers' weights (mmap'd) evicted by a memory
#      cgroup's limit lowered below them: the slow requests named, the cause
#      its memory read back, the rates within 10% of the server's.
# Usage: sudo tests/cuda/slow.sh SRC.tar.xz TINY.gguf BIG.gguf [GPUMEMTRACE]
#   (BIG: tools/tiny-gguf.mjs --embd 1024 --ff 3584 --layers 4; the reports
#   go to $OUT, or /tmp without OUT)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export ROOT
src=$(realpath "$1") tiny=$(realpath "$2") big=$(realpath "$3")
GMT=$(realpath "${4:-$ROOT/gpumemtrace}")
work=$(mktemp -d)
pass=0 failed=0
trap 'pkill -x llama-server; rm -rf "$work"' EXIT

[ -n "${LLAMA_DIR:-}" ] || LLAMA_DIR=$("$ROOT/tools/cuda-build.sh" "$src" "$work/build") || exit 1
source "$ROOT/tests/lib.sh"
source "$ROOT/tests/server.sh"
source "$ROOT/tests/process.sh"
source "$ROOT/tests/slow.sh"
need_llama_server() { :; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true

case_() {
	local name=$1 rc
	shift
	[ -z "${CASES:-}" ] || [[ " $CASES " == *" $name "* ]] || return 0
	T=$work/$name
	mkdir -p "$T"
	echo "== $name"
	(cd "$T" && "$@")
	rc=$?
	cp "$T/gmt.out" "${OUT:-/tmp}/$name.json" 2>/dev/null
	pkill -x llama-server
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
		echo "ok $name"
	else
		failed=$((failed + 1))
		echo "not ok $name"
	fi
}

# what a run shows of its GPU and rates, for bench/results.md
summary() {
	echo "# rates (the server's): $(jq -sc '[.[].requests[].timings.predicted_per_second | floor]' "$@")"
	echo "# graphs instantiated: $(jq -c '[.processes[0].gpu.by_kind[]? | select(.kind == "graph-exec") | .allocs]' "$T/gmt.out"), over $(jq '[.processes[0].requests[] | select(.generated_tokens > 0)] | length' "$T/gmt.out") requests"
	echo "# NVML: $(jq -c '[.nvml[] | {name, sm_mhz, sm_min_mhz, sm_max_mhz, clock_reasons_seen, temperature_c, power_w}]' "$T/gmt.out")"
	echo "# verdicts: $(jq -c '[.findings[] | select(.kind != "steady" and .kind != "not_judged") | [.kind, .category, .reason]]' "$T/gmt.out")"
}

steady() {
	cp "$tiny" "$T/tiny.gguf"
	start_server -np 1 -c 2048 -ngl 99 "$@" || return 1
	start_tracer --json -p "$SERVER_PID" || return 1
	phase a --requests 16 --tokens 128 --words 20 || return 1
	stop_server
	wait_tracer
	summary "$T/a.json"
	expect '[ "$(slowdown)" = null ]' "no slowdown: $(jq -r '[.findings[] | select(.kind == "slowdown") | .message][0]' "$T/gmt.out")"
}

graphs_off() {
	GGML_CUDA_DISABLE_GRAPHS=1 steady
}

partial() {
	steady -ngl 2
}

# the host's part of a partly offloaded model read back from its file
partial_evicted() {
	local cg=gmt-slow-$$ f anon lim lift=max
	mem_cgroup "$cg" || return 1
	[ "$CG_LIMIT" = memory.max ] || lift=-1
	cp "$big" "$T/tiny.gguf"
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$T/tiny.gguf"
	printf '#!/bin/sh\necho $$ >"%s/cgroup.procs" && exec "$@"\n' "$CG_DIR" >"$T/in-cgroup"
	chmod +x "$T/in-cgroup"
	SERVER_WRAP=$T/in-cgroup start_server -np 1 -c 512 -ngl 2 || { rm_cgroup; return 1; }
	start_tracer --json -p "$SERVER_PID" || { rm_cgroup; return 1; }
	phase before --requests 6 --words 20 || { rm_cgroup; return 1; }
	# what it holds that no page cache is: the limit leaves its file pages 40 MiB
	if [ "$CG_LIMIT" = memory.max ]; then
		anon=$(awk '$1 == "anon" { print $2 }' "$CG_DIR/memory.stat")
	else
		anon=$(awk '$1 == "rss" { print $2 }' "$CG_DIR/memory.stat")
	fi
	lim=$((anon + 40 * MIB))
	echo "# the cgroup holds $anon bytes of anonymous memory; its limit now $lim"
	echo "$lim" >"$CG_DIR/$CG_LIMIT" || { rm_cgroup; return 1; }
	phase during --requests 4 --words 21 || { rm_cgroup; return 1; }
	echo "$lift" >"$CG_DIR/$CG_LIMIT"
	phase after --requests 4 --words 22
	stop_server
	wait_tracer
	rm_cgroup
	summary "$T"/{before,during,after}.json
	f=$(slowdown)
	echo "# $(num "$f" message)"
	expect '[ "$(num "$f" cause)" = memory ]' "a slowdown, its memory the cause: $(jq -c '[.findings[] | [.kind, .reasons]]' "$T/gmt.out")" ||
		return 1
	check_slow_requests "$f" 8 11 || return 1
	check_rates "$f" "$T/before.json" "$T/after.json" -- "$T/during.json"
}

case_ cuda_steady steady
case_ cuda_graphs_off graphs_off
case_ cuda_partial_offload partial
case_ cuda_partial_offload_evicted partial_evicted
echo "$pass passed, $failed failed"
