#!/bin/bash
# tests/vm/kernel.sh 6.1|6.12: the path of a Debian kernel image to boot under
# QEMU, downloaded with apt-get at test time into $GMT_CACHE/kernels
# (default /var/cache/gpumemtrace: outside the clone, kept between runs and
# clones; a directory a package, named as the package is). 6.1 comes from
# bookworm, 6.12 from bookworm-security (through a list of its own where the
# machine's sources lack it).
# ARCH=arm64: the arm64 package's (its vmlinuz is an uncompressed Image,
# which qemu-system-aarch64 boots); default amd64.
set -eu
cache=${GMT_CACHE:-/var/cache/gpumemtrace}/kernels
case ${ARCH:-x86} in
arm64) deb=arm64 ;;
*) deb=amd64 ;;
esac
case $1 in
6.1) re="^linux-image-6\.1\.0-[0-9]+-$deb-unsigned\$" ;;
6.12) re="^linux-image-6\.12\.[0-9]+\+deb12-$deb-unsigned\$" ;;
*)
	echo "usage: [ARCH=arm64] $0 6.1|6.12" >&2
	exit 2
	;;
esac
opts=()
newest() { apt-cache "${opts[@]}" search --names-only "$re" | cut -d' ' -f1 | sort -V | tail -1; }
pkg=$(newest)
if [ -z "$pkg" ]; then
	apt-get update -qq >&2
	pkg=$(newest)
fi
# a machine whose sources lack Debian 12's security suite (a debootstrap
# root lists bookworm alone): apt with a list of its own, kept in the cache,
# the machine's own configuration left as it is
if [ -z "$pkg" ]; then
	mkdir -p "$cache/apt/lists/partial"
	printf '%s\n' "deb http://deb.debian.org/debian bookworm main" \
		"deb http://deb.debian.org/debian-security bookworm-security main" >"$cache/apt/sources.list"
	opts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o "Dir::State::Lists=$cache/apt/lists")
	pkg=$(newest)
	if [ -z "$pkg" ]; then
		apt-get "${opts[@]}" update -qq >&2
		pkg=$(newest)
	fi
fi
[ -n "$pkg" ] || { echo "no package matches $re" >&2; exit 1; }
dir=$cache/$pkg
mkdir -p "$cache"
# one download at a time: the cache is shared by every clone on the machine
exec 9>"$cache/.lock"
flock 9
if [ ! -d "$dir/boot" ]; then
	mkdir -p "$cache/dl"
	(cd "$cache/dl" && apt-get "${opts[@]}" download -q "$pkg:$deb" >&2 2>/dev/null ||
		{ apt-get "${opts[@]}" update -qq && apt-get "${opts[@]}" download -q "$pkg:$deb"; } >&2)
	rm -rf "$dir.tmp"
	dpkg-deb -x "$cache"/dl/"${pkg}"_*.deb "$dir.tmp"
	rm -f "$cache"/dl/"${pkg}"_*.deb
	mv "$dir.tmp" "$dir"
fi
ls "$dir"/boot/vmlinuz-*
