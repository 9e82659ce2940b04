#!/bin/bash
# What the sys_exit programs cost every other process's system calls: a C
# loop of N getppid() (a call no program wants: the dispatchers' first
# test turns it away) and N write(-1, ...) (a call the HTTP program wants,
# of a process it does not trace: turned away by the target filter), timed
# untraced and with each tracer attached with -p to a sleeping process;
# then, in a second loop with kernel.bpf_stats_enabled, each of that
# tracer's programs' runs and average ns per run (the wall times are
# taken with the stats off: their clock reads cost each run too).
#   sudo bench/sysexit.sh [N] [GPUMEMTRACE...]   (default 10000000 ./gpumemtrace)
# Turns kernel.bpf_stats_enabled on for the run and back to what it was.
set -eu
cd "$(dirname "$0")/.."
n=${1:-10000000}
shift $(($# < 1 ? $# : 1))
[ $# -gt 0 ] || set -- ./gpumemtrace
T=$(mktemp -d)
was=$(cat /proc/sys/kernel/bpf_stats_enabled)
tgt= gpid=
trap 'echo $was >/proc/sys/kernel/bpf_stats_enabled; [ -n "$gpid" ] && kill -INT $gpid 2>/dev/null;
	[ -n "$tgt" ] && kill $tgt 2>/dev/null; wait 2>/dev/null; rm -rf $T' EXIT
cat >$T/loop.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
	long n = atol(argv[1]), i;
	double t0 = now(), t1, t2;
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	t1 = now();
	for (i = 0; i < n; i++)
		syscall(SYS_write, -1, "", 0);
	t2 = now();
	printf("%.1f %.1f\n", (t1 - t0) * 1e9 / n, (t2 - t1) * 1e9 / n);
	return 0;
}
C
cc -O2 -o $T/loop $T/loop.c
stats() { bpftool prog show -j | jq -r '.[] | "\(.id) \(.name // "?") \(.run_cnt // 0) \(.run_time_ns // 0)"'; }
echo "kernel $(uname -r), $(nproc) CPUs, $n calls each"
echo
echo "| tracer | getppid ns/call | write(-1) ns/call | program: runs, ns/run |"
echo "|---|---|---|---|"
read -r g w < <($T/loop "$n")
echo "| untraced | $g | $w | |"
for gmt in "$@"; do
	sleep 1000 &
	tgt=$!
	"$gmt" -p $tgt --json >$T/out 2>$T/err &
	gpid=$!
	for _ in $(seq 200); do grep -q "tracing pid" $T/err && break; read -r -t 0.05 <> <(:) || true; done
	ids=$(grep -h "^prog_id:" /proc/$gpid/fdinfo/* 2>/dev/null | awk '{ print $2 }' | tr '\n' ' ')
	# the wall time without the stats' clock reads, then the stats
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
	read -r g w < <($T/loop "$n")
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	stats >$T/before
	$T/loop "$n" >/dev/null
	stats >$T/after
	per=$(awk -v ids=" $ids " -v n="$n" 'NR == FNR { c[$1] = $3; t[$1] = $4; next }
		index(ids, " " $1 " ") && $3 - c[$1] > n / 10 {
			printf "%s%s %d, %.1f", sep, $2, $3 - c[$1], ($4 - t[$1]) / ($3 - c[$1]); sep = "; " }' \
		$T/before $T/after)
	echo "| $gmt | $g | $w | $per |"
	kill -INT $gpid
	wait $gpid || true
	kill $tgt
	wait $tgt 2>/dev/null || true
	gpid= tgt=
done
