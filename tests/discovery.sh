# --watch finds processes from BPF events, not from /proc each interval
# (issue 35): at their exec (a name of --comm) or their first mapping of a
# GPU library or device node, before they run on.
# Run by tests/run.sh: each test_* function runs in its own shell, in the
# temp dir $T, with helpers from tests/lib.sh. Return 0 to pass.

# 30 servers, one after another, each living about 0.1 s and answering one
# request: each is traced from its exec and its request is counted. The
# /proc scan of each interval found 3 of 30 here, with none of their
# requests (bench/results.md).
test_discovery_short_lived_servers() {
	need_root
	local i n=30 pids=() found reqs slow
	GMT_READY="watching" start_tracer --watch --comm workload --no-tui --json || return 1
	for ((i = 0; i < n; i++)); do
		"$WL" --steps 2 --step-mib 1 --step-ms 50 --http 1 >"$T/wl.$i" || return 1
		pids+=("$(jqr .pid "$T/wl.$i")")
	done
	kill -INT "$GMT_PID"
	wait_tracer
	expect '[ $? = 0 ]' "the tracer failed: $(tail -5 "$T/gmt.err")" || return 1
	# ours only: other programs named workload may have run meanwhile
	jq --argjson p "[$(
		IFS=,
		echo "${pids[*]}"
	)]" '[.processes[] | select(.pid as $x | $p | index($x))]' "$T/gmt.out" >"$T/ours.json"
	found=$(jqr length "$T/ours.json")
	reqs=$(jqr '[.[].requests[] | select(.status == 200)] | length' "$T/ours.json")
	slow=$(jqr '[.[] | select(.traced_from_s == null or .traced_from_s > 1)] | length' "$T/ours.json")
	echo "# found $found of $n, $reqs of $n requests counted, $slow traced late" \
		"(traced_from_s median $(jqr "[.[].traced_from_s] | sort | .[length / 2 | floor]" "$T/ours.json"), max $(jqr '[.[].traced_from_s] | max' "$T/ours.json") s)"
	expect '[ "$found" = $n ]' "every process found" || return 1
	expect '[ "$reqs" = $n ]' "every request counted" || return 1
	expect '[ "$(jqr "[.[] | select(.traced_how == \"exec\")] | length" "$T/ours.json")" = $n ]' \
		"each found at its exec: $(jq -c '[.[].traced_how] | group_by(.) | map({(.[0] // "none"): length}) | add' "$T/ours.json")" ||
		return 1
	expect '[ "$slow" = 0 ]' "each traced within 1 s of its start (its fork, under load: its exec is what counts, above)" || return 1
	expect '[ "$(jqr "[.[] | select(.comm == \"workload\")] | length" "$T/ours.json")" = $n ]' \
		"each named, though gone before user space read /proc" || return 1
}

# A process of no watched name found when it maps a GPU library: vkalloc
# links the Vulkan loader, which the dynamic loader maps before main. Its
# GPU allocations, made once the driver's probes are in, are all counted.
test_discovery_gpu_mapping() {
	need_root
	need_lavapipe
	local pid k='.gpu.by_kind[] | select(.api == "Vulkan")'
	mkfifo "$T/go" "$T/done" "$T/ready"
	GMT_READY="watching" start_tracer --watch --no-tui --json || return 1
	"$VK" --ready "$T/ready" --wait "$T/go" --out "$T/done" --loader 3 --direct 2 \
		2>"$T/vk.err" &
	pid=$!
	await_line "$T/ready" "$pid" vkalloc "$T/vk.err" >/dev/null || return 1
	expect 'wait_line "$T/gmt.err" "tracing pid $pid"' \
		"@--watch found pid $pid: \$(tail -3 "$T/gmt.err")" || { kill "$pid"; return 1; }
	expect 'wait_line "$T/gmt.err" "attached Vulkan driver"' "the driver probed" ||
		{ kill "$pid"; return 1; }
	echo go >"$T/go"
	await_all "$T/done" "$T/wl.json" "$pid" vkalloc "$T/vk.err" || return 1
	wait "$pid"
	kill -INT "$GMT_PID"
	wait_tracer
	expect '[ $? = 0 ]' "the tracer failed: $(tail -5 "$T/gmt.err")" || return 1
	jq ".processes[] | select(.pid == $pid)" "$T/gmt.out" >"$T/p.json"
	expect '[ "$(jqr .traced_how "$T/p.json")" = gpu_mapping ]' \
		"found by its mapping: $(jq -c '{traced_how, traced_mapping, traced_from_s}' "$T/p.json")" ||
		return 1
	expect '[[ $(jqr .traced_mapping "$T/p.json") == libvulkan.so* ]]' "the loader's file" || return 1
	expect 'jq -e ".traced_from_s < 1" "$T/p.json" >/dev/null' "traced from its start-up" ||
		return 1
	expect '[ "$(jqr "$k | .allocs" "$T/p.json")" = "$(jqr .allocs "$T/wl.json")" ]' \
		"every allocation: $(jq -c "[$k]" "$T/p.json")"
}
