/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `replay --events`: the stream itself, one JSON object per line, as perf
 * script prints a perf.data file */
#ifndef GMT_DUMP_H
#define GMT_DUMP_H

#include <stdio.h>
#include "event.h"

struct dump {
	FILE *out;
	__u64 start_ts; /* the first event's: times print relative to it */
};

/* a gmt_sink_fn; ctx is a struct dump */
void dump__event(void *ctx, const struct gmt_hdr *e);

#endif
