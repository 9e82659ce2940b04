# helpers for the tests (tests/run.sh sources this, then every topic file); $ROOT is
# the project, $T a fresh temp dir
GMT=$ROOT/gpumemtrace
WL=$ROOT/.output/tests/workload
MIB=$((1 << 20))
# How far an RSS figure may sit under what a process touched: rss_stat
# events come in steps of 256 KiB, and they read the kernel's per-CPU
# counter without summing it, which lags by up to a batch a CPU
# (max(32, 2 x online CPUs) pages, lib/percpu_counter.c). /proc reads it the same way.
cpus=$(getconf _NPROCESSORS_ONLN)
RSS_SLACK=$((256 * 1024 + cpus * (cpus * 2 > 32 ? cpus * 2 : 32) * $(getconf PAGESIZE)))

# expect 'CONDITION' ['what']: a bash condition; says which one failed.
# A 'what' that starts with @ is expanded only once the condition has
# failed: '@the message: $(cat "$T/err")' shows what the condition wrote.
expect() {
	local what=${2:-}
	if ! eval "$1"; then
		[[ $what != @* ]] || eval "what=\"${what#@}\""
		# every line marked, so that the runner shows a condition of several
		printf '%s\n' "expected: $1${what:+ ($what)}" | sed 's/^/# /'
		# the test fails even where it went on (tests/run.sh reads this)
		[ -z "${T:-}" ] || : >"$T/.expect-failed"
		return 1
	fi
}

skip() {
	echo "SKIP $*"
	exit 77
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (CI runs the tests as root)"
}

# await_line FIFO PID WHAT [LOG]: the first line that PID writes to FIFO,
# on stdout. If PID ends first (it could not start: a missing library, a
# refused namespace), fails at once saying so, with LOG's last lines,
# rather than waiting out the test's time limit on a FIFO nobody opens.
await_line() {
	local line
	_await_watch "$1" "$2"
	IFS= read -r line <"$1"
	_await_end
	[ -n "$line" ] || { _await_failed "$3" "$2" "${4:-}"; return 1; }
	printf '%s\n' "$line"
}

# await_all FIFO DEST PID WHAT [LOG]: all that PID writes to FIFO, into DEST;
# fails at once, as await_line, when PID ends having written nothing
await_all() {
	_await_watch "$1" "$3"
	cat "$1" >"$2"
	_await_end
	[ -s "$2" ] || { _await_failed "$4" "$3" "${5:-}"; return 1; }
}

# a watcher that opens FIFO for writing once PID has ended, so that a
# reader still waiting for PID gets end-of-file. Write-only: the open waits
# for the reader (opened read-write, it closed again before a reader that
# came later opened, and that reader waited out the test's limit)
_await_watch() {
	(
		tail -s 0.1 --pid="$2" -f /dev/null
		exec 9>"$1"
	) >/dev/null 2>&1 &
	_AWAIT=$!
}

_await_end() {
	pkill -P "$_AWAIT" 2>/dev/null
	kill "$_AWAIT" 2>/dev/null
	wait "$_AWAIT" 2>/dev/null
}

_await_failed() { # WHAT PID LOG
	# on stderr: a caller takes stdout for the line
	{
		echo "# $1 (pid $2) ended before it was ready${3:+; $3 ends:}"
		[ -z "$3" ] || tail -8 "$3" 2>/dev/null | sed 's/^/#   /'
	} >&2
}

# start_tracer ARGS...: gpumemtrace in the background (GMT_PID), report on
# $T/gmt.out, messages on $T/gmt.err; returns once it says it is tracing, or
# once it prints a line matching $GMT_READY when that is set
start_tracer() {
	local ready=${GMT_READY:-tracing pid}
	local line
	rm -f "$T/gmt.fifo" "$T/gmt.err"
	mkfifo "$T/gmt.fifo"
	"$GMT" "$@" >"$T/gmt.out" 2>"$T/gmt.fifo" &
	GMT_PID=$!
	exec 3<"$T/gmt.fifo"
	while IFS= read -r -t 60 line <&3; do
		echo "$line" >>"$T/gmt.err"
		if [[ $line == *"$ready"* ]]; then
			cat <&3 >>"$T/gmt.err" &
			return 0
		fi
	done
	echo "# gpumemtrace did not say '$ready': $(cat "$T/gmt.err")"
	return 1
}

# wait_tracer: its exit status; its messages are in $T/gmt.err after this
wait_tracer() {
	local rc
	wait "$GMT_PID"
	rc=$?
	exec 3<&-
	return $rc
}

# start_workload ARGS...: the workload waiting on $T/go (WL_PID); it writes its
# summary to the FIFO $T/done
start_workload() {
	mkfifo "$T/go" "$T/done"
	"$WL" --wait "$T/go" --out "$T/done" "$@" &
	WL_PID=$!
}

# release_workload: let it run and wait for its summary in $T/wl.json
release_workload() {
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
}

jqr() { jq -r "$@"; }

# uptime_now: seconds since boot, less one, as the kernel log stamps lines
uptime_now() { awk '{ print $1 - 1 }' /proc/uptime; }

# fault_matches_kernel FINDING SINCE: the exit verdict FINDING of a SIGSEGV
# against the kernel's own line for it (exception-trace, on by default),
# logged after SINCE (uptime_now): "comm[tid]: segfault at ADDR ip IP ..."
# or, x86's #GP, "traps: comm[tid] general protection fault ip:IP ...". The
# thread, the first frame's address and the fault address (none for #GP)
# must be the kernel's.
fault_matches_kernel() {
	local f=$1 since=$2 tid line ip
	tid=$(jqr .thread_id <<<"$f")
	line=$(dmesg 2>/dev/null | awk -v s="$since" -v t="[$tid]" '
		{ ts = $0; sub(/^\[ */, "", ts); sub(/\].*/, "", ts) }
		ts + 0 >= s + 0 && index($0, t) && /segfault at|general protection fault/' | tail -1)
	echo "# the kernel: ${line:-no fault line for thread $tid}"
	if [ -z "$line" ]; then
		# printk's rate limit (10 in 5 s) can drop it: no figure to judge by
		expect 'jq -e ".thread != null and .thread_id > 0" <<<"$f" >/dev/null' \
			"a named thread: $(jq -c '[.thread_id, .thread]' <<<"$f")"
		return
	fi
	if [[ $line == *"general protection fault"* ]]; then
		ip=$(sed -n 's/.* ip:\([0-9a-f]*\) .*/\1/p' <<<"$line")
		expect '[ "$(jqr .signal_code <<<"$f")" = 128 ] && [ "$(jqr .fault_address <<<"$f")" = null ] &&
			jq -e ".message | test(\"general protection fault\")" <<<"$f" >/dev/null' \
			"a general protection fault, no address: $(jq -c '[.signal_code, .fault_address]' <<<"$f")" ||
			return 1
	else
		ip=$(sed -n 's/.* ip 0*\([0-9a-f]*\) .*/\1/p' <<<"$line")
		expect '[ "$(printf "%x" "$(jqr .fault_address <<<"$f")")" = "$(sed -n "s/.*segfault at \([0-9a-f]*\) .*/\1/p" <<<"$line")" ]' \
			"the fault address: $(jqr .fault_address <<<"$f")" || return 1
	fi
	expect '[ "$(printf "%x" "$(jqr ".stacks[0].stack[0].ip" <<<"$f")")" = "$ip" ]' \
		"the first frame at the kernel's ip $ip: $(jq -c '.stacks[0].stack[0]' <<<"$f")"
}

# the report in $1 against the workload summary in $2 for process index $3:
# RSS growth within 2%, faults within 5%, the mmaps exactly, with stacks.
# $4 "nofaults": the faults are not counted (a kernel without a user page
# fault tracepoint: arm64's; the caller checks that the report says so)
check_growth() {
	local report=$1 wl=$2 i=${3:-0} counted=${4:-faults} bytes pages change faults want got nostack tol
	bytes=$(jqr .bytes "$wl")
	pages=$(jqr .pages "$wl")
	change=$(jqr ".processes[$i].rss.anon.change_bytes" "$report")
	faults=$(jqr ".processes[$i].page_faults.all.total" "$report")
	expect "[ $change != null ]" "anon RSS seen" || return 1
	# within 2%, or RSS_SLACK where that is more (a small workload)
	tol=$((bytes * 2 / 100 > RSS_SLACK ? bytes * 2 / 100 : RSS_SLACK))
	expect "(( ${change#-} >= bytes - tol && change <= bytes + tol ))" \
		"anon RSS change $change within $tol bytes of $bytes allocated" || return 1
	if [ "$counted" = nofaults ]; then
		echo "# page faults not counted here: $(jqr '.probes[] |
			select(.name == "exceptions:page_fault_user") | .reason' "$report")"
	else
		expect "(( faults * 100 >= pages * 95 && faults * 100 <= pages * 105 ))" \
			"$faults faults within 5% of $pages pages touched" || return 1
		if [ "$(jqr ".processes[$i].page_faults.classified" "$report")" = true ]; then
			faults=$(jqr ".processes[$i].page_faults.anon.total" "$report")
			expect "(( faults * 100 >= pages * 95 && faults * 100 <= pages * 105 ))" \
				"$faults anon faults within 5% of $pages pages touched" || return 1
		else
			echo "# fault classes not available on this kernel: $(jqr '.probes[] |
				select(.name == "fexit:handle_mm_fault") | .reason' "$report")"
		fi
	fi
	want=$(jq -c '.addrs | sort' "$wl")
	got=$(jq -c "[.processes[$i].mappings.largest[] | select(.kind == \"anon\" and
		.size_bytes == $(jqr '.bytes / .mmaps' "$wl")) | .addr] | sort" "$report")
	expect '[ "$want" = "$got" ]' "mmaps seen $got, made $want" || return 1
	nostack=$(jq "[.processes[$i].mappings.largest[] | select(.kind == \"anon\" and
		.size_bytes >= $MIB) | select(any(.stack[]?; .symbol == \"grow_step\") | not)]
		| length" "$report")
	expect "[ $nostack = 0 ]" "every step's mmap has a stack naming grow_step" || return 1
}

# the report's gpu.by_kind entries in $1 (process $3) against the ones a test
# program expected in $2: every field it names, exactly
check_gpu_kinds() {
	local report=$1 wl=$2 i=${3:-0} api want got
	api=$(jqr .api "$wl")
	want=$(jq -c '[.by_kind[]] | sort_by(.kind)' "$wl")
	got=$(jq -c --arg api "$api" "[.processes[$i].gpu.by_kind[]? | select(.api == \$api) |
		{kind, allocs, frees, failed, alloc_bytes, live_bytes}] | sort_by(.kind)" "$report")
	expect '[ "$want" = "$got" ]' "by kind: made $want, seen $got"
}

# record_raw_request NODE REQUEST [ARGS...]: tests/http/server.mjs run by
# NODE (a path: its name is the process's comm) with ARGS after its FIFO,
# traced with -p and recorded to $T/h.gmt while one raw HTTP request (a
# Python bytes literal) goes to it; returns once the tracer has ended
record_raw_request() {
	local node=$1 req=$2 port
	shift 2
	mkfifo "$T/ready"
	SECRET=x "$node" "$ROOT/tests/http/server.mjs" "$T/ready" "$@" 2>"$T/server.err" &
	RAW_PID=$!
	trap 'kill $RAW_PID 2>/dev/null' EXIT
	port=$(await_line "$T/ready" "$RAW_PID" "the test server" "$T/server.err") || return 1
	start_tracer record -o "$T/h.gmt" -p "$RAW_PID" || return 1
	python3 - "$port" "$req" <<'PY' || return 1
import ast, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(ast.literal_eval(sys.argv[2]))
s.settimeout(10)
s.recv(4096)
PY
	kill -TERM "$RAW_PID"
	wait_tracer
}
