# The live view: in a terminal, as plain lines, and a recording played live.
# Run by tests/run.sh: each test_* function runs in its own shell, in the temp
# dir $T, with helpers from tests/lib.sh (and every tests file). Return 0 to pass.

# The live view in a real terminal: tmux runs gpumemtrace on the workload;
# what the panes show is read back. Each wait is for text on the screen.
pane() { tmux -L "$TMUX_SOCK" capture-pane -t v -p "$@"; }

keys() { tmux -L "$TMUX_SOCK" send-keys -t v "$@"; }

wait_screen() { # wait_screen PATTERN [WHAT]: up to 20 s for grep -E PATTERN
	local i
	for ((i = 0; i < 200; i++)); do
		pane -S -300 | grep -qE "$1" && return 0
		read -r -t 0.1 <> <(:) || true
	done
	echo "# the screen never showed /$1/${2:+ ($2)}:"
	pane | sed 's/^/#   /'
	return 1
}

test_live_view_in_a_terminal() {
	need_root
	command -v tmux >/dev/null || skip "tmux is not installed (make deps installs it)"
	TMUX_SOCK=gmt$$
	trap 'tmux -L "$TMUX_SOCK" kill-server 2>/dev/null' RETURN
	tmux -L "$TMUX_SOCK" new-session -d -s v -x 120 -y 40 \
		"TERM=xterm-256color $GMT -i 0.2 -- $WL --steps 200 --step-mib 2 --step-ms 100 --out /dev/null; echo EXIT=\$?; sleep 600" ||
		return 1
	wait_screen 'host heap \(anonymous RSS\) +[0-9.]+ [KMG]iB' "the memory panel" || return 1
	wait_screen '^LEAK +host heap' "the verdict, live" || return 1
	expect 'pane | head -1 | grep -q "pid [0-9]* workload"' "the header names the target" || return 1
	expect 'pane | grep -q "^REQUESTS" && pane | grep -q "^EVENTS" && pane | grep -q "q quit"' \
		"the panels and the keys" || return 1
	keys p
	wait_screen 'PAUSED' "p pauses" || return 1
	keys p
	for ((i = 0; i < 200; i++)); do pane | grep -q PAUSED || break; read -r -t 0.1 <> <(:) || true; done
	expect '! pane | grep -q PAUSED' "p again resumes" || return 1
	keys s
	wait_screen '^MEMORY \(by rate\)' "s sorts the memory panel" || return 1
	keys Tab s
	wait_screen 'sorted by latency' "tab moves the focus to the requests" || return 1
	tmux -L "$TMUX_SOCK" resize-window -t v -x 60 -y 16
	wait_screen '^MEMORY \(by rate\) ' "still laid out at 60x16" || return 1
	expect '[ "$(pane | awk "{ if (length > 60) n++ } END { print n + 0 }")" = 0 ]' \
		"no line wider than the terminal" || return 1
	tmux -L "$TMUX_SOCK" resize-window -t v -x 30 -y 6
	wait_screen 'panels need' "a tiny terminal says what it needs" || return 1
	tmux -L "$TMUX_SOCK" resize-window -t v -x 120 -y 40
	keys q
	wait_screen 'EXIT=0' "q quits" || return 1
	expect 'pane -S -300 | grep -q "^Verdicts"' "and the report follows" || return 1
	expect 'pane -S -300 | grep -q "LEAK: host heap"' "with the same verdict" || return 1
}

test_plain_lines_when_not_a_terminal() {
	need_root
	"$GMT" -i 0.2 -- "$WL" --steps 20 --step-mib 4 --step-ms 100 --out /dev/null \
		>"$T/r.txt" 2>"$T/err" || return 1
	expect '[ "$(grep -c "^gpumemtrace: *[0-9.]* s .*host_anon" "$T/err")" -ge 5 ]' \
		"a line each interval: $(head -3 "$T/err")" || return 1
	expect 'grep -q "| leak host_anon" "$T/err"' "with the verdict so far" || return 1
	expect 'grep -q "^Verdicts" "$T/r.txt"' "and the report on stdout" || return 1
	"$GMT" -q -i 0.2 -- "$WL" --steps 4 --step-ms 100 --out /dev/null >/dev/null 2>"$T/quiet" ||
		return 1
	expect '[ ! -s "$T/quiet" ]' "-q: nothing on stderr: $(head -3 "$T/quiet")" || return 1
}

test_replay_live_plays_a_recording() {
	"$ROOT/.output/gmt-scenario" host-cache "$T/h.gmt" 3 || return 1
	"$GMT" replay --live --speed 50 "$T/h.gmt" >"$T/r.txt" 2>"$T/err" || return 1
	expect '[ "$(grep -c "^gpumemtrace: " "$T/err")" -ge 2 ]' "lines as it plays: $(cat "$T/err")" ||
		return 1
	expect 'grep -q "bounded_cache host_anon" "$T/err"' "the verdict appears while it plays" || return 1
	"$GMT" replay "$T/h.gmt" >"$T/plain.txt" || return 1
	expect 'cmp -s "$T/r.txt" "$T/plain.txt"' "the same report as a plain replay" || return 1
	expect '! "$GMT" replay --speed 2 "$T/h.gmt" 2>/dev/null' "--speed needs --live" || return 1
}
