#!/bin/bash
# The real llama-server with CUDA, on a machine with an NVIDIA GPU (CI has
# none): built from the same llama.cpp source as tools/llama-server.sh (a
# tarball of node-llama-cpp's bundle, since such a machine may have no git or
# npm registry), then traced with -p while tests/llama/client.py drives it,
# and judged by tests/llama/compare.py against the server's own figures:
#   1. one request at a time, every endpoint, streaming and not;
#   2. four slots and four clients at once;
#   3. the default (CUDA graphs on) against GGML_CUDA_DISABLE_GRAPHS=1;
#   4. a context too big for the GPU (--fit off): the first verdict is the
#      failing cudaMalloc, then the exit;
#   5. steady servers (prompt cache off; graphs on and off; one slot and
#      four): no leak and no cache verdict, whatever else moves;
#   6. the prompt cache at its default --cache-ram (8 GiB), 15 requests: the
#      cache filling, not a leak, against the server's log.
# Usage: sudo tests/cuda/llama-server.sh SRC.tar.gz MODEL.gguf [GPUMEMTRACE]
#   CASES="cuda_cache_default ...": only those cases; VMODEL and MMPROJ (absolute
#   paths): the pair for the image cases, IMAGES their requests (1000, then
#   50 more after an idle 16 s)
#   (needs nvcc, cmake, ninja and python3; the reports and tables end up in
#   $OUT/cuda-llama-server.tar.gz, or /tmp without OUT)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export ROOT
src=$(realpath "$1") model=$(realpath "$2")
GMT=$(realpath "${3:-$ROOT/gpumemtrace}")
work=$(mktemp -d)
out=$work/results
mkdir -p "$out"
pass=0 failed=0
# the reports, the clients' figures and the tables, in one file under $OUT
# (the device machine's folder that comes back) or /tmp
trap 'pkill -x llama-server; tar -czf "${OUT:-/tmp}/cuda-llama-server.tar.gz" -C "$work" results;
	rm -rf "$work"' EXIT

build() {
	echo "== building llama-server with CUDA ($(nproc) jobs)"
	LLAMA_DIR=$(LOGDIR=$out "$ROOT/tools/cuda-build.sh" "$src" "$work") || exit 1
}
# LLAMA_DIR: a build to use instead (a dry run of this script without a GPU)
[ -n "${LLAMA_DIR:-}" ] || build

# the helpers of the tests here: start_server, drive, compare, start_tracer
source "$ROOT/tests/lib.sh"
source "$ROOT/tests/server.sh"
need_llama_server() { :; }

# one case in a folder of its own; its report and tables are kept in $out
case_() {
	local name=$1 rc
	shift
	[ -z "${CASES:-}" ] || [[ " $CASES " == *" $name "* ]] || return 0
	T=$work/$name
	mkdir -p "$T"
	cp "$model" "$T/tiny.gguf"
	echo "== $name"
	(cd "$T" && "$@")
	rc=$?
	cp "$T/gmt.out" "$out/$name.json" 2>/dev/null
	cp "$T/client.json" "$out/$name.client.json" 2>/dev/null
	pkill -x llama-server
	if [ $rc = 0 ]; then
		pass=$((pass + 1))
		echo "ok $name"
	else
		failed=$((failed + 1))
		echo "not ok $name"
	fi
}

# what compare.py prints, whole: the per-request table for the note
table() {
	python3 "$ROOT/tests/llama/compare.py" "$T/gmt.out" "$T/client.json" "$@" | tee "$T/table"
	cp "$T/table" "$out/$(basename "$T").table"
	return "${PIPESTATUS[0]}"
}

one_at_a_time() {
	start_server -np 1 -c 2048 -ngl 99 "$@" || return 1
	start_tracer --json -p "$SERVER_PID" || return 1
	drive --clients 1 --requests 12 --tokens 64 || return 1
	table
}

concurrent() {
	start_server -np 4 -c 8192 -ngl 99 || return 1
	start_tracer --json -p "$SERVER_PID" || return 1
	drive --clients 4 --requests 4 --tokens 64 --spread 8 --words 40 || return 1
	table
}

startup_oom() {
	"$GMT" --json -- "$LLAMA_DIR/llama-server" -m "$T/tiny.gguf" --port 0 --no-warmup -np 1 \
		-c 80000000 -ngl 99 --fit off >"$T/gmt.out" 2>"$T/server.log"
	grep -i "out of memory\|failed to allocate" "$T/server.log" | head -3
	python3 - "$T/gmt.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = r["findings"]
print("verdicts:", [(x["kind"], x.get("call"), x.get("result"), x.get("size_bytes"),
                     x.get("exit_status"), x.get("signal")) for x in f][:4])
print("first:", f[0]["message"][:600] if f else None)
fails = r["processes"][0]["gpu"]["failures"]
print("stack of the failing call:", [s["symbol"] for s in fails[0]["stack"]] if fails else None)
print("live by role:", [(s.get("role"), s["bytes"]) for s in f[0]["stacks"]] if f else None)
ok = f and f[0]["kind"] == "alloc_failure" and any(x["kind"] == "exit" for x in f)
# unwound by the call frame information: the failing call is the KV cache's
ok = ok and "for the KV cache" in f[0]["message"]
sys.exit(0 if ok else 1)
PY
}

# a server with nothing to keep: its verdicts, and none a leak or a cache
steady() {
	local np=$1
	shift
	start_server -np "$np" -c $((2048 * np)) -ngl 99 --cache-ram 0 "$@" || return 1
	start_tracer --json -p "$SERVER_PID" || return 1
	drive --clients "$np" --requests $((16 / np)) --tokens 32 --spread 4 --words 60 || return 1
	python3 - "$T/gmt.out" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
print("verdicts:", [(x["kind"], x["category"]) for x in f])
for x in f:
    if x["kind"] != "steady":
        print("  %s %s: %s" % (x["kind"], x["category"], x["message"][:400]))
sys.exit(1 if any(x["kind"] in ("leak", "bounded_cache") for x in f) else 0)
PY
}

# the prompt cache at its default limit, far off: filling, not a leak; the
# entries and their size against the server's log (-lv 4)
cache_default() {
	start_server -np 1 -c 4096 -ngl 99 -lv 4 || return 1
	start_tracer --json -p "$SERVER_PID" || return 1
	drive --clients 1 --requests 15 --tokens 4 --spread 0 --words 200 --stream no || return 1
	grep 'cache state:' "$T/server.log" | tail -1
	python3 - "$T/gmt.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = [x for x in r["findings"] if x["category"] == "host_anon"]
print("verdicts:", [(x["kind"], x["category"], x["reason"]) for x in r["findings"]])
print("host heap:", f[0]["message"][:900] if f else None)
print("state copies:", r["processes"][0].get("llama_state"))
sys.exit(0 if f and f[0]["kind"] == "bounded_cache" and
         f[0]["reason"] in ("cache_filling", "role_filling") else 1)
PY
}

# report 4: image requests to a Gemma-3-style pair (MMPROJ: its projector,
# written beside MODEL by tools/tiny-gguf.mjs --arch gemma3 / gemma3-mmproj),
# CUDA graphs as set: every series's verdict, NVML's included, and per
# request the device memory NVML and the API saw and the live graph
# executables
images() {
	local c=(python3 "$ROOT/tests/llama/client.py")
	[ -n "${MMPROJ:-}" ] && [ -n "${VMODEL:-}" ] || { echo "MMPROJ and VMODEL unset"; return 1; }
	cp "$(realpath "$VMODEL")" "$T/tiny.gguf"
	start_server --mmproj "$(realpath "$MMPROJ")" -np 1 -c 4096 -ngl 99 || return 1
	# NVML is read once an interval: often enough for a shape in a short loop
	# recorded too: replayed here with later analysis, the run needs no GPU
	start_tracer record -o "$out/$(basename "$T").gmt" --json -i 0.1 -p "$SERVER_PID" || return 1
	"${c[@]}" "$PORT" --clients 1 --requests "${IMAGES:-1000}" --tokens 16 \
		--paths /v1/chat/completions --images --stream no >"$T/client1.json" || return 1
	# ggml-cuda sweeps out graphs unused for 10 s, at most every 5 s, when it
	# runs one: idle past that, then more requests (a loop's pause)
	sleep 16
	"${c[@]}" "$PORT" --clients 1 --requests 50 --tokens 16 \
		--paths /v1/chat/completions --images --stream no >"$T/client2.json" || return 1
	# one client file of both loops (the device machine may have no jq)
	python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
b["requests"] = a["requests"] + b["requests"]
json.dump(b, sys.stdout)' "$T/client1.json" "$T/client2.json" >"$T/client.json"
	stop_server
	wait_tracer
	table --no-metrics | tail -3
	python3 - "$T/gmt.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["processes"][0]
f = [x for x in r["findings"] if x["pid"] == p["pid"]]
print("verdicts:", [(x["kind"], x["category"], x["reason"]) for x in f])
for x in f:
    if x["category"] in ("nvml_device", "cuda_device", "cuda_graphs") or x["kind"] != "steady":
        print("  %s %s: %s" % (x["kind"], x["category"], x["message"][:700]))
reqs = [q for q in p["requests"] if q["path"] == "/v1/chat/completions"]
cats = sorted({k for q in reqs for k in (q.get("memory") or {})})
print("#\tprompt\timage\tgen\tenc_ms\t" + "\t".join(cats))
def lv(q, k):
    m = (q.get("memory") or {}).get(k)
    return "-" if m is None else str(m["level"])
for i, q in enumerate(reqs, 1):
    if i <= 3 or i % 100 == 0 or i > len(reqs) - 3 or (i > 1000 and i < 1004):
        print("%d\t%s\t%s\t%s\t%.1f\t%s" % (i, q["prompt_tokens"], q["image_tokens"],
              q["generated_tokens"], 1000 * (q.get("image_encode_s") or 0),
              "\t".join(lv(q, k) for k in cats)))
# every series a verdict, NVML's included
missing = [k for k in cats + ["nvml_device"] if not any(x["category"] == k for x in f)]
print("series with no verdict:", missing)
sys.exit(1 if missing else 0)
PY
}

case_ cuda_cache_default cache_default
case_ cuda_images_graphs_on images
GGML_CUDA_DISABLE_GRAPHS=1 case_ cuda_images_graphs_off images
case_ cuda_steady_graphs_on steady 1
GGML_CUDA_DISABLE_GRAPHS=1 case_ cuda_steady_graphs_off steady 1
case_ cuda_steady_four_slots steady 4
case_ cuda_one_at_a_time one_at_a_time
case_ cuda_concurrent_slots concurrent
GGML_CUDA_DISABLE_GRAPHS=1 case_ cuda_graphs_off one_at_a_time
case_ cuda_startup_out_of_memory startup_oom
echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
