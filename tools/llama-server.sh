#!/bin/sh
# Builds the real llama-server from the llama.cpp release that node-llama-cpp's
# npm package ships (llama/gitRelease.bundle), the way its releases are built:
# CPU backend as a dynamic backend, release flags (no frame pointers, no debug
# info). The prebuilt Vulkan backend of @node-llama-cpp/linux-x64-vulkan, built
# from the same commit, goes beside it: ggml_backend_load_all finds it there.
# The build is cached outside the clone, keyed by the bundle's commit and these
# flags, so it happens once per machine. Prints the folder holding the binary.
#   tools/llama-server.sh [--cuda]   (--cuda: CUDA backend too, for the H200)
#   tools/llama-server.sh --arm64    (cross-built with aarch64-linux-gnu-gcc/g++,
#       CPU backend only, for the arm64 VM of tests/arm64.sh; linked dynamically
#       like the x86 build, since the tracer finds llama_decode and the others
#       by libllama.so's exports; the guest gets the cross toolchain's
#       libraries, see arm64_llama_libs in tests/arm64.sh)
#   GMT_CACHE (default /var/cache/gpumemtrace): where builds are kept
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
nlc=$root/tests/e2e/node_modules/node-llama-cpp/llama
vk=$root/tests/e2e/node_modules/@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan
cache=${GMT_CACHE:-/var/cache/gpumemtrace}
flavour=cpu
[ "${1:-}" = --cuda ] && flavour=cuda
[ "${1:-}" = --arm64 ] && flavour=cpu-arm64

main() {
	say() { echo "llama-server: $*" >&2; }

	# one build of a flavour at a time on a machine: a second waits, then
	# finds the first's (two at once shared a build folder and broke both)
	mkdir -p "$cache"
	exec 9>"$cache/.lock-$flavour"
	flock 9

	if [ ! -f "$nlc/gitRelease.bundle" ]; then
		say "no $nlc/gitRelease.bundle: run make e2e-deps (npm ci in tests/e2e)"
		exit 1
	fi
	commit=$(git bundle list-heads "$nlc/gitRelease.bundle" | awk '$2 == "HEAD" { print $1 }')
	tag=$(sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p' "$nlc/llama.cpp.info.json")
	# $ORIGIN: the folder works wherever it is, once the build folder is gone
	flags="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=ON -DGGML_NATIVE=OFF
-DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON"
	[ $flavour = cuda ] && flags="$flags -DGGML_CUDA=ON -DGGML_CUDA_FA=OFF -DCMAKE_CUDA_ARCHITECTURES=90"
	# plain armv8-a (GGML_NATIVE off): runs on any arm64 host and under TCG
	[ $flavour = cpu-arm64 ] && flags="$flags -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64
-DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++
-DCMAKE_FIND_ROOT_PATH=/usr/aarch64-linux-gnu -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER
-DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY
-DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY -DLLAMA_CURL=OFF"
	key=$(printf '%s\n%s\n' "$commit" "$flags" | sha256sum | cut -c1-12)
	out=$cache/llama-server-$tag-$flavour-$key

	if [ -x "$out/llama-server" ]; then
		echo "$out"
		exit 0
	fi

	src=$cache/src-$commit
	if [ ! -d "$src/.git" ]; then
		rm -rf "$src"
		mkdir -p "$cache"
		git clone -q "$nlc/gitRelease.bundle" "$src" 2>/dev/null
		git -C "$src" -c advice.detachedHead=false checkout -q "$commit"
	fi
	jobs=$(nproc)
	say "building llama.cpp $tag (${commit%"${commit#????????????}"}), $flavour backend, $jobs jobs:"
	say "once per machine (about 10 minutes on 2 idle cores, more on busy ones); cached in $out"
	build=$cache/build-$flavour-$key
	rm -rf "$build"
	# shellcheck disable=SC2086 # flags are words
	cmake -S "$src" -B "$build" -G Ninja $flags >"$build.log" 2>&1 || {
		tail -30 "$build.log" >&2
		say "cmake failed: the whole log is $build.log"
		exit 1
	}
	# ninja's progress, one line every 10%, so a long build says where it is
	t0=$(date +%s)
	ninja -C "$build" -j "$jobs" llama-server 2>&1 | tee -a "$build.log" | {
		last=0
		while IFS= read -r line; do
			case $line in
			"["[0-9]*/[0-9]*"]"*) ;;
			*) continue ;;
			esac
			done=${line%%/*}
			done=${done#[}
			all=${line#*/}
			all=${all%%]*}
			pct=$((done * 10 / all * 10))
			[ "$pct" -gt "$last" ] || continue
			last=$pct
			say "$pct% ($(($(date +%s) - t0)) s)"
		done
	}
	if [ ! -x "$build/bin/llama-server" ]; then
		tail -30 "$build.log" >&2
		say "the build failed: the whole log is $build.log"
		exit 1
	fi
	# what the time went on: compile steps and compiler time, from ninja's log
	# (the build is CPU-bound: a loaded machine takes longer than an idle one)
	awk -v wall=$(($(date +%s) - t0)) '!/^#/ { n++; d = ($2 - $1) / 1000; sum += d
			if (d > top[3]) { top[3] = d; name[3] = $4
				for (i = 3; i > 1 && top[i] > top[i - 1]; i--) {
					t = top[i]; top[i] = top[i - 1]; top[i - 1] = t
					t = name[i]; name[i] = name[i - 1]; name[i - 1] = t } } }
		END { printf "llama-server: %d steps in %d s, %d s of compiler time; the longest:", n, wall, sum
			for (i = 1; i <= 3; i++) { sub(/.*\//, "", name[i]); printf " %s %d s", name[i], top[i] }
			print "" }' "$build/.ninja_log" >&2 || true
	rm -rf "$out.tmp"
	mkdir -p "$out.tmp"
	cp -a "$build"/bin/llama-server "$build"/bin/*.so* "$out.tmp/"
	# the Vulkan backend of node-llama-cpp's prebuilt binaries, of the same commit
	[ $flavour != cpu-arm64 ] && [ -f "$vk/libggml-vulkan.so" ] && cp "$vk/libggml-vulkan.so" "$out.tmp/"
	printf 'commit %s\ntag %s\nflags %s\n' "$commit" "$tag" "$flags" >"$out.tmp/BUILD"
	mv "$out.tmp" "$out"
	rm -rf "$build" "$build.log"
	say "built in $out"
	echo "$out"
}

main "$@"
exit
