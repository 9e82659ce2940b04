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
		echo "$line"
		case $line in
		"ok "*) pass=$((pass + 1)) ;;
		"not ok "*) failed=$((failed + 1)) failures+=("${line#not ok }") ;;
		"skip "*) skipped=$((skipped + 1)) ;;
		esac
	done
}

# unit tests: one binary with named subtests
if [ -x "$ROOT/.output/tests/unit" ]; then
	tally < <("$ROOT/.output/tests/unit" "$pattern" 2>&1)
else
	tally <<<"not ok unit - .output/tests/unit is not built: run make test"
fi

# integration tests: each function test_* in tests/integration.sh, in its own
# shell and temporary directory, with a time limit so a hang is a failure
names=$(grep -o '^test_[a-z0-9_]*' "$ROOT/tests/integration.sh")
for name in $names; do
	[ -n "$pattern" ] && [[ $name != *"$pattern"* ]] && continue
	tmp=$(mktemp -d /tmp/gmt-test.XXXXXX)
	out=$(cd "$tmp" && T=$tmp timeout -k 5 240 bash -c \
		'source "$ROOT/tests/lib.sh"; source "$ROOT/tests/integration.sh"; '"$name" 2>&1)
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
