# Why it got slow: the real llama-server (CPU build), slowed on purpose
# while traced with -p, each cause induced for real and its truth from
# outside the tool: the server's own `timings` for the rates, /proc/PID/stat
# for the faults, the cgroup's files and schedstat for the waits. And the
# controls that must get no slowdown verdict (tests/llama/compare.py checks
# that for every server test; here, mixed prompts and a filling context).
# Run by tests/run.sh with helpers from tests/lib.sh and tests/server.sh.

# 240 MB of weights (mmap'd unless --no-mmap): about 100 tokens/s on two
# cores, 5 once a memory limit of 150 MiB leaves them no room
SLOW_MODEL="--embd 1024 --ff 3584 --layers 4"
SLOW_TOKENS=24

# phase NAME ARGS...: one client's requests (to /completion, not streamed,
# prompts of their own), its JSON in $T/NAME.json
phase() {
	local name=$1
	shift
	python3 "$ROOT/tests/llama/client.py" "$PORT" --clients 1 --paths /completion --stream no \
		--tokens "$SLOW_TOKENS" "$@" >"$T/$name.json"
}

# slow_server ARGS...: llama-server with the slowdown tests' model, started
# inside the memory cgroup $CG_DIR (mem_cgroup) so that the pages of its
# weights are charged to it as it reads them: the file is written and then
# dropped from the page cache first (charged to the writer, they would
# not be the server's to lose)
slow_server() {
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" $SLOW_MODEL >/dev/null &&
		python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$T/tiny.gguf" || return 1
	printf '#!/bin/sh\necho $$ >"%s/cgroup.procs" && exec "$@"\n' "$CG_DIR" >"$T/in-cgroup"
	chmod +x "$T/in-cgroup"
	SERVER_WRAP=$T/in-cgroup start_server "$@"
}

# faults PID: its page faults, minor and major, as /proc/PID/stat counts
# them (fields 10 and 12), and the bytes it read from storage (/proc/PID/io)
faults() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ printf "%d %d ", $8 + $10, $10 }'
	awk '$1 == "read_bytes:" { print $2 }' "/proc/$1/io"
}

# median RATES...: of the numbers given
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# rates FILE...: the server's own decode rate (timings.predicted_per_second)
# of each request of these phases, the very first left out (warm-up)
rates() {
	jq -r '.requests[].timings.predicted_per_second' "$@" | tail -n +2
}

# slowdown: the report's slowdown finding (null: none)
slowdown() {
	jq -c '[.findings[] | select(.kind == "slowdown")][0]' "$T/gmt.out"
}

# num F KEY: a finding's figure
num() { jq -r ".$2" <<<"$1"; }

# within A B REL: |A - B| <= REL * B
within() {
	awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { exit !(a - b <= r * b && b - a <= r * b) }'
}

# check_rates F BEFORE.json... -- DURING.json...: the finding's baseline and
# slow rates within 10% of the server's own medians of those phases
check_rates() {
	local f=$1 before=() during=() b d
	shift
	while [ "$1" != -- ]; do before+=("$1") && shift; done
	shift
	during=("$@")
	b=$(median $(rates "${before[@]}"))
	d=$(median $(jq -r '.requests[].timings.predicted_per_second' "${during[@]}"))
	echo "# the server's medians: $b tokens/s usually, $d slowed; the tool's: $(num "$f" baseline_rate), $(num "$f" rate)"
	expect 'within "$(num "$f" baseline_rate)" "$b" 0.1 && within "$(num "$f" rate)" "$d" 0.1' \
		"the rates within 10% of the server's: baseline $(num "$f" baseline_rate) against $b, slow $(num "$f" rate) against $d"
}

# check_slow_requests F FIRST LAST: the finding names requests FIRST to LAST
# (or the one after, which may still read its weights back); the tool
# numbers a process's requests from 1 as they come, and each phase of the
# client ends with a GET /metrics
check_slow_requests() {
	local f=$1 first=$2 last=$3 marked
	marked=$(jq -c "[.processes[0].requests | to_entries[] | select(.value.slow) | .key + 1]" "$T/gmt.out")
	expect '(( $(num "$f" first_request) == first && $(num "$f" last_request) >= last &&
		$(num "$f" last_request) <= last + 2 ))' \
		"the slow requests: $(num "$f" first_request) to $(num "$f" last_request), the slowed ones $first to $last: marked $marked"
}

# The weights evicted from RAM by a memory cgroup's limit lowered below the
# model (v1 here, v2 where the host has it), then raised again: the slow
# requests named, rates within 10% of the server's, the cause the major
# faults that /proc/PID/stat counted over the slow phase, and the limit
slow_weights_evicted() {
	need_llama_server || return 1
	local cg=gmt-slow-$$ f f0 f1 lift=max extra=("$@") flt maj rd
	mem_cgroup "$cg" || return 1
	[ "$CG_LIMIT" = memory.max ] || lift=-1
	slow_server -np 1 -c 512 -t 2 "${extra[@]}" || { rm_cgroup; return 1; }
	start_tracer --json -p "$SERVER_PID" || { rm_cgroup; return 1; }
	phase before --requests 6 --words 20 || { rm_cgroup; return 1; }
	read -r -a f0 <<<"$(faults "$SERVER_PID")"
	echo $((150 * MIB)) >"$CG_DIR/$CG_LIMIT" || { rm_cgroup; return 1; }
	phase during --requests "${SLOW_REQUESTS:-4}" --tokens "${SLOW_PHASE_TOKENS:-$SLOW_TOKENS}" \
		--words 21 || { rm_cgroup; return 1; }
	read -r -a f1 <<<"$(faults "$SERVER_PID")"
	echo "# under the limit: $(grep -E '^(RssAnon|RssFile|VmSwap)' "/proc/$SERVER_PID/status" | tr -s ' \t\n' ' ')"
	echo "# the server's rates, usual then slowed: $(jq -c '[.requests[].timings.predicted_per_second | floor]' "$T/before.json" "$T/during.json" | tr '\n' ' ')"
	echo "$lift" >"$CG_DIR/$CG_LIMIT"
	phase after --requests 4 --words 22 || { rm_cgroup; return 1; }
	stop_server
	wait_tracer
	rm_cgroup
	f=$(slowdown)
	echo "# $(num "$f" message)"
	expect '[ "$(num "$f" cause)" = memory ]' \
		"a slowdown, the memory its cause: $(jq -c '[.findings[] | [.kind, .category, .reasons]]' "$T/gmt.out")" ||
		return 1
	check_slow_requests "$f" 8 $((7 + ${SLOW_REQUESTS:-4})) || return 1
	check_rates "$f" "$T/before.json" "$T/after.json" -- "$T/during.json" || return 1
	# the page faults and reads of the slow requests' decoding, of those
	# /proc counted over the whole slow phase (its prompts, and the gaps
	# between requests, are the rest)
	flt=$((f1[0] - f0[0])) maj=$((f1[1] - f0[1])) rd=$((f1[2] - f0[2]))
	echo "# over the slow phase /proc/PID/stat counted $flt page faults ($maj major), /proc/PID/io $rd bytes read; the tool, in its requests' decoding: $(jq -c '{page_faults, major_faults, read_bytes}' <<<"$f")"
	expect 'awk -v t="$(num "$f" page_faults)" -v p="$flt" "BEGIN { exit !(t >= 0.5 * p && t <= 1.05 * p) }" &&
		awk -v t="$(num "$f" major_faults)" -v p="$maj" "BEGIN { exit !(t <= 1.05 * p + 1) }" &&
		awk -v t="$(num "$f" read_bytes)" -v p="$rd" "BEGIN { exit !(t >= 0.5 * p && t <= 1.05 * p) }"' \
		"the faults and reads within what /proc counted: $(jq -c '{page_faults, major_faults, read_bytes}' <<<"$f") of $flt, $maj, $rd" ||
		return 1
	expect 'jq -e ".reasons | index(\"slow_limit\") != null" <<<"$f" >/dev/null &&
		[ "$(num "$f" limit_bytes)" = $((150 * MIB)) ] && [ "$(num "$f" limit_before_bytes)" = 0 ]' \
		"the limit named, lowered from none to 150 MiB: $(jq -c '{reasons, limit_bytes, limit_before_bytes}' <<<"$f")" ||
		return 1
	expect 'jq -e ".reasons | index(\"slow_recovered\") != null" <<<"$f" >/dev/null' \
		"its rate back after the limit was lifted: $(jq -c .reasons <<<"$f")"
}

# the same with the weights read into anonymous memory (--no-mmap), which
# the limit pushes out to swap: a swap file of the test's own (tests/run.sh
# turns it off if the test is cut short)
test_slow_weights_swapped_out_no_mmap() {
	need_root
	local f
	fallocate -l 1G "$T/swap" && chmod 600 "$T/swap" && mkswap "$T/swap" >/dev/null &&
		swapon "$T/swap" || skip "no swap file could be turned on here (fallocate, mkswap, swapon)"
	# swapped, it decodes about a token a second: two short requests
	SLOW_REQUESTS=2 SLOW_PHASE_TOKENS=8 slow_weights_evicted --no-mmap
	local rc=$?
	swapoff "$T/swap"
	((rc == 0)) || return 1
	f=$(slowdown)
	expect 'jq -e ".reasons | index(\"slow_swapped\") != null and index(\"slow_file_out\") == null" <<<"$f" >/dev/null' \
		"its anonymous memory in swap, not a file: $(jq -c '{reasons, swap_in_bytes_per_s}' <<<"$f")"
}

test_slow_weights_evicted_by_a_cgroup_limit() {
	slow_weights_evicted || return 1
	local f
	f=$(slowdown)
	# the weights are the model file: file-backed RSS below its size, and
	# what to try says so
	expect 'jq -e ".reasons | index(\"slow_file_out\") != null and index(\"slow_try_memory\") != null" <<<"$f" >/dev/null &&
		(( $(num "$f" model_file_bytes) > 200 * MIB ))' \
		"the model file's residency and what to try: $(jq -c '{reasons, model_file, model_file_bytes, file_rss_bytes}' <<<"$f")"
}

# cpu_cgroup NAME: a new cgroup with the cpu controller (v2 where it is
# enabled, else v1's cpu hierarchy), its folder in CPU_DIR; CPU_V2 set on v2
cpu_cgroup() {
	local v2 v1
	v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
	if [ -n "$v2" ] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null &&
		grep -qw cpu "$v2/cgroup.subtree_control" 2>/dev/null; then
		CPU_DIR=$v2/$1 CPU_V2=1
	elif [ -n "$v1" ]; then
		CPU_DIR=$v1/$1 CPU_V2=
	else
		skip "no cgroup hierarchy with the cpu controller"
	fi
	mkdir "$CPU_DIR"
}

# cpu_quota PERCENT: CPU_DIR's quota, PERCENT of one CPU
cpu_quota() {
	if [ -n "$CPU_V2" ]; then
		echo "$(($1 * 1000)) 100000" >"$CPU_DIR/cpu.max"
	else
		echo 100000 >"$CPU_DIR/cpu.cfs_period_us" && echo $(($1 * 1000)) >"$CPU_DIR/cpu.cfs_quota_us"
	fi
}

# throttled: CPU_DIR's cpu.stat nr_periods and nr_throttled
throttled() {
	awk '$1 == "nr_periods" { p = $2 } $1 == "nr_throttled" { t = $2 } END { print p, t }' "$CPU_DIR/cpu.stat"
}

# run_delay PID [TID]: its live threads' time on a CPU and waiting for one
# (schedstat), summed, in ns; of thread TID alone where given
run_delay() {
	# shellcheck disable=SC2086 # a TID, or every thread by the glob
	cat /proc/"$1"/task/${2:-*}/schedstat 2>/dev/null | awk '{ r += $1; d += $2 } END { printf "%d %d\n", r, d }'
}

# the slowdown tests' CPU-bound model: small enough that memory is no
# question, big enough that a token is work
CPU_MODEL="--embd 512 --ff 1536 --layers 4"

# A CPU quota of a fifth of a CPU put on the server mid-run (its cgroup's
# cpu.cfs_quota_us or cpu.max), then lifted: the slow requests named, the
# cause the quota, with the share of periods throttled that cpu.stat
# counted. Recorded: the replay's report is the live one, its HTML page
# marks the slow requests and the slowdown on its time axis; and while it
# runs, the plain line and the Prometheus text say it
test_slow_cpu_quota() {
	need_llama_server || return 1
	need_chromium
	local f c0 c1 share i
	cpu_cgroup gmt-cpu-$$ || return 1
	TINY_ARGS=$CPU_MODEL start_server -np 1 -c 512 -t 1 || { rmdir "$CPU_DIR"; return 1; }
	# readings every 0.25 s: cpu.stat's counts are spread evenly over an
	# interval, and a 1 s one that straddles the quota's start or end
	# dilutes the slow phase of 1.7 s (0.75 against cpu.stat's 0.94 once)
	start_tracer record -o "$T/q.gmt" --json --no-tui --metrics-file "$T/m.prom" -i 0.25 \
		-p "$SERVER_PID" ||
		{ rmdir "$CPU_DIR"; return 1; }
	phase before --requests 6 --words 20 || { rmdir "$CPU_DIR"; return 1; }
	cpu_quota 20 && echo "$SERVER_PID" >"$CPU_DIR/cgroup.procs" || { rmdir "$CPU_DIR"; return 1; }
	read -r -a c0 <<<"$(throttled)"
	# six slow requests, as the neighbour's: an interval that straddles the
	# quota's start spreads its throttling over both sides
	phase during --requests 6 --words 21 || { rmdir "$CPU_DIR"; return 1; }
	read -r -a c1 <<<"$(throttled)"
	echo "$SERVER_PID" >"${CPU_DIR%/*}/cgroup.procs"
	phase after --requests 4 --words 22
	# the metrics say it while the server runs (rewritten each interval)
	for ((i = 0; i < 100; i++)); do
		cp "$T/m.prom" "$T/m.seen" 2>/dev/null
		grep -q 'gpumemtrace_slow_requests{.*cause="cpu"} [6-8]$' "$T/m.seen" && break
		read -r -t 0.1 <> <(:) || true
	done
	stop_server
	wait_tracer
	rmdir "$CPU_DIR"
	f=$(slowdown)
	echo "# the server's rates, before, during and after the quota: $(jq -c '[.requests[].timings.predicted_per_second | floor]' "$T"/{before,during,after}.json | tr '\n' ' ')"
	echo "# the tool's: $(jq -c '[.processes[0].requests[] | .decode_tokens_per_s | floor?]' "$T/gmt.out")"
	echo "# $(num "$f" message)"
	expect '[ "$(num "$f" cause)" = cpu ] && jq -e ".reasons | index(\"slow_throttled\") != null" <<<"$f" >/dev/null' \
		"a slowdown, its quota the cause: $(jq -c '[.findings[] | [.kind, .category, .reasons]]' "$T/gmt.out")" ||
		return 1
	check_slow_requests "$f" 8 13 || return 1
	check_rates "$f" "$T/before.json" "$T/after.json" -- "$T/during.json" || return 1
	share=$(awk -v p=$((c1[0] - c0[0])) -v t=$((c1[1] - c0[1])) 'BEGIN { print p ? t / p : 0 }')
	echo "# cpu.stat over the slow phase: $((c1[1] - c0[1])) of $((c1[0] - c0[0])) periods throttled; the tool: $(num "$f" throttled_share) in its requests' decoding, a quota of $(num "$f" cpu_quota) CPUs"
	expect 'awk -v t="$(num "$f" throttled_share)" -v s="$share" "BEGIN { exit !(t >= s - 0.15 && t <= s + 0.15) }" &&
		[ "$(num "$f" cpu_quota)" = 0.2 ]' \
		"the quota and the share throttled as cpu.stat counted: $(num "$f" throttled_share), $(num "$f" cpu_quota) CPUs against $share" ||
		return 1
	expect 'grep -q "slowdown decode_rate" "$T/gmt.err" && grep -q "gpumemtrace_slow_requests{.*cause=\"cpu\"} [6-8]$" "$T/m.seen"' \
		"said while it ran: $(grep -m1 slowdown "$T/gmt.err"); $(grep slow_requests "$T/m.seen")" || return 1
	"$GMT" replay --json "$T/q.gmt" >"$T/r.json" || return 1
	expect 'cmp -s "$T/gmt.out" "$T/r.json"' "the replay's report is the live one: $(diff "$T/gmt.out" "$T/r.json" | head -5)" ||
		return 1
	"$GMT" replay -q --html "$T/q.html" "$T/q.gmt" || return 1
	html_open "$T/q.html" || return 1
	expect '[ "$(grep -o "data-slow=\"cpu\"" "$T/dom.html" | wc -l)" -ge 12 ] &&
		grep -q "data-kind=\"slowdown\"" "$T/dom.html"' \
		"the page marks the slow requests (bars and rows) and the slowdown: $(grep -o "data-slow=\"[a-z]*\"" "$T/dom.html" | sort | uniq -c)"
}

# Two busy loops pinned to the one CPU the server may use, mid-run: the
# slow requests named, the cause its threads' wait for a CPU, as their
# schedstat counted it
test_slow_cpu_neighbour() {
	need_llama_server || return 1
	local f d0 d1 a0 a1 share hogs=()
	SERVER_WRAP="taskset 2" TINY_ARGS=$CPU_MODEL start_server -np 1 -c 512 -t 1 || return 1
	# readings every 0.25 s, as for the quota below
	start_tracer --json -i 0.25 -p "$SERVER_PID" || return 1
	phase before --requests 6 --words 20 || return 1
	read -r -a d0 <<<"$(run_delay "$SERVER_PID" "$SERVER_PID")"
	read -r -a a0 <<<"$(run_delay "$SERVER_PID")"
	taskset 2 sh -c 'while :; do :; done' &
	hogs+=($!)
	taskset 2 sh -c 'while :; do :; done' &
	hogs+=($!)
	# six slow requests: the tool reads schedstat once an interval, and an
	# interval that straddles the hogs' start spreads its wait over both
	# sides (four of about 0.4 s each once read 0.53 against 0.70)
	phase during --requests 6 --words 21
	read -r -a d1 <<<"$(run_delay "$SERVER_PID" "$SERVER_PID")"
	read -r -a a1 <<<"$(run_delay "$SERVER_PID")"
	kill "${hogs[@]}"
	wait "${hogs[@]}" 2>/dev/null
	phase after --requests 4 --words 22 || return 1
	stop_server
	wait_tracer
	f=$(slowdown)
	echo "# $(num "$f" message)"
	expect '[ "$(num "$f" cause)" = cpu ] && jq -e ".reasons | index(\"slow_cpu_wait\") != null" <<<"$f" >/dev/null' \
		"a slowdown, the wait for a CPU its cause: $(jq -c '[.findings[] | [.kind, .category, .reasons]]' "$T/gmt.out")" ||
		return 1
	check_slow_requests "$f" 8 13 || return 1
	check_rates "$f" "$T/before.json" "$T/after.json" -- "$T/during.json" || return 1
	# the truth: the main thread's schedstat over the slow phase. With -t 1
	# it alone computes (the prompts and the tokens: the decode the tool
	# counts in); the others (HTTP) run for milliseconds and wait for most
	# of their time beside the hogs, which weighs the phase's sum by how
	# long they happened to wait (0.85 once, the main thread's 0.67 then
	# near the tool's 0.68)
	share=$(awk -v r=$((d1[0] - d0[0])) -v d=$((d1[1] - d0[1])) 'BEGIN { print r + d ? d / (r + d) : 0 }')
	echo "# schedstat over the slow phase: its main thread waited $share of its time, all its threads $(awk -v r=$((a1[0] - a0[0])) -v d=$((a1[1] - a0[1])) 'BEGIN { print r + d ? d / (r + d) : 0 }'); the tool: $(num "$f" cpu_wait_share) in its requests' decoding"
	expect 'awk -v t="$(num "$f" cpu_wait_share)" -v s="$share" "BEGIN { exit !(t >= s - 0.15 && t <= s + 0.15) }"' \
		"the wait for a CPU as schedstat counted: $(num "$f" cpu_wait_share) against $share"
}

# What must not be called a slowdown: prompts short and long, mixed, and a
# context filling up to several times the usual one's (decoding a longer
# context is slower: not the machine)
test_slow_none_for_mixed_prompts_and_a_filling_context() {
	need_llama_server || return 1
	local all
	# a word is about seven tokens of the tiny model's byte vocabulary
	TINY_ARGS="--ctx 4096" start_server -np 1 -c 4096 -t 1 || return 1
	start_tracer --json -p "$SERVER_PID" || return 1
	phase short --requests 6 --words 5 && phase long --requests 4 --words 80 &&
		phase mixed --requests 4 --words 8 && phase filling --requests 10 --words 10 --word-spread 40 ||
		return 1
	stop_server
	wait_tracer
	all=("$T"/{short,long,mixed,filling}.json)
	expect '[ "$(jq -s "[.[].requests[] | select(.status != 200)] | length" "${all[@]}")" = 0 ]' \
		"every request answered: $(jq -sc "[.[].requests[] | select(.status != 200) | .error][0]" "${all[@]}")" ||
		return 1
	echo "# the server's rates: $(jq -sc '[.[].requests[].timings.predicted_per_second | floor]' "${all[@]}")"
	echo "# its contexts: $(jq -sc '[.[].requests[].timings | .prompt_n + .cache_n]' "${all[@]}")"
	expect '[ "$(slowdown)" = null ]' "no slowdown: $(jq -r '[.findings[] | select(.kind == "slowdown") | .message][0]' "$T/gmt.out")"
}
