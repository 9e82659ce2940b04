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
#   GMT: the tracer (default ./gpumemtrace); GMT_ARGS: more options for it;
#   KEEP=DIR: keep the run's files there
# Needs root (the tracer), make deps, and a built llama-server
# (tools/llama-server.sh). A test gets 120 s (pytest-timeout).
# Takes about 25 minutes here (2 cores), two runs of the suite.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=/usr/bin/python3
# the suite's own Python packages, as Debian 12 has them (not make deps:
# make test does not run the suite)
pkgs="python3-pytest python3-pytest-timeout python3-requests python3-aiohttp python3-filelock
python3-numpy python3-prometheus-client python3-wget"
# shellcheck disable=SC2086 # words
missing=$(dpkg-query -W -f '${Package} ${Status}\n' $pkgs 2>/dev/null | awk '!/ installed$/ { print $1 }')
for p in $pkgs; do dpkg-query -W "$p" >/dev/null 2>&1 || missing="$missing $p"; done
# shellcheck disable=SC2086 # words
[ -z "$missing" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
gmt=${GMT:-$root/gpumemtrace}
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
	# each run from the same start: a copy of the tests and a cache of its
	# own (the suite's router tests add and delete models there)
	cp -r "$work/src/tools/server/tests" "$work/$name"
	(cd "$work/$name" &&
		SUITE_LOG=$work/$name.jsonl SUITE_MODELS=$work/models LLAMA_SERVER_BIN_PATH=$dir/llama-server \
			LLAMA_CACHE=$work/$name/cache PYTHONPATH=$root/tests/llama/suite:$root/tests/llama/suite/stubs \
			timeout 3600 "$py" -m pytest -p suite_plugin -q -p no:cacheprovider --timeout 120 \
			--junitxml="$work/$name.xml" "$@" >"$work/$name.out" 2>&1) || true
	echo "$name: $(tail -1 "$work/$name.out")"
}

suite untraced "$@"
mkfifo "$work/ready"
# shellcheck disable=SC2086 # GMT_ARGS: words
"$gmt" --watch --comm llama-server -o "$work/rec/" ${GMT_ARGS:-} >"$work/gmt.out" 2>"$work/gmt.err" &
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
