#!/bin/bash
# Builds the Debian package of this tree (debian/) with dpkg-buildpackage,
# outside the clone, and runs lintian on it; prints the directory that holds
# the .deb and lintian's words (lintian.txt). Used by `make test` (before
# the tests, whose time limit a first build under load could pass) and
# tests/package.sh.
#   GMT_CACHE (default /var/cache/gpumemtrace): the cache
# Kept there: the package of each of the last three trees (deb-KEY, KEY made
# of the tree's files as they are, committed or not: paths, modes,
# contents), and the build copy (deb-build-HOW, HOW made of the Makefile and
# debian/rules, which say how it is built): a new tree copies in only the
# files that changed since the last build, with new times, and builds with
# --no-pre-clean, so that make rebuilds only what they touch.
set -euo pipefail
export LC_ALL=C
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${GMT_CACHE:-/var/cache/gpumemtrace}

# "MODE BLOB PATH" a line per file of the tree
manifest() {
	cd "$root"
	local files
	files=$(git ls-files -co --exclude-standard | grep -v '^tests/e2e/node_modules' | sort |
		while IFS= read -r f; do [ ! -f "$f" ] || printf '%s\n' "$f"; done)
	paste -d' ' <(printf '%s\n' "$files" | xargs -d '\n' stat -c %a) \
		<(printf '%s\n' "$files" | git hash-object --no-filters --stdin-paths) <(printf '%s\n' "$files")
}

mkdir -p "$cache"
exec 9>"$cache/deb.lock"
flock 9
new=$(mktemp)
trap 'rm -f "$new"' EXIT
manifest >"$new"
dir=$cache/deb-$(sha256sum <"$new" | cut -c1-16)
if [ -e "$dir/lintian.txt" ]; then
	echo "$dir"
	exit 0
fi

echo "building the Debian package of this tree (tools/package.sh; a first build takes minutes)" >&2
build=$cache/deb-build-$(cat "$root/Makefile" "$root/debian/rules" | sha256sum | cut -c1-16)
[ -e "$build/manifest" ] || rm -rf "$build"
mkdir -p "$build/src"
touch "$build/manifest"
# gone since the last build, then new or changed (copied afresh: a new time)
comm -23 <(cut -d' ' -f3- "$build/manifest" | sort) <(cut -d' ' -f3- "$new" | sort) |
	while IFS= read -r f; do rm -f "$build/src/$f"; done
comm -13 <(sort "$build/manifest") <(sort "$new") | cut -d' ' -f3- | while IFS= read -r f; do
	mkdir -p "$build/src/$(dirname "$f")"
	rm -f "$build/src/$f"
	cp -P --preserve=mode "$root/$f" "$build/src/$f"
done
rm -f "$build/manifest" "$build"/*.deb "$build"/*.changes "$build"/*.buildinfo
# debhelper's own state of the last build (not the Makefile's outputs)
(cd "$build/src" && dh_clean)
# parallel as make is elsewhere; no -dbgsym package
if ! (cd "$build/src" && DEB_BUILD_OPTIONS="noddebs parallel=$(nproc)" \
	dpkg-buildpackage -b -us -uc --no-pre-clean) >"$build/build.log" 2>&1; then
	tail -30 "$build/build.log" >&2
	echo "dpkg-buildpackage failed (the log: $build/build.log)" >&2
	exit 1
fi
cp "$new" "$build/manifest"
# lintian runs as root and says so first, which is not a tag
lintian "$build"/gpumemtrace_*.changes 2>&1 | grep -v 'with root privileges' >"$build/lintian.txt" || true
rm -rf "$dir.tmp"
mkdir "$dir.tmp"
cp "$build"/gpumemtrace_*.deb "$build/lintian.txt" "$build/build.log" "$dir.tmp/"
mv "$dir.tmp" "$dir"
# the last three trees' packages, and the build copy of the current way
ls -dt "$cache"/deb-* | grep -v -e '/deb-build-' -e '\.tmp$' | tail -n +4 | xargs -r rm -rf || true
ls -d "$cache"/deb-build-* | grep -vxF "$build" | xargs -r rm -rf || true
echo "$dir"
