/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* what every section of the report uses: the names of the model's
 * numbers, figures computed from it, and stacks (report.h says the rule) */
#ifndef GMT_REPORT_DATA_H
#define GMT_REPORT_DATA_H

#include <stdio.h>
#include "model/model.h"

struct report_opts;

struct member_stats {
	bool seen;
	__s64 start, end, peak;
	double rate; /* bytes per second over the traced time */
	size_t events;
};

extern const char *const rss_member_names[MODEL_RSS_NR];
extern const char *const fault_class_names[MODEL_FAULT_NR];
extern const char *const source_names[MODEL_SRC_NR];
/* display order of RSS members */
extern const int rss_member_order[MODEL_RSS_NR];

const char *probe_status_name(__u32 status);
const char *end_reason_text(__u32 reason);
const char *end_reason_key(__u32 reason);
const char *fd_class_name(__u32 cls);

void member_stats(const struct model *m, const struct series *s, struct member_stats *st);
/* processes in report order: the target first; caller frees */
struct model_proc **procs_in_order(const struct model *m);
/* indices of p->maps, largest first; caller frees */
size_t *mappings_by_size(const struct model_proc *p);
/* timestamp of timeline row i of n */
__u64 timeline_ts(const struct model *m, const struct model_proc *p, unsigned int i,
		  unsigned int n);
unsigned int timeline_rows(const struct model *m, const struct model_proc *p,
			   const struct report_opts *o);
__u64 lost_total(const struct model *m);
/* whether faults were told apart by class (the fexit probe attached) */
bool faults_classified(const struct model *m);

/* a stack's frames, one a line under what it holds (text), or an array
 * of frames (JSON; NULL for stack 0 or one not known): every section that
 * names a stack shows it so */
void print_stack(FILE *out, const struct model *m, __u32 id);
struct json_object;
struct json_object *stack_json(const struct model *m, __u32 id);

#endif
