// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What a process waited on, each interval (its faults, a CPU, its quota,
 * pressure), the host's paging and load, and the files a process maps:
 * what tells why a request was slow */
#include <stdlib.h>
#include <string.h>
#include "model_int.h"
#include <stddef.h>
#include "common/fmt.h"
#include "common/search.h"

#define SAME(a, b) _Static_assert((int)(a) == (int)(b), #a)
SAME(MODEL_WAITS_SCHED, GMT_PSTAT_SCHED);
SAME(MODEL_WAITS_CPU_STAT, GMT_PSTAT_CPU_STAT);
SAME(MODEL_WAITS_PSI, GMT_PSTAT_PSI);
SAME(MODEL_WAITS_PSI_CGROUP, GMT_PSTAT_PSI_CGROUP);
SAME(MODEL_WAITS_CPU_V2, GMT_PSTAT_CPU_V2);
SAME(MODEL_WAITS_IO, GMT_PSTAT_IO);
SAME(MODEL_WAITS_REFAULTS, GMT_PSTAT_REFAULTS);
SAME(MODEL_HOST_PSI, GMT_HSTAT_PSI);
SAME(MODEL_FILES, GMT_FILE_RSS_MAX);
_Static_assert(MODEL_W_NR <= MODEL_TICK_VALUES && MODEL_H_NR <= MODEL_TICK_VALUES, "tick values");

/* a point; at MODEL_TICKS_MAX every other one goes (the counters are
 * cumulative: what goes is detail, not counts) */
static struct model_tick *tick_add(struct model_ticks *t, __u64 ts)
{
	size_t i, k;

	if (t->n && ts < t->p[t->n - 1].ts)
		ts = t->p[t->n - 1].ts; /* clocks a moment apart: keep the order */
	if (t->n >= MODEL_TICKS_MAX) {
		for (i = 1, k = 1; i < t->n; i += 2)
			t->p[k++] = t->p[i];
		t->n = k;
	}
	if (model__grow((void **)&t->p, &t->cap, t->n, sizeof(*t->p)))
		return NULL;
	memset(&t->p[t->n], 0, sizeof(t->p[t->n]));
	t->p[t->n].ts = ts;
	return &t->p[t->n++];
}

void model_ticks__free(struct model_ticks *t)
{
	free(t->p);
	t->p = NULL;
	t->n = t->cap = 0;
}

double model_ticks__delta(const struct model_ticks *t, int i, __u64 from, __u64 to)
{
	double sum = 0;
	size_t k;

	if (!t->n || to < from || t->p[t->n - 1].ts < to)
		return -1;
	/* from the interval that holds `from` */
	k = search__after(t->p, t->n, sizeof(*t->p), offsetof(struct model_tick, ts), from);
	for (k = k ? k : 1; k < t->n; k++) {
		__u64 a = t->p[k - 1].ts, b = t->p[k].ts, lo, hi;
		__u64 x = t->p[k - 1].v[i], y = t->p[k].v[i];

		if (b <= from)
			continue;
		if (a >= to)
			break;
		if (y <= x || b <= a)
			continue;
		lo = a > from ? a : from;
		hi = b < to ? b : to;
		/* a window within one interval: its part of that interval's growth */
		sum += (double)(y - x) * (hi - lo) / (b - a);
	}
	return sum;
}

bool model_ticks__at(const struct model_ticks *t, int i, __u64 ts, __u64 *v)
{
	size_t k;

	if (!t->n)
		return false;
	k = search__after(t->p, t->n, sizeof(*t->p), offsetof(struct model_tick, ts), ts);
	*v = t->p[k ? k - 1 : 0].v[i];
	return true;
}

void model_waits__proc(struct model_proc *p, const struct gmt_proc_stat *e)
{
	struct model_tick *x = tick_add(&p->waits, e->hdr.ts_ns);

	if (!x)
		return;
	x->v[MODEL_W_MINFLT] = e->minflt;
	x->v[MODEL_W_MAJFLT] = e->majflt;
	x->v[MODEL_W_CPU_NS] = e->cpu_ns;
	x->v[MODEL_W_RUN_NS] = e->run_ns;
	x->v[MODEL_W_DELAY_NS] = e->run_delay_ns;
	x->v[MODEL_W_PERIODS] = e->nr_periods;
	x->v[MODEL_W_THROTTLED] = e->nr_throttled;
	x->v[MODEL_W_THROTTLED_NS] = e->throttled_ns;
	x->v[MODEL_W_PSI_MEM_SOME] = e->psi_mem_some_us;
	x->v[MODEL_W_PSI_MEM_FULL] = e->psi_mem_full_us;
	x->v[MODEL_W_PSI_CPU_SOME] = e->psi_cpu_some_us;
	x->v[MODEL_W_PSI_IO_SOME] = e->psi_io_some_us;
	/* a period of 0 is no quota; a crafted one must not divide by it */
	x->v[MODEL_W_QUOTA_MILLI] =
		e->cpu_quota_us && e->cpu_period_us ?
			(e->cpu_quota_us > (1ull << 40) ? 1ull << 40 : e->cpu_quota_us) * 1000 /
				e->cpu_period_us :
			0;
	x->v[MODEL_W_CPUS] = e->cpus_allowed;
	x->v[MODEL_W_READ_BYTES] = e->read_bytes;
	x->v[MODEL_W_REFAULT_FILE] = e->refault_file;
	x->v[MODEL_W_REFAULT_ANON] = e->refault_anon;
	p->waits_flags = e->flags;
	/* the last cgroup whose quota bound it: a quota lifted says who had it */
	if (e->cpu_cgroup[0])
		fmt_clean(p->cpu_cgroup, sizeof(p->cpu_cgroup), e->cpu_cgroup,
			  strnlen(e->cpu_cgroup, sizeof(e->cpu_cgroup)));
}

void model_waits__host(struct model *m, const struct gmt_host_stat *e)
{
	struct model_tick *x = tick_add(&m->host_ticks, e->hdr.ts_ns);

	if (!x)
		return;
	x->v[MODEL_H_PSWPIN] = e->pswpin;
	x->v[MODEL_H_PSWPOUT] = e->pswpout;
	x->v[MODEL_H_PGMAJFAULT] = e->pgmajfault;
	x->v[MODEL_H_PSI_MEM_SOME] = e->psi_mem_some_us;
	x->v[MODEL_H_PSI_MEM_FULL] = e->psi_mem_full_us;
	x->v[MODEL_H_PSI_CPU_SOME] = e->psi_cpu_some_us;
	x->v[MODEL_H_PSI_IO_SOME] = e->psi_io_some_us;
	x->v[MODEL_H_RUNNING] = e->procs_running;
	x->v[MODEL_H_CPUS] = e->cpus_online;
	x->v[MODEL_H_AVAILABLE] = m->meminfo_seen ? m->mem_available : 0;
	x->v[MODEL_H_REFAULT_FILE] = e->refault_file;
	x->v[MODEL_H_REFAULT_ANON] = e->refault_anon;
	m->host_flags = e->flags;
}

void model_waits__files(struct model_proc *p, const struct gmt_file_rss *e)
{
	struct model_file old[MODEL_FILES];
	size_t nr_old = p->nr_files, i, k;
	const struct model_file *data;

	memcpy(old, p->files, sizeof(old));
	p->nr_files = 0;
	for (i = 0; i < e->nr && i < MODEL_FILES; i++) {
		struct model_file *f = &p->files[p->nr_files++];

		*f = (struct model_file){ .size = e->v[i].size,
					  .rss = e->v[i].rss,
					  .rss_min = e->v[i].rss,
					  .dev = e->v[i].dev,
					  .ino = e->v[i].ino,
					  .code = e->v[i].flags & 1 };
		fmt_clean(f->name, sizeof(f->name), e->v[i].name,
			  strnlen(e->v[i].name, sizeof(e->v[i].name)));
		/* the least resident it has been, over the snapshots */
		for (k = 0; k < nr_old; k++)
			if (old[k].dev == f->dev && old[k].ino == f->ino &&
			    old[k].rss_min < f->rss_min)
				f->rss_min = old[k].rss_min;
	}
	p->files_ts = e->hdr.ts_ns;
	data = model__data_file(p);
	if (data)
		series__add(&p->data_file_rss, e->hdr.ts_ns, data->rss, 0);
}

const struct model_file *model__data_file(const struct model_proc *p)
{
	size_t i;

	/* largest first: the first that is not code */
	for (i = 0; i < p->nr_files; i++)
		if (!p->files[i].code)
			return &p->files[i];
	return NULL;
}
