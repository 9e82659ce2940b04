// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the shape of each category's level over requests, and what it says */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "findings_int.h"
#include "llama_conf.h"
#include "stream/gpufuncs.h"

#define Z95 1.96

/* is the per-request step constant, and does it follow the prompt length?
 * A sentence for the message goes to `say` (SAY_NONE: none) */
static void step_evidence(const struct judged *j, size_t upto, struct finding *f,
			  struct finding_say *say)
{
	double d[4096], t[4096], mean = 0, sq = 0, cv, tau, z, tmin = INFINITY, tmax = 0;
	size_t i, n = 0;
	bool vary = false;

	say->code = SAY_NONE;
	/* where the plateau begins is a split between two equal fits: a last
	 * step within the noise is the plateau's */
	if (upto > 1 && fabs(j->y[upto] - j->y[upto - 1]) < 4 * j->r.noise)
		upto--;
	for (i = 1; i <= upto && n < 4096; i++, n++) {
		d[n] = j->y[i] - j->y[i - 1];
		t[n] = model_req__prompt_tokens(j->req[i]);
		mean += d[n];
		sq += d[n] * d[n];
		vary |= t[n] != t[0];
		tmin = fmin(tmin, t[n]);
		tmax = fmax(tmax, t[n]);
	}
	if (n < 3 || mean <= 0)
		return;
	mean /= n;
	cv = sqrt(fmax(sq / n - mean * mean, 0)) / mean;
	finding__num(f, "step_cv", cv);
	EVIDENCE(f, E_STEP_SPREAD, .cv = cv);
	if (!vary)
		return;
	tau = analyze__kendall(t, d, n, &z);
	finding__num(f, "step_token_tau", tau);
	/* a step constant to a tenth has no room to follow the prompt, whatever
	 * order its small scatter happens to have */
	if (cv < 0.1)
		z = 0;
	finding__str(f, "step_vs_tokens",
		     fabs(z) < Z95 ? "independent" :
		     tau > 0	   ? "grows_with_tokens" :
				     "shrinks");
	if (fabs(z) >= Z95) {
		EVIDENCE(f, E_STEP_FOLLOWS, .tau = tau);
		if (tau > 0)
			says__M_STEP_RISES(say, &(const struct say_in_M_STEP_RISES){ .tau = tau });
		return;
	}
	EVIDENCE(f, E_STEP_NOT_FOLLOWS, .tau = tau, .requests = n);
	if (cv < 0.1)
		says__M_FIXED_ENTRIES(
			say, &(const struct say_in_M_FIXED_ENTRIES){
				     .bytes = mean, .min_tokens = tmin, .max_tokens = tmax });
}

static void say_again(struct finding *f, const struct finding_say *say)
{
	struct finding_say *x = say->code != SAY_NONE ? finding__say_slot(f) : NULL;

	if (x)
		*x = *say;
}

static int by_bytes(const void *a, const void *b)
{
	const struct finding_stack *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* who holds what grew over [from, to]: mappings made in it and live at
 * its end, and each allocating stack's change, biggest first */
static void attribute(const struct model *m, const struct model_proc *p, const struct judged *j,
		      __u64 from, __u64 to, struct finding *f)
{
	struct finding_stack v[256];
	size_t n = 0, i;
	__u64 total = 0, touched = 0;
	bool guessed = false; /* a mapping's length stood for what it holds */
	__s64 x, y;

	/* sampled first touches say who made the memory resident: better than
	 * mappings, whose stacks end in the allocator (and which miss what
	 * malloc carves from its arenas) */
	if (!strcmp(j->c.name, "host_anon"))
		n = findings__touch_stacks(p, from, to, v, 255);
	for (i = 0; i < n; i++)
		touched += v[i].bytes;
	if (!n && !strcmp(j->c.name, "host_anon")) {
		for (i = 0; i < p->nr_maps; i++) {
			const struct model_mapping *mp = &p->maps[i];

			/* what it holds: its resident bytes where smaps said; else
			 * its length, and nothing for a PROT_NONE reservation (glibc's
			 * 64 MiB arenas, libcuda's address space) */
			__u64 held = mp->resident_ts ? mp->resident :
				     mp->prot	     ? (mp->live ? mp->live : mp->len) :
						       0;

			if (mp->ts >= from && mp->ts <= to && mp->fd_class == MODEL_FD_ANON &&
			    held && (!mp->gone_ts || mp->gone_ts > to)) {
				findings__hold(v, &n, 255, mp->stack_id, held);
				guessed |= !mp->resident_ts;
			}
		}
		if (p->brk_seen && p->brk_last > p->brk_first) {
			v[n] = (struct finding_stack){ .bytes = p->brk_last - p->brk_first,
						       .count = 1 };
			snprintf(v[n++].label, sizeof(v[0].label), "brk heap (main arena)");
		}
	} else if (j->c.cls == CAT_API && p->gpu) {
		for (i = 0; i < p->gpu->nr_holders && n < 256; i++) {
			const struct model_gpu_holder *h = &p->gpu->holders[i];

			if (h->api != j->c.api || h->kind != j->c.kind)
				continue;
			if (!series__at(&h->live, to, &y))
				continue;
			if (!series__at(&h->live, from, &x))
				x = 0;
			if (y > x)
				v[n++] = (struct finding_stack){ .stack_id = h->stack_id,
								 .bytes = y - x };
		}
	}
	if (!n)
		return;
	qsort(v, n, sizeof(*v), by_bytes);
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	f->nr_stacks = n < FINDING_STACKS ? n : FINDING_STACKS;
	memcpy(f->stacks, v, f->nr_stacks * sizeof(*v));
	findings__label_stacks(m, f->stacks, f->nr_stacks);
	if (findings__by_role(m, v, n, 0, f->roles, sizeof(f->roles)))
		EVIDENCE(f, E_HELD_BY_ROLE, .roles = f->roles, .touched = touched != 0);
	findings__roles(m, p, v, n, f);
	if (touched)
		EVIDENCE(f, E_TOUCHES, .label = f->stacks[0].label, .from = model__secs(m, from),
			 .to = model__secs(m, to), .total = total, .top = f->stacks[0].bytes,
			 .per_touch = p->touches[0].bytes);
	else
		EVIDENCE(f, E_MADE_HELD, .label = f->stacks[0].label, .total = total,
			 .from = model__secs(m, from), .to = model__secs(m, to),
			 .top = f->stacks[0].bytes);
	/* without an smaps read a mapping's length stood for it: the level
	 * says how much of that can be resident at most */
	x = j->y[j->n - 1] - j->y[0];
	if (guessed && x > 0 && (double)total > 1.1 * x)
		EVIDENCE(f, E_MAPPINGS_COVER, .mapped = total, .grew = x);
}

/* live graph executables that grow with device memory */
static void graph_evidence(const struct judged *all, size_t n, struct finding *f)
{
	double lo, hi, b;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct judged *g = &all[i];

		if (g->c.cls != CAT_COUNT || g->n < MIN_POINTS)
			continue;
		b = analyze__theil_sen(g->y, g->n, &lo, &hi);
		if (lo <= 0)
			continue;
		finding__num(f, "graph_execs_per_unit", b);
		finding__num(f, "graph_execs_live", g->y[g->n - 1]);
		EVIDENCE(f, E_GRAPHS_GROW, .what = g->c.text,
			 .per_unit = g->per_request ? b : b / g->dt, .pr = g->per_request,
			 .live = g->y[g->n - 1]);
	}
}

/* the other side of host growth: did GPU memory move with it? */
static void host_vs_gpu(const struct judged *all, size_t n, struct finding *f)
{
	char names[200] = "";
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		if (all[i].c.cls != CAT_API || !all[i].n)
			continue;
		if (judged__growing(&all[i]))
			return;
		len += snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
				all[i].c.text);
		if (len >= sizeof(names))
			break;
	}
	if (names[0])
		EVIDENCE(f, E_HOST_NOT_GPU, .flat = names);
}

/* the share of f's growth a role holds */
static double share(const struct finding *f, const struct finding_role *r)
{
	double total = 0;
	size_t i;

	for (i = 0; i < f->nr_roles; i++)
		total += f->role_v[i].bytes;
	return total > 0 ? 100 * r->bytes / total : 0;
}

/* what holds a leak: a role past its bound, or memory in no role with one */
static void roles_say(struct finding *f, enum roles_verdict roles, const struct finding_role *top)
{
	size_t i, k;

	if (roles == ROLES_PAST_BOUND) {
		finding__num(f, "role_bound_bytes", top->bound_bytes);
		SAY(f, M_ROLE_PAST_BOUND, .role = top->role,
		    .bound_name = findings__bound_name(top->bound), .bytes = top->held,
		    .bound = top->bound_bytes, .share = share(f, top));
		return;
	}
	if (roles != ROLES_UNBOUNDED)
		return;
	/* its biggest stack of no role */
	for (k = 0; k < f->nr_stacks && f->stacks[k].role[0]; k++)
		;
	for (top = NULL, i = 0; i < f->nr_roles; i++)
		if (f->role_v[i].bound == ROLE_NO_BOUND)
			top = &f->role_v[i];
	if (top)
		SAY(f, M_LEAK_UNBOUNDED,
		    .label = k < f->nr_stacks ? f->stacks[k].label : "stacks of no role",
		    .share = share(f, top), .rest_bounded = f->role_v[0].bound != ROLE_NO_BOUND);
}

/* what holds a leak, for its one-line forms (the live view, Prometheus):
 * the role past its bound, the biggest stack of no role beside bounded
 * ones, else the biggest stack (its role where its frames say) */
static void name_holder(struct finding *f, enum roles_verdict roles, const struct finding_role *top)
{
	size_t k;

	for (k = 0; k < f->nr_stacks && f->stacks[k].role[0]; k++)
		;
	if (roles == ROLES_PAST_BOUND && top)
		finding__str(f, "holder", top->role);
	else if (roles == ROLES_UNBOUNDED && k < f->nr_stacks)
		finding__str(f, "holder", f->stacks[k].label);
	else if (f->nr_stacks)
		finding__str(f, "holder",
			     f->stacks[0].role[0] ? f->stacks[0].role : f->stacks[0].label);
}

/* where a growth of pts more points ends: f->limit, read by
 * category__limit as what */
void judged__runs_out(const struct model_proc *p, const struct judged *j, double pts,
		      const char *what, struct finding *f)
{
	if (!(pts >= 0) || !isfinite(pts))
		return;
	if (j->per_request)
		f->requests_to_exhaustion = ceil(pts);
	f->seconds_to_exhaustion = j->per_request ? NAN : pts * j->dt;
	finding__str(f, "limited_by", what);
	if (what == category_cgroup_limit) {
		finding__str(f, "cgroup", p->mem_limit_cgroup);
		finding__num(f, "cgroup_limit_bytes", p->mem_limit);
		finding__num(f, "cgroup_used_bytes", p->mem_limit_used);
		/* the room past the limit is swap's */
		double swap = f->limit - j->y[j->n - 1] -
			      (p->mem_limit > p->mem_limit_used ?
				       (double)(p->mem_limit - p->mem_limit_used) :
				       0);

		SAY(f, M_RUNS_OUT_CGROUP, .cgroup = p->mem_limit_cgroup, .limit = p->mem_limit,
		    .used = p->mem_limit_used, .more = j->per_request ? ceil(pts) : pts * j->dt,
		    .pr = j->per_request, .file = p->mem_limit_file, .swap = fmax(swap, 0));
	} else {
		SAY(f, M_RUNS_OUT, .what = what, .limit = f->limit,
		    .more = j->per_request ? ceil(pts) : pts * j->dt, .pr = j->per_request,
		    .host = j->c.cls == CAT_HOST);
	}
}

static void leak_message(const struct model *m, const struct model_proc *p, const struct judged *j,
			 const struct finding_say *say, enum roles_verdict roles,
			 const struct finding_role *top, struct finding *f)
{
	const char *what = NULL;

	name_holder(f, roles, top);

	SAY(f, M_LEAK, .where = j->c.text, .slope = judged__per_unit(j, j->r.slope),
	    .lo = judged__per_unit(j, j->r.slope_lo), .hi = judged__per_unit(j, j->r.slope_hi),
	    .first = j->y[0], .last = j->y[j->n - 1], .points = j->n - j->base,
	    .pr = j->per_request, .base = j->base);
	roles_say(f, roles, top);
	say_again(f, say);
	if (j->r.change_at)
		SAY(f, M_LEVEL_UNTIL, .pr = j->per_request,
		    .point = judged__req_no(j, j->r.change_at));
	if (category__limit(m, p, &j->c, j->y[j->n - 1], &f->limit, &what))
		judged__runs_out(p, j, analyze__points_to(&j->r, j->y[j->n - 1], f->limit), what,
				 f);
	/* what the prompt cache would do, unless its stacks say it is not */
	if (j->c.cls == CAT_HOST &&
	    (roles == ROLES_UNBOUNDED || !findings__llama_host(m, p, j, f, false)))
		SAY(f, M_TRY_HOST_STACKS);
	else if (j->c.cls == CAT_API)
		SAY(f, M_TRY_API_STACKS);
}

static void bounded_message(const struct model *m, const struct model_proc *p,
			    const struct judged *j, double rate, const struct finding_say *say,
			    struct finding *f)
{
	SAY(f, M_BOUNDED, .where = j->c.text, .rate = rate,
	    .point = judged__req_no(j, j->r.change_at), .pr = j->per_request,
	    .ceiling = j->r.ceiling, .points_after = j->n - 1 - j->r.change_at);
	say_again(f, say);
	findings__llama_host(m, p, j, f, true);
}

/* the level's middle and range, in the words of a steady finding */
static void steady_message(const struct judged *j, struct finding *f)
{
	double *v = malloc(j->n * sizeof(*v)), lo = INFINITY, hi = -INFINITY, mid;
	size_t i;

	for (i = 0; i < j->n; i++) {
		lo = fmin(lo, j->y[i]);
		hi = fmax(hi, j->y[i]);
		if (v)
			v[i] = j->y[i];
	}
	mid = v ? analyze__median(v, j->n) : j->y[j->n - 1];
	free(v);
	/* "steady at X" only where the level stayed near X all along */
	if (hi - lo >= j->material && hi - lo > 10 * j->r.noise) {
		SAY(f, M_STEADY_WANDERS, .where = j->c.text, .lo = lo, .hi = hi, .points = j->n,
		    .pr = j->per_request, .last = j->y[j->n - 1]);
		return;
	}
	SAY(f, M_STEADY_AT, .where = j->c.text, .middle = mid, .lo = lo, .hi = hi, .points = j->n,
	    .pr = j->per_request);
	/* a clean slope too small to matter is said, so it is not a surprise */
	if (j->r.t >= 2 && j->r.slope > 0)
		SAY(f, M_STEADY_SMALL, .rise = j->r.slope * (j->n - 1), .material = j->material);
}

/* Over time, a level that has held for less time than the rise took says
 * little: growth made by work (a loop, a client's requests) stops when the
 * work does, and a leak that pauses looks like a cache that filled. Over
 * requests each point is work done, and a level held through them is not
 * that. True (and said) where the level is too new to call a ceiling. */
static bool held_briefly(const struct model *m, const struct judged *j, struct finding *f)
{
	size_t at = j->r.change_at;
	double rise_s, hold_s;

	if (j->per_request || !at || at >= j->n)
		return false;
	rise_s = model__secs(m, j->ts[at]) - model__secs(m, j->ts[0]);
	hold_s = model__secs(m, j->ts[j->n - 1]) - model__secs(m, j->ts[at]);
	if (hold_s >= rise_s)
		return false;
	f->kind = F_GROWING;
	f->ceiling = j->r.ceiling;
	f->bytes_per_second = judged__rise_rate(j, at) / j->dt;
	f->since_s = model__secs(m, j->ts[at]);
	SAY(f, M_HELD_BRIEFLY, .where = j->c.text, .rise = j->r.ceiling - j->y[0], .rise_s = rise_s,
	    .ceiling = j->r.ceiling, .hold_s = hold_s, .more_s = rise_s - hold_s);
	return true;
}

static void settled_message(const struct model *m, const struct model_proc *p,
			    const struct judged *j, struct finding *f)
{
	SAY(f, M_SETTLED, .where = j->c.text, .rise = j->r.ceiling - j->y[0],
	    .point = judged__req_no(j, j->r.change_at), .pr = j->per_request,
	    .ceiling = j->r.ceiling, .points_after = j->n - 1 - j->r.change_at);
	/* in llama-server, what its prompt cache may hold */
	findings__llama_host(m, p, j, f, true);
}

/* rising, not yet past doubt: say so, and what would decide it */
static void growing_message(const struct judged *j, struct finding *f)
{
	finding__num(f, "more_points", j->r.more_points);
	finding__num(f, "drift_t", j->r.t);
	if (j->r.slowing)
		SAY(f, M_GROWING_SLOWING, .where = j->c.text,
		    .early = judged__per_unit(j, j->r.slope_early),
		    .recent = judged__per_unit(j, j->r.slope_recent), .first = j->y[0],
		    .last = j->y[j->n - 1], .points = j->n, .pr = j->per_request,
		    .more = j->r.more_points);
	else
		SAY(f, M_GROWING_DRIFT, .where = j->c.text, .first = j->y[0],
		    .last = j->y[j->n - 1], .points = j->n, .pr = j->per_request,
		    .slope = judged__per_unit(j, j->r.slope), .more = j->r.more_points);
}

/* growth that roles with a bound hold, within it: the prompt cache filling
 * toward --cache-ram, context checkpoints, or host buffers llama.cpp makes
 * once per graph or image shape (an allocation of those while serving can
 * be another context's, so only their first use counts); true when said */
static bool bounded_roles(const struct model *m, const struct model_proc *p, const struct judged *j,
			  struct finding *f)
{
	const struct finding_role *top;

	if (findings__roles_verdict(f, &top) != ROLES_BOUNDED || !top || j->c.cls != CAT_HOST)
		return false;
	/* the cache fills up to its bound: growth past it is something else's */
	if (top->bound == ROLE_CACHE_RAM && j->per_request && isfinite(top->bound_bytes) &&
	    j->y[j->n - 1] - j->y[0] < top->bound_bytes) {
		f->kind = F_BOUNDED;
		finding__num(f, "role_bound_bytes", top->bound_bytes);
		SAY(f, M_ROLE_FILLING, .where = j->c.text, .step = judged__per_unit(j, j->r.slope),
		    .share = share(f, top), .bound = top->bound_bytes);
		findings__llama_host(m, p, j, f, false);
		return true;
	}
	if (top->bound == ROLE_PER_SHAPE ||
	    (top->bound == ROLE_CHECKPOINTS && isfinite(top->bound_bytes))) {
		f->kind = F_GROWING;
		if (isfinite(top->bound_bytes))
			finding__num(f, "role_bound_bytes", top->bound_bytes);
		SAY(f, M_ROLE_WITHIN, .where = j->c.text, .role = top->role,
		    .bound_name = findings__bound_name(top->bound),
		    .rise = j->y[j->n - 1] - j->y[0], .first = j->y[0], .last = j->y[j->n - 1],
		    .points = j->n, .pr = j->per_request, .share = share(f, top),
		    .bound = isfinite(top->bound_bytes) ? top->bound_bytes : 0);
		return true;
	}
	return false;
}

/* half or more of a rise in roles with a bound, within them, but less than
 * bounded_roles' 80%: the rest may be a leak or more of the same, and a
 * short run cannot tell (a vision server's first 24 requests: its prompt
 * cache and encoder 71% of the rise, a leak at 1.00 that a long run
 * refuted). Growing, at most 0.5, until the rest is judged on its own (a
 * leak beside the cache) or the roles level off */
static bool mostly_bounded(const struct model_proc *p, const struct judged *j, struct finding *f)
{
	const struct finding_role *top;
	double rise = j->y[j->n - 1] - j->y[0], share;
	struct shape_result rest;

	if (j->c.cls != CAT_HOST || findings__roles_verdict(f, &top) != ROLES_UNKNOWN)
		return false;
	/* the cache's entries by the server's own copies taken off, what is
	 * left is itself a leak: the total is one too, as sure as the rest */
	if (findings__rest_of_cache(p, j, &rest) && rest.shape == SHAPE_LEAK) {
		f->confidence = fmin(f->confidence, rest.confidence);
		return false;
	}
	share = findings__bounded_share(f);
	if (share < 0.5)
		return false;
	f->kind = F_GROWING;
	f->confidence = fmin(f->confidence, 0.5);
	finding__num(f, "bounded_share", share);
	finding__num(f, "more_points", j->n);
	SAY(f, M_ROLES_UNDECIDED, .where = j->c.text, .rise = rise, .first = j->y[0],
	    .last = j->y[j->n - 1], .points = j->n, .pr = j->per_request, .share = 100 * share,
	    .rest = rise * (1 - share), .more = j->n);
	return true;
}

/* a level that the shape calls steady but that ended far above where it
 * began (a tenth or more, and past what matters): it rose and held */
static bool rose_and_held(const struct judged *j)
{
	double rise = j->y[j->n - 1] - j->y[0];

	return rise >= j->material && rise > 2 * j->r.noise && rise >= 0.1 * j->y[0];
}

/* what holds the growth, by role, each against its bound */
static void by_role_say(struct finding *f)
{
	char text[240];

	if (!findings__roles_text(f, text, sizeof(text)))
		snprintf(text, sizeof(text), "%s", f->roles);
	SAY(f, M_BY_ROLE, .roles = text);
}

enum finding_kind judged__kind(const struct judged *j)
{
	static const enum finding_kind kinds[] = {
		[SHAPE_STEADY] = F_STEADY, [SHAPE_LEAK] = F_LEAK,	[SHAPE_BOUNDED] = F_BOUNDED,
		[SHAPE_STEP] = F_STEP,	   [SHAPE_GROWING] = F_GROWING, [SHAPE_SETTLED] = F_SETTLED,
	};

	return kinds[j->r.shape];
}

struct finding *judged__finding(struct findings *fs, enum finding_kind kind,
				const struct model_proc *p, const struct judged *j)
{
	struct finding *f = findings__add(fs, kind, p->pid);

	if (!f)
		return NULL;
	snprintf(f->category, sizeof(f->category), "%s", j->c.name);
	snprintf(f->where, sizeof(f->where), "%s", j->c.text);
	f->counts = j->c.cls == CAT_COUNT;
	f->per_request = j->per_request;
	f->points = j->n;
	f->shape = j->r;
	f->first = j->y[0];
	f->last = j->y[j->n - 1];
	f->confidence = j->r.confidence;
	if (j->per_request)
		f->bytes_per_request = j->r.slope;
	else
		f->bytes_per_second = j->r.slope / j->dt;
	return f;
}

/* a one-off move between VRAM and GTT that an eviction explains is part
 * of the eviction's finding */
static bool eviction_says(const struct model *m, const struct model_proc *p, const struct judged *j,
			  struct findings *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (fs->v[i].pid == p->pid && fs->v[i].kind == F_EVICTION) {
			EVIDENCE(&fs->v[i], E_CHANGED_ONCE, .where = j->c.text,
				 .step = j->r.step_size,
				 .request = judged__req_no(j, j->r.change_at),
				 .seconds = model__secs(m, j->ts[j->r.change_at]));
			return true;
		}
	return false;
}

/* how many of the requests judged were each larger than every one before
 * (prompt or answer, in tokens): a level that rises at each new largest
 * request may be a high-water mark (a buffer or a stack sized by the
 * largest so far), which only requests no larger than earlier ones tell
 * from a leak. True where 80% or more were (a client asking for 4 more
 * tokens each time) */
static bool high_water(const struct judged *j, double *larger)
{
	__u64 prompt = 0, answer = 0;
	size_t i, n = 0;

	*larger = 0;
	if (!j->per_request || !j->req)
		return false;
	for (i = 0; i < j->n; i++) {
		const struct model_request *r = j->req[i];
		__u64 pt, gt;

		if (!r)
			continue;
		pt = model_req__prompt_tokens(r);
		gt = model_req__generated(r);
		if (n++ && (pt > prompt || gt > answer))
			(*larger)++;
		prompt = pt > prompt ? pt : prompt;
		answer = gt > answer ? gt : answer;
	}
	return n >= 8 && *larger >= 0.8 * (n - 1);
}

void judged__judge(const struct model *m, const struct model_proc *p, const struct judged *all,
		   size_t nall, const struct judged *j, struct findings *fs)
{
	__u64 from;
	struct finding *f;
	struct finding_say say = { .code = SAY_NONE };
	const struct finding_role *top;
	enum roles_verdict roles;
	double larger;
	bool hw;

	if (j->r.shape == SHAPE_UNKNOWN || !j->n)
		return;
	/* from the first request's start; where its rise is left out, from
	 * its end */
	from = j->per_request && !j->first ? j->req[0]->start_ts : j->ts[0];
	if (j->c.cls == CAT_KERNEL && j->r.shape == SHAPE_STEP && eviction_says(m, p, j, fs))
		return;
	f = judged__finding(fs, judged__kind(j), p, j);
	if (!f)
		return;
	if (j->c.cls == CAT_API && judged__growing(j))
		graph_evidence(all, nall, f);
	/* every request larger than the ones before: what no cache explains is
	 * a leak or a high-water mark, which this run cannot tell apart */
	hw = high_water(j, &larger);
	/* llama-server's cache and a leak beside it: each judged on its own */
	if (j->r.shape != SHAPE_STEP && !hw && findings__leak_beside_cache(m, p, j, f)) {
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		goto said;
	}
	/* GPU memory whose total is no leak: each holder on its own */
	if (j->r.shape != SHAPE_STEP && j->r.shape != SHAPE_LEAK && !hw &&
	    findings__leak_beside_holders(m, p, j, f)) {
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		goto said;
	}
	switch (j->r.shape) {
	case SHAPE_LEAK:
		if (j->per_request)
			step_evidence(j, j->n - 1, f, &say);
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		if (j->c.cls == CAT_HOST)
			host_vs_gpu(all, nall, f);
		/* llama-server's own calls say its prompt cache is filling */
		if (findings__llama_cache_filling(m, p, j, f)) {
			f->kind = F_BOUNDED;
			break;
		}
		/* a rise mostly in roles with a bound: is any holder of none a
		 * leak of its own? */
		if (findings__bounded_share(f) >= 0.5 && !hw &&
		    findings__leak_beside_holders(m, p, j, f))
			break;
		if (bounded_roles(m, p, j, f) || mostly_bounded(p, j, f))
			break;
		if (hw) {
			f->kind = F_GROWING;
			f->confidence = fmin(f->confidence, 0.5);
			SAY(f, M_HIGH_WATER, .where = j->c.text, .first = j->y[0],
			    .last = j->y[j->n - 1], .points = j->n,
			    .slope = judged__per_unit(j, j->r.slope), .larger = larger);
			break;
		}
		roles = findings__roles_verdict(f, &top);
		leak_message(m, p, j, &say, roles, top, f);
		break;
	case SHAPE_BOUNDED:
		if (held_briefly(m, j, f)) {
			attribute(m, p, j, from, j->ts[j->n - 1], f);
			break;
		}
		f->ceiling = j->r.ceiling;
		if (j->per_request)
			f->bytes_per_request = judged__rise_rate(j, j->r.change_at);
		else
			f->bytes_per_second = judged__rise_rate(j, j->r.change_at) / j->dt;
		f->since_request = j->per_request ? judged__req_no(j, j->r.change_at) : 0;
		f->since_s = model__secs(m, j->ts[j->r.change_at]);
		if (j->per_request)
			step_evidence(j, j->r.change_at, f, &say);
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		if (j->c.cls == CAT_HOST)
			host_vs_gpu(all, nall, f);
		bounded_message(m, p, j, judged__per_unit(j, judged__rise_rate(j, j->r.change_at)),
				&say, f);
		break;
	case SHAPE_SETTLED:
		/* a cache of many small entries fills as a slowing curve: the
		 * server's calls say it is full */
		if (findings__llama_cache_full(p, j, f)) {
			f->kind = F_BOUNDED;
			f->ceiling = j->r.ceiling;
			attribute(m, p, j, from, j->ts[j->n - 1], f);
			break;
		}
		if (held_briefly(m, j, f)) {
			attribute(m, p, j, from, j->ts[j->n - 1], f);
			break;
		}
		f->ceiling = j->r.ceiling;
		f->since_request = j->per_request ? judged__req_no(j, j->r.change_at) : 0;
		f->since_s = model__secs(m, j->ts[j->r.change_at]);
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		settled_message(m, p, j, f);
		break;
	case SHAPE_GROWING:
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		if (findings__llama_cache_filling(m, p, j, f)) {
			f->kind = F_BOUNDED;
			break;
		}
		if (bounded_roles(m, p, j, f))
			break;
		growing_message(j, f);
		roles = findings__roles_verdict(f, &top);
		if (roles == ROLES_PAST_BOUND)
			roles_say(f, roles, top);
		break;
	case SHAPE_STEP:
		f->since_request = j->per_request ? judged__req_no(j, j->r.change_at) : 0;
		f->since_s = model__secs(m, j->ts[j->r.change_at]);
		finding__num(f, "step_bytes", j->r.step_size);
		attribute(m, p, j, j->ts[j->r.change_at - 1], j->ts[j->r.change_at], f);
		if (j->per_request)
			SAY(f, M_STEP_REQUEST, .where = j->c.text, .step = j->r.step_size,
			    .request = judged__req_no(j, j->r.change_at), .seconds = f->since_s);
		else
			SAY(f, M_STEP_TIME, .where = j->c.text, .step = j->r.step_size,
			    .seconds = f->since_s);
		break;
	default:
		/* llama-server's own calls say its prompt cache filled and drops
		 * entries: a bounded cache, which a level swinging by an entry
		 * hides from the shape */
		if (findings__llama_cache_full(p, j, f)) {
			f->kind = F_BOUNDED;
			f->ceiling = j->y[j->n - 1];
			attribute(m, p, j, from, j->ts[j->n - 1], f);
			break;
		}
		/* never "steady" at the end of a rise that held */
		if (rose_and_held(j)) {
			f->kind = F_SETTLED;
			f->ceiling = j->y[j->n - 1];
			attribute(m, p, j, from, j->ts[j->n - 1], f);
			SAY(f, M_ROSE_HELD, .where = j->c.text, .rise = j->y[j->n - 1] - j->y[0],
			    .percent = 100 * (j->y[j->n - 1] - j->y[0]) / j->y[0], .first = j->y[0],
			    .last = j->y[j->n - 1], .points = j->n, .pr = j->per_request);
			/* the prompt cache grows with requests, not at start-up */
			if (j->per_request)
				findings__llama_host(m, p, j, f, true);
			break;
		}
		steady_message(j, f);
		break;
	}
said:
	if (f->roles[0] && f->kind != F_STEADY)
		by_role_say(f);
	if (j->gpu_part > 0)
		EVIDENCE(f, E_LESS_VULKAN, .bytes = j->gpu_part,
			 .api = j->gpu_api ? gpufuncs__api_name(j->gpu_api) : "GPU");
	if (j->first > 0)
		EVIDENCE(f, E_FIRST_LEFT_OUT, .step = j->first, .request = j->x[0]);
	if (j->r.shape == SHAPE_STEP)
		EVIDENCE(f, E_STEP_FIT, .points = j->n, .pr = j->per_request, .first = j->y[0],
			 .last = j->y[j->n - 1], .noise = j->r.noise);
	else if (j->r.shape == SHAPE_BOUNDED)
		EVIDENCE(f, E_BOUNDED_FIT, .points = j->n, .pr = j->per_request,
			 .rate = judged__per_unit(j, judged__rise_rate(j, j->r.change_at)),
			 .point = j->per_request ? judged__req_no(j, j->r.change_at) :
						   j->r.change_at,
			 .noise = j->r.noise, .confidence = j->r.confidence);
	else if (j->r.shape != SHAPE_STEADY)
		EVIDENCE(f, E_SHAPE_FIT, .shape = analyze__shape_name(j->r.shape), .points = j->n,
			 .pr = j->per_request, .slope = judged__per_unit(j, j->r.slope),
			 .noise = j->r.noise, .confidence = j->r.confidence);
}

/* driver counters: growth the API calls explain is evidence for their
 * finding; growth they do not is a finding of its own */
void judged__judge_driver(const struct model *m, const struct model_proc *p,
			  const struct judged *all, size_t nall, const struct judged *j,
			  struct findings *fs)
{
	double api[4096], graphs[4096], lo, hi, alo, ahi, glo = 0, ghi, slope, aslope, gslope = 0,
							  v;
	size_t i, k, n = j->n < 4096 ? j->n : 4096;
	bool have_graphs = false;
	struct finding *f;
	struct llama_conf conf;

	if (!judged__growing(j)) {
		judged__judge(m, p, all, nall, j, fs);
		return;
	}
	for (i = 0; i < n; i++) {
		api[i] = graphs[i] = 0;
		for (k = 0; k < nall; k++) {
			if (all[k].c.cls == CAT_COUNT && category__level(&all[k].c, j->ts[i], &v)) {
				graphs[i] += v;
				have_graphs = true;
			}
			if (all[k].c.cls == CAT_API && all[k].c.device &&
			    category__level(&all[k].c, j->ts[i], &v))
				api[i] += v;
		}
	}
	/* per request (or second), whatever requests had no sample */
	slope = analyze__theil_sen_xy(j->x, j->y, n, &lo, &hi);
	aslope = analyze__theil_sen_xy(j->x, api, n, &alo, &ahi);
	if (lo <= ahi || lo <= 0) {
		bool said = false;

		/* the API calls account for it: say so where they grow */
		for (k = 0; k < fs->n; k++)
			if (fs->v[k].pid == p->pid &&
			    (fs->v[k].kind == F_LEAK || fs->v[k].kind == F_BOUNDED)) {
				EVIDENCE(&fs->v[k], E_DRIVER_AGREES, .where = j->c.text,
					 .slope = slope, .pr = j->per_request);
				said = true;
			}
		/* where no growth of theirs says it, the counter's own shape
		 * does (NVML on the H200 had no verdict at all: the API's
		 * growth was a step, not a leak) */
		if (!said)
			judged__judge(m, p, all, nall, j, fs);
		return;
	}
	f = judged__finding(fs, F_UNEXPLAINED, p, j);
	if (!f)
		return;
	f->last = j->y[n - 1];
	if (j->per_request)
		f->bytes_per_request = slope - aslope;
	else
		f->bytes_per_second = slope - aslope;
	/* how far apart the two intervals are, as a probability-like figure */
	f->confidence = fmin(1, fmax(0, (lo - ahi) / (hi - alo > 0 ? hi - alo : 1) + 0.5));
	finding__num(f, "driver_bytes_per_unit", slope);
	finding__num(f, "api_bytes_per_unit", aslope);
	EVIDENCE(f, E_DRIVER_RATE, .where = j->c.text, .slope = slope, .lo = lo, .hi = hi,
		 .pr = j->per_request);
	EVIDENCE(f, E_API_RATE, .slope = aslope, .lo = alo, .hi = ahi, .pr = j->per_request);
	if (have_graphs) {
		gslope = analyze__theil_sen_xy(j->x, graphs, n, &glo, &ghi);
		finding__num(f, "graph_execs_per_unit", gslope);
		finding__num(f, "graph_execs_live", graphs[n - 1]);
		EVIDENCE(f, E_GRAPHS_LIVE, .per_unit = gslope, .live = graphs[n - 1],
			 .pr = j->per_request);
	}
	SAY(f, M_UNEXPLAINED, .where = j->c.text, .excess = slope - aslope, .pr = j->per_request,
	    .first = j->y[0], .last = j->y[n - 1], .points = j->x[n - 1] - j->x[0],
	    .api_slope = aslope);
	if (have_graphs && glo > 0) {
		llama_conf__read(p, &conf);
		SAY(f, M_GRAPH_CACHE, .graphs_off = conf.cuda_graphs_off);
		SAY(f, M_GRAPHS_NOW, .per_unit = gslope, .live = graphs[n - 1],
		    .pr = j->per_request);
	} else {
		SAY(f, M_DRIVER_GROWS);
	}
}
