#!/bin/bash
# What a traced program pays for large anonymous mmaps: N pairs of a 1 MiB
# mmap, its first page touched, and its munmap (tests/workload --churn N
# --churn-kib 1024: each mmap is large enough for gpumemtrace to take its
# stack), by the workload's own clock, REPS times each way, alternating:
#  - untraced
#  - floor: empty tracepoint programs (a pid test) on the same syscalls and
#    page faults (bench/floor): what any tracepoint-based tracer pays
#  - traced: gpumemtrace -p (GMT: the binary, default ./gpumemtrace; GMT2: a
#    second one to compare, say an older build)
# Prints the minimum of each (this VM is noisy; the minimum is not) per pair.
# Usage: sudo bench/mmap.sh [N] [REPS]   (after: make bench)
set -eu
cd "$(dirname "$0")/.."
n=${1:-20000} reps=${2:-5}
wl=$PWD/.output/tests/workload
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# run MODE [BINARY]: the workload waits on a fifo until its tracer is in;
# prints ns per pair
run() {
	local line t
	rm -f "$tmp/go"
	mkfifo "$tmp/go"
	"$wl" --steps 0 --churn "$n" --churn-kib 1024 --wait "$tmp/go" --out "$tmp/o.json" &
	pid=$!
	case $1 in
	floor)
		coproc FL { .output/bench/floor .output/bench/floor.bpf.o "$pid" - \
			tp:syscalls:sys_exit_mmap tp:syscalls:sys_exit_munmap \
			tp:exceptions:page_fault_user; }
		read -r -t 30 line <&"${FL[0]}" || true
		[ "$line" = attached ] || { echo "the floor did not attach" >&2; exit 1; }
		;;
	traced)
		rm -f "$tmp/err"
		mkfifo "$tmp/err"
		"$2" --no-tui -p "$pid" >/dev/null 2>"$tmp/err" &
		t=$!
		exec 3<"$tmp/err"
		while IFS= read -r -t 60 line <&3 && [[ $line != *"tracing pid"* ]]; do :; done
		cat <&3 >/dev/null &
		;;
	esac
	echo go >"$tmp/go"
	wait "$pid"
	pid=
	case $1 in
	floor) eval "exec ${FL[1]}>&-"; wait "$FL_PID" ;;
	traced) wait "$t" || true; exec 3<&- ;;
	esac
	jq -r --argjson n "$n" '.churn_ns / $n' "$tmp/o.json"
}

: >"$tmp/runs"
for _ in $(seq "$reps"); do
	u=$(run untraced)
	f=$(run floor)
	t=$(run traced "${GMT:-./gpumemtrace}")
	t2=0
	[ -n "${GMT2:-}" ] && t2=$(run traced "$GMT2")
	echo "$u $f $t $t2" >>"$tmp/runs"
done
min() { sort -g -k"$1" "$tmp/runs" | awk -v k="$1" 'NR == 1 { print $k }'; }
u=$(min 1) f=$(min 2) t=$(min 3)
echo "kernel $(uname -r), $(nproc) CPUs; $n pairs of a 1 MiB mmap, a touch and its munmap, minimum of $reps runs each"
echo
echo "| run | ns per pair | over untraced | / floor |"
echo "|---|---|---|---|"
row() { awk -v l="$1" -v x="$2" -v u="$u" -v f="$f" 'BEGIN {
	printf "| %s | %.0f | %+.0f | %.2fx |\n", l, x, x - u, x / f }'; }
row untraced "$u"
row floor "$f"
row "traced (${GMT:-./gpumemtrace})" "$t"
[ -n "${GMT2:-}" ] && row "traced ($GMT2)" "$(min 4)"
