#!/bin/bash
# A long run of the trace-file fuzzer (tests/fuzz/replay.c): the reader, the
# model, the verdicts, both reports and the event printer, from a corpus of
# the field reports' scenarios and a real recording, their records
# decompressed too. It keeps going past a crash (-fork=1) and says how many
# executions, how much coverage and which crashes it found (in OUT/found).
# Usage: sudo bench/fuzz.sh [SECONDS] [OUT]   (after: make test; default 3600 s)
#   JOBS=N runs N fuzzing processes at once (libFuzzer's -fork=N; default 1).
#   CORPUS=DIR starts from a corpus kept from an earlier run.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-3600}
out=${2:-$(mktemp -d /tmp/gmt-fuzz.XXXXXX)}
mkdir -p "$out/found"
for s in host-cache fixed-step-cache fixed-step-leak eviction graph-growth startup-oom steady \
	warmup noisy cache-fills eviction-back; do
	.output/gmt-scenario "$s" "$out/$s.gmt" 1 >/dev/null
done
./gpumemtrace record -o "$out/real.gmt" -q -- .output/tests/workload --steps 4 --step-mib 2 \
	--out /dev/null >/dev/null
python3 tests/fuzz/corpus.py "$out/corpus" "$out"/*.gmt tests/fuzz/regressions/*
[ -z "${CORPUS:-}" ] || cp -n "$CORPUS"/* "$out/corpus/"
cd "$out/found"
"$OLDPWD/.output/tests/fuzz-replay" -max_len=4096 -fork="${JOBS:-1}" -ignore_crashes=1 -ignore_ooms=1 \
	-ignore_timeouts=1 -max_total_time="$secs" "$out/corpus" >"$out/fuzz.log" 2>&1 || true
echo "$(grep -o '^#[0-9]*: cov: [0-9]* ft: [0-9]* corp: [0-9]* exec/s [0-9]* oom/timeout/crash: [0-9/]*' \
	"$out/fuzz.log" | tail -1)"
echo "crashes: $(ls "$out/found" | grep -c '^crash-' || true) (in $out/found)"
