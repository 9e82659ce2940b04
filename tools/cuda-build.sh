#!/bin/bash
# llama-server with CUDA, built from a tarball of the llama.cpp source that
# tools/llama-server.sh builds for the CPU (node-llama-cpp's bundle), on a
# machine with nvcc, cmake and ninja: what tests/cuda/llama-server.sh and
# bench/cuda-llama-server.sh run. Prints the folder of the binaries; the
# logs go to LOGDIR (default: the build folder).
# Usage: tools/cuda-build.sh SRC.tar.xz BUILD_DIR
set -eu
src=$(realpath "$1")
work=$2
logs=${LOGDIR:-$work}
mkdir -p "$work/src" "$logs"
tar -xf "$src" -C "$work/src"
t0=$(date +%s)
if ! cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
	-DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=ON -DGGML_NATIVE=OFF -DLLAMA_OPENSSL=OFF \
	-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON -DGGML_CUDA=ON -DGGML_CUDA_FA=OFF \
	-DCMAKE_CUDA_ARCHITECTURES=90 >"$logs/cmake.log" 2>&1 ||
	! ninja -C "$work/build" -j "$(nproc)" llama-server >"$logs/build.log" 2>&1; then
	tail -20 "$logs/cmake.log" "$logs/build.log" >&2
	exit 1
fi
echo "built llama-server with CUDA in $(($(date +%s) - t0)) s" >&2
echo "$work/build/bin"
