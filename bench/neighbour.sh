#!/bin/bash
# What gpumemtrace costs the processes it does not trace. Its programs on
# syscall exits, page faults and RSS changes run for every task of the
# host and turn the others away by pid; a syscall tracepoint also sends
# every task's syscalls down the kernel's slower path. Measured on a
# neighbour that is not traced, with no tracer, with the floor (empty
# programs that test the pid, bench/floor, on the syscalls and page faults
# gpumemtrace watches: what any tracepoint-based tracer makes others pay)
# and with gpumemtrace attached (-p) to an idle process, alternating, REPS
# times each (minimum: this VM is noisy, the minimum is not):
#  - syscalls: dd of 1 MiB one byte at a time (a read and a write each)
#  - page faults and mappings: the test workload, 8 x 64 MiB touched page
#    by page and 100,000 mmap/munmap pairs, by its own clock
# Usage: sudo bench/neighbour.sh [REPS]   (after: make bench)
set -eu
cd "$(dirname "$0")/.."
reps=${1:-7}
wl=$PWD/.output/tests/workload
tmp=$(mktemp -d)
idle='' gmt=''
trap '[ -n "$gmt" ] && kill -INT $gmt 2>/dev/null; [ -n "$idle" ] && kill $idle 2>/dev/null;
	wait 2>/dev/null; rm -rf "$tmp"' EXIT

sleep 100000 &
idle=$!

tracer_on() {
	mkfifo "$tmp/err"
	./gpumemtrace -p "$idle" >/dev/null 2>"$tmp/err" &
	gmt=$!
	exec 3<"$tmp/err"
	while IFS= read -r -t 60 line <&3; do
		[[ $line == *"tracing pid"* ]] && break
	done
	cat <&3 >/dev/null &
}
tracer_off() {
	kill -INT "$gmt"
	wait "$gmt" || true
	gmt=
	exec 3<&-
	rm -f "$tmp/err"
}
floor_on() {
	local t line
	for t in read write readv writev recvfrom sendto recvmsg sendmsg close mmap munmap mremap brk; do
		set -- "$@" "tp:syscalls:sys_exit_$t"
	done
	coproc FL { .output/bench/floor .output/bench/floor.bpf.o "$idle" - "$@" \
		tp:exceptions:page_fault_user; }
	read -r -t 30 line <&"${FL[0]}" || true
	[ "$line" = attached ] || { echo "the floor did not attach" >&2; exit 1; }
}
floor_off() {
	eval "exec ${FL[1]}>&-"
	wait "$FL_PID"
}
one() { # prints "dd_ns steps_ns churn_ns pages"
	local t0 t1
	t0=$(date +%s%N)
	dd if=/dev/zero of=/dev/null bs=1 count=1048576 status=none
	t1=$(date +%s%N)
	"$wl" --steps 8 --step-mib 64 --churn 100000 --out "$tmp/o.json" >/dev/null
	echo "$((t1 - t0)) $(jq -r '"\(.steps_ns) \(.churn_ns) \(.pages)"' "$tmp/o.json")"
}

for _ in $(seq "$reps"); do
	one >>"$tmp/untraced"
	floor_on
	one >>"$tmp/floor"
	floor_off
	tracer_on
	one >>"$tmp/beside"
	tracer_off
done

min() { sort -n -k"$2" "$tmp/$1" | awk -v k="$2" 'NR == 1 {print $k}'; }
pages=$(awk '{print $4; exit}' "$tmp/untraced")
echo "kernel $(uname -r), $(nproc) CPUs; minimum of $reps runs each, alternating"
echo
echo "| neighbour, not traced | no tracer | floor | gpumemtrace -p on another process | floor's cost | gpumemtrace's cost |"
echo "|---|---|---|---|---|---|"
row() { # label column count unit
	awk -v l="$1" -v u="$(min untraced "$2")" -v f="$(min floor "$2")" -v t="$(min beside "$2")" \
		-v n="$3" -v w="$4" \
		'BEGIN { printf "| %s | %.1f ms | %.1f ms | %.1f ms | %+.0f ns per %s (%+.1f%%) | %+.0f ns (%+.1f%%) |\n",
		l, u / 1e6, f / 1e6, t / 1e6, (f - u) / n, w, (f - u) * 100 / u, (t - u) / n, (t - u) * 100 / u }'
}
row "dd, 1,048,576 one-byte reads and writes" 1 2097152 syscall
row "$pages page faults" 2 "$pages" fault
row "100,000 mmap+munmap pairs" 3 100000 pair
