# A target in a container (issue 36): traced by its host pid or found by
# --watch, the report and the metrics say its container (id, runtime), its
# pid inside, its cgroup's memory limit and, under Kubernetes, its pod; a
# replay says the same. podman here is rootful on cgroup v1: runc, no
# network, ulimits within the host's (tests/containers.conf would do too).

PODMAN=(podman --runtime runc)
PODMAN_RUN=(run --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

# ctr_image: an image of the static workload alone (CTR_IMAGE), imported
# from a tarball; ctr_cleanup removes it and the container CTR_NAME
ctr_image() {
	command -v podman >/dev/null || skip "no podman"
	CTR_IMAGE=localhost/gmt36c-wl-$$:test CTR_NAME=gmt36c-$$
	trap ctr_cleanup EXIT
	trap 'exit 1' TERM INT
	mkdir -p "$T/img" "$T/io" || return 1
	cp "$ROOT/.output/tests/workload-static" "$T/img/workload" || return 1
	# a file named as the Vulkan loader, for --map: what --watch looks for
	mkdir -p "$T/img/usr/lib" && head -c 4096 /dev/zero >"$T/img/usr/lib/libvulkan.so.1"
	tar -C "$T/img" -cf "$T/img.tar" workload usr || return 1
	"${PODMAN[@]}" import -q "$T/img.tar" "$CTR_IMAGE" >/dev/null 2>"$T/podman.err" ||
		{ echo "# podman import: $(tail -3 "$T/podman.err")"; return 1; }
	mkfifo "$T/io/go" "$T/io/done" "$T/io/hold"
}

ctr_cleanup() {
	[ -n "${GMT_PID:-}" ] && kill "$GMT_PID" 2>/dev/null
	"${PODMAN[@]}" rm -f -t 0 "$CTR_NAME" >/dev/null 2>&1
	"${PODMAN[@]}" rmi -f "$CTR_IMAGE" >/dev/null 2>&1
}

# ctr_start [ARGS...]: the workload (with ARGS) in a container of 192 MiB,
# waiting on io/go; CTR_ID and CTR_PID (its host pid)
ctr_start() {
	CTR_ID=$("${PODMAN[@]}" "${PODMAN_RUN[@]}" -d --name "$CTR_NAME" --memory 192m \
		-v "$T/io:/io" "$CTR_IMAGE" /workload "$@" --wait /io/go --out /io/done \
		--hold /io/hold --steps 4 --step-mib 2 2>"$T/podman.err") ||
		{ echo "# podman run: $(tail -3 "$T/podman.err")"; return 1; }
	CTR_PID=$("${PODMAN[@]}" inspect --format '{{.State.Pid}}' "$CTR_NAME")
	expect '[ "$CTR_ID" = "$("${PODMAN[@]}" inspect --format "{{.Id}}" "$CTR_NAME")" ]' \
		"podman's id" || return 1
}

# ctr_limit_read REC: a MEM_LIMIT record in the recording REC (written
# as it goes) within 20 s: an interval passed while the container's
# process held its memory
ctr_limit_read() {
	local i
	for ((i = 0; i < 200; i++)); do
		"$GMT" replay --events $1 2>/dev/null | grep -q '"type":"mem_limit"' && return 0
		read -r -t 0.1 <> <(:) || true
	done
	echo "# no memory limit was read in 20 s"
	return 1
}

# ctr_check JSON TEXT: the process CTR_PID in a report of each format
ctr_check() {
	local p inside text=$2
	inside=$(jqr .pid "$T/wl.json")
	p=$(jq -c --argjson p "$CTR_PID" '.processes[] | select(.pid == $p)' "$1")
	expect '[ -n "$p" ]' "the container's process $CTR_PID reported: $(jq -c '[.processes[].pid]' "$1")" ||
		return 1
	expect '[ "$(jq -c .container <<<"$p")" = "{\"id\":\"$CTR_ID\",\"runtime\":\"podman\",\"pod_uid\":null,\"pod\":null,\"namespace\":null,\"pod_from\":null}" ]' \
		"its container: $(jq -c .container <<<"$p")" || return 1
	expect '[ "$(jqr .ns_pid <<<"$p")" = "$inside" ] && [ "$inside" != "$CTR_PID" ]' \
		"its pid inside, as it says $inside: $(jqr .ns_pid <<<"$p")" || return 1
	expect '[ "$(jqr .memory_limit.limit_bytes <<<"$p")" = $((192 * MIB)) ]' \
		"the limit of --memory: $(jq -c .memory_limit <<<"$p")" || return 1
	expect 'grep -q "container ${CTR_ID:0:12} (podman), pid $inside inside" "$text"' \
		"the text says it: $(grep -m1 container "$text")" || return 1
}

# By its host pid (-p): JSON, text of the replay, Prometheus labels
test_container_podman_by_pid() {
	need_root
	ctr_image || return 1
	ctr_start || return 1
	start_tracer -p "$CTR_PID" -i 0.2 --json -o "$T/rec.gmt" --metrics-file "$T/prom.txt" ||
		return 1
	echo go >"$T/io/go"
	cat "$T/io/done" >"$T/wl.json"
	# the labels while it runs (only live processes have metrics)
	expect 'wait_line "$T/prom.txt" "container_id=\"$CTR_ID\""' \
		"the metrics labelled: $(grep -m1 memory_bytes "$T/prom.txt")" || return 1
	ctr_limit_read "$T/rec.gmt" || return 1
	echo go >"$T/io/hold"
	wait_tracer
	expect '[ $? = 0 ]' "the tracer: $(tail -3 "$T/gmt.err")" || return 1
	"$GMT" replay "$T/rec.gmt" >"$T/replay.txt" || return 1
	ctr_check "$T/gmt.out" "$T/replay.txt" || return 1
	"$GMT" replay --json "$T/rec.gmt" >"$T/replay.json" || return 1
	ctr_check "$T/replay.json" "$T/replay.txt" || return 1
}

# Found by --watch --comm at its exec inside the container
test_container_podman_watch() {
	need_root
	ctr_image || return 1
	GMT_READY="watching" start_tracer --watch --comm workload --no-tui -i 0.2 --json \
		-o "$T/rec/" || return 1
	ctr_start || return 1
	expect 'wait_line "$T/gmt.err" "tracing pid $CTR_PID"' \
		"--watch found $CTR_PID: $(tail -3 "$T/gmt.err")" || return 1
	echo go >"$T/io/go"
	cat "$T/io/done" >"$T/wl.json"
	ctr_limit_read "$T/rec/*$CTR_PID*" || return 1
	echo go >"$T/io/hold"
	"${PODMAN[@]}" wait "$CTR_NAME" >/dev/null
	kill -INT "$GMT_PID"
	wait_tracer
	expect '[ $? = 0 ]' "the tracer: $(tail -3 "$T/gmt.err")" || return 1
	"$GMT" replay "$T"/rec/*"$CTR_PID"* >"$T/replay.txt" 2>"$T/replay.err" ||
		{ echo "# replay: $(ls "$T/rec") $(cat "$T/replay.err")"; return 1; }
	ctr_check "$T/gmt.out" "$T/replay.txt" || return 1
}

# Found by --watch, with no name to watch, when it maps a GPU library in
# the container (a file of the image, named as the Vulkan loader): the
# kernel's name for the file is the one a host's library has
test_container_podman_watch_gpu_mapping() {
	need_root
	local p
	ctr_image || return 1
	GMT_READY="watching" start_tracer --watch --no-tui -i 0.2 --json || return 1
	ctr_start --map /usr/lib/libvulkan.so.1 || return 1
	expect 'wait_line "$T/gmt.err" "tracing pid $CTR_PID"' \
		"--watch found $CTR_PID: $(tail -3 "$T/gmt.err")" || return 1
	echo go >"$T/io/go"
	cat "$T/io/done" >/dev/null
	echo go >"$T/io/hold"
	"${PODMAN[@]}" wait "$CTR_NAME" >/dev/null
	kill -INT "$GMT_PID"
	wait_tracer
	p=$(jq -c --argjson p "$CTR_PID" '.processes[] | select(.pid == $p) |
		[.traced_how, .traced_mapping, .container.id, .ns_pid]' "$T/gmt.out")
	expect '[ "$p" = "[\"gpu_mapping\",\"libvulkan.so.1\",\"$CTR_ID\",1]" ]' \
		"found by its mapping, in its container: $p" || return 1
}

# kp_cgroup PATH: a cgroup of the memory hierarchy made for the test, its
# parents too (KP_DIRS, removed by kp_cleanup, innermost first)
kp_cgroup() {
	local root d p=""
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if ! grep -qw memory "$root/cgroup.subtree_control" 2>/dev/null; then
		root=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	fi
	[ -n "$root" ] || skip "no cgroup hierarchy with the memory controller"
	KP_DIRS=()
	for d in ${1//\// }; do
		p=$p/$d
		[ -d "$root$p" ] && continue
		mkdir "$root$p" || return 1
		KP_DIRS=("$root$p" "${KP_DIRS[@]}")
	done
	KP_DIR=$root$p
}

kp_cleanup() {
	local d p
	for d in "${KP_DIRS[@]}"; do
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		rmdir "$d" 2>/dev/null
	done
	KP_DIRS=()
}

# kp_trace NAME ENV...: the workload (with ENV) in the pod's container
# cgroup, traced by pid; its report in $T/NAME.json
kp_trace() {
	local name=$1
	shift
	rm -f "$T/go" "$T/done"
	mkfifo "$T/go" "$T/done"
	env "$@" sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$KP_DIR" \
		"$WL" --wait "$T/go" --out "$T/done" --steps 2 --step-mib 1 &
	WL_PID=$!
	start_tracer -p "$WL_PID" --json -i 0.2 -o "$T/$name.gmt" \
		--metrics-file "$T/$name.prom" || return 1
	# the metrics of a live process: before it ends
	expect 'wait_line "$T/$name.prom" "container_id="' "its metrics: $(ls "$T")" || return 1
	cp "$T/$name.prom" "$T/$name.live.prom"
	echo go >"$T/go"
	cat "$T/done" >/dev/null
	wait_tracer
	mv "$T/gmt.out" "$T/$name.json"
	"$GMT" replay --json "$T/$name.gmt" >"$T/$name.replay.json" || return 1
}

# kp_expect NAME POD LABELS: of run NAME, the container in the report and
# its replay (the pod's fields as POD), the labels after container_id
kp_expect() {
	local f c labels=$3 prom=$T/$1.live.prom
	local want="{\"id\":\"$id\",\"runtime\":\"containerd\",\"pod_uid\":\"$uid\",$2}"
	for f in "$1.json" "$1.replay.json"; do
		c=$(jq -c '.processes[0].container' "$T/$f")
		expect '[ "$c" = "$want" ]' "$f: $c" || return 1
	done
	expect 'grep -q "{pid=\"[0-9]*\",.*,container_id=\"$id\",$labels" "$prom"' \
		"the labels: $(grep -m1 container_id= "$prom")" || return 1
}

# A pod-shaped cgroup (kubepods/burstable/pod<uid>/<id>, the cgroupfs
# driver's): its pod's uid, and the name and namespace from the kubelet's
# /var/log/pods (GMT_PODS_DIR here), else from the process's environment,
# said to be so; the same in the replay
test_container_kubepods_pod() {
	need_root
	local uid id
	trap kp_cleanup EXIT
	trap 'exit 1' TERM INT
	uid=$(printf '%08x-1234-4abc-8def-%012x' $$ "$RANDOM")
	id=$(printf '%064x' $$)
	kp_cgroup "kubepods/burstable/pod$uid/$id" || return 1
	mkdir -p "$T/pods/team-a_llama-7f9c_$uid" "$T/nopods"
	GMT_PODS_DIR=$T/pods kp_trace node POD_NAME=liar || return 1
	kp_expect node "\"pod\":\"llama-7f9c\",\"namespace\":\"team-a\",\"pod_from\":\"node\"" \
		'pod="llama-7f9c",namespace="team-a"[,}]' || return 1
	GMT_PODS_DIR=$T/nopods kp_trace env POD_NAME=llama-x POD_NAMESPACE='Bad_NS!' || return 1
	kp_expect env "\"pod\":\"llama-x\",\"namespace\":null,\"pod_from\":\"environment\"" \
		'pod="llama-x"[,}]' || return 1
	expect '! grep -q namespace= "$T/env.live.prom"' "no namespace label where none is known" ||
		return 1
	"$GMT" replay "$T/env.gmt" >"$T/env.txt"
	expect 'grep -q "; pod llama-x (from its environment)" "$T/env.txt"' \
		"the text says where the name came from: $(grep -m1 pod "$T/env.txt")" || return 1
	kp_cleanup
}
