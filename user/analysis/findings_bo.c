// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* evictions of a process's buffers from VRAM, against its decode rate */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "findings.h"

#define Z95_ONE_SIDED 1.645

static const struct model_bo *bo_of(const struct model *m, __u64 bo, __u64 ts)
{
	size_t i;

	/* the newest buffer at that address made before ts */
	for (i = m->nr_bos; i-- > 0;)
		if (m->bos[i].bo == bo && m->bos[i].ts <= ts)
			return &m->bos[i];
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Mann-Whitney: the chance a rate before beats one after, and its z */
static double auc(const double *x, size_t nx, const double *y, size_t ny, double *z)
{
	double u = 0, mu, sd;
	size_t i, j;

	for (i = 0; i < nx; i++)
		for (j = 0; j < ny; j++)
			u += x[i] > y[j] ? 1 : x[i] == y[j] ? 0.5 : 0;
	mu = nx * ny / 2.0;
	sd = sqrt(nx * ny * (nx + ny + 1) / 12.0);
	*z = sd > 0 ? (u - mu) / sd : 0;
	return nx && ny ? u / (nx * ny) : 0.5;
}

/* one finding per evictor: what left VRAM, whether it came back, and the
 * decode rate of the requests before the first and after the last move */
static void evictor(const struct model *m, const struct model_proc *p, __u32 who,
		    struct findings *fs)
{
	double before[512], after[512], bytes = 0, back = 0, gone = 0, z = 0, a_med = 0, b_med = 0;
	double pr, out;
	__u64 first = 0, last = 0;
	size_t i, nb = 0, na = 0, count = 0;
	char comm[MODEL_COMM_LEN] = "";
	const struct model_bo_owner *ev = NULL;
	struct finding *f;
	__s64 vram_before = 0, vram_now = 0;
	const struct series *vs = NULL;

	for (i = 0; i < m->nr_evictions; i++) {
		const struct model_eviction *e = &m->evictions[i];
		const struct model_bo *bo;

		if (e->owner != p->pid || e->evictor != who || e->from != MODEL_PL_VRAM)
			continue;
		if (!count++)
			first = e->ts;
		last = e->ts;
		bytes += e->size;
		memcpy(comm, e->evictor_comm, sizeof(comm) - 1);
		bo = bo_of(m, e->bo, e->ts);
		if (bo && bo->live && bo->place == MODEL_PL_VRAM)
			back += e->size;
		else if (bo && !bo->live)
			gone += e->size;
	}
	out = bytes - back - gone;
	if (!count)
		return;
	for (i = 0; i < m->nr_bo_owners; i++) {
		if (m->bo_owners[i].pid == who)
			ev = &m->bo_owners[i];
		if (m->bo_owners[i].pid == p->pid)
			vs = &m->bo_owners[i].vram;
	}
	if (vs) {
		series__at(vs, first - 1, &vram_before);
		series__at(vs, m->last_ts, &vram_now);
	}
	for (i = 0; i < p->nr_reqs; i++) {
		const struct model_request *r = &p->reqs[i];
		double rate = model_req__tokens_per_s(r);

		if (rate < 0)
			continue;
		if (r->done && r->end_ts <= first && nb < 512)
			before[nb++] = rate;
		else if (r->start_ts >= last && na < 512)
			after[na++] = rate;
	}
	f = findings__add(fs, F_EVICTION, p->pid);
	if (!f)
		return;
	snprintf(f->category, sizeof(f->category), "bo_vram");
	snprintf(f->where, sizeof(f->where), "kernel buffers in VRAM");
	f->since_s = model__secs(m, first);
	f->first = vram_before;
	f->last = vram_now;
	f->per_request = nb && na;
	finding__num(f, "evictor_pid", who);
	finding__str(f, "evictor_comm", comm);
	finding__num(f, "evicted_bytes", bytes);
	finding__num(f, "evictions", count);
	finding__num(f, "returned_bytes", back);
	finding__num(f, "freed_bytes", gone);
	finding__num(f, "still_out_bytes", out);
	finding__num(f, "first_s", model__secs(m, first));
	finding__num(f, "last_s", model__secs(m, last));
	EVIDENCE(f, E_EVICTIONS, .comm = comm, .count = count, .evictor = who,
		 .first = model__secs(m, first), .last = model__secs(m, last));
	EVIDENCE(f, E_VRAM_LEVELS, .before = vram_before, .end = vram_now);
	if (ev && ev->created_bytes)
		finding__num(f, "evictor_created_bytes", ev->created_bytes);
	f->confidence = 0.5;
	if (nb && na) {
		a_med = median_of(before, nb);
		b_med = median_of(after, na);
		pr = auc(before, nb, after, na, &z);
		f->confidence = pr;
		finding__num(f, "rate_before", a_med);
		finding__num(f, "rate_after", b_med);
		finding__num(f, "requests_before", nb);
		finding__num(f, "requests_after", na);
		EVIDENCE(f, E_DECODE_RATES, .before = a_med, .n_before = nb, .after = b_med,
			 .n_after = na, .share = pr);
	}
	SAY(f, M_EVICTED, .comm = comm, .seconds = model__secs(m, first), .bytes = bytes,
	    .evictor = who, .created = ev ? ev->created_bytes : 0);
	if (out <= 0)
		SAY(f, M_EVICT_RETURNED, .back = back, .freed = gone);
	else if (back > 0 || gone > 0)
		SAY(f, M_EVICT_STILL_OUT, .out = out, .back = back, .freed = gone);
	else
		SAY(f, M_EVICT_NONE_BACK);
	if (out > 0 && ev && !ev->live && ev->last_free_ts)
		SAY(f, M_EVICT_AFTER_FREE, .evictor = who,
		    .seconds = model__secs(m, ev->last_free_ts));
	else if (out > 0)
		SAY(f, M_EVICT_BY_END);
	if (nb && na && z >= Z95_ONE_SIDED)
		SAY(f, M_DECODE_FELL, .before = a_med, .after = b_med, .n_before = nb,
		    .n_after = na, .partly_back = back < bytes);
	else if (nb && na)
		SAY(f, M_DECODE_NOT_FELL, .before = a_med, .after = b_med, .n_before = nb,
		    .n_after = na);
	else
		SAY(f, M_DECODE_NO_RATES);
}

void findings__evictions(const struct model *m, const struct model_proc *p, struct findings *fs)
{
	__u32 seen[64];
	size_t i, j, n = 0;

	for (i = 0; i < m->nr_evictions; i++) {
		const struct model_eviction *e = &m->evictions[i];

		if (e->owner != p->pid || e->from != MODEL_PL_VRAM)
			continue;
		for (j = 0; j < n && seen[j] != e->evictor; j++)
			;
		if (j < n || n == 64)
			continue;
		seen[n++] = e->evictor;
		evictor(m, p, e->evictor, fs);
	}
}
