#!/bin/sh
# Makes the build context of dist/Containerfile in DIR: the static
# gpumemtrace and its two helpers, which are dynamically linked (they dlopen
# a driver), with the libraries ldd names for them at their own paths, and
# the empty directories the tracer writes to. Nothing else: no shell, no CA.
#   tools/image-context.sh DIR    (then: podman build -f dist/Containerfile DIR)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
rm -rf "$dir/rootfs"
mkdir -p "$dir/rootfs/usr/local/bin" "$dir/rootfs/tmp" "$dir/rootfs/var/lib/gpumemtrace"
chmod 1777 "$dir/rootfs/tmp"
chmod 0700 "$dir/rootfs/var/lib/gpumemtrace"
for b in gpumemtrace gpumemtrace-vkinfo gpumemtrace-nvml; do
	cp "$root/$b" "$dir/rootfs/usr/local/bin/$b"
done
# the helpers' libraries and loader: "name => /path (addr)" and "/path (addr)"
for lib in $(ldd "$root/gpumemtrace-vkinfo" "$root/gpumemtrace-nvml" |
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | sort -u); do
	mkdir -p "$dir/rootfs$(dirname "$lib")"
	cp -L "$lib" "$dir/rootfs$lib"
done
cp "$root/dist/Containerfile" "$dir/Containerfile"
