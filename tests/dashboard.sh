# The Grafana dashboard (dist/grafana/gpumemtrace.json): a valid dashboard,
# and every query of every panel, its variables put in as Grafana would, run
# against the real Prometheus scraping the tracer of the real llama-server
# (on lavapipe's Vulkan); a few values against the client and /proc.
# Uses export.sh's Prometheus helpers, server.sh's and gpu.sh's.

DASH_FILE=dist/grafana/gpumemtrace.json

# the panels no data can be made for here, with why: their queries must
# still parse (Prometheus answers success, with no series)
DASH_NO_DATA=(
	# TTM's buffers need a kernel GPU driver (amdgpu) and fentry: this
	# machine has neither (no GPU, lockdown); tests/kernels.sh's VMs do
	"Kernel buffers by placement"
	"Evictions from VRAM"
)

# dash_no_data TITLE: whether TITLE is one of DASH_NO_DATA
dash_no_data() {
	printf '%s\n' "${DASH_NO_DATA[@]}" | grep -qxF "$1"
}

# the panels, their ids, types, places and data sources make a dashboard
# Grafana 10/11 imports
test_dashboard_is_a_valid_dashboard() {
	local d=$ROOT/$DASH_FILE
	expect 'jq -e . "$d" >/dev/null' "$DASH_FILE is JSON" || return 1
	expect 'jq -e "[.panels[].id] | length == (unique | length)" "$d" >/dev/null' \
		"panel ids unique: $(jq -c '[.panels[].id]' "$d")" || return 1
	# on the 24-column grid, each in it, none over another
	expect 'jq -e "all(.panels[].gridPos; .x >= 0 and .y >= 0 and .w >= 1 and .h >= 1 and
		.x + .w <= 24) and
		([.panels[].gridPos] | [range(length) as \$i | range(\$i + 1; length) as \$j |
		[.[\$i], .[\$j]]] | all(.[0].x + .[0].w <= .[1].x or .[1].x + .[1].w <= .[0].x or
		.[0].y + .[0].h <= .[1].y or .[1].y + .[1].h <= .[0].y))" "$d" >/dev/null' \
		"gridPos sane: $(jq -c '[.panels[] | [.id, .gridPos.x, .gridPos.y, .gridPos.w, .gridPos.h]]' "$d")" ||
		return 1
	# every data source the variable's, the variable a Prometheus one
	expect 'jq -e "[.. | objects | .datasource? // empty] | length > 0 and
		all(.[]; . == {type: \"prometheus\", uid: \"\${datasource}\"})" "$d" >/dev/null' \
		"every datasource is \${datasource}: $(jq -c '[.. | objects | .datasource? // empty] | unique' "$d")" ||
		return 1
	expect 'jq -e ".templating.list[] | select(.name == \"datasource\") |
		.type == \"datasource\" and .query == \"prometheus\"" "$d" >/dev/null' \
		"a Prometheus datasource variable" || return 1
	expect 'jq -e "[.templating.list[] | select(.type == \"query\") | .name] == [\"instance\", \"comm\", \"pid\"] and
		all(.templating.list[] | select(.type == \"query\"); .definition | startswith(\"label_values(\"))" "$d" >/dev/null' \
		"variables instance, comm, pid from label_values" || return 1
	# every panel but a row has a query, every query its refId
	expect 'jq -e "all(.panels[] | select(.type != \"row\"); (.targets | length > 0) and
		all(.targets[]; (.expr | length > 0) and (.refId | length > 0)))" "$d" >/dev/null' \
		"every panel queries" || return 1
	expect '[ "$(jq -r ".schemaVersion >= 36 and (.uid | length > 0)" "$d")" = true ]' \
		"schemaVersion of Grafana 10/11, a uid" || return 1
}

# dash_expr EXPR: EXPR as Grafana sends it with one value a variable (a
# regex matcher: its regex characters escaped, the backslash doubled within
# PromQL's string) and $__rate_interval a fixed window
dash_expr() {
	local e=$1
	e=${e//'$__rate_interval'/1m}
	e=${e//'$instance'/"$DASH_INSTANCE"}
	e=${e//'$comm'/"$DASH_COMM"}
	e=${e//'$pid'/"$DASH_PID"}
	printf '%s' "$e"
}

# prom_json QUERY: Prometheus's whole answer to an instant query
prom_json() {
	curl -s --get --data-urlencode "query=$1" "http://127.0.0.1:$PROM_PORT/api/v1/query"
}

# the panels against the real server: each query returns data for its pid
# (or, for DASH_NO_DATA, parses), the variables list it; requests, tokens
# and the heap are the client's, the server's /metrics and /proc's
test_dashboard_panels_show_the_real_server() {
	need_llama_server || return 1
	need_prometheus || return 1
	need_lavapipe
	local d=$ROOT/$DASH_FILE mport n i title id ref expr q ans want got anon missing=""
	node "$ROOT/tools/tiny-gguf.mjs" "$T/tiny.gguf" >/dev/null || return 1
	# traced from its start: its weights and KV cache are made under the
	# probes; beside it, its child vkalloc (-f), a stand-in whose allocation fails (the
	# real server's do not) and that holds its memory until killed
	mkfifo "$T/hold" || return 1
	GMT_READY="tracing" start_tracer -f --metrics 0 -- sh -c '"'"$VK"'" --out "'"$T"'/vk.json" \
		--hold "'"$T"'/hold" & echo $! >"'"$T"'/vk.pid"; exec "$0" "$@" >"'"$T"'/server.log" 2>&1' \
		env GGML_VK_VISIBLE_DEVICES=0 "$LLAMA_DIR/llama-server" -m "$T/tiny.gguf" \
		--host 127.0.0.1 --port 0 --metrics --no-warmup -np 2 -c 2048 -ngl 99 -t 1 || return 1
	traced_server_port || return 1
	mport=$(grep -oP 'metrics at http://127\.0\.0\.1:\K[0-9]+' "$T/gmt.err")
	expect '[ -n "$mport" ] && [ -n "$SERVER_PID" ]' "the tracer's port and pid: $(head -3 "$T/gmt.err")" ||
		return 1
	start_prometheus "127.0.0.1:$mport" || return 1
	python3 "$ROOT/tests/llama/client.py" "$PORT" --clients 2 --requests 4 --tokens 16 \
		--spread 4 >"$T/client.json" || return 1
	DASH_INSTANCE='127\\.0\\.0\\.1:'$mport DASH_COMM=llama-server DASH_PID=$SERVER_PID

	# the variables' values as Grafana lists them: label_values(SELECTOR,
	# LABEL) is the label's values of the series SELECTOR matches
	for q in "instance 127.0.0.1:$mport" "comm llama-server" "pid $SERVER_PID"; do
		title=${q% *} want=${q#* }
		expr=$(jq -r --arg v "$title" '.templating.list[] | select(.name == $v) | .definition' "$d")
		[[ $expr =~ ^label_values\((.*),\ *([a-z_]+)\)$ ]] || {
			echo "# \$$title: not label_values(SELECTOR, LABEL): $expr"
			return 1
		}
		got=$(curl -s --get --data-urlencode "match[]=$(dash_expr "${BASH_REMATCH[1]}")" \
			"http://127.0.0.1:$PROM_PORT/api/v1/label/${BASH_REMATCH[2]}/values" | jq -c .data)
		expect 'jq -e --arg v "$want" "any(.[]; . == \$v)" <<<"$got" >/dev/null' \
			"\$$title ($expr) lists $want: $got" || return 1
	done

	# the client's requests and its GET of the server's /metrics, answered
	# (one it sent again, unread on a connection the server closed, may
	# count as closed unanswered); 30 s at most
	n=$(($(jq '.requests | length' "$T/client.json") + 1))
	expr=$(jq -r '.panels[] | select(.title == "Requests served") | .targets[0].expr' "$d")
	for ((i = 0; i < 150; i++)); do
		PROM_GOT=$(prom_json "$(dash_expr "$expr")" |
			jq -r '.data.result[] | select(.metric.code == "2xx") | .value[1]')
		[ "$PROM_GOT" = "$n" ] && break
		read -r -t 0.2 <> <(:) || true
	done
	expect '[ "$PROM_GOT" = "$n" ]' "Requests served, 2xx: $PROM_GOT, the client sent $n: $(prom_json \
		"gpumemtrace_http_requests_total{pid=\"$SERVER_PID\"}" | jq -c '[.data.result[] |
		[.metric.path, .metric.code, .value[1]]]')" || return 1

	# every target of every panel; the verdicts may take a judging more
	while IFS=$'\t' read -r id title ref expr; do
		q=$(dash_expr "$expr")
		for ((i = 0; i < 100; i++)); do
			ans=$(prom_json "$q")
			[ "$(jq -r '.data.result | length' <<<"$ans")" != 0 ] && break
			dash_no_data "$title" && break
			read -r -t 0.2 <> <(:) || true
		done
		expect '[ "$(jq -r .status <<<"$ans")" = success ]' \
			"panel $id ($title) $ref: $q: $(head -c 300 <<<"$ans")" || return 1
		if dash_no_data "$title"; then
			echo "# panel $id ($title) $ref: no data here, the query parses"
			continue
		fi
		# a pid's panel shows the server; the tracer's own panels, a series
		if [[ $expr == *'$pid'* ]]; then
			got=$(jq --arg p "$SERVER_PID" '[.data.result[] | select(.metric.pid == $p)] | length' <<<"$ans")
		else
			got=$(jq '.data.result | length' <<<"$ans")
		fi
		[ "${got:-0}" -gt 0 ] || missing+="$id/$ref ($title) "
		echo "# panel $id ($title) $ref: $(jq -c '[.data.result[] | (.metric | del(.pid, .comm, .cgroup, .instance, .job) |
			[.[]] | join(" ")) + " " + .value[1]][:6]' <<<"$ans")"
	done < <(jq -r '.panels[] | select(.type != "row") | .id as $id | .title as $t |
		.targets[] | [$id, $t, .refId, .expr] | @tsv' "$d")
	expect '[ -z "$missing" ]' "no data for the server in: $missing" || return 1

	# values against figures the tool did not make
	expr=$(jq -r '.panels[] | select(.title == "Tokens") | .targets[0].expr' "$d")
	for what in "prompt prompt_tokens_total" "generated tokens_predicted_total"; do
		set -- $what
		want=$(jqr ".metrics.$2" "$T/client.json")
		got=$(prom_json "$(dash_expr "$expr")" | jq -r --arg k "$1" '.data.result[] | select(.metric.kind == $k) | .value[1]')
		expect '[ -n "$want" ] && [ "$got" = "$want" ]' \
			"Tokens $1: $got, the server's /metrics says $want" || return 1
	done
	anon=$(awk '/^RssAnon:/ { print $2 * 1024 }' "/proc/$SERVER_PID/status")
	expr=$(jq -r '.panels[] | select(.title == "Memory by category") | .targets[0].expr' "$d")
	got=$(prom_json "$(dash_expr "$expr")" | jq -r '.data.result[] | select(.metric.category == "host_anon") | .value[1]')
	expect 'awk -v a="$got" -v w="$anon" "BEGIN { d = a - w; exit !(a != \"\" && d * d <= (2 * 2^20)^2) }"' \
		"Memory by category host_anon: $got bytes, /proc says RssAnon $anon" || return 1
	# what holds the Vulkan memory, by the frames of llama.cpp that made it
	expr=$(jq -r '.panels[] | select(.title == "Memory by role") | .targets[0].expr' "$d")
	got=$(prom_json "$(dash_expr "$expr")" | jq -c '[.data.result[] | select(.metric.category | startswith("vulkan")) | .metric.role] | unique')
	expect 'jq -e "any(.[]; . == \"KV cache\") and any(.[]; . == \"model weights\")" <<<"$got" >/dev/null' \
		"Memory by role, Vulkan's: $got" || return 1
	curl -s "http://127.0.0.1:$mport/metrics" >"$T/scrape.prom"
	expect 'grep -q "^gpumemtrace_role_bytes{" "$T/scrape.prom" &&
		"$PROM_DIR/promtool" check metrics <"$T/scrape.prom" >"$T/promtool.out" 2>&1' \
		'@the roles scraped, promtool check metrics: $(head -5 "$T/promtool.out")' || return 1
	got=$(promq "gpumemtrace_processes")
	expect '[ "$got" = 2 ]' "Processes traced: $got, the server and vkalloc" || return 1

	# the stand-in's failure, as it counts it, its variables put in
	for ((i = 0; i < 300; i++)); do
		[ -s "$T/vk.json" ] && break
		read -r -t 0.1 <> <(:) || true
	done
	DASH_COMM=vkalloc DASH_PID=$(cat "$T/vk.pid")
	expect 'jq -e ".fail_result != 0" "$T/vk.json" >/dev/null' "vkalloc failed once: $(cat "$T/vk.json")" ||
		return 1
	expr=$(jq -r '.panels[] | select(.title == "GPU allocation failures") | .targets[0].expr' "$d")
	prom_wait "$(dash_expr "$expr")" 1
	expect '[ "$PROM_GOT" = 1 ]' "GPU allocation failures of vkalloc: $PROM_GOT, it says 1" || return 1
	kill "$DASH_PID"
	kill "$PROM_PID"
	kill -TERM "$SERVER_PID"
	wait_tracer
}
