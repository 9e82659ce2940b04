#!/bin/bash
# The tracer's memory against the run's length, for three kinds of long run
# made by the test workload, traced from the start (-f) and recorded:
#   mmap   N mmap/munmap pairs of untouched 4 KiB mappings (--churn)
#   spawn  N short-lived children, one after another (--spawn)
#   http   N HTTP/1.1 requests over one loopback connection (--http)
# It prints the tracer's peak RSS (/usr/bin/time), what the model kept and
# made counts of, lost events, the file, and the replay's time and peak RSS
# (text report). Goal: the tracer's peak flat in N, replay time linear.
# Usage: sudo bench/bounded.sh [mmap|spawn|http] [N...]
#   (default mmap 1000000 3000000 10000000; after: make all .output/tests/workload)
set -eu
cd "$(dirname "$0")/.."
kind=mmap
case ${1:-} in mmap | spawn | http) kind=$1 && shift ;; esac
[ $# -gt 0 ] || set -- 1000000 3000000 10000000
case $kind in
mmap) arg=--churn ;;
spawn) arg=--spawn ;;
http) arg=--http ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "kernel $(uname -r), $(nproc) CPUs, $kind"
echo
echo "| $kind N | traced for | tracer peak RSS | kept | as counts | lost events | file | replay time | replay peak RSS |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in "$@"; do
	rm -f "$tmp/t.gmt"
	/usr/bin/time -f "%M %e" -o "$tmp/time" ./gpumemtrace -q -f --ringbuf-mb 64 -o "$tmp/t.gmt" -- \
		.output/tests/workload --steps 1 --step-mib 1 "$arg" "$n" --out /dev/null >"$tmp/live.txt"
	read -r rss secs <"$tmp/time"
	/usr/bin/time -f "%M %e" -o "$tmp/rtime" ./gpumemtrace replay "$tmp/t.gmt" >"$tmp/r.txt"
	read -r rrss rsecs <"$tmp/rtime"
	# from the text report: a JSON one of a million requests is itself large
	case $kind in
	mmap) kept=$(grep -o 'largest [0-9]* of [0-9]*' "$tmp/r.txt" | head -1 | awk '{ print $4 }')
		counted=$(grep -o '([0-9]* unmapped ones' "$tmp/r.txt" | head -1 | tr -dc 0-9) ;;
	spawn) kept=$(grep -c '^Process ' "$tmp/r.txt" || true)
		counted=$(grep -o '^  [0-9]* exited processes past' "$tmp/r.txt" | tr -dc 0-9) ;;
	http) kept=$(grep -o 'HTTP requests of pid [0-9]* ([^)]*): [0-9]*' "$tmp/r.txt" | head -1 | awk '{ print $NF }')
		counted=$(grep -o '^  [0-9]* ended requests past' "$tmp/r.txt" | awk '{ print $1 }') ;;
	esac
	# the totals less what became counts
	[ "$kind" = spawn ] || kept=$((${kept:-0} - ${counted:-0}))
	echo "| $n | $secs s | $((rss / 1024)) MiB | ${kept:-0} | ${counted:-0} | $(grep -o '^Lost events: .*' "$tmp/r.txt" | cut -c14- | cut -c1-40) | $(($(stat -c %s "$tmp/t.gmt") / 1048576)) MiB | $rsecs s | $((rrss / 1024)) MiB |"
done
