# A hostile client of --metrics (issue 32): a local user who holds
# connections open must cost the tracer neither its fds nor a core, nor
# flood its log; /metrics serves again once they go.

# hold_conns PORT N: N connections held open (HOLD_PID) until killed; returns
# once they are made, with HOLD_N the number the kernel took
hold_conns() {
	rm -f "$T/hold.fifo"
	mkfifo "$T/hold.fifo"
	python3 - "$1" "$2" >"$T/hold.fifo" 2>"$T/hold.err" <<'PY' &
import resource, select, signal, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
port, n = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(n):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    held.append(s)
# connected: the handshake is done (in the tracer's backlog or accepted)
end = time.monotonic() + 20
pending = list(held)
while pending and time.monotonic() < end:
    _, w, _ = select.select([], pending[:1000], [], 0.5)
    pending = [s for s in pending if s not in w]
print(len(held) - len(pending), flush=True)
sys.stdout.close()
signal.pause()
PY
	HOLD_PID=$!
	HOLD_N=$(await_line "$T/hold.fifo" "$HOLD_PID" "the holder" "$T/hold.err") || return 1
}

# the tracer's CPU time in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

metrics_target() {
	sleep 300 &
	TARGET=$!
	trap 'kill $HOLD_PID $TARGET $GMT_PID 2>/dev/null' EXIT
	start_tracer --json --metrics 0 -p "$TARGET" || return 1
	MPORT=$(grep -oP 'metrics at http://127\.0\.0\.1:\K[0-9]+' "$T/gmt.err")
	expect '[ -n "$MPORT" ]' "the tracer says where it serves: $(head -3 "$T/gmt.err")"
}

# after the holder lets go, a scrape is answered (within 20 s)
scraped_again() {
	local i
	kill "$HOLD_PID"
	wait "$HOLD_PID" 2>/dev/null
	for ((i = 0; i < 20; i++)); do
		curl -sf -m 1 "http://127.0.0.1:$MPORT/metrics" >"$T/scrape" && break
	done
	expect 'grep -q "^gpumemtrace_" "$T/scrape"' "/metrics answers once the connections are gone" ||
		return 1
	kill -INT "$GMT_PID"
	expect 'wait_tracer' "the tracer ends with its report: $(tail -3 "$T/gmt.err")" || return 1
	expect 'jq -e ".processes | length == 1" "$T/gmt.out" >/dev/null' "its report: $(head -c 300 "$T/gmt.out")"
}

# 600 idle connections: the tracer holds at most 64 of them, the rest wait
# in the kernel's backlog, not in its fds
test_metrics_caps_connections() {
	need_root
	local base fds
	metrics_target || return 1
	base=$(ls "/proc/$GMT_PID/fd" | wc -l)
	hold_conns "$MPORT" 600 || return 1
	# the server thread takes what it may at once; the count cannot rise
	# past its cap however long it runs, so it is read when it stops rising
	fds=$base
	for ((i = 0; i < 50; i++)); do
		n=$(ls "/proc/$GMT_PID/fd" | wc -l)
		[ "$n" = "$fds" ] && [ "$n" -gt "$base" ] && break
		fds=$n
		read -r -t 0.1 <> <(:) || true
	done
	echo "# $HOLD_N connections made; the tracer's fds: $base before, $fds while held"
	expect '[ "$HOLD_N" -ge 200 ]' "the holder made $HOLD_N connections" || return 1
	expect '[ "$fds" -le $((base + 64 + 4)) ]' \
		"the tracer holds $((fds - base)) connections' fds, the cap is 64" || return 1
	scraped_again
}

# out of fds: the listener rests and says so once, where it spun a core
# and wrote millions of lines
test_metrics_out_of_fds_backs_off() {
	need_root
	local base t0 t1 lines
	metrics_target || return 1
	base=$(ls "/proc/$GMT_PID/fd" | wc -l)
	# room for 8 connections, less than the cap
	prlimit --pid "$GMT_PID" --nofile=$((base + 8)):$((base + 8)) || return 1
	hold_conns "$MPORT" 100 || return 1
	t0=$(cpu_ticks "$GMT_PID")
	read -r -t 2 <> <(:) || true # the window in which a spinning accept loop shows
	t1=$(cpu_ticks "$GMT_PID")
	lines=$(wc -l <"$T/gmt.err")
	echo "# $HOLD_N connections; tracer CPU over 2 s: $((t1 - t0)) ticks; $lines lines on stderr"
	expect '[ $((t1 - t0)) -le $(($(getconf CLK_TCK) / 2)) ]' \
		"the tracer used $((t1 - t0)) ticks in 2 s while out of fds" || return 1
	expect 'grep -c "cannot accept a connection" "$T/gmt.err" | grep -qx 1' \
		"said once: $(grep -c "accept" "$T/gmt.err") lines about accept" || return 1
	expect '[ "$lines" -le 10 ]' "stderr has $lines lines: $(tail -3 "$T/gmt.err")" || return 1
	prlimit --pid "$GMT_PID" --nofile=1024:1024
	scraped_again
}
