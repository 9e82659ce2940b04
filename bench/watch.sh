#!/bin/bash
# What --watch costs to look for GPU processes in /proc, with N other
# processes on the host (idle `sleep`s): the tracer's CPU time over 60 s,
# less what a 1 s run costs (loading the BPF programs), while the N are all
# young (started just before: each one's mappings read every interval for
# its first 30 s) and once they are old (read once a minute).
# Usage: sudo bench/watch.sh [N...]   (default 1000; after: make all)
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 1000
cpu() { # cpu SECONDS: user+system seconds of a --watch run that long
	/usr/bin/time -f "%U %S" -o "$tmp/time" ./gpumemtrace --watch -q --no-tui -d "$1" >/dev/null
	awk '{ print $1 + $2 }' "$tmp/time"
}
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "kernel $(uname -r), $(nproc) CPUs"
echo
echo "| other processes | start-up | 60 s from their start | 60 s, all old |"
echo "|---|---|---|---|"
for n in "$@"; do
	pids=()
	for ((i = 0; i < n; i++)); do
		sleep 600 &
		pids+=($!)
	done
	young=$(cpu 60)
	old=$(cpu 60)
	start=$(cpu 1)
	awk -v n="$n" -v s="$start" -v y="$young" -v o="$old" 'BEGIN {
		printf "| %d | %.2f s | %.2f s (%.1f%% of a core) | %.2f s (%.2f%% of a core) |\n",
			n, s, y - s, (y - s) / 60 * 100, o - s, (o - s) / 60 * 100 }'
	kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null || true
done
