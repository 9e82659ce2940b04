// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* what every section of the report uses (report_data.h): names of the
 * model's numbers, figures computed once from it, and stacks */
#include <json-c/json.h>
#include "common/json_util.h"
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "report_data.h"

const char *const rss_member_names[MODEL_RSS_NR] = { "file", "anon", "swap", "shmem" };
const char *const fault_class_names[MODEL_FAULT_NR] = { "anon", "file", "device", "other" };
const char *const source_names[MODEL_SRC_NR] = { "proc", "rss", "fault", "mmap",
						 "gpu",	 "bo",	"http",	 "decode" };
const int rss_member_order[MODEL_RSS_NR] = { MODEL_RSS_ANON, MODEL_RSS_FILE, MODEL_RSS_SHMEM,
					     MODEL_RSS_SWAP };

const char *probe_status_name(__u32 status)
{
	switch (status) {
	case MODEL_PROBE_ATTACHED:
		return "attached";
	case MODEL_PROBE_SKIPPED:
		return "skipped";
	case MODEL_PROBE_FAILED:
		return "failed";
	}
	return "unknown";
}

const char *end_reason_text(__u32 reason)
{
	switch (reason) {
	case MODEL_END_TARGET_EXIT:
		return "until the target exited";
	case MODEL_END_SIGNAL:
		return "until interrupted";
	case MODEL_END_DURATION:
		return "for the --duration asked";
	case MODEL_END_ERROR:
		return "until an error stopped tracing";
	}
	return "until the recording ended without an end record";
}

const char *end_reason_key(__u32 reason)
{
	switch (reason) {
	case MODEL_END_TARGET_EXIT:
		return "target_exit";
	case MODEL_END_SIGNAL:
		return "signal";
	case MODEL_END_DURATION:
		return "duration";
	case MODEL_END_ERROR:
		return "error";
	}
	return "unknown";
}

const char *fd_class_name(__u32 cls)
{
	switch (cls) {
	case MODEL_FD_ANON:
		return "anon";
	case MODEL_FD_FILE:
		return "file";
	case MODEL_FD_DEVICE:
		return "device";
	}
	return "other";
}

void member_stats(const struct model *m, const struct series *s, struct member_stats *st)
{
	double secs = model__duration_ns(m) / 1e9;

	*st = (struct member_stats){ .events = s->n };
	if (!s->n)
		return;
	st->seen = true;
	st->start = s->p[0].v;
	st->end = s->p[s->n - 1].v;
	st->peak = series__peak(s);
	st->rate = secs > 0 ? (st->end - st->start) / secs : 0;
}

struct model_proc **procs_in_order(const struct model *m)
{
	struct model_proc **v = calloc(m->nr_procs + 1, sizeof(*v));
	size_t i, n = 0;

	if (!v)
		return NULL;
	for (i = 0; i < m->nr_procs; i++)
		if (m->procs[i]->pid == m->target_pid)
			v[n++] = m->procs[i];
	for (i = 0; i < m->nr_procs; i++)
		if (m->procs[i]->pid != m->target_pid)
			v[n++] = m->procs[i];
	return v;
}

static int by_size(const void *a, const void *b, void *ctx)
{
	const struct model_proc *p = ctx;
	const struct model_mapping *x = &p->maps[*(const size_t *)a];
	const struct model_mapping *y = &p->maps[*(const size_t *)b];

	if (x->len != y->len)
		return x->len < y->len ? 1 : -1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

size_t *mappings_by_size(const struct model_proc *p)
{
	size_t *idx = calloc(p->nr_maps + 1, sizeof(*idx));
	size_t i;

	if (!idx)
		return NULL;
	for (i = 0; i < p->nr_maps; i++)
		idx[i] = i;
	qsort_r(idx, p->nr_maps, sizeof(*idx), by_size, (void *)p);
	return idx;
}

/* a process's timeline runs from its program's start (exec during the run,
 * else the first record) to its exit or the end of tracing */
static void timeline_span(const struct model *m, const struct model_proc *p, __u64 *from, __u64 *to)
{
	*from = p->exec_ts ? p->exec_ts : p->first_ts;
	*to = p->exited ? p->exit_ts : m->start_ts + model__duration_ns(m);
	if (*to < *from)
		*to = *from;
}

unsigned int timeline_rows(const struct model *m, const struct model_proc *p,
			   const struct report_opts *o)
{
	unsigned int n = o && o->timeline_rows ? o->timeline_rows : 12;
	__u64 from, to;

	timeline_span(m, p, &from, &to);
	return to > from ? n : 1;
}

__u64 timeline_ts(const struct model *m, const struct model_proc *p, unsigned int i, unsigned int n)
{
	__u64 from, to;

	timeline_span(m, p, &from, &to);
	if (n < 2)
		return to;
	return from + (to - from) * i / (n - 1);
}

__u64 lost_total(const struct model *m)
{
	__u64 t = 0;
	int i;

	for (i = 0; i < MODEL_SRC_NR; i++)
		t += m->lost[i];
	return t;
}

bool faults_classified(const struct model *m)
{
	size_t i;

	/* by the fexit, whichever hook counts the faults. Recordings made
	 * before the perf event's program stopped classing them (it did so
	 * where the fexit was skipped, saying so) are read as they were made. */
	for (i = 0; i < m->nr_probes; i++)
		if (!strcmp(m->probes[i].name, "fexit:handle_mm_fault"))
			return m->probes[i].status == MODEL_PROBE_ATTACHED ||
			       strstr(m->probes[i].reason, "perf:page-faults classes them");
	return false;
}

void print_stack(FILE *out, const struct model *m, __u32 id)
{
	const struct model_stack *s = model__stack(m, id);
	unsigned int i;

	if (!id)
		return;
	if (!s || !s->nr_frames) {
		fprintf(out, "        (no user stack)\n");
		return;
	}
	for (i = 0; i < s->nr_frames; i++) {
		const struct model_frame *f = &s->frames[i];

		if (f->sym[0])
			fprintf(out, "        %s+0x%llx (%s)\n", f->sym,
				(unsigned long long)f->sym_off, f->module);
		else
			fprintf(out, "        0x%llx (%s+0x%llx)\n", (unsigned long long)f->ip,
				f->module[0] ? f->module : "?", (unsigned long long)f->sym_off);
	}
}

struct json_object *stack_json(const struct model *m, __u32 id)
{
	const struct model_stack *s = model__stack(m, id);
	struct json_object *a;
	unsigned int i;

	if (!id || !s)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < s->nr_frames; i++) {
		struct json_object *f = json_object_new_object();

		add(f, "ip", u64(s->frames[i].ip));
		add(f, "symbol", str(s->frames[i].sym));
		add(f, "offset", u64(s->frames[i].sym_off));
		add(f, "module", str(s->frames[i].module));
		json_object_array_add(a, f);
	}
	return a;
}
