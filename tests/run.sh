#!/bin/bash
# Runs every test and ends with "N passed, N failed, N skipped".
#   tests/run.sh [PATTERN]   only the tests whose name contains PATTERN
# Each test prints "ok NAME", "not ok NAME" (after "# " lines saying why) or
# "skip NAME - why". Integration tests need root (CI runs as root).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT
pattern=${1:-}
pass=0 failed=0 skipped=0
failures=()

tally() {
	local line
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		echo "$line"
		case $line in
		"ok "*) pass=$((pass + 1)) ;;
		"not ok "*) failed=$((failed + 1)) failures+=("${line#not ok }") ;;
		"skip "*) skipped=$((skipped + 1)) ;;
		esac
	done
}

# unit tests: one binary with named subtests, then the same binary built with
# AddressSanitizer and UBSan; a crash that cuts the list short is a failure
run_unit() { # run_unit BINARY TAG: subtests become unit_TAGname
	local out rc
	if [ ! -x "$1" ]; then
		tally <<<"not ok unit_$2 - $1 is not built: run make test"
		return
	fi
	out=$("$1" "$pattern" 2>&1)
	rc=$?
	tally < <(printf '%s\n' "$out" | sed "s/^\(not \)\{0,1\}ok unit_/&$2/")
	if [ $rc -ne 0 ] && ! grep -q '^not ok' <<<"$out"; then
		printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
		tally <<<"not ok unit_$2 - exited with status $rc"
	fi
}
run_unit "$ROOT/.output/tests/unit" ""
run_unit "$ROOT/.output/tests/unit-asan" asan_

# integration tests: each function test_* of the topic files below, in its
# own shell and temporary directory, with a time limit so a hang is a failure
# GMT_TEST_FILES, GMT_TEST_TIMEOUT: other test files and the time limit of a
# test that names none of its own (the runner's own tests use them)
if [ -n "${GMT_TEST_FILES:-}" ]; then
	read -r -a files <<<"$GMT_TEST_FILES"
else
	# a file a topic (docs/testing.md); tests/hostile_*.sh: what a hostile
	# target or client tries (issue 32)
	files=()
	for f in project process crash tracefile view gpu kernels arm64 requests scenarios server export \
		service discovery dashboard deploy container package profile html unified slow slow_vm holders; do
		files+=("$ROOT/tests/$f.sh")
	done
	for f in "$ROOT"/tests/hostile_*.sh; do [ -e "$f" ] && files+=("$f"); done
fi
export GMT_TEST_FILES="${files[*]}"
default_limit=${GMT_TEST_TIMEOUT:-240}
times=$ROOT/.output/test-seconds
mkdir -p "${times%/*}" && : >"$times"
names=$(sed -n 's/^\(test_[a-z0-9_]*\)() {$/\1/p' "${files[@]}")
# a test that needs longer says so on the line before it: "# time limit: N s"
# (lavapipe's image runs: 24 requests of about 8 s of prompt each)
limit_of() {
	local n
	n=$(cat "${files[@]}" | sed -n "/^# time limit: [0-9]* s\$/{N;s/^# time limit: \([0-9]*\) s\n$1() {\$/\1/p;}")
	echo "${n:-$default_limit}"
}
# Each test runs in a cgroup of its own where the kernel has cgroup v2, so
# that everything it started is killed when it ends, pass or fail, however
# it detached; its output goes to a file, which no leftover can hold open.
cg_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
end_test() { # end_test CGROUP TMP: kill what the test left, then its files
	local i
	if [ -n "$1" ] && [ -e "$1/cgroup.kill" ]; then
		echo 1 >"$1/cgroup.kill"
		for ((i = 0; i < 50; i++)); do
			[ -z "$(cat "$1/cgroup.procs" 2>/dev/null)" ] && break
			read -r -t 0.1 <> <(:) || true
		done
		rmdir "$1" 2>/dev/null
	fi
	pkill -f "$2" 2>/dev/null
	# a swap file the test turned on (tests/slow.sh) goes off before its file
	awk -v d="$2/" 'index($1, d) == 1 { print $1 }' /proc/swaps | xargs -r -n1 swapoff 2>/dev/null
	rm -rf "$2" "$2.out"
}

for name in $names; do
	[ -n "$pattern" ] && [[ $name != *"$pattern"* ]] && continue
	tmp=$(mktemp -d /tmp/gmt-test.XXXXXX)
	started=$SECONDS
	limit=$(limit_of "$name")
	cg=""
	if [ -n "$cg_root" ] && mkdir "$cg_root/${tmp##*/}" 2>/dev/null; then
		cg=$cg_root/${tmp##*/}
	fi
	# a test about to time out: what its processes are waiting in, for
	# the failure's words (a timer, not a wait for anything)
	(
		sleep $((limit - 5)) && ps -eo pid,stat,wchan:24,etime,args | grep -F "$tmp" |
			grep -v grep | cut -c1-220 >"$tmp.hang"
	) </dev/null >/dev/null 2>&1 &
	watchdog=$!
	(cd "$tmp" && T=$tmp CG=$cg timeout -k 5 "$limit" bash -c \
		'[ -z "$CG" ] || echo $$ >"$CG/cgroup.procs"; source "$ROOT/tests/lib.sh"; '`
		`'for f in $GMT_TEST_FILES; do source "$f"; done; '"$name" >"$tmp.out" 2>&1 </dev/null)
	rc=$?
	pkill -P "$watchdog" 2>/dev/null
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "# still running $((limit - 5)) s in (pid, state, waiting in, for, command):" >>"$tmp.out"
		sed 's/^/#   /' "$tmp.hang" >>"$tmp.out" 2>/dev/null
	fi
	rm -f "$tmp.hang"
	# an expectation that failed where the test did not stop for it
	if [ "$rc" = 0 ] && [ -e "$tmp/.expect-failed" ]; then
		echo "# an expectation above failed, though the test went on" >>"$tmp.out"
		rc=1
	fi
	out=$(cat "$tmp.out")
	printf '%s\n' "$out" | grep '^#' || true
	# a failure's own words: the last lines it printed unmarked (a command's
	# error), where it said nothing marked itself
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && ! grep -q '^#' <<<"$out"; then
		printf '%s\n' "$out" | grep -v '^\s*$' | tail -8 | sed 's/^/#   /'
	fi
	case $rc in
	0) tally <<<"ok $name" ;;
	77) tally <<<"skip $name - $(printf '%s\n' "$out" | grep '^SKIP' | head -1 | cut -c6-)" ;;
	124 | 137) tally <<<"not ok $name - timed out" ;;
	*) tally <<<"not ok $name" ;;
	esac
	# GMT_TEST_KEEP=DIR: a failed test's files, kept for a look
	if [ -n "${GMT_TEST_KEEP:-}" ] && [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		mkdir -p "$GMT_TEST_KEEP" && cp -a "$tmp" "$GMT_TEST_KEEP/$name.$$" 2>/dev/null
	fi
	end_test "$cg" "$tmp"
	# each test's seconds, for finding where the suite's time goes
	echo "$((SECONDS - started)) $name" >>"$times"
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
