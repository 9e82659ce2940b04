#!/bin/sh
# Installs what building and testing gpumemtrace need, from Debian's packages,
# when it is missing. Used by `make deps`, `make test` and `make run`.
set -eu
pkgs="make gcc clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev
libjson-c-dev libiberty-dev jq file clang-format util-linux procps
qemu-system-x86 busybox-static libvulkan-dev libvulkan1 mesa-vulkan-drivers kmod xz-utils libdrm-dev libncurses-dev tmux"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "missing Debian packages:$missing" >&2
	echo "run: sudo make deps" >&2
	exit 1
fi
echo "installing:$missing"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
