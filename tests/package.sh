# The package: gpumemtrace(8) and the bash completion made from --help, and
# the Debian package (debian/), built from a copy of the tree, installed,
# used and purged.
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

# the options --help lists, one a line (short and long; not -?, --help's own)
help_options() {
	"$1" --help | awk '/^OPTIONS:$/ { on = 1; next } on && /^ +-/' |
		grep -o -- '\(^\|[ ,]\)-\{1,2\}[a-zA-Z][a-z-]*' | tr -d ' ,' | sort -u
}

# complete FILE WORD...: what bash, with bash-completion's helpers, completes
# the last WORD to, from the completion FILE (loaded through bash-completion's
# own loader when FILE is "loader")
complete_words() {
	bash -c 'source /usr/share/bash-completion/bash_completion
		# the loader is a function of bash_completion, named through a variable
		# as tests/commands.py looks commands up in packages
		load=__load_completion
		if [ "$1" = loader ]; then "$load" gpumemtrace; else source "$1"; fi
		shift
		f=$(complete -p gpumemtrace | sed -n "s/.* -F \([^ ]*\) .*/\1/p")
		[ -n "$f" ] || exit 1
		COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
		"$f" gpumemtrace "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$@" 2>/dev/null
}

# check_man_and_completion GMT MAN COMPLETION: every option of GMT's --help
# in the rendered page and in the completion, and the completion completes
check_man_and_completion() {
	local gmt=$1 man=$2 comp=$3 o page words
	page=$(MANWIDTH=200 man -l "$man" 2>/dev/null)
	expect '[ -n "$page" ]' "man -l $man renders" || return 1
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" CAPABILITIES FILES EXAMPLES "SEE ALSO"; do
		expect 'grep -q "^$s\$" <<<"$page"' "the page has a section $s" || return 1
	done
	words=$(complete_words "$comp" gpumemtrace -)
	[ "$(help_options "$gmt" | wc -l)" -ge 30 ] || {
		echo "# found too few options in --help: $(help_options "$gmt" | paste -sd' ')"
		return 1
	}
	for o in $(help_options "$gmt"); do
		expect 'grep -q -- "\(^\| \)$o\([=, ]\|\$\)" <<<"$page"' "the page has $o" || return 1
		case $o in --events | --folded | --from | --html | --live | --perfetto | --pprof | --sample | --speed | --to) continue ;; esac
		expect 'grep -qx -- "$o" <<<"$words"' "'gpumemtrace -' offers $o" || return 1
	done
	expect '[ "$(complete_words "$comp" gpumemtrace --max-d)" = --max-disk ]' \
		"--max-d completes to --max-disk" || return 1
	expect '[ "$(complete_words "$comp" gpumemtrace replay -- | paste -sd" ")" = \
		"--events --folded --from --html --json --live --perfetto --pprof --sample --speed --to" ]' \
		"replay -- offers replay's options" || return 1
	expect '! complete_words "$comp" gpumemtrace - | grep -qx -- "--perfetto\|--pprof\|--html\|--from"' \
		"tracing is not offered replay's options" || return 1
	expect '[ "$(complete_words "$comp" gpumemtrace re | paste -sd" ")" = "record replay" ]' \
		"re completes to record and replay" || return 1
	expect 'complete_words "$comp" gpumemtrace -p "" | grep -qx "$$"' "-p offers PIDs (ours, $$)" ||
		return 1
	expect 'complete_words "$comp" gpumemtrace --pid=$$ | grep -qx "$$"' "--pid=$$ offers it" ||
		return 1
	: >"$T/leak.gmt"
	expect '[ "$(complete_words "$comp" gpumemtrace --duration 1)" = "" ] &&
		[ "$(complete_words "$comp" gpumemtrace -o "$T/le")" = "$T/leak.gmt" ] &&
		[ "$(complete_words "$comp" gpumemtrace replay "$T/le")" = "$T/leak.gmt" ]' \
		"-o and replay offer files, a value option nothing" || return 1
	expect 'complete_words "$comp" gpumemtrace -- ech | grep -qx echo' "after --, commands" ||
		return 1
}

# the page and the completion that make builds, against the binary's --help
test_man_and_completion_cover_help() {
	check_man_and_completion "$GMT" "$ROOT/.output/man/gpumemtrace.8" \
		"$ROOT/.output/bash-completion/gpumemtrace"
}

# the Debian package: built, lintian clean (each tag left is overridden in
# debian/, with why), installed with dpkg -i, run, and purged to the last file
test_package_installs_runs_and_purges() {
	need_root
	for c in dpkg-buildpackage dh lintian help2man; do
		command -v $c >/dev/null || skip "no $c: run make deps"
	done
	if dpkg-query -W -f='${Status}' gpumemtrace 2>/dev/null | grep -q installed; then
		skip "the package gpumemtrace is installed here already: not ours to purge"
	fi
	local start=$SECONDS deb dir gmt=/usr/bin/gpumemtrace
	# built by make test before the tests, for this tree, where it went well
	dir=$("$ROOT/tools/package.sh" 2>"$T/package.err") || {
		echo "# tools/package.sh failed:"
		sed 's/^/#   /' "$T/package.err"
		return 1
	}
	echo "# the package took $((SECONDS - start)) s to build or find in $dir"
	mkdir "$T/deb" && cp "$dir"/gpumemtrace_*.deb "$dir/lintian.txt" "$T/deb/" || return 1
	expect '[ ! -s "$T/deb/lintian.txt" ]' "lintian says nothing: $(cat "$T/deb/lintian.txt")" ||
		return 1
	deb=$(ls "$T"/deb/gpumemtrace_*.deb)
	expect '[ "$(dpkg-deb -f "$deb" Version)" = "$(sed -n "s/^VERSION := //p" "$ROOT/Makefile")" ]' \
		"debian/changelog's version is the Makefile's" || return 1
	# what existed before: afterwards, purge must leave exactly that
	dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||; /^$/d' >"$T/paths"
	while IFS= read -r p; do [ -e "$p" ] && echo "$p"; done <"$T/paths" >"$T/before"
	trap 'dpkg --purge gpumemtrace >/dev/null 2>&1' EXIT TERM INT
	dpkg -i "$deb" >"$T/dpkg.log" 2>&1 || {
		echo "# dpkg -i failed: $(cat "$T/dpkg.log")"
		return 1
	}
	dpkg -L gpumemtrace >"$T/listed"
	for f in /usr/bin/gpumemtrace /usr/bin/gpumemtrace-vkinfo /usr/bin/gpumemtrace-nvml \
		/usr/share/man/man8/gpumemtrace.8.gz /usr/share/bash-completion/completions/gpumemtrace \
		/lib/systemd/system/gpumemtrace.service; do
		expect 'grep -qx "$f" "$T/listed" && [ -e "$f" ]' "the package installs $f" || return 1
	done
	expect 'grep -q "^ExecStart=/usr/bin/gpumemtrace " /lib/systemd/system/gpumemtrace.service' \
		"the unit runs /usr/bin/gpumemtrace" || return 1
	expect '! ls /etc/systemd/system/*/gpumemtrace.service 2>/dev/null' \
		"the unit is not enabled on install" || return 1

	# a short workload, traced by the installed binary
	mkfifo "$T/done"
	"$gmt" -q --json -i 0.2 -- "$WL" --steps 4 --step-mib 16 --out "$T/done" >"$T/r.json" &
	cat "$T/done" >"$T/wl.json"
	wait $! || return 1
	check_growth "$T/r.json" "$T/wl.json" || return 1
	expect '[ "$(jqr .session.end_reason "$T/r.json")" = target_exit ]' || return 1
	# the helpers are found beside /usr/bin/gpumemtrace: NVML's says why
	# it has no driver, not that it is missing
	expect '[ -n "$(jqr ".probes[] | select(.name == \"nvml\") | .reason" "$T/r.json")" ] &&
		! jqr ".probes[] | .reason // empty" "$T/r.json" | grep -q "not installed beside"' \
		"the helpers are found in /usr/bin: $(jqr '.probes[] | select(.name == "nvml") | .reason' "$T/r.json")" ||
		return 1

	# the page as man finds it, the completion as bash-completion loads it
	expect '[ "$(man -w gpumemtrace)" = /usr/share/man/man8/gpumemtrace.8.gz ]' \
		"man finds gpumemtrace(8)" || return 1
	expect 'MANWIDTH=80 man gpumemtrace 2>/dev/null | grep -q "^SYNOPSIS"' "man gpumemtrace renders" ||
		return 1
	check_man_and_completion "$gmt" /usr/share/man/man8/gpumemtrace.8.gz loader || return 1

	dpkg --purge gpumemtrace >"$T/purge.log" 2>&1 || {
		echo "# dpkg --purge failed: $(cat "$T/purge.log")"
		return 1
	}
	trap - EXIT TERM INT
	while IFS= read -r p; do
		[ -e "$p" ] && ! grep -qxF "$p" "$T/before" && echo "$p"
	done <"$T/paths" >"$T/left"
	ls /var/lib/dpkg/info/gpumemtrace.* /var/lib/systemd/deb-systemd-helper-enabled/*gpumemtrace* \
		2>/dev/null >>"$T/left"
	expect '[ ! -s "$T/left" ]' "purge leaves nothing: $(paste -sd' ' "$T/left")" || return 1
	echo "# all of it took $((SECONDS - start)) s"
}
