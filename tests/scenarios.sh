# The verdicts on the docs/scenarios.md field reports and on controls, from
# trace files tools/scenario.c writes. Each runs over several seeds, so
# sizes, counts, rates and noise differ from run to run: what passes is the
# judgment, not numbers it was tuned to. Needs no root.
SCEN=$ROOT/.output/gmt-scenario
SEEDS="1 2 3 4 5 6"

# the jq helpers every check may use; $e is what the generator put in
JQ_DEFS='
def f(k; c): [.findings[] | select(.kind == k and .category == c)];
def kinds: [.findings[] | .kind];
def near(a; b; tol): ((a - b) | fabs) <= tol * (b | fabs);
'

# scenario NAME SEED: writes $T/NAME.gmt, its expectations, and the report
scenario() {
	"$SCEN" "$1" "$T/$1.gmt" "$2" -e >"$T/e.json" || return 1
	"$GMT" replay --json "$T/$1.gmt" >"$T/r.json" || return 1
}

# check 'JQ BOOLEAN' [what]
check() {
	if ! jq -e --slurpfile e "$T/e.json" "$JQ_DEFS $1" "$T/r.json" >/dev/null; then
		echo "# seed $seed: expected $1${2:+ ($2)}"
		echo "# generated: $(cat "$T/e.json")"
		jq -c '[.findings[] | select(.kind != "steady") | {kind, category, reasons, message}]' \
			"$T/r.json" | cut -c1-1500 | sed 's/^/# /'
		return 1
	fi
}

# no leak, cache or unexplained growth anywhere
no_growth() {
	check '[.findings[] | select(.kind == "leak" or .kind == "bounded_cache" or
		.kind == "unexplained_device_growth")] | length == 0' "$1"
}

# 1: host heap growth of a cache that is filling: its stacks say it is the
# prompt cache, within --cache-ram (the default 8 GiB); where the machine
# has less free than the cache may still take, it is OOM-killed first
test_scenario_host_cache_filling_with_oom_projection() {
	local oom=0
	for seed in $SEEDS; do
		scenario host-cache "$seed" || return 1
		check 'f("bounded_cache"; "host_anon") | length == 1' "one host heap cache, filling" ||
			return 1
		check '[.findings[] | select(.kind == "leak")] | length == 0' "no leak" || return 1
		check 'f("bounded_cache"; "host_anon")[0] | .reason == "role_filling" and
			.roles[0].role == "prompt cache" and .roles[0].bound_bytes == 8192 * 1048576' \
			"held by the prompt cache, against --cache-ram" || return 1
		check 'f("bounded_cache"; "host_anon")[0] | near(.bytes_per_request; $e[0].step_bytes; 0.05)' \
			"its size per request" || return 1
		check '((8192 * 1048576 - ($e[0].anon_bytes - $e[0].base_bytes)) / $e[0].step_bytes) as $n |
			f("bounded_cache"; "host_anon")[0] | (.requests_to_cache_full - $n | fabs) <= 1 + 0.1 * $n' \
			"requests until the cache is full" || return 1
		if jq -e '.available_bytes < 8192 * 1048576 - (.anon_bytes - .base_bytes)' \
			"$T/e.json" >/dev/null; then
			oom=$((oom + 1))
			check 'f("bounded_cache"; "host_anon")[0] | (.reasons | index("cache_oom_first")) != null and
				(.requests_to_oom - $e[0].available_bytes / $e[0].step_bytes | fabs) <=
				1 + 0.1 * $e[0].available_bytes / $e[0].step_bytes' \
				"OOM-killed first, after the requests the free RAM holds" || return 1
		else
			check 'f("bounded_cache"; "host_anon")[0] | (.reasons | index("cache_oom_first")) == null' \
				"the machine holds the full cache" || return 1
		fi
		check 'f("bounded_cache"; "host_anon")[0].stacks[0].label | test("server_prompt_cache::save")' \
			"the stack holding it" || return 1
		check 'f("bounded_cache"; "host_anon")[0].evidence_codes | index("host_not_gpu") != null' \
			"GPU memory stayed flat" || return 1
		check '[.findings[] | select(.category | startswith("vulkan"))] |
			all(.kind == "steady")' "Vulkan memory is flat" || return 1
	done
	echo "# of $(wc -w <<<"$SEEDS") seeds, $oom run out of free memory before the cache fills"
	expect '((oom > 0))' "a seed where the cache would not fit" || return 1
}

# 2: a fixed step per request, whatever the prompt, up to the cache's limit
test_scenario_fixed_step_bounded_cache() {
	for seed in $SEEDS; do
		scenario fixed-step-cache "$seed" || return 1
		check 'f("bounded_cache"; "host_anon") | length == 1' || return 1
		check 'f("bounded_cache"; "host_anon")[0] | near(.ceiling_bytes; $e[0].anon_bytes; 0.02)' \
			"the ceiling" || return 1
		check 'f("bounded_cache"; "host_anon")[0] | near(.bytes_per_request; $e[0].step_bytes; 0.02)' \
			"the step" || return 1
		check 'f("bounded_cache"; "host_anon")[0] | .step_vs_tokens == "independent" and .step_cv < 0.1' \
			"a fixed step, independent of tokens" || return 1
		check 'f("bounded_cache"; "host_anon")[0] | (.since_request - $e[0].limit_entries | fabs) <= 1' \
			"where it levels off" || return 1
		check 'f("bounded_cache"; "host_anon")[0].reasons | index("fixed_entries") != null' \
			"said: fixed-size entries" || return 1
		check 'kinds | index("leak") == null' || return 1
	done
}

# 2, with no plateau: the same fixed step goes on past --cache-ram 1024, which
# the prompt cache (its stacks) may not: a leak, its role past its bound
test_scenario_fixed_step_leak() {
	for seed in $SEEDS; do
		scenario fixed-step-leak "$seed" || return 1
		check 'f("leak"; "host_anon") | length == 1' || return 1
		check 'f("leak"; "host_anon")[0] | (.reasons | index("role_past_bound")) != null and
			.role_bound_bytes == 1024 * 1048576' "the prompt cache past --cache-ram" || return 1
		check 'f("leak"; "host_anon")[0] | near(.bytes_per_request; $e[0].step_bytes; 0.02)' || return 1
		check 'f("leak"; "host_anon")[0] | .step_vs_tokens == "independent" and .step_cv < 0.1' \
			|| return 1
		check 'kinds | index("bounded_cache") == null' || return 1
	done
}

# 3: evicted to GTT by another process, never back, decode rate falls
test_scenario_eviction_slowdown() {
	for seed in $SEEDS; do
		scenario eviction "$seed" || return 1
		check 'f("eviction_slowdown"; "bo_vram") | length == 1' || return 1
		check 'f("eviction_slowdown"; "bo_vram")[0] | .evictor_pid == 4242 and .evictor_comm == "llava"' \
			"the evictor" || return 1
		check 'f("eviction_slowdown"; "bo_vram")[0] | .evicted_bytes == $e[0].evicted_bytes and
			.returned_bytes == 0' "what left VRAM and did not come back" || return 1
		check 'f("eviction_slowdown"; "bo_vram")[0] | near(.rate_before; $e[0].rate_before; 0.1) and
			near(.rate_after; $e[0].rate_after; 0.1)' "decode rates before and after" || return 1
		check 'f("eviction_slowdown"; "bo_vram")[0] | .requests_before == $e[0].requests_before and
			.requests_after == $e[0].requests_after' "requests on each side" || return 1
		check 'f("eviction_slowdown"; "bo_vram")[0].reasons |
			index("evict_none_back") != null and index("evict_after_free") != null' \
			"said: none moved back, after the evictor freed its buffers" || return 1
		no_growth "an eviction is no leak" || return 1
		check 'kinds | index("step") == null' "the VRAM drop is part of the eviction" || return 1
	done
}

# 4: device memory grows with graphs, the allocation calls do not
test_scenario_unexplained_device_growth() {
	for seed in $SEEDS; do
		scenario graph-growth "$seed" || return 1
		check 'f("unexplained_device_growth"; "nvml_device") | length == 1' || return 1
		check 'f("unexplained_device_growth"; "nvml_device")[0] |
			near(.bytes_per_request; $e[0].step_bytes; 0.05)' "the rate" || return 1
		check 'f("unexplained_device_growth"; "nvml_device")[0] |
			near(.graph_execs_per_unit; 1; 0.05) and .graph_execs_live == $e[0].graphs' \
			"live graph executables" || return 1
		check 'f("unexplained_device_growth"; "nvml_device")[0].reasons |
			index("graph_cache") != null' "said: a growing CUDA graph cache" || return 1
		check 'f("alloc_failure"; "cuda_graphs")[0] | .call == "cuGraphInstantiateWithFlags" and
			.result == "CUDA_ERROR_OUT_OF_MEMORY"' "the failing call" || return 1
		check '[.findings[] | select(.kind == "leak")] | length == 0' || return 1
	done
}

# 4 on a fast GPU, as on the H100: a graph executable per image request,
# a hundred requests between NVML's samples. The count has its own verdict,
# in counts; NVML's two samples are not called steady but not judged
test_scenario_graph_burst_is_judged_in_counts() {
	for seed in $SEEDS; do
		scenario graph-burst "$seed" || return 1
		check 'f("leak"; "cuda_graphs") | length == 1' || return 1
		check 'f("leak"; "cuda_graphs")[0] | .unit == "count" and
			near(.count_per_request; 1; 0.02) and .last_count == $e[0].graphs and
			(.reasons | index("graphs_hold") != null)' "in counts, what they hold" ||
			return 1
		check 'f("not_judged"; "nvml_device")[0] | .samples == $e[0].nvml_samples' \
			"NVML not judged, with its samples" || return 1
		check '[.findings[] | select(.category == "nvml_device")] | length == 1' \
			"and not also steady" || return 1
		check '[.findings[] | select(.kind == "leak" and .unit == "bytes")] | length == 0' ||
			return 1
	done
}

# 4 as the H100's short image run showed it: a graph a request, 24
# requests in seconds. ggml-cuda sweeps out graphs unused for 10 s every
# 5 s, and none could have been swept yet: growing, not a leak, and no
# confidence above 0.5
test_scenario_graph_short_run_is_too_early() {
	for seed in $SEEDS; do
		scenario graph-short "$seed" || return 1
		check '[.findings[] | select(.kind == "leak")] | length == 0' "no leak" || return 1
		check 'f("growing"; "cuda_graphs")[0] | .reason == "count_before_sweep" and
			.confidence <= 0.5 and near(.count_per_request; 1; 0.05)' \
			"growing, before the sweep could come" || return 1
	done
}

# 4 as the H200 showed it: graphs made one a request, then swept back to a
# few; NVML rose with them and held, while the API's only growth was a step.
# The count is a bounded set that swings (not "steady between 0 and 265"),
# and NVML has a verdict of its own (it had none)
test_scenario_graph_sweep_swings_and_nvml_judged() {
	for seed in $SEEDS; do
		scenario graph-sweep "$seed" || return 1
		check 'f("bounded_cache"; "cuda_graphs") | length == 1' || return 1
		check 'f("bounded_cache"; "cuda_graphs")[0] | .reason == "count_swings" and
			.ceiling_count == $e[0].peak_graphs and .last_count == $e[0].last_graphs' \
			"swings, up to the peak, down to the last" || return 1
		check '[.findings[] | select(.category == "nvml_device")] | length == 1' \
			"NVML has a verdict" || return 1
		check '[.findings[] | select(.category == "nvml_device" and
			(.kind == "leak" or .kind == "not_judged"))] | length == 0' \
			"and it is neither a leak nor not judged" || return 1
	done
}

# 5: start-up fails; the KV cache is what to shrink
test_scenario_startup_alloc_failure() {
	for seed in $SEEDS; do
		scenario startup-oom "$seed" || return 1
		check 'f("alloc_failure"; "vulkan_device") | length == 1' || return 1
		check 'f("alloc_failure"; "vulkan_device")[0] | .size_bytes == $e[0].failed_bytes and
			.result == "VK_ERROR_OUT_OF_DEVICE_MEMORY" and .heap == 0' "call, size, heap" ||
			return 1
		check 'f("alloc_failure"; "vulkan_device")[0] | .live_bytes == $e[0].live_bytes' || return 1
		check 'f("alloc_failure"; "vulkan_device")[0].stacks[0] |
			(.label | test("llama_kv_cache")) and .bytes == $e[0].kv_bytes and .count == 4' \
			"the KV cache, biggest first" || return 1
		check 'f("alloc_failure"; "vulkan_device")[0] | .stacks[0].role == "KV cache" and
			(.reasons | index("failed_roles") != null and index("fail_try_shrink") != null)' \
			"what was live by role, the KV cache first" || return 1
	done
	# the text report opens with the verdicts
	"$GMT" replay "$T/startup-oom.gmt" >"$T/r.txt" || return 1
	expect '[ "$(grep -n -m1 "^Verdicts" "$T/r.txt" | cut -d: -f1)" -lt "$(grep -n -m1 "^Traced" "$T/r.txt" | cut -d: -f1)" ]' \
		"verdicts before the evidence" || return 1
	expect 'grep -q "ALLOCATION FAILURE: Vulkan device" "$T/r.txt"' || return 1
}

# controls: none of these is a leak
test_scenario_control_steady() {
	for seed in $SEEDS; do
		scenario steady "$seed" || return 1
		no_growth "a steady server" || return 1
		check 'f("steady"; "host_anon") | length == 1' || return 1
	done
}

test_scenario_control_warmup() {
	for seed in $SEEDS; do
		scenario warmup "$seed" || return 1
		check '[.findings[] | select(.kind == "leak" or .kind == "unexplained_device_growth")] |
			length == 0' "warm-up that settles" || return 1
		check '[.findings[] | select(.category == "vulkan_device")][0].kind |
			IN("step", "steady", "bounded_cache")' || return 1
	done
}

test_scenario_control_noisy_flat() {
	for seed in $SEEDS; do
		scenario noisy "$seed" || return 1
		no_growth "noisy but flat" || return 1
	done
}

test_scenario_control_cache_fills() {
	for seed in $SEEDS; do
		scenario cache-fills "$seed" || return 1
		check 'f("bounded_cache"; "host_anon") | length == 1' "a cache that fills and stays" ||
			return 1
		check 'f("bounded_cache"; "host_anon")[0].step_vs_tokens == "grows_with_tokens"' \
			"its entries follow the prompt" || return 1
		check 'f("bounded_cache"; "host_anon")[0] | .ceiling_bytes < $e[0].base_bytes + $e[0].limit_bytes * 1.02 and
			.ceiling_bytes > $e[0].base_bytes + $e[0].limit_bytes * 0.5' "its ceiling" || return 1
	done
}

test_scenario_control_eviction_moved_back() {
	for seed in $SEEDS; do
		scenario eviction-back "$seed" || return 1
		check 'f("eviction_slowdown"; "bo_vram")[0] | .still_out_bytes == 0 and
			.returned_bytes == $e[0].evicted_bytes' "all of it back" || return 1
		check 'f("eviction_slowdown"; "bo_vram")[0].reasons | index("decode_fell") == null and
			index("decode_not_fell") != null' "no slowdown claimed" || return 1
	done
}

# the generator's files are real recordings: replays agree with themselves
test_scenario_files_replay_identically() {
	local s
	for s in $("$SCEN" --list); do
		"$SCEN" "$s" "$T/$s.gmt" 7 || return 1
		expect '[ "$(stat -c %a "$T/$s.gmt")" = 600 ]' "$s is 0600" || return 1
		"$GMT" replay --json "$T/$s.gmt" >"$T/a.json" || return 1
		"$GMT" replay --json "$T/$s.gmt" >"$T/b.json" || return 1
		expect 'cmp -s "$T/a.json" "$T/b.json"' "$s replays the same" || return 1
	done
}

# the prompt cache filling toward --cache-ram 8192, each entry sized by the
# server's own state copy: a bounded cache filling, not a leak, full after
# as many more requests as the entries say
test_scenario_cache_filling_is_not_a_leak() {
	for seed in $SEEDS; do
		scenario cache-filling "$seed" || return 1
		check 'f("leak"; "host_anon") | length == 0' "no leak" || return 1
		check 'f("bounded_cache"; "host_anon") | length == 1 and .[0].reasons[0] == "cache_filling"' \
			"the cache filling" || return 1
		check 'f("bounded_cache"; "host_anon")[0] | near(.requests_to_cache_full;
			($e[0].limit_bytes - $e[0].saved_bytes) / ($e[0].saved_bytes / $e[0].requests); 0.02)' \
			"full after as many requests as its entries say" || return 1
	done
}

# the same with half an entry a request more that is never given back: the
# entries do not account for the growth, so it is a leak, at the whole rate
test_scenario_cache_and_leak_is_a_leak() {
	for seed in $SEEDS; do
		scenario cache-and-leak "$seed" || return 1
		check 'f("leak"; "host_anon") | length == 1' "a leak, not the cache filling" || return 1
		check 'f("leak"; "host_anon")[0] | near(.bytes_per_request; $e[0].step_bytes + $e[0].leak_bytes; 0.1)' \
			"at the entries' and the leak's rate together" || return 1
	done
}
