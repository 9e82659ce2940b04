#!/bin/bash
# The one-way flow of ARCHITECTURE.md, checked: a file under user/STAGE/
# includes only its own stage and the stages below it. Prints each backwards
# include as "FILE: includes HEADER (STAGE may not)"; exit status 1 if any.
#   tests/layering.sh [USER_DIR]   (default: the repository's user/)
set -u
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)/user}

# the stages, lowest first; stages of one rank are siblings and may not
# include each other (the model knows nothing of where events come from)
rank() {
	case $1 in
	common) echo 0 ;;
	stream) echo 1 ;;
	source | model) echo 2 ;;
	analysis) echo 3 ;;
	report | view) echo 4 ;;
	main) echo 5 ;;
	*) echo -1 ;;
	esac
}
# generated or BPF-side headers: who may include them
outside_ok() { # outside_ok STAGE HEADER
	case $2 in
	gmt_events.h) return 0 ;; # the wire format, shared with the BPF side
	gpumemtrace.skel.h) [ "$1" = source ] ;;
	perfetto.pb-c.h) [ "$1" = report ] ;;
	*) return 1 ;;
	esac
}

bad=0
while IFS= read -r f; do
	rel=${f#"$dir"/}
	case $rel in
	*/*) stage=${rel%%/*} ;;
	*) stage=main ;;
	esac
	if [ "$(rank "$stage")" -lt 0 ]; then
		echo "$rel: not in a stage folder (common stream source model analysis report view)"
		bad=1
		continue
	fi
	while IFS= read -r h; do
		if [[ $h == */* ]]; then
			to=${h%%/*}
		elif [ "$stage" != main ] && [ -e "$(dirname "$f")/$h" ]; then
			to=$stage
		else
			outside_ok "$stage" "$h" && continue
			echo "$rel: includes \"$h\", which is not in a stage folder"
			bad=1
			continue
		fi
		[ "$to" = "$stage" ] && continue
		r=$(rank "$to")
		if [ "$r" -lt 0 ] || [ ! -e "$dir/$h" ]; then
			echo "$rel: includes \"$h\", which is not there"
			bad=1
		elif [ "$r" -ge "$(rank "$stage")" ]; then
			echo "$rel: includes $h ($stage may not include $to)"
			bad=1
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find "$dir" -name '*.[ch]' | sort)
exit $bad
