# The service (--watch -o DIR) over many processes: its recordings kept
# within a budget of bytes, every removal said, and no file for a process
# after its exit (issue 35)

# await_grep FILE PATTERN TENTHS: PATTERN in FILE within TENTHS tenths of a second
await_grep() {
	local i
	for ((i = 0; i < $3; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		read -r -t 0.1 <> <(:) || true
	done
	return 1
}

# Short-lived workloads, each left a zombie by a parent that does not reap
# it (its comm still "workload" in /proc, as the watch looks again at
# -i 0.1), under a --max-disk a few of their files pass: each pid has one
# file, none a ghost started after its exit; every file written is either
# there or said removed, once; what is left is within the budget. (Other
# GPU processes on the host, which --watch also finds, share the budget.)
test_service_dir_keeps_bytes_and_makes_no_ghosts() {
	need_root
	local n=10 i holder pid pids=() holders=() budget=$((48 << 10))
	local ever present removed said bytes f t
	GMT_READY="watching" start_tracer --watch --comm workload --no-tui -i 0.1 \
		-o "$T/rec/" --max-disk 48K || return 1
	for ((i = 0; i < n; i++)); do
		mkfifo "$T/go$i"
		# the parent becomes a sleep, which reaps nothing
		sh -c '"$1" --wait "$2" --steps 3 --step-mib 2 --churn 300 --out /dev/null &
			exec sleep 30' sh "$WL" "$T/go$i" &
		holder=$!
		holders+=("$holder")
		pid=
		for ((t = 0; t < 50 && !pid; t++)); do
			pid=$(pgrep -P "$holder" -x workload)
			[ -n "$pid" ] || read -r -t 0.1 <> <(:) || true
		done
		expect '[ -n "$pid" ]' "workload $i started" || return 1
		pids+=("$pid")
		expect 'await_grep "$T/gmt.err" "tracing pid $pid (workload)" 100' \
			"@--watch found pid $pid: \$(tail -3 "$T/gmt.err")" || return 1
		echo go >"$T/go$i"
		# a zombie now; the watch may find it again
		for ((t = 0; t < 100; t++)); do
			[ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" = Z ] && break
			read -r -t 0.1 <> <(:) || true
		done
		expect '[ "$(awk "{ print \$3 }" /proc/$pid/stat)" = Z ]' "workload $pid is a zombie" ||
			return 1
		# the watch, at -i 0.1, may take the zombie for a new process
		# (the ghost of issue 35): its records come after the exit
		for ((t = 0; t < 10; t++)); do
			[ "$(grep -c "tracing pid $pid " "$T/gmt.err")" -ge 2 ] && break
			read -r -t 0.1 <> <(:) || true
		done
		kill "$holder"
	done
	wait "${holders[@]}" 2>/dev/null
	kill -INT "$GMT_PID"
	wait_tracer || { echo "# the tracer failed: $(tail -5 "$T/gmt.err")"; return 1; }
	present=$(ls "$T/rec")
	removed=$(sed -n 's|^gpumemtrace: removed .*/\([^/:]*\): past --max-disk 48.0 KiB$|\1|p' \
		"$T/gmt.err")
	ever=$(printf '%s\n%s\n' "$present" "$removed" | grep . | sort)
	said=$(grep -oP 'recorded \K[0-9]+(?= files?)' "$T/gmt.err")
	echo "# $(grep -c "tracing pid .* (workload)" "$T/gmt.err") joins of $n workloads;" \
		"$(wc -l <<<"$present") files left, $(grep -c . <<<"$removed") said removed, $said written"
	expect '[ -z "$(sort <<<"$removed" | uniq -d)" ]' "each removal said once: $removed" || return 1
	expect '[ -z "$(comm -12 <(sort <<<"$present") <(sort <<<"$removed"))" ]' \
		"a file said removed is gone" || return 1
	expect '[ "$(wc -l <<<"$ever")" = "$said" ]' \
		"@every file written is there or said removed: $said written; \$ever" || return 1
	expect '[ -n "$removed" ]' "the budget removed some files: $(ls -l "$T/rec")" || return 1
	expect '! grep -q "^pid\." <<<"$ever"' "a file named pid.*: $ever" || return 1
	for pid in "${pids[@]}"; do
		f=$(grep -c "^workload\.[0-9T]*\.$pid\.gmt$" <<<"$ever")
		expect '[ "$f" = 1 ]' "@one file of pid $pid, none after its exit: \$ever" || return 1
	done
	bytes=$(cat "$T"/rec/*.gmt 2>/dev/null | wc -c)
	expect '[ "$bytes" -le "$budget" ]' "$bytes bytes left, past --max-disk 48K" || return 1
	for f in "$T"/rec/*.gmt; do
		"$GMT" replay --json "$f" >"$T/replay.json" 2>"$T/replay.err" ||
			{ echo "# $f does not replay: $(cat "$T/replay.err")"; return 1; }
		# each says how its tracing began: found at its exec (the JOIN
		# record that exec sent before its own record)
		expect '[ "$(jq -r ".processes[0].traced_how" "$T/replay.json")" = exec ]' \
			"$(basename "$f"): traced from $(jq -c ".processes[0] | [.traced_how, .traced_from_s]" "$T/replay.json")" ||
			return 1
	done
}
