// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the levels a category is judged on: per request, or over time */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "findings_int.h"
#include "requests.h"
#include "common/fmt.h"

#define TIME_POINTS 64 /* samples over time when requests are too few */

static bool push(struct judged *j, double v, __u64 ts, const struct model_request *r, double x)
{
	j->y = realloc(j->y, (j->n + 1) * sizeof(*j->y));
	j->ts = realloc(j->ts, (j->n + 1) * sizeof(*j->ts));
	j->req = realloc(j->req, (j->n + 1) * sizeof(*j->req));
	j->x = realloc(j->x, (j->n + 1) * sizeof(*j->x));
	if (!j->y || !j->ts || !j->req || !j->x)
		return false;
	j->x[j->n] = x;
	j->y[j->n] = v;
	j->ts[j->n] = ts;
	j->req[j->n++] = r;
	return true;
}

void judged__free(struct judged *j)
{
	free(j->y);
	free(j->ts);
	free(j->req);
	free(j->x);
	j->x = NULL;
	j->y = NULL;
	j->ts = NULL;
	j->req = NULL;
	j->n = 0;
}

/* whether s has a point in (after, upto] */
bool sampled(const struct series *s, __u64 after, __u64 upto)
{
	size_t i = series__after(s, after);

	return i < s->n && s->p[i].ts <= upto;
}

/* one point per request (its level when it ended); over time when fewer
 * than MIN_POINTS requests */
void judged__levels(const struct model *m, const struct model_proc *p, struct judged *j)
{
	__u64 from, to, ts;
	double v;
	size_t i, n;

	/* the level before the first request, then after each */
	if (p->nr_reqs && category__level(&j->c, p->reqs[0].start_ts, &v))
		j->base = push(j, v, p->reqs[0].start_ts, &p->reqs[0], 0);
	for (i = 0; i < p->nr_reqs; i++) {
		ts = requests__end(m, &p->reqs[i]);
		/* a driver counter is sampled each interval: a request with no
		 * sample of its own would repeat an older level */
		if (j->c.cls == CAT_DRIVER && !sampled(j->c.s, j->n ? j->ts[j->n - 1] : 0, ts))
			continue;
		if (category__level(&j->c, ts, &v))
			push(j, v, ts, &p->reqs[i], i + 1);
	}
	j->per_request = j->n >= MIN_POINTS;
	if (j->per_request)
		return;
	judged__free(j);
	j->base = false;
	from = j->c.zero_before ? p->first_ts : j->c.s->p[0].ts;
	to = p->exited ? p->exit_ts : m->last_ts;
	if (to <= from)
		return;
	/* as many points as samples were taken, so a short run says nothing */
	n = m->interval_ms ? (to - from) / (m->interval_ms * 1000000ull) + 1 : TIME_POINTS;
	if (n < MIN_POINTS)
		return;
	n = n > TIME_POINTS ? TIME_POINTS : n;
	j->dt = (to - from) / 1e9 / (n - 1);
	for (i = 0; i < n; i++) {
		ts = from + (to - from) * i / (n - 1);
		/* nor would a driver counter's slot with no sample of its own */
		if (j->c.cls == CAT_DRIVER && !sampled(j->c.s, j->n ? j->ts[j->n - 1] : 0, ts))
			continue;
		if (category__level(&j->c, ts, &v))
			push(j, v, ts, NULL, (ts - from) / 1e9);
	}
}

/* A fresh process's first request does what later ones need not: ggml-vulkan
 * compiles its shaders, backends make their compute buffers and graphs. A
 * rise in it bigger than everything after hides the shape of the rest (a
 * cache filling behind a warm-up looked steady); a step it is, when the rest
 * is flat, and the shape over all the points says so first */
void judged__shape(struct judged *j)
{
	double lo = INFINITY, hi = -INFINITY, first;
	size_t i;

	analyze__shape(j->y, j->n, j->material, &j->r);
	if (!j->per_request || !j->base || j->n < MIN_POINTS + 2 || j->r.shape == SHAPE_STEP)
		return;
	for (i = 1; i < j->n; i++) {
		lo = fmin(lo, j->y[i]);
		hi = fmax(hi, j->y[i]);
	}
	first = j->y[1] - j->y[0];
	if (first <= hi - lo || first < j->material)
		return;
	/* point 0 was the level before request 1: drop it, and point i is the
	 * level after request i + 1 */
	j->n--;
	memmove(j->y, j->y + 1, j->n * sizeof(*j->y));
	memmove(j->ts, j->ts + 1, j->n * sizeof(*j->ts));
	memmove(j->req, j->req + 1, j->n * sizeof(*j->req));
	memmove(j->x, j->x + 1, j->n * sizeof(*j->x));
	j->base = false;
	j->first = first;
	analyze__shape(j->y, j->n, j->material, &j->r);
}

/* the process's memory: every category that holds bytes, at its last level;
 * a device's memory that is the host's RAM once, in the host's RSS */
double judged__footprint(const struct judged *all, size_t n)
{
	double t = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (all[i].n && category__in_total(&all[i].c))
			t += fabs(all[i].y[all[i].n - 1]);
	return t;
}

/* the request whose end is point i (1-based); 0 for the level before any */
size_t judged__req_no(const struct judged *j, size_t i)
{
	return j->base ? i : i + 1;
}

/* growth per point over [0, upto] */
double judged__rise_rate(const struct judged *j, size_t upto)
{
	double lo, hi;

	return analyze__theil_sen(j->y, upto + 1, &lo, &hi);
}

double judged__per_unit(const struct judged *j, double per_point)
{
	return j->per_request ? per_point : per_point / j->dt;
}

bool judged__growing(const struct judged *j)
{
	return j->r.shape == SHAPE_LEAK || j->r.shape == SHAPE_BOUNDED ||
	       j->r.shape == SHAPE_SETTLED || j->r.shape == SHAPE_GROWING ||
	       (j->r.shape == SHAPE_STEP && j->r.step_size > 0);
}
