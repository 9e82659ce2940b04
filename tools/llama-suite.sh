#!/bin/bash
# llama.cpp's own server test suite (tools/server/tests of the source that
# node-llama-cpp's bundle ships) on this machine's tiny models, twice: once
# untraced, once with `gpumemtrace --watch --comm llama-server -o DIR/`
# attached for the whole run. Then tests/llama/suite/judge.py holds the
# traced run against the suite's own account: each test's outcome the same
# both times, every server it started recorded, every request its clients
# got an answer to counted (method and path). Models are written at run
# time (tools/tiny-gguf.mjs --ascii), never downloaded: tests whose answers
# need real weights fail, the same both times; those needing the OpenAI
# client, which Debian 12 does not package, are skipped.
#   sudo tools/llama-suite.sh [PYTEST ARGS...]   (default: unit/, the whole suite)
#   GMT_ARGS: more options for the tracer; KEEP=DIR: keep the run's files there
# Needs root (the tracer), make deps (pytest and the suite's packages) and a
# built llama-server (tools/llama-server.sh). Takes about 10 minutes here.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=/usr/bin/python3
gmt=$root/gpumemtrace
dir=$(tools/llama-server.sh)
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
gpid=
trap '[ -n "$gpid" ] && kill -INT $gpid 2>/dev/null; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
[ $# -gt 0 ] || set -- unit/

git -c advice.detachedHead=false clone -q "$root/tests/e2e/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$work/src"
mkdir -p "$work/models" "$work/rec"
node tools/tiny-gguf.mjs "$work/models/tiny.gguf" --ascii >/dev/null

suite() { # suite NAME ARGS...: one run of the suite; its JUnit XML in $work/NAME.xml
	local name=$1
	shift
	(cd "$work/src/tools/server/tests" &&
		SUITE_LOG=$work/$name.jsonl SUITE_MODELS=$work/models LLAMA_SERVER_BIN_PATH=$dir/llama-server \
			PYTHONPATH=$root/tests/llama/suite:$root/tests/llama/suite/stubs \
			timeout 1800 "$py" -m pytest -p suite_plugin -q -p no:cacheprovider \
			--junitxml="$work/$name.xml" "$@" >"$work/$name.out" 2>&1) || true
	echo "$name: $(tail -1 "$work/$name.out")"
}

suite untraced "$@"
mkfifo "$work/ready"
# shellcheck disable=SC2086 # GMT_ARGS: words
"$gmt" --watch --comm llama-server -o "$work/rec/" ${GMT_ARGS:-} 2>"$work/gmt.err" &
gpid=$!
# the tracer says when it traces; the suite starts after
for _ in $(seq 300); do
	grep -q "watching\|tracing" "$work/gmt.err" && break
	kill -0 $gpid 2>/dev/null || { cat "$work/gmt.err"; exit 1; }
	read -r -t 0.1 <>"$work/ready" || true
done
suite traced "$@"
kill -INT $gpid
wait $gpid || true
gpid=
echo "recordings: $(find "$work/rec" -name '*.gmt' | wc -l); tracer's last lines:"
tail -3 "$work/gmt.err"
"$py" tests/llama/suite/judge.py "$work/untraced.xml" "$work/traced.xml" "$work/traced.jsonl" \
	"$work/rec" "$gmt"
