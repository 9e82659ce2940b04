#!/bin/bash
# The one-way flow of ARCHITECTURE.md, checked: a file under user/STAGE/
# includes only its own stage and the stages below it, and nothing above the
# model reads the wire format. Prints each backwards include as "FILE:
# includes HEADER (STAGE may not)", each wire name as "FILE:LINE: reads the
# wire format"; exit status 1 if any.
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
	serve) echo 5 ;;
	main) echo 6 ;;
	*) echo -1 ;;
	esac
}
# generated or BPF-side headers: who may include them
outside_ok() { # outside_ok STAGE HEADER
	case $2 in
	gmt_events.h) return 0 ;; # the wire format, shared with the BPF side
	gpumemtrace.skel.h) [ "$1" = source ] ;;
	gmt_syscalls.h) [ "$1" = source ] ;; # the calls the sys_exit programs take
	perfetto.pb-c.h | profile.pb-c.h) [ "$1" = report ] ;;
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
		echo "$rel: not in a stage folder (common stream source model analysis report view serve)"
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

# Above the model, nothing reads the wire format: the analysis, the reports
# the view and the servers use the model's names (model.h), not gmt_* records or GMT_*
# numbers. Perfetto's export is the one reader of the stream up there: it
# turns decode records into slices, record by record.
for f in "$dir"/analysis/*.[ch] "$dir"/report/*.[ch] "$dir"/view/*.[ch] "$dir"/serve/*.[ch]; do
	[ -e "$f" ] || continue
	rel=${f#"$dir"/}
	case $rel in report/perfetto.[ch]) continue ;; esac
	# comments blanked (their lines kept), then include guards skipped
	while IFS= read -r hit; do
		echo "$rel:${hit%%:*}: reads the wire format:${hit#*:}"
		bad=1
	done < <(perl -0pe 's{/\*.*?\*/}{$&=~s/[^\n]//gr}gse; s{//[^\n]*}{}g' "$f" |
		grep -nE '\b(gmt_[a-z_]+|GMT_[A-Z0-9_]+)\b' |
		grep -vE '^[0-9]+:[[:space:]]*#[[:space:]]*(ifndef|define|endif)[[:space:]]+GMT_[A-Z0-9_]+_H\b' |
		sed 's/:[[:space:]]*/: /')
done
exit $bad
