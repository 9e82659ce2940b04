# Issue 32: files a traced process controls, and files the tracer writes.
# What a target names (debug links, build-id files, GPU libraries in its mount
# namespace) must never hang the tracer nor be read as root for a target that
# could not read it; replay refuses what is not a regular file; -o, --watch -o
# DIR and --perfetto never write through a planted FIFO, symlink or file.
GW=$ROOT/.output/tests/gpuwork
FAKE=$ROOT/.output/tests/fake

# processes a test started, killed when it ends, pass or fail
files_pids=()
files_cleanup() {
	local p
	for p in "${files_pids[@]}" ${GMT_PID:-}; do
		kill -KILL "$p" 2>/dev/null
	done
	for p in "${files_pids[@]}" ${GMT_PID:-}; do
		wait "$p" 2>/dev/null
	done
}

# tracer_ends SEC: the tracer's exit status, once it has ended; fails (and
# kills it) when it has not ended within SEC seconds
tracer_ends() {
	if ! timeout "$1" tail --pid="$GMT_PID" -f /dev/null; then
		echo "# the tracer still runs after $1 s (hung): $(tail -3 "$T/gmt.err")"
		kill -KILL "$GMT_PID"
		wait "$GMT_PID"
		return 1
	fi
	wait_tracer
}

# start_tracer, killing the tracer when it never says it is tracing
tracer_starts() {
	start_tracer "$@" && return 0
	kill -KILL "$GMT_PID" 2>/dev/null
	return 1
}

# stripped_gw DIR: gpuwork stripped as DIR/gw, its .gnu_debuglink naming
# gw.debug beside it, which is removed (the test puts its own there)
stripped_gw() {
	mkdir -p "$1"
	cp "$GW" "$1/gw"
	objcopy --only-keep-debug "$1/gw" "$1/gw.debug.real" &&
		objcopy --strip-all "$1/gw" &&
		cp "$1/gw.debug.real" "$1/gw.debug" &&
		(cd "$1" && objcopy --add-gnu-debuglink=gw.debug gw) &&
		rm "$1/gw.debug"
}

# gw_target PROGRAM [RUNNER...]: PROGRAM waiting on $T/go, started by
# RUNNER (setpriv, unshare...) when given; GW_PID once it has loaded the
# fake CUDA library
gw_target() {
	local prog=$1
	shift
	mkfifo -m 0666 "$T/go" "$T/ready"
	"$@" "$prog" --lib "$FAKE/libcuda.so.1" --n 2 --ready "$T/ready" --wait "$T/go" \
		--out /dev/null 2>"$T/gw.err" &
	GW_PID=$!
	files_pids+=("$GW_PID")
	await_line "$T/ready" "$GW_PID" gpuwork "$T/gw.err" >/dev/null
}

# the target run and the tracer ended; GW_STACK: the failure's stack, as
# the report names it
gw_run_and_report() {
	echo go >"$T/go"
	tracer_ends 60 || return 1
	GW_STACK=$(jqr '[.processes[0].gpu.failures[0].stack[]?.symbol] | join(" ")' "$T/gmt.out")
}

# The target's .gnu_debuglink names a FIFO that it owns: the tracer must
# not block on it (it did, for good, deaf to -d and signals)
test_files_fifo_debuglink() {
	need_root
	trap files_cleanup EXIT
	stripped_gw "$T/bin" || return 1
	mkfifo "$T/bin/gw.debug"
	gw_target "$T/bin/gw" || return 1
	tracer_starts --json -p "$GW_PID" || return 1
	gw_run_and_report || return 1
	expect 'grep -q "not reading $T/bin/gw.debug for pid $GW_PID: it is a FIFO" "$T/gmt.err"' \
		"the refusal said: $(cat "$T/gmt.err")" || return 1
	expect '[ "$(grep -c "not reading $T/bin/gw.debug" "$T/gmt.err")" = 1 ]' "said once" ||
		return 1
	expect '[ "$(jqr ".processes[0].gpu.failures | length" "$T/gmt.out")" -ge 1 ]' \
		"the failure still reported"
}

# A FIFO at the build-id debug path, in the target's own mount namespace
# (a tmpfs over the debug directory that only it sees)
test_files_fifo_build_id_in_target_namespace() {
	need_root
	trap files_cleanup EXIT
	local s=$ROOT/.output/tests/stripped id dd=$T/dd
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	id=$(readelf -n "$s/gpuwork-bid" | awk '/Build ID/ {print $3}')
	expect '[ -n "$id" ]' "gpuwork-bid has a build id" || return 1
	mkdir "$dd"
	cat >"$T/ns.sh" <<-'EOF'
		mount -t tmpfs none "$1" && mkdir -p "$1/.build-id/$2" && mkfifo "$1/.build-id/$2/$3.debug" || exit 1
		shift 3
		exec "$@"
	EOF
	gw_target "$s/gpuwork-bid" unshare -m --propagation private sh "$T/ns.sh" "$dd" \
		"${id:0:2}" "${id:2}" || return 1
	tracer_starts --json --debug-dir "$dd" -p "$GW_PID" || return 1
	gw_run_and_report || return 1
	expect 'grep -q "not reading $dd/.build-id/${id:0:2}/${id:2}.debug for pid $GW_PID: it is a FIFO" "$T/gmt.err"' \
		"the refusal said: $(cat "$T/gmt.err")"
}

# A FIFO at /usr/local/lib/libcuda.so.1 in a target's mount namespace: -p
# pre-attaches to GPU libraries the target has not loaded yet, and hung on it
test_files_fifo_libcuda_in_target_namespace() {
	need_root
	trap files_cleanup EXIT
	local pid
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	mkfifo "$T/ready" "$T/hold"
	# it holds until the test opens $T/hold, then ends
	unshare -m --propagation private sh -c 'mount -t tmpfs none /usr/local/lib &&
		mkfifo /usr/local/lib/libcuda.so.1 && echo ready >"$1" && exec cat "$2"' \
		sh "$T/ready" "$T/hold" >/dev/null 2>"$T/ns.err" &
	pid=$!
	files_pids+=("$pid")
	await_line "$T/ready" "$pid" "the namespaced target" "$T/ns.err" >/dev/null || return 1
	tracer_starts -d 1 -p "$pid" || return 1
	tracer_ends 30 || return 1
	expect 'grep -q "not reading /usr/local/lib/libcuda.so.1 for pid $pid: it is a FIFO" "$T/gmt.err"' \
		"the refusal said: $(cat "$T/gmt.err")"
	echo >"$T/hold"
}

# replay of a FIFO, in every mode: refused at once with a clear message
test_files_replay_fifo_refused() {
	need_root
	local mode rc
	mkfifo "$T/r.gmt"
	for mode in "" --json --events --live "--perfetto $T/out.pftrace"; do
		# shellcheck disable=SC2086
		timeout -k 2 10 "$GMT" replay $mode "$T/r.gmt" >/dev/null 2>"$T/err"
		rc=$?
		expect '[ $rc != 124 ] && [ $rc != 137 ]' "replay $mode of a FIFO ended (status $rc)" ||
			return 1
		expect '[ $rc != 0 ]' "replay $mode of a FIFO failed" || return 1
		expect 'grep -q "refusing to replay $T/r.gmt: it is not a regular file" "$T/err"' \
			"replay $mode said: $(cat "$T/err")" || return 1
	done
}

# a debug link that is a symlink to a root-only ELF (0600 in a 0700
# directory): a target running as nobody could not read it, so neither may
# the tracer for it; its symbols must not reach the report nor the trace
test_files_debuglink_symlink_to_root_only_file() {
	need_root
	trap files_cleanup EXIT
	chmod 755 "$T"
	stripped_gw "$T/bin" || return 1
	mkdir -m 700 "$T/secret"
	cp "$T/bin/gw.debug.real" "$T/secret/gw.debug"
	chmod 600 "$T/secret/gw.debug"
	ln -s "$T/secret/gw.debug" "$T/bin/gw.debug"
	gw_target "$T/bin/gw" setpriv --reuid=65534 --regid=65534 --clear-groups || return 1
	tracer_starts --json -o "$T/run.gmt" -p "$GW_PID" || return 1
	gw_run_and_report || return 1
	expect '[ -n "$GW_STACK" ]' "the failure has a stack" || return 1
	expect '[[ $GW_STACK != *alloc_too_much* ]]' "no symbol from the root-only file: $GW_STACK" ||
		return 1
	expect '! "$GMT" replay --events "$T/run.gmt" | grep -q alloc_too_much' \
		"nor in the trace" || return 1
	expect 'grep -q "not reading $T/bin/gw.debug for pid $GW_PID: its user (uid 65534) may not read it" "$T/gmt.err"' \
		"the refusal said: $(cat "$T/gmt.err")" || return 1
	# the same file readable by nobody is read: the symbols come from it
	chmod 755 "$T/secret"
	chmod 644 "$T/secret/gw.debug"
	rm -f "$T/go" "$T/ready" "$T/run.gmt"
	gw_target "$T/bin/gw" setpriv --reuid=65534 --regid=65534 --clear-groups || return 1
	tracer_starts --json -p "$GW_PID" || return 1
	gw_run_and_report || return 1
	expect '[[ $GW_STACK == *alloc_too_much* ]]' "readable by nobody, named: $GW_STACK"
}

# -o FILE: a regular file planted there (another user's, held open) is not
# written; a FIFO there is refused at once (it hung, or handed the recording
# to whoever read it); a symlink is not followed; the operator's own earlier
# recording is replaced by a new file, never truncated in place
test_files_output_planted() {
	need_root
	trap files_cleanup EXIT
	local f=$T/out.gmt rc
	chmod 755 "$T"
	echo planted >"$f"
	chown 65534 "$f"
	chmod 666 "$f"
	exec 5<"$f"
	timeout -k 2 20 "$GMT" record -q -o "$f" -- true >/dev/null 2>"$T/err"
	rc=$?
	expect '[ $rc = 1 ]' "refused: $(cat "$T/err")" || return 1
	expect 'grep -q "cannot create $f: it is there already, owned by uid 65534" "$T/err"' \
		"it said: $(cat "$T/err")" || return 1
	expect '[ "$(cat <&5)" = planted ]' "the planter's fd sees no recording" || return 1
	exec 5<&-
	rm "$f"
	mkfifo "$f"
	timeout -k 2 20 "$GMT" record -q -o "$f" -- true >/dev/null 2>"$T/err"
	rc=$?
	expect '[ $rc = 1 ]' "a FIFO refused at once: $(cat "$T/err")" || return 1
	expect 'grep -q "cannot create $f: it is a FIFO" "$T/err"' "it said: $(cat "$T/err")" ||
		return 1
	rm "$f"
	ln -s "$T/elsewhere" "$f"
	timeout -k 2 20 "$GMT" record -q -o "$f" -- true >/dev/null 2>"$T/err"
	rc=$?
	expect '[ $rc = 1 ] && [ ! -e "$T/elsewhere" ]' "a symlink not followed" || return 1
	rm "$f"
	# the operator's own: a new file in its place, the old one's reader sees no recording
	echo old >"$f"
	exec 5<"$f"
	timeout -k 2 20 "$GMT" record -q -o "$f" -- true >/dev/null 2>"$T/err"
	rc=$?
	expect '[ $rc = 0 ]' "root's own file replaced: $(cat "$T/err")" || return 1
	expect '[ "$(cat <&5)" = old ]' "the old file was not truncated in place" || return 1
	expect '"$GMT" replay "$f" >/dev/null' "the new recording replays"
}

# --perfetto OUT: the same rules as -o
test_files_perfetto_output_planted() {
	need_root
	local rec=$T/r.gmt out=$T/out.pftrace rc
	timeout -k 2 20 "$GMT" record -q -o "$rec" -- true >/dev/null 2>"$T/err" ||
		{ echo "# record: $(cat "$T/err")"; return 1; }
	mkfifo "$out"
	timeout -k 2 20 "$GMT" replay --perfetto "$out" "$rec" 2>"$T/err"
	rc=$?
	expect '[ $rc = 1 ]' "a FIFO refused at once: $(cat "$T/err")" || return 1
	expect 'grep -q "cannot create $out: it is a FIFO" "$T/err"' "it said: $(cat "$T/err")" ||
		return 1
	rm "$out"
	echo planted >"$out"
	chown 65534 "$out"
	timeout -k 2 20 "$GMT" replay --perfetto "$out" "$rec" 2>"$T/err"
	rc=$?
	expect '[ $rc = 1 ] && [ "$(cat "$out")" = planted ]' "another user's file left alone" ||
		return 1
}

# --watch -o DIR/: a symlink planted for DIR is not followed
test_files_watch_output_dir_symlink() {
	need_root
	trap files_cleanup EXIT
	local rc
	mkdir "$T/elsewhere"
	ln -s "$T/elsewhere" "$T/w"
	timeout -k 2 20 "$GMT" --watch --comm gmt-nothing -q --no-tui -d 1 -o "$T/w/" \
		>/dev/null 2>"$T/err"
	rc=$?
	expect '[ $rc != 0 ] && [ $rc != 124 ] && [ $rc != 137 ]' "refused: $(cat "$T/err")" || return 1
	expect 'grep -q "cannot open the directory $T/w: it is a symbolic link" "$T/err"' \
		"it said: $(cat "$T/err")"
}

# SIGTERM and SIGINT end a run with its report whatever the target named:
# here a FIFO at its debug link, on which the tracer once blocked for good
# at attach, deaf to both
test_files_signals_end_the_run_with_a_report() {
	need_root
	trap files_cleanup EXIT
	local sig i
	stripped_gw "$T/bin" || return 1
	mkfifo "$T/bin/gw.debug"
	gw_target "$T/bin/gw" || return 1
	for sig in TERM INT; do
		"$GMT" --json -p "$GW_PID" >"$T/$sig.json" 2>"$T/$sig.err" &
		GMT_PID=$!
		# attached (or stuck attaching): 20 s at most
		for ((i = 0; i < 200; i++)); do
			grep -q "tracing pid" "$T/$sig.err" && break
			read -r -t 0.1 <> <(:) || true
		done
		kill -"$sig" "$GMT_PID"
		expect 'timeout 15 tail --pid="$GMT_PID" -f /dev/null' \
			"SIG$sig: the tracer still runs 15 s later: $(tail -2 "$T/$sig.err")" || return 1
		wait "$GMT_PID"
		expect 'jq -e ".processes[0].pid == $GW_PID" "$T/$sig.json" >/dev/null' \
			"SIG$sig: a report of the target: $(head -c 200 "$T/$sig.json")" || return 1
	done
	GMT_PID=
}
