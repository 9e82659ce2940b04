#!/bin/bash
# Real CUDA, on a machine with an NVIDIA GPU (CI has none): gpumemtrace -p on
#  1. PyTorch with the caching allocator off: every tensor a cudaMalloc,
#  2. PyTorch with expandable segments: the allocator grows by cuMemCreate/Map,
#  3. a CUDA C program (vmm_graphs.cu): runtime and driver allocations, VMM,
#     graph executables, a failure;
# and checks the counts and bytes against what each program did.
# Usage: sudo tests/cuda/run.sh [GPUMEMTRACE]   (needs nvcc and python3 with torch)
set -u
cd "$(dirname "$0")/../.."
GMT=$(realpath "${1:-./gpumemtrace}")
tmp=$(mktemp -d)
pass=0 failed=0
trap 'rm -rf "$tmp"' EXIT

# case NAME CMD...: CMD gets READY GO OUT HOLD; it is traced from GO to HOLD
case_() {
	local name=$1 pid gmt line
	shift
	rm -f "$tmp"/{ready,go,out,hold,err} "$tmp/$name".*
	mkfifo "$tmp/ready" "$tmp/go" "$tmp/out" "$tmp/hold" "$tmp/err"
	"$@" "$tmp/ready" "$tmp/go" "$tmp/out" "$tmp/hold" &
	pid=$!
	read -r _ <"$tmp/ready"
	"$GMT" record -o "$tmp/$name.gmt" --json -p "$pid" >"$tmp/$name.json" 2>"$tmp/err" &
	gmt=$!
	exec 3<"$tmp/err"
	while read -r line <&3; do
		echo "    $line"
		[[ $line == *"tracing pid"* ]] && break
	done
	cat <&3 >/dev/null &
	echo go >"$tmp/go"
	cat "$tmp/out" >"$tmp/$name.expected"
	kill -INT "$gmt"
	wait "$gmt"
	exec 3<&-
	echo go >"$tmp/hold"
	wait "$pid"
	echo "== $name"
	if python3 tests/cuda/compare.py "$tmp/$name.json" "$tmp/$name.expected"; then
		pass=$((pass + 1))
	else
		failed=$((failed + 1))
	fi
	"$GMT" replay "$tmp/$name.gmt" | sed -n '/GPU devices/,/^  threads/p;/GPU API calls/,/^  threads/p' |
		head -60
}

echo "gpumemtrace on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), kernel $(uname -r)"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 case_ torch_nocache python3 tests/cuda/torch_allocs.py
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True case_ torch_expandable \
	python3 tests/cuda/torch_allocs.py
if nvcc -O1 -g -Xcompiler -fno-omit-frame-pointer -o "$tmp/vmm_graphs" tests/cuda/vmm_graphs.cu \
	-lcuda; then
	case_ cuda_c "$tmp/vmm_graphs"
else
	echo "== cuda_c: nvcc failed"
	failed=$((failed + 1))
fi
echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
