#!/bin/sh
# Writes gpumemtrace(8) from `gpumemtrace --help` with help2man, and the
# sections --help lacks from dist/gpumemtrace.h2m, so the page and --help
# cannot drift. --help's EXAMPLES move to their own section, kept one a line.
#   tools/man.sh BINARY OUT
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" --help >"$tmp/help"
# the EXAMPLES block of --help, as a section of the include file
{
	echo '[EXAMPLES]'
	echo '.nf'
	awk '/^EXAMPLES:$/ { on = 1; next } on && /^$/ { exit } on { sub(/^ +/, ""); print }' \
		"$tmp/help" | sed 's/\\/\\e/g; s/^[.'\'']/\\\&&/'
	echo '.fi'
	echo
	cat "$root/dist/gpumemtrace.h2m"
} >"$tmp/include"

# help2man reads options from lines that start with a dash; a description
# that starts with one too goes to the next line, where help2man looks for it
awk '/^EXAMPLES:$/ { skip = 1; next } skip && /^$/ { skip = 0; next } skip { next }
	/^OPTIONS:$/ { print "Options:"; next }
	/^ +-/ && match($0, /[^ ]  +--/) {
		print substr($0, 1, RSTART)
		printf "%29s%s\n", "", substr($0, RSTART + RLENGTH - 2)
		next
	}
	{ print }' "$tmp/help" >"$tmp/help.man"
cat >"$tmp/gpumemtrace" <<SHIM
#!/bin/sh
case "\$1" in
--help) cat "$tmp/help.man" ;;
*) exec "$bin" "\$@" ;;
esac
SHIM
chmod +x "$tmp/gpumemtrace"
help2man --no-info --section 8 --include "$tmp/include" \
	--name "why a GPU program's memory grows or its speed falls" \
	--output "$out" "$tmp/gpumemtrace"
