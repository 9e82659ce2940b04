// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* evictions of a process's buffers from VRAM, against its decode rate */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "findings.h"
#include "common/fmt.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
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
	char comm[MODEL_COMM_LEN] = "", a[32], b[32], c[32], tail[256] = "";
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
	finding__evidence(f,
			  "%zu evictions of this process's buffers from VRAM by PID %u (%s), "
			  "%.2f s to %.2f s",
			  count, who, comm, model__secs(m, first), model__secs(m, last));
	finding__evidence(f, "its VRAM-resident buffers: %s before, %s at the end",
			  B(a, vram_before), B(b, vram_now));
	if (ev && ev->created_bytes) {
		finding__num(f, "evictor_created_bytes", ev->created_bytes);
		snprintf(tail, sizeof(tail), " while PID %u (%s) allocated %s", who, comm,
			 B(c, ev->created_bytes));
	}
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
		finding__evidence(f,
				  "decode rate: median %.1f tok/s over %zu requests before, %.1f "
				  "tok/s over %zu after (a rate before beats one after %.0f%% of "
				  "the time)",
				  a_med, nb, b_med, na, pr * 100);
	}
	size_t len = snprintf(f->message, sizeof(f->message),
			      "at %.2f s, %s of this process's buffers moved out of VRAM%s; ",
			      model__secs(m, first), B(a, bytes), tail);
	if (out <= 0)
		len += snprintf(f->message + len, sizeof(f->message) - len,
				"by the end, %s had moved back and %s was freed.", B(a, back),
				B(b, gone));
	else if (back > 0 || gone > 0)
		len += snprintf(f->message + len, sizeof(f->message) - len,
				"%s is still out of VRAM (%s moved back, %s was freed)", B(a, out),
				B(b, back), B(c, gone));
	else
		len += snprintf(f->message + len, sizeof(f->message) - len, "none moved back");
	if (out > 0 && ev && !ev->live && ev->last_free_ts)
		len += snprintf(f->message + len, sizeof(f->message) - len,
				" after PID %u freed its buffers at %.2f s.", who,
				model__secs(m, ev->last_free_ts));
	else if (out > 0)
		len += snprintf(f->message + len, sizeof(f->message) - len, " by the end.");
	if (nb && na && z >= Z95_ONE_SIDED)
		snprintf(f->message + len, sizeof(f->message) - len,
			 " Decode rate %.1f -> %.1f tok/s (%zu requests before, %zu after)%s",
			 a_med, b_med, nb, na,
			 back < bytes ?
				 ": the buffers the GPU reads now sit in system memory. "
				 "What to try: the driver does not move them back by itself; "
				 "restart the server or keep other programs within free VRAM." :
				 ".");
	else if (nb && na)
		snprintf(f->message + len, sizeof(f->message) - len,
			 " The decode rate did not clearly fall: %.1f -> %.1f tok/s (%zu requests "
			 "before, %zu after).",
			 a_med, b_med, nb, na);
	else
		snprintf(f->message + len, sizeof(f->message) - len,
			 " No decode rates on both sides to compare.");
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
