// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A leak beside llama-server's prompt cache. The host heap's total rises by
 * the cache's entries and by the leak together, and judged as one, the
 * entries (most of the rise) make it a bounded cache. The server's own state
 * copies say what the cache holds at each moment: taken off the level, what
 * is left is judged on its own, and it is a leak only where it keeps rising
 * and the memory first touched in no bounded role (sampled first touches)
 * rose with it, in its second half too; that stack names it. */
#include <math.h>
#include <string.h>
#include "findings_int.h"
#include "llama_conf.h"
#include "roles.h"

#define MIB (1024.0 * 1024)
#define TOP_STACKS 256
#define REST_MAX 4096

/* what the cache holds at ts: every entry made by then, up to its limit
 * (it drops the oldest for each new one once full) */
static double cache_held(const struct model_proc *p, __u64 ts, double limit)
{
	__s64 v;

	if (!series__at(&p->lentry_bytes, ts, &v))
		return 0;
	return fmin((double)v, limit);
}

/* until when the level at ts held: the instant before its next change. An
 * entry's memory is written (its vector sized) before the server copies its
 * state in, so an entry copied before the level next changed is in that
 * level already: counted to the read before it (the level's own time), one
 * entry was left out at most points of a run (0.6 MiB a request of leak
 * beside 11.5 MiB entries, judged a step) */
static __u64 level_until(const struct judged *j, __u64 ts)
{
	size_t i = j->c.s ? series__after(j->c.s, ts) : 0;

	return i && i < j->c.s->n ? j->c.s->p[i].ts - 1 : ts;
}

/* first touches in no bounded role over [from, to]: their bytes, and the
 * stacks; *err, what sampling may have missed (twice the spread of a count
 * of samples, a sample the least: none seen of a few expected is chance) */
static double unbounded_touches(const struct model *m, const struct model_proc *p, __u64 from,
				__u64 to, struct finding_stack *v, size_t *n, double *err,
				double *samples)
{
	struct finding_stack all[TOP_STACKS];
	size_t k = findings__touch_stacks(p, from, to, all, TOP_STACKS), i;
	double bytes = 0, count = 0;

	*n = 0;
	for (i = 0; i < k; i++)
		if (findings__role_bound(roles__of(m, all[i].stack_id)) == ROLE_NO_BOUND) {
			v[(*n)++] = all[i];
			bytes += all[i].bytes;
			count += all[i].count;
		}
	*err = p->nr_touches ? 2 * sqrt(fmax(count, 1)) * p->touches[0].bytes : 0;
	*samples = count;
	return bytes;
}

/* points until room is taken: the leak's, and the cache's at its rate so
 * far until it holds left more (its limit), then the leak's alone */
static double points_to_room(double room, double leak, double fill, double left)
{
	double full;

	if (!(room > 0) || !(leak > 0))
		return -1;
	if (!(fill > 0) || !(left > 0))
		return room / leak;
	full = left / fill;
	if (full * (leak + fill) >= room)
		return room / (leak + fill);
	return full + (room - full * (leak + fill)) / leak;
}

/* the level with the cache's entries taken off, from the level before the
 * first entry (what came before it, the first request's buffers made once,
 * is no part of either): rest[0..*n) from point *k on, judged into *r;
 * false where the server's own state copies do not say the entries */
static bool rest_of_cache(const struct model_proc *p, const struct judged *j, double *rest,
			  size_t *k, size_t *n, double *limit, struct shape_result *r)
{
	const struct model_llama_state *s = &p->lstate;
	struct llama_conf c;
	double mean;
	size_t i;

	*n = j->n;
	if (j->c.cls != CAT_HOST || strcmp(j->c.name, "host_anon") || !j->per_request || *n < 8 ||
	    *n > REST_MAX || s->saves < 3 || !p->lentry_bytes.n || !llama_conf__read(p, &c) ||
	    !c.cache_ram.v)
		return false;
	*limit = c.cache_ram.v > 0 ? c.cache_ram.v * MIB : INFINITY;
	for (*k = 0;
	     *k + 1 < *n && cache_held(p, j->ts[*k + 1], *limit) <= cache_held(p, j->ts[0], *limit);
	     (*k)++)
		;
	*n -= *k;
	if (*n < 8)
		return false;
	for (i = 0; i < *n; i++)
		rest[i] = j->y[*k + i] - cache_held(p, level_until(j, j->ts[*k + i]), *limit);
	/* an entry's memory is made just before the server copies its state
	 * in: a level read between the two holds an entry not yet taken off,
	 * a lone point an entry above both its neighbours (2 of 41 points in a
	 * run of the 2% leak, which was then too noisy to call). Such a point,
	 * or one an entry below both, goes to their middle */
	mean = (double)s->entry_bytes / s->saves;
	for (i = 1; i + 1 < *n; i++) {
		double up = rest[i] - rest[i - 1], down = rest[i] - rest[i + 1];

		if ((up > mean / 2 && down > mean / 2) || (up < -mean / 2 && down < -mean / 2))
			rest[i] = (rest[i - 1] + rest[i + 1]) / 2;
	}
	analyze__shape(rest, *n, j->material, r);
	return true;
}

bool findings__rest_of_cache(const struct model_proc *p, const struct judged *j,
			     struct shape_result *r)
{
	double rest[REST_MAX], limit;
	size_t k, n;

	return rest_of_cache(p, j, rest, &k, &n, &limit, r);
}

bool findings__leak_beside_cache(const struct model *m, const struct model_proc *p,
				 const struct judged *j, struct finding *f)
{
	const struct model_llama_state *s = &p->lstate;
	struct finding_stack v[TOP_STACKS];
	double rest[REST_MAX], limit, rise, half, touched, late, held, err, samples, fill, left;
	const char *what = NULL;
	size_t i, k, n, h, nv;
	__u64 last;
	struct shape_result r;
	struct llama_conf c;

	if (!rest_of_cache(p, j, rest, &k, &n, &limit, &r) || !llama_conf__read(p, &c))
		return false;
	h = k + n / 2;
	rise = rest[n - 1] - rest[0];
	half = rest[n - 1] - rest[n / 2];
	if (r.shape != SHAPE_LEAK || rise < j->material || half <= 0)
		return false;
	/* what rose is still held memory of someone's: first touched in no
	 * bounded role, over the run and over its second half (memory made
	 * again after it was freed is touched again, but then the rest does
	 * not rise with it) */
	last = j->ts[j->n - 1];
	late = unbounded_touches(m, p, j->ts[h], last, v, &nv, &err, &samples);
	if (late + err < 0.4 * half)
		return false;
	touched = unbounded_touches(m, p, j->ts[k], last, v, &nv, &err, &samples);
	if (samples < 3 || touched + err < 0.4 * rise)
		return false;
	/* the stack that first touched most of it names it */
	for (i = 1; i < nv; i++)
		if (v[i].bytes > v[0].bytes)
			v[0] = v[i];
	findings__label_stacks(m, v, 1);
	held = cache_held(p, last, limit) - cache_held(p, j->ts[k], limit);

	f->kind = F_LEAK;
	f->shape = r;
	f->confidence = r.confidence;
	f->bytes_per_request = r.slope;
	finding__num(f, "leak_bytes_per_request", judged__per_unit(j, r.slope));
	finding__num(f, "leak_rise_bytes", rise);
	finding__num(f, "cache_held_bytes", held);
	if (isfinite(limit))
		finding__num(f, "cache_ram_bytes", limit);
	finding__str(f, "holder", v[0].label);
	SAY(f, M_LEAK_BESIDE_CACHE, .where = j->c.text, .label = v[0].label,
	    .slope = judged__per_unit(j, r.slope), .lo = judged__per_unit(j, r.slope_lo),
	    .hi = judged__per_unit(j, r.slope_hi), .rest = rise, .points = n - 1, .held = held,
	    .touched = touched, .share = 100 * v[0].bytes / touched);
	SAY(f, M_CACHE_BESIDE, .saves = s->saves, .mean = (double)s->entry_bytes / s->saves,
	    .total = s->entry_bytes, .held = held, .mib = c.cache_ram.v, .from = c.cache_ram.from,
	    .full = (double)s->entry_bytes > limit, .fit = floor(limit / s->entry_max));
	/* where the memory runs out: the cache still fills beside the leak */
	fill = held / (n - 1);
	left = limit - cache_held(p, last, limit);
	if (category__limit(m, p, &j->c, j->y[j->n - 1], &f->limit, &what)) {
		double pts = points_to_room(f->limit - j->y[j->n - 1], r.slope, fill, left);

		judged__runs_out(p, j, pts, what, f);
		if (pts >= 0 && fill > 0 && left > 0) {
			finding__num(f, "cache_room_bytes", isfinite(left) ? left : -1);
			SAY(f, M_RUNS_OUT_WITH_CACHE, .fill = fill, .left = left);
		}
	}
	SAY(f, M_TRY_HOST_STACKS);
	return true;
}

/* a GPU holder's live bytes at the judged series' points */
static void holder_series(const struct model_gpu_holder *h, const struct judged *j, double *y)
{
	size_t i;
	__s64 v;

	for (i = 0; i < j->n; i++)
		y[i] = series__at(&h->live, j->ts[i], &v) ? (double)v : 0;
}

/* GPU memory judged holder by holder: each stack's live bytes are counted
 * exactly (every call is seen), so each is a series of its own. One in no
 * bounded role that rose by what matters, in its second half too, and
 * keeps rising is a leak named by its stack, even where the total's rise
 * is mostly in holders with a bound (compute buffers made again for larger
 * shapes, shaders) and so would be judged as theirs */
bool findings__leak_beside_holders(const struct model *m, const struct model_proc *p,
				   const struct judged *j, struct finding *f)
{
	double y[REST_MAX], rise, best_rise = 0, live = 0, total, pts;
	struct finding_stack v = { 0 };
	struct shape_result r, best;
	const char *what = NULL;
	size_t i;

	if (j->c.cls != CAT_API || !p->gpu || j->n < 8 || j->n > REST_MAX)
		return false;
	for (i = 0; i < p->gpu->nr_holders; i++) {
		const struct model_gpu_holder *h = &p->gpu->holders[i];

		if (h->api != j->c.api || h->kind != j->c.kind ||
		    findings__role_bound(roles__of(m, h->stack_id)) != ROLE_NO_BOUND)
			continue;
		holder_series(h, j, y);
		rise = y[j->n - 1] - y[0];
		if (rise < j->material || rise <= best_rise || y[j->n - 1] <= y[j->n / 2])
			continue;
		analyze__shape(y, j->n, j->material, &r);
		if (r.shape != SHAPE_LEAK)
			continue;
		best = r;
		best_rise = rise;
		live = y[j->n - 1];
		v.stack_id = h->stack_id;
		v.bytes = (__u64)rise;
		v.count = 1;
	}
	if (!(best_rise > 0))
		return false;
	findings__label_stacks(m, &v, 1);
	total = j->y[j->n - 1] - j->y[0];
	f->kind = F_LEAK;
	f->shape = best;
	f->confidence = best.confidence;
	f->bytes_per_request = j->per_request ? best.slope : NAN;
	f->bytes_per_second = j->per_request ? NAN : best.slope / j->dt;
	finding__num(f, "leak_bytes_per_request", judged__per_unit(j, best.slope));
	finding__num(f, "holder_rise_bytes", best_rise);
	finding__num(f, "holder_live_bytes", live);
	finding__str(f, "holder", v.label);
	SAY(f, M_LEAK_BESIDE_HOLDERS, .where = j->c.text, .label = v.label,
	    .slope = judged__per_unit(j, best.slope), .lo = judged__per_unit(j, best.slope_lo),
	    .hi = judged__per_unit(j, best.slope_hi), .rise = best_rise, .total = total,
	    .live = live, .points = j->n - 1, .pr = j->per_request);
	if (category__limit(m, p, &j->c, j->y[j->n - 1], &f->limit, &what)) {
		pts = best.slope > 0 ? (f->limit - j->y[j->n - 1]) / best.slope : -1;
		judged__runs_out(p, j, pts, what, f);
	}
	SAY(f, M_TRY_API_STACKS);
	return true;
}
