# arm64 (issue 38): Debian's arm64 kernels under qemu-system-aarch64 (TCG)
# running `make ARCH=arm64`'s static binaries; a recording made there
# replays on this host to the guest's own report.
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

# the part of console $1 between the line "=== $2" and the next "=== " line
arm64_part() {
	sed -n "/^=== $2\$/,/^=== /p" "$1" | sed '1d;$d'
}

# One boot of Debian's arm64 kernel $1: the arm64 gpumemtrace traces the
# static workload (growth, mmap/munmap, stacks naming its functions; every
# probe attached or skipped for a stated reason; page faults, which arm64's
# kernels give no tracepoint for, from the page-fault software event: classed,
# and its sampled first touches standing for the 128 MiB the workload
# touched, with stacks to grow_step) and records a leak, which the guest
# replays (text, JSON) and sends out in base64 over the console
arm64_check() {
	need_root
	local version=$1 kernel c=$T/console r=$T/r.json j=$T/rep.json
	local bin=$ROOT/.output/arm64/gpumemtrace wl=$ROOT/.output/arm64/tests/workload-static
	[ "$(uname -m)" = aarch64 ] && bin=$ROOT/gpumemtrace wl=$ROOT/.output/tests/workload-static
	expect '[ -x "$bin" ] && [ -x "$wl" ]' "the arm64 build ($bin, $wl): make ARCH=arm64" || return 1
	kernel=$(ARCH=arm64 "$ROOT/tests/vm/kernel.sh" "$version") || return 1
	cat >"$T/guest.sh" <<'GUEST'
gpumemtrace --json -i 0.2 -- workload --steps 8 --step-mib 16 --churn 50 --out /tmp/wl.json >/tmp/r.json 2>/tmp/err
echo "=== rc $?"
sed 's/^/# guest: /' /tmp/err
gpumemtrace record -q -o /tmp/rec.gmt -i 0.2 -- workload --steps 20 --step-mib 4 --step-ms 100 --out /dev/null 2>/tmp/err
echo "=== record rc $?"
sed 's/^/# guest: /' /tmp/err
gpumemtrace replay /tmp/rec.gmt >/tmp/rep.txt
echo "=== replay rc $?"
gpumemtrace replay --json /tmp/rec.gmt >/tmp/rep.json
echo "=== replay json rc $?"
echo "=== workload"
cat /tmp/wl.json
echo "=== report"
cat /tmp/r.json
echo "=== text"
cat /tmp/rep.txt
echo "=== json"
cat /tmp/rep.json
echo "=== recording"
base64 /tmp/rec.gmt
echo "=== recording end"
GUEST
	ARCH=arm64 "$ROOT/tests/vm/boot.sh" "$kernel" "$T/guest.sh" | tr -d '\r' >"$c"
	expect 'grep -q "^=== rc 0" "$c"' "@gpumemtrace ran in the guest: $(grep -v '^ ' "$c" | head -5)" ||
		return 1
	arm64_part "$c" workload >"$T/wl.json"
	arm64_part "$c" report >"$r"
	arm64_part "$c" text >"$T/rep.txt"
	arm64_part "$c" json >"$j"
	arm64_part "$c" recording | base64 -d >"$T/rec.gmt" || return 1
	expect '[ "$(jqr .session.arch "$r")" = aarch64 ] && [[ $(jqr .session.kernel "$r") == "$version".*-arm64 ]]' \
		"ran on arm64 $version: $(jq -c '.session | [.arch, .kernel]' "$r")" || return 1

	# every probe attached, or skipped for a reason; those absent here are
	# the GPU libraries, TTM and NVML (none in this guest), dup2 (arm64 has
	# dup3 alone) and the user page fault tracepoint (x86's alone) with the
	# fault classes that need it
	local absent='.name == "vulkan" or .name == "cuda" or .name == "hip" or .name == "nvml" or
		.name == "fentry:ttm" or .name == "syscalls:dup2" or
		.name == "exceptions:page_fault_user" or .name == "fexit:handle_mm_fault"'
	echo "# not attached on arm64 $version: $(jq -c '[.probes[] | select(.status != "attached") | .name]' "$r")"
	expect '[ "$(jq "[.probes[] | select(.status != \"attached\" and (($absent | not) or (.reason // \"\") == \"\"))] | length" "$r")" = 0 ]' \
		"@every probe attached or said why not: $(jq -c '[.probes[] | select(.status != "attached")]' "$r")" ||
		return 1
	local p
	for p in kmem:rss_stat syscalls:mmap/munmap/mremap/brk uprobes:gpu syscalls:http syscalls:http-ends \
		sched:process_exec/fork/exit; do
		expect '[ "$(jqr ".probes[] | select(.name == \"$p\") | .status" "$r")" = attached ]' \
			"@$p attached on arm64 $version: $(jq -c ".probes[] | select(.name == \"$p\")" "$r")" ||
			return 1
	done
	expect '[[ $(jqr ".probes[] | select(.name == \"syscalls:dup2\") | .reason" "$r") == *dup3* ]]' \
		"dup2's absence explained" || return 1

	# growth as on the host, faults counted and classed by the page-fault
	# software event (arm64 has no exceptions:page_fault_user)
	expect '[ "$(jqr ".probes[] | select(.name == \"perf:page-faults\") | .status" "$r")" = attached ]' \
		"@perf:page-faults took faults on arm64 $version: $(jq -c '[.probes[] | select(.name | test("fault"))]' "$r")" ||
		return 1
	check_growth "$r" "$T/wl.json" 0 || return 1
	expect '[ "$(jqr .processes[0].page_faults.classified "$r")" = true ] &&
		(( $(jqr .processes[0].page_faults.anon.total "$r") >= 32768 ))' \
		"faults classed: $(jq -c .processes[0].page_faults "$r")" || return 1
	local touched
	touched=$(jqr .processes[0].mappings.first_touched_bytes "$r")
	expect '(( touched >= 96 * MIB && touched <= 160 * MIB ))' \
		"first touches stand for $touched bytes; the workload touched 128 MiB" || return 1
	expect 'jq -e "[.findings[] | select(.category == \"host_anon\")][0].stacks[0] |
		.sampled and (.stack | map(.symbol) | index(\"grow_step\"))" "$r" >/dev/null' \
		"@first touches in grow_step: $(jq -c '[.findings[] | select(.category == "host_anon")][0].stacks[0] | [.sampled, [.stack[].symbol]]' "$r")" ||
		return 1
	# the churn: 50 small mmap/munmap pairs after the 8 steps' mmaps
	expect '[ "$(jq -c ".processes[0].mappings | [.mmap_calls >= 58, .munmap_calls >= 50]" "$r")" = "[true,true]" ]' \
		"mmap/munmap counted: $(jq -c '.processes[0].mappings | [.mmap_calls, .munmap_calls]' "$r")" || return 1

	# the leak stand-in's verdict, from the recording
	expect 'grep -q "^=== record rc 0" "$c" && grep -q "^=== replay json rc 0" "$c" &&
		[ "$(jq "[.findings[] | select(.kind == \"leak\" and .category == \"host_anon\")] | length" "$j")" = 1 ]' \
		"@the leak found: $(grep "^=== re" "$c"; jq -c '[.findings[] | [.kind, .category]]' "$j")" || return 1

	# the recording replayed here, by this host's binary: the guest's report,
	# byte for byte
	"$GMT" replay "$T/rec.gmt" >"$T/host.txt" || return 1
	"$GMT" replay --json "$T/rec.gmt" >"$T/host.json" || return 1
	expect 'cmp -s "$T/rep.txt" "$T/host.txt"' "@the text report: $(diff "$T/rep.txt" "$T/host.txt" | head -5)" ||
		return 1
	expect 'cmp -s "$j" "$T/host.json"' "@the JSON report: $(diff "$j" "$T/host.json" | head -5)"
}

test_arm64_6_1() {
	arm64_check 6.1
}

test_arm64_6_12() {
	arm64_check 6.12
}
