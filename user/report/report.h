/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the report, as text or JSON (fields in docs/json.md), from the model and
 * the one analysis pass its caller made (findings__build) */
#ifndef GMT_REPORT_H
#define GMT_REPORT_H

#include <stdio.h>
#include "model/model.h"

struct report_opts {
	/* problems found in a damaged trace file, shown with the report */
	const char (*notes)[160];
	unsigned int nr_notes;
	/* mappings listed per process */
	unsigned int max_mappings;
	/* rows of the RSS timeline */
	unsigned int timeline_rows;
};

struct findings;
void report__text(FILE *out, const struct model *m, const struct findings *fs,
		  const struct report_opts *opts);
int report__json(FILE *out, const struct model *m, const struct findings *fs,
		 const struct report_opts *opts);
/* the Prometheus text format: the processes still running (report_prom.c) */
void report__prometheus(FILE *out, const struct model *m, const struct findings *fs);

#endif
