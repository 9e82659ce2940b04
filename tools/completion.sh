#!/bin/sh
# Writes gpumemtrace's bash completion from `gpumemtrace --help`, so that
# the two cannot drift: the options and what each takes (PID: processes,
# FILE, PATH, OUT: files, DIR: directories, NAME: process names), replay's
# options from the `gpumemtrace replay` usage lines, the others' from every
# option whose description does not start with "replay".
#   tools/completion.sh BINARY OUT
set -eu
help=$("$1" --help)
out=$2

# "OPT ARG DESC" a line per option (ARG "-" when it takes none)
table=$(printf '%s\n' "$help" | awk '
	function flush() { if (n) { for (i = 1; i <= n; i++) print o[i], arg, desc }; n = 0 }
	/^OPTIONS:$/ { on = 1; next }
	!on { next }
	/^(  |      )-/ { # an option: wrapped lines of a description are indented further
		flush()
		line = $0; sub(/^ +/, "", line)
		split(line, parts, /  +/)
		spec = parts[1]; desc = parts[2]
		arg = "-"
		if (match(spec, /=[^ ,]*/)) { arg = substr(spec, RSTART + 1, RLENGTH - 1) }
		gsub(/=[^ ,]*/, "", spec)
		n = split(spec, o, /, /)
		if (desc == "") { pending = 1 } else { pending = 0 }
		next
	}
	pending && /^ +[^ ]/ { line = $0; sub(/^ +/, "", line); desc = line; pending = 0; next }
	/^$/ { flush(); pending = 0 }
	END { flush() }')
# replay's own options: those the replay usage lines name, those whose
# description starts "replay", and those that go with one of these ("--pprof,
# --folded: ...")
only=$(printf '%s\n' "$table" | awk '{ d[NR] = $3; o[NR] = $1; if ($3 ~ /^replay/) r[$1] = 1 }
	END { for (i = 1; i <= NR; i++) { w = d[i]; sub(/[,:]$/, "", w); if (o[i] in r || w in r) print o[i] } }')
replay=$( (printf '%s\n' "$help" | grep '^ *gpumemtrace replay ' | grep -o -- '--[a-z-]*'
	printf '%s\n' "$only") | sort -u)
opts=$(printf '%s\n' "$table" | awk -v only="$(echo $only)" 'BEGIN { n = split(only, o, " "); for (i = 1; i <= n; i++) r[o[i]] = 1 }
	!($1 in r) && $1 != "-?" { print $1 }')
with_arg() { printf '%s\n' "$table" | awk -v a="$1" '$2 ~ a { print $1 }' | paste -sd'|'; }
takes=$(printf '%s\n' "$table" | awk '$2 != "-" { print $1 }' | paste -sd'|')

{
	echo "# bash completion for gpumemtrace: written by tools/completion.sh from"
	echo "# gpumemtrace $("$1" --version | awk '{ print $2 }')'s --help; do not edit"
	cat <<SCRIPT
_gpumemtrace() {
	local cur prev words cword split i
	_init_completion -s || return
	for ((i = 1; i < cword; i++)); do
		if [[ \${words[i]} == -- ]]; then
			_command_offset \$((i + 1))
			return
		fi
	done
	case \$prev in
	$(with_arg '^PID$')) _pids; return ;;
	$(with_arg '^(FILE|PATH|OUT)$')) _filedir; return ;;
	$(with_arg '^DIR$')) _filedir -d; return ;;
	$(with_arg '^NAME$')) COMPREPLY=(\$(compgen -W "\$(ps -eo comm= | sort -u)" -- "\$cur")); return ;;
	$takes) return ;;
	esac
	\$split && return
	local opts="$(echo $opts)"
	[[ \${words[1]} == replay ]] && opts="$(echo $replay)"
	if [[ \$cur == -* ]]; then
		COMPREPLY=(\$(compgen -W "\$opts" -- "\$cur"))
	elif [[ \${words[1]} == replay ]]; then
		_filedir
	elif ((cword == 1)); then
		COMPREPLY=(\$(compgen -W "record replay" -- "\$cur"))
	fi
}
complete -F _gpumemtrace gpumemtrace
SCRIPT
} >"$out"
