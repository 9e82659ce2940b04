#!/bin/sh
# Makes the arm64 libraries and headers that `make ARCH=arm64` links against
# on an x86-64 host: Debian's arm64 -dev packages (their static archives) and
# the shared libraries the dynamic helpers link to, fetched with apt-get
# download and unpacked with dpkg-deb -x. Installing them (:arm64) would
# remove the amd64 -dev packages they conflict with, so they never are.
# The folder is cached outside the clone, keyed by the packages' names and
# versions; prints its path. Also fetches busybox-static's arm64 build into
# it, for tests/vm/boot.sh.
#   GMT_CACHE (default /var/cache/gpumemtrace): where it is kept
set -eu
cache=${GMT_CACHE:-/var/cache/gpumemtrace}
pkgs="libbpf-dev libelf-dev libdw-dev zlib1g-dev libzstd-dev liblzma-dev libbz2-dev libjson-c-dev
libiberty-dev libncurses-dev libevent-dev libprotobuf-c-dev libseccomp-dev libseccomp2 busybox-static"

# one apt-cache call for all (each call reads the whole cache: seconds)
versions() {
	# shellcheck disable=SC2086
	apt-cache policy $(printf '%s:arm64 ' $pkgs) 2>/dev/null | awk '
		/^[^ ].*:$/ { sub(/:arm64:$/, ""); p = $0 }
		/^  Candidate: / && $2 != "(none)" { print p "=" $2; n++ }
		END { exit n != '"$(echo $pkgs | wc -w)"' }'
}
if ! list=$(versions); then
	# no arm64 lists yet: tools/deps.sh adds the architecture
	dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
	apt-get update -qq >&2
	list=$(versions) || {
		echo "arm64-sysroot: some of these have no arm64 package: $pkgs" >&2
		exit 1
	}
fi
key=$(echo "$list" | sha256sum | cut -c1-12)
out=$cache/arm64-sysroot-$key
if [ ! -d "$out" ]; then
	tmp=$out.tmp.$$
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/dl"
	# shellcheck disable=SC2086
	(cd "$tmp/dl" && apt-get download -q $(echo "$list" | sed 's/=/:arm64=/') >&2)
	for d in "$tmp"/dl/*.deb; do
		dpkg-deb -x "$d" "$tmp/root"
	done
	# the .so links of -dev packages are absolute: pointed into the folder, so
	# that the linker finds them there
	find "$tmp/root" -type l | while read -r l; do
		t=$(readlink "$l")
		case $t in
		/*) ln -sfn "$out$t" "$l.new" && mv "$l.new" "$l" ;;
		esac
	done
	echo "$list" >"$tmp/root/packages"
	mv "$tmp/root" "$out"
fi
echo "$out"
