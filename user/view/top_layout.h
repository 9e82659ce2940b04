/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The live view's screen as lines of text with highlighted spans, from the
 * model and the view's state alone: no curses here, so it is unit tested
 * and the plain-lines mode shares it. */
#ifndef GMT_TOP_LAYOUT_H
#define GMT_TOP_LAYOUT_H

#include "analysis/categories.h"
#include "analysis/findings.h"

#define TOP_MAX_COLS 512
#define TOP_SPANS 4
#define TOP_HISTORY 64

enum top_attr {
	TA_NORMAL,
	TA_TITLE,  /* a panel's title */
	TA_HEAD,   /* column headings */
	TA_FOCUS,  /* the focused panel's title */
	TA_ALERT,  /* lost events, failures, a leak */
	TA_GOOD,   /* steady */
	TA_DIM,	   /* hints */
	TA_STATUS, /* the header line */
};

struct top_line {
	char text[TOP_MAX_COLS + 1];
	unsigned char attr; /* the whole line */
	struct {
		unsigned short at, len;
		unsigned char attr;
	} span[TOP_SPANS];
	unsigned int nspan;
};

enum top_panel { TP_MEMORY, TP_REQUESTS, TP_EVENTS, TP_NR };
enum top_mem_sort { TS_CURRENT, TS_RATE, TS_NAME, TS_MEM_NR };
enum top_req_sort { TS_NEWEST, TS_LATENCY, TS_DELTA, TS_REQ_NR };

/* one category's recent levels, sampled at each refresh */
struct top_history {
	char name[32];
	double v[TOP_HISTORY];
	unsigned int n, head;
};

struct top_state {
	__u64 now;	      /* the stream's time of this frame */
	__u64 baseline_ts;    /* r: rates and deltas count from here */
	double refresh_s;     /* +/- */
	enum top_panel focus; /* tab */
	int mem_sort, req_sort;
	bool paused, help;
	bool replay;   /* replay --live: say so */
	bool finished; /* the recording has been played to its end */
	double speed;
	double events_per_s;
	const char *recording; /* -o FILE, or the file replayed */
	struct top_history hist[CAT_MAX];
	size_t nr_hist;
};

/* samples each category's level at st->now into the history */
void top__sample(const struct model *m, struct top_state *st);
/* lays the screen out in rows x cols; returns the number of lines */
size_t top__layout(const struct model *m, const struct findings *fs, const struct top_state *st,
		   int rows, int cols, struct top_line *out, size_t max);
/* one plain line, for a log or a pipe: time, memory, requests, verdicts */
void top__plain(const struct model *m, const struct findings *fs, const struct top_state *st,
		char *buf, size_t size);
/* a sparkline of v[0..n) in width characters, in ASCII */
void top__spark(const double *v, unsigned int n, char *buf, size_t width);

#endif
