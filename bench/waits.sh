#!/bin/bash
# What each interval's readings cost the tracer: its CPU time per interval
# tracing a process of THREADS idle threads at -i 0.01 (each interval reads
# /proc/PID/status, the cgroup's limit, /proc/PID/stat and io, each
# thread's schedstat, the CPU cgroup's files, PSI, meminfo, vmstat), this
# build against GMT2 (an older build: what the slowdown's readings added).
# Nothing of it runs in the traced process: it pays no more.
# Usage: sudo bench/waits.sh [THREADS] [SECONDS] [RUNS]   (GMT2=path)
set -eu
cd "$(dirname "$0")/.."
threads=${1:-64} secs=${2:-10} runs=${3:-3}
python3 -c 'import threading, sys, time
for _ in range(int(sys.argv[1]) - 1):
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
time.sleep(3600)' "$threads" &
target=$!
trap 'kill $target' EXIT
sleep 1
# the CPU seconds a tracer used, by /usr/bin/time
cpu() {
	/usr/bin/time -f "%U %S" "$1" -q --no-tui -i 0.01 -d "$secs" -p "$target" 2>&1 >/dev/null |
		tail -1 | awk '{ printf "%.3f", $1 + $2 }'
}
echo "| build | threads | intervals | tracer CPU s (runs) | ms an interval (median) |"
echo "|---|---|---|---|---|"
for gmt in ./gpumemtrace ${GMT2:-}; do
	v=()
	for ((r = 0; r < runs; r++)); do v+=("$(cpu "$gmt")"); done
	med=$(printf '%s\n' "${v[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	echo "| $gmt | $threads | $((secs * 100)) | ${v[*]} | $(awk -v c="$med" -v n=$((secs * 100)) 'BEGIN { printf "%.3f", 1000 * c / n }') |"
done
