#!/bin/bash
# The README's set-up and its two commands on a fresh Debian 12, as a new user
# meets them: a minimal root (debootstrap --variant=minbase), the README's
# set-up line, a clone of this repository's HEAD, then `sudo make CMD` for
# each CMD in the order given. Not part of `make test` (an hour or more): run
# it whenever tools/deps.sh or the Makefile's set-up changes.
#   tests/fresh-debian.sh CMD...       e.g. run test run test, or test run test run
# It prints, for each command, how long it took, its exit status and its last
# line, and ends with "N passed, N failed" over the commands; each command's
# whole output is in $FRESH/logs/.
#   FRESH (default /var/tmp/gmt-fresh): the roots, the cached debootstrap
#   base and the logs; KEEP=1 keeps the root afterwards
# The root gets the host's /sys, /dev and network, a /proc of its own and its
# own mount namespace, entered with pivot_root rather than chroot: the tests
# make user namespaces, which the kernel refuses to a chrooted process.
set -u
[ $# -gt 0 ] || { sed -n '2,/^set -u/{/^set/d;s/^# \{0,1\}//p}' "$0"; exit 2; }
for c in "$@"; do
	case $c in run | test) ;; *) echo "fresh-debian.sh: no such command: $c (run or test)" >&2; exit 2 ;; esac
done
[ "$(id -u)" = 0 ] || { echo "fresh-debian.sh: needs root (debootstrap, mounts)" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
fresh=${FRESH:-/var/tmp/gmt-fresh}
mkdir -p "$fresh/logs"
command -v debootstrap >/dev/null || {
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
} || exit 1

# the base: what debootstrap makes, kept so that each root is a copy of it
base=$fresh/base-bookworm-minbase.tar
if [ ! -s "$base" ]; then
	rm -rf "$fresh/base"
	echo "debootstrap: a minimal Debian 12 (bookworm) into $fresh/base"
	debootstrap --variant=minbase bookworm "$fresh/base" http://deb.debian.org/debian \
		>"$fresh/logs/debootstrap.log" 2>&1 || {
		tail -5 "$fresh/logs/debootstrap.log"
		exit 1
	}
	tar -C "$fresh/base" -cf "$base.tmp" . && mv "$base.tmp" "$base" && rm -rf "$fresh/base"
fi

stamp=$(date +%Y%m%d-%H%M%S)
root=$fresh/root-$stamp
mkdir -p "$root"
tar -C "$root" -xf "$base" || exit 1
cp /etc/resolv.conf "$root/etc/resolv.conf"
# This machine's way out: where a proxy between it and the registries shows
# certificates of its own CA, the machine trusts that CA and npm is told to
# (NODE_EXTRA_CA_CERTS alone does not pass sudo). The root gets the same, and
# nothing else of the host's; a fresh Debian on the open internet needs none.
mkdir -p "$root/usr/local/share/ca-certificates"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null
for f in /etc/npmrc /usr/etc/npmrc; do
	[ -f "$f" ] && mkdir -p "$root${f%/*}" && cp "$f" "$root$f"
done
git -C "$src" bundle create "$root/root/gpumemtrace.bundle" HEAD "$(git -C "$src" symbolic-ref --short HEAD)" \
	2>/dev/null || exit 1
rev=$(git -C "$src" rev-parse --short HEAD)

# everything the root runs is in one cgroup, killed after each step
cg=""
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$cg2" ] && mkdir "$cg2/gmt-fresh-$stamp" 2>/dev/null; then
	cg=$cg2/gmt-fresh-$stamp
fi
cleanup() {
	local i
	[ -n "$cg" ] && [ -e "$cg/cgroup.kill" ] && echo 1 >"$cg/cgroup.kill"
	# the killed take a moment to leave; an empty cgroup can go
	for ((i = 0; i < 100; i++)); do
		[ -z "$cg" ] || [ -z "$(cat "$cg/cgroup.procs" 2>/dev/null)" ] && break
		read -r -t 0.1 <> <(:) || true
	done
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || rm -rf --one-file-system "$root"
}
trap cleanup EXIT

# enter LIMIT CMD...: CMD as root in the fresh root, a login shell's
# environment, at most LIMIT (timeout's syntax)
enter() {
	local limit=$1
	shift
	[ -n "$cg" ] && [ -e "$cg/cgroup.kill" ] && echo 1 >"$cg/cgroup.kill"
	timeout -k 10 "$limit" unshare --mount --propagation private --fork -- bash -c '
		r=$1 cg=$2
		shift 2
		[ -z "$cg" ] || echo $$ >"$cg/cgroup.procs"
		set -e
		mount --rbind "$r" "$r"
		mount -t proc proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		mount -t tmpfs tmpfs "$r/run"
		cd "$r"
		mkdir -p .host
		pivot_root . .host
		umount -l /.host
		rmdir /.host
		cd /root
		exec env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"' \
		bash "$root" "$cg" "$@"
}

# the README's set-up, as it says it
echo "root: $root (minbase), $rev"
setup="apt-get update && apt-get install -y git make sudo"
grep -qF "$setup" "$src/README.md" || echo "warning: README.md does not say '$setup'"
log=$fresh/logs/$stamp-0-setup.log
enter 20m bash -c "$setup && git clone -q /root/gpumemtrace.bundle gpumemtrace" >"$log" 2>&1 || {
	echo "set-up failed: $(tail -3 "$log")"
	exit 1
}

pass=0 failed=0 n=0
for c in "$@"; do
	n=$((n + 1))
	log=$fresh/logs/$stamp-$n-$c.log
	start=$SECONDS
	# the demo is a minute; a first run builds llama-server (10-20 minutes)
	limit=$([ "$c" = run ] && echo 60m || echo 85m)
	enter "$limit" bash -c "cd gpumemtrace && sudo make $c" >"$log" 2>&1 </dev/null
	rc=$?
	took=$((SECONDS - start))
	last=$(grep -v '^\s*$' "$log" | tail -1)
	printf '%d. sudo make %s: exit %d after %dm%02ds; last line: %s\n' "$n" "$c" "$rc" \
		$((took / 60)) $((took % 60)) "$last"
	[ "$c" = test ] && grep -A30 '^failed:' "$log" | sed 's/^/   /'
	if [ $rc = 0 ]; then pass=$((pass + 1)); else failed=$((failed + 1)); fi
done
echo "logs: $fresh/logs/$stamp-*"
echo "$pass passed, $failed failed"
[ $failed = 0 ]
