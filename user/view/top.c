// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the curses front end of top_layout.c, and the plain-lines mode */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/findings.h"
#include "top.h"
#include "top_layout.h"

#define MAX_LINES 256
#define MIN_REFRESH 0.1
#define MAX_REFRESH 10.0

struct top {
	struct top_opts o;
	struct top_state st;
	struct top_line *lines;
	__u64 last_draw, last_events, last_wall;
	struct findings *fs;	      /* the verdicts, rebuilt when their cost allows */
	const struct findings *final; /* at the end: the run's, not the view's */
	__u64 fs_wall, fs_cost;
	int saved_stderr; /* stderr while the screen is ours; -1 when not */
	FILE *held;	  /* what was written to stderr meanwhile */
	bool tui, drawn, dirty;
};

static __u64 wall_ns(void)
{
	return event__now_ns();
}

/* messages on stderr would tear the screen: hold them for afterwards */
static void hold_stderr(struct top *t)
{
	t->held = tmpfile();
	t->saved_stderr = t->held ? dup(2) : -1;
	if (t->saved_stderr >= 0) {
		fflush(stderr);
		dup2(fileno(t->held), 2);
	}
}

static void release_stderr(struct top *t)
{
	char buf[4096];
	size_t n;

	if (t->saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(t->saved_stderr, 2);
	close(t->saved_stderr);
	t->saved_stderr = -1;
	rewind(t->held);
	while ((n = fread(buf, 1, sizeof(buf), t->held)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(t->held);
	t->held = NULL;
}

static void colors(void)
{
	if (!has_colors())
		return;
	start_color();
	use_default_colors();
	init_pair(1, COLOR_RED, -1);
	init_pair(2, COLOR_GREEN, -1);
	init_pair(3, COLOR_CYAN, -1);
}

static attr_t attr_of(unsigned char a)
{
	bool c = has_colors();

	switch (a) {
	case TA_TITLE:
		return A_BOLD | (c ? COLOR_PAIR(3) : 0);
	case TA_HEAD:
		return A_BOLD;
	case TA_FOCUS:
		return A_REVERSE | A_BOLD;
	case TA_ALERT:
		return A_BOLD | (c ? COLOR_PAIR(1) : 0);
	case TA_GOOD:
		return A_BOLD | (c ? COLOR_PAIR(2) : 0);
	case TA_DIM:
		return A_DIM;
	case TA_STATUS:
		return A_REVERSE;
	default:
		return A_NORMAL;
	}
}

struct top *top__new(const struct top_opts *o)
{
	struct top *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->o = *o;
	t->st.refresh_s = o->refresh_s > 0 ? o->refresh_s : 1;
	t->st.replay = o->replay;
	t->st.speed = o->speed > 0 ? o->speed : 1;
	t->st.recording = o->recording;
	t->saved_stderr = -1;
	t->tui = o->tui;
	if (t->tui) {
		t->lines = calloc(MAX_LINES, sizeof(*t->lines));
		hold_stderr(t);
		/* newterm, not initscr: a terminal it cannot use is an error
		 * to report, not an exit */
		if (!t->lines || !newterm(NULL, stdout, stdin)) {
			release_stderr(t);
			free(t->lines);
			free(t);
			return NULL;
		}
		cbreak();
		noecho();
		nodelay(stdscr, TRUE);
		keypad(stdscr, TRUE);
		curs_set(0);
		colors();
	}
	return t;
}

int top__fd(const struct top *t)
{
	return t && t->tui ? 0 : -1;
}

bool top__paused(const struct top *t)
{
	return t && t->st.paused;
}

/* verdicts cost more as a run grows: rebuilt at most once per twenty times
 * what the last build took, so the view keeps to about 5% of a core */
static const struct findings *verdicts(struct top *t)
{
	__u64 wall = wall_ns();

	if (t->final)
		return t->final;
	if (t->fs && wall - t->fs_wall < t->fs_cost * 20 && !t->st.finished)
		return t->fs;
	findings__free(t->fs);
	t->fs = findings__build(t->o.model);
	t->fs_wall = wall_ns();
	t->fs_cost = t->fs_wall - wall;
	return t->fs;
}

static void draw(struct top *t)
{
	const struct findings *fs = verdicts(t);
	size_t n, i, k;
	int rows, cols;

	if (!t->tui) {
		char buf[1024];

		top__plain(t->o.model, fs, &t->st, buf, sizeof(buf));
		if (t->o.plain) {
			fprintf(t->o.plain, "%s\n", buf);
			fflush(t->o.plain);
		}
		return;
	}
	/* a command started with -- CMD may write to the same terminal: paint
	 * it all each time */
	clearok(curscr, TRUE);
	getmaxyx(stdscr, rows, cols);
	n = top__layout(t->o.model, fs, &t->st, rows, cols, t->lines, MAX_LINES);
	erase();
	for (i = 0; i < n; i++) {
		const struct top_line *l = &t->lines[i];

		attrset(attr_of(l->attr));
		mvaddnstr(i, 0, l->text, cols);
		for (k = 0; k < l->nspan; k++) {
			attrset(attr_of(l->span[k].attr));
			mvaddnstr(i, l->span[k].at, l->text + l->span[k].at, l->span[k].len);
		}
		if (l->attr == TA_STATUS) { /* the status bar spans the width */
			attrset(attr_of(TA_STATUS));
			for (k = strlen(l->text); k < (size_t)cols; k++)
				mvaddch(i, k, ' ');
		}
	}
	attrset(A_NORMAL);
	refresh();
}

/* a key; true for q */
static bool key(struct top *t, int c)
{
	if (t->st.help && c != ERR && c != KEY_RESIZE) {
		t->st.help = false;
		return false;
	}
	switch (c) {
	case 'q':
	case 'Q':
		return true;
	case 'p':
	case ' ':
		t->st.paused = !t->st.paused;
		break;
	case 'h':
	case '?':
		t->st.help = true;
		break;
	case '\t':
		t->st.focus = (t->st.focus + 1) % TP_NR;
		break;
	case 's':
		if (t->st.focus == TP_MEMORY)
			t->st.mem_sort = (t->st.mem_sort + 1) % TS_MEM_NR;
		else if (t->st.focus == TP_REQUESTS)
			t->st.req_sort = (t->st.req_sort + 1) % TS_REQ_NR;
		break;
	case '+':
	case '=':
		t->st.refresh_s =
			t->st.refresh_s * 2 > MAX_REFRESH ? MAX_REFRESH : t->st.refresh_s * 2;
		break;
	case '-':
		t->st.refresh_s =
			t->st.refresh_s / 2 < MIN_REFRESH ? MIN_REFRESH : t->st.refresh_s / 2;
		break;
	case 'r':
		t->st.baseline_ts = t->st.now;
		break;
	case KEY_RESIZE:
		break;
	default:
		return false;
	}
	t->dirty = true;
	return false;
}

bool top__tick(struct top *t, __u64 now)
{
	__u64 wall = wall_ns();
	int c;

	if (!t)
		return false;
	while (t->tui && (c = getch()) != ERR)
		if (key(t, c))
			return true;
	if (t->st.paused && !t->dirty)
		return false;
	if (!t->dirty && t->drawn && wall - t->last_draw < t->st.refresh_s * 1e9)
		return false;
	if (!t->st.paused) {
		t->st.now = now;
		if (!t->st.baseline_ts)
			t->st.baseline_ts = t->o.model->start_ts;
		if (t->last_wall && wall > t->last_wall)
			t->st.events_per_s = (t->o.model->events - t->last_events) /
					     ((wall - t->last_wall) / 1e9);
		t->last_events = t->o.model->events;
		t->last_wall = wall;
		top__sample(t->o.model, &t->st);
	}
	draw(t);
	t->drawn = true;
	t->dirty = false;
	t->last_draw = wall;
	return false;
}

void top__wait_end(struct top *t, const struct findings *fs, __u64 now)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	if (!t || !t->tui)
		return;
	t->st.finished = true;
	t->final = fs;
	t->dirty = true;
	for (;;) {
		if (top__tick(t, now))
			return;
		poll(&pfd, 1, 250);
	}
}

void top__end(struct top *t)
{
	if (!t)
		return;
	if (t->tui) {
		endwin();
		release_stderr(t);
	}
	findings__free(t->fs);
	free(t->lines);
	free(t);
}
