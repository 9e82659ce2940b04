#!/bin/sh
# Debian's Prometheus server and promtool, for the tests that scrape the
# tracer: the package is downloaded and unpacked into the cache outside the
# clone, not installed, so no service starts and no user is added. Prints
# the folder holding prometheus and promtool.
#   GMT_CACHE (default /var/cache/gpumemtrace): where it is kept
set -eu
cache=${GMT_CACHE:-/var/cache/gpumemtrace}
say() { echo "prometheus: $*" >&2; }

version=$(apt-cache policy prometheus 2>/dev/null | sed -n 's/^ *Candidate: *//p')
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
	apt-get update -qq >&2 || true
	version=$(apt-cache policy prometheus 2>/dev/null | sed -n 's/^ *Candidate: *//p')
fi
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
	say "Debian's package is not available here (apt-cache policy prometheus)"
	exit 1
fi
out=$cache/prometheus-$(echo "$version" | tr -c 'A-Za-z0-9.+~\n' -)
if [ ! -x "$out/usr/bin/prometheus" ] || [ ! -x "$out/usr/bin/promtool" ]; then
	tmp=$(mktemp -d "$cache/prometheus.XXXXXX")
	chmod 755 "$tmp" # apt downloads as its own user
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -qq "prometheus=$version" >&2) || {
		say "downloading the package failed"
		exit 1
	}
	mkdir -p "$tmp/root"
	dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/root"
	rm -rf "$out"
	mv "$tmp/root" "$out"
fi
echo "$out/usr/bin"
