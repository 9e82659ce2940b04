# What a traced process's call frame information, and a trace file given
# to replay, may try against the tracer (issue 32): sourced by tests/run.sh
# after tests/lib.sh and the other topic files.

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

# hostile_trace KIND FILE: a crafted trace file (docs/tracefile.md):
#   stacks  8,192 stacks of 3,274 frames each (1.3 MB; 2.5 GB in replay
#           when each frame's names took two allocations)
#   zeros   26 MB of blocks that decompress to 64 MiB of zeros each
#   zeros1m 26 MB of blocks that decompress to 1 MiB of zeros each
#   then a valid block with one stack of two frames (id 7), which the
#   replay must still see
hostile_trace() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys, zlib
kind, path = sys.argv[1], sys.argv[2]
GMT_EV_STACK = 15
info = b"tool=hostile\n"

def block(raw, comp=None):
    comp = comp if comp is not None else zlib.compress(raw, 1)
    return struct.pack("<IIII", 0x42544D47, len(comp), len(raw), zlib.crc32(comp)) + comp

def stack(sid, frames, names=b"\0\0"):
    body = struct.pack("<QQ", 0x400000, 0) * frames + names * frames
    body += bytes(-len(body) % 8)  # records are 8-byte multiples
    return struct.pack("<QIIHHIIHH", 1, 1, 1, GMT_EV_STACK, 32 + len(body), 0, sid, frames,
                       0) + body

with open(path, "wb") as f:
    f.write(b"GMTTRACE" + struct.pack("<II", 1, len(info)) + info +
            struct.pack("<I", zlib.crc32(info)))
    if kind == "stacks":
        rec = stack(0, 3274)
        raw = []
        for sid in range(8192):
            raw.append(rec[:24] + struct.pack("<I", 1000 + sid) + rec[28:])
            if len(raw) == 4:  # 4 records a block, as the writer's 256 KiB
                f.write(block(b"".join(raw)))
                raw = []
        f.write(block(b"".join(raw)))
    else:
        size = 64 << 20 if kind == "zeros" else 1 << 20
        zeros = block(bytes(size))
        for _ in range((26 << 20) // len(zeros)):
            f.write(zeros)
    f.write(block(stack(7, 2, b"kept\0libkept.so\0")))
EOF
}

# replay_bounded FILE MAX_KIB MAX_S: replays FILE into $T/replay.json under
# /usr/bin/time; fails when it takes more memory or time than that
replay_bounded() {
	local rss secs rc max_kib=$2 max_s=$3
	timeout -k 5 120 /usr/bin/time -f '%M %e' -o "$T/time" "$GMT" replay --json "$1" \
		>"$T/replay.json" 2>"$T/replay.err"
	rc=$?
	read -r rss secs <"$T/time" 2>/dev/null || { rss=0 secs=timeout; }
	echo "# $(basename "$1"): $(du -k "$1" | cut -f1) KiB file, max RSS $rss KiB, $secs s, exit $rc"
	expect '[ $rc = 0 ]' "replay exited with $rc: $(tail -3 "$T/replay.err")" || return 1
	expect '(( rss <= max_kib ))' "max RSS $rss KiB, at most $max_kib" || return 1
	expect '[ "${secs%.*}" -lt "$max_s" ]' "replay took $secs s, less than $max_s" || return 1
	# what came after the hostile part still replays
	expect '[ "$(jq .events.by_type.stack "$T/replay.json")" = 1 ]' \
		"the valid stack after it replayed: $(jq -c .events.by_type.stack "$T/replay.json")"
}

# A file's stacks cost replay what they take in it, within a bound: the
# issue's 1.3 MB file of 8,192 stacks of 3,274 frames peaked at 2.5 GB
test_replay_bounds_a_file_of_huge_stacks() {
	hostile_trace stacks "$T/stacks.gmt" || return 1
	replay_bounded "$T/stacks.gmt" $((512 * 1024)) 30 || return 1
	expect 'grep -q "3274 frames, more than the 256" "$T/replay.json" "$T/replay.err"' \
		"the replay says what it left out: $(grep -h -i stack "$T/replay.err" "$T/replay.json" | head -3)"
}

# Blocks of zeros: each said to hold 64 MiB (refused by its length), or
# 1 MiB (decompressed until the first record, which is malformed); the
# issue's 26 MB file of them cost 69 s
test_replay_bounds_blocks_of_zeros() {
	local kind
	for kind in zeros zeros1m; do
		hostile_trace "$kind" "$T/$kind.gmt" || return 1
		replay_bounded "$T/$kind.gmt" $((64 * 1024)) 4 || return 1
	done
}

# the unwinder's fuzzer (tests/fuzz/unwind.c): what it found before, each
# input once, then a short run from the seeds of tests/fuzz/unwind_corpus.py,
# leaks looked for and memory bounded (unwind-libdw-2gib-realloc: a rule for
# register 268,420,218 made libdw allocate 2 GiB). Fails only on a crash, a
# leak, an input over 512 MiB or one input over 60 s.
test_fuzz_unwind_short() {
	local out rc fuzz=$ROOT/.output/tests/fuzz-unwind
	[ -x "$fuzz" ] || { echo "# $fuzz is not built: make .output/tests/fuzz-unwind"; return 1; }
	python3 "$ROOT/tests/fuzz/unwind_corpus.py" "$T/corpus" || return 1
	out=$(cd "$T" && timeout -k 5 60 "$fuzz" -rss_limit_mb=512 "$ROOT"/tests/fuzz/regressions/unwind-* 2>&1)
	rc=$?
	expect '[ $rc = 0 ]' "the inputs found before: $(grep -A 3 'ERROR\|runtime error' <<<"$out" | head -8)" ||
		return 1
	mkdir -p "$T/found"
	out=$(cd "$T/found" && timeout -k 5 120 "$fuzz" -rss_limit_mb=512 -timeout=60 -max_len=8192 \
		-max_total_time=15 -print_final_stats=1 "$T/corpus" 2>&1)
	rc=$?
	echo "# $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' <<<"$out")"
	expect '[ $rc = 0 ] && [ -z "$(ls "$T/found")" ]' \
		"no crash: $(grep -A 3 'ERROR\|runtime error\|timeout' <<<"$out" | head -8)"
}

# hostile_cfi_library DIR: DIR/libhuge-reg.so, whose touch_huge_reg(p, n)
# touches a page at a time under a rule for DWARF register 268,420,218
# (libdw 0.188 grows its frame state to hold it: 2 GiB, zeroed), and
# DIR/huge-reg, which waits for a line on DIR/go, runs it on 8 MiB,
# writes "done" to DIR/done and waits for a second line before exiting
hostile_cfi_library() {
	cat >"$1/huge.s" <<'EOS'
	.text
	.globl	touch_huge_reg
	.type	touch_huge_reg, @function
touch_huge_reg:
	.cfi_startproc
	# DW_CFA_expression, register uleb 0xfa 0x88 0xff 0xff 0x00, empty
	.cfi_escape 0x10, 0xfa, 0x88, 0xff, 0xff, 0x00, 0x00
1:	movb	$1, (%rdi)
	addq	$4096, %rdi
	subq	$4096, %rsi
	ja	1b
	ret
	.cfi_endproc
	.size	touch_huge_reg, .-touch_huge_reg
	.section .note.GNU-stack,"",@progbits
EOS
	cat >"$1/huge.c" <<'EOS'
#include <stdio.h>
#include <sys/mman.h>
void touch_huge_reg(char *p, size_t n);
int main(int argc, char **argv)
{
	char line[16];
	size_t n = 8 << 20;
	FILE *go = argc > 2 ? fopen(argv[1], "r") : NULL, *done;
	char *p;
	if (!go || !fgets(line, sizeof(line), go))
		return 1;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	touch_huge_reg(p, n);
	done = fopen(argv[2], "w");
	if (!done || fputs("done\n", done) < 0 || fclose(done))
		return 1;
	return fgets(line, sizeof(line), go) ? 0 : 1;
}
EOS
	cc -shared -fPIC -o "$1/libhuge-reg.so" "$1/huge.s" &&
		cc -O1 -o "$1/huge-reg" "$1/huge.c" -L"$1" -lhuge-reg -Wl,-rpath,"$1"
}

# A library's CFI names register 268,420,218: libdw would allocate and
# zero 2 GiB to unwind through it. Its CFI is refused (said once), the
# tracer stays small and reports.
test_hostile_cfi_huge_register() {
	need_root
	local rc rss real_gmt=$GMT
	hostile_cfi_library "$T" || return 1
	mkfifo "$T/go" "$T/done"
	"$T/huge-reg" "$T/go" "$T/done" &
	WL_PID=$!
	exec 4>"$T/go"
	printf '#!/bin/sh\nexec /usr/bin/time -f %%M -o "%s/rss" "%s" "$@"\n' "$T" "$real_gmt" \
		>"$T/gmt-timed"
	chmod +x "$T/gmt-timed"
	GMT=$T/gmt-timed start_tracer --json -i 0.1 --touch-sample 16K -p "$WL_PID" ||
		{ exec 4>&-; kill "$WL_PID"; return 1; }
	echo go >&4
	expect '[ "$(cat "$T/done")" = done ]' "the target touched its pages" ||
		{ exec 4>&-; return 1; }
	echo exit >&4
	exec 4>&-
	wait "$WL_PID"
	wait_tracer
	rc=$?
	expect '[ $rc = 0 ]' "the tracer exited with $rc: $(tail -5 "$T/gmt.err")" || return 1
	rss=$(tail -1 "$T/rss")
	echo "# the tracer's max RSS: $rss KiB"
	expect '(( rss < 512 * 1024 ))' "the tracer's max RSS $rss KiB, less than 512 MiB" || return 1
	expect '[ "$(grep -c "call frame information of .*libhuge-reg.so is refused" "$T/gmt.err")" = 1 ]' \
		"the refusal said once: $(grep -c refused "$T/gmt.err")" || return 1
	expect 'jq -e ".processes[0].pid == $WL_PID" "$T/gmt.out" >/dev/null' \
		"a report on the target: $(head -c 300 "$T/gmt.out")"
}
