#!/bin/bash
# What a probed GPU allocation call costs: N cuMemAlloc_v2/cuMemFree_v2 pairs
# on the CUDA stand-in library (tests/fake), timed by tests/gpuwork itself,
#  - untraced,
#  - with the floor: empty uprobe + uretprobe programs on both functions
#    (bench/floor), what any uprobe-based tracer pays,
#  - traced by gpumemtrace -p (its uprobes on every CUDA function it knows).
# Minimum of REPS runs (this VM's timings are noisy; the minimum is not). With
# kernel.bpf_stats_enabled, the BPF programs' own ns per call as well.
# Usage: sudo bench/gpuapi.sh [PAIRS] [REPS]   (after: make bench)
set -eu
cd "$(dirname "$0")/.."
pairs=${1:-1000000}
reps=${2:-3}
gw=$PWD/.output/tests/gpuwork
lib=$PWD/.output/tests/fake/libcuda.so.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; sysctl -q kernel.bpf_stats_enabled=0' EXIT

# BPF run time per invocation of programs named $1.. (bpftool, stats on)
bpf_ns() {
	bpftool prog show --json | jq -r --arg a "$1" --arg b "$2" '
		[.[] | select(.name == $a or .name == $b) | select(.run_cnt > 0)] |
		"\(map(.run_time_ns) | add) \(map(.run_cnt) | add)"'
}

# run MODE: prints ns per pair, and for traced/floor the BPF ns per pair
run() {
	local mode=$1 pid line stats=""
	rm -f "$tmp/ready" "$tmp/go" "$tmp/out"
	mkfifo "$tmp/ready" "$tmp/go"
	"$gw" --lib "$lib" --loop "$pairs" --ready "$tmp/ready" --wait "$tmp/go" >"$tmp/out" &
	pid=$!
	read -r _ <"$tmp/ready"
	case $mode in
	floor)
		coproc FL { .output/bench/floor .output/bench/floor.bpf.o "$pid" "$lib" \
			cuMemAlloc_v2 cuMemFree_v2; }
		read -r line <&"${FL[0]}"
		;;
	traced)
		coproc GM { ./gpumemtrace -p "$pid" --json 2>&1 >"$tmp/report.json"; }
		while read -r line <&"${GM[0]}"; do [[ $line == *"tracing pid"* ]] && break; done
		;;
	esac
	echo go >"$tmp/go"
	wait "$pid"
	case $mode in
	floor)
		stats=$(bpf_ns floor_enter floor_return)
		eval "exec ${FL[1]}>&-"
		wait "$FL_PID" || true
		;;
	traced)
		stats=$(bpf_ns gpu_enter gpu_return)
		wait "$GM_PID" || true
		lost=$(jq .lost_events.total "$tmp/report.json")
		calls=$(jq '.processes[0].gpu.calls' "$tmp/report.json")
		echo "traced run: $calls calls in the report, $lost lost" >&2
		;;
	esac
	echo "$(jq .ns_per_pair "$tmp/out") ${stats:-0 0}"
}

sysctl -q kernel.bpf_stats_enabled=1
declare -A best bpf
for mode in untraced floor traced; do
	for _ in $(seq "$reps"); do run $mode; done >"$tmp/$mode"
	best[$mode]=$(sort -n "$tmp/$mode" | awk 'NR == 1 {print $1}')
	bpf[$mode]=$(sort -n "$tmp/$mode" | awk -v n="$pairs" 'NR == 1 && $3 > 0 {
		printf "%.0f (%.0f per program run)", $2 / n, $2 / $3 }')
done

echo "kernel $(uname -r), $(nproc) CPUs; $pairs alloc/free pairs, minimum of $reps runs"
echo
echo "| run | ns per pair | over untraced | BPF ns per pair (bpf_stats) |"
echo "|---|---|---|---|"
for mode in untraced floor traced; do
	awk -v m=$mode -v v="${best[$mode]}" -v u="${best[untraced]}" -v b="${bpf[$mode]:-}" \
		'BEGIN { printf "| %s | %.0f | %+.0f | %s |\n", m, v, v - u, b == "" ? "-" : b }'
done
awk -v f="${best[floor]}" -v t="${best[traced]}" -v u="${best[untraced]}" 'BEGIN {
	printf "\ntraced / floor: %.2fx (the cost over untraced: %.2fx the floor'"'"'s)\n\n",
		t / f, (t - u) / (f - u) }'
