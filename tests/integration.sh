# Integration tests, run by tests/run.sh: each test_* function runs in its own
# shell, in the temp dir $T, with helpers from tests/lib.sh. Return 0 to pass.

test_binary_is_static() {
	expect '[[ $(file "$GMT") == *"statically linked"* ]]' "file says statically linked"
}

# classic tracepoints need tracefs: gpumemtrace mounts it when nobody has,
# and uses debugfs's tracing where debugfs is mounted (as Debian 12's
# systemd does) and tracefs is not. Both in a mount namespace of the test's
# own, where neither is mounted at first, so the host's mounts do not decide
# the case and are left alone.
test_tracefs_mounted_when_missing() {
	need_root
	GMT=$GMT T=$T unshare --mount --propagation private bash -c '
		umount -l /sys/kernel/tracing 2>/dev/null
		umount -l /sys/kernel/debug 2>/dev/null
		if mountpoint -q /sys/kernel/tracing || mountpoint -q /sys/kernel/debug; then
			echo "# tracefs or debugfs is still mounted in a namespace of our own"
			exit 1
		fi
		"$GMT" -q --json --duration 0.3 -- sleep 5 >"$T/none.json" ||
			{ echo "# gpumemtrace failed with neither mounted"; exit 1; }
		mountpoint -q /sys/kernel/tracing && echo mounted >"$T/none.mount"
		umount -l /sys/kernel/tracing 2>/dev/null
		mount -t debugfs debugfs /sys/kernel/debug || { echo "# cannot mount debugfs"; exit 1; }
		"$GMT" -q --json --duration 0.3 -- sleep 5 >"$T/debugfs.json" ||
			{ echo "# gpumemtrace failed with debugfs mounted"; exit 1; }
		mountpoint -q /sys/kernel/tracing && echo mounted >"$T/debugfs.mount"
		exit 0' || return 1
	local mm='.probes[] | select(.name == "syscalls:mmap/munmap/mremap/brk") | .status'
	expect '[ -e "$T/none.mount" ]' "with neither mounted, tracefs mounted at /sys/kernel/tracing" ||
		return 1
	expect '[ "$(jqr "$mm" "$T/none.json")" = attached ]' "the syscall tracepoints attached" || return 1
	expect '[ ! -e "$T/debugfs.mount" ]' "with debugfs mounted, nothing mounted beside it" || return 1
	expect '[ "$(jqr "$mm" "$T/debugfs.json")" = attached ]' \
		"the syscall tracepoints attached through /sys/kernel/debug/tracing"
}

# -- CMD: traced from its first instruction
test_spawn_sees_growth_faults_and_mmaps() {
	need_root
	mkfifo "$T/done"
	"$GMT" -q --json -i 0.2 -- "$WL" --steps 8 --step-mib 16 --out "$T/done" >"$T/r.json" &
	cat "$T/done" >"$T/wl.json"
	wait $! || return 1
	check_growth "$T/r.json" "$T/wl.json" || return 1
	expect '[ "$(jqr .session.end_reason "$T/r.json")" = target_exit ]' || return 1
	expect '[ "$(jqr ".processes[0].exit_code" "$T/r.json")" = 0 ]' || return 1
	expect '[ "$(jqr ".processes[0].comm" "$T/r.json")" = workload ]' "comm after exec"
}

# -p PID: attach to a running process, report when it exits
test_attach_pid_until_exit() {
	need_root
	start_workload --steps 8 --step-mib 16
	start_tracer --json -i 0.2 -p "$WL_PID" || return 1
	release_workload
	wait_tracer || return 1
	check_growth "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .session.end_reason "$T/gmt.out")" = target_exit ]' || return 1
	expect '[ "$(jqr ".processes[0].exited" "$T/gmt.out")" = true ]' || return 1
	expect '[ "$(jqr ".processes[0].proc_status.samples" "$T/gmt.out")" -ge 1 ]' \
		"a /proc sample" || return 1
	expect '[ "$(jqr ".processes[0].pid" "$T/gmt.out")" = "$WL_PID" ]'
}

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
			jq -e ".message | test(\"serving request 3 \\\\(GET /health\\\\)\")" <<<"$f" >/dev/null' \
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

# -p PID, and the pid comes back as another process as soon as the target
# exits (tests/pidat: clone3 with set_tid): the tracer ends with the target,
# and the new process's 64 MiB is in none of its figures
test_attach_pid_reused_after_exit() {
	need_root
	local peak
	start_workload --steps 2 --step-mib 8 --hold "$T/hold1"
	mkfifo "$T/hold1" "$T/hold2"
	start_tracer --json -i 0.1 -p "$WL_PID" || return 1
	release_workload
	"$ROOT/.output/tests/pidat" "$WL_PID" "$WL" --steps 4 --step-mib 16 --hold "$T/hold2" \
		--out /dev/null &
	local pidat=$!
	echo go >"$T/hold1"
	wait_tracer || { echo go >"$T/hold2"; return 1; }
	echo go >"$T/hold2"
	wait "$pidat"
	expect '[ $? = 0 ]' "the pid was taken again by the second workload" || return 1
	expect '[ "$(jqr .session.end_reason "$T/gmt.out")" = target_exit ]' || return 1
	expect '[ "$(jqr ".processes | length" "$T/gmt.out")" = 1 ]' "the target alone" || return 1
	peak=$(jqr ".processes[0].rss.anon.peak_bytes" "$T/gmt.out")
	expect '[ "$peak" -ge $((16 * MIB - RSS_SLACK)) ] && [ "$peak" -lt $((40 * MIB)) ]' \
		"the target's anonymous peak is its own 16 MiB, not the next one's 64: $peak"
}

# Under -f a child's pid is taken again by a later child (tests/pidat): two
# processes in the report, each with its own memory, live and replayed
test_followed_child_pid_reused() {
	need_root
	local f=$T/t.gmt out a b
	"$GMT" -f --json -o "$f" -- bash -c '"$1" --steps 2 --step-mib 32 --out /dev/null & p=$!
		wait $p; "$2" $p "$1" --steps 2 --step-mib 4 --out /dev/null' - "$WL" \
		"$ROOT/.output/tests/pidat" >"$T/r.json" 2>"$T/err" || { tail -3 "$T/err"; return 1; }
	"$GMT" replay --json "$f" >"$T/replay.json" 2>/dev/null || return 1
	for out in "$T/r.json" "$T/replay.json"; do
		a=$(jq -c '[.processes[] | select(.comm == "workload")] | map(.pid) | unique' "$out")
		expect '[ "$(jq length <<<"$a")" = 1 ]' "one pid for both workloads: $a" || return 1
		a=$(jq '[.processes[] | select(.comm == "workload")][0].rss.anon.peak_bytes' "$out")
		b=$(jq '[.processes[] | select(.comm == "workload")][1].rss.anon.peak_bytes' "$out")
		expect '[ "$a" -ge $((60 * MIB)) ] && [ "$a" -lt $((80 * MIB)) ] &&
			[ "$b" -ge $((8 * MIB - RSS_SLACK)) ] && [ "$b" -lt $((24 * MIB)) ]' \
			"the first holds its 64 MiB and the second its 8 ($out): $a and $b" || return 1
		expect '[ "$(jq "[.processes[] | select(.comm == \"workload\" and .exited)] | length" "$out")" = 2 ]' \
			"both exited ($out)" || return 1
	done
}

# A job runner's day in a few seconds: 6,000 short-lived children under -f.
# Past MODEL_PROCS_MAX (4,096) kept, exited ones become a count; every
# process the workload started is either kept or counted, and pid reuse by
# chance is counted too
test_many_processes_kept_as_counts() {
	need_root
	"$GMT" -q -f --json -o "$T/t.gmt" -- "$WL" --steps 1 --step-mib 1 --spawn 6000 --out /dev/null \
		>"$T/r.json" 2>"$T/err" || { tail -3 "$T/err"; return 1; }
	local kept summarized lost
	kept=$(jq '.processes | length' "$T/r.json")
	summarized=$(jqr .bounded.processes_summarized "$T/r.json")
	lost=$(jqr .lost_events.proc "$T/r.json")
	expect '[ "$lost" = 0 ]' "no process events lost: $lost" || return 1
	expect '[ "$summarized" -ge 1000 ] && [ "$kept" -le 5120 ]' \
		"at most 5,120 kept: $kept kept, $summarized counted" || return 1
	expect '[ $((kept + summarized)) = 6001 ]' \
		"the workload and its 6,000 children, each kept or counted: $kept + $summarized" || return 1
	expect '[ "$(jqr ".processes[0].comm" "$T/r.json")" = workload ] &&
		[ "$(jqr ".processes[0].pid" "$T/r.json")" = "$(jqr .session.target_pid "$T/r.json")" ]' \
		"the target first and kept" || return 1
	# BPF's per-child slots are freed at exit: the last children are seen as
	# well as the first (each touches 64 KiB)
	expect '[ "$(jq "[.processes[-100:][] | select(.rss.anon.peak_bytes >= 65536)] | length" \
		"$T/r.json")" -ge 90 ]' "the last 100 children's memory seen: $(jq -c \
		"[.processes[-5:][] | .rss.anon]" "$T/r.json")" || return 1
	"$GMT" replay "$T/t.gmt" >"$T/replay.txt" 2>/dev/null
	expect 'grep -q "^  $summarized exited processes past the 4096 kept" "$T/replay.txt"' \
		"the text report says so: $(grep -A3 '^Kept as' "$T/replay.txt")"
}

# the text report made live and the one replayed from its recording are
# byte-identical, also for a user without root (the sudo user owns the file)
test_record_replay_identical() {
	need_root
	local f=$T/run.gmt
	chmod 755 "$T" # so that nobody can reach the file
	SUDO_UID=65534 SUDO_GID=65534 "$GMT" record -q -o "$f" -i 0.1 -- "$WL" --steps 6 \
		--step-mib 8 --step-ms 300 --out /dev/null >"$T/live.txt" || return 1
	expect '[ "$(stat -c %a "$f")" = 600 ]' "trace file mode 0600" || return 1
	expect '[ "$(stat -c %u "$f")" = 65534 ]' "owned by the sudo user" || return 1
	setpriv --reuid=65534 --regid=65534 --clear-groups "$GMT" replay "$f" >"$T/replay.txt" \
		2>"$T/replay.err" || { cat "$T/replay.err"; return 1; }
	expect 'cmp -s "$T/live.txt" "$T/replay.txt"' "identical text reports" || {
		diff "$T/live.txt" "$T/replay.txt" | head -20 | sed 's/^/# /'
		return 1
	}
	expect 'grep -q "Mappings made during the run" "$T/live.txt"' || return 1
	expect '[ "$(grep -c "grow_step" "$T/live.txt")" -ge 6 ]' "stacks in the text report"
}

test_record_replay_identical_json() {
	need_root
	local f=$T/run.gmt
	"$GMT" record -q --json -o "$f" -i 0.1 -- "$WL" --steps 4 --step-mib 4 --out /dev/null \
		>"$T/live.json" || return 1
	"$GMT" replay --json "$f" >"$T/replay.json" || return 1
	expect 'cmp -s "$T/live.json" "$T/replay.json"' "identical JSON reports"
}

test_output_never_follows_a_symlink() {
	need_root
	echo "precious" >"$T/target"
	ln -s "$T/target" "$T/link.gmt"
	local out
	out=$("$GMT" record -q -o "$T/link.gmt" -- true 2>&1)
	expect "[ $? = 1 ]" "refused" || return 1
	expect '[[ $out == *"cannot create"*"symbolic links"* ]]' "$out" || return 1
	expect '[ "$(cat "$T/target")" = precious ]' "the link's target untouched"
}

test_output_file_mode_0600_over_existing() {
	need_root
	local f=$T/old.gmt
	echo "old" >"$f"
	chmod 0644 "$f"
	"$GMT" record -q -o "$f" --duration 0.2 -- sleep 5 >/dev/null || return 1
	expect '[ "$(stat -c %a "$f")" = 600 ]' "0600 even over a 0644 file"
}

# Heap growth by the code that first touched it, in a running process built
# as release builds are (no frame pointers), from malloc's heap (no mmap
# names it): sampled faults, unwound by the call frame information, stand
# for what the workload says it filled, and reach main; whether the program
# fills its memory or the kernel does (read(2): faults in kernel mode)
test_first_touches_name_the_heap_growth() {
	need_root
	local f got want fill
	# filled by the program, then by the kernel (read(2) from /dev/zero):
	# a fault in kernel mode on user memory, sampled with the syscall's stack
	for fill in "" --fill-read; do
		rm -f "$T/go" "$T/done" "$T/hold"
		mkfifo "$T/go" "$T/done" "$T/hold"
		# shellcheck disable=SC2086 # empty or one flag
		"$ROOT/.output/tests/workload-nofp" --wait "$T/go" --out "$T/done" --hold "$T/hold" \
			--steps 40 --step-mib 0 --step-ms 20 --entries 32 --entry-kib 96 $fill &
		WL_PID=$!
		start_tracer --json -i 0.1 -p "$WL_PID" || return 1
		release_workload
		kill -INT "$GMT_PID"
		wait_tracer || return 1
		echo go >"$T/hold"
		f=$(jq -c '[.findings[] | select(.category == "host_anon")][0]' "$T/gmt.out")
		want=$(jqr .entry_bytes "$T/wl.json")
		got=$(jq '[.stacks[] | select(.sampled and (.stack | map(.symbol) | index("save_entry"))) | .bytes] | add // 0' <<<"$f")
		echo "# ${fill:-memset}: $(jq -c '[.kind, [.stacks[] | [.bytes, .label]]]' <<<"$f")"
		expect '(( got >= want * 3 / 4 && got <= want * 5 / 4 ))' \
			"${fill:-memset}: first touched in save_entry: $got; the workload filled $want" ||
			return 1
		expect 'jq -e ".stacks[0].stack | map(.symbol) | index(\"main\")" <<<"$f" >/dev/null' \
			"unwound to main: $(jq -c '[.stacks[0].stack[].symbol]' <<<"$f")" || return 1
	done
}

# What leaves the kernel of a stack at any time: a process attached with -p
# runs below 8 KiB of stack holding a request-like secret; the slices the
# tracer received keep only addresses in the stack and in code, the secret
# nowhere, and still unwind to main
test_stack_slices_keep_no_data() {
	need_root
	mkfifo "$T/go" "$T/done" "$T/hold"
	"$ROOT/.output/tests/workload-nofp" --wait "$T/go" --out "$T/done" --hold "$T/hold" \
		--steps 30 --step-mib 0 --step-ms 20 --entries 32 --entry-kib 96 --secret &
	WL_PID=$!
	GMT_TEST_USTACK_DUMP=$T/slices start_tracer --json -i 0.1 -p "$WL_PID" || return 1
	release_workload
	cp "/proc/$WL_PID/maps" "$T/maps"
	kill -INT "$GMT_PID"
	wait_tracer || return 1
	echo go >"$T/hold"
	expect 'python3 "$ROOT/tests/slices.py" "$T/slices" "$T/maps" SECRET-REQUEST >"$T/check"' \
		'@$(cat "$T/check")' || return 1
	echo "# $(head -1 "$T/check")"
	expect 'jq -e "[.findings[] | select(.category == \"host_anon\")][0].stacks[0].stack |
		map(.symbol) | index(\"main\")" "$T/gmt.out" >/dev/null' "unwound to main, from what was kept"
}

# SIGINT: stop, flush, print the report, exit 0; the file replays
test_sigint_flushes_and_replays() {
	need_root
	mkfifo "$T/hold"
	start_workload --steps 4 --step-mib 8 --hold "$T/hold"
	start_tracer record -o "$T/int.gmt" --json -p "$WL_PID" || return 1
	release_workload
	kill -INT "$GMT_PID"
	wait_tracer || { echo "# exit status $?"; return 1; }
	echo go >"$T/hold"
	expect '[ "$(jqr .session.end_reason "$T/gmt.out")" = signal ]' || return 1
	check_growth "$T/gmt.out" "$T/wl.json" || return 1
	"$GMT" replay --json "$T/int.gmt" >"$T/replay.json" || return 1
	expect 'cmp -s "$T/gmt.out" "$T/replay.json"' "replay identical after SIGINT"
}

test_sigterm_stops_with_report() {
	need_root
	sleep 30 &
	local victim=$!
	start_tracer -p "$victim" || return 1
	kill -TERM "$GMT_PID"
	wait_tracer || return 1
	kill "$victim"
	expect 'grep -q "until interrupted" "$T/gmt.out"' "text report after SIGTERM"
}

# a recording of several blocks, cut at random offsets: still replays
test_truncated_file_replays() {
	need_root
	local f=$T/full.gmt size cut i n full rc
	"$GMT" record -q --json -o "$f" -i 0.05 -- "$WL" --steps 10 --step-mib 4 --step-ms 250 \
		--out /dev/null >/dev/null || return 1
	full=$("$GMT" replay --json "$f" | jqr .events.total)
	size=$(stat -c %s "$f")
	expect "[ $(grep -c GMTB "$f" | head -1) -ge 1 ]" || return 1
	RANDOM=42
	for i in 1 2 3 4 5 6; do
		cut=$(((RANDOM * 32768 + RANDOM) % (size - 200) + 200))
		head -c "$cut" "$f" >"$T/cut.gmt"
		"$GMT" replay --json "$T/cut.gmt" >"$T/cut.json" 2>"$T/cut.err"
		rc=$?
		if [ $rc -ne 0 ]; then
			# only a cut before the first whole block may fail, and it says so:
			# inside the header (its length varies with the command line), or
			# after it with no whole block
			expect 'grep -q "holds no events\|header is cut short: no events to replay" "$T/cut.err"' \
				"cut at $cut: $(cat "$T/cut.err")" || return 1
			continue
		fi
		n=$(jqr .events.total "$T/cut.json")
		expect "[ $n -le $full ]" "cut at $cut replays at most the full file" || return 1
		expect "[ $n -lt $full ] || [ $cut -eq $size ]" || return 1
		expect 'grep -q "truncated\|ends inside" "$T/cut.err" || grep -q "without an end" \
			<("$GMT" replay "$T/cut.gmt" 2>/dev/null)' "cut at $cut is reported" || return 1
	done
}

# one flipped byte in the second block: that block is reported and skipped
test_corrupt_block_skipped() {
	need_root
	local f=$T/full.gmt offs second full n b
	"$GMT" record -q --json -o "$f" -i 0.05 -- "$WL" --steps 10 --step-mib 4 --step-ms 250 \
		--out /dev/null >/dev/null || return 1
	full=$("$GMT" replay --json "$f" | jqr .events.total)
	mapfile -t offs < <(grep -obUaP 'GMTB' "$f" | cut -d: -f1)
	expect "[ ${#offs[@]} -ge 3 ]" "at least 3 blocks in a 2.5 s recording" || return 1
	second=$((offs[1] + 30))
	# flip every bit of one byte: writing a constant can leave it as it was
	b=$(od -An -tu1 -j "$second" -N1 "$f")
	printf "\\x$(printf %02x $((b ^ 0xff)))" | dd of="$f" bs=1 seek="$second" conv=notrunc \
		status=none
	"$GMT" replay --json "$f" >"$T/r.json" 2>"$T/r.err" || return 1
	expect "grep -q 'block at offset ${offs[1]} fails its CRC check' '$T/r.err'" \
		"$(cat "$T/r.err")" || return 1
	expect '[ "$(jq ".trace_file_damage | length" "$T/r.json")" -ge 1 ]' "damage in the report" ||
		return 1
	n=$(jqr .events.total "$T/r.json")
	expect "[ $n -gt 0 ] && [ $n -lt $full ]" "the rest replays ($n of $full events)"
}

test_replay_rejects_what_is_not_a_trace() {
	local out rc
	out=$("$GMT" replay /etc/passwd 2>&1)
	rc=$?
	expect "[ $rc = 1 ]" "exit 1" || return 1
	expect '[[ $out == *"not a gpumemtrace trace file"* ]]' "$out" || return 1
	out=$("$GMT" replay "$T/missing.gmt" 2>&1)
	expect '[[ $out == *"cannot open"*"No such file"* ]]' "$out" || return 1
	printf 'GMTTRACE\x09\x00\x00\x00\x00\x00\x00\x00' >"$T/new.gmt"
	out=$("$GMT" replay "$T/new.gmt" 2>&1)
	expect '[[ $out == *"version 9 is newer"* ]]' "$out"
}

test_not_root_says_what_is_needed() {
	local out rc
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$GMT" -p 1 2>&1)
	rc=$?
	expect "[ $rc = 1 ]" "exit 1, got $rc" || return 1
	expect '[[ $out == *"needs the CAP_BPF and CAP_PERFMON capabilities"* && $out == *sudo* ]]' \
		"$out" || return 1
	expect '[ "$(printf "%s\n" "$out" | wc -l)" = 1 ]' "one line"
}

test_bad_arguments_get_clear_messages() {
	need_root
	local args out rc
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		out=$("$GMT" $args 2>&1 </dev/null)
		rc=$?
		expect "[ $rc -ne 0 ] && [ $rc -lt 128 ]" "'$args' fails cleanly (exit $rc)" || return 1
		expect '[[ $out == *"$want"* ]]' "'$args' says '$want', said: $out" || return 1
	done <<'EOF'
-p abc|invalid pid 'abc'
-p 0|invalid pid '0'
-p 4194304999|invalid pid
-p 999999|no process with pid 999999
--interval 0 -p 1|invalid --interval '0'
--duration -3 -p 1|invalid --duration '-3'
--duration soon -p 1|invalid --duration 'soon'
--ringbuf-mb 3 -p 1|must be a power of two
--json|give either -p PID, -- CMD [ARGS...] or --watch
-p 1 -- true|give either -p PID, -- CMD [ARGS...] or --watch
--watch -p 1|--watch finds its processes: no -p, -f or command
--comm x -p 1|--comm goes with --watch
--watch --comm 0123456789abcdefg|--comm takes a process name of 1 to 15 bytes
--metrics 1.2.3:80 -p 1|expected PORT, IP:PORT or [IPv6]:PORT
--rotate-size 1M -p 1 -o x.gmt|--rotate-size, --rotate-age and --keep go with --watch -o DIR
-p 1 -o /tmp/|/tmp/ is a directory: -o DIR, a file per process, goes with --watch
--watch -o /tmp/x.gmt --keep 3|--rotate-size, --rotate-age and --keep go with --watch -o DIR
--watch -o /tmp/ --rotate-size 1K|--rotate-size must be at least 4K
--watch -o /tmp/ --rotate-age 0|invalid --rotate-age '0'
--watch -o /tmp/ --keep 0|invalid --keep '0'
replay --perfetto x --json y.gmt|it goes with none of --live, --events, --json
-p 1 --perfetto x|--live, --speed and --perfetto are for replay
record -p 1|record needs -o FILE
record -o /nonexistent/dir/x.gmt -- true|cannot create /nonexistent/dir/x.gmt
replay|replay needs a FILE
-- /nonexistent/cmd|cannot run the command: No such file or directory
--bogus|unrecognized option
EOF
}

test_duration_stops() {
	need_root
	sleep 30 &
	local victim=$!
	"$GMT" -q --json --duration 0.5 -i 0.1 -p "$victim" >"$T/r.json" || return 1
	kill "$victim"
	expect '[ "$(jqr .session.end_reason "$T/r.json")" = duration ]' || return 1
	expect '[ "$(jqr ".processes[0].exited" "$T/r.json")" = false ]' || return 1
	expect '[ "$(jqr ".processes[0].proc_status.samples" "$T/r.json")" -ge 3 ]' "samples"
}

test_threads_counted() {
	need_root
	"$GMT" -q --json -- "$WL" --threads 5 --steps 1 --step-mib 1 --out /dev/null >"$T/t.json" ||
		return 1
	expect '[ "$(jqr ".processes[0].threads_created" "$T/t.json")" = 5 ]' "5 threads created" ||
		return 1
	expect '[ "$(jqr ".processes[0].threads_peak" "$T/t.json")" = 2 ]' "2 at once, at most"
}

# -f follows children; without it the child is only counted
test_follow_forks() {
	need_root
	mkfifo "$T/done"
	"$GMT" -q --json -f -- "$WL" --fork --steps 3 --step-mib 8 --out "$T/done" >"$T/f.json" &
	cat "$T/done" >/dev/null
	wait $! || return 1
	expect '[ "$(jq ".processes | length" "$T/f.json")" = 2 ]' "two processes with -f" || return 1
	expect '[ "$(jqr ".processes[1].followed" "$T/f.json")" = true ]' || return 1
	expect '[ "$(jq "[.processes[1].mappings.largest[] | select(.size_bytes == 8 * $MIB)]
		| length" "$T/f.json")" = 3 ]' "the child's three mmaps" || return 1
	"$GMT" -q --json -- "$WL" --fork --steps 3 --step-mib 8 --out /dev/null >"$T/n.json" ||
		return 1
	expect '[ "$(jq ".processes | length" "$T/n.json")" = 1 ]' "one process without -f" ||
		return 1
	expect '[ "$(jq ".processes[0].children" "$T/n.json")" = 1 ]' "the child is counted"
}

# a stalled reader and a small ring buffer: the drops are counted and shown
test_lost_events_are_reported() {
	need_root
	local state
	start_workload --steps 1 --step-mib 1 --churn 100000
	start_tracer --ringbuf-mb 1 -p "$WL_PID" || return 1
	kill -STOP "$GMT_PID"
	# wait until the kernel has stopped it
	for _ in $(seq 100); do
		state=$(awk '{print $3}' "/proc/$GMT_PID/stat")
		[ "$state" = T ] && break
		read -r -t 0.05 <> <(:) || true
	done
	expect '[ "$state" = T ]' "tracer stopped" || return 1
	release_workload
	kill -CONT "$GMT_PID"
	wait_tracer || return 1
	expect 'grep -q "^Lost events: .*mmap [0-9]" "$T/gmt.out"' "$(grep Lost "$T/gmt.out")" ||
		return 1
	expect 'grep -q "bigger --ringbuf-mb" "$T/gmt.out"' "names the fix"
}

# the view's frame off the kernel's critical path: a frame that takes as
# long as the whole burst (held on a FIFO) loses nothing, since the ring
# buffer has a reader of its own
test_slow_view_loses_nothing() {
	need_root
	mkfifo "$T/hold"
	start_workload --steps 1 --step-mib 1 --churn 100000
	GMT_TEST_VIEW_HOLD="$T/hold" start_tracer --json -p "$WL_PID" || return 1
	exec 4>"$T/hold" # opened: the view's first frame is waiting on it
	release_workload
	echo x >&4
	exec 4>&-
	wait_tracer || return 1
	expect '[ "$(jqr ".lost_events.total" "$T/gmt.out")" = 0 ]' \
		"no events lost while the view was held: $(jq -c .lost_events "$T/gmt.out")" || return 1
	expect '[ "$(jqr ".processes[0].mappings.mmap_calls" "$T/gmt.out")" -ge 100001 ]' \
		"every mmap of the burst: $(jqr ".processes[0].mappings.mmap_calls" "$T/gmt.out")"
}

# the stream is in time order: what the tracer samples at a tick (/proc,
# meminfo, fault counts) goes out after every kernel record older than it,
# though the kernel's buffer has a reader thread of its own (a stack's
# record goes before the record that names it, and is left out)
test_records_in_time_order() {
	need_root
	local out
	"$GMT" record -q -i 0.05 -o "$T/o.gmt" -- "$WL" --steps 60 --step-mib 1 --step-ms 25 \
		--churn 2000 --out /dev/null >/dev/null || return 1
	out=$("$GMT" replay --events "$T/o.gmt" | jq -rs '
		[.[] | select(.t_s != null)] as $e |
		reduce range(0; $e | length) as $i ({tick: -1, late: 0, worst: 0, ticks: 0};
			$e[$i] as $r |
			if ($r.type | IN("sample", "meminfo", "faults")) then
				.tick = ([.tick, $r.t_s] | max) | .ticks += 1
			elif ($r.type | IN("mmap", "munmap", "rss", "brk", "touch")) and
				$r.t_s < .tick - 0.005 then
				.late += 1 | .worst = ([.worst, .tick - $r.t_s] | max)
			else . end) | "\(.ticks) \(.late) \(.worst)"')
	expect '[ "${out%% *}" -ge 20 ]' "ticks sampled: $out" || return 1
	expect '[ "$(cut -d" " -f2 <<<"$out")" = 0 ]' \
		"kernel records after a later tick's samples (ticks, late, worst s): $out"
}

test_format_is_clean() {
	local bad
	bad=$(cd "$ROOT" && clang-format --dry-run bpf/*.c bpf/*.h user/*.c user/*/*.c user/*/*.h tests/*.c \
		tests/fake/*.c helper/*.c tools/*.c 2>&1 |
		grep -c 'warning:')
	expect "[ $bad = 0 ]" "clang-format clean (run make format)"
}

# ARCHITECTURE.md's one-way flow: no stage includes one above it or a
# sibling, nothing above the model reads the wire format; the check itself
# catches each kind when it is planted
test_layering_is_one_way() {
	local out
	out=$("$ROOT/tests/layering.sh" 2>&1)
	expect "[ $? = 0 ]" "no backwards include in user/: $out" || return 1
	cp -r "$ROOT/user" "$T/user"
	printf '#include "report/report.h"\n' >>"$T/user/model/model_bo.c"
	printf '#include "source/procfs.h"\n' >>"$T/user/model/model_req.c"
	out=$("$ROOT/tests/layering.sh" "$T/user" 2>&1)
	expect "[ $? = 1 ]" "a planted backwards include fails the check"
	expect 'grep -q "model/model_bo.c: includes report/report.h (model may not include report)" <<<"$out"' \
		"names the upward include: $out"
	expect 'grep -q "model/model_req.c: includes source/procfs.h (model may not include source)" <<<"$out"' \
		"names the sibling include" || return 1
	# a wire number read above the model, and one only in a comment (allowed)
	printf 'static int wire = GMT_GK_HOST;\n/* GMT_GK_HOST, in words */\n' \
		>>"$T/user/analysis/roles.c"
	out=$("$ROOT/tests/layering.sh" "$T/user" 2>&1)
	expect '[ "$(grep -c "reads the wire format" <<<"$out")" = 1 ]' \
		"one wire name named, the comment left alone: $out" || return 1
	expect 'grep -q "analysis/roles.c:[0-9]*: reads the wire format: static int wire = GMT_GK_HOST;" <<<"$out"' \
		"names the file, the line and the code"
}

# Debian's own kernels under QEMU: every mm/proc program loads (verifier and
# CO-RE against that kernel's BTF: 6.1 has the pre-6.2 RSS counters), attaches,
# and measures as on the host; fault classes too (fexit is allowed there)
vm_kernel_check() {
	need_root
	local version=$1 kernel
	kernel=$("$ROOT/tests/vm/kernel.sh" "$version") || return 1
	cat >"$T/guest.sh" <<'GUEST'
gpumemtrace --json -i 0.2 -- workload --steps 8 --step-mib 16 --out /tmp/wl.json >/tmp/r.json 2>/tmp/err
echo "=== rc $?"
sed 's/^/# guest: /' /tmp/err
# cgroup v2, with the memory controller (the development VM's is on v1): a
# leak in a cgroup whose memory.max is 512 MiB
mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup &&
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control && mkdir /sys/fs/cgroup/lim &&
	echo 536870912 >/sys/fs/cgroup/lim/memory.max &&
	gpumemtrace -q --json -i 0.2 -- sh -c 'echo $$ >/sys/fs/cgroup/lim/cgroup.procs && exec workload --steps 20 --step-mib 4 --step-ms 100 --out /dev/null' >/tmp/cg.json
echo "=== cgroup rc $?"
# memory.high 96 MiB with swap (zram): past it the kernel swaps the heap
# out, and the heap is RssAnon + VmSwap, as /proc says at the end
for m in $(cat /lib/gmt-modules/order); do insmod /lib/gmt-modules/$m || echo "insmod $m failed"; done
echo 268435456 >/sys/block/zram0/disksize &&
	mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 && mkdir /sys/fs/cgroup/high &&
	echo 100663296 >/sys/fs/cgroup/high/memory.high && mkfifo /tmp/hold &&
	{ gpumemtrace -q --json -i 0.2 -- sh -c 'echo $$ >/sys/fs/cgroup/high/cgroup.procs && exec workload --steps 20 --step-mib 8 --step-ms 50 --out /tmp/hw.json --hold /tmp/hold' >/tmp/high.json & } &&
	i=0 && while [ ! -s /tmp/hw.json ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done &&
	pid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' /tmp/hw.json) &&
	echo "=== high status $(awk '/^RssAnon:|^VmSwap:/ { s = s " " $2 * 1024 } END { print s }' /proc/$pid/status)" &&
	echo go >/tmp/hold && wait
echo "=== high rc $?"
echo "=== workload"
cat /tmp/wl.json
echo "=== cgroup"
cat /tmp/cg.json
echo "=== high"
cat /tmp/high.json
echo "=== report"
cat /tmp/r.json
GUEST
	MODULES=zram "$ROOT/tests/vm/boot.sh" "$kernel" "$T/guest.sh" >"$T/console"
	expect 'grep -q "^=== rc 0" "$T/console"' "gpumemtrace ran in the guest: $(grep -v '^ ' "$T/console" | head -5)" ||
		return 1
	sed -n '/^=== workload/,/^=== cgroup$/p' "$T/console" | sed '1d;$d' >"$T/wl.json"
	sed -n '/^=== cgroup$/,/^=== high$/p' "$T/console" | sed '1d;$d' >"$T/cg.json"
	sed -n '/^=== high$/,/^=== report/p' "$T/console" | sed '1d;$d' >"$T/high.json"
	sed -n '/^=== report/,/^=== end/p' "$T/console" | sed '1d;$d' >"$T/r.json"
	# cgroup v2: the leak reaches memory.max of /lim first
	expect 'grep -q "^=== cgroup rc 0" "$T/console" &&
		[ "$(jq -c "[.processes[0].memory_limit | .cgroup, .file, .limit_bytes]" "$T/cg.json")" = "[\"/lim\",\"memory.max\",536870912]" ] &&
		jq -e "[.findings[] | select(.kind == \"leak\" and .category == \"host_anon\")][0].reasons |
			index(\"runs_out_cgroup\") != null" "$T/cg.json" >/dev/null' \
		"on cgroup v2, the leak reaches memory.max: $(grep "^=== cgroup rc" "$T/console"; jq -c "[.processes[0].memory_limit, [.findings[] | [.kind, .category, .reasons]]]" "$T/cg.json" 2>&1 | head -c 600)" ||
		return 1
	# memory.high with swap: the heap swapped out is still the heap's, and
	# the limit is memory.high's
	local st anon swap last
	st=$(grep -oP '^=== high status \K.*' "$T/console")
	read -r anon swap <<<"$st"
	last=$(jq '[.findings[] | select(.category == "host_anon")][0].last_bytes' "$T/high.json" 2>/dev/null)
	echo "# memory.high 96 MiB: RssAnon $anon, VmSwap $swap at the end; the heap's last level $last"
	expect 'grep -q "^=== high rc 0" "$T/console" &&
		[ "$(jq -c "[.processes[0].memory_limit | .cgroup, .file, .limit_bytes]" "$T/high.json")" = "[\"/high\",\"memory.high\",100663296]" ]' \
		"memory.high read: $(grep "^=== high rc\|insmod" "$T/console"; jq -c .processes[0].memory_limit "$T/high.json" 2>&1 | head -c 300)" ||
		return 1
	expect '(( swap > 16 * MIB ))' "it swapped: VmSwap $swap" || return 1
	expect '[ "$(jq -r "[.findings[] | select(.category == \"host_anon\")][0].where" "$T/high.json")" = "host heap (anonymous RSS + swap)" ] &&
		(( last >= anon + swap - RSS_SLACK && last <= anon + swap + RSS_SLACK ))' \
		"the heap is RssAnon + VmSwap ($((anon + swap))): $last, $(jq -c '[.findings[] | select(.category == "host_anon")][0] | [.where, .kind]' "$T/high.json")" ||
		return 1
	# the GPU API libraries, DRM modules and NVIDIA's driver are absent from
	# this guest: said so, and skipped (test_vm_ttm_* loads the modules)
	local absent='.name == "vulkan" or .name == "cuda" or .name == "hip" or .name == "nvml" or
		(.name | startswith("fentry:ttm"))'
	expect '[ "$(jq "[.probes[] | select(.status != \"attached\" and ($absent | not))] | length" "$T/r.json")" = 0 ]' \
		"every probe attached: $(jq -c '[.probes[] | select(.status != "attached")]' "$T/r.json")" ||
		return 1
	expect '[ "$(jqr ".probes[] | select(.name == \"uprobes:gpu\") | .status" "$T/r.json")" = attached ]' \
		"the gpuapi programs load on $version" || return 1
	expect '[[ $(jqr .session.kernel "$T/r.json") == "$version".* ]]' "ran on $version" || return 1
	# first touches sampled there too (bpf_find_vma, bpf_loop, that verifier):
	# about the 128 MiB the workload touched, one sample a MiB
	local touched
	touched=$(jqr .processes[0].mappings.first_touched_bytes "$T/r.json")
	expect '(( touched >= 96 * MIB && touched <= 160 * MIB ))' \
		"first touches stand for $touched bytes; the workload touched $(jqr .bytes "$T/wl.json")" ||
		return 1
	check_growth "$T/r.json" "$T/wl.json"
}

test_vm_kernel_6_1() {
	vm_kernel_check 6.1
}

test_vm_kernel_6_12() {
	vm_kernel_check 6.12
}

# GPU APIs. Vulkan is Mesa's lavapipe behind the real loader; CUDA and HIP are
# the stand-in libraries of tests/fake, dlopen'ed by tests/gpuwork.
VK=$ROOT/.output/tests/vkalloc
GW=$ROOT/.output/tests/gpuwork
FAKE=$ROOT/.output/tests/fake

need_lavapipe() {
	"$VK" --loader 0 --direct 0 >/dev/null 2>&1 ||
		skip "no Vulkan device (mesa-vulkan-drivers' lavapipe is installed by make deps)"
}

# the Vulkan report in $1 against vkalloc's summary in $2
check_vulkan() {
	local r=$1 wl=$2 k='.processes[0].gpu.by_kind[] | select(.api == "Vulkan")'
	expect '[ "$(jqr "[$k] | length" "$r")" = 1 ]' "one Vulkan kind" || return 1
	expect '[ "$(jqr "$k | .kind" "$r")" = device ]' "lavapipe's one type is device-local" ||
		return 1
	expect '[ "$(jqr "$k | .allocs" "$r")" = "$(jqr .allocs "$wl")" ]' "allocations" || return 1
	expect '[ "$(jqr "$k | .frees" "$r")" = "$(jqr .frees "$wl")" ]' "frees" || return 1
	expect '[ "$(jqr "$k | .alloc_bytes" "$r")" = "$(jqr .bytes "$wl")" ]' "bytes" || return 1
	expect '[ "$(jqr "$k | .live_bytes" "$r")" = "$(jqr .live_bytes "$wl")" ]' "live" || return 1
	expect '[ "$(jqr "$k | .failed" "$r")" = 1 ]' "one failure" || return 1
	expect '[ "$(jqr .processes[0].gpu.unknown_frees "$r")" = 0 ]' "no unmatched free" || return 1
	expect '[ "$(jqr .processes[0].gpu.maps "$r")" = 1 ]' "one map" || return 1
	expect '[ "$(jqr .processes[0].gpu.unmaps "$r")" = 1 ]' "one unmap" || return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].result "$r")" = "$(jqr .fail_result "$wl")" ]' ||
		return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].result_name "$r")" = VK_ERROR_OUT_OF_DEVICE_MEMORY ]' ||
		return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].size_bytes "$r")" = "$(jqr .fail_size "$wl")" ]' ||
		return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].stack[0].symbol "$r")" = alloc_impossible ]' "failure stack: $(jq -c .processes[0].gpu.failures "$r")" ||
		return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].live_total_bytes "$r")" = "$(jqr .live_bytes "$wl")" ]' \
		"live total at the failure" || return 1
	# each path's live bytes under the stack that made them
	expect '[ "$(jq "[.processes[0].gpu.live_by_stack[] | select(.stack[0].symbol == \"alloc_via_loader\") | .bytes] | add" "$r")" = "$(jqr .live_loader_bytes "$wl")" ]' \
		"live bytes allocated through the loader" || return 1
	expect '[ "$(jq "[.processes[0].gpu.live_by_stack[] | select(.stack[0].symbol == \"alloc_direct\") | .bytes] | add" "$r")" = "$(jqr .live_direct_bytes "$wl")" ]' \
		"live bytes allocated through vkGetDeviceProcAddr pointers" || return 1
	expect '[ "$(jqr ".gpu_devices[0].driver" "$r")" = libvulkan_lvp.so ]' "the driver's device" ||
		return 1
	expect '[ "$(jqr ".gpu_devices[0].memory_types[0].flags" "$r")" = "device-local|host-visible|host-coherent|host-cached" ]'
}

# -p on a running Vulkan program: the loader and the driver in its maps
test_gpu_vulkan_attach_pid() {
	need_root
	need_lavapipe
	mkfifo "$T/go" "$T/done" "$T/ready"
	"$VK" --ready "$T/ready" --wait "$T/go" --out "$T/done" --loader 6 --direct 4 \
		--dedicated 2>"$T/vk.err" &
	local pid=$!
	# the device exists: the driver is mapped
	await_line "$T/ready" "$pid" vkalloc "$T/vk.err" >/dev/null || return 1
	start_tracer --json -p "$pid" || return 1
	expect 'grep -q "attached Vulkan driver" "$T/gmt.err"' "attached to lavapipe" || return 1
	expect 'grep -q "attached Vulkan loader" "$T/gmt.err"' "attached to the loader" || return 1
	echo go >"$T/go"
	await_all "$T/done" "$T/wl.json" "$pid" vkalloc "$T/vk.err" || return 1
	wait_tracer || return 1
	check_vulkan "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .processes[0].gpu.dedicated_allocs "$T/gmt.out")" = 1 ]' "dedicated"
}

# -- CMD: the loader is probed before it loads; the driver when it is mapped
test_gpu_vulkan_spawn() {
	need_root
	need_lavapipe
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached Vulkan driver" start_tracer --json -- "$VK" --wait "$T/go" \
		--out "$T/done" || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	check_vulkan "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .processes[0].gpu.dedicated_allocs "$T/gmt.out")" = 0 ]' "none dedicated"
}

# the CUDA stand-in dlopen'ed after the tracer started: attached on its mmap
test_gpu_cuda_dlopen() {
	need_root
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached CUDA driver API" start_tracer --json -- "$GW" --lib "$FAKE/libcuda.so.1" \
		--wait "$T/go" --out "$T/done" --n 10 || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	local r=$T/gmt.out g='.processes[0].gpu'
	check_gpu_kinds "$r" "$T/wl.json" || return 1
	expect '[ "$(jqr "$g.unknown_frees" "$r")" = 0 ]' "every free matched" || return 1
	expect '[ "$(jqr "$g.failures | length" "$r")" = 1 ]' "one failure" || return 1
	expect '[ "$(jqr "$g.failures[0].result_name" "$r")" = CUDA_ERROR_OUT_OF_MEMORY ]' || return 1
	expect '[ "$(jqr "$g.failures[0].call" "$r")" = cuMemAlloc_v2 ]' || return 1
	expect '[ "$(jqr "$g.failures[0].size_bytes" "$r")" = $((1 << 50)) ]' || return 1
	expect '[[ "$(jqr "[$g.failures[0].stack[].symbol] | join(\" \")" "$r")" == "alloc_too_much cuda_script main "* ]]' \
		"failure stack: $(jq -c "[$g.failures[0].stack[].symbol]" "$r")" || return 1
	# the ten cuMemAlloc_v2 of 1..10 MiB, the first five freed: 6+..+10 MiB live
	expect '[ "$(jqr "[$g.live_by_stack[] | select(.stack[0].symbol == \"alloc_weights\")][0] | [.count, .bytes] | join(\" \")" "$r")" = "5 $((40 * MIB))" ]' \
		"live cuMemAlloc_v2 under alloc_weights" || return 1
	expect '[ "$(jqr "$g.device_memory.total_bytes" "$r")" = $((80 << 30)) ]' "cuMemGetInfo" ||
		return 1
	expect '[ "$(jqr ".probes[] | select(.name == \"libcuda.so.1\") | .status" "$r")" = attached ]'
}

# -p on a program that loaded the HIP stand-in before the tracer came
test_gpu_hip_attach_pid() {
	need_root
	mkfifo "$T/go" "$T/done" "$T/ready"
	"$GW" --api hip --lib "$FAKE/libamdhip64.so" --ready "$T/ready" --wait "$T/go" \
		--out "$T/done" 2>"$T/gw.err" &
	local pid=$!
	await_line "$T/ready" "$pid" gpuwork "$T/gw.err" >/dev/null || return 1
	start_tracer --json -p "$pid" || return 1
	expect 'grep -q "attached HIP runtime" "$T/gmt.err"' || return 1
	echo go >"$T/go"
	await_all "$T/done" "$T/wl.json" "$pid" gpuwork "$T/gw.err" || return 1
	wait_tracer || return 1
	check_gpu_kinds "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].result_name "$T/gmt.out")" = hipErrorOutOfMemory ]'
}

# a recording replays to the same report: the stacks travel in the file
test_gpu_record_replay_identical() {
	need_root
	local f=$T/gpu.gmt
	mkfifo "$T/go"
	GMT_READY="attached CUDA driver API" start_tracer record -o "$f" -- "$GW" \
		--lib "$FAKE/libcuda.so.1" --n 4 --wait "$T/go" --out /dev/null || return 1
	echo go >"$T/go"
	wait_tracer || return 1
	"$GMT" replay "$f" >"$T/replay.txt" || return 1
	cp "$T/gmt.out" "$T/live.txt"
	expect 'cmp -s "$T/live.txt" "$T/replay.txt"' "identical reports" || return 1
	expect 'grep -q "GPU API calls" "$T/replay.txt"' "the GPU section is there"
}

# a stripped program's frames named from its separate debug file, found by
# .gnu_debuglink beside it, or by build id under --debug-dir; not without it
test_gpu_stacks_from_debug_files() {
	need_root
	local s=$ROOT/.output/tests/stripped id top
	id=$(readelf -n "$s/gpuwork-bid" | awk '/Build ID/ {print $3}')
	expect '[ -n "$id" ]' "gpuwork-bid has a build id" || return 1
	mkdir -p "$T/debug/.build-id/${id:0:2}"
	cp "$s/gpuwork-bid.debug" "$T/debug/.build-id/${id:0:2}/${id:2}.debug"
	failure_top() { # PROGRAM [OPTIONS...]: the top frame of the failure's stack
		local prog=$1
		shift
		rm -f "$T/go" && mkfifo "$T/go"
		GMT_READY="attached CUDA driver API" start_tracer --json "$@" -- "$prog" \
			--lib "$FAKE/libcuda.so.1" --n 2 --wait "$T/go" --out /dev/null || return 1
		echo go >"$T/go"
		wait_tracer || return 1
		jqr '.processes[0].gpu.failures[0].stack[0].symbol' "$T/gmt.out"
	}
	top=$(failure_top "$s/gpuwork-dl") || return 1
	expect '[ "$top" = alloc_too_much ]' "by debuglink: $top" || return 1
	top=$(failure_top "$s/gpuwork-bid" --debug-dir "$T/debug") || return 1
	expect '[ "$top" = alloc_too_much ]' "by build id: $top" || return 1
	top=$(failure_top "$s/gpuwork-bid") || return 1
	expect '[ "$top" != alloc_too_much ]' "stripped, no debug file: $top"
}

# Real llama.cpp: node-llama-cpp's prebuilt Vulkan build on lavapipe, a tiny
# random-weight model from tools/tiny-gguf.mjs, gpumemtrace -p on the running
# process. Every buffer llama.cpp makes (its own log: GGML_VK_MEMORY_LOGGER)
# is one vkAllocateMemory of that size: weights, KV cache, compute buffers.
E2E=$ROOT/tests/e2e

need_llama() {
	[ -d "$E2E/node_modules/node-llama-cpp" ] ||
		skip "node-llama-cpp is not installed in tests/e2e (make test installs it)"
}

# "5.26 MiB" -> bytes
to_bytes() {
	awk -v v="$1" -v u="$2" 'BEGIN { m = u == "GiB" ? 2^30 : u == "MiB" ? 2^20 : u == "KiB" ? 1024 : 1
		printf "%.0f\n", v * m }'
}

test_gpu_llama_cpp_vulkan() {
	need_root
	need_lavapipe
	need_llama
	local pid want got n i a w tol
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" >/dev/null || return 1
	mkfifo "$T/ready" "$T/go" "$T/out" "$T/hold"
	GGML_VK_VISIBLE_DEVICES=0 GGML_VK_MEMORY_LOGGER=1 node "$E2E/load.mjs" "$T/tiny.gguf" \
		"$T/ready" "$T/go" "$T/out" "$T/hold" 2>"$T/node.err" &
	pid=$!
	# the Vulkan backend is up: loader and driver mapped
	await_line "$T/ready" "$pid" "node-llama-cpp" "$T/node.err" >/dev/null || return 1
	start_tracer record -o "$T/l.gmt" --json -p "$pid" || return 1
	expect 'grep -q "attached Vulkan driver" "$T/gmt.err"' "attached to lavapipe" || return 1
	echo go >"$T/go"
	await_all "$T/out" "$T/o.json" "$pid" "node-llama-cpp" "$T/node.err" || return 1
	echo go >"$T/hold"
	wait_tracer || return 1
	sed -n '/^=== go/,/^=== done/p' "$T/node.err" >"$T/llama.log"
	"$GMT" replay --events "$T/l.gmt" >"$T/events.json" || return 1
	# llama.cpp's buffers, in the order made, and the allocations seen
	grep -oP '^ggml_vulkan memory: Vulkan0: \+\K[0-9.]+ [KMG]?i?B' "$T/llama.log" |
		while read -r v u; do to_bytes "$v" "$u"; done | sort -n >"$T/want"
	jq -r "select(.type == \"gpu_call\" and .call == \"vkAllocateMemory\" and .pid == $pid and
		.result == 0) | .size" "$T/events.json" | sort -n >"$T/got"
	n=$(wc -l <"$T/want")
	expect '[ "$n" -ge 5 ]' "llama.cpp logged its buffers ($n)" || return 1
	expect '[ "$(wc -l <"$T/got")" = "$n" ]' \
		"one vkAllocateMemory per buffer: $(paste -sd' ' "$T/got") vs $(paste -sd' ' "$T/want")" ||
		return 1
	# sizes agree within the log's rounding (two decimals of its unit)
	paste "$T/got" "$T/want" | while read -r a w; do
		tol=$(awk -v w="$w" 'BEGIN { print (w >= 2^20 ? 2^20 : w >= 1024 ? 1024 : 1) * 0.005 + 64 }')
		awk -v a="$a" -v w="$w" -v t="$tol" 'BEGIN { exit !(a - w <= t && w - a <= t) }' ||
			{ echo "# allocation of $a bytes, llama.cpp says $w"; exit 1; }
	done || return 1
	# the sizes llama.cpp logs exactly are there exactly
	for w in $(grep -oP '(ggml_backend_vk_buffer_type_alloc_buffer|ggml_vk_host_malloc)\(\K[0-9]+' \
		"$T/llama.log"); do
		expect 'grep -qx "$w" "$T/got"' "an allocation of exactly $w bytes" || return 1
	done
	# weights, KV cache and compute buffer, by llama.cpp's own names
	for what in "model buffer size" "KV buffer size" "compute buffer size"; do
		w=$(jq -r '.logs[]' "$T/o.json" | grep -oP "Vulkan0 $what = +\K[0-9.]+ MiB" | head -1)
		expect '[ -n "$w" ]' "llama.cpp logged its Vulkan0 $what" || return 1
		w=$(to_bytes ${w% *} MiB)
		expect 'awk -v w="$w" "{ d = \$1 - w; if (d < 0) d = -d; if (d <= 0.005 * 2^20 + 64) f = 1 } END { exit !f }" "$T/got"' \
			"an allocation for the $what ($w bytes)" || return 1
	done
	# at the return, the caller is the first frame: llama.cpp's buffer maker
	expect '[ "$(jq -r "select(.type == \"stack\") | .frames[0].symbol" "$T/events.json" | grep -c "^ggml_vk_create_buffer")" -ge 1 ]' \
		"stacks name ggml_vk_create_buffer" || return 1
	# every buffer llama.cpp released while traced is a vkFreeMemory
	n=$(sed -n '/^=== go/,$p' "$T/node.err" | grep -c '^ggml_vulkan memory: Vulkan0: -')
	expect '[ "$(jqr ".processes[0].gpu.by_kind[] | select(.api == \"Vulkan\") | .frees" "$T/gmt.out")" = "$n" ]' \
		"$n frees" || return 1
	expect '[ "$(jqr .processes[0].gpu.unknown_frees "$T/gmt.out")" = 0 ]'
}

# -f: a child started by a shell loads the library; its calls are its own
test_gpu_follow_child() {
	need_root
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached CUDA driver API" start_tracer --json -f -- sh -c \
		"'$GW' --lib '$FAKE/libcuda.so.1' --n 3 --wait '$T/go' --out '$T/done'; true" ||
		return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	local i
	i=$(jq '[.processes[].comm] | index("gpuwork")' "$T/gmt.out")
	expect '[ "$i" != null ] && [ "$i" -gt 0 ]' "the child is in the report" || return 1
	check_gpu_kinds "$T/gmt.out" "$T/wl.json" "$i" || return 1
	expect '[ "$(jqr .processes[0].gpu "$T/gmt.out")" = null ]' "the shell made no GPU calls"
}

# a target in its own mount namespace, its library at a path that does not
# exist in ours: found and probed through /proc/PID/map_files
test_gpu_other_mount_namespace() {
	need_root
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	mkdir "$T/mnt"
	mkfifo "$T/go" "$T/done" "$T/ready"
	unshare --mount --propagation private sh -c "mount --bind '$FAKE' '$T/mnt' &&
		exec '$GW' --lib '$T/mnt/libcuda.so.1' --ready '$T/ready' --wait '$T/go' \
		--out '$T/done'" 2>"$T/ns.err" &
	local pid=$!
	await_line "$T/ready" "$pid" "gpuwork in a mount namespace of its own" "$T/ns.err" \
		>/dev/null || return 1
	pid=$(pgrep -f "gpuwork --lib $T/mnt/libcuda.so.1") || return 1
	expect '[ ! -e "$T/mnt/libcuda.so.1" ]' "the path is not in our namespace" || return 1
	start_tracer --json -p "$pid" || return 1
	expect 'grep -q "attached CUDA driver API" "$T/gmt.err"' || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	check_gpu_kinds "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].stack[0].symbol "$T/gmt.out")" = alloc_too_much ]'
}

# Real TTM traffic in Debian's kernels: bochs (and amdgpu, loaded for its BTF)
# as modules, a 16 MiB VRAM display, tests/drmflip showing six screen-sized
# buffers in turn so that TTM must evict; gpumemtrace -a records it all.
vm_ttm_check() {
	need_root
	local version=$1 kernel r=$T/r.json f=$T/flip.json pid size evict
	kernel=$("$ROOT/tests/vm/kernel.sh" "$version") || return 1
	cat >"$T/guest.sh" <<'GUEST'
for m in $(cat /lib/gmt-modules/order); do insmod /lib/gmt-modules/$m || echo "insmod $m failed"; done
gpumemtrace -a --json -i 0.1 -- drmflip --buffers 6 --rounds 10 --out /tmp/flip.json >/tmp/r.json 2>/tmp/err
echo "=== rc $?"
sed 's/^/# guest: /' /tmp/err
echo "=== flip"
cat /tmp/flip.json
echo "=== report"
cat /tmp/r.json
GUEST
	MODULES="bochs amdgpu" VGA_MB=16 "$ROOT/tests/vm/boot.sh" "$kernel" "$T/guest.sh" >"$T/console"
	expect 'grep -q "^=== rc 0" "$T/console"' "gpumemtrace ran in the guest: $(head -c 600 "$T/console")" ||
		return 1
	sed -n '/^=== flip/,/^=== report/p' "$T/console" | sed '1d;$d' >"$f"
	sed -n '/^=== report/,/^=== end/p' "$T/console" | sed '1d;$d' >"$r"
	evict=$([ "$version" = 6.1 ] && echo ttm_mem_evict_first || echo ttm_bo_evict)
	for p in fentry:ttm "fentry:$evict" amdgpu:amdgpu_bo_create; do
		expect '[ "$(jqr ".probes[] | select(.name == \"$p\") | .status" "$r")" = attached ]' \
			"$p attached on $version: $(jq -c ".probes[] | select(.name == \"$p\")" "$r")" ||
			return 1
	done
	pid=$(jqr .pid "$f")
	size=$(jqr .size "$f")
	local o=".kernel_buffers.owners[] | select(.pid == $pid)"
	expect '[ "$(jqr "$o | .created" "$r")" = 6 ]' "six buffers made by drmflip" || return 1
	expect '[ "$(jqr "$o | .freed" "$r")" = 6 ]' "and freed" || return 1
	expect '[ "$(jqr "$o | .live" "$r")" = 0 ]' || return 1
	expect '[ "$(jqr "$o | .peak_vram_bytes" "$r")" -ge "$size" ]' "in VRAM at some point" || return 1
	expect '[ "$(jqr ".kernel_buffers.evictions | length" "$r")" -ge 3 ]' "evictions" || return 1
	# each one: a screen buffer, VRAM to system memory, forced by drmflip
	expect '[ "$(jq "[.kernel_buffers.evictions[] | select(.size_bytes != $size or .from != \"vram\" or .to != \"system\" or .evictor_pid != $pid)] | length" "$r")" = 0 ]' \
		"evictions: $(jq -c '.kernel_buffers.evictions[:3]' "$r")" || return 1
	expect '[ "$(jq "[.kernel_buffers.evictions[] | select(.owner_pid == $pid)] | length" "$r")" -ge 2 ]' \
		"drmflip's own buffers evicted, with their owner" || return 1
	# the verdict: its buffers left VRAM, by its own hand, and all came back
	# or were freed; no decode rates to compare
	expect '[ "$(jq "[.findings[] | select(.kind == \"eviction_slowdown\" and .pid == $pid and .evictor_pid == $pid and .evictions >= 2)] | length" "$r")" = 1 ]' \
		"the eviction finding: $(jq -c '[.findings[] | select(.kind != "steady") | {kind, category, evictor_pid, evictions}]' "$r")" ||
		return 1
	# bochs prints no DRM fdinfo (nor does vgem): the counters of real GPU
	# drivers are checked by the unit tests on their text
	expect '[ "$(jqr .processes[0].drm_fdinfo "$r")" = null ]' \
		"DRM fdinfo: $(jq -c .processes[0].drm_fdinfo "$r")"
}

test_vm_ttm_6_1() {
	vm_ttm_check 6.1
}

test_vm_ttm_6_12() {
	vm_ttm_check 6.12
}

# HTTP requests from the server's own syscalls: Node's http server (keep-alive,
# chunked, event streams), concurrent clients, a pipelined pair. Request and
# response bodies hold a secret that must not reach the recording.
test_http_requests() {
	need_root
	command -v node >/dev/null || skip "no node (the machine's Node.js runs the test server)"
	local secret=gmt-secret-$RANDOM$RANDOM port pid r=$T/gmt.out q='.processes[0].requests'
	mkfifo "$T/ready"
	SECRET=$secret node "$ROOT/tests/http/server.mjs" "$T/ready" 2>"$T/server.err" &
	pid=$!
	port=$(await_line "$T/ready" "$pid" "the test server" "$T/server.err") || return 1
	start_tracer record -o "$T/h.gmt" --json -p "$pid" || return 1
	SECRET=$secret node "$ROOT/tests/http/client.mjs" "$port" 4 3 >"$T/client.json" || return 1
	kill -TERM "$pid"
	wait_tracer || return 1
	expect '[ "$(jqr "$q | length" "$r")" = "$(jqr .requests "$T/client.json")" ]' \
		"every request once: $(jqr "$q | length" "$r") of $(jqr .requests "$T/client.json")" ||
		return 1
	expect '[ "$(jq -cS "[$q[] | \"\(.method) \(.path) \(.status)\"] | group_by(.) | map({(.[0]): length}) | add" "$r")" = "$(jq -cS .count "$T/client.json")" ]' \
		"methods, paths and statuses: $(jq -c "[$q[] | \"\(.method) \(.path) \(.status)\"]" "$r")" ||
		return 1
	expect '[ "$(jq "[$q[] | select(.end == \"open\" or .ttfb_s > .latency_s or .end_s < .start_s)] | length" "$r")" = 0 ]' \
		"every request ended, first byte before the end" || return 1
	expect '[ "$(jq "[$q[] | select(.path == \"/sse\" and .event_stream and .end == \"chunked\")] | length" "$r")" = 4 ]' \
		"event streams end at the chunked terminator" || return 1
	expect '[ "$(jq "[$q[] | select(.path == \"/json\" and .end == \"length\")] | length" "$r")" = 5 ]' \
		"Content-Length responses end at their length" || return 1
	expect '[ "$(jqr .processes[0].tls_connections "$r")" = 1 ]' "the TLS connection noticed" ||
		return 1
	# nothing of a body, nor the query string, leaves the kernel
	node "$ROOT/tests/http/undump.mjs" "$T/h.gmt" >"$T/raw" || return 1
	expect '[ "$(wc -c <"$T/raw")" -gt 1000 ]' "the recording decompressed" || return 1
	expect '! grep -qa "$secret" "$T/raw"' "the secret is nowhere in the recording"
}

# Real llama.cpp behind an OpenAI-style front end (tests/e2e/server.mjs):
# gpumemtrace -p on the running server; each request once, with the server's
# own token count exactly and its decode rate within 10%
test_llama_requests() {
	need_root
	need_lavapipe
	need_llama
	local port pid r=$T/gmt.out c=$T/client.json q='.processes[0].requests' i n want got
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" >/dev/null || return 1
	mkfifo "$T/ready"
	GGML_VK_VISIBLE_DEVICES=0 node "$E2E/server.mjs" "$T/tiny.gguf" "$T/ready" 2>"$T/server.err" &
	pid=$!
	port=$(await_line "$T/ready" "$pid" "node-llama-cpp's server" "$T/server.err") || return 1
	start_tracer record -o "$T/e.gmt" --json -p "$pid" || return 1
	expect 'grep -q "attached llama.cpp decode" "$T/gmt.err"' "llama_decode probed" || return 1
	node "$E2E/client.mjs" "$port" 6 8 >"$c" || return 1
	kill -TERM "$pid"
	wait_tracer || return 1
	n=$(jqr '.requests | length' "$c")
	expect '[ "$(jqr "$q | length" "$r")" = "$n" ]' "each request once" || return 1
	for ((i = 0; i < n; i++)); do
		expect '[ "$(jqr "$q[$i].path" "$r")" = "$(jqr ".requests[$i].path" "$c")" ]' "path of $i" ||
			return 1
		want=$(jqr ".requests[$i].completion_tokens" "$c")
		got=$(jqr "$q[$i].generated_tokens" "$r")
		expect '[ "$got" = "$want" ]' "request $i: $got generated tokens, the server says $want" ||
			return 1
		want=$(jqr ".requests[$i].tokens_per_s" "$c")
		got=$(jqr "$q[$i].decode_tokens_per_s" "$r")
		[ "$want" = null ] && continue
		expect 'awk -v a="$got" -v b="$want" "BEGIN { exit !(a > 0.9 * b && a < 1.1 * b) }"' \
			"request $i: $got tokens/s, the server says $want" || return 1
	done
	expect '[ "$(jq "[$q[] | select(.prompt_tokens < 1 or .decodes < 2)] | length" "$r")" = 0 ]' \
		"every request has its prompt and decodes"
}

# The verdicts on real llama.cpp: the front end above with GMT_VARIANT, traced
# with -p after the model is loaded. llama.cpp's own memory log says what
# each context costs: the sum of the buffers it logs between two requests.
llama_variant() { # llama_variant VARIANT REQUESTS: $T/r.json, $T/per_ctx (bytes)
	local pid port
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" >/dev/null || return 1
	mkfifo "$T/ready"
	GGML_VK_VISIBLE_DEVICES=0 GGML_VK_MEMORY_LOGGER=1 GMT_VARIANT=$1 \
		node "$E2E/server.mjs" "$T/tiny.gguf" "$T/ready" 2>"$T/server.err" &
	pid=$!
	port=$(await_line "$T/ready" "$pid" "node-llama-cpp's server" "$T/server.err") || return 1
	start_tracer record -o "$T/v.gmt" --json -p "$pid" || return 1
	node "$E2E/client.mjs" "$port" "$2" 4 >"$T/client.json" || return 1
	kill -TERM "$pid"
	wait_tracer || return 1
	cp "$T/gmt.out" "$T/r.json"
	# what llama.cpp allocated in request 2 (the first pays for warm-up too)
	sed -n '/^=== request 2$/,/^=== request 3$/p' "$T/server.err" |
		grep -oP '^ggml_vulkan memory: Vulkan0: \+\K[0-9.]+ [KMG]?i?B' |
		while read -r v u; do to_bytes "$v" "$u"; done | awk '{ s += $1 } END { print s + 0 }' >"$T/per_ctx"
}

# findings of one kind in one category
finding() { jq -c "[.findings[] | select(.kind == \"$1\" and .category == \"$2\")]" "$T/r.json"; }

test_llama_unchanged_is_steady() {
	need_root
	need_lavapipe
	need_llama
	llama_variant "" 8 || return 1
	expect '[ "$(jq "[.findings[] | select(.kind == \"leak\" or .kind == \"bounded_cache\")] | length" "$T/r.json")" = 0 ]' \
		"no leak or cache: $(jq -c '[.findings[] | [.kind, .category]]' "$T/r.json")" || return 1
	expect '[ "$(jq -r "[.findings[] | select(.category == \"vulkan_device\")][0].kind" "$T/r.json")" != null ]' \
		"Vulkan memory was judged" || return 1
}

test_llama_context_leak_is_a_vulkan_leak() {
	need_root
	need_lavapipe
	need_llama
	local f want
	llama_variant leak 8 || return 1
	f=$(finding leak vulkan_device)
	want=$(cat "$T/per_ctx")
	expect '[ "$(jq length <<<"$f")" = 1 ]' "a Vulkan device leak: $(jq -c '[.findings[] | [.kind, .category]]' "$T/r.json")" || return 1
	expect 'jq -e --argjson w "$want" ".[0].bytes_per_request - \$w | fabs <= 0.01 * \$w" <<<"$f" >/dev/null' \
		"$(jq .[0].bytes_per_request <<<"$f") bytes a request, llama.cpp logged $want a context" || return 1
	expect 'jq -e ".[0].stacks[0].label | test(\"ggml_vk\")" <<<"$f" >/dev/null' \
		"held by llama.cpp's Vulkan buffers: $(jq -c .[0].stacks[0].label <<<"$f")" || return 1
	expect 'jq -e ".[0].stacks[0].stack | length > 0" <<<"$f" >/dev/null' "with its stack" || return 1
	"$GMT" replay "$T/v.gmt" >"$T/r.txt" || return 1
	expect 'grep -q "^  LEAK: Vulkan device memory" "$T/r.txt"' "the text says it first" || return 1
}

test_llama_keep_three_is_a_bounded_cache() {
	need_root
	need_lavapipe
	need_llama
	local f want
	llama_variant keep3 10 || return 1
	f=$(finding bounded_cache vulkan_device)
	want=$(cat "$T/per_ctx")
	expect '[ "$(jq length <<<"$f")" = 1 ]' "a bounded cache: $(jq -c '[.findings[] | [.kind, .category]]' "$T/r.json")" || return 1
	# traced from after the model loaded: the level is what the contexts hold
	expect 'jq -e --argjson w "$want" ".[0].ceiling_bytes - 3 * \$w | fabs <= 0.01 * 3 * \$w" <<<"$f" >/dev/null' \
		"ceiling $(jq .[0].ceiling_bytes <<<"$f"), three contexts are $((3 * want))" || return 1
	expect '[ "$(jq .[0].since_request <<<"$f")" = 3 ]' "full after three requests" || return 1
	expect '[ "$(jq "[.findings[] | select(.kind == \"leak\" and .category == \"vulkan_device\")] | length" "$T/r.json")" = 0 ]' \
		"not a leak" || return 1
}

# The live view in a real terminal: tmux runs gpumemtrace on the workload;
# what the panes show is read back. Each wait is for text on the screen.
pane() { tmux -L "$TMUX_SOCK" capture-pane -t v -p "$@"; }
keys() { tmux -L "$TMUX_SOCK" send-keys -t v "$@"; }
wait_screen() { # wait_screen PATTERN [WHAT]: up to 20 s for grep -E PATTERN
	local i
	for ((i = 0; i < 200; i++)); do
		pane -S -300 | grep -qE "$1" && return 0
		read -r -t 0.1 <> <(:) || true
	done
	echo "# the screen never showed /$1/${2:+ ($2)}:"
	pane | sed 's/^/#   /'
	return 1
}

test_live_view_in_a_terminal() {
	need_root
	command -v tmux >/dev/null || skip "tmux is not installed (make deps installs it)"
	TMUX_SOCK=gmt$$
	trap 'tmux -L "$TMUX_SOCK" kill-server 2>/dev/null' RETURN
	tmux -L "$TMUX_SOCK" new-session -d -s v -x 120 -y 40 \
		"TERM=xterm-256color $GMT -i 0.2 -- $WL --steps 200 --step-mib 2 --step-ms 100 --out /dev/null; echo EXIT=\$?; sleep 600" ||
		return 1
	wait_screen 'host heap \(anonymous RSS\) +[0-9.]+ [KMG]iB' "the memory panel" || return 1
	wait_screen '^LEAK +host heap' "the verdict, live" || return 1
	expect 'pane | head -1 | grep -q "pid [0-9]* workload"' "the header names the target" || return 1
	expect 'pane | grep -q "^REQUESTS" && pane | grep -q "^EVENTS" && pane | grep -q "q quit"' \
		"the panels and the keys" || return 1
	keys p
	wait_screen 'PAUSED' "p pauses" || return 1
	keys p
	for ((i = 0; i < 200; i++)); do pane | grep -q PAUSED || break; read -r -t 0.1 <> <(:) || true; done
	expect '! pane | grep -q PAUSED' "p again resumes" || return 1
	keys s
	wait_screen '^MEMORY \(by rate\)' "s sorts the memory panel" || return 1
	keys Tab s
	wait_screen 'sorted by latency' "tab moves the focus to the requests" || return 1
	tmux -L "$TMUX_SOCK" resize-window -t v -x 60 -y 16
	wait_screen '^MEMORY \(by rate\) ' "still laid out at 60x16" || return 1
	expect '[ "$(pane | awk "{ if (length > 60) n++ } END { print n + 0 }")" = 0 ]' \
		"no line wider than the terminal" || return 1
	tmux -L "$TMUX_SOCK" resize-window -t v -x 30 -y 6
	wait_screen 'panels need' "a tiny terminal says what it needs" || return 1
	tmux -L "$TMUX_SOCK" resize-window -t v -x 120 -y 40
	keys q
	wait_screen 'EXIT=0' "q quits" || return 1
	expect 'pane -S -300 | grep -q "^Verdicts"' "and the report follows" || return 1
	expect 'pane -S -300 | grep -q "LEAK: host heap"' "with the same verdict" || return 1
}

test_plain_lines_when_not_a_terminal() {
	need_root
	"$GMT" -i 0.2 -- "$WL" --steps 20 --step-mib 4 --step-ms 100 --out /dev/null \
		>"$T/r.txt" 2>"$T/err" || return 1
	expect '[ "$(grep -c "^gpumemtrace: *[0-9.]* s .*host_anon" "$T/err")" -ge 5 ]' \
		"a line each interval: $(head -3 "$T/err")" || return 1
	expect 'grep -q "| leak host_anon" "$T/err"' "with the verdict so far" || return 1
	expect 'grep -q "^Verdicts" "$T/r.txt"' "and the report on stdout" || return 1
	"$GMT" -q -i 0.2 -- "$WL" --steps 4 --step-ms 100 --out /dev/null >/dev/null 2>"$T/quiet" ||
		return 1
	expect '[ ! -s "$T/quiet" ]' "-q: nothing on stderr: $(head -3 "$T/quiet")" || return 1
}

test_replay_live_plays_a_recording() {
	"$ROOT/.output/gmt-scenario" host-cache "$T/h.gmt" 3 || return 1
	"$GMT" replay --live --speed 50 "$T/h.gmt" >"$T/r.txt" 2>"$T/err" || return 1
	expect '[ "$(grep -c "^gpumemtrace: " "$T/err")" -ge 2 ]' "lines as it plays: $(cat "$T/err")" ||
		return 1
	expect 'grep -q "bounded_cache host_anon" "$T/err"' "the verdict appears while it plays" || return 1
	"$GMT" replay "$T/h.gmt" >"$T/plain.txt" || return 1
	expect 'cmp -s "$T/r.txt" "$T/plain.txt"' "the same report as a plain replay" || return 1
	expect '! "$GMT" replay --speed 2 "$T/h.gmt" 2>/dev/null' "--speed needs --live" || return 1
}

# `make run`'s demo, run for 90 s: the real llama-server on lavapipe, its
# requests (streams end at their last chunk) and its prompt cache filling to
# --cache-ram, judged a bounded cache or settled growth, said while it runs
# and in the report
test_demo_shows_the_prompt_cache() {
	need_root
	need_lavapipe
	need_llama
	(cd "$ROOT" && DEMO_SECONDS=90 DEMO_OUT="$T/demo.gmt" tools/demo.sh) >"$T/r.txt" 2>"$T/err" ||
		return 1
	# DEMO_KEEP=DIR keeps the recording and the report, to replay a failure
	[ -z "${DEMO_KEEP:-}" ] || cp "$T/demo.gmt" "$T/r.txt" "$DEMO_KEEP/"
	# a cache of fixed steps to its limit, or growth that levelled off. On a
	# busy machine there are fewer requests (in 60 s, 32 to 43 with a CPU hog
	# against 51 to 72 without), and the cache's creep once full needs more
	# of them to tell from growth: one hogged run of 8 was "growing, too
	# early to tell"
	expect 'grep -q "^  BOUNDED CACHE: host heap\|^  SETTLED: host heap" "$T/r.txt"' \
		"the verdict: $(sed -n "/^Verdicts/,/^HTTP/p" "$T/r.txt" | head -8 | tr -s "\n " "  ")" ||
		return 1
	expect 'tr -s "\n " "  " <"$T/r.txt" | grep -q -- "--cache-ram 8 MiB, from the command line"' \
		"it names the limit" || return 1
	expect '[ "$(grep -c " 200 .* chunked " "$T/r.txt")" -ge 4 ]' \
		"streamed requests end at their last chunk: $(grep -A 6 "^HTTP requests" "$T/r.txt")" ||
		return 1
	expect 'grep -q "bounded_cache host_anon\|settled host_anon" "$T/err"' "said while it ran"
}

# the trace-file reader, the model and the reports against corrupt and
# hostile input (tests/fuzz/replay.c, libFuzzer with ASan and UBSan), from a
# corpus of recordings: the field reports' scenarios and a real run
test_fuzz_replay_short() {
	need_root
	local s out rc
	for s in host-cache fixed-step-leak eviction graph-growth startup-oom warmup; do
		"$ROOT/.output/gmt-scenario" "$s" "$T/$s.gmt" 1 >/dev/null || return 1
	done
	"$GMT" record -o "$T/real.gmt" -q -- "$WL" --steps 4 --step-mib 2 --out /dev/null \
		>/dev/null || return 1
	python3 "$ROOT/tests/fuzz/corpus.py" "$T/corpus" "$T"/*.gmt || return 1
	# what the fuzzer found before, fixed: each input run once
	out=$(cd "$T" && timeout -k 5 60 "$ROOT/.output/tests/fuzz-replay" \
		"$ROOT"/tests/fuzz/regressions/* 2>&1)
	rc=$?
	expect '[ $rc = 0 ]' "the inputs found before: $(grep -A 3 'ERROR\|runtime error' <<<"$out" | head -8)" ||
		return 1
	mkdir -p "$T/found"
	out=$(cd "$T/found" && timeout -k 5 120 "$ROOT/.output/tests/fuzz-replay" -max_len=16384 \
		-max_total_time=30 -print_final_stats=1 "$T/corpus" 2>&1)
	rc=$?
	expect '[ $rc = 0 ] || [ -n "$(ls "$T/found")" ]' "the fuzzer ran: $(tail -3 <<<"$out")" ||
		return 1
	echo "# $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' <<<"$out")"
	expect '[ -z "$(ls "$T/found")" ]' \
		"no crash: $(grep -A 3 'ERROR\|runtime error' <<<"$out" | head -8)"
}

# headers of 16 to 19 bytes once made the size check underflow
test_replay_survives_short_headers() {
	local n rc
	for n in 8 15 16 17 18 19 20 23; do
		{ printf 'GMTTRACE\001\000\000\000\377\377\377\177'; printf 'abcdefgh'; } |
			head -c "$n" >"$T/x.gmt"
		"$GMT" replay "$T/x.gmt" >/dev/null 2>"$T/err"
		rc=$?
		expect '[ $rc = 1 ] && grep -q "not a gpumemtrace trace file\|cut short" "$T/err"' \
			"$n bytes: exit $rc, $(cat "$T/err")" || return 1
	done
}

# a call whose return never comes (the stand-in jumps out of it, as an
# exception would) must not hide the calls after it on that thread
test_gpu_lost_return_does_not_silence_a_thread() {
	need_root
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached CUDA driver API" start_tracer --json -- "$GW" --lib "$FAKE/libcuda.so.1" \
		--escape 5 --wait "$T/go" --out "$T/done" || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	check_gpu_kinds "$T/gmt.out" "$T/wl.json"
}

# servers that peek before they read, read into vectors whose first piece is
# short (the path is read across the pieces, never from the memory after the
# first: a secret lies there), and end connections by close_range and dup2
test_http_peek_vectors_close_range_dup2() {
	need_root
	local secret=gmt-secret-$RANDOM$RANDOM pid q='.processes[0].requests'
	mkfifo "$T/ready" "$T/hold"
	SECRET=$secret python3 "$ROOT/tests/http/edges.py" "$T/ready" "$T/hold" >"$T/out" 2>&1 &
	pid=$!
	await_line "$T/ready" "$pid" "tests/http/edges.py" "$T/out" >/dev/null || return 1
	start_tracer record -o "$T/e.gmt" --json -p "$pid" || return 1
	echo go >"$T/hold"
	wait_tracer || return 1
	expect 'grep -q "served 4" "$T/out"' "the server served: $(cat "$T/out")" || return 1
	expect '[ "$(jq -c "[$q[] | .path]" "$T/gmt.out")" = "[\"/peeked\",\"/vector-path-beyond\",\"/close-range\",\"/dup2\"]" ]' \
		"each request once, the vector's path read across its pieces: $(jq -c "[$q[] | .path]" "$T/gmt.out")" ||
		return 1
	expect '[ "$(jq -c "[$q[] | .end]" "$T/gmt.out")" = "[\"length\",\"length\",\"close\",\"close\"]" ]' \
		"ends (the vector's length from its second piece): $(jq -c "[$q[] | .end]" "$T/gmt.out")" || return 1
	node "$ROOT/tests/http/undump.mjs" "$T/e.gmt" >"$T/raw" || return 1
	expect '! grep -qa "$secret" "$T/raw"' "the secret is nowhere in the recording"
}

# the tracer ignores SIGPIPE (its report may go to a closed pipe); a command
# it starts must not inherit that, nor a blocked Ctrl-C
test_spawned_command_has_default_signals() {
	need_root
	"$GMT" -q -- sh -c 'grep -E "^Sig(Ign|Blk)" /proc/self/status >"$0"' "$T/sig" >/dev/null ||
		return 1
	expect '[ -s "$T/sig" ]' "the command ran" || return 1
	expect '[ $(( 0x$(awk "/^SigIgn/ { print \$2 }" "$T/sig") & 0x1000 )) = 0 ]' \
		"SIGPIPE not ignored: $(cat "$T/sig")" || return 1
	expect '[ $(( 0x$(awk "/^SigBlk/ { print \$2 }" "$T/sig") & 0x4002 )) = 0 ]' \
		"SIGINT and SIGTERM not blocked: $(cat "$T/sig")"
}

# a group loaded against the feature probes' advice (GMT_FORCE_GROUPS): when
# the kernel refuses it (this locked-down kernel refuses fexit), it is listed
# as skipped with the kernel's reason, and everything else runs
test_refused_group_is_skipped_and_the_rest_runs() {
	need_root
	local st
	GMT_FORCE_GROUPS=fexit:handle_mm_fault "$GMT" --json -- "$WL" --steps 4 --step-mib 2 \
		--out "$T/wl.json" >"$T/r.json" 2>"$T/err" || return 1
	st=$(jqr '.probes[] | select(.name == "fexit:handle_mm_fault") | .status' "$T/r.json")
	expect '[ "$st" = attached ] || { [ "$st" = skipped ] &&
		jqr ".probes[] | select(.name == \"fexit:handle_mm_fault\") | .reason" "$T/r.json" |
		grep -q "the kernel refused fexit_handle_mm_fault"; }' \
		"$(jq -c '.probes[] | select(.name == "fexit:handle_mm_fault")' "$T/r.json")" || return 1
	expect '[ "$(jqr ".probes[] | select(.name == \"syscalls:mmap/munmap/mremap/brk\") | .status" "$T/r.json")" = attached ]' \
		"the rest attached" || return 1
	expect '! grep -q "BEGIN PROG LOAD LOG\|failed to load" "$T/err"' \
		"no verifier log without -v: $(head -3 "$T/err")" || return 1
	check_growth "$T/r.json" "$T/wl.json"
}

# the runner itself: a test that leaves a detached child holding its output,
# and one that hangs, end in their time limit; nothing of theirs outlives them
test_runner_leaves_nothing_behind() {
	local mark=gmt-runner-mark-$RANDOM$RANDOM t0
	# indented, so that the runner does not take these for its own tests
	cat >"$T/t.sh" <<-TESTS
		test_leaves_a_child() {
			setsid sh -c 'exec -a $mark sleep 300' &
			echo "# left a child"
			return 1
		}
		test_hangs() {
			exec -a $mark-hang sleep 300
		}
	TESTS
	t0=$SECONDS
	GMT_TEST_FILES="$T/t.sh" GMT_TEST_TIMEOUT=3 timeout 60 "$ROOT/tests/run.sh" test_ \
		>"$T/out" 2>&1
	expect '(( SECONDS - t0 < 30 ))' "the run ended in $((SECONDS - t0)) s" || return 1
	expect 'grep -q "^0 passed, 2 failed, 0 skipped" "$T/out"' "$(tail -3 "$T/out")" || return 1
	expect 'grep -q "not ok test_hangs - timed out" "$T/out"' "the hang timed out" || return 1
	expect '! pgrep -f "$mark" >/dev/null' "nothing left: $(pgrep -af "$mark")"
}

# a test waiting on a program that could not start fails at once, in its
# words (await_line, await_all), not at its time limit; a test that fails
# on a command's error without saying why shows that error
test_runner_fails_fast_with_the_reason() {
	local t0
	cat >"$T/t.sh" <<-'TESTS'
		test_waits_for_one_that_died() {
			mkfifo "$T/ready"
			sh -c 'echo "the program cannot start: no such library" >&2; exit 3' 2>"$T/e" &
			await_line "$T/ready" $! "the program" "$T/e" >/dev/null
		}
		test_reads_from_one_that_died() {
			mkfifo "$T/out"
			sh -c 'echo "it crashed" >&2; exit 3' 2>"$T/e" &
			await_all "$T/out" "$T/got" $! "the workload" "$T/e"
		}
		test_unmarked_error() {
			ls /nonexistent-gmt-dir || return 1
		}
		test_went_on_past_a_failed_expectation() {
			expect '[ 1 = 2 ]' "one is two"
			true
		}
	TESTS
	t0=$SECONDS
	GMT_TEST_FILES="$T/t.sh" GMT_TEST_TIMEOUT=60 timeout 90 "$ROOT/tests/run.sh" test_ \
		>"$T/out" 2>&1
	expect '(( SECONDS - t0 < 30 ))' "the run ended in $((SECONDS - t0)) s, not at the 60 s limit" ||
		return 1
	expect 'grep -q "^0 passed, 4 failed, 0 skipped" "$T/out"' '@$(tail -3 "$T/out")' || return 1
	expect 'grep -q "^# an expectation above failed, though the test went on" "$T/out"' \
		'@$(cat "$T/out")' || return 1
	expect 'grep -q "^# the program (pid [0-9]*) ended before it was ready" "$T/out" &&
		grep -q "^#   the program cannot start: no such library" "$T/out"' '@$(cat "$T/out")' || return 1
	expect 'grep -q "^# the workload (pid [0-9]*) ended before it was ready" "$T/out" &&
		grep -q "^#   it crashed" "$T/out"' '@$(cat "$T/out")' || return 1
	expect 'grep -q "^#   ls: cannot access .*/nonexistent-gmt-dir" "$T/out"' '@$(cat "$T/out")'
}

# A mapping's length is address space: /proc/PID/smaps, read at the end,
# says what each mapping made while traced holds. Each step maps 8 MiB it
# touches and 32 MiB it never touches (the workload's own account).
test_mappings_hold_their_resident_bytes() {
	need_root
	local want spare
	mkfifo "$T/hold"
	start_workload --steps 4 --step-mib 8 --spare-mib 32 --hold "$T/hold"
	start_tracer --json -p "$WL_PID" || return 1
	release_workload
	kill -INT "$GMT_PID"
	wait_tracer || return 1
	echo go >"$T/hold"
	want=$(jqr '.bytes / .mmaps' "$T/wl.json")
	spare=$(jqr '.spare_bytes / .mmaps' "$T/wl.json")
	expect '[ "$(jq --argjson s "$spare" "[.processes[0].mappings.largest[] |
		select(.size_bytes == \$s and .resident_bytes == 0)] | length" "$T/gmt.out")" = 4 ]' \
		"four untouched mappings hold nothing: $(jq -c '[.processes[0].mappings.largest[] | [.size_bytes, .resident_bytes]]' "$T/gmt.out")" ||
		return 1
	expect '[ "$(jq --argjson w "$want" "[.processes[0].mappings.largest[] |
		select(.size_bytes == \$w and .resident_bytes >= 0.98 * \$w and
		.resident_bytes <= \$w)] | length" "$T/gmt.out")" = 4 ]' \
		"four touched mappings hold their bytes" || return 1
	expect '[ "$(jq --argjson b "$(jqr .bytes "$T/wl.json")" ".processes[0].rss.anon.change_bytes |
		. >= 0.98 * \$b and . <= 1.02 * \$b" "$T/gmt.out")" = true ]' \
		"RSS grew by what was touched: $(jqr .processes[0].rss.anon.change_bytes "$T/gmt.out")"
}

# the tracer killed outright while recording: what reached the file replays
# (it is written at least every second), the growth made before included
test_sigkill_while_recording_keeps_what_was_written() {
	need_root
	local i grown=0
	mkfifo "$T/hold"
	start_workload --steps 4 --step-mib 8 --hold "$T/hold"
	start_tracer record -o "$T/k.gmt" -p "$WL_PID" || return 1
	release_workload
	# until the growth is in the file (blocks go out within a second)
	for ((i = 0; i < 100; i++)); do
		grown=$("$GMT" replay --json "$T/k.gmt" 2>/dev/null |
			jq '.processes[0].rss.anon.change_bytes // 0')
		((grown * 100 >= 32 * MIB * 98)) && break
		read -r -t 0.1 <> <(:) || true
	done
	kill -KILL "$GMT_PID"
	wait "$GMT_PID"
	exec 3<&-
	echo go >"$T/hold"
	expect '((grown * 100 >= 32 * MIB * 98))' "the growth reached the file: $grown" || return 1
	"$GMT" replay --json "$T/k.gmt" >"$T/r.json" 2>"$T/err" || return 1
	check_growth "$T/r.json" "$T/wl.json"
}

# -o on a full file system: a clear message, the report still printed, and
# what was written replays
test_full_disk_under_output() {
	need_root
	mkdir "$T/full"
	mount -t tmpfs -o size=4k tmpfs "$T/full" || return 1
	"$GMT" record -o "$T/full/x.gmt" -q -- "$WL" --steps 300 --step-mib 1 --out /dev/null \
		>"$T/r.txt" 2>"$T/err"
	expect 'grep -q "writing $T/full/x.gmt failed (No space left on device): the file holds what was written before" "$T/err"' \
		"the message: $(cat "$T/err")" || { umount "$T/full"; return 1; }
	expect 'grep -q "^Verdicts" "$T/r.txt"' "the report printed" || { umount "$T/full"; return 1; }
	"$GMT" replay "$T/full/x.gmt" >"$T/replay.txt" 2>/dev/null
	expect 'grep -q "file is truncated\|^Events: [1-9]" "$T/replay.txt"' \
		"what was written replays: $(tail -3 "$T/replay.txt")"
	local rc=$?
	umount "$T/full"
	return $rc
}

# A root target in a mount namespace of its own loads a planted "driver";
# gpumemtrace's helper, which loads the drivers it finds to ask them where
# their entry points are, must run it with no more than the target may
# have: never as the host's root, no capabilities, no new privileges.
test_helper_never_runs_target_code_as_root() {
	need_root
	local rec pid
	chmod 0755 "$T" # the helper, nobody here, reads the driver as anyone may
	mkdir -m 0777 "$T/drv"
	cp "$FAKE/vkdriver.so" "$T/drv/libvk_planted.so"
	chmod 0755 "$T/drv/libvk_planted.so"
	touch "$T/drv/record.txt"
	chmod 0666 "$T/drv/record.txt" # whoever loads it may write here
	mkfifo "$T/ready" "$T/hold"
	unshare -m python3 -c 'import ctypes, sys
ctypes.CDLL(sys.argv[1])
open(sys.argv[2], "w").write("ready\n")
open(sys.argv[3]).read()' "$T/drv/libvk_planted.so" "$T/ready" "$T/hold" 2>"$T/py.err" &
	pid=$!
	await_line "$T/ready" "$pid" "python3 in a mount namespace of its own" "$T/py.err" \
		>/dev/null || return 1
	pid=$(pgrep -P "$pid" python3 || echo "$pid")
	start_tracer --json -p "$pid" || return 1
	kill -INT "$GMT_PID"
	wait_tracer
	echo go >"$T/hold"
	expect 'grep -q "^Name:.*gpumemtrace-vk" "$T/drv/record.txt"' \
		"the helper loaded the driver: $(cat "$T/drv/record.txt" 2>/dev/null)" || return 1
	rec=$(awk '/^Name:.*gpumemtrace-vk/ { on = 1 } on { print } /^--/ { on = 0 }' "$T/drv/record.txt")
	expect '[ "$(awk "/^Uid:/ { print \$3 }" <<<"$rec")" != 0 ]' "not as root: $rec" || return 1
	expect '[ "$(awk "/^CapEff:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ] &&
		[ "$(awk "/^CapPrm:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ]' \
		"no capabilities: $rec" || return 1
	expect '[ "$(awk "/^NoNewPrivs:/ { print \$2 }" <<<"$rec")" = 1 ]' "no new privileges: $rec"
}

# A target in a user namespace of its own, root there and uid 100000 on the
# host, in a mount namespace of its own: the helper runs its driver in that
# user namespace, as its root there (host uid 100000, which is all it has),
# with no capabilities, none to gain, and no new privileges.
test_helper_runs_target_code_in_its_user_namespace() {
	need_root
	local rec pid hpid ns
	chmod 0755 "$T"
	mkdir -m 0777 "$T/drv"
	cp "$FAKE/vkdriver.so" "$T/drv/libvk_planted.so"
	chmod 0755 "$T/drv/libvk_planted.so"
	touch "$T/drv/record.txt"
	chmod 0666 "$T/drv/record.txt"
	mkfifo -m 0666 "$T/unshared" "$T/mapped" "$T/ready" "$T/hold"
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000 | 0x00020000):  # CLONE_NEWUSER | CLONE_NEWNS
    sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
open(sys.argv[2], "w").write("%d\n" % os.getpid())
open(sys.argv[3]).read()
os.setresgid(0, 0, 0)
os.setresuid(0, 0, 0)
ctypes.CDLL(sys.argv[1])
open(sys.argv[4], "w").write("ready\n")
open(sys.argv[5]).read()' "$T/drv/libvk_planted.so" "$T/unshared" "$T/mapped" "$T/ready" "$T/hold" \
		2>"$T/py.err" &
	pid=$!
	await_line "$T/unshared" "$pid" "python3 in a user namespace of its own" "$T/py.err" \
		>/dev/null || return 1
	echo "0 100000 65536" >"/proc/$pid/uid_map" && echo "0 100000 65536" >"/proc/$pid/gid_map" ||
		{ echo go >"$T/mapped"; expect false "the namespace's ids mapped"; return 1; }
	echo go >"$T/mapped"
	await_line "$T/ready" "$pid" "python3 as root in its user namespace" "$T/py.err" \
		>/dev/null || return 1
	ns=$(readlink "/proc/$pid/ns/user")
	start_tracer --json -p "$pid" || return 1
	kill -INT "$GMT_PID"
	wait_tracer
	echo go >"$T/hold"
	rec=$(awk '/^Name:.*gpumemtrace-vk/ { on = 1 } on { print } /^--/ { on = 0 }' "$T/drv/record.txt")
	expect '[ -n "$rec" ]' "the helper loaded the driver: $(cat "$T/drv/record.txt")" || return 1
	hpid=$(awk '/^Pid:/ { print $2 }' <<<"$rec")
	expect '[ "$(awk "/^UserNS:/ { print \$2 }" <<<"$rec")" = "$ns" ] && [ "$ns" != "$(readlink /proc/self/ns/user)" ]' \
		"in the target's user namespace ($ns): $rec" || return 1
	expect '[ "$(stat -c %u "$T/drv/who.$hpid")" = 100000 ]' \
		"as the host uid the target has (100000), not $(stat -c %u "$T/drv/who.$hpid" 2>&1)" || return 1
	expect '[ "$(awk "/^CapEff:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ] &&
		[ "$(awk "/^CapPrm:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ] &&
		[ "$(awk "/^CapBnd:/ { print \$2 }" <<<"$rec")" = 0 ]' \
		"no capabilities, none to gain: $rec" || return 1
	expect '[ "$(awk "/^NoNewPrivs:/ { print \$2 }" <<<"$rec")" = 1 ]' "no new privileges: $rec"
}

# the same in a chroot (same mount namespace, another root): the helper finds
# the driver where the target does, in its root, and still runs it as nobody
test_helper_finds_a_driver_in_the_target_root() {
	need_root
	local r=$T/root rec pid lib
	chmod 0755 "$T"
	mkdir -p "$r/drv" "$r/lib64" "$r/bin"
	chmod 0777 "$r/drv"
	for lib in $(ldd "$ROOT/.output/tests/dlhold" | grep -o '/[^ ]*'); do
		mkdir -p "$r$(dirname "$lib")"
		cp "$lib" "$r$lib"
	done
	cp "$ROOT/.output/tests/dlhold" "$r/bin/"
	cp "$FAKE/vkdriver.so" "$r/drv/libvk_planted.so"
	touch "$r/drv/record.txt"
	chmod 0666 "$r/drv/record.txt"
	mkfifo "$r/ready" "$r/hold"
	chroot "$r" /bin/dlhold /drv/libvk_planted.so /ready /hold &
	pid=$!
	read -r _ <"$r/ready"
	start_tracer --json -p "$pid" || return 1
	kill -INT "$GMT_PID"
	wait_tracer
	echo go >"$r/hold"
	rec=$(awk '/^Name:.*gpumemtrace-vk/ { on = 1 } on { print } /^--/ { on = 0 }' "$r/drv/record.txt")
	expect '[ -n "$rec" ]' "the helper loaded the driver in the target's root: $(cat "$r/drv/record.txt")" ||
		return 1
	expect '[ "$(awk "/^Uid:/ { print \$3 }" <<<"$rec")" != 0 ] &&
		[ "$(awk "/^CapEff:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ]' \
		"as nobody, with no capabilities: $rec"
}

# Every command the tests and tools/ call comes from a package that
# tools/deps.sh installs, from what those depend on, or from Debian's
# essential set (tests/commands.py, by shfmt's parse of each script); a
# command nothing installs is named. A planted script that calls one that
# deps.sh leaves out (debootstrap, which only tests/fresh-debian.sh needs
# and installs itself) is caught, whether this machine has it or not.
test_deps_install_every_command_the_tests_call() {
	local files=()
	for f in "$ROOT"/tests/*.sh "$ROOT"/tests/vm/*.sh "$ROOT"/tools/*.sh; do
		[ "${f##*/}" = fresh-debian.sh ] || files+=("$f")
	done
	expect 'python3 "$ROOT/tests/commands.py" "${files[@]}" >"$T/cmds" 2>&1' '@$(cat "$T/cmds")' ||
		return 1
	python3 "$ROOT/tests/commands.py" --list "${files[@]}" >"$T/list" || return 1
	echo "# $(wc -l <"$T/list") commands: $(cut -d' ' -f1 "$T/list" | tr '\n' ' ' | cut -c1-200)..."
	expect 'grep -qx "curl curl" "$T/list" && grep -qx "systemd-analyze systemd" "$T/list"' \
		'@curl and systemd-analyze from deps.sh: $(grep -E "^(curl|systemd-analyze) " "$T/list")' ||
		return 1
	printf 'f() { debootstrap --variant=minbase bookworm "$1"; }\n' >"$T/planted.sh"
	expect '! python3 "$ROOT/tests/commands.py" "$T/planted.sh" >"$T/planted" 2>&1 &&
		grep -q "planted.sh:1 .*calls debootstrap" "$T/planted"' \
		'@the planted call named: $(cat "$T/planted")'
}

# mem_cgroup NAME: a new cgroup where the memory controller is (cgroup v2
# where it is enabled, else v1's memory hierarchy), its folder in CG_DIR and
# its limit file in CG_LIMIT; the caller removes it (rm_cgroup)
mem_cgroup() {
	local v2 v1
	v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	if [ -n "$v2" ] && grep -qw memory "$v2/cgroup.controllers" 2>/dev/null &&
		grep -qw memory "$v2/cgroup.subtree_control" 2>/dev/null; then
		CG_DIR=$v2/$1 CG_LIMIT=memory.max CG_PATH=/$1
	elif [ -n "$v1" ]; then
		CG_DIR=$v1/$1 CG_LIMIT=memory.limit_in_bytes CG_PATH=/$1
	else
		skip "no cgroup hierarchy with the memory controller"
	fi
	mkdir "$CG_DIR" || return 1
}

rm_cgroup() {
	local p
	for p in $(cat "$CG_DIR/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rmdir "$CG_DIR" 2>/dev/null
}

# A leak in a cgroup whose memory limit (512 MiB) is far below what the host
# has free: the verdict says it reaches that limit, names the cgroup and the
# limit the cgroup file holds, and projects from the room the cgroup leaves
test_leak_runs_out_at_its_cgroup_limit() {
	need_root
	local cg=gmt-limit-$$ f limit rate used secs
	mem_cgroup "$cg" || return 1
	echo $((512 * MIB)) >"$CG_DIR/$CG_LIMIT" || { rm_cgroup; return 1; }
	limit=$(cat "$CG_DIR/$CG_LIMIT")
	"$GMT" -q --json -i 0.2 -- sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh \
		"$CG_DIR" "$WL" --steps 20 --step-mib 4 --step-ms 100 --out /dev/null >"$T/r.json"
	rm_cgroup
	f=$(jq -c '[.findings[] | select(.kind == "leak" and .category == "host_anon")][0]' "$T/r.json")
	expect '[ "$f" != null ]' "a host leak: $(jq -c '[.findings[] | [.kind, .category]]' "$T/r.json")" ||
		return 1
	expect '[ "$(jq -c .reasons <<<"$f")" = "[\"leak\",\"runs_out_cgroup\",\"try_host_stacks\"]" ]' \
		"it runs out at the cgroup's limit: $(jq -r .message <<<"$f")" || return 1
	expect '[ "$(jqr .cgroup <<<"$f")" = "$CG_PATH" ] && [ "$(jqr .cgroup_limit_bytes <<<"$f")" = "$limit" ]' \
		"the cgroup $CG_PATH and its limit $limit: $(jq -c '{cgroup, cgroup_limit_bytes}' <<<"$f")" ||
		return 1
	expect '[ "$(jq -c "[.processes[0].memory_limit | .cgroup, .file, .limit_bytes]" "$T/r.json")" = "[\"$CG_PATH\",\"$CG_LIMIT\",$limit]" ]' \
		"the process's memory_limit: $(jq -c .processes[0].memory_limit "$T/r.json")" || return 1
	# the projection: what the limit leaves, at the leak's rate
	rate=$(jqr .bytes_per_second <<<"$f")
	used=$(jqr .cgroup_used_bytes <<<"$f")
	secs=$(jqr .seconds_to_exhaustion <<<"$f")
	expect 'awk -v s="$secs" -v l="$limit" -v u="$used" -v r="$rate" "BEGIN { w = (l - u) / r
		exit !(s > 0.95 * w && s < 1.05 * w) }"' \
		"$secs s to go: ($limit - $used) / $rate" || return 1
	# without a limit of its own, the host's memory ends it
	"$GMT" -q --json -i 0.2 -- "$WL" --steps 20 --step-mib 4 --step-ms 100 --out /dev/null \
		>"$T/free.json" || return 1
	expect '[ "$(jqr "[.findings[] | select(.kind == \"leak\" and .category == \"host_anon\")][0].limited_by" "$T/free.json")" != "its cgroup'"'"'s memory limit" ]' \
		'@not the cgroup: $(jq -c "[.findings[] | [.kind, .limited_by]]" "$T/free.json")'
}

# A heap that grows into swap: a cgroup holds the workload to 64 MiB of
# RAM, a swap file takes the rest, RssAnon stays near 64 MiB. The host heap
# is judged as RssAnon + VmSwap: it grew by what the workload touched
# (its own log), and ends where /proc/PID/status says it is.
test_heap_growing_into_swap_is_counted() {
	need_root
	local cg=gmt-swap-$$ f want got anon swap
	dd if=/dev/zero of="$T/swap" bs=1M count=256 status=none && chmod 600 "$T/swap" &&
		mkswap "$T/swap" >/dev/null || return 1
	trap 'swapoff "$T/swap" 2>/dev/null; rm_cgroup' EXIT
	trap 'exit 1' TERM INT
	swapon "$T/swap" 2>"$T/swapon.err" || skip "swapon refused: $(cat "$T/swapon.err")"
	mem_cgroup "$cg" || return 1
	echo $((64 * MIB)) >"$CG_DIR/$CG_LIMIT" || return 1
	mkfifo "$T/hold" "$T/done"
	"$GMT" -q --json -i 0.2 -- sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh \
		"$CG_DIR" "$WL" --steps 20 --step-mib 8 --step-ms 50 --out "$T/done" --hold "$T/hold" \
		>"$T/r.json" &
	local gmt=$!
	await_all "$T/done" "$T/wl.json" "$gmt" "gpumemtrace and the workload" || return 1
	local pid
	pid=$(jqr .pid "$T/wl.json")
	anon=$(awk '/^RssAnon:/ { print $2 * 1024 }' "/proc/$pid/status")
	swap=$(awk '/^VmSwap:/ { print $2 * 1024 }' "/proc/$pid/status")
	echo go >"$T/hold"
	wait $gmt || return 1
	echo "# /proc/$pid/status at the end: RssAnon $anon, VmSwap $swap"
	expect '[ "$swap" -gt $((32 * MIB)) ]' "it swapped: VmSwap $swap" || return 1
	f=$(jq -c '[.findings[] | select(.category == "host_anon")][0]' "$T/r.json")
	expect '[ "$(jqr .where <<<"$f")" = "host heap (anonymous RSS + swap)" ]' \
		"judged with swap: $(jqr .where <<<"$f")" || return 1
	want=$(jqr .bytes "$T/wl.json")
	got=$(jqr '.last_bytes - .first_bytes' <<<"$f")
	expect '(( got >= want - RSS_SLACK - want / 50 && got <= want + RSS_SLACK + want / 50 ))' \
		"the heap grew $got, the workload touched $want" || return 1
	got=$(jqr .last_bytes <<<"$f")
	expect '(( got >= anon + swap - RSS_SLACK && got <= anon + swap + RSS_SLACK ))' \
		"it ends at $got, /proc says RssAnon + VmSwap = $((anon + swap))"
}
