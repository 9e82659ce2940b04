# GPU APIs: Vulkan on lavapipe, CUDA and HIP stand-ins, llama.cpp on Vulkan, debug files, the Vulkan helper.
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

# GPU APIs. Vulkan is Mesa's lavapipe behind the real loader; CUDA and HIP are
# the stand-in libraries of tests/fake, dlopen'ed by tests/gpuwork.
VK=$ROOT/.output/tests/vkalloc
GW=$ROOT/.output/tests/gpuwork
FAKE=$ROOT/.output/tests/fake

need_lavapipe() {
	"$VK" --loader 0 --direct 0 >/dev/null 2>&1 ||
		skip "no Vulkan device (mesa-vulkan-drivers' lavapipe is installed by make deps)"
}

# watched_vkalloc: vkalloc run under a tracer that watches (start_tracer's,
# GMT_PID), released once the tracer has attached to its driver; the
# tracer stopped after it, the report of this vkalloc alone in $T/vk.json, its
# own summary in $T/wl.json, its pid VK_PID
watched_vkalloc() {
	mkfifo "$T/go" "$T/done"
	"$VK" --wait "$T/go" --out "$T/done" --loader 6 --direct 4 &
	VK_PID=$!
	expect 'wait_line "$T/gmt.err" "attached Vulkan driver"' \
		'@it found the program and its driver: $(tail -3 "$T/gmt.err")' || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	kill -TERM "$GMT_PID"
	wait_tracer || return 1
	# by its pid: a watch sees every vkalloc on the machine
	jq --argjson pid "$VK_PID" '.processes |= map(select(.pid == $pid))' "$T/gmt.out" >"$T/vk.json"
}

# the Vulkan report in $1 against vkalloc's summary in $2
check_vulkan() {
	local r=$1 wl=$2 k='.processes[0].gpu.by_kind[] | select(.api == "Vulkan")'
	expect '[ "$(jqr "[$k] | length" "$r")" = 1 ]' "one Vulkan kind" || return 1
	expect '[ "$(jqr "$k | .kind" "$r")" = device ]' "lavapipe's one type is device-local" ||
		return 1
	expect '[ "$(jqr "$k | .allocs" "$r")" = "$(jqr .allocs "$wl")" ]' "allocations" || return 1
	expect '[ "$(jqr "$k | .frees" "$r")" = "$(jqr .frees "$wl")" ]' "frees" || return 1
	expect '[ "$(jqr "$k | .alloc_bytes" "$r")" = "$(jqr .bytes "$wl")" ]' "bytes" || return 1
	expect '[ "$(jqr "$k | .live_bytes" "$r")" = "$(jqr .live_bytes "$wl")" ]' "live" || return 1
	expect '[ "$(jqr "$k | .failed" "$r")" = 1 ]' "one failure" || return 1
	expect '[ "$(jqr .processes[0].gpu.unknown_frees "$r")" = 0 ]' "no unmatched free" || return 1
	expect '[ "$(jqr .processes[0].gpu.maps "$r")" = 1 ]' "one map" || return 1
	expect '[ "$(jqr .processes[0].gpu.unmaps "$r")" = 1 ]' "one unmap" || return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].result "$r")" = "$(jqr .fail_result "$wl")" ]' ||
		return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].result_name "$r")" = VK_ERROR_OUT_OF_DEVICE_MEMORY ]' ||
		return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].size_bytes "$r")" = "$(jqr .fail_size "$wl")" ]' ||
		return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].stack[0].symbol "$r")" = alloc_impossible ]' "failure stack: $(jq -c .processes[0].gpu.failures "$r")" ||
		return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].live_total_bytes "$r")" = "$(jqr .live_bytes "$wl")" ]' \
		"live total at the failure" || return 1
	# each path's live bytes under the stack that made them
	expect '[ "$(jq "[.processes[0].gpu.live_by_stack[] | select(.stack[0].symbol == \"alloc_via_loader\") | .bytes] | add" "$r")" = "$(jqr .live_loader_bytes "$wl")" ]' \
		"live bytes allocated through the loader" || return 1
	expect '[ "$(jq "[.processes[0].gpu.live_by_stack[] | select(.stack[0].symbol == \"alloc_direct\") | .bytes] | add" "$r")" = "$(jqr .live_direct_bytes "$wl")" ]' \
		"live bytes allocated through vkGetDeviceProcAddr pointers" || return 1
	expect '[ "$(jqr ".gpu_devices[0].driver" "$r")" = libvulkan_lvp.so ]' "the driver's device" ||
		return 1
	expect '[ "$(jqr ".gpu_devices[0].memory_types[0].flags" "$r")" = "device-local|host-visible|host-coherent|host-cached" ]'
}

# -p on a running Vulkan program: the loader and the driver in its maps
test_gpu_vulkan_attach_pid() {
	need_root
	need_lavapipe
	mkfifo "$T/go" "$T/done" "$T/ready"
	"$VK" --ready "$T/ready" --wait "$T/go" --out "$T/done" --loader 6 --direct 4 \
		--dedicated 2>"$T/vk.err" &
	local pid=$!
	# the device exists: the driver is mapped
	await_line "$T/ready" "$pid" vkalloc "$T/vk.err" >/dev/null || return 1
	start_tracer --json -p "$pid" || return 1
	expect 'grep -q "attached Vulkan driver" "$T/gmt.err"' "attached to lavapipe" || return 1
	expect 'grep -q "attached Vulkan loader" "$T/gmt.err"' "attached to the loader" || return 1
	echo go >"$T/go"
	await_all "$T/done" "$T/wl.json" "$pid" vkalloc "$T/vk.err" || return 1
	wait_tracer || return 1
	check_vulkan "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .processes[0].gpu.dedicated_allocs "$T/gmt.out")" = 1 ]' "dedicated"
}

# -- CMD: the loader is probed before it loads; the driver when it is mapped
test_gpu_vulkan_spawn() {
	need_root
	need_lavapipe
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached Vulkan driver" start_tracer --json -- "$VK" --wait "$T/go" \
		--out "$T/done" || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	check_vulkan "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .processes[0].gpu.dedicated_allocs "$T/gmt.out")" = 0 ]' "none dedicated"
}

# -- CMD that allocates as soon as its device exists, as llama-server does
# its model's buffers: the drivers its loader would load (their manifests)
# were asked and probed before it started, so none of its allocations is
# missed; the driver is said (and its device listed) once it is loaded
test_gpu_vulkan_spawn_allocates_at_once() {
	need_root
	need_lavapipe
	mkfifo "$T/done"
	GMT_READY="tracing" start_tracer --json -- "$VK" --out "$T/done" --loader 6 --direct 4 ||
		return 1
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	check_vulkan "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr "[.gpu_devices[] | select(.api == \"Vulkan\")] | length" "$T/gmt.out")" = 1 ]' \
		"lavapipe's device alone, not the other drivers' (no device here): $(jq -c .gpu_devices "$T/gmt.out")" ||
		return 1
	expect 'grep -q "attached Vulkan driver: .* (probed before it was loaded)" "$T/gmt.err"' \
		"the driver probed before it was loaded: $(grep Vulkan "$T/gmt.err")"
}

# -p on a Vulkan program that has its loader and no driver yet: the
# drivers its manifests name are probed before tracing begins, so its
# allocations straight after it makes its device are all seen
test_gpu_vulkan_attach_pid_before_the_driver() {
	need_root
	need_lavapipe
	mkfifo "$T/loaded" "$T/start" "$T/done"
	"$VK" --loaded "$T/loaded" --start "$T/start" --out "$T/done" --loader 6 --direct 4 2>"$T/vk.err" &
	local pid=$!
	# its line: it runs, its loader mapped; then it waits for a byte
	await_line "$T/loaded" "$pid" vkalloc "$T/vk.err" >/dev/null || return 1
	start_tracer --json -p "$pid" || return 1
	echo go >"$T/start"
	await_all "$T/done" "$T/wl.json" "$pid" vkalloc "$T/vk.err" || return 1
	wait_tracer || return 1
	check_vulkan "$T/gmt.out" "$T/wl.json"
}

# Manifests are the target's files: broken ones (not JSON, no ICD, a
# library_path that is no string or leads out, a huge file, a driver that
# is not one) cost the tracer nothing; the real driver beside those the
# loader passes over is still probed in time. (A FIFO would hang the
# target's own loader: procfs's tests have those.)
test_gpu_vulkan_hostile_manifests() {
	need_root
	need_lavapipe
	local d=$T/icd rc
	mkdir "$d" "$T/fatal"
	echo '{"file_format_version": "1.0.0"}' >"$d/b.json"
	echo '{"ICD": {"library_path": 42}}' >"$d/c.json"
	echo '{"ICD": {"library_path": "../../../../etc/shadow"}}' >"$d/d.json"
	echo '{"ICD": {"library_path": "/bin/true"}}' >"$d/e.json"
	# these two the loader refuses to start with: the target fails
	echo 'not json {' >"$T/fatal/a.json"
	head -c $((1 << 20)) /dev/zero | tr '\0' ' ' >"$T/fatal/g.json"
	VK_ADD_DRIVER_FILES=$d:$T/fatal timeout 60 "$GMT" --json -- "$VK" --out "$T/wl0.json" \
		>"$T/gmt0.out" 2>"$T/gmt0.err"
	rc=$?
	expect '[ $rc = 0 ] && [ "$(jqr .processes[0].exit_code "$T/gmt0.out")" = 1 ]' \
		"the tracer's exit $rc, its report says vkalloc exited 1: $(tail -3 "$T/gmt0.err")" || return 1
	VK_ADD_DRIVER_FILES=$d timeout 60 "$GMT" --json -- "$VK" --out "$T/wl.json" --loader 6 \
		--direct 4 >"$T/gmt.out" 2>"$T/gmt.err"
	rc=$?
	expect '[ $rc = 0 ]' "the tracer's exit $rc: $(tail -3 "$T/gmt.err")" || return 1
	check_vulkan "$T/gmt.out" "$T/wl.json" || return 1
	expect '! grep -q "shadow" "$T/gmt.out" "$T/gmt.err"' "nothing of a path leading out: $(grep shadow "$T/gmt.out" "$T/gmt.err")"
}

# the CUDA stand-in dlopen'ed after the tracer started: attached on its mmap
test_gpu_cuda_dlopen() {
	need_root
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached CUDA driver API" start_tracer --json -- "$GW" --lib "$FAKE/libcuda.so.1" \
		--wait "$T/go" --out "$T/done" --n 10 || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	local r=$T/gmt.out g='.processes[0].gpu'
	check_gpu_kinds "$r" "$T/wl.json" || return 1
	expect '[ "$(jqr "$g.unknown_frees" "$r")" = 0 ]' "every free matched" || return 1
	expect '[ "$(jqr "$g.failures | length" "$r")" = 1 ]' "one failure" || return 1
	expect '[ "$(jqr "$g.failures[0].result_name" "$r")" = CUDA_ERROR_OUT_OF_MEMORY ]' || return 1
	expect '[ "$(jqr "$g.failures[0].call" "$r")" = cuMemAlloc_v2 ]' || return 1
	expect '[ "$(jqr "$g.failures[0].size_bytes" "$r")" = $((1 << 50)) ]' || return 1
	expect '[[ "$(jqr "[$g.failures[0].stack[].symbol] | join(\" \")" "$r")" == "alloc_too_much cuda_script main "* ]]' \
		"failure stack: $(jq -c "[$g.failures[0].stack[].symbol]" "$r")" || return 1
	# the ten cuMemAlloc_v2 of 1..10 MiB, the first five freed: 6+..+10 MiB live
	expect '[ "$(jqr "[$g.live_by_stack[] | select(.stack[0].symbol == \"alloc_weights\")][0] | [.count, .bytes] | join(\" \")" "$r")" = "5 $((40 * MIB))" ]' \
		"live cuMemAlloc_v2 under alloc_weights" || return 1
	expect '[ "$(jqr "$g.device_memory.total_bytes" "$r")" = $((80 << 30)) ]' "cuMemGetInfo" ||
		return 1
	expect '[ "$(jqr ".probes[] | select(.name == \"libcuda.so.1\") | .status" "$r")" = attached ]'
}

# -p on a program that loaded the HIP stand-in before the tracer came
test_gpu_hip_attach_pid() {
	need_root
	mkfifo "$T/go" "$T/done" "$T/ready"
	"$GW" --api hip --lib "$FAKE/libamdhip64.so" --ready "$T/ready" --wait "$T/go" \
		--out "$T/done" 2>"$T/gw.err" &
	local pid=$!
	await_line "$T/ready" "$pid" gpuwork "$T/gw.err" >/dev/null || return 1
	start_tracer --json -p "$pid" || return 1
	expect 'grep -q "attached HIP runtime" "$T/gmt.err"' || return 1
	echo go >"$T/go"
	await_all "$T/done" "$T/wl.json" "$pid" gpuwork "$T/gw.err" || return 1
	wait_tracer || return 1
	check_gpu_kinds "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].result_name "$T/gmt.out")" = hipErrorOutOfMemory ]'
}

# a recording replays to the same report: the stacks travel in the file
test_gpu_record_replay_identical() {
	need_root
	local f=$T/gpu.gmt
	mkfifo "$T/go"
	GMT_READY="attached CUDA driver API" start_tracer record -o "$f" -- "$GW" \
		--lib "$FAKE/libcuda.so.1" --n 4 --wait "$T/go" --out /dev/null || return 1
	echo go >"$T/go"
	wait_tracer || return 1
	"$GMT" replay "$f" >"$T/replay.txt" || return 1
	cp "$T/gmt.out" "$T/live.txt"
	expect 'cmp -s "$T/live.txt" "$T/replay.txt"' "identical reports" || return 1
	expect 'grep -q "GPU API calls" "$T/replay.txt"' "the GPU section is there"
}

# a stripped program's frames named from its separate debug file, found by
# .gnu_debuglink beside it, or by build id under --debug-dir; not without it
test_gpu_stacks_from_debug_files() {
	need_root
	local s=$ROOT/.output/tests/stripped id top
	id=$(readelf -n "$s/gpuwork-bid" | awk '/Build ID/ {print $3}')
	expect '[ -n "$id" ]' "gpuwork-bid has a build id" || return 1
	mkdir -p "$T/debug/.build-id/${id:0:2}"
	cp "$s/gpuwork-bid.debug" "$T/debug/.build-id/${id:0:2}/${id:2}.debug"
	failure_top() { # PROGRAM [OPTIONS...]: the top frame of the failure's stack
		local prog=$1
		shift
		rm -f "$T/go" && mkfifo "$T/go"
		GMT_READY="attached CUDA driver API" start_tracer --json "$@" -- "$prog" \
			--lib "$FAKE/libcuda.so.1" --n 2 --wait "$T/go" --out /dev/null || return 1
		echo go >"$T/go"
		wait_tracer || return 1
		jqr '.processes[0].gpu.failures[0].stack[0].symbol' "$T/gmt.out"
	}
	top=$(failure_top "$s/gpuwork-dl") || return 1
	expect '[ "$top" = alloc_too_much ]' "by debuglink: $top" || return 1
	top=$(failure_top "$s/gpuwork-bid" --debug-dir "$T/debug") || return 1
	expect '[ "$top" = alloc_too_much ]' "by build id: $top" || return 1
	top=$(failure_top "$s/gpuwork-bid") || return 1
	expect '[ "$top" != alloc_too_much ]' "stripped, no debug file: $top"
}

# Real llama.cpp: node-llama-cpp's prebuilt Vulkan build on lavapipe, a tiny
# random-weight model from tools/tiny-gguf.mjs, gpumemtrace -p on the running
# process. Every buffer llama.cpp makes (its own log: GGML_VK_MEMORY_LOGGER)
# is one vkAllocateMemory of that size: weights, KV cache, compute buffers.
E2E=$ROOT/tests/e2e

need_llama() {
	[ -d "$E2E/node_modules/node-llama-cpp" ] ||
		skip "node-llama-cpp is not installed in tests/e2e (make test installs it)"
}

# "5.26 MiB" -> bytes
to_bytes() {
	awk -v v="$1" -v u="$2" 'BEGIN { m = u == "GiB" ? 2^30 : u == "MiB" ? 2^20 : u == "KiB" ? 1024 : 1
		printf "%.0f\n", v * m }'
}

test_gpu_llama_cpp_vulkan() {
	need_root
	need_lavapipe
	need_llama
	local pid want got n i a w tol
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" >/dev/null || return 1
	mkfifo "$T/ready" "$T/go" "$T/out" "$T/hold"
	GGML_VK_VISIBLE_DEVICES=0 GGML_VK_MEMORY_LOGGER=1 node "$E2E/load.mjs" "$T/tiny.gguf" \
		"$T/ready" "$T/go" "$T/out" "$T/hold" 2>"$T/node.err" &
	pid=$!
	# the Vulkan backend is up: loader and driver mapped
	await_line "$T/ready" "$pid" "node-llama-cpp" "$T/node.err" >/dev/null || return 1
	start_tracer record -o "$T/l.gmt" --json -p "$pid" || return 1
	expect 'grep -q "attached Vulkan driver" "$T/gmt.err"' "attached to lavapipe" || return 1
	echo go >"$T/go"
	await_all "$T/out" "$T/o.json" "$pid" "node-llama-cpp" "$T/node.err" || return 1
	echo go >"$T/hold"
	wait_tracer || return 1
	sed -n '/^=== go/,/^=== done/p' "$T/node.err" >"$T/llama.log"
	"$GMT" replay --events "$T/l.gmt" >"$T/events.json" || return 1
	# llama.cpp's buffers, in the order made, and the allocations seen
	grep -oP '^ggml_vulkan memory: Vulkan0: \+\K[0-9.]+ [KMG]?i?B' "$T/llama.log" |
		while read -r v u; do to_bytes "$v" "$u"; done | sort -n >"$T/want"
	jq -r "select(.type == \"gpu_call\" and .call == \"vkAllocateMemory\" and .pid == $pid and
		.result == 0) | .size" "$T/events.json" | sort -n >"$T/got"
	n=$(wc -l <"$T/want")
	expect '[ "$n" -ge 5 ]' "llama.cpp logged its buffers ($n)" || return 1
	expect '[ "$(wc -l <"$T/got")" = "$n" ]' \
		"one vkAllocateMemory per buffer: $(paste -sd' ' "$T/got") vs $(paste -sd' ' "$T/want")" ||
		return 1
	# sizes agree within the log's rounding (two decimals of its unit)
	paste "$T/got" "$T/want" | while read -r a w; do
		tol=$(awk -v w="$w" 'BEGIN { print (w >= 2^20 ? 2^20 : w >= 1024 ? 1024 : 1) * 0.005 + 64 }')
		awk -v a="$a" -v w="$w" -v t="$tol" 'BEGIN { exit !(a - w <= t && w - a <= t) }' ||
			{ echo "# allocation of $a bytes, llama.cpp says $w"; exit 1; }
	done || return 1
	# the sizes llama.cpp logs exactly are there exactly
	for w in $(grep -oP '(ggml_backend_vk_buffer_type_alloc_buffer|ggml_vk_host_malloc)\(\K[0-9]+' \
		"$T/llama.log"); do
		expect 'grep -qx "$w" "$T/got"' "an allocation of exactly $w bytes" || return 1
	done
	# weights, KV cache and compute buffer, by llama.cpp's own names
	for what in "model buffer size" "KV buffer size" "compute buffer size"; do
		w=$(jq -r '.logs[]' "$T/o.json" | grep -oP "Vulkan0 $what = +\K[0-9.]+ MiB" | head -1)
		expect '[ -n "$w" ]' "llama.cpp logged its Vulkan0 $what" || return 1
		w=$(to_bytes ${w% *} MiB)
		expect 'awk -v w="$w" "{ d = \$1 - w; if (d < 0) d = -d; if (d <= 0.005 * 2^20 + 64) f = 1 } END { exit !f }" "$T/got"' \
			"an allocation for the $what ($w bytes)" || return 1
	done
	# at the return, the caller is the first frame: llama.cpp's buffer maker
	expect '[ "$(jq -r "select(.type == \"stack\") | .frames[0].symbol" "$T/events.json" | grep -c "^ggml_vk_create_buffer")" -ge 1 ]' \
		"stacks name ggml_vk_create_buffer" || return 1
	# every buffer llama.cpp released while traced is a vkFreeMemory
	n=$(sed -n '/^=== go/,$p' "$T/node.err" | grep -c '^ggml_vulkan memory: Vulkan0: -')
	expect '[ "$(jqr ".processes[0].gpu.by_kind[] | select(.api == \"Vulkan\") | .frees" "$T/gmt.out")" = "$n" ]' \
		"$n frees" || return 1
	expect '[ "$(jqr .processes[0].gpu.unknown_frees "$T/gmt.out")" = 0 ]'
}

# -f: a child started by a shell loads the library; its calls are its own
test_gpu_follow_child() {
	need_root
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached CUDA driver API" start_tracer --json -f -- sh -c \
		"'$GW' --lib '$FAKE/libcuda.so.1' --n 3 --wait '$T/go' --out '$T/done'; true" ||
		return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	local i
	i=$(jq '[.processes[].comm] | index("gpuwork")' "$T/gmt.out")
	expect '[ "$i" != null ] && [ "$i" -gt 0 ]' "the child is in the report" || return 1
	check_gpu_kinds "$T/gmt.out" "$T/wl.json" "$i" || return 1
	expect '[ "$(jqr .processes[0].gpu "$T/gmt.out")" = null ]' "the shell made no GPU calls"
}

# a target in its own mount namespace, its library at a path that does not
# exist in ours: found and probed through /proc/PID/map_files
test_gpu_other_mount_namespace() {
	need_root
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	mkdir "$T/mnt"
	mkfifo "$T/go" "$T/done" "$T/ready"
	unshare --mount --propagation private sh -c "mount --bind '$FAKE' '$T/mnt' &&
		exec '$GW' --lib '$T/mnt/libcuda.so.1' --ready '$T/ready' --wait '$T/go' \
		--out '$T/done'" 2>"$T/ns.err" &
	local pid=$!
	await_line "$T/ready" "$pid" "gpuwork in a mount namespace of its own" "$T/ns.err" \
		>/dev/null || return 1
	pid=$(pgrep -f "gpuwork --lib $T/mnt/libcuda.so.1") || return 1
	expect '[ ! -e "$T/mnt/libcuda.so.1" ]' "the path is not in our namespace" || return 1
	start_tracer --json -p "$pid" || return 1
	expect 'grep -q "attached CUDA driver API" "$T/gmt.err"' || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	check_gpu_kinds "$T/gmt.out" "$T/wl.json" || return 1
	expect '[ "$(jqr .processes[0].gpu.failures[0].stack[0].symbol "$T/gmt.out")" = alloc_too_much ]'
}

# a call whose return never comes (the stand-in jumps out of it, as an
# exception would) must not hide the calls after it on that thread
test_gpu_lost_return_does_not_silence_a_thread() {
	need_root
	mkfifo "$T/go" "$T/done"
	GMT_READY="attached CUDA driver API" start_tracer --json -- "$GW" --lib "$FAKE/libcuda.so.1" \
		--escape 5 --wait "$T/go" --out "$T/done" || return 1
	echo go >"$T/go"
	cat "$T/done" >"$T/wl.json"
	wait_tracer || return 1
	check_gpu_kinds "$T/gmt.out" "$T/wl.json"
}

# A root target in a mount namespace of its own loads a planted "driver";
# gpumemtrace's helper, which loads the drivers it finds to ask them where
# their entry points are, must run it with no more than the target may
# have: never as the host's root, no capabilities, no new privileges.
test_helper_never_runs_target_code_as_root() {
	need_root
	local rec pid
	chmod 0755 "$T" # the helper, nobody here, reads the driver as anyone may
	mkdir -m 0777 "$T/drv"
	cp "$FAKE/vkdriver.so" "$T/drv/libvk_planted.so"
	chmod 0755 "$T/drv/libvk_planted.so"
	touch "$T/drv/record.txt"
	chmod 0666 "$T/drv/record.txt" # whoever loads it may write here
	mkfifo "$T/ready" "$T/hold"
	unshare -m python3 -c 'import ctypes, sys
ctypes.CDLL(sys.argv[1])
open(sys.argv[2], "w").write("ready\n")
open(sys.argv[3]).read()' "$T/drv/libvk_planted.so" "$T/ready" "$T/hold" 2>"$T/py.err" &
	pid=$!
	await_line "$T/ready" "$pid" "python3 in a mount namespace of its own" "$T/py.err" \
		>/dev/null || return 1
	pid=$(pgrep -P "$pid" python3 || echo "$pid")
	start_tracer --json -p "$pid" || return 1
	kill -INT "$GMT_PID"
	wait_tracer
	echo go >"$T/hold"
	expect 'grep -q "^Name:.*gpumemtrace-vk" "$T/drv/record.txt"' \
		"the helper loaded the driver: $(cat "$T/drv/record.txt" 2>/dev/null)" || return 1
	rec=$(awk '/^Name:.*gpumemtrace-vk/ { on = 1 } on { print } /^--/ { on = 0 }' "$T/drv/record.txt")
	expect '[ "$(awk "/^Uid:/ { print \$3 }" <<<"$rec")" != 0 ]' "not as root: $rec" || return 1
	expect '[ "$(awk "/^CapEff:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ] &&
		[ "$(awk "/^CapPrm:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ]' \
		"no capabilities: $rec" || return 1
	expect '[ "$(awk "/^NoNewPrivs:/ { print \$2 }" <<<"$rec")" = 1 ]' "no new privileges: $rec"
}

# A target in a user namespace of its own, root there and uid 100000 on the
# host, in a mount namespace of its own: the helper runs its driver in that
# user namespace, as its root there (host uid 100000, which is all it has),
# with no capabilities, none to gain, and no new privileges.
test_helper_runs_target_code_in_its_user_namespace() {
	need_root
	local rec pid hpid ns
	chmod 0755 "$T"
	mkdir -m 0777 "$T/drv"
	cp "$FAKE/vkdriver.so" "$T/drv/libvk_planted.so"
	chmod 0755 "$T/drv/libvk_planted.so"
	touch "$T/drv/record.txt"
	chmod 0666 "$T/drv/record.txt"
	mkfifo -m 0666 "$T/unshared" "$T/mapped" "$T/ready" "$T/hold"
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000 | 0x00020000):  # CLONE_NEWUSER | CLONE_NEWNS
    sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
open(sys.argv[2], "w").write("%d\n" % os.getpid())
open(sys.argv[3]).read()
os.setresgid(0, 0, 0)
os.setresuid(0, 0, 0)
ctypes.CDLL(sys.argv[1])
open(sys.argv[4], "w").write("ready\n")
open(sys.argv[5]).read()' "$T/drv/libvk_planted.so" "$T/unshared" "$T/mapped" "$T/ready" "$T/hold" \
		2>"$T/py.err" &
	pid=$!
	await_line "$T/unshared" "$pid" "python3 in a user namespace of its own" "$T/py.err" \
		>/dev/null || return 1
	echo "0 100000 65536" >"/proc/$pid/uid_map" && echo "0 100000 65536" >"/proc/$pid/gid_map" ||
		{ echo go >"$T/mapped"; expect false "the namespace's ids mapped"; return 1; }
	echo go >"$T/mapped"
	await_line "$T/ready" "$pid" "python3 as root in its user namespace" "$T/py.err" \
		>/dev/null || return 1
	ns=$(readlink "/proc/$pid/ns/user")
	start_tracer --json -p "$pid" || return 1
	kill -INT "$GMT_PID"
	wait_tracer
	echo go >"$T/hold"
	rec=$(awk '/^Name:.*gpumemtrace-vk/ { on = 1 } on { print } /^--/ { on = 0 }' "$T/drv/record.txt")
	expect '[ -n "$rec" ]' "the helper loaded the driver: $(cat "$T/drv/record.txt")" || return 1
	hpid=$(awk '/^Pid:/ { print $2 }' <<<"$rec")
	expect '[ "$(awk "/^UserNS:/ { print \$2 }" <<<"$rec")" = "$ns" ] && [ "$ns" != "$(readlink /proc/self/ns/user)" ]' \
		"in the target's user namespace ($ns): $rec" || return 1
	expect '[ "$(stat -c %u "$T/drv/who.$hpid")" = 100000 ]' \
		"as the host uid the target has (100000), not $(stat -c %u "$T/drv/who.$hpid" 2>&1)" || return 1
	expect '[ "$(awk "/^CapEff:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ] &&
		[ "$(awk "/^CapPrm:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ] &&
		[ "$(awk "/^CapBnd:/ { print \$2 }" <<<"$rec")" = 0 ]' \
		"no capabilities, none to gain: $rec" || return 1
	expect '[ "$(awk "/^NoNewPrivs:/ { print \$2 }" <<<"$rec")" = 1 ]' "no new privileges: $rec"
}

# the same in a chroot (same mount namespace, another root): the helper finds
# the driver where the target does, in its root, and still runs it as nobody
test_helper_finds_a_driver_in_the_target_root() {
	need_root
	local r=$T/root rec pid lib
	chmod 0755 "$T"
	mkdir -p "$r/drv" "$r/lib64" "$r/bin"
	chmod 0777 "$r/drv"
	for lib in $(ldd "$ROOT/.output/tests/dlhold" | grep -o '/[^ ]*'); do
		mkdir -p "$r$(dirname "$lib")"
		cp "$lib" "$r$lib"
	done
	cp "$ROOT/.output/tests/dlhold" "$r/bin/"
	cp "$FAKE/vkdriver.so" "$r/drv/libvk_planted.so"
	touch "$r/drv/record.txt"
	chmod 0666 "$r/drv/record.txt"
	mkfifo "$r/ready" "$r/hold"
	chroot "$r" /bin/dlhold /drv/libvk_planted.so /ready /hold &
	pid=$!
	read -r _ <"$r/ready"
	start_tracer --json -p "$pid" || return 1
	kill -INT "$GMT_PID"
	wait_tracer
	echo go >"$r/hold"
	rec=$(awk '/^Name:.*gpumemtrace-vk/ { on = 1 } on { print } /^--/ { on = 0 }' "$r/drv/record.txt")
	expect '[ -n "$rec" ]' "the helper loaded the driver in the target's root: $(cat "$r/drv/record.txt")" ||
		return 1
	expect '[ "$(awk "/^Uid:/ { print \$3 }" <<<"$rec")" != 0 ] &&
		[ "$(awk "/^CapEff:/ { print \$2 }" <<<"$rec")" = 0000000000000000 ]' \
		"as nobody, with no capabilities: $rec"
}
