/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The live view: full screen (ncurses) on a terminal, else one plain line
 * per refresh on stderr. It reads the model the stream builds; it never
 * changes it. */
#ifndef GMT_TOP_H
#define GMT_TOP_H

#include <stdbool.h>
#include <stdio.h>
#include "model/model.h"

struct top_opts {
	const struct model *model;
	const char *recording; /* -o FILE, or the file replayed */
	bool replay;
	double speed;
	double refresh_s;
	bool tui; /* full screen; else plain lines to `plain` (NULL: none) */
	FILE *plain;
};

struct top;

/* NULL when the terminal cannot be used (then plain lines are the way) */
struct top *top__new(const struct top_opts *o);
/* the fd that wakes the view (its keys); -1 in plain mode */
int top__fd(const struct top *t);
/* handles keys and draws when due; `now` is the stream's clock. Returns
 * true when the user quit */
bool top__tick(struct top *t, __u64 now);
bool top__paused(const struct top *t);
struct findings;
/* the recording has been played out: say so, show fs (the run's one
 * analysis pass, main's; kept by the caller) and wait for q */
void top__wait_end(struct top *t, const struct findings *fs, __u64 now);
/* leaves the full screen; what went to stderr meanwhile follows */
void top__end(struct top *t);

#endif
