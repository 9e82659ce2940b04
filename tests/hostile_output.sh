# What traced processes and their clients name reaches the operator's
# terminal and JSON readers (issue 32): control characters and invalid
# UTF-8 come out as U+FFFD, in every output, live and replayed.

# valid_utf8_no_controls FILE: decodes as UTF-8 and holds no control byte
# but newline and tab
clean_text() {
	python3 - "$1" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
bad = [c for c in b if (c < 0x20 and c not in (9, 10)) or c == 0x7f]
sys.exit(1 if bad else 0)
PY
}

# a client sends a path of escape codes and invalid UTF-8 to a traced HTTP
# server: the text report, the JSON report, the events and the messages are
# clean, and the path is still there, its bad bytes as U+FFFD
test_output_escapes_what_targets_name() {
	need_root
	command -v node >/dev/null || skip "no node (the machine's Node.js runs the test server)"
	record_raw_request "$(command -v node)" \
		'b"GET /a\x1b[2J\x1b]0;owned\x07\xff\xfe\xc0\xafb HTTP/1.1\r\nHost: x\r\n\r\n"' || return 1
	expect 'grep -q "a.*\[2J" "$T/gmt.out"' "the path is in the text report: $(grep -a "/a" "$T/gmt.out" | head -2)" ||
		return 1
	expect 'clean_text "$T/gmt.out"' \
		"the text report holds control bytes: $(grep -a "/a" "$T/gmt.out" | head -2 | od -c | head -5)" ||
		return 1
	expect 'clean_text "$T/gmt.err"' "the messages hold control bytes" || return 1
	"$GMT" replay --json "$T/h.gmt" >"$T/r.json" 2>"$T/r.err"
	expect 'python3 -c "import json, sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))" "$T/r.json"' \
		"the JSON report parses: $(head -c 200 "$T/r.err")" || return 1
	expect 'jq -e "[.processes[0].requests[] | select(.path | startswith(\"/a\ufffd[2J\"))] | length == 1" "$T/r.json" >/dev/null' \
		"the path, its bad bytes as U+FFFD: $(jq -c '[.processes[0].requests[].path]' "$T/r.json")" ||
		return 1
	"$GMT" replay --events "$T/h.gmt" >"$T/events" 2>"$T/e.err"
	expect 'python3 -c "import json, sys; [json.loads(l) for l in open(sys.argv[1], encoding=\"utf-8\")]" "$T/events"' \
		"every event line parses" || return 1
	"$GMT" replay "$T/h.gmt" >"$T/replay.txt" 2>&1
	expect 'clean_text "$T/replay.txt"' "the replayed text report holds control bytes"
}
