#!/bin/bash
# What tracing costs the traced program, two ways:
#  1. the workload's own clock around its phases, untraced, traced without
#     first-touch stacks (--touch-sample 0) and traced as by default (a stack
#     for about one in 1 MiB first touched) (minimum of REPS runs: this VM's
#     timings are noisy, the minimum is not):
#     - page faults: 8 x 64 MiB touched page by page (131072 faults)
#     - mmap/munmap: 100000 pairs of untouched 4 KiB mappings
#  2. the kernel's own accounting of each BPF program (kernel.bpf_stats_enabled):
#     invocations and average nanoseconds per invocation during one traced run
# Usage: sudo bench/overhead.sh [REPS]   (after: make all .output/tests/workload)
set -eu
cd "$(dirname "$0")/.."
reps=${1:-9}
wl=$PWD/.output/tests/workload
args=(--steps 8 --step-mib 64 --churn 100000)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; sysctl -q kernel.bpf_stats_enabled=0' EXIT

run() { # untraced|traced|notouch: prints "steps_ns churn_ns pages"
	if [ "$1" = traced ]; then
		./gpumemtrace -q -- "$wl" "${args[@]}" --out "$tmp/o.json" >/dev/null
	elif [ "$1" = notouch ]; then
		./gpumemtrace -q --touch-sample 0 -- "$wl" "${args[@]}" --out "$tmp/o.json" >/dev/null
	else
		"$wl" "${args[@]}" --out "$tmp/o.json"
	fi
	jq -r '"\(.steps_ns) \(.churn_ns) \(.pages)"' "$tmp/o.json"
}

declare -A steps churn
for mode in untraced notouch traced; do
	for _ in $(seq "$reps"); do run $mode; done >"$tmp/$mode"
	steps[$mode]=$(sort -n -k1 "$tmp/$mode" | awk 'NR == 1 {print $1}')
	churn[$mode]=$(sort -n -k2 "$tmp/$mode" | awk 'NR == 1 {print $2}')
	pages=$(awk '{print $3; exit}' "$tmp/$mode")
done

echo "kernel $(uname -r), $(nproc) CPUs; minimum of $reps runs"
echo
echo "| workload | untraced | traced | overhead per operation |"
echo "|---|---|---|---|"
awk -v u="${steps[untraced]}" -v t="${steps[notouch]}" -v n="$pages" 'BEGIN {
	printf "| %d page faults, --touch-sample 0 | %.1f ms | %.1f ms | %+.0f ns per fault (%+.0f%%) |\n",
		n, u / 1e6, t / 1e6, (t - u) / n, (t - u) * 100 / u }'
awk -v u="${steps[untraced]}" -v t="${steps[traced]}" -v n="$pages" 'BEGIN {
	printf "| %d page faults, first-touch stacks (default) | %.1f ms | %.1f ms | %+.0f ns per fault (%+.0f%%) |\n",
		n, u / 1e6, t / 1e6, (t - u) / n, (t - u) * 100 / u }'
awk -v u="${churn[untraced]}" -v t="${churn[traced]}" -v n=100000 'BEGIN {
	printf "| %d mmap+munmap pairs | %.1f ms | %.1f ms | %+.0f ns per pair (%+.0f%%) |\n",
		n, u / 1e6, t / 1e6, (t - u) / n, (t - u) * 100 / u }'

# per-program cost: attach with -p, run the workload once, read the stats
mkfifo "$tmp/go" "$tmp/done" "$tmp/hold"
"$wl" --wait "$tmp/go" --out "$tmp/done" --hold "$tmp/hold" "${args[@]}" &
wl_pid=$!
sysctl -q kernel.bpf_stats_enabled=1
./gpumemtrace -q -p "$wl_pid" >/dev/null 2>"$tmp/err" &
gmt_pid=$!
# the programs are in once they show in bpftool
for _ in $(seq 200); do
	bpftool prog show -j | jq -e '.[] | select(.name == "tp_mm_sys_exit")' >/dev/null && break
	sleep 0.05
done
stats() {
	bpftool prog show -j | jq -c '[.[] | select(.name | test("^(tp_|fexit_|pe_)")) |
		{id, name, run_cnt: (.run_cnt // 0), run_time_ns: (.run_time_ns // 0)}]'
}
before=$(stats)
echo go >"$tmp/go"
cat "$tmp/done" >/dev/null
after=$(stats)
echo
echo "BPF programs during the workload's run (all invocations: the target's, and"
echo "other processes' that the target filter turns away)"
echo
echo "| BPF program | runs | average ns per run |"
echo "|---|---|---|"
jq -rn --argjson a "$before" --argjson b "$after" '$b[] as $p |
	($a[] | select(.id == $p.id)) as $q |
	($p.run_cnt - $q.run_cnt) as $n | select($n > 0) |
	"| \($p.name) | \($n) | \(($p.run_time_ns - $q.run_time_ns) / $n | floor) |"'
echo go >"$tmp/hold"
wait "$gmt_pid"
