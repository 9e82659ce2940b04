# Trace files: record and replay, what is written and how (0600, never through a symlink), and damaged, cut or hostile files.
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

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
		-max_total_time=15 -print_final_stats=1 "$T/corpus" 2>&1)
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
