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

# integration tests: each function test_* in tests/integration.sh, in its own
# shell and temporary directory, with a time limit so a hang is a failure
files=("$ROOT/tests/integration.sh" "$ROOT/tests/scenarios.sh" "$ROOT/tests/server.sh")
names=$(grep -ho '^test_[a-z0-9_]*' "${files[@]}")
for name in $names; do
	[ -n "$pattern" ] && [[ $name != *"$pattern"* ]] && continue
	tmp=$(mktemp -d /tmp/gmt-test.XXXXXX)
	out=$(cd "$tmp" && T=$tmp timeout -k 5 240 bash -c \
		'source "$ROOT/tests/lib.sh"; for f in "$ROOT"/tests/{integration,scenarios,server}.sh; '`
		`'do source "$f"; done; '"$name" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep '^#' || true
	case $rc in
	0) tally <<<"ok $name" ;;
	77) tally <<<"skip $name - $(printf '%s\n' "$out" | grep '^SKIP' | head -1 | cut -c6-)" ;;
	124 | 137) tally <<<"not ok $name - timed out" ;;
	*) tally <<<"not ok $name" ;;
	esac
	# leave no stray processes or files behind
	pkill -f "$tmp" 2>/dev/null
	rm -rf "$tmp"
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
