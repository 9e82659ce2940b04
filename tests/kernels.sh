# Other kernels: Debian's 6.1 and 6.12 in QEMU VMs (CO-RE, cgroup v2, swap, fexit fault classes and TTM).
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

# Debian's own kernels under QEMU: every mm/proc program loads (verifier and
# CO-RE against that kernel's BTF: 6.1 has the pre-6.2 RSS counters), attaches,
# and measures as on the host; fault classes too (fexit is allowed there)
vm_kernel_check() {
	need_root
	local version=$1 kernel
	kernel=$("$ROOT/tests/vm/kernel.sh" "$version") || return 1
	cat >"$T/guest.sh" <<'GUEST'
gpumemtrace --json -i 0.2 -- workload --steps 8 --step-mib 16 --out /tmp/wl.json >/tmp/r.json 2>/tmp/err
echo "=== rc $?"
sed 's/^/# guest: /' /tmp/err
# cgroup v2, with the memory controller (the development VM's is on v1): a
# leak in a cgroup whose memory.max is 512 MiB
mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup &&
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control && mkdir /sys/fs/cgroup/lim &&
	echo 536870912 >/sys/fs/cgroup/lim/memory.max &&
	gpumemtrace -q --json -i 0.2 -- sh -c 'echo $$ >/sys/fs/cgroup/lim/cgroup.procs && exec workload --steps 20 --step-mib 4 --step-ms 100 --out /dev/null' >/tmp/cg.json
echo "=== cgroup rc $?"
# memory.high 96 MiB with swap (zram): past it the kernel swaps the heap
# out, and the heap is RssAnon + VmSwap, as /proc says at the end
for m in $(cat /lib/gmt-modules/order); do insmod /lib/gmt-modules/$m || echo "insmod $m failed"; done
echo 268435456 >/sys/block/zram0/disksize &&
	mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 && mkdir /sys/fs/cgroup/high &&
	echo 100663296 >/sys/fs/cgroup/high/memory.high && mkfifo /tmp/hold &&
	{ gpumemtrace -q --json -i 0.2 -- sh -c 'echo $$ >/sys/fs/cgroup/high/cgroup.procs && exec workload --steps 20 --step-mib 8 --step-ms 50 --out /tmp/hw.json --hold /tmp/hold' >/tmp/high.json & } &&
	i=0 && while [ ! -s /tmp/hw.json ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done &&
	pid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' /tmp/hw.json) &&
	echo "=== high status $(awk '/^RssAnon:|^VmSwap:/ { s = s " " $2 * 1024 } END { print s }' /proc/$pid/status)" &&
	echo go >/tmp/hold && wait
echo "=== high rc $?"
echo "=== workload"
cat /tmp/wl.json
echo "=== cgroup"
cat /tmp/cg.json
echo "=== high"
cat /tmp/high.json
echo "=== report"
cat /tmp/r.json
GUEST
	MODULES=zram "$ROOT/tests/vm/boot.sh" "$kernel" "$T/guest.sh" >"$T/console"
	expect 'grep -q "^=== rc 0" "$T/console"' "gpumemtrace ran in the guest: $(grep -v '^ ' "$T/console" | head -5)" ||
		return 1
	sed -n '/^=== workload/,/^=== cgroup$/p' "$T/console" | sed '1d;$d' >"$T/wl.json"
	sed -n '/^=== cgroup$/,/^=== high$/p' "$T/console" | sed '1d;$d' >"$T/cg.json"
	sed -n '/^=== high$/,/^=== report/p' "$T/console" | sed '1d;$d' >"$T/high.json"
	sed -n '/^=== report/,/^=== end/p' "$T/console" | sed '1d;$d' >"$T/r.json"
	# cgroup v2: the leak reaches memory.max of /lim first
	expect 'grep -q "^=== cgroup rc 0" "$T/console" &&
		[ "$(jq -c "[.processes[0].memory_limit | .cgroup, .file, .limit_bytes]" "$T/cg.json")" = "[\"/lim\",\"memory.max\",536870912]" ] &&
		jq -e "[.findings[] | select(.kind == \"leak\" and .category == \"host_anon\")][0].reasons |
			index(\"runs_out_cgroup\") != null" "$T/cg.json" >/dev/null' \
		"on cgroup v2, the leak reaches memory.max: $(grep "^=== cgroup rc" "$T/console"; jq -c "[.processes[0].memory_limit, [.findings[] | [.kind, .category, .reasons]]]" "$T/cg.json" 2>&1 | head -c 600)" ||
		return 1
	# memory.high with swap: the heap swapped out is still the heap's, and
	# the limit is memory.high's
	local st anon swap last
	st=$(grep -oP '^=== high status \K.*' "$T/console")
	read -r anon swap <<<"$st"
	last=$(jq '[.findings[] | select(.category == "host_anon")][0].last_bytes' "$T/high.json" 2>/dev/null)
	echo "# memory.high 96 MiB: RssAnon $anon, VmSwap $swap at the end; the heap's last level $last"
	expect 'grep -q "^=== high rc 0" "$T/console" &&
		[ "$(jq -c "[.processes[0].memory_limit | .cgroup, .file, .limit_bytes]" "$T/high.json")" = "[\"/high\",\"memory.high\",100663296]" ]' \
		"memory.high read: $(grep "^=== high rc\|insmod" "$T/console"; jq -c .processes[0].memory_limit "$T/high.json" 2>&1 | head -c 300)" ||
		return 1
	expect '(( swap > 16 * MIB ))' "it swapped: VmSwap $swap" || return 1
	expect '[ "$(jq -r "[.findings[] | select(.category == \"host_anon\")][0].where" "$T/high.json")" = "host heap (anonymous RSS + swap)" ] &&
		(( last >= anon + swap - RSS_SLACK && last <= anon + swap + RSS_SLACK ))' \
		"the heap is RssAnon + VmSwap ($((anon + swap))): $last, $(jq -c '[.findings[] | select(.category == "host_anon")][0] | [.where, .kind]' "$T/high.json")" ||
		return 1
	# the GPU API libraries, DRM modules and NVIDIA's driver are absent from
	# this guest: said so, and skipped (test_vm_ttm_* loads the modules)
	local absent='.name == "vulkan" or .name == "cuda" or .name == "hip" or .name == "nvml" or
		(.name | startswith("fentry:ttm"))'
	expect '[ "$(jq "[.probes[] | select(.status != \"attached\" and ($absent | not))] | length" "$T/r.json")" = 0 ]' \
		"every probe attached: $(jq -c '[.probes[] | select(.status != "attached")]' "$T/r.json")" ||
		return 1
	expect '[ "$(jqr ".probes[] | select(.name == \"uprobes:gpu\") | .status" "$T/r.json")" = attached ]' \
		"the gpuapi programs load on $version" || return 1
	expect '[[ $(jqr .session.kernel "$T/r.json") == "$version".* ]]' "ran on $version" || return 1
	# first touches sampled there too (bpf_find_vma, bpf_loop, that verifier):
	# about the 128 MiB the workload touched, one sample a MiB
	local touched
	touched=$(jqr .processes[0].mappings.first_touched_bytes "$T/r.json")
	expect '(( touched >= 96 * MIB && touched <= 160 * MIB ))' \
		"first touches stand for $touched bytes; the workload touched $(jqr .bytes "$T/wl.json")" ||
		return 1
	check_growth "$T/r.json" "$T/wl.json"
}

test_vm_kernel_6_1() {
	vm_kernel_check 6.1
}

test_vm_kernel_6_12() {
	vm_kernel_check 6.12
}

# Real TTM traffic in Debian's kernels: bochs (and amdgpu, loaded for its BTF)
# as modules, a 16 MiB VRAM display, tests/drmflip showing six screen-sized
# buffers in turn so that TTM must evict; gpumemtrace -a records it all.
vm_ttm_check() {
	need_root
	local version=$1 kernel r=$T/r.json f=$T/flip.json pid size evict
	kernel=$("$ROOT/tests/vm/kernel.sh" "$version") || return 1
	cat >"$T/guest.sh" <<'GUEST'
for m in $(cat /lib/gmt-modules/order); do insmod /lib/gmt-modules/$m || echo "insmod $m failed"; done
gpumemtrace -a --json -i 0.1 -- drmflip --buffers 6 --rounds 10 --out /tmp/flip.json >/tmp/r.json 2>/tmp/err
echo "=== rc $?"
sed 's/^/# guest: /' /tmp/err
echo "=== flip"
cat /tmp/flip.json
echo "=== report"
cat /tmp/r.json
GUEST
	MODULES="bochs amdgpu" VGA_MB=16 "$ROOT/tests/vm/boot.sh" "$kernel" "$T/guest.sh" >"$T/console"
	expect 'grep -q "^=== rc 0" "$T/console"' "gpumemtrace ran in the guest: $(head -c 600 "$T/console")" ||
		return 1
	sed -n '/^=== flip/,/^=== report/p' "$T/console" | sed '1d;$d' >"$f"
	sed -n '/^=== report/,/^=== end/p' "$T/console" | sed '1d;$d' >"$r"
	evict=$([ "$version" = 6.1 ] && echo ttm_mem_evict_first || echo ttm_bo_evict)
	for p in fentry:ttm "fentry:$evict" amdgpu:amdgpu_bo_create; do
		expect '[ "$(jqr ".probes[] | select(.name == \"$p\") | .status" "$r")" = attached ]' \
			"$p attached on $version: $(jq -c ".probes[] | select(.name == \"$p\")" "$r")" ||
			return 1
	done
	pid=$(jqr .pid "$f")
	size=$(jqr .size "$f")
	local o=".kernel_buffers.owners[] | select(.pid == $pid)"
	expect '[ "$(jqr "$o | .created" "$r")" = 6 ]' "six buffers made by drmflip" || return 1
	expect '[ "$(jqr "$o | .freed" "$r")" = 6 ]' "and freed" || return 1
	expect '[ "$(jqr "$o | .live" "$r")" = 0 ]' || return 1
	expect '[ "$(jqr "$o | .peak_vram_bytes" "$r")" -ge "$size" ]' "in VRAM at some point" || return 1
	expect '[ "$(jqr ".kernel_buffers.evictions | length" "$r")" -ge 3 ]' "evictions" || return 1
	# each one: a screen buffer, VRAM to system memory, forced by drmflip
	expect '[ "$(jq "[.kernel_buffers.evictions[] | select(.size_bytes != $size or .from != \"vram\" or .to != \"system\" or .evictor_pid != $pid)] | length" "$r")" = 0 ]' \
		"evictions: $(jq -c '.kernel_buffers.evictions[:3]' "$r")" || return 1
	expect '[ "$(jq "[.kernel_buffers.evictions[] | select(.owner_pid == $pid)] | length" "$r")" -ge 2 ]' \
		"drmflip's own buffers evicted, with their owner" || return 1
	# the verdict: its buffers left VRAM, by its own hand, and all came back
	# or were freed; no decode rates to compare
	expect '[ "$(jq "[.findings[] | select(.kind == \"eviction_slowdown\" and .pid == $pid and .evictor_pid == $pid and .evictions >= 2)] | length" "$r")" = 1 ]' \
		"the eviction finding: $(jq -c '[.findings[] | select(.kind != "steady") | {kind, category, evictor_pid, evictions}]' "$r")" ||
		return 1
	# bochs prints no DRM fdinfo (nor does vgem): the counters of real GPU
	# drivers are checked by the unit tests on their text
	expect '[ "$(jqr .processes[0].drm_fdinfo "$r")" = null ]' \
		"DRM fdinfo: $(jq -c .processes[0].drm_fdinfo "$r")"
}

test_vm_ttm_6_1() {
	vm_ttm_check 6.1
}

test_vm_ttm_6_12() {
	vm_ttm_check 6.12
}
