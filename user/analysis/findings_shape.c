// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the shape of each category's level over requests, and its message */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "findings_int.h"
#include "common/fmt.h"

#define Z95 1.96

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
#define D(buf, v) fmt_delta(buf, sizeof(buf), v)

/* is the per-request step constant, and does it follow the prompt length?
 * A sentence for the message goes to `say` */
static void step_evidence(const struct judged *j, size_t upto, struct finding *f, char *say,
			  size_t size)
{
	double d[4096], t[4096], mean = 0, sq = 0, cv, tau, z, tmin = INFINITY, tmax = 0;
	size_t i, n = 0;
	bool vary = false;
	char a[32];

	say[0] = 0;
	/* where the plateau begins is a split between two equal fits: a last
	 * step within the noise is the plateau's */
	if (upto > 1 && fabs(j->y[upto] - j->y[upto - 1]) < 4 * j->r.noise)
		upto--;
	for (i = 1; i <= upto && n < 4096; i++, n++) {
		d[n] = j->y[i] - j->y[i - 1];
		t[n] = j->req[i]->t.prompt_tokens;
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
	finding__evidence(f, "the step per request is %s: spread %.0f%% of its mean",
			  cv < 0.1 ? "constant" : "variable", cv * 100);
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
		finding__evidence(f, "the step follows the prompt length (Kendall tau %.2f)", tau);
		if (tau > 0)
			snprintf(
				say, size,
				" The step per request rises with the prompt's length (Kendall tau "
				"%.2f).",
				tau);
		return;
	}
	finding__evidence(f,
			  "the step does not follow the prompt length (Kendall tau %.2f over %zu "
			  "requests)",
			  tau, n);
	if (cv < 0.1)
		snprintf(say, size,
			 " Each request adds a fixed %s, independent of its prompt length "
			 "(%.0f..%.0f tokens): fixed-size entries.",
			 fmt_bytes(a, sizeof(a), mean), tmin, tmax);
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
	char a[32], b[32], c[32];
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
		finding__evidence(f, "%s by role: %s", touched ? "first touched" : "held",
				  f->roles);
	if (touched)
		finding__evidence(f,
				  "sampled first touches of anonymous memory between %.2f s and "
				  "%.2f s stand for %s, %s by %s (a stack for about one in %s "
				  "touched)",
				  model__secs(m, from), model__secs(m, to), B(a, total),
				  B(b, f->stacks[0].bytes), f->stacks[0].label,
				  B(c, p->touches[0].bytes));
	else
		finding__evidence(f,
				  "%s of it was made between %.2f s and %.2f s and held at the end "
				  "of that, %s by %s",
				  B(a, total), model__secs(m, from), model__secs(m, to),
				  B(b, f->stacks[0].bytes), f->stacks[0].label);
	/* without an smaps read a mapping's length stood for it: the level
	 * says how much of that can be resident at most */
	x = j->y[j->n - 1] - j->y[0];
	if (guessed && x > 0 && (double)total > 1.1 * x)
		finding__evidence(f,
				  "the mappings cover %s but the heap grew by %s: part of them was "
				  "never touched (no smaps read said how much of each)",
				  B(a, total), B(b, x));
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
		finding__evidence(f, "%s grow with it: %+.2f per %s, %.0f live at the end",
				  g->c.text, g->per_request ? b : b / g->dt,
				  g->per_request ? "request" : "s", g->y[g->n - 1]);
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
		finding__evidence(f,
				  "GPU API memory stayed flat (%s): this is host memory, not GPU "
				  "memory",
				  names);
}

static void leak_message(const struct model *m, const struct model_proc *p, const struct judged *j,
			 const char *say, struct finding *f)
{
	char a[32], b[32], c[32], d[32], e[32];
	const char *what = NULL;
	size_t len;

	len = snprintf(f->message, sizeof(f->message),
		       "%s grows by %s per %s (95%% interval %s to %s) with no sign of a ceiling: "
		       "%s at the first %s, %s at the last (%zu %ss).%s",
		       j->c.text, B(a, judged__per_unit(j, j->r.slope)), judged__unit(j),
		       B(b, judged__per_unit(j, j->r.slope_lo)),
		       B(c, judged__per_unit(j, j->r.slope_hi)), B(d, j->y[0]),
		       !j->per_request ? "sample" :
		       j->base	       ? "request's start" :
					 "request's end",
		       B(e, j->y[j->n - 1]), j->n - j->base, j->per_request ? "request" : "sample",
		       say);
	if (j->r.change_at && len < sizeof(f->message))
		len += snprintf(f->message + len, sizeof(f->message) - len,
				" It was level until about %s %zu, and has grown since.",
				j->per_request ? "request" : "sample",
				judged__req_no(j, j->r.change_at));
	if (category__limit(m, p, &j->c, j->y[j->n - 1], &f->limit, &what)) {
		double pts = analyze__points_to(&j->r, j->y[j->n - 1], f->limit);

		if (pts >= 0) {
			if (j->per_request)
				f->requests_to_exhaustion = ceil(pts);
			f->seconds_to_exhaustion = j->per_request ? NAN : pts * j->dt;
			finding__str(f, "limited_by", what);
			len += snprintf(
				f->message + len, sizeof(f->message) - len,
				" At this rate %s (%s) runs out after about %.0f more %ss%s.", what,
				B(a, f->limit), j->per_request ? ceil(pts) : pts * j->dt,
				judged__unit(j),
				j->c.cls == CAT_HOST ? ": unless it levels off first, the "
						       "process will be OOM-killed then" :
						       "");
		}
	}
	if (len >= sizeof(f->message))
		return;
	if (j->c.cls == CAT_HOST &&
	    !findings__llama_host(m, p, j, f, false, f->message + len, sizeof(f->message) - len))
		snprintf(f->message + len, sizeof(f->message) - len,
			 " What to try: the stacks below allocate it.");
	else if (j->c.cls == CAT_API)
		snprintf(f->message + len, sizeof(f->message) - len,
			 " What to try: memory allocated while serving and never freed; the stacks "
			 "below made it.");
}

static void bounded_message(const struct model *m, const struct model_proc *p,
			    const struct judged *j, double rate, const char *say, struct finding *f)
{
	char a[32], b[32];
	size_t len;

	len = snprintf(f->message, sizeof(f->message),
		       "%s grew by %s per %s over the first %zu %ss, then stayed at %s for the "
		       "last %zu: a bounded cache with a ceiling of %s, not a leak.%s",
		       j->c.text, B(a, rate), judged__unit(j), judged__req_no(j, j->r.change_at),
		       j->per_request ? "request" : "sample", B(b, j->r.ceiling),
		       j->n - 1 - j->r.change_at, B(b, j->r.ceiling), say);
	if (len < sizeof(f->message))
		findings__llama_host(m, p, j, f, true, f->message + len, sizeof(f->message) - len);
}

/* the level's middle and range, in the words of a steady finding */
static void steady_message(const struct judged *j, struct finding *f)
{
	double *v = malloc(j->n * sizeof(*v)), lo = INFINITY, hi = -INFINITY, mid;
	char a[32], b[32], c[32], d[32];
	size_t i, len;

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
		snprintf(f->message, sizeof(f->message),
			 "%s moved between %s and %s over %zu %ss and ended at %s, with no sure "
			 "rise or fall: no leak so far.",
			 j->c.text, B(b, lo), B(c, hi), j->n, j->per_request ? "request" : "sample",
			 B(a, j->y[j->n - 1]));
		return;
	}
	len = snprintf(f->message, sizeof(f->message),
		       "%s is steady at about %s (between %s and %s) over %zu %ss.", j->c.text,
		       B(a, mid), B(b, lo), B(c, hi), j->n, j->per_request ? "request" : "sample");
	/* a clean slope too small to matter is said, so it is not a surprise */
	if (j->r.t >= 2 && j->r.slope > 0 && len < sizeof(f->message))
		snprintf(f->message + len, sizeof(f->message) - len,
			 " It rose by %s in all, under a hundredth of the process's memory or "
			 "the machine's (%s): too little to matter.",
			 B(d, j->r.slope * (j->n - 1)), B(a, j->material));
}

static void settled_message(const struct model *m, const struct model_proc *p,
			    const struct judged *j, struct finding *f)
{
	char a[32], b[32];
	size_t len;

	len = snprintf(
		f->message, sizeof(f->message),
		"%s grew by %s over the first %zu %ss, more slowly as it went, and has stayed "
		"near %s for the last %zu: growth that settled (warm-up, pools and caches "
		"filling with use), not a leak.",
		j->c.text, B(a, j->r.ceiling - j->y[0]), judged__req_no(j, j->r.change_at),
		j->per_request ? "request" : "sample", B(b, j->r.ceiling),
		j->n - 1 - j->r.change_at);
	/* in llama-server, what its prompt cache may hold */
	if (len < sizeof(f->message))
		findings__llama_host(m, p, j, f, true, f->message + len, sizeof(f->message) - len);
}

/* rising, not yet past doubt: say so, and what would decide it */
static void growing_message(const struct judged *j, struct finding *f)
{
	char a[32], b[32], c[32], d[32];

	finding__num(f, "more_points", j->r.more_points);
	finding__num(f, "drift_t", j->r.t);
	if (j->r.slowing)
		snprintf(f->message, sizeof(f->message),
			 "%s rose by %s per %s in the first half of the run and %s in the "
			 "second (%s -> %s over %zu %ss): it is slowing down and may be "
			 "levelling off. Too early to tell; about %zu more %ss would show "
			 "whether it stops.",
			 j->c.text, D(a, judged__per_unit(j, j->r.slope_early)), judged__unit(j),
			 D(b, judged__per_unit(j, j->r.slope_recent)), B(c, j->y[0]),
			 B(d, j->y[j->n - 1]), j->n, j->per_request ? "request" : "sample",
			 j->r.more_points, j->per_request ? "request" : "sample");
	else
		snprintf(f->message, sizeof(f->message),
			 "%s rose from %s to %s over %zu %ss (%s per %s), but not past "
			 "doubt: memory that wanders on its own rises this far too. Too "
			 "early to tell a leak; about %zu more %ss would decide.",
			 j->c.text, B(a, j->y[0]), B(b, j->y[j->n - 1]), j->n,
			 j->per_request ? "request" : "sample",
			 D(c, judged__per_unit(j, j->r.slope)), judged__unit(j), j->r.more_points,
			 j->per_request ? "request" : "sample");
}

/* a finding about category j, with its shape and levels */
static struct finding *new_finding(struct findings *fs, enum finding_kind kind,
				   const struct model_proc *p, const struct judged *j)
{
	struct finding *f = findings__add(fs, kind, p->pid);

	if (!f)
		return NULL;
	snprintf(f->category, sizeof(f->category), "%s", j->c.name);
	snprintf(f->where, sizeof(f->where), "%s", j->c.text);
	f->per_request = j->per_request;
	f->points = j->n;
	f->shape = j->r;
	f->first = j->y[0];
	f->last = j->y[j->n - 1];
	return f;
}

/* a one-off move between VRAM and GTT that an eviction explains is part
 * of the eviction's finding */
static bool eviction_says(const struct model *m, const struct model_proc *p, const struct judged *j,
			  struct findings *fs)
{
	char a[32];
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (fs->v[i].pid == p->pid && fs->v[i].kind == F_EVICTION) {
			finding__evidence(&fs->v[i],
					  "%s changed once by %s, in request %zu (%.2f s)",
					  j->c.text, fmt_delta(a, sizeof(a), j->r.step_size),
					  judged__req_no(j, j->r.change_at),
					  model__secs(m, j->ts[j->r.change_at]));
			return true;
		}
	return false;
}

void judged__judge(const struct model *m, const struct model_proc *p, const struct judged *all,
		   size_t nall, const struct judged *j, struct findings *fs)
{
	static const enum finding_kind kinds[] = {
		[SHAPE_STEADY] = F_STEADY, [SHAPE_LEAK] = F_LEAK,	[SHAPE_BOUNDED] = F_BOUNDED,
		[SHAPE_STEP] = F_STEP,	   [SHAPE_GROWING] = F_GROWING, [SHAPE_SETTLED] = F_SETTLED,
	};
	__u64 from;
	struct finding *f;
	char a[32], b[32], say[200] = "";

	if (j->r.shape == SHAPE_UNKNOWN || !j->n)
		return;
	from = j->per_request ? j->req[0]->start_ts : j->ts[0];
	if (j->c.cls == CAT_KERNEL && j->r.shape == SHAPE_STEP && eviction_says(m, p, j, fs))
		return;
	f = new_finding(fs, kinds[j->r.shape], p, j);
	if (!f)
		return;
	f->confidence = j->r.confidence;
	if (j->per_request)
		f->bytes_per_request = j->r.slope;
	else
		f->bytes_per_second = j->r.slope / j->dt;
	if (j->c.cls == CAT_API && judged__growing(j))
		graph_evidence(all, nall, f);
	switch (j->r.shape) {
	case SHAPE_LEAK:
		if (j->per_request)
			step_evidence(j, j->n - 1, f, say, sizeof(say));
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		if (j->c.cls == CAT_HOST)
			host_vs_gpu(all, nall, f);
		leak_message(m, p, j, say, f);
		break;
	case SHAPE_BOUNDED:
		f->ceiling = j->r.ceiling;
		if (j->per_request)
			f->bytes_per_request = judged__rise_rate(j, j->r.change_at);
		else
			f->bytes_per_second = judged__rise_rate(j, j->r.change_at) / j->dt;
		f->since_request = j->per_request ? judged__req_no(j, j->r.change_at) : 0;
		f->since_s = model__secs(m, j->ts[j->r.change_at]);
		if (j->per_request)
			step_evidence(j, j->r.change_at, f, say, sizeof(say));
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		if (j->c.cls == CAT_HOST)
			host_vs_gpu(all, nall, f);
		bounded_message(m, p, j, judged__per_unit(j, judged__rise_rate(j, j->r.change_at)),
				say, f);
		break;
	case SHAPE_SETTLED:
		f->ceiling = j->r.ceiling;
		f->since_request = j->per_request ? judged__req_no(j, j->r.change_at) : 0;
		f->since_s = model__secs(m, j->ts[j->r.change_at]);
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		settled_message(m, p, j, f);
		break;
	case SHAPE_GROWING:
		attribute(m, p, j, from, j->ts[j->n - 1], f);
		growing_message(j, f);
		break;
	case SHAPE_STEP:
		f->since_request = j->per_request ? judged__req_no(j, j->r.change_at) : 0;
		f->since_s = model__secs(m, j->ts[j->r.change_at]);
		finding__num(f, "step_bytes", j->r.step_size);
		attribute(m, p, j, j->ts[j->r.change_at - 1], j->ts[j->r.change_at], f);
		if (j->per_request)
			snprintf(
				f->message, sizeof(f->message),
				"%s changed once by %s in request %zu (%.2f s) and was flat before "
				"and after: a one-off step (warm-up, a first image, a bigger "
				"prompt), not a leak.",
				j->c.text, D(a, j->r.step_size), judged__req_no(j, j->r.change_at),
				f->since_s);
		else
			snprintf(f->message, sizeof(f->message),
				 "%s changed once by %s at %.2f s and was flat before and after: a "
				 "one-off step, not a leak.",
				 j->c.text, D(a, j->r.step_size), f->since_s);
		break;
	default:
		steady_message(j, f);
		break;
	}
	if (f->roles[0] && j->r.shape != SHAPE_STEADY) {
		size_t len = strlen(f->message);

		snprintf(f->message + len, sizeof(f->message) - len,
			 " By role, from its stacks: %s.", f->roles);
	}
	if (j->gpu_part > 0)
		finding__evidence(
			f,
			"judged less the Vulkan memory (%s at the end): on this device it "
			"is host memory, and is counted once, as Vulkan's",
			B(a, j->gpu_part));
	if (j->r.shape == SHAPE_STEP)
		finding__evidence(f, "%s over %zu %ss: %s before, %s after, noise %s", "step", j->n,
				  j->per_request ? "request" : "sample", B(a, j->y[0]),
				  B(b, j->y[j->n - 1]), B(say, j->r.noise));
	else if (j->r.shape == SHAPE_BOUNDED)
		finding__evidence(
			f,
			"bounded_cache over %zu %ss: a rise of %s per %s until %s %zu, then "
			"level (noise %s), confidence %.2f",
			j->n, j->per_request ? "request" : "sample",
			D(a, judged__per_unit(j, judged__rise_rate(j, j->r.change_at))),
			judged__unit(j), j->per_request ? "request" : "sample",
			j->per_request ? judged__req_no(j, j->r.change_at) : j->r.change_at,
			B(b, j->r.noise), j->r.confidence);
	else if (j->r.shape != SHAPE_STEADY)
		finding__evidence(f, "%s over %zu %ss: slope %s per %s, noise %s, confidence %.2f",
				  analyze__shape_name(j->r.shape), j->n,
				  j->per_request ? "request" : "sample",
				  D(a, judged__per_unit(j, j->r.slope)), judged__unit(j),
				  B(b, j->r.noise), j->r.confidence);
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
	char a[32], b[32], c[32], d[32];

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
		/* the API calls account for it: say so where they grow */
		for (k = 0; k < fs->n; k++)
			if (fs->v[k].pid == p->pid &&
			    (fs->v[k].kind == F_LEAK || fs->v[k].kind == F_BOUNDED))
				finding__evidence(&fs->v[k], "%s agrees: %s per %s", j->c.text,
						  D(a, (slope)), judged__unit(j));
		return;
	}
	f = new_finding(fs, F_UNEXPLAINED, p, j);
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
	finding__evidence(f, "%s: %s per %s (interval %s to %s)", j->c.text, D(a, (slope)),
			  judged__unit(j), D(b, (lo)), D(c, (hi)));
	finding__evidence(f, "GPU API device allocations: %s per %s (interval %s to %s)",
			  D(a, (aslope)), judged__unit(j), D(b, (alo)), D(c, (ahi)));
	if (have_graphs) {
		gslope = analyze__theil_sen_xy(j->x, graphs, n, &glo, &ghi);
		finding__num(f, "graph_execs_per_unit", gslope);
		finding__num(f, "graph_execs_live", graphs[n - 1]);
		finding__evidence(f, "live graph executables: %+.2f per %s (now %.0f)", (gslope),
				  judged__unit(j), graphs[n - 1]);
	}
	snprintf(f->message, sizeof(f->message),
		 "the driver counts %s of this process's device memory per %s more than its "
		 "allocation calls explain (%s: %s -> %s over %.0f %ss; API device allocations %s "
		 "per %s).%s%s.",
		 B(a, (slope - aslope)), judged__unit(j), j->c.text, B(b, j->y[0]),
		 B(c, j->y[n - 1]), j->x[n - 1] - j->x[0], j->per_request ? "request" : "second",
		 D(d, (aslope)), judged__unit(j),
		 have_graphs && glo > 0 ?
			 " Live graph executables grow with it: likely a growing "
			 "CUDA graph cache" :
			 " Memory the driver allocates by itself (contexts, graphs, "
			 "pools) grows",
		 have_graphs && glo > 0 ? findings__graphs_advice(p) : "");
	if (have_graphs && glo > 0) {
		size_t len = strlen(f->message);

		snprintf(f->message + len, sizeof(f->message) - len,
			 " Graph executables: %+.2f per %s, %.0f live now.", (gslope),
			 judged__unit(j), graphs[n - 1]);
	}
}
