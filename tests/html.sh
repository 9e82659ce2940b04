# replay --html: the page opened in Debian's headless Chromium, its figures
# read back from the DOM it drew and held against the JSON report of the
# same recording (tests/html_check.py); hostile names inert; a long run's
# page small (docs/html.md).
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

need_chromium() {
	command -v chromium >/dev/null || skip "no chromium (make deps installs it)"
}

# chromium_run ARGS...: headless, its profile and home in $T, its own
# console on $T/chromium.err, bounded in time
chromium_run() {
	HOME=$T timeout 60 chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chromium" --enable-logging=stderr --v=0 "$@" 2>>"$T/chromium.err"
}

# html_open PAGE: its DOM as drawn in $T/dom.html; no message from its
# console (every console line of the page is an error or a log of its own)
html_open() {
	: >"$T/chromium.err"
	chromium_run --dump-dom "file://$1" >"$T/dom.html" || {
		echo "# chromium failed: $(tail -3 "$T/chromium.err")"
		return 1
	}
	expect '! grep -q "CONSOLE" "$T/chromium.err"' \
		"no console messages: $(grep CONSOLE "$T/chromium.err" | head -5)" || return 1
	expect 'grep -q "data-rendered=\"ok\"" "$T/dom.html"' \
		"the page drew itself: $(grep -o "data-error=\"[^\"]*\"" "$T/dom.html")"
}

# html_same REPORT: the drawn page's figures are the report's
html_same() {
	python3 "$ROOT/tests/html_check.py" "$T/dom.html" "$1"
}

# the page's own file: 0600, no reference to anything outside it
html_self_contained() {
	local f=$1
	expect '[ "$(stat -c %a "$f")" = 600 ]' "mode 0600: $(stat -c %a "$f")" || return 1
	# (the SVG namespace is a name, never fetched)
	expect '! grep -Eio "(src|href)=|https?://[^\"]*|@import|url\(" "$f" | grep -qv "^http://www.w3.org/2000/svg$"' \
		"nothing fetched: $(grep -Eio "(src|href)=[^ ]*|https?://[^ ]*" "$f" | head -3)"
}

# The real llama-server, its prompt cache filling (as
# test_pprof_llama_server_prompt_cache_role): verdicts, host heap and
# requests with their decode rates as the report's; a screenshot taken
test_html_llama_server_is_the_reports() {
	need_llama_server || return 1
	need_chromium
	TINY_ARGS=$CACHE_MODEL LLAMA_ARG_CACHE_RAM=40 start_server -np 1 -c 4096 -t 1 || return 1
	start_tracer record -o "$T/s.gmt" -p "$SERVER_PID" || return 1
	drive_anon --requests 8 --tokens 4 --spread 0 --words 200 --stream no || return 1
	"$GMT" replay --json "$T/s.gmt" >"$T/r.json" || return 1
	"$GMT" replay -q --html "$T/s.html" "$T/s.gmt" || return 1
	html_self_contained "$T/s.html" || return 1
	html_open "$T/s.html" || return 1
	html_same "$T/r.json" || return 1
	expect '[ "$(jq "[.processes[0].requests[] | select(.decode_tokens_per_s != null)] | length" "$T/r.json")" -ge 8 ]' \
		"rates from the server to compare" || return 1
	expect 'grep -q "prompt cache" "$T/dom.html"' "the prompt cache named as a role" || return 1
	chromium_run --hide-scrollbars --window-size=1280,2400 --screenshot="$T/s.png" \
		"file://$T/s.html" >/dev/null || return 1
	expect '[ "$(head -c 8 "$T/s.png" | od -An -tx1 | tr -d " ")" = 89504e470d0a1a0a ]' \
		"a PNG screenshot" || return 1
	# GMT_HTML_SHOT=PATH keeps it (docs/images/report.png is one)
	[ -z "${GMT_HTML_SHOT:-}" ] || cp "$T/s.png" "$GMT_HTML_SHOT"
	echo "# page $(stat -c %s "$T/s.html") bytes for $("$GMT" replay --events "$T/s.gmt" | wc -l) events"
}

# A leak stand-in: node-llama-cpp's server keeping a llama context a
# request (as test_pprof_leak_growth_has_the_leak_on_top), on Vulkan
# (lavapipe): the leak verdict, the Vulkan bytes in the table and in the
# flame graph, the requests, all as the report's
test_html_leak_stand_in_is_the_reports() {
	need_root
	need_lavapipe
	need_llama
	need_chromium
	llama_variant leak 6 || return 1
	"$GMT" replay -q --html "$T/v.html" "$T/v.gmt" || return 1
	html_open "$T/v.html" || return 1
	html_same "$T/r.json" || return 1
	expect 'grep -q "data-kind=\"leak\" data-category=\"vulkan_device\"" "$T/dom.html"' \
		"the leak shown: $(jq -c '[.findings[] | [.kind, .category]]' "$T/r.json")"
}

# A server named by hostile strings (its comm, its command line, a
# request's path): the page holds them as text, never as markup; two
# scripts, its own, and no element they name
test_html_hostile_names_are_inert() {
	need_root
	need_chromium
	command -v node >/dev/null || skip "no node (the machine's Node.js runs the test server)"
	local evil='</script><img src=x onerror=alert(1)>"'"'"'&<!--'
	ln -s "$(command -v node)" "$T/<svg onload=1>"
	record_raw_request "$T/<svg onload=1>" \
		'b"GET /</script><img/src=x/onerror=alert(2)>\xe2\x80\xa8 HTTP/1.1\r\nHost: x\r\n\r\n"' "$evil" ||
		return 1
	"$GMT" replay -q --html "$T/h.html" "$T/h.gmt" || return 1
	expect 'grep -q "onerror=alert(2)" "$T/h.html" && ! grep -q "<img\|<svg onload" "$T/h.html"' \
		"the raw page holds the names, as no markup: $(grep -o ".\{20\}onerror=alert.\{10\}" "$T/h.html" | head -3)" ||
		return 1
	expect '! LC_ALL=C grep -qP "\\xe2\\x80\\xa8" "$T/h.html"' "U+2028 escaped" || return 1
	html_open "$T/h.html" || return 1
	expect '[ "$(grep -o "<script" "$T/dom.html" | wc -l)" = 2 ] && ! grep -q "<img\|<svg onload" "$T/dom.html"' \
		"two scripts and no element from the recording: $(grep -o "<script[^>]*>\|<img[^>]*>" "$T/dom.html" | head)" ||
		return 1
	# the names are there, as text (the DOM writes < as &lt;)
	expect 'grep -q "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" "$T/dom.html"' \
		"the command line shown as text" || return 1
	expect 'grep -q "&lt;svg onload=1&gt;" "$T/dom.html"' "the comm shown as text" || return 1
	expect 'grep -q "/&lt;/script&gt;&lt;img/src=x/onerror=alert(2)&gt;" "$T/dom.html"' \
		"the path shown as text: $(grep -o "GET /[^<]*" "$T/dom.html" | head -3)"
}

# A long recording (a scenario of a thousand requests): the page stays
# small, its series and request rows bounded and saying so
test_html_large_recording_stays_small() {
	need_chromium
	local events size
	"$ROOT/.output/gmt-scenario" graph-sweep "$T/g.gmt" 1 || return 1
	"$GMT" replay --json "$T/g.gmt" >"$T/r.json" || return 1
	"$GMT" replay -q --html "$T/g.html" "$T/g.gmt" || return 1
	events=$("$GMT" replay --events "$T/g.gmt" | wc -l)
	size=$(stat -c %s "$T/g.html")
	echo "# page $size bytes for $events events, $(jq '.processes[0].requests | length' "$T/r.json") requests"
	expect '(( events > 20000 && size < 400000 ))' "$size bytes for $events events" || return 1
	html_open "$T/g.html" || return 1
	html_same "$T/r.json" || return 1
	expect 'grep -q "data-points=\"300\"" "$T/dom.html" && grep -q "an even share of 1000 shown" "$T/dom.html"' \
		"downsampled, and says so: $(grep -o "[0-9]* requests[^<]*" "$T/dom.html" | head -2)"
}
