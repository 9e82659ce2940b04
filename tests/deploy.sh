# The ways GPU operators deploy it (issue 36): the OCI image of
# dist/Containerfile, run with exactly the privileges of the DaemonSet
# (dist/kubernetes/daemonset.yaml) against the real llama-server in another
# container; the DaemonSet's pod under podman kube play, scraped; the Helm
# chart rendered against the DaemonSet. podman here: rootful, cgroup v1, runc
# (crun refuses hybrid cgroups), ulimits within the machine's, nothing pulled:
# every image is made here, named gmt-deploy-*, and removed at the end.

# deploy_setup: the names of this test's images (DEPLOY), its containers.conf
# (CONTAINERS_CONF), the cleanup on exit; the Pod of the DaemonSet's template
# in $T/pod.json
deploy_setup() {
	need_root
	command -v podman >/dev/null || skip "no podman (tools/deps.sh installs it)"
	local id
	id=$(basename "$T" | tr 'A-Z.' 'a-z-')
	DEPLOY=gmt-deploy-$id
	# runc, ulimits this machine allows, the pods' infra image made here;
	# the test's own file, never /etc/containers
	cat >"$T/containers.conf" <<-EOF
		[containers]
		default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
		[engine]
		runtime = "runc"
		infra_image = "localhost/$DEPLOY-infra:latest"
		infra_command = "/catatonit"
	EOF
	export CONTAINERS_CONF=$T/containers.conf
	trap deploy_cleanup EXIT
	trap 'exit 143' TERM
	HELM=$("$ROOT/tools/helm-render.sh" 2>"$T/go.err") || {
		echo "# tools/helm-render.sh: $(tail -3 "$T/go.err")"
		return 1
	}
	"$HELM" --pod "$ROOT/dist/kubernetes/daemonset.yaml" >"$T/pod.json"
}

# what this test made: its pods, containers and images, pass or fail
deploy_cleanup() {
	local what
	for what in $(podman pod ps --format '{{.Name}}' | grep "^$DEPLOY-"); do
		podman pod rm -f -t 5 "$what" >/dev/null 2>&1
	done
	for what in $(podman ps -a --format '{{.Names}}' | grep "^$DEPLOY-"); do
		podman rm -f -t 5 "$what" >/dev/null 2>&1
	done
	for what in $(podman images --format '{{.Repository}}' | grep "/$DEPLOY-"); do
		podman rmi -f "$what" >/dev/null 2>&1
	done
}

deploy_tracer_image() {
	"$ROOT/tools/image-context.sh" "$T/ctx" &&
		podman build -q -t "localhost/$DEPLOY-tracer:latest" -f "$T/ctx/Containerfile" \
			"$T/ctx" >/dev/null
}

# daemonset_flags: podman run's flags for the DaemonSet's privileges, mounts
# and limits (DS_FLAGS), its recordings in $T/rec
daemonset_flags() {
	mkdir -p "$T/rec"
	jq --arg rec "$T/rec" '(.spec.volumes[] | select(.name == "recordings") | .hostPath.path) =
		$rec' "$T/pod.json" >"$T/run.json" || return 1
	mapfile -t DS_FLAGS < <(pod_flags "$T/run.json")
	echo "# podman run ${DS_FLAGS[*]}"
	expect '[[ " ${DS_FLAGS[*]} " == *" --pid=host "* && " ${DS_FLAGS[*]} " == *" --cap-drop=all "* &&
		" ${DS_FLAGS[*]} " == *" --read-only "* ]]' "the DaemonSet's privileges read"
}

# deploy_images: the tracer's (dist/Containerfile), the llama-server's (the
# cached build at its own path, with the libraries ldd names, imported from
# a tarball; not its Vulkan backend: no driver in the image) and the pods'
# infra (catatonit)
deploy_images() {
	local lib
	deploy_tracer_image || return 1
	mkdir -p "$T/srv$LLAMA_DIR" "$T/srv/tmp" && chmod 1777 "$T/srv/tmp" &&
		cp -a "$LLAMA_DIR/." "$T/srv$LLAMA_DIR/" && rm -f "$T/srv$LLAMA_DIR/libggml-vulkan.so" ||
		return 1
	for lib in $(ldd "$LLAMA_DIR/llama-server" "$LLAMA_DIR/libggml-cpu.so" |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' |
		grep -v "^$LLAMA_DIR/" | sort -u); do
		mkdir -p "$T/srv$(dirname "$lib")" && cp -L "$lib" "$T/srv$lib" || return 1
	done
	tar -C "$T/srv" -c . | podman import -q - "localhost/$DEPLOY-llama:latest" >/dev/null || return 1
	mkdir -p "$T/infra" && cp /usr/bin/catatonit "$T/infra/" &&
		printf 'FROM scratch\nCOPY catatonit /catatonit\nENTRYPOINT ["/catatonit", "-P"]\n' >"$T/infra/Containerfile" &&
		podman build -q -t "localhost/$DEPLOY-infra:latest" "$T/infra" >/dev/null
}

# pod_flags POD.json: podman run's flags for its first container's
# privileges, mounts and limits, one a line, and nothing the pod does not say
pod_flags() {
	jq -r '.spec as $s | $s.containers[0] as $c | $c.securityContext as $sc |
		(if $s.hostPID then "--pid=host" else empty end),
		(if $sc.privileged then "--privileged" else empty end),
		(if $sc.readOnlyRootFilesystem then "--read-only", "--read-only-tmpfs=false" else empty end),
		(if $sc.allowPrivilegeEscalation == false then "--security-opt=no-new-privileges" else empty end),
		"--user=\($sc.runAsUser // 0):\($sc.runAsGroup // 0)",
		($sc.capabilities.drop[]? | "--cap-drop=\(ascii_downcase)"),
		($sc.capabilities.add[]? | "--cap-add=CAP_\(.)"),
		($c.volumeMounts[]? as $m | ($s.volumes[] | select(.name == $m.name)) as $v |
			if $v.hostPath then
				"--volume=\($v.hostPath.path):\($m.mountPath)\(if $m.readOnly then ":ro" else "" end)"
			elif $v.emptyDir.medium == "Memory" then
				"--tmpfs=\($m.mountPath):size=\($v.emptyDir.sizeLimit | sub("Mi$"; "m"))"
			else error("volume \($v.name): neither a hostPath nor an emptyDir in memory") end),
		($c.resources.limits.memory // empty | "--memory=\(sub("Gi$"; "g") | sub("Mi$"; "m"))"),
		($c.resources.limits.cpu // empty | "--cpus=\(.)")' "$1"
}

# deploy_server: the llama-server in a container of its own (its own pid
# namespace, the host's network: none else works here), as start_server runs
# it, the model mounted read-only at its own path; SERVER_HOST_PID its pid on
# the host, SERVER_CID its container's id
deploy_server() {
	SERVER_WRAP="podman run --rm --name $DEPLOY-server --network host -v $T:$T:ro
		localhost/$DEPLOY-llama:latest" start_server "$@" || return 1
	SERVER_HOST_PID=$(podman inspect -f '{{.State.Pid}}' "$DEPLOY-server") &&
		SERVER_CID=$(podman inspect -f '{{.Id}}' "$DEPLOY-server")
	expect '[ "$(cat "/proc/$SERVER_HOST_PID/comm" 2>/dev/null)" = llama-server ]' \
		"the server's host pid $SERVER_HOST_PID" || return 1
}

# The image, with the DaemonSet's privileges and mounts (taken from its YAML,
# not written again here: hostPID, every capability dropped but its ten, no
# new privileges, read-only root, tracefs read-only, recordings and
# /tmp writable, its limits), traces the llama-server of another container
# by its host pid: requests and tokens as the server's own timings, its heap
# as the host's /proc, the process named by its container. podman here gives
# no CAP_SYS_RESOURCE (it has none to give): the tracer runs without it, as
# it may on kernels since 5.11.
test_deploy_image_traces_a_server_in_another_container() {
	need_llama_server || return 1
	deploy_setup || return 1
	deploy_images || return 1
	daemonset_flags || return 1
	deploy_server -np 1 -c 2048 -t 1 || return 1
	GMT=podman start_tracer run --rm --name "$DEPLOY-tracer" --network none "${DS_FLAGS[@]}" \
		"localhost/$DEPLOY-tracer:latest" --json -p "$SERVER_HOST_PID" || return 1
	drive_anon --clients 1 --requests 6 --tokens 32 || return 1
	compare || return 1
	# its heap's last level /proc's, to 2% or the steps rss_stat counts in
	expect 'near "$(host_heap_verdict | jq .last_bytes)" "$ANON"' \
		"its heap $(host_heap_verdict | jq .last_bytes), /proc says $ANON"
	# its container, as podman names it, and its pid inside
	expect '[ "$(jq -r ".processes[0].container.id" "$T/gmt.out")" = "$SERVER_CID" ] &&
		[ "$(jq -r ".processes[0].container.runtime" "$T/gmt.out")" = podman ] &&
		[ "$(jq -r ".processes[0].ns_pid" "$T/gmt.out")" = 1 ]' \
		"container $SERVER_CID, ns_pid 1: $(jq -c ".processes[0] | {ns_pid, container}" "$T/gmt.out")"
}

# The Vulkan helper in the image: with the DaemonSet's privileges and its
# --watch, the tracer finds a Vulkan program of the host by the loader it
# maps, runs the helper (from the image, its libraries the image's) in the
# program's namespaces and root on the driver it loads (lavapipe), and
# counts its allocations as the program itself does
test_deploy_image_runs_the_vulkan_helper() {
	need_lavapipe
	deploy_setup || return 1
	deploy_tracer_image || return 1
	daemonset_flags || return 1
	GMT=podman GMT_READY=watching start_tracer run --rm --name "$DEPLOY-tracer" --network none \
		"${DS_FLAGS[@]}" "localhost/$DEPLOY-tracer:latest" --watch --json --no-tui || return 1
	watched_vkalloc || return 1
	check_vulkan "$T/vk.json" "$T/wl.json"
}

# near BYTES TRUTH: within 2% of TRUTH, or RSS_SLACK (tests/lib.sh)
near() {
	awk -v m="$1" -v a="$2" -v s="$RSS_SLACK" \
		'BEGIN { d = m - a; d = d < 0 ? -d : d; exit !(m != "" && (d <= 0.02 * a || d <= s)) }'
}

# deploy_metric NAME LABELS: the value of the tracer's metric NAME for the server's
# host pid with LABELS (a regex), summed; from $T/metrics
deploy_metric() {
	awk -v n="$1" -v p="pid=\"$SERVER_HOST_PID\"" -v l="$2" \
		'index($1, n "{") == 1 && index($1, p) && $1 ~ l { s += $2 } END { print s + 0 }' "$T/metrics"
}

# tracer_state: the kube play tracer's state and last words
tracer_state() {
	podman inspect -f "{{.State.Status}}, exit {{.State.ExitCode}}, restarts {{.RestartCount}}" \
		"$DEPLOY-tracer-gpumemtrace"
	podman logs "$DEPLOY-tracer-gpumemtrace" 2>&1 | tail -5
}

# The DaemonSet's pod template as a Pod under podman kube play, with its own
# arguments (--watch, --comm llama-server, -o, --metrics), tracing a
# llama-server pod started after it: found at its exec, its requests and
# tokens on the metrics port as the server's /metrics counts them, its heap
# as /proc's. For the test only: the host's network (no other works here:
# the port is a free one of the host's, no port mapping) and the recordings
# in $T. podman 4.3 reads no hostPID in kube YAML (4.5 does): where the Pod
# says hostPID, its containers.conf says pidns = "host".
test_deploy_daemonset_pod_under_kube_play() {
	need_llama_server || return 1
	deploy_setup || return 1
	deploy_images || return 1
	local mport i
	mport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$T/rec"
	jq --arg name "$DEPLOY-tracer" --arg image "localhost/$DEPLOY-tracer:latest" \
		--arg addr "127.0.0.1:$mport" --arg rec "$T/rec" '.metadata.name = $name |
		.spec.hostNetwork = true | .spec.containers[0].image = $image |
		del(.spec.containers[0].ports) |
		.spec.containers[0].args |= map(if test("^0\\.0\\.0\\.0:") then $addr else . end) |
		(.spec.volumes[] | select(.name == "recordings") | .hostPath.path) = $rec' \
		"$T/pod.json" >"$T/tracer-pod.json" || return 1
	cp "$T/containers.conf" "$T/tracer.conf"
	if jq -e .spec.hostPID "$T/tracer-pod.json" >/dev/null; then
		sed -i '/^\[containers\]/a pidns = "host"' "$T/tracer.conf"
	fi
	CONTAINERS_CONF=$T/tracer.conf podman kube play "$T/tracer-pod.json" >"$T/play.out" 2>&1 || {
		sed 's/^/# /' "$T/play.out"
		return 1
	}
	# the tracer listens once it is tracing, its text empty until its first
	# interval
	for ((i = 0; i < 300; i++)); do
		curl -sf "http://127.0.0.1:$mport/metrics" >"$T/metrics" &&
			grep -q '^gpumemtrace_info' "$T/metrics" && break
		case $(podman inspect -f '{{.State.Status}}' "$DEPLOY-tracer-gpumemtrace") in
		exited | stopped | "") break ;;
		esac
		read -r -t 0.1 <> <(:) || true
	done
	expect 'grep -q "^gpumemtrace_info" "$T/metrics"' '@its metrics port: $(tracer_state)' || return 1
	expect '[ "$(podman inspect -f "{{.HostConfig.PidMode}} {{.HostConfig.ReadonlyRootfs}}" \
		"$DEPLOY-tracer-gpumemtrace")" = "host true" ]' "the host's pids, a read-only root" || return 1
	# a llama-server pod
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" >/dev/null || return 1
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$T/server-pod.yaml" <<-EOF
		apiVersion: v1
		kind: Pod
		metadata:
		  name: $DEPLOY-server
		spec:
		  hostNetwork: true
		  containers:
		    - name: llama-server
		      image: localhost/$DEPLOY-llama:latest
		      command: ["$LLAMA_DIR/llama-server"]
		      args: ["-m", "/models/tiny.gguf", "--host", "127.0.0.1", "--port", "$PORT",
		        "--metrics", "--no-warmup", "-np", "1", "-c", "2048", "-t", "1"]
		      volumeMounts:
		        - name: models
		          mountPath: /models
		          readOnly: true
		  volumes:
		    - name: models
		      hostPath:
		        path: $T
		        type: Directory
	EOF
	podman kube play "$T/server-pod.yaml" >"$T/play.out" 2>&1 || {
		sed 's/^/# /' "$T/play.out"
		return 1
	}
	for ((i = 0; i < 600; i++)); do
		curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break
		read -r -t 0.1 <> <(:) || true
	done
	SERVER_HOST_PID=$(podman inspect -f '{{.State.Pid}}' "$DEPLOY-server-llama-server")
	python3 "$ROOT/tests/llama/client.py" "$PORT" --clients 1 --requests 6 --tokens 32 \
		>"$T/client.json" || return 1
	ANON=$(awk '/^RssAnon:/ { print $2 * 1024 }' "/proc/$SERVER_HOST_PID/status")
	# the server's own /metrics, which the client read at its end
	local want_prompt want_gen want_req
	want_prompt=$(jq .metrics.prompt_tokens_total "$T/client.json")
	want_gen=$(jq .metrics.tokens_predicted_total "$T/client.json")
	want_req=$(jq '[.requests[] | select(.status == 200)] | length' "$T/client.json")
	# counted once the tracer has tied each request to its decoding (a
	# second without one at most): until the tokens are all there, or 10 s
	for ((i = 0; i < 100; i++)); do
		curl -sf "http://127.0.0.1:$mport/metrics" >"$T/metrics" || break
		[ "$(deploy_metric gpumemtrace_tokens_total 'kind="generated"')" = "$want_gen" ] &&
			[ "$(deploy_metric gpumemtrace_tokens_total 'kind="prompt"')" = "$want_prompt" ] && break
		read -r -t 0.1 <> <(:) || true
	done
	echo "# server pid $SERVER_HOST_PID: prompt $want_prompt, generated $want_gen, requests $want_req"
	expect '[ "$(deploy_metric gpumemtrace_tokens_total "kind=\"prompt\"")" = "$want_prompt" ] &&
		[ "$(deploy_metric gpumemtrace_tokens_total "kind=\"generated\"")" = "$want_gen" ]' \
		"tokens as the server's /metrics: $(grep "gpumemtrace_tokens_total{.*pid=\"$SERVER_HOST_PID\"" "$T/metrics")"
	# answered ones (a connection the client closes may read as one closed
	# unanswered, code "none", as compare.py allows)
	expect '[ "$(deploy_metric gpumemtrace_http_requests_total "path=\"/(completion|v1/completions|v1/chat/completions)\",code=\"2xx\"")" = "$want_req" ]' \
		"the client's $want_req requests: $(grep "gpumemtrace_http_requests_total{.*pid=\"$SERVER_HOST_PID\"" "$T/metrics")"
	expect 'near "$(deploy_metric gpumemtrace_memory_bytes "category=\"host_anon\"")" "$ANON"' \
		"heap $(deploy_metric gpumemtrace_memory_bytes "category=\"host_anon\""), /proc says $ANON"
	# its recording, in the volume
	expect 'ls "$T/rec"/llama-server.*."$SERVER_HOST_PID".gmt >/dev/null 2>&1' \
		"a recording of pid $SERVER_HOST_PID in the volume: $(ls "$T/rec" | head -3)"
}

# The chart with its default values renders the DaemonSet, and with
# serviceMonitor.enabled the ServiceMonitor too, document for document (as
# YAML, not text); a value changed shows in the render, so the comparison
# can fail
test_deploy_chart_renders_the_daemonset() {
	local chart=$ROOT/dist/helm/gpumemtrace k8s=$ROOT/dist/kubernetes
	HELM=$("$ROOT/tools/helm-render.sh" 2>"$T/go.err") || {
		echo "# tools/helm-render.sh: $(tail -3 "$T/go.err")"
		return 1
	}
	"$HELM" "$chart" >"$T/default.yaml" || return 1
	expect '"$HELM" --same "$T/default.yaml" "$k8s/daemonset.yaml" >"$T/diff"' '@$(cat "$T/diff")' ||
		return 1
	"$HELM" --set serviceMonitor.enabled=true "$chart" >"$T/monitor.yaml" || return 1
	{ cat "$k8s/daemonset.yaml" && echo --- && cat "$k8s/servicemonitor.yaml"; } >"$T/both.yaml"
	expect '"$HELM" --same "$T/monitor.yaml" "$T/both.yaml" >"$T/diff"' '@$(cat "$T/diff")' || return 1
	"$HELM" --set metricsPort=9000 "$chart" >"$T/other.yaml" || return 1
	expect '! "$HELM" --same "$T/other.yaml" "$k8s/daemonset.yaml" >"$T/diff" &&
		grep -q "prometheus.io/port" "$T/diff"' '@a changed port found: $(cat "$T/diff")'
}
