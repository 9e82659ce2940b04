#!/bin/bash
# What sampled first touches cost (--touch-sample): the workload touches
# 8 x 64 MiB page by page while gpumemtrace -p is attached, at three sample
# sizes (0: none, 1 MiB: the default, 256 KiB), REPS runs each. Per run:
#  - the fault program's mean time over every fault (kernel.bpf_stats_enabled)
#  - the samples taken, and the tracer's own CPU time (/proc: utime + stime)
#  - the trace file's size (record -o)
# The cost of one sample is the difference from 0, divided by the samples.
# Usage: sudo bench/touch.sh [REPS]   (after: make all .output/tests/workload)
set -eu
cd "$(dirname "$0")/.."
reps=${1:-3}
wl=$PWD/.output/tests/workload
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; sysctl -q kernel.bpf_stats_enabled=0' EXIT
sysctl -q kernel.bpf_stats_enabled=1
prog() { # run_cnt run_time_ns of the fault program
	bpftool prog show -j | jq -r '[.[] | select(.name | startswith("tp_page_fault_u"))][0] |
		"\(.run_cnt // 0) \(.run_time_ns // 0)"'
}
run() { # run SIZE: prints "faults bpf_ns samples tracer_cpu_ms file_bytes"
	rm -f "$tmp"/{go,done,hold,gm,t.gmt}
	mkfifo "$tmp/go" "$tmp/done" "$tmp/hold" "$tmp/gm"
	"$wl" --wait "$tmp/go" --out "$tmp/done" --hold "$tmp/hold" --steps 8 --step-mib 64 &
	local w=$! g line a b
	./gpumemtrace --no-tui --json --touch-sample "$1" -o "$tmp/t.gmt" -p "$w" >"$tmp/r.json" \
		2>"$tmp/gm" &
	g=$!
	while IFS= read -r -t 60 line && [[ $line != *"tracing pid"* ]]; do :; done <"$tmp/gm"
	cat "$tmp/gm" >/dev/null &
	a=$(prog)
	echo go >"$tmp/go"
	cat "$tmp/done" >/dev/null
	b=$(prog)
	cpu=$(awk '{ print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"' }' "/proc/$g/stat")
	kill -INT "$g"
	wait "$g" || true
	echo go >"$tmp/hold"
	wait "$w" || true
	echo "$a $b" | awk -v cpu="$cpu" -v s="$(jq .processes[0].mappings.first_touch_samples "$tmp/r.json")" \
		-v f="$(stat -c %s "$tmp/t.gmt")" '{ n = $3 - $1; printf "%d %.0f %d %.0f %d\n", n, ($4 - $2) / n, s, cpu, f }'
}
echo "kernel $(uname -r), $(nproc) CPUs; 8 x 64 MiB touched page by page, gpumemtrace -p"
echo
echo "| --touch-sample | fault program, mean ns a fault | samples | tracer CPU | trace file |"
echo "|---|---|---|---|---|"
for size in 0 1M 256K; do
	for _ in $(seq "$reps"); do
		read -r n ns s cpu f < <(run "$size")
		echo "| $size | $ns (over $n faults) | $s | $cpu ms | $((f / 1024)) KiB |"
	done
done
