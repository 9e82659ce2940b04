# Why it got slow, under cgroup v2: most hosts' memory controller, which this
# machine has on v1 alone (tests/slow.sh), so Debian's 6.12 kernel under
# QEMU (TCG) runs the real x86-64 llama-server, traced there, and the report
# is judged here against the server's own `timings`.
# Run by tests/run.sh with helpers from tests/lib.sh, tests/server.sh and
# tests/slow.sh (median, within, num).

# 31 MB of weights (4 layers of 384): about 4 tokens/s under TCG with one
# thread, 1 once memory.max leaves a third of them room (the guest runs for
# about 95 s). A model of 14 MB (4 layers of 256) is faster, but the
# server's own 14 MB of anonymous memory leave no limit below it that keeps
# a part of it; one of 55 MB decoded at 2-4 tokens/s, too slow for the
# test's time.
SLOW_VM_MODEL="--embd 384 --ff 1152 --layers 4"
# requests before the limit (the first one a warm-up), under it, after it,
# and the tokens each asks for (fewer under the limit: they are slow)
SLOW_VM_BEFORE=6 SLOW_VM_DURING=3 SLOW_VM_AFTER=4
SLOW_VM_TOKENS=16 SLOW_VM_SLOW_TOKENS=8

# slow_vm_extra: EXTRA for boot.sh: llama-server and the libraries of its
# own that ldd lists, with its CPU backend (loaded with dlopen, so not
# listed), in /llama (its RPATH is $ORIGIN); the system's libraries ldd
# lists and the loader at their own paths
slow_vm_extra() {
	local lib
	printf '%s ' "$LLAMA_DIR/llama-server:/llama/llama-server" \
		"$LLAMA_DIR/libggml-cpu.so:/llama/libggml-cpu.so"
	for lib in $(ldd "$LLAMA_DIR/llama-server" "$LLAMA_DIR/libggml-cpu.so" |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | sort -u); do
		case $lib in
		"$LLAMA_DIR"/*) printf '%s ' "$lib:/llama/${lib##*/}" ;;
		*) printf '%s ' "$lib:$lib" ;;
		esac
	done
}

# The weights, mmap'd from an ext4 disk (an initramfs's files cannot be
# evicted), evicted by a cgroup v2 memory.max lowered below the model and
# read back at every token, then the limit lifted: the slowdown's cause the
# memory, the limit named, the slow requests named, the rates the server's
test_slow_vm_weights_evicted_cgroup_v2() {
	need_llama_server || return 1
	local kernel c=$T/console r=$T/r.json f lim size first last b d io rf0 rf1 start
	kernel=$("$ROOT/tests/vm/kernel.sh" 6.12) || return 1
	# shellcheck disable=SC2086 # words
	mkdir "$T/disk" &&
		node "$ROOT/tools/tiny-gguf.mjs" "$T/disk/model.gguf" $SLOW_VM_MODEL >/dev/null &&
		mkfs.ext4 -q -F -d "$T/disk" "$T/disk.img" 64M || return 1
	size=$(stat -c %s "$T/disk/model.gguf")
	cat >"$T/guest.sh" <<GUEST
for m in \$(cat /lib/gmt-modules/order); do insmod /lib/gmt-modules/\$m || echo "=== insmod \$m failed"; done
mkdir /mnt && mount -t ext4 -o ro /dev/vda /mnt || echo "=== no disk"
cg=/sys/fs/cgroup/srv
mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup &&
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control && mkdir \$cg || echo "=== no cgroup v2"
ip link set lo up
# the server in the cgroup from its start: the pages of its weights are
# charged to it as it reads them
sh -c "echo \\\$\\\$ >\$cg/cgroup.procs && exec /llama/llama-server -m /mnt/model.gguf --host 127.0.0.1 \
	--port 8080 --no-warmup -np 1 -c 256 -t 1" >/tmp/server.log 2>&1 &
pid=\$!
i=0
while ! grep -q 'listening on' /tmp/server.log && kill -0 \$pid && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
gpumemtrace --json -p \$pid >/tmp/r.json 2>/tmp/gmt.err &
gmt=\$!
i=0
while ! grep -q 'tracing pid' /tmp/gmt.err && kill -0 \$gmt && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
k=1
req() { # req TOKENS: request k, its answer in /tmp/resp\$k.json
	wget -q -O /tmp/resp\$k.json --header 'Content-Type: application/json' \
		--post-data "{\"prompt\": \"q \$k\", \"n_predict\": \$1, \"grammar\": \"root ::= [a-z ]+\", \"ignore_eos\": true, \"seed\": \$k}" \
		http://127.0.0.1:8080/completion || echo "=== request \$k failed"
	k=\$((k + 1))
}
while [ \$k -le $SLOW_VM_BEFORE ]; do req $SLOW_VM_TOKENS; done
# room for its anonymous memory (no swap: it cannot leave) and a third of
# the weights
anon=\$(awk '\$1 == "anon" { print \$2 }' \$cg/memory.stat)
lim=\$(((anon + $size / 3) / 1048576 * 1048576))
io0=\$(awk '\$1 == "read_bytes:" { print \$2 }' /proc/\$pid/io)
echo \$lim >\$cg/memory.max && echo "=== limit \$lim"
while [ \$k -le $((SLOW_VM_BEFORE + SLOW_VM_DURING)) ]; do req $SLOW_VM_SLOW_TOKENS; done
echo "=== read \$((\$(awk '\$1 == "read_bytes:" { print \$2 }' /proc/\$pid/io) - io0)) \$(grep '^file \|^anon ' \$cg/memory.stat | tr '\n' ' ')"
echo "=== slow refaults \$(awk '/^workingset_refault_(anon|file) / { n += \$2 } END { print n }' \$cg/memory.stat)"
echo max >\$cg/memory.max
while [ \$k -le $((SLOW_VM_BEFORE + SLOW_VM_DURING + SLOW_VM_AFTER)) ]; do req $SLOW_VM_TOKENS; done
kill -TERM \$pid
wait \$pid
echo "=== server rc \$?"
echo "=== refaults \$(awk '/^workingset_refault_(anon|file) / { n += \$2 } END { print n }' \$cg/memory.stat)"
wait \$gmt
echo "=== rc \$?"
# what it said, less its line an interval
grep -v 'tracing pid\|^gpumemtrace: *[0-9.]* s ' /tmp/gmt.err | sed 's/^/# guest: /'
grep -i 'oom\|killed' /tmp/server.log | sed 's/^/# guest: /'
echo "=== responses"
i=1
while [ \$i -lt \$k ]; do cat /tmp/resp\$i.json; echo; i=\$((i + 1)); done
echo "=== report"
cat /tmp/r.json
GUEST
	# -cpu max: the build's AVX2 and FMA (QEMU's qemu64 has neither); 140 s
	# a boot: about 1.5 times what one takes, and a boot again (one that
	# never reached the script) still inside the test's 240
	start=$SECONDS
	CPU=max DISK=$T/disk.img MODULES="virtio_blk ext4" BOOT_TIMEOUT=140 EXTRA="$(slow_vm_extra)" \
		"$ROOT/tests/vm/boot.sh" "$kernel" "$T/guest.sh" | tr -d '\r' >"$c"
	echo "# the guest ran for $((SECONDS - start)) s"
	expect 'grep -q "^=== rc 0" "$c" && grep -q "^=== limit " "$c" && ! grep -q "^=== \(no \|insmod\|request\)" "$c"' \
		"the server, its limit and gpumemtrace ran in the guest: $(grep '^=== \|^# ' "$c" | head -12)" ||
		return 1
	sed -n '/^=== responses$/,/^=== report$/p' "$c" | sed '1d;$d' >"$T/resp.json"
	sed -n '/^=== report$/,/^=== end/p' "$c" | sed '1d;$d' >"$r"
	lim=$(grep -oP '^=== limit \K[0-9]+' "$c")
	io=$(grep -oP '^=== read \K.*' "$c")
	rf0=$(grep -oP '^=== slow refaults \K[0-9]+' "$c")
	rf1=$(grep -oP '^=== refaults \K[0-9]+' "$c")
	echo "# memory.max $lim below the model's $size bytes; over the slow requests /proc/PID/io read ${io%% *} bytes, memory.stat: ${io#* }"
	expect '(( lim < size )) && [ "$(jq -s length "$T/resp.json")" = $((SLOW_VM_BEFORE + SLOW_VM_DURING + SLOW_VM_AFTER)) ] &&
		[ "$(jq -s "[.[] | select(.timings.predicted_per_second > 0)] | length" "$T/resp.json")" = "$(jq -s length "$T/resp.json")" ]' \
		"every request answered with its timings, the limit below the model: $(jq -sc '[.[] | .timings.predicted_per_second // .error]' "$T/resp.json")" ||
		return 1
	# what cgroup v2 alone gives: the cgroup's own PSI (v1 has none)
	expect '[[ $(jqr .session.kernel "$r") == 6.12.* ]] &&
		[ "$(jq -c ".processes[0] | [.cgroup, .waits.pressure_from]" "$r")" = "[\"/srv\",\"cgroup\"]" ]' \
		"its cgroup v2 and that cgroup's PSI read on 6.12: $(jq -c '[.session.kernel, (.processes[0] | .cgroup, .waits)]' "$r" | head -c 600)" ||
		return 1

	f=$(jq -c '[.findings[] | select(.kind == "slowdown")][0]' "$r")
	echo "# $(num "$f" message)"
	expect '[ "$(num "$f" cause)" = memory ] &&
		jq -e ".reasons | index(\"slow_limit\") != null and index(\"slow_read_back\") != null" <<<"$f" >/dev/null' \
		"a slowdown, the memory its cause, the limit named: $(jq -c '[.findings[] | [.kind, .category, .cause, .reasons]]' "$r")" ||
		return 1
	# the limit as set, lowered from none, and v2's file for it in the words
	expect '[ "$(num "$f" limit_bytes)" = "$lim" ] && [ "$(num "$f" limit_before_bytes)" = 0 ] &&
		[[ $(num "$f" message) == *"cgroup /srv held it to "*" (memory.max)"* ]]' \
		"the limit set, $lim: $(jq -c '{limit_bytes, limit_before_bytes, message}' <<<"$f")" || return 1
	echo "# refaults: $(num "$f" refaults) in the slow requests' decoding, $(jqr .processes[0].waits.refaults "$r") in all; memory.stat: $rf0 after the slow requests, $rf1 at the end"
	# its refaults, from the cgroup's memory.stat: between what that file
	# said after the slow requests and at the end
	expect 'awk -v s="$(num "$f" refaults)" -v t="$(jqr .processes[0].waits.refaults "$r")" -v lo="$rf0" -v hi="$rf1" \
		"BEGIN { exit !(s + 0 > 0 && lo + 0 > 0 && t + 0 >= lo + 0 && t + 0 <= hi + 0) }"' \
		"the refaults within what memory.stat counted" ||
		return 1
	# the tool numbers requests from 1 as they came (no other one here); the
	# one after the slow ones reads the evicted weights back once, and may
	# be slow too. The first slow one is the first the server's own timings
	# put under 0.6 of its usual rate: under TCG the one before the limit
	# was once slow too (marked from 6, truth 7)
	last=$((SLOW_VM_BEFORE + SLOW_VM_DURING))
	# the server's own rates: the usual ones without the first (its warm-up)
	b=$(median $(jq -s -r "[.[] | .timings.predicted_per_second] | .[1:$SLOW_VM_BEFORE] + .[$last:] | .[]" "$T/resp.json"))
	d=$(median $(jq -s -r ".[$SLOW_VM_BEFORE:$last][] | .timings.predicted_per_second" "$T/resp.json"))
	first=$(jq -s --argjson b "$b" --argjson last "$last" \
		'[to_entries[] | select(.key >= 1 and .key < $last and .value.timings.predicted_per_second < 0.6 * $b) | .key + 1][0] // 0' \
		"$T/resp.json")
	echo "# the server's rates: $(jq -sc '[.[] | .timings.predicted_per_second * 100 | floor / 100]' "$T/resp.json"); the first under 0.6 of $b: $first"
	expect '(( first >= SLOW_VM_BEFORE && first <= SLOW_VM_BEFORE + 1 )) &&
		(( $(num "$f" first_request) == first && $(num "$f" last_request) >= last &&
		$(num "$f" last_request) <= last + 1 ))' \
		"the slow requests: $(num "$f" first_request) to $(num "$f" last_request), the slowed ones $first to $last: marked $(jq -c '[.processes[0].requests | to_entries[] | select(.value.slow) | .key + 1]' "$r")" ||
		return 1
	echo "# the server's medians: $b tokens/s usually, $d slowed; the tool's: $(num "$f" baseline_rate), $(num "$f" rate)"
	expect 'within "$(num "$f" baseline_rate)" "$b" 0.15 && within "$(num "$f" rate)" "$d" 0.15' \
		"the rates within 15% of the server's: baseline $(num "$f" baseline_rate) against $b, slow $(num "$f" rate) against $d"
}
