#!/bin/sh
# Builds tools/helm-render (Go 1.19, Debian's gopkg.in/yaml.v3; no modules,
# nothing fetched), cached outside the clone, keyed by its source and the Go
# version, so it happens once per machine. Prints the binary's path.
#   GMT_CACHE (default /var/cache/gpumemtrace): where builds are kept
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${GMT_CACHE:-/var/cache/gpumemtrace}
key=$( (cat "$root/tools/helm-render/main.go" && go version) | sha256sum | cut -c1-12)
out=$cache/helm-render-$key
if [ ! -x "$out/helm-render" ]; then
	mkdir -p "$out"
	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$out/go-build GOFLAGS= \
		go build -o "$out/helm-render.tmp" "$root/tools/helm-render/main.go" >&2
	rm -rf "$out/go-build"
	mv "$out/helm-render.tmp" "$out/helm-render"
fi
echo "$out/helm-render"
