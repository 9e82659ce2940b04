#!/bin/bash
# Packs the trace-file fuzzer to run on another Linux machine with more
# cores (the H200 host's 16, bench/results.md): the binary built here, its
# shared libraries and loader beside it (the other machine's glibc may be
# older), a corpus, and DIR/run.sh [SECONDS], which fuzzes with one job per
# core and leaves fuzz.log, found/ and corpus.tgz in $OUT (or the current
# folder). Needs patchelf (apt-get install patchelf).
# Usage: bench/fuzz-bundle.sh DIR [CORPUS]   (after: make test)
set -eu
cd "$(dirname "$0")/.."
dir=$1
corpus=${2:-}
bin=.output/tests/fuzz-replay
[ -x "$bin" ] || { echo "fuzz-bundle: $bin is not built: run make test" >&2; exit 1; }
command -v patchelf >/dev/null || { echo "fuzz-bundle: needs patchelf" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir/lib" "$dir/corpus"
cp "$bin" "$dir/"
for l in $(ldd "$bin" | grep -o '/[^ ]*'); do cp -L "$l" "$dir/lib/"; done
# the loader's path must be absolute: run.sh puts the libraries there
patchelf --set-interpreter /tmp/gmtfz/ld-linux-x86-64.so.2 --set-rpath /tmp/gmtfz "$dir/fuzz-replay"
if [ -n "$corpus" ]; then
	cp "$corpus"/* "$dir/corpus/"
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	for s in host-cache fixed-step-cache fixed-step-leak eviction graph-growth startup-oom steady \
		warmup noisy cache-fills eviction-back; do
		.output/gmt-scenario "$s" "$tmp/$s.gmt" 1 >/dev/null
	done
	python3 tests/fuzz/corpus.py "$dir/corpus" "$tmp"/*.gmt tests/fuzz/regressions/*
fi
cat >"$dir/run.sh" <<'RUN'
#!/bin/bash
secs=${1:-540}
d=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD}
rm -rf /tmp/gmtfz /tmp/fzcorpus && cp -r "$d/lib" /tmp/gmtfz && cp -r "$d/corpus" /tmp/fzcorpus
mkdir -p "$out/found" && cd "$out/found"
"$d/fuzz-replay" -max_len=4096 -fork="$(nproc)" -ignore_crashes=1 -ignore_ooms=1 \
	-ignore_timeouts=1 -max_total_time="$secs" /tmp/fzcorpus >"$out/fuzz.log" 2>&1
grep -o '^#[0-9]*: cov: [0-9]* ft: [0-9]* corp: [0-9]* exec/s [0-9]* oom/timeout/crash: [0-9/]*' \
	"$out/fuzz.log" | tail -1
echo "crashes: $(ls | grep -c '^crash-' || true)"
tar czf "$out/corpus.tgz" -C /tmp fzcorpus
RUN
chmod +x "$dir/run.sh"
echo "fuzz-bundle: $(du -sh "$dir" | cut -f1) in $dir; run $dir/run.sh SECONDS there"
