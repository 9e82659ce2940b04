# The exports, read by the real things. Prometheus (--metrics, --metrics-file):
# Debian's Prometheus server scrapes the tracer while it traces the real
# llama-server, and its HTTP API is asked for the figures; promtool checks
# the text. Perfetto (replay --perfetto): protoc decodes the trace with
# the schema's messages. The truth: the server's own /metrics, /proc, the
# report.

# Debian's prometheus and promtool, unpacked in the cache (PROM_DIR)
need_prometheus() {
	PROM_DIR=$("$ROOT/tools/prometheus.sh" 2>"$T/prom-get.err") || {
		echo "# no Prometheus: $(tail -3 "$T/prom-get.err")"
		return 1
	}
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_prometheus TARGET: a server scraping TARGET (HOST:PORT) every
# second (PROM_PORT, PROM_PID); returns once it is ready
start_prometheus() {
	local i
	PROM_PORT=$(free_port)
	cat >"$T/prom.yml" <<-EOF
		global:
		  scrape_interval: 1s
		  evaluation_interval: 1s
		scrape_configs:
		  - job_name: gpumemtrace
		    static_configs:
		      - targets: ['$1']
	EOF
	"$PROM_DIR/prometheus" --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom" \
		--web.listen-address="127.0.0.1:$PROM_PORT" >"$T/prom.log" 2>&1 &
	PROM_PID=$!
	for ((i = 0; i < 600; i++)); do
		curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && return 0
		kill -0 "$PROM_PID" 2>/dev/null || break
		read -r -t 0.1 <> <(:) || true
	done
	echo "# Prometheus did not start: $(tail -3 "$T/prom.log")"
	return 1
}

# promq QUERY: the value of an instant query's first result; "" for none
promq() {
	curl -s --get --data-urlencode "query=$1" "http://127.0.0.1:$PROM_PORT/api/v1/query" |
		jq -r '.data.result[0].value[1] // ""'
}

# prom_wait QUERY VALUE: until Prometheus has scraped QUERY at VALUE (30 s
# at most); PROM_GOT holds the last value seen
prom_wait() {
	local i
	for ((i = 0; i < 300; i++)); do
		PROM_GOT=$(promq "$1")
		[ "$PROM_GOT" = "$2" ] && return 0
		read -r -t 0.1 <> <(:) || true
	done
	return 1
}

# a sample's value in a text file: metric FILE NAME LABEL=VALUE...; the
# first line of NAME with every one of those labels
metric() {
	local f=$1 name=$2 l
	shift 2
	grep "^$name{" "$f" | while IFS= read -r l; do
		for kv in "$@"; do
			[[ $l == *[{,]${kv%%=*}=\"${kv#*=}\"[,}]* ]] || continue 2
		done
		echo "${l##* }"
		break
	done
}

# the verdicts of pid in the text format, as sorted "category verdict" lines
metric_verdicts() {
	grep -oP "^gpumemtrace_verdict\{pid=\"$1\",[^}]*category=\"\K[^\"]+\",verdict=\"[^\"]+" "$2" |
		sed 's/",verdict="/ /' | sort
}

# Prometheus scrapes the tracer while the real llama-server serves two
# clients: the requests and tokens it stores are the server's own /metrics
# (no decode calls: not probed in llama-server by default), the memory is /proc's, promtool accepts the text; the file
# of --metrics-file holds the same at the end as the JSON report
test_metrics_prometheus_scrapes_real_server() {
	need_llama_server || return 1
	need_prometheus || return 1
	local mport n want got anon verdicts
	start_server -np 2 -c 2048 -t 1 || return 1
	start_tracer --json --metrics 0 --metrics-file "$T/gmt.prom" -p "$SERVER_PID" || return 1
	mport=$(grep -oP 'metrics at http://127\.0\.0\.1:\K[0-9]+' "$T/gmt.err")
	expect '[ -n "$mport" ]' "the tracer says where it serves: $(head -3 "$T/gmt.err")" || return 1
	start_prometheus "127.0.0.1:$mport" || return 1
	python3 "$ROOT/tests/llama/client.py" "$PORT" --clients 2 --requests 4 --tokens 16 \
		--spread 4 >"$T/client.json" || return 1
	# the client's requests, and its last GET of the server's /metrics
	n=$(jq '.requests | length' "$T/client.json")
	prom_wait "sum(gpumemtrace_http_requests_total{pid=\"$SERVER_PID\",path!=\"/metrics\",code=\"2xx\"})" "$n"
	expect '[ "$PROM_GOT" = "$n" ]' \
		"Prometheus has $PROM_GOT requests answered, the client sent $n" || return 1
	prom_wait "gpumemtrace_http_requests_total{pid=\"$SERVER_PID\",path=\"/metrics\",code=\"2xx\"}" 1
	for what in "prompt prompt_tokens_total" "generated tokens_predicted_total"; do
		set -- $what
		want=$(jqr ".metrics.$2" "$T/client.json")
		prom_wait "gpumemtrace_tokens_total{pid=\"$SERVER_PID\",kind=\"$1\"}" "$want"
		expect '[ "$PROM_GOT" = "$want" ]' \
			"$1 tokens: $PROM_GOT in Prometheus, the server's /metrics says $want" || return 1
	done
	# llama-server's decode calls are not probed (--token-probes auto): no
	# series for them, rather than a false 0
	got=$(promq "gpumemtrace_llama_decode_calls_total{pid=\"$SERVER_PID\"}")
	expect '[ -z "$got" ]' "no decode calls series: '$got'" || return 1
	got=$(promq "gpumemtrace_http_request_duration_seconds_count{pid=\"$SERVER_PID\"}")
	expect '[ "$got" = "$((n + 1))" ]' "$got request durations, $((n + 1)) answered" || return 1
	# the heap as the kernel counts it; the server is idle
	anon=$(awk '/^RssAnon:/ { print $2 * 1024 }' "/proc/$SERVER_PID/status")
	PROM_GOT=$(promq "gpumemtrace_memory_bytes{pid=\"$SERVER_PID\",category=\"host_anon\"}")
	expect 'awk -v a="$PROM_GOT" -v w="$anon" "BEGIN { d = a - w; exit !(d * d <= (2 * 2^20)^2) }"' \
		"host_anon $PROM_GOT bytes in Prometheus, /proc says RssAnon $anon" || return 1
	curl -s "http://127.0.0.1:$mport/metrics" >"$T/scrape.prom"
	expect '"$PROM_DIR/promtool" check metrics <"$T/scrape.prom" >"$T/promtool.out" 2>&1' \
		'@promtool check metrics: $(head -5 "$T/promtool.out")' || return 1
	verdicts=$(promq "count(gpumemtrace_verdict{pid=\"$SERVER_PID\"})")
	expect '[ "${verdicts:-0}" -ge 1 ]' "verdicts in Prometheus: ${verdicts:-none}" || return 1
	kill -INT "$GMT_PID"
	wait_tracer || return 1
	stop_server
	# the file, written last as the tracer ended: the report's figures
	expect '[ "$(stat -c %a "$T/gmt.prom")" = 644 ] && "$PROM_DIR/promtool" check metrics <"$T/gmt.prom"' \
		"--metrics-file: mode $(stat -c %a "$T/gmt.prom"), promtool accepts it" || return 1
	want=$(jqr '[.processes[0].requests[] | .prompt_tokens] | add' "$T/gmt.out")
	got=$(metric "$T/gmt.prom" gpumemtrace_tokens_total pid="$SERVER_PID" kind=prompt)
	expect '[ "$got" = "$want" ]' "prompt tokens: $got in the file, $want in the report; the file's lines of the server: $(grep -c "pid=\"$SERVER_PID\"" "$T/gmt.prom"), $(grep "pid=\"$SERVER_PID\"" "$T/gmt.prom" | cut -d'{' -f1 | sort | uniq -c | tr -s ' \n' ' '); $(grep "^gpumemtrace_tokens_total{" "$T/gmt.prom")" ||
		return 1
	want=$(jqr "[.findings[] | select(.pid == $SERVER_PID) | \"\(.category) \(.kind)\"] | unique | .[]" "$T/gmt.out")
	got=$(metric_verdicts "$SERVER_PID" "$T/gmt.prom")
	echo "# verdicts: $(tr '\n' ',' <<<"$got")"
	expect '[ -n "$got" ] && [ "$got" = "$want" ]' \
		"the file's verdicts ($(tr '\n' ' ' <<<"$got")) are the report's ($(tr '\n' ' ' <<<"$want"))"
}

# bad addresses and a port in use are refused before tracing starts
test_metrics_bad_address() {
	need_root
	local port holder rc i
	expect '! "$GMT" --metrics 1.2.3:80 -- true 2>"$T/err" && grep -q "expected PORT" "$T/err"' \
		'@$(cat "$T/err")' || return 1
	expect '! "$GMT" --metrics localhost:9464 -- true 2>"$T/err" && grep -q "expected PORT" "$T/err"' \
		'@a name is refused (no resolver runs as root): $(cat "$T/err")' || return 1
	port=$(free_port)
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
print("up", flush=True); time.sleep(60)' "$port" >"$T/held" &
	holder=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$T/held" ] && break
		read -r -t 0.1 <> <(:) || true
	done
	expect '! "$GMT" --metrics "$port" -- "$WL" --steps 1 --out "$T/wl" 2>"$T/err" &&
		grep -q "cannot listen on 127.0.0.1 port $port" "$T/err" && [ ! -e "$T/wl" ]' \
		'@a port in use: $(cat "$T/err"); the workload ran: $([ -e "$T/wl" ] && echo yes || echo no)'
	rc=$?
	kill "$holder"
	return $rc
}

# a recording of the real llama-server serving two clients, as a Perfetto
# trace: protoc decodes it against the schema; it holds the process, a
# slice per request with the server's tokens, a slice per decode call (the
# server's n_decode_total; --token-probes on), and counter tracks whose last
# values are the report's
test_perfetto_export_of_real_server() {
	need_llama_server || return 1
	local sum want got n
	start_server -np 2 -c 2048 -t 1 || return 1
	start_tracer record -o "$T/rec.gmt" --token-probes on -p "$SERVER_PID" || return 1
	drive --clients 2 --requests 3 --tokens 16 --spread 4 || return 1
	"$GMT" replay --json "$T/rec.gmt" >"$T/report.json" || return 1
	expect '"$GMT" replay --perfetto "$T/out.pftrace" "$T/rec.gmt" 2>"$T/pf.err"' \
		'@$(cat "$T/pf.err")' || return 1
	expect '[ "$(stat -c %a "$T/out.pftrace")" = 600 ]' "mode $(stat -c %a "$T/out.pftrace")" || return 1
	expect 'protoc --proto_path="$ROOT/proto" --decode=perfetto.protos.Trace perfetto.proto \
		<"$T/out.pftrace" >"$T/decoded.txt" 2>"$T/protoc.err"' \
		'@protoc decodes it: $(head -3 "$T/protoc.err")' || return 1
	python3 "$ROOT/tests/llama/pftrace.py" <"$T/decoded.txt" >"$T/sum.json" || return 1
	echo "# $(jq -c '{packets, slices, processes, unended, requests: (.requests | length)}' "$T/sum.json")"
	expect '[ "$(jq -c "[.processes[] | select(.pid == $SERVER_PID) | .name]" "$T/sum.json")" = "[\"llama-server\"]" ]' \
		"one process track for the server: $(jq -c .processes "$T/sum.json")" || return 1
	expect '[ "$(jqr .unended "$T/sum.json")" = 0 ]' "every slice ends" || return 1
	# requests: those of the report, with the server's tokens
	want=$(jqr '[.processes[0].requests[]] | length' "$T/report.json")
	got=$(jqr '.requests | length' "$T/sum.json")
	expect '[ "$got" = "$want" ] && [ "$want" -ge 6 ]' "$got request slices, the report has $want" || return 1
	want=$(jqr '.metrics.tokens_predicted_total' "$T/client.json")
	got=$(jqr '[.requests[].generated_tokens] | add' "$T/sum.json")
	expect '[ "$got" = "$want" ]' "generated tokens $got on the slices, the server's /metrics says $want" || return 1
	want=$(jqr '.metrics.prompt_tokens_total' "$T/client.json")
	got=$(jqr '[.requests[].prompt_tokens] | add' "$T/sum.json")
	expect '[ "$got" = "$want" ]' "prompt tokens $got on the slices, the server's /metrics says $want" || return 1
	# a slice per decode call
	want=$(jqr '.metrics.n_decode_total' "$T/client.json")
	got=$(jqr '.slices.llama_decode' "$T/sum.json")
	expect '[ "$got" = "$want" ]' "$got llama_decode slices, the server's /metrics says $want" || return 1
	# the heap's counter track ends where the report's anonymous RSS does
	want=$(jqr '.processes[0].rss.anon.end_bytes' "$T/report.json")
	got=$(jqr ".counters[\"$SERVER_PID host_anon\"].last" "$T/sum.json")
	expect '[ -n "$want" ] && [ "$got" = "$want" ]' "host_anon ends at $got, the report says $want" || return 1
	expect '[ "$(jqr ".counters[\"$SERVER_PID host_anon\"].unit" "$T/sum.json")" = UNIT_SIZE_BYTES ]' \
		"counters in bytes"
}

# a damaged recording: what it holds is exported, and the damage said
test_perfetto_export_damaged_file() {
	need_root
	local size
	"$GMT" record -o "$T/rec.gmt" -q -- "$WL" --steps 3 --step-mib 2 --out /dev/null >/dev/null || return 1
	size=$(stat -c %s "$T/rec.gmt")
	head -c $((size - 100)) "$T/rec.gmt" >"$T/cut.gmt"
	expect '"$GMT" replay --perfetto "$T/out.pftrace" "$T/cut.gmt" 2>"$T/err"' '@$(cat "$T/err")' || return 1
	expect 'grep -q "missing\|cut\|truncated" "$T/err"' "the damage said: $(cat "$T/err")" || return 1
	expect 'protoc --proto_path="$ROOT/proto" --decode=perfetto.protos.Trace perfetto.proto \
		<"$T/out.pftrace" >/dev/null' || return 1
	expect '! "$GMT" replay --perfetto "$T/x" --json "$T/rec.gmt" 2>"$T/err" && grep -q "goes with none" "$T/err"' \
		'@$(cat "$T/err")' || return 1
	expect '! "$GMT" replay --perfetto /nonexistent/dir/x "$T/rec.gmt" 2>"$T/err" && grep -q "cannot create" "$T/err"' \
		'@$(cat "$T/err")'
}

# wait_line FILE PATTERN: until a line of FILE matches (60 s at most)
wait_line() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		read -r -t 0.1 <> <(:) || true
	done
	return 1
}

# The service: --watch finds the real llama-server by the GPU library it
# maps (its Vulkan backend), Prometheus scrapes the tracer, the server
# restarts and the new process is found and scraped while the old one
# leaves the metrics; the verdicts are metrics; -o DIR keeps a file per
# process, rotated by age, each file replaying alone with its own pid
test_watch_service_follows_a_restarted_server() {
	need_llama_server || return 1
	need_prometheus || return 1
	local mport first n f pid files
	GMT_READY="watching" start_tracer --watch --metrics 0 --no-tui -o "$T/svc/" \
		--rotate-age 1 --keep 1000 --json || return 1
	mport=$(grep -oP 'metrics at http://127\.0\.0\.1:\K[0-9]+' "$T/gmt.err")
	start_prometheus "127.0.0.1:$mport" || return 1
	for round in 1 2; do
		start_server -np 2 -c 2048 -t 1 || return 1
		expect 'wait_line "$T/gmt.err" "tracing pid $SERVER_PID (llama-server)"' \
			'@--watch found pid $SERVER_PID: $(tail -3 "$T/gmt.err")' || return 1
		python3 "$ROOT/tests/llama/client.py" "$PORT" --clients 2 --requests 2 --tokens 8 \
			>"$T/client$round.json" || return 1
		n=$(jq '.requests | length' "$T/client$round.json")
		prom_wait "sum(gpumemtrace_http_requests_total{pid=\"$SERVER_PID\",path!=\"/metrics\",code=\"2xx\"})" "$n"
		expect '[ "$PROM_GOT" = "$n" ]' \
			"round $round: Prometheus has $PROM_GOT requests of pid $SERVER_PID, the client sent $n" || return 1
		want=$(jqr '.metrics.tokens_predicted_total' "$T/client$round.json")
		prom_wait "gpumemtrace_tokens_total{pid=\"$SERVER_PID\",kind=\"generated\"}" "$want"
		expect '[ "$PROM_GOT" = "$want" ]' \
			"round $round: $PROM_GOT generated tokens, the server's /metrics says $want" || return 1
		prom_wait "count(gpumemtrace_verdict{pid=\"$SERVER_PID\",category=\"host_anon\"})" 1
		expect '[ "$PROM_GOT" = 1 ]' "round $round: a verdict on the server's heap is a metric" || return 1
		if [ "$round" = 1 ]; then
			first=$SERVER_PID
			stop_server
			# the exited process leaves the metrics
			prom_wait "count(gpumemtrace_memory_bytes{pid=\"$first\"}) or vector(0)" 0
			expect '[ "$PROM_GOT" = 0 ]' "pid $first gone from the metrics after its exit" || return 1
		fi
	done
	prom_wait "gpumemtrace_processes" 1
	expect '[ "$PROM_GOT" = 1 ]' "one process traced now: $PROM_GOT" || return 1
	stop_server
	kill -TERM "$GMT_PID"
	wait_tracer || return 1
	# a file per server, the first rotated into several by --rotate-age;
	# each file is 0600 and replays alone with its own server and session
	expect '[ "$(stat -c %a "$T/svc")" = 700 ]' "the directory is 0700: $(stat -c %a "$T/svc")" || return 1
	for pid in "$first" "$SERVER_PID"; do
		files=$(ls "$T/svc" | grep -c "^llama-server\.[0-9T]*\.$pid\(\.[0-9]*\)\?\.gmt$")
		expect '[ "$files" -ge 1 ]' "a file for pid $pid: $(ls "$T/svc")" || return 1
	done
	files=$(ls "$T/svc" | grep -c "\.$first\.")
	expect '[ "$files" -ge 2 ]' "pid $first's files rotated each second: $(ls -l "$T/svc")" || return 1
	# the requests, summed over a server's files, are the client's (a
	# request cut by a rotation is in the file where it began)
	declare -A posts=([$first]=0 [$SERVER_PID]=0)
	for f in "$T"/svc/*.gmt; do
		pid=$(basename "$f" | sed -E 's/.*\.[0-9]{8}T[0-9]{6}\.([0-9]+)(\.[0-9]+)?\.gmt$/\1/')
		expect '[ "$(stat -c %a "$f")" = 600 ]' "$f is $(stat -c %a "$f")" || return 1
		"$GMT" replay --json "$f" >"$T/replay.json" 2>"$T/replay.err" || {
			echo "# $f does not replay: $(cat "$T/replay.err")"
			return 1
		}
		expect '[ "$(jq -c "[.processes[] | .pid]" "$T/replay.json")" = "[$pid]" ]' \
			"$(basename "$f") holds pid $pid alone: $(jq -c '[.processes[] | [.pid, .comm]]' "$T/replay.json")" || return 1
		expect 'jq -e ".session.watch" "$T/replay.json" >/dev/null' "$(basename "$f"): the session says --watch" || return 1
		posts[$pid]=$((${posts[$pid]:-0} + $(jq '[.processes[].requests[]? | select(.method == "POST")] | length' "$T/replay.json")))
	done
	for round in 1 2; do
		pid=$first
		[ "$round" = 2 ] && pid=$SERVER_PID
		n=${posts[$pid]}
		want=$(jq '.requests | length' "$T/client$round.json")
		expect '[ "$n" = "$want" ]' "pid $pid's files hold $n requests, the client sent $want" || return 1
	done
}

# the systemd unit (dist/gpumemtrace.service): systemd-analyze accepts it,
# and the tracer, held to the unit's capability bounding set (setpriv, as
# systemd would), watches a Vulkan program it finds by itself, runs the
# Vulkan helper in it and counts its allocations as the program does; with
# CAP_BPF and CAP_SYS_ADMIN gone too it refuses, so the set is applied
test_service_unit_capabilities_suffice() {
	need_root
	need_lavapipe
	local caps nobpf
	sed "s|/usr/local/bin/gpumemtrace|$GMT|" "$ROOT/dist/gpumemtrace.service" >"$T/gpumemtrace.service"
	expect 'systemd-analyze verify "$T/gpumemtrace.service" >"$T/verify" 2>&1' \
		'@systemd-analyze verify: $(cat "$T/verify")' || return 1
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$ROOT/dist/gpumemtrace.service" |
		tr 'A-Z ' 'a-z,' | sed 's/cap_/+/g')
	expect '[[ $caps == *+bpf* ]] && grep -q "^NoNewPrivileges=yes" "$ROOT/dist/gpumemtrace.service"' \
		"the unit bounds its capabilities: $caps" || return 1
	nobpf=${caps/+bpf,/}
	expect '! setpriv --bounding-set=-all,${nobpf/+sys_admin,/} --inh-caps=-all -- "$GMT" --watch \
		-d 1 >/dev/null 2>"$T/nobpf" && grep -q "needs the CAP_BPF" "$T/nobpf"' \
		'@without CAP_BPF and CAP_SYS_ADMIN it refuses: $(cat "$T/nobpf")' || return 1
	printf '#!/bin/sh\nexec setpriv --bounding-set=-all,%s --inh-caps=-all -- "%s" "$@"\n' \
		"$caps" "$GMT" >"$T/capped"
	chmod +x "$T/capped"
	GMT=$T/capped GMT_READY="watching" start_tracer --json --watch --no-tui -o "$T/rec/" || return 1
	watched_vkalloc || return 1
	check_vulkan "$T/vk.json" "$T/wl.json" || return 1
	# as the unit's ExecStart, a recording per process: the program's own
	# replays alone with the same counts
	expect '"$GMT" replay --json "$T"/rec/vkalloc.*."$VK_PID".gmt >"$T/rec.json"' \
		"the program's own recording: $(ls "$T/rec")" || return 1
	check_vulkan "$T/rec.json" "$T/wl.json"
}
