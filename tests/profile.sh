# replay --pprof and --folded: the profiles opened by go tool pprof and
# checked against the report of the same recording (docs/pprof.md).
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

need_pprof() {
	command -v go >/dev/null || skip "no go (golang-go, which make deps installs, has go tool pprof)"
	command -v dot >/dev/null || skip "no dot (graphviz, which make deps installs, draws -svg)"
}

# pp PROFILE ARGS...: go tool pprof, writing nothing outside $T
pp() {
	local f=$1
	shift
	HOME=$T PPROF_TMPDIR=$T go tool pprof "$@" "$f" 2>"$T/pprof.err"
}

# pp_sum COLUMN PROFILE [ARGS...]: the sum of one value column (1: the first
# sample type) over the samples that -raw prints through ARGS's filters
pp_sum() {
	local c=$1 f=$2
	shift 2
	pp "$f" -raw "$@" | awk -v c="$c" '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ *-?[0-9]+( +-?[0-9]+)*: / { sub(/:.*/, ""); split($0, v, " "); t += v[c] }
		END { printf "%.0f\n", t }'
}

# A Vulkan program (lavapipe): its profile's in-use and allocated bytes and
# counts by API and kind are the report's exactly, each allocating path's
# live bytes the program's own count; -top, -traces, -svg read it
test_pprof_vulkan_totals_are_the_reports() {
	need_root
	need_lavapipe
	need_pprof
	local k='.processes[0].gpu.by_kind[] | select(.api == "Vulkan")' kind
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached Vulkan driver" start_tracer record -o "$T/vk.gmt" -- "$VK" \
		--wait "$T/go" --out "$T/done" || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	"$GMT" replay --json "$T/vk.gmt" >"$T/r.json" || return 1
	"$GMT" replay -q --pprof "$T/vk.pb.gz" --folded "$T/vk.folded" "$T/vk.gmt" || return 1
	"$GMT" replay -q --pprof "$T/alloc.pb.gz" --sample alloc "$T/vk.gmt" || return 1
	expect '[ "$(head -c2 "$T/vk.pb.gz" | od -An -tx1 | tr -d " ")" = 1f8b ]' "gzipped" || return 1
	kind=$(jqr "$k | .kind" "$T/r.json")
	expect '[ "$kind" = device ]' "lavapipe's memory is device-local: $kind" || return 1
	local f="-tagfocus=api=^Vulkan$ -tagfocus=kind=^device$"
	# shellcheck disable=SC2086 # the filters are words
	{
		expect '[ "$(pp_sum 4 "$T/vk.pb.gz" $f)" = "$(jqr "$k | .live_bytes" "$T/r.json")" ]' \
			"inuse_space $(pp_sum 4 "$T/vk.pb.gz" $f), the report's live bytes $(jqr "$k | .live_bytes" "$T/r.json")" ||
			return 1
		expect '[ "$(pp_sum 3 "$T/vk.pb.gz" $f)" = "$(jqr "$k | .live" "$T/r.json")" ]' \
			"inuse_objects" || return 1
		expect '[ "$(pp_sum 2 "$T/vk.pb.gz" $f)" = "$(jqr "$k | .alloc_bytes" "$T/r.json")" ]' \
			"alloc_space $(pp_sum 2 "$T/vk.pb.gz" $f), allocated $(jqr "$k | .alloc_bytes" "$T/r.json")" ||
			return 1
		expect '[ "$(pp_sum 1 "$T/vk.pb.gz" $f)" = "$(jqr "$k | .allocs" "$T/r.json")" ]' \
			"alloc_objects" || return 1
	}
	# the GPU's bytes only: a sampled first touch (a stack page the path's
	# own frame touched) has the same stack and a kind of its own
	# shellcheck disable=SC2086 # the filters are words
	expect '[ "$(pp_sum 4 "$T/vk.pb.gz" $f -focus=^alloc_direct$)" = "$(jqr .live_direct_bytes "$T/wl.json")" ] &&
		[ "$(pp_sum 4 "$T/vk.pb.gz" $f -focus=^alloc_via_loader$)" = "$(jqr .live_loader_bytes "$T/wl.json")" ]' \
		'@live bytes by path, the profile against the program: alloc_direct $(pp_sum 4 "$T/vk.pb.gz" $f -focus=^alloc_direct$) $(jqr .live_direct_bytes "$T/wl.json"), alloc_via_loader $(pp_sum 4 "$T/vk.pb.gz" $f -focus=^alloc_via_loader$) $(jqr .live_loader_bytes "$T/wl.json"); $(pp "$T/vk.pb.gz" -traces -tagfocus=kind=^device$)' || return 1
	# growth over the whole run: what is live at the end, all made in it
	"$GMT" replay -q --pprof "$T/growth.pb.gz" --sample growth "$T/vk.gmt" || return 1
	expect '[ "$(pp_sum 2 "$T/growth.pb.gz" -tagfocus=kind=^device$)" = "$(jqr "$k | .live_bytes" "$T/r.json")" ]' \
		"growth_space over the run: $(pp_sum 2 "$T/growth.pb.gz" -tagfocus=kind=^device$)" || return 1
	# -sample_index and the default sample type
	expect 'pp "$T/alloc.pb.gz" -top -unit=B | grep -q "^Type: alloc_space" &&
		pp "$T/vk.pb.gz" -top -unit=B -sample_index=alloc_space | grep -q "^Type: alloc_space" &&
		pp "$T/vk.pb.gz" -top | grep -q "^Type: inuse_space"' '@sample types: $(cat "$T/pprof.err")' ||
		return 1
	expect 'pp "$T/vk.pb.gz" -traces -tagfocus=kind=^device$ | grep -q "alloc_via_loader"' \
		"-traces names the allocating function" || return 1
	# the labels: the report's category, the process
	pp "$T/vk.pb.gz" -tags >"$T/tags.txt"
	expect 'grep -q ": vulkan_device$" "$T/tags.txt" && grep -q ": vkalloc$" "$T/tags.txt" &&
		grep -q "^ *pid: Total" "$T/tags.txt"' '@labels: $(cat "$T/tags.txt")' || return 1
	pp "$T/vk.pb.gz" -svg -output "$T/vk.svg" >/dev/null
	expect 'grep -q "<svg" "$T/vk.svg" && grep -q alloc_via_loader "$T/vk.svg"' \
		'@-svg (graphviz draws it): $(cat "$T/pprof.err")' || return 1
	# the folded text: root first, the in-use bytes of each stack
	expect 'awk "/;alloc_via_loader / { s += \$NF } END { exit s != $(jqr .live_loader_bytes "$T/wl.json") }" "$T/vk.folded" &&
		grep -q "^_start;" "$T/vk.folded"' '@folded: $(cut -c1-200 "$T/vk.folded")'
}

# Host heap from sampled first touches: the profile's total is the report's
# first-touched bytes exactly (the same samples, each weighted by the bytes
# it stands for); the heap the program filled, in save_entry, within a
# quarter: at one sample in 256 KiB, 30 MiB are about 120 samples; the
# gaps between them are uniform (variance a third of the mean's square),
# so the count's deviation is sqrt(120 / 3) = 5%, and a quarter nearly
# five of them (at the default MiB, 30 samples, a quarter was 2.4 and CI
# once drew 39). A growth profile from after start-up has that stack on
# top, the leak standing alone
test_pprof_host_heap_and_growth() {
	need_root
	need_pprof
	local want got all top
	mkfifo "$T/go" "$T/done" "$T/hold"
	"$ROOT/.output/tests/workload-nofp" --wait "$T/go" --out "$T/done" --hold "$T/hold" \
		--steps 40 --step-mib 0 --step-ms 20 --entries 8 --entry-kib 96 &
	WL_PID=$!
	start_tracer record -o "$T/h.gmt" -i 0.1 --touch-sample 256K -p "$WL_PID" || return 1
	release_workload
	kill -INT "$GMT_PID"
	wait_tracer || return 1
	echo go >"$T/hold"
	wait "$WL_PID"
	"$GMT" replay --json "$T/h.gmt" >"$T/r.json" || return 1
	"$GMT" replay -q --pprof "$T/h.pb.gz" "$T/h.gmt" || return 1
	all=$(pp_sum 4 "$T/h.pb.gz" -tagfocus=kind=first_touch)
	expect '[ "$all" = "$(jqr .processes[0].mappings.first_touched_bytes "$T/r.json")" ]' \
		"first touches stand for $all; the report: $(jqr .processes[0].mappings.first_touched_bytes "$T/r.json")" ||
		return 1
	want=$(jqr .entry_bytes "$T/wl.json")
	got=$(pp_sum 4 "$T/h.pb.gz" -focus=save_entry)
	expect '(( got >= want * 3 / 4 && got <= want * 5 / 4 ))' \
		"first touched in save_entry: $got; the workload filled $want" || return 1
	# growth from the first sample of save_entry's on: the leak, on top
	"$GMT" replay -q --pprof "$T/g.pb.gz" --folded "$T/g.folded" --from 0.05 "$T/h.gmt" ||
		return 1
	top=$(sort -k2 -n -r -t' ' "$T/g.folded" | awk '{ $NF = ""; print; exit }')
	expect '[[ $top == *save_entry* ]]' "growth's biggest stack: $top" || return 1
	expect 'pp "$T/g.pb.gz" -top -cum | grep -q "^Type: growth_space"' "a growth profile" ||
		return 1
	got=$(pp_sum 2 "$T/g.pb.gz" -focus=save_entry)
	all=$(pp_sum 2 "$T/g.pb.gz")
	expect '(( got * 10 >= all * 8 ))' "save_entry's share of the growth: $got of $all" ||
		return 1
	# a window that ends before the growth holds none of it
	"$GMT" replay -q --folded "$T/none.folded" --from 0 --to 0.000001 "$T/h.gmt" || return 1
	expect '! grep -q save_entry "$T/none.folded"' "nothing of save_entry before it ran"
}

# a corrupt recording: a clear error, no profile; bad options refused
test_pprof_corrupt_recording_writes_nothing() {
	need_root
	printf 'GMTRACE\0garbage that is no recording at all' >"$T/bad.gmt"
	expect '! "$GMT" replay --pprof "$T/out.pb.gz" --folded "$T/out.folded" "$T/bad.gmt" 2>"$T/err"' \
		"refused" || return 1
	expect '[ ! -e "$T/out.pb.gz" ] && [ ! -e "$T/out.folded" ]' "no file left" || return 1
	expect 'grep -q "^gpumemtrace: " "$T/err"' '@says why: $(cat "$T/err")' || return 1
	head -c 100 /dev/urandom >"$T/rand.gmt"
	expect '! "$GMT" replay --pprof "$T/out.pb.gz" "$T/rand.gmt" 2>/dev/null && [ ! -e "$T/out.pb.gz" ]' \
		"random bytes" || return 1
	# one cut short (a workload's recording, its last block gone): the
	# profile of what it holds, and the reader's note
	"$GMT" record -q -o "$T/w.gmt" -- "$WL" --steps 4 --step-mib 2 --out /dev/null >/dev/null ||
		return 1
	head -c $(($(stat -c %s "$T/w.gmt") - 100)) "$T/w.gmt" >"$T/cut.gmt"
	expect '"$GMT" replay -q --folded "$T/cut.folded" "$T/cut.gmt" 2>"$T/err" &&
		[ -e "$T/cut.folded" ] && grep -q "truncated" "$T/err"' '@cut short: $(cat "$T/err")' ||
		return 1
	local bad
	for bad in "--sample heap" "--from -1" "--from #0" "--to x" "--from 1 --sample alloc"; do
		# shellcheck disable=SC2086 # words
		expect '! "$GMT" replay --pprof "$T/o.pb.gz" $bad "$T/bad.gmt" 2>/dev/null' "$bad refused" ||
			return 1
	done
	expect '! "$GMT" replay --from 1 "$T/bad.gmt" 2>/dev/null' "--from alone refused"
}

# The real llama-server, its prompt cache filling (as
# test_server_prompt_cache_fills_to_its_limit): where the report gives its
# touches the role "prompt cache", the profile names the same stacks under
# that role label, with the same bytes
test_pprof_llama_server_prompt_cache_role() {
	need_llama_server || return 1
	need_pprof
	local want got
	TINY_ARGS=$CACHE_MODEL LLAMA_ARG_CACHE_RAM=40 start_server -np 1 -c 4096 -t 1 || return 1
	start_tracer record -o "$T/s.gmt" -p "$SERVER_PID" || return 1
	drive_anon --requests 12 --tokens 4 --spread 0 --words 200 --stream no || return 1
	"$GMT" replay --json "$T/s.gmt" >"$T/r.json" || return 1
	want=$(jq '.processes[0].mappings.first_touched_by_role["prompt cache"] // 0' "$T/r.json")
	"$GMT" replay -q --pprof "$T/s.pb.gz" "$T/s.gmt" || return 1
	got=$(pp_sum 4 "$T/s.pb.gz" "-tagfocus=role=^prompt cache$")
	echo "# prompt cache: the profile $got, the report $want ($(jq -c .processes[0].mappings.first_touched_by_role "$T/r.json"))"
	expect '(( want > 0 )) && [ "$got" = "$want" ]' "the prompt cache's bytes under its role" ||
		return 1
	# made while requests were open: labelled with their numbers
	expect 'pp "$T/s.pb.gz" -tags "-tagfocus=role=^prompt cache$" | grep -q "^ *request: Total"' \
		'@request labels: $(pp "$T/s.pb.gz" -tags "-tagfocus=role=^prompt cache$")' || return 1
	expect 'pp "$T/s.pb.gz" -top "-tagfocus=role=^prompt cache$" | grep -q "server_prompt_cache\|prompt_cache\|state_seq"' \
		'@its stack named: $(pp "$T/s.pb.gz" -top "-tagfocus=role=^prompt cache$" | head -20)'
}

# A leak stand-in: node-llama-cpp's server made to keep a llama context a
# request (GMT_VARIANT=leak, as test_llama_context_leak_is_a_vulkan_leak).
# The growth profile from request 2's start to the last one's end (the
# server frees its contexts as it exits) holds what the leak kept: its
# Vulkan device memory is the report's leaking stack on top, the contexts
# llama.cpp logged, and request 1's, made before the window, is not in it
test_pprof_leak_growth_has_the_leak_on_top() {
	need_root
	need_lavapipe
	need_llama
	need_pprof
	local top want leak ctx n all
	llama_variant leak 6 || return 1
	n=$(jqr '[.processes[0].requests[]] | length' "$T/r.json")
	"$GMT" replay -q --pprof "$T/g.pb.gz" --folded "$T/g.folded" --from '#2' --to "#$n" \
		"$T/v.gmt" || return 1
	want=$(jqr '[.findings[] | select(.kind == "leak" and .category == "vulkan_device")][0].stacks[0].stack[0].symbol' "$T/r.json")
	pp "$T/g.pb.gz" -top -unit=B -tagfocus=category=^vulkan_device$ >"$T/top.txt"
	top=$(awk '/flat%/ { getline; print $NF; exit }' "$T/top.txt")
	expect '[ "$want" != null ] && [ "$top" = "$want" ]' \
		'@on top: $top; the leak in the report: $want; $(head -20 "$T/top.txt")' || return 1
	expect 'grep -q "^Type: growth_space" "$T/top.txt"' "a growth profile" || return 1
	# requests 2 to n: a context each, within the allocator's rounding
	leak=$(pp_sum 2 "$T/g.pb.gz" -tagfocus=category=^vulkan_device$)
	ctx=$(cat "$T/per_ctx")
	echo "# Vulkan device growth $leak over $((n - 1)) requests; llama.cpp logged $ctx a context"
	expect '(( leak >= (n - 1) * ctx * 9 / 10 && leak <= (n - 1) * ctx * 12 / 10 ))' \
		"the growth is the contexts kept: $leak, $((n - 1)) x $ctx" || return 1
	# request 1's context, made before the window, is not in it
	"$GMT" replay -q --pprof "$T/a.pb.gz" --sample alloc "$T/v.gmt" || return 1
	all=$(pp_sum 2 "$T/a.pb.gz" -tagfocus=category=^vulkan_device$)
	expect '(( all - leak >= ctx * 9 / 10 && all - leak <= ctx * 12 / 10 ))' \
		"allocated over the run $all, in the window $leak: one context less"
}

# A stripped program: its frames have no names in the recording, so its
# mapping carries the file's build id (the one readelf reads) and the
# frames its file addresses, and those addresses, given to addr2line with
# the unstripped file of that build id (found under .build-id/, as a
# debuginfod or a -debug package lays it out), name the workload's own
# functions: what pprof does with PPROF_BINARY_PATH (go tool pprof's own
# object reader matches no build ids, so addr2line stands in for it)
test_pprof_stripped_program_has_build_ids() {
	need_root
	need_pprof
	local id dir addrs names
	strip -s -o "$T/wl-stripped" "$WL"
	id=$(readelf -n "$T/wl-stripped" | awk '/Build ID:/ { print $3; exit }')
	expect '[ ${#id} -ge 16 ]' "the workload has a build id: $id" || return 1
	dir=$T/debug/.build-id/${id:0:2}
	mkdir -p "$dir" && cp "$WL" "$dir/${id:2}.debug"
	"$GMT" record -q -o "$T/s.gmt" -- "$T/wl-stripped" --steps 6 --step-mib 4 --out /dev/null \
		>/dev/null || return 1
	"$GMT" replay -q --pprof "$T/s.pb.gz" "$T/s.gmt" || return 1
	pp "$T/s.pb.gz" -raw -symbolize=none >"$T/raw" || return 1
	expect 'grep -q "^[0-9]*: 0x0/0xffffffffffffffff/0x0 wl-stripped $id *$" "$T/raw"' \
		'@its mapping, with the build id: $(sed -n "/^Mappings/,\$p" "$T/raw")' || return 1
	expect 'pp "$T/s.pb.gz" -top -symbolize=none | grep -q "^Build ID: $id"' "pprof shows it" ||
		return 1
	# the locations in that mapping: their addresses, and the name each had
	addrs=$(awk -v m="$(grep -m1 "wl-stripped $id" "$T/raw" | cut -d: -f1)" '
		/^Locations/ { s = 1; next } /^Mappings/ { s = 0 }
		s && $3 == "M=" m { print $2 }' "$T/raw")
	expect '[ -n "$addrs" ] && grep -q "wl-stripped+0x" "$T/raw"' \
		'@frames with no name: $(cat "$T/raw")' || return 1
	# shellcheck disable=SC2086 # one address a word
	names=$(addr2line -f -e "$dir/${id:2}.debug" $addrs | awk 'NR % 2' | sort -u | tr '\n' ' ')
	expect '[[ " $names " == *" grow_step "* && " $names " == *" main "* ]]' \
		"the addresses name the workload's functions: $names" || return 1
	# and the recording says the same build id for the file
	expect '"$GMT" replay --events "$T/s.gmt" | jq -se --arg id "$id" \
		"[.[] | select(.type == \"module\" and .name == \"wl-stripped\")][0].build_id == \$id" >/dev/null' \
		"the module record"
}
