# What a traced process's call frame information, and a trace file given
# to replay, may try against the tracer (issue 32): sourced by tests/run.sh
# after tests/lib.sh and tests/integration.sh.

# hostile_unwind_target DIR: DIR/hostile-unw, a program whose functions
# touch fresh anonymous memory under CFI that says the return address (or
# the CFA) is at 0xfffffffffffffffa; it waits for a line on DIR/go, runs
# them, and writes "done" to DIR/done
hostile_unwind_target() {
	cat >"$1/hostile.s" <<'EOF'
	.text
# touch_*(p, n): one byte a page of [p, p + n), p fresh anonymous memory
	.globl	touch_expression
	.type	touch_expression, @function
touch_expression:
	.cfi_startproc
	# DW_CFA_expression rip: DW_OP_const8u 0xfffffffffffffffa
	.cfi_escape 0x10, 0x10, 0x09, 0x0e, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
1:	movb	$1, (%rdi)
	addq	$4096, %rdi
	subq	$4096, %rsi
	ja	1b
	ret
	.cfi_endproc
	.size	touch_expression, .-touch_expression

	.globl	touch_deref
	.type	touch_deref, @function
touch_deref:
	.cfi_startproc
	# DW_CFA_expression rip: DW_OP_const8u 0xfffffffffffffffa, DW_OP_deref
	.cfi_escape 0x10, 0x10, 0x0a, 0x0e, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x06
1:	movb	$1, (%rdi)
	addq	$4096, %rdi
	subq	$4096, %rsi
	ja	1b
	ret
	.cfi_endproc
	.size	touch_deref, .-touch_deref

	.globl	touch_cfa
	.type	touch_cfa, @function
touch_cfa:
	.cfi_startproc
	# DW_CFA_def_cfa_expression: DW_OP_const8u 0xfffffffffffffffa (rip at
	# CFA - 8, as the CIE says)
	.cfi_escape 0x0f, 0x09, 0x0e, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
1:	movb	$1, (%rdi)
	addq	$4096, %rdi
	subq	$4096, %rsi
	ja	1b
	ret
	.cfi_endproc
	.size	touch_cfa, .-touch_cfa
	.section .note.GNU-stack,"",@progbits
EOF
	cat >"$1/hostile.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
void touch_expression(char *p, size_t n);
void touch_deref(char *p, size_t n);
void touch_cfa(char *p, size_t n);
static void run(void (*touch)(char *, size_t))
{
	size_t n = 8 << 20;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return;
	}
	touch(p, n);
}
int main(int argc, char **argv)
{
	char line[16];
	FILE *go = fopen(argv[1], "r"), *done;
	if (argc < 3 || !go || !fgets(line, sizeof(line), go))
		return 1;
	run(touch_expression);
	run(touch_deref);
	run(touch_cfa);
	done = fopen(argv[2], "w");
	if (!done)
		return 1;
	fputs("done\n", done);
	return fclose(done) ? 1 : 0;
}
EOF
	cc -O1 -fomit-frame-pointer -o "$1/hostile-unw" "$1/hostile.c" "$1/hostile.s"
}

# The return address saved at 0xfffffffffffffffa: the check that a read
# stays in the stack slice wrapped (addr + 8 past 2^64) and the tracer
# read far outside it (SIGSEGV in memory_read). Every sampled first touch
# in those functions is unwound; the tracer lives and reports.
test_hostile_cfi_does_not_crash_the_tracer() {
	need_root
	hostile_unwind_target "$T" || return 1
	mkfifo "$T/go" "$T/done"
	"$T/hostile-unw" "$T/go" "$T/done" &
	WL_PID=$!
	start_tracer --json -i 0.1 --touch-sample 16K -p "$WL_PID" || return 1
	echo go >"$T/go"
	expect '[ "$(cat "$T/done")" = done ]' "the target ran its hostile functions" || return 1
	wait "$WL_PID"
	wait_tracer
	rc=$?
	expect '[ $rc = 0 ]' "the tracer exited with $rc: $(tail -5 "$T/gmt.err")" || return 1
	expect 'jq -e ".processes[0].pid == $WL_PID" "$T/gmt.out" >/dev/null' \
		"a report on the target: $(head -c 300 "$T/gmt.out")" || return 1
	# the touches were sampled, so the hostile CFI was read
	expect 'jq -e "[.findings[]? | select(.category == \"host_anon\")] | length > 0 or
		(.processes[0].page_faults.all.total > 2048)" "$T/gmt.out" >/dev/null' \
		"the target's touches seen: $(jq -c '.processes[0].page_faults' "$T/gmt.out")"
}

# the same under --watch, the target running as nobody
test_hostile_cfi_watch_as_nobody() {
	need_root
	local pid rc
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	hostile_unwind_target "$T" || return 1
	chmod 755 "$T" "$T/hostile-unw"
	mkfifo -m 666 "$T/go" "$T/done"
	GMT_READY="watching" start_tracer --watch --comm hostile-unw --no-tui --json -i 0.1 \
		--touch-sample 16K || return 1
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$T/hostile-unw" "$T/go" "$T/done" &
	pid=$!
	expect 'wait_line "$T/gmt.err" "tracing pid $pid"' \
		"@--watch found pid $pid: \$(tail -3 "$T/gmt.err")" || { kill "$pid"; return 1; }
	echo go >"$T/go"
	expect '[ "$(cat "$T/done")" = done ]' "the target ran its hostile functions" || return 1
	wait "$pid"
	kill -INT "$GMT_PID"
	wait_tracer
	rc=$?
	expect '[ $rc = 0 ]' "the tracer exited with $rc: $(tail -5 "$T/gmt.err")" || return 1
	expect 'jq -e "[.processes[] | select(.pid == $pid)] | length == 1" "$T/gmt.out" >/dev/null' \
		"a report on pid $pid: $(head -c 300 "$T/gmt.out")"
}
