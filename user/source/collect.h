/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the live source: session and probe records, the ring buffer, periodic
 * samples, stacks symbolized into records; everything goes to one sink */
#ifndef GMT_COLLECT_H
#define GMT_COLLECT_H

#include <stdbool.h>
#include "attach.h"
#include "stream/event.h"

struct collect_opts {
	double interval_s;
	double duration_s;   /* 0: until the target exits or a signal */
	const char *cmdline; /* the target's, for the session record */
	__u32 session_flags; /* GMT_SESSION_* */
	bool spawned;	     /* the target is a command we started */
	gmt_sink_fn sink;
	void *ctx;
	/* called at least once a second, for the recorder's flush */
	void (*tick)(void *ctx, __u64 now_ns);
	/* the live view: called when ui_fd (-1: none) is readable and at every
	 * wake-up, at least four times a second; true stops tracing */
	int ui_fd;
	bool (*ui)(void *ctx, __u64 now);
	bool quiet;
	int tokens;	       /* enum gpulib_tokens: llama.cpp's per-token probes */
	const char *debug_dir; /* separate debug files; NULL: /usr/lib/debug */
	/* --watch: every GPU process, and those named comms[] */
	bool watch;
	const char *const *comms;
	size_t nr_comms;
};

/* runs until the target exits (never with --watch), SIGINT/SIGTERM or the
 * duration; the stream
 * always ends with an END record. 0, or -errno with `err` set. */
int collect__run(struct attach *a, const struct collect_opts *o, char *err, size_t size);

#endif
