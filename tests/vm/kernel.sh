#!/bin/bash
# tests/vm/kernel.sh 6.1|6.12: the path of a Debian kernel image to boot under
# QEMU, downloaded with apt-get at test time into tests/vm/cache (git-ignored,
# kept between runs). 6.1 comes from bookworm, 6.12 from bookworm-security.
set -eu
cache=$(cd "$(dirname "$0")" && pwd)/cache
case $1 in
6.1) re='^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' ;;
6.12) re='^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' ;;
*)
	echo "usage: $0 6.1|6.12" >&2
	exit 2
	;;
esac
newest() { apt-cache search --names-only "$re" | cut -d' ' -f1 | sort -V | tail -1; }
pkg=$(newest)
if [ -z "$pkg" ]; then
	apt-get update -qq >&2
	pkg=$(newest)
fi
[ -n "$pkg" ] || { echo "no package matches $re" >&2; exit 1; }
dir=$cache/$pkg
if [ ! -d "$dir/boot" ]; then
	mkdir -p "$cache/dl"
	(cd "$cache/dl" && apt-get download -q "$pkg" >&2 2>/dev/null ||
		{ apt-get update -qq && apt-get download -q "$pkg"; } >&2)
	rm -rf "$dir.tmp"
	dpkg-deb -x "$cache"/dl/"${pkg}"_*.deb "$dir.tmp"
	rm -f "$cache"/dl/"${pkg}"_*.deb
	mv "$dir.tmp" "$dir"
fi
ls "$dir"/boot/vmlinuz-*
