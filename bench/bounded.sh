#!/bin/bash
# The tracer's memory against the run's length: N mmap/munmap pairs of
# untouched 4 KiB mappings (the workload's --churn), traced from the start
# and recorded; the tracer's peak RSS (/usr/bin/time), and the replay's
# time and peak RSS for the file. Goal: flat in N.
# Usage: sudo bench/bounded.sh [N...]   (default 1000000 3000000 10000000;
#   after: make all .output/tests/workload)
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 1000000 3000000 10000000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "kernel $(uname -r), $(nproc) CPUs"
echo
echo "| mmap/munmap pairs | traced for | tracer peak RSS | mappings kept / summarized | lost events | file | replay time | replay peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
for n in "$@"; do
	rm -f "$tmp/t.gmt"
	/usr/bin/time -f "%M %e" -o "$tmp/time" ./gpumemtrace -q --json --ringbuf-mb 64 -o "$tmp/t.gmt" -- \
		.output/tests/workload --steps 1 --step-mib 1 --churn "$n" --out /dev/null >"$tmp/r.json"
	read -r rss secs <"$tmp/time"
	/usr/bin/time -f "%M %e" -o "$tmp/rtime" ./gpumemtrace replay "$tmp/t.gmt" >/dev/null
	read -r rrss rsecs <"$tmp/rtime"
	jq -r --arg n "$n" --arg rss "$rss" --arg secs "$secs" --arg rrss "$rrss" --arg rsecs "$rsecs" \
		--arg f "$(stat -c %s "$tmp/t.gmt")" '.processes[0].mappings as $m |
		"| \($n) | \($secs) s | \($rss | tonumber / 1024 | floor) MiB | \($m.made - $m.summarized) / \($m.summarized) | \(.lost_events.total // 0) | \($f | tonumber / 1048576 | floor) MiB | \($rsecs) s | \($rrss | tonumber / 1024 | floor) MiB |"' "$tmp/r.json"
done
