#!/bin/bash
# bench/llama-server.sh on a machine with an NVIDIA GPU: llama-server built
# with CUDA (tools/cuda-build.sh), all layers on the GPU, the tiny model
# (embd 256, 4 layers: about 3,000 tokens/s on an H100 or H200, where a
# trap a token shows most). Runs the bench with each GMT_ARGS given, one
# after the other on the same build.
# Usage: sudo bench/cuda-llama-server.sh SRC.tar.xz MODEL.gguf PAIRS "GMT_ARGS" ...
#   (needs .output/bench/floor and its .bpf.o: make bench; bpftool and jq
#   for the per-program figures; the tables go to standard output)
set -eu
cd "$(dirname "$0")/.."
src=$1 model=$(realpath "$2") pairs=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=$(tools/cuda-build.sh "$src" "$work")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
for args in "$@"; do
	echo "== GMT_ARGS='$args'"
	LLAMA_DIR=$dir MODEL=$model GMT_ARGS=$args bench/llama-server.sh "$pairs" 8 128 -- -ngl 99
done
