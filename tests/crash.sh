# Crashes: the fatal signal, its thread, its stack and the request in flight.
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

# A crash, explained: the workload's HTTP thread dereferences NULL while it
# serves its third request (--crash). The exit verdict names the signal, the
# thread that faulted (the tid the workload logged), where (its stack, by
# call frame information), the address, and the request in flight; the
# shell's wait status is the truth for the signal. Spawned and with -p.
test_crash_names_the_thread_its_stack_and_the_request() {
	need_root
	local mode f rc tid
	for mode in spawn attach; do
		rm -f "$T/go" "$T/wl.err"
		if [ $mode = spawn ]; then
			"$GMT" -q --json -i 0.2 -- "$WL" --steps 2 --step-mib 1 --http 3 --crash \
				>"$T/gmt.out" 2>"$T/wl.err"
			expect '[ -s "$T/gmt.out" ]' "a report: $(tail -3 "$T/wl.err")" || return 1
		else
			mkfifo "$T/go"
			"$WL" --wait "$T/go" --steps 2 --step-mib 1 --http 3 --crash 2>"$T/wl.err" &
			WL_PID=$!
			start_tracer --json -i 0.2 -p "$WL_PID" || return 1
			echo go >"$T/go"
			wait "$WL_PID"
			rc=$?
			wait_tracer || return 1
			expect '[ "$rc" = 139 ]' "the shell saw SIGSEGV: status $rc" || return 1
		fi
		tid=$(grep -oP 'http_server tid \K[0-9]+' "$T/wl.err")
		f=$(jq -c '[.findings[] | select(.kind == "exit")][0]' "$T/gmt.out")
		echo "# $mode: $(jqr .message <<<"$f")"
		expect '[ "$(jqr .signal <<<"$f")" = 11 ] && [ -n "$tid" ] && [ "$(jqr .thread_id <<<"$f")" = "$tid" ] &&
			[ "$(jqr .thread <<<"$f")" = workload ]' \
			"$mode: SIGSEGV in the thread the workload named ($tid): $(jq -c '[.signal, .thread_id, .thread]' <<<"$f")" ||
			return 1
		# SEGV_MAPERR at address 0, in crash_here called by http_server
		expect '[ "$(jqr .signal_code <<<"$f")" = 1 ] && [ "$(jqr .fault_address <<<"$f")" = 0 ] &&
			[ "$(jq -c "[.stacks[0].stack[0:2][].symbol]" <<<"$f")" = "[\"crash_here\",\"http_server\"]" ]' \
			"$mode: where: $(jq -c '[.signal_code, .fault_address, [.stacks[0].stack[]?.symbol]]' <<<"$f")" ||
			return 1
		expect '[ "$(jqr .requests_in_flight <<<"$f")" = 1 ] && [ "$(jqr .request_in_flight <<<"$f")" = 3 ] &&
			[ "$(jq -c ".processes[0].requests[2] | [.method, .path]" "$T/gmt.out")" = "[\"GET\",\"/health\"]" ]' \
			"$mode: the request in flight: $(jq -c '[.requests_in_flight, .request_in_flight]' <<<"$f")" ||
			return 1
	done
}

# crash_attached MODE: the workload's HTTP thread crashes as MODE says
# (--crash-heap, --crash-gp) under -p; sets rc (the shell's wait status),
# tid (the thread the workload logged), since (uptime_now before it ran) and
# f (the exit verdict), and prints the verdict's message
crash_attached() {
	rm -f "$T/go" "$T/wl.err"
	mkfifo "$T/go"
	"$WL" --wait "$T/go" --steps 2 --step-mib 1 --http 3 "$1" 2>"$T/wl.err" &
	WL_PID=$!
	start_tracer --json -i 0.2 -p "$WL_PID" || return 1
	since=$(uptime_now)
	echo go >"$T/go"
	wait "$WL_PID"
	rc=$?
	wait_tracer || return 1
	tid=$(grep -oP 'http_server tid \K[0-9]+' "$T/wl.err")
	f=$(jq -c '[.findings[] | select(.kind == "exit")][0]' "$T/gmt.out")
	echo "# $(jqr .message <<<"$f")"
}

# A corrupted heap, found by glibc's tcache check inlined in malloc itself
# (--crash-heap: the HTTP thread overwrites a freed chunk's link): the abort
# is named, and the corrupted heap, with abort right above malloc in the
# stack (no _int_malloc between). glibc's line on the workload's stderr and
# the shell's wait status are the truth.
test_crash_heap_check_in_malloc_is_named() {
	need_root
	local f rc tid since
	crash_attached --crash-heap || return 1
	expect '[ "$rc" = 134 ] && grep -q "malloc(): unaligned tcache chunk" "$T/wl.err"' \
		"glibc aborted: status $rc, $(tail -1 "$T/wl.err")" || return 1
	expect '[ "$(jqr .signal <<<"$f")" = 6 ] && [ "$(jqr .thread_id <<<"$f")" = "$tid" ]' \
		"SIGABRT in the thread the workload named ($tid): $(jq -c '[.signal, .thread_id]' <<<"$f")" ||
		return 1
	expect 'jq -e "(.reasons | index(\"crash_heap\")) != null and
		([.stacks[0].stack[].symbol] | index(\"heap_here\")) != null" <<<"$f" >/dev/null' \
		"the corrupted heap, in heap_here: $(jq -c '[.reasons, [.stacks[0].stack[].symbol]]' <<<"$f")"
}

# A pointer no process can have (--crash-gp: a non-canonical address): on
# x86-64 the CPU raises a general protection fault and the kernel gives
# SIGSEGV with no address (SI_KERNEL). The verdict must not invent one
# ("at address 0x0"); the kernel's own line is the truth for the thread and
# the instruction, the shell's wait status for the signal.
test_crash_general_protection_fault_names_no_address() {
	need_root
	local f rc tid since
	crash_attached --crash-gp || return 1
	expect '[ "$rc" = 139 ] && [ "$(jqr .signal <<<"$f")" = 11 ] && [ "$(jqr .thread_id <<<"$f")" = "$tid" ]' \
		"SIGSEGV (status $rc) in the thread the workload named ($tid): $(jq -c '[.signal, .thread_id]' <<<"$f")" ||
		return 1
	if [ "$(uname -m)" = x86_64 ]; then
		expect '[ "$(jqr .signal_code <<<"$f")" = 128 ] && ! jq -e ".message | test(\"at address\")" <<<"$f" >/dev/null' \
			"no address made up: $(jq -c '[.signal_code, .fault_address]' <<<"$f")" || return 1
	fi
	fault_matches_kernel "$f" "$since"
}
