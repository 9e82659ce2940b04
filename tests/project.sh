# The project: the binary, the format and layering rules, messages, the runner itself and the deps list.
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

test_binary_is_static() {
	expect '[[ $(file "$GMT") == *"statically linked"* ]]' "file says statically linked"
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
--rotate-size 1M -p 1 -o x.gmt|--rotate-size, --rotate-age, --max-disk, --max-age and --keep go with --watch -o DIR
-p 1 -o /tmp/|/tmp/ is a directory: -o DIR, a file per process, goes with --watch
--watch -o /tmp/x.gmt --keep 3|--rotate-size, --rotate-age, --max-disk, --max-age and --keep go with --watch -o DIR
--watch -o /tmp/x.gmt --max-disk 1G|--max-disk, --max-age and --keep go with --watch -o DIR
--watch -o /tmp/ --max-disk 1K|--max-disk must be at least 4K
--watch -o /tmp/ --max-age 2w|invalid --max-age '2w'
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

test_format_is_clean() {
	local bad
	bad=$(cd "$ROOT" && clang-format --dry-run bpf/*.c bpf/*.h user/*.c user/*/*.c user/*/*.h tests/*.c \
		tests/unit/*.c tests/unit/*.h tests/fake/*.c helper/*.c tools/*.c 2>&1 |
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

# a test that names a time limit of its own on the line before it ends at
# that limit, not at the runner's
test_runner_a_test_of_its_own_time_limit() {
	local mark=gmt-runner-mark-$RANDOM$RANDOM t0
	cat >"$T/t.sh" <<-TESTS
		# time limit: 6 s
		test_hangs_with_a_limit() {
			exec -a $mark sleep 300
		}
	TESTS
	t0=$SECONDS
	GMT_TEST_FILES="$T/t.sh" GMT_TEST_TIMEOUT=200 timeout 60 "$ROOT/tests/run.sh" test_ \
		>"$T/out" 2>&1
	expect '(( SECONDS - t0 < 30 ))' "the run ended in $((SECONDS - t0)) s, not at 200" || return 1
	expect 'grep -q "not ok test_hangs_with_a_limit - timed out" "$T/out"' "$(tail -3 "$T/out")" ||
		return 1
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
	# one pass (shfmt parses every script): the list, and what is missing
	expect 'python3 "$ROOT/tests/commands.py" --list "${files[@]}" >"$T/list" 2>&1' \
		'@$(grep "calls \\|cannot parse" "$T/list")' || return 1
	echo "# $(wc -l <"$T/list") commands: $(cut -d' ' -f1 "$T/list" | tr '\n' ' ' | cut -c1-200)..."
	expect 'grep -qx "curl curl" "$T/list" && grep -qx "systemd-analyze systemd" "$T/list"' \
		'@curl and systemd-analyze from deps.sh: $(grep -E "^(curl|systemd-analyze) " "$T/list")' ||
		return 1
	printf 'f() { debootstrap --variant=minbase bookworm "$1"; }\n' >"$T/planted.sh"
	expect '! python3 "$ROOT/tests/commands.py" "$T/planted.sh" >"$T/planted" 2>&1 &&
		grep -q "planted.sh:1 .*calls debootstrap" "$T/planted"' \
		'@the planted call named: $(cat "$T/planted")'
}

# the runner sources every test file into each test's shell: a helper
# defined in two files is the last one's in all of them (deploy.sh's
# metric() once took the place of export.sh's, and a test failed that way
# only in a full run)
test_test_files_define_each_function_once() {
	local dup
	dup=$(grep -Ho "^[a-zA-Z_][a-zA-Z_0-9]*()" "$ROOT"/tests/*.sh | sed 's|.*/||' |
		awk -F: '{ n[$2]++; f[$2] = f[$2] " " $1 } END { for (k in n) if (n[k] > 1) print k f[k] }')
	expect '[ -z "$dup" ]' "functions defined in two test files: $dup"
}
