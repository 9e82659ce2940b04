// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Why it got slow: each request's decode rate against the same server's
 * own, among requests that ran beside as many others, and the cause from
 * what the kernel counted in the same moments: major faults (its weights
 * or its heap read back from the disk or swap) and why (the memory
 * cgroup's limit, the host's memory, pressure), a wait for a CPU (a quota
 * that throttles it, a neighbour on its CPUs), the GPU (CUDA graphs
 * captured again, buffers evicted from VRAM), the server itself (a full
 * context). No cause seen is said as such: a guess is worse than nothing.
 * Normal variation is not a slowdown: concurrent slots share the machine,
 * a longer context decodes slower, the first request warms up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/search.h"
#include "findings.h"
#include "llama_conf.h"

#define SLOW_RATIO 0.6	  /* slower than this share of its baseline */
#define TYPICAL_RATIO 0.6 /* of the class's 90th percentile: its usual rates */
#define MIN_TYPICAL 3	  /* requests a baseline needs */
#define MIN_TOKENS 4	  /* a decode rate needs this many generated tokens */
#define CLASSES 16	  /* concurrency classes: 1 to 16 requests at once */
#define NEIGHBOURS 64	  /* requests looked at either side for overlaps */
#define EPISODES 4	  /* slowdowns reported a process */
#define JUDGED_MAX 2048	  /* the newest requests judged: the comparisons are quadratic */
#define MIN_LOST_S 0.25	  /* a slowdown costs its requests this much time at least */
#define Z95_ONE_SIDED 1.645
#define MIB_F 1048576.0

struct jreq {
	const struct model_request *r;
	double rate, prate; /* decode and prompt, tokens a second */
	__u64 from, to;	    /* its decode */
	double conc;	    /* other requests decoding beside it, on average */
	int cls;	    /* 1 + conc rounded, at most CLASSES */
	__u64 ctx, tokens;  /* prompt tokens (cached ones too) and generated */
	__u64 prompt;	    /* prompt tokens evaluated */
	double ctx_tokens;  /* ctx + tokens: what a context-full test counts */
	double expected;    /* its baseline's rate (0: none) */
	double spread;	    /* a prompt's: its like prompts' spread */
	size_t n_like;	    /* a prompt's: its like prompts' usual ones */
	bool typical, slow;
	/* too few usual requests of a context as long, half as long at least:
	 * a longer context decodes slower, so it is not compared */
	bool longer;
};

struct klass {
	double baseline, spread, lspread; /* lspread: of the rates' logarithms */
	size_t n, typical;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int by_from(const void *a, const void *b)
{
	const struct jreq *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* the spread of the rates x[0..m) about e (MAD, as a standard deviation),
 * and of their logarithms: a rate is judged by its ratio to the usual one,
 * since usual rates that differ by a fifth put 500 and 400 tokens/s as far
 * apart as 100 and 80 (x is overwritten) */
static void spreads(double *x, size_t m, double e, double *lin, double *lg)
{
	double *l = malloc(m * sizeof(*l));
	size_t i;

	for (i = 0; l && i < m; i++)
		l[i] = fabs(log(x[i] / e));
	for (i = 0; i < m; i++)
		x[i] = fabs(x[i] - e);
	*lin = 1.4826 * median(x, m);
	*lg = l ? 1.4826 * median(l, m) : *lin / e;
	free(l);
}

/* what is judged: each request's decode, or its prompt (where its decode
 * was not slow: a prompt slowed with its decode is the same slowdown) */
enum slow_mode { SLOW_DECODE, SLOW_PROMPT };
#define MIN_PROMPT 32 /* a prompt rate needs this many tokens evaluated */

/* when its prompt was evaluated: before its decode, by the server's time */
static bool prompt_window(const struct model_request *r, __u64 decode_from, __u64 *from, __u64 *to)
{
	__u64 us = 0;
	__u32 i;

	for (i = 0; i < r->srv.nr; i++)
		if (r->srv.task[i].prompt_us > us)
			us = r->srv.task[i].prompt_us;
	if (!us || decode_from < us * 1000 || decode_from - us * 1000 < r->start_ts)
		return false;
	*from = decode_from - us * 1000;
	*to = decode_from;
	return true;
}

/* the requests with a rate of that mode, their windows and concurrency */
static size_t collect(const struct model_proc *p, const struct findings *fs, enum slow_mode mode,
		      struct jreq *v)
{
	size_t i, n = 0, from = 0, seen = 0;

	/* from the newest JUDGED_MAX of them that have a window */
	for (i = p->nr_reqs; i-- > 0 && seen < JUDGED_MAX;)
		if (p->reqs[i].done && p->reqs[i].nth > 1) {
			seen++;
			from = i;
		}
	for (i = from; i < p->nr_reqs; i++) {
		const struct model_request *r = &p->reqs[i];
		struct jreq j = { .r = r };
		long long cached = model_req__cached_tokens(r);

		/* the first one warms up: its rate is no baseline, nor slow */
		if (r->nth <= 1 || !model_req__decode_window(r, &j.from, &j.to))
			continue;
		j.tokens = model_req__generated(r);
		j.prompt = model_req__prompt_tokens(r);
		j.ctx = j.prompt + (cached > 0 ? cached : 0);
		j.ctx_tokens = j.ctx + j.tokens;
		j.prate = model_req__prompt_per_s(r);
		if (mode == SLOW_DECODE) {
			j.rate = model_req__tokens_per_s(r);
			if (j.tokens < MIN_TOKENS || !(j.rate > 0))
				continue;
		} else {
			/* its prompt's tokens and time stand for its decode's */
			if (findings__slow(fs, p->pid, r->nth) || j.prompt < MIN_PROMPT ||
			    !(j.prate > 0) || !prompt_window(r, j.from, &j.from, &j.to))
				continue;
			j.rate = j.prate;
			j.tokens = j.prompt;
		}
		v[n++] = j;
	}
	qsort(v, n, sizeof(*v), by_from);
	for (i = 0; i < n; i++) {
		double over = 0, len = v[i].to > v[i].from ? (double)(v[i].to - v[i].from) : 1;
		size_t k, lo = i > NEIGHBOURS ? i - NEIGHBOURS : 0;

		for (k = lo; k < n && k <= i + NEIGHBOURS; k++) {
			__u64 a = v[k].from > v[i].from ? v[k].from : v[i].from;
			__u64 b = v[k].to < v[i].to ? v[k].to : v[i].to;

			if (k != i && b > a)
				over += b - a;
		}
		v[i].conc = over / len;
		v[i].cls = 1 + (int)lround(v[i].conc);
		if (v[i].cls > CLASSES)
			v[i].cls = CLASSES;
	}
	return n;
}

/* each class's usual rate: the median of those within TYPICAL_RATIO of its
 * 90th percentile, and their spread (MAD, as a standard deviation) */
static void baselines(struct jreq *v, size_t n, struct klass *k)
{
	double *x = malloc(n * sizeof(*x)), ref;
	size_t i, c, m;

	if (!x)
		return;
	for (c = 1; c <= CLASSES; c++) {
		for (i = m = 0; i < n; i++)
			if (v[i].cls == (int)c)
				x[m++] = v[i].rate;
		k[c].n = m;
		if (m < MIN_TYPICAL)
			continue;
		qsort(x, m, sizeof(*x), cmp_double);
		ref = x[(size_t)floor(0.9 * (m - 1))];
		for (i = m = 0; i < n; i++)
			if (v[i].cls == (int)c && v[i].rate >= TYPICAL_RATIO * ref) {
				v[i].typical = true;
				x[m++] = v[i].rate;
			}
		k[c].typical = m;
		if (m < MIN_TYPICAL)
			continue;
		k[c].baseline = median(x, m);
		spreads(x, m, k[c].baseline, &k[c].spread, &k[c].lspread);
	}
	free(x);
}

/* whether enough usual requests of its class had a context at least half
 * as long as v[i]'s: those decode no faster for their context */
static bool comparable(const struct jreq *v, size_t n, size_t i)
{
	size_t k, m = 0;

	for (k = 0; k < n && m < MIN_TYPICAL; k++)
		m += v[k].typical && v[k].cls == v[i].cls && 2 * v[k].ctx >= v[i].ctx;
	return m >= MIN_TYPICAL;
}

/* a prompt's usual rate: a short prompt fills a batch less, so only
 * prompts within a quarter of its length (of its class, a context half as
 * long at least) are its like; their usual rates' median, as the class's
 * baseline is made; 0 where there are too few */
static double expected_prompt(const struct jreq *v, size_t n, size_t i, double *spread,
			      double *lspread, size_t *n_like)
{
	double x[256], ref, e;
	size_t k, m = 0, t = 0;

	*spread = *lspread = 0;
	for (k = 0; k < n && m < 256; k++)
		if (k != i && v[k].cls == v[i].cls && 2 * v[k].ctx >= v[i].ctx &&
		    4 * (v[k].prompt > v[i].prompt ? v[k].prompt - v[i].prompt :
						     v[i].prompt - v[k].prompt) <=
			    v[i].prompt)
			x[m++] = v[k].rate;
	if (m < MIN_TYPICAL)
		return 0;
	qsort(x, m, sizeof(*x), cmp_double);
	ref = x[(size_t)floor(0.9 * (m - 1))];
	for (k = 0; k < m; k++)
		if (x[k] >= TYPICAL_RATIO * ref)
			x[t++] = x[k];
	if (t < MIN_TYPICAL)
		return 0;
	*n_like = t;
	e = median(x, t);
	spreads(x, t, e, spread, lspread);
	return e;
}

/* what a request of class c should reach at least: its class's baseline,
 * else a bound from the nearest class that has one (fewer beside it: as
 * fast as one of more; more beside it: the same throughput shared) */
static double expected_of(const struct klass *k, int c, double *lspread)
{
	int d, i;

	*lspread = 0;
	if (k[c].baseline > 0) {
		*lspread = k[c].lspread;
		return k[c].baseline;
	}
	for (d = 1; d < CLASSES; d++) {
		i = c - d;
		if (i >= 1 && k[i].baseline > 0)
			return k[i].baseline * i / c;
		i = c + d;
		if (i <= CLASSES && k[i].baseline > 0)
			return k[i].baseline;
	}
	return 0;
}

/* a counter's growth over the windows, and their seconds */
struct sum {
	double v, secs;
	bool ok; /* a window had readings */
};

/* which requests a sum is over: the slow ones of v[a..b], or every usual one */
struct span {
	const struct jreq *v;
	size_t n, a, b;
	bool slow;
	__u64 guard; /* the usual ones: none this near the slow ones (a sampling interval) */
};

static bool in_span(const struct span *w, size_t i)
{
	const struct jreq *x = &w->v[i];

	if (w->slow)
		return i >= w->a && i <= w->b && x->slow;
	/* a reading spreads an interval's counts over it: the usual requests
	 * that share one with the slow ones would count theirs */
	return x->typical &&
	       (x->to + w->guard < w->v[w->a].from || x->from > w->v[w->b].to + w->guard);
}

/* The CPU quota that held requests from..to: read once an interval, so a
 * quota set just before them is read during them or at the first reading
 * after; the first one set from `from` on, up to that reading (0: none).
 * Read at the first request's end alone it was "0.00 CPUs" once. */
static __u64 quota_over(const struct model_ticks *t, __u64 from, __u64 to)
{
	size_t k = search__after(t->p, t->n, sizeof(*t->p), offsetof(struct model_tick, ts), from);

	for (; k < t->n; k++) {
		if (t->p[k].v[MODEL_W_QUOTA_MILLI])
			return t->p[k].v[MODEL_W_QUOTA_MILLI];
		if (t->p[k].ts > to)
			break;
	}
	return 0;
}

static struct sum over_ticks(const struct model_ticks *t, int field, const struct span *w)
{
	const struct jreq *v = w->v;
	struct sum s = { 0 };
	size_t i;

	for (i = 0; i < w->n; i++) {
		double d;

		if (!in_span(w, i))
			continue;
		/* a window no reading covers (after the last) is left out */
		d = model_ticks__delta(t, field, v[i].from, v[i].to);
		if (d < 0)
			continue;
		s.v += d;
		s.secs += (v[i].to - v[i].from) / 1e9;
	}
	s.ok = s.secs > 0;
	return s;
}

static double series_delta(const struct series *s, __u64 from, __u64 to)
{
	__s64 a = 0, b = 0;

	series__at(s, from, &a);
	series__at(s, to, &b);
	return b > a ? b - a : 0;
}

static double over_series(const struct series *s, const struct span *w, double *tokens)
{
	double sum = 0;
	size_t i;

	*tokens = 0;
	for (i = 0; i < w->n; i++)
		if (in_span(w, i)) {
			sum += series_delta(s, w->v[i].from, w->v[i].to);
			*tokens += w->v[i].tokens;
		}
	return sum;
}

static double per_s(struct sum s)
{
	return s.ok ? s.v / s.secs : NAN;
}

/* what one run of slow requests (v[a..b]) saw, against the usual ones */
struct seen {
	double maj, maj_s, maj_before_s, maj_token, maj_file, maj_anon;
	double flt, flt_s, flt_before_s; /* every page fault, minor ones too */
	double rd, rd_s, rd_before_s;	 /* bytes read from storage */
	double refault_file, refault_anon, refault_s;
	bool refault_cgroup;
	double delay, delay_before, throttled, throttled_before;
	double psi_mem, psi_cpu, psi_io;
	double graphs, graphs_token, graphs_before_token;
	double evicted, evicted_ts;
	__u32 evictor;
	double clock, clock_before, clock_max; /* NVML: its GPUs' SM clock, MHz */
	__u64 clock_reasons;		       /* why it was held down, in the slow ones */
	size_t ctx_full;
	double state, state_before; /* sequence state copied a request: prompt-cache saves, loads */
	bool memory, cpu, cpu_throttled, graphs_again, evictions, context, clocks, state_copies;
};

/* the mean of a series' points in the requests' windows; NAN for none */
static double mean_in(const struct series *x, const struct span *w, __u64 *or_bits)
{
	double sum = 0, n = 0;
	size_t i, k;

	for (i = 0; i < w->n; i++) {
		if (!in_span(w, i))
			continue;
		for (k = series__after(x, w->v[i].from); k < x->n && x->p[k].ts <= w->v[i].to;
		     k++) {
			sum += x->p[k].v;
			n++;
			if (or_bits)
				*or_bits |= x->p[k].v;
		}
	}
	return n ? sum / n : NAN;
}

/* the GPUs it has memory on, as NVML reads them: the SM clock in the slow
 * requests against the usual ones, and why NVML says it was held down */
static void look_clocks(const struct model *m, const struct model_proc *p, const struct span *sl,
			const struct span *us, struct seen *s)
{
	double slow = 0, usual = 0, n = 0;
	size_t i;

	for (i = 0; i < m->nr_nvml; i++) {
		const struct model_nvml *d = &m->nvml[i];
		double a, b;

		if (d->index >= MODEL_NVML_DEVS || !p->nvml_dev_used[d->index] ||
		    !(d->clocks_valid & MODEL_NVML_CLOCK))
			continue;
		a = mean_in(&d->sm_mhz, sl, NULL);
		b = mean_in(&d->sm_mhz, us, NULL);
		mean_in(&d->reasons, sl, &s->clock_reasons);
		if (isnan(a) || isnan(b))
			continue;
		slow += a;
		usual += b;
		n++;
		if (d->sm_max_mhz > s->clock_max)
			s->clock_max = d->sm_max_mhz;
	}
	s->clock = n ? slow / n : NAN;
	s->clock_before = n ? usual / n : NAN;
	s->clocks =
		n && s->clock < 0.8 * s->clock_before && (s->clock_reasons & MODEL_NVML_SLOWING);
}

static void look(const struct model *m, const struct model_proc *p, struct jreq *v, size_t n,
		 size_t a, size_t b, struct seen *s)
{
	const struct model_ticks *w = &p->waits;
	__u64 guard = (m->interval_ms ? m->interval_ms : 1000) * 1000000ull;
	const struct span sl = { v, n, a, b, true, 0 }, us = { v, n, a, b, false, guard };
	struct sum run, delay, brun, bdelay, per, thr, bper, bthr;
	double tokens = 0, btokens = 0;
	__u64 to = v[b].to, before = 0;
	size_t i;

	memset(s, 0, sizeof(*s));
	/* memory read back: what it read from storage, its page faults (a
	 * fault on a page read ahead is a minor one), major ones, refaults */
	run = over_ticks(w, MODEL_W_MAJFLT, &sl);
	brun = over_ticks(w, MODEL_W_MAJFLT, &us);
	s->maj = run.ok ? run.v : NAN;
	s->maj_s = per_s(run);
	s->maj_before_s = brun.ok ? per_s(brun) : 0;
	for (i = a; i <= b; i++)
		tokens += v[i].slow ? v[i].tokens : 0;
	delay = over_ticks(w, MODEL_W_MINFLT, &sl);
	bdelay = over_ticks(w, MODEL_W_MINFLT, &us);
	s->flt = run.ok && delay.ok ? run.v + delay.v : NAN;
	s->flt_s = run.ok && delay.ok ? s->flt / run.secs : NAN;
	s->flt_before_s = brun.ok && bdelay.ok ? (brun.v + bdelay.v) / brun.secs : 0;
	s->maj_token = tokens ? s->flt / tokens : NAN;
	run = over_ticks(w, MODEL_W_READ_BYTES, &sl);
	brun = over_ticks(w, MODEL_W_READ_BYTES, &us);
	s->rd = (p->waits_flags & MODEL_WAITS_IO) && run.ok ? run.v : NAN;
	s->rd_s = isfinite(s->rd) ? run.v / run.secs : NAN;
	s->rd_before_s = brun.ok ? per_s(brun) : 0;
	s->refault_cgroup = p->waits_flags & MODEL_WAITS_REFAULTS;
	{
		const struct model_ticks *rt = s->refault_cgroup ? w : &m->host_ticks;
		int ff = s->refault_cgroup ? MODEL_W_REFAULT_FILE : MODEL_H_REFAULT_FILE;
		int fa = s->refault_cgroup ? MODEL_W_REFAULT_ANON : MODEL_H_REFAULT_ANON;
		struct sum rf = over_ticks(rt, ff, &sl), ra = over_ticks(rt, fa, &sl);

		s->refault_file = rf.ok ? rf.v : NAN;
		s->refault_anon = ra.ok ? ra.v : NAN;
		s->refault_s = rf.ok && ra.ok ? (rf.v + ra.v) / rf.secs : NAN;
	}
	s->memory =
		(run.ok && isfinite(s->maj_s) && s->maj_s >= 20 &&
		 s->maj_s >= 4 * s->maj_before_s + 10) ||
		(s->rd_s >= 4 * MIB_F && s->rd_s >= 4 * s->rd_before_s + MIB_F) ||
		(s->refault_s >= 100 && s->flt_s >= 100 && s->flt_s >= 4 * s->flt_before_s + 50);
	s->maj_file = over_series(&p->major_file, &sl, &btokens);
	s->maj_anon = over_series(&p->major_anon, &sl, &btokens);
	/* a CPU: time runnable but waiting, of the time it wanted one */
	run = over_ticks(w, MODEL_W_RUN_NS, &sl);
	delay = over_ticks(w, MODEL_W_DELAY_NS, &sl);
	brun = over_ticks(w, MODEL_W_RUN_NS, &us);
	bdelay = over_ticks(w, MODEL_W_DELAY_NS, &us);
	s->delay = run.ok && delay.ok && run.v + delay.v > 0 ? delay.v / (run.v + delay.v) : NAN;
	s->delay_before =
		brun.ok && bdelay.ok && brun.v + bdelay.v > 0 ? bdelay.v / (brun.v + bdelay.v) : 0;
	per = over_ticks(w, MODEL_W_PERIODS, &sl);
	thr = over_ticks(w, MODEL_W_THROTTLED, &sl);
	bper = over_ticks(w, MODEL_W_PERIODS, &us);
	bthr = over_ticks(w, MODEL_W_THROTTLED, &us);
	s->throttled = per.ok && thr.ok && per.v > 0 ? thr.v / per.v : NAN;
	s->throttled_before = bper.ok && bthr.ok && bper.v > 0 ? bthr.v / bper.v : 0;
	s->cpu_throttled = s->throttled >= 0.25 && s->throttled >= 2 * s->throttled_before + 0.1;
	/* a fifth more of its threads' time waiting than usual, and a quarter at least */
	s->cpu = s->cpu_throttled || (s->delay >= 0.25 && s->delay >= s->delay_before + 0.2);
	/* pressure, as shares of the windows' time */
	run = over_ticks(w, MODEL_W_PSI_MEM_SOME, &sl);
	s->psi_mem = run.ok ? run.v / 1e6 / run.secs : NAN;
	run = over_ticks(w, MODEL_W_PSI_CPU_SOME, &sl);
	s->psi_cpu = run.ok ? run.v / 1e6 / run.secs : NAN;
	run = over_ticks(w, MODEL_W_PSI_IO_SOME, &sl);
	s->psi_io = run.ok ? run.v / 1e6 / run.secs : NAN;
	/* the GPU: graphs instantiated again, buffers evicted from VRAM */
	if (p->gpu && p->gpu->graphs_made.n) {
		s->graphs = over_series(&p->gpu->graphs_made, &sl, &tokens);
		s->graphs_token = tokens ? s->graphs / tokens : 0;
		s->graphs_before_token = over_series(&p->gpu->graphs_made, &us, &btokens);
		s->graphs_before_token = btokens ? s->graphs_before_token / btokens : 0;
		s->graphs_again = s->graphs_token >= 0.1 &&
				  s->graphs_token >= 5 * s->graphs_before_token + 0.02;
	}
	/* evictions after the last usual request before these, up to their end */
	for (i = a; i-- > 0;)
		if (v[i].typical) {
			before = v[i].to;
			break;
		}
	for (i = 0; i < m->nr_evictions; i++) {
		const struct model_eviction *e = &m->evictions[i];

		if (e->owner != p->pid || e->from != MODEL_PL_VRAM || e->ts < before || e->ts > to)
			continue;
		if (!s->evicted)
			s->evicted_ts = model__secs(m, e->ts);
		s->evicted += e->size;
		s->evictor = e->evictor;
	}
	s->evictions = s->evicted > 0;
	look_clocks(m, p, &sl, &us, s);
	/* the server's own: its prompt cache's copies of a sequence's state,
	 * a request, against the usual ones */
	if (p->lstate_bytes.n) {
		double nsl = 0, nus = 0;

		for (i = 0; i < n; i++) {
			nsl += in_span(&sl, i);
			nus += in_span(&us, i);
		}
		s->state = nsl ? over_series(&p->lstate_bytes, &sl, &tokens) / nsl : 0;
		s->state_before = nus ? over_series(&p->lstate_bytes, &us, &btokens) / nus : 0;
		s->state_copies = s->state >= 16 * MIB_F && s->state >= 4 * s->state_before + MIB_F;
	}
}

/* the server's own: a context full to its slot's size */
static void look_server(const struct model_proc *p, const struct jreq *v, size_t a, size_t b,
			struct seen *s, double *slot_out)
{
	struct llama_conf c;
	double slot;
	size_t i, n = 0;

	*slot_out = 0;
	if (!llama_conf__read(p, &c) || c.ctx.v <= 0)
		return;
	slot = c.kv_unified.v ? c.ctx.v : (double)c.ctx.v / llama_conf__slots(&c);
	for (i = a; i <= b; i++)
		if (v[i].slow) {
			n++;
			s->ctx_full += v[i].ctx_tokens >= slot;
		}
	*slot_out = slot;
	s->context = n && s->ctx_full * 2 >= n;
}

/* the tightest memory limit that bound it over [from, to] (0: none), and
 * when it took that value and what it was before (*when 0: not seen) */
static __u64 limit_over(const struct model_proc *p, __u64 from, __u64 to, __u64 *when, __u64 *was)
{
	const struct series *s = &p->mem_limit_s;
	size_t k = series__after(s, from), i, first = s->n;
	__u64 lim = 0;

	*when = *was = 0;
	for (i = k ? k - 1 : 0; i < s->n && s->p[i].ts <= to; i++)
		if (s->p[i].v > 0 && (!lim || (__u64)s->p[i].v < lim)) {
			lim = s->p[i].v;
			first = i;
		}
	if (!lim)
		return 0;
	for (i = first; i > 0 && (__u64)s->p[i - 1].v == lim; i--)
		;
	if (i > 0) {
		*when = s->p[i].ts;
		*was = s->p[i - 1].v > 0 ? s->p[i - 1].v : 0;
	}
	return lim;
}

/* when it changed next after ts, and to what */
static bool limit_next(const struct model_proc *p, __u64 ts, __u64 *when, __u64 *to)
{
	const struct series *s = &p->mem_limit_s;
	size_t k;

	for (k = series__after(s, ts); k > 0 && k < s->n; k++)
		if (s->p[k].v != s->p[k - 1].v) {
			*when = s->p[k].ts;
			*to = s->p[k].v > 0 ? s->p[k].v : 0;
			return true;
		}
	return false;
}

/* the most a series held over [from, to] */
static __s64 series_max(const struct series *s, __u64 from, __u64 to)
{
	__s64 v = 0, x = 0;
	size_t k;

	series__at(s, from, &v);
	for (k = series__after(s, from); k < s->n && s->p[k].ts <= to; k++)
		x = s->p[k].v > x ? s->p[k].v : x;
	return v > x ? v : x;
}

static __s64 series_min(const struct series *s, __u64 from, __u64 to)
{
	__s64 v = 0;
	bool any = series__at(s, from, &v);
	size_t k;

	for (k = series__after(s, from); k < s->n && s->p[k].ts <= to; k++)
		if (!any || s->p[k].v < v) {
			v = s->p[k].v;
			any = true;
		}
	return v;
}

/* the end of the last usual request before v[a] (else v[a]'s start) */
static __u64 before_ts(const struct jreq *v, size_t a)
{
	size_t i;

	for (i = a; i-- > 0;)
		if (v[i].typical)
			return v[i].to;
	return v[a].from;
}

/* Mann-Whitney: how sure the slow ones are slower than the usual ones */
static double sureness(const struct jreq *v, size_t n, size_t a, size_t b)
{
	double u = 0, nx = 0, ny = 0, mu, sd, z;
	size_t i, k;

	for (i = a; i <= b; i++) {
		if (!v[i].slow)
			continue;
		nx++;
		for (k = 0; k < n; k++)
			if (v[k].typical && v[k].cls == v[i].cls)
				u += v[i].rate < v[k].rate ? 1 : v[i].rate == v[k].rate ? 0.5 : 0;
	}
	for (k = 0; k < n; k++)
		ny += v[k].typical && v[k].cls == v[a].cls;
	if (!nx || !ny)
		return 0.5;
	mu = nx * ny / 2;
	sd = sqrt(nx * ny * (nx + ny + 1) / 12);
	z = sd > 0 ? (u - mu) / sd : 0;
	return 0.5 * erfc(-z / sqrt(2));
}

static double median_of(const struct jreq *v, size_t a, size_t b, bool slow, bool prompt)
{
	double x[512];
	size_t i, m = 0;

	for (i = a; i <= b && m < 512; i++)
		if ((slow ? v[i].slow : v[i].typical) && (!prompt || v[i].prate > 0))
			x[m++] = prompt ? v[i].prate : v[i].rate;
	return median(x, m);
}

static void report(const struct model *m, const struct model_proc *p, struct jreq *v, size_t n,
		   size_t a, size_t b, const struct klass *k, enum slow_mode mode,
		   struct findings *fs)
{
	struct seen s;
	struct finding *f;
	struct llama_conf conf;
	double slot, rate, base, spread, after = NAN, before_p, during_p, need = 0;
	double try_cpus = 0, try_threads = 0, try_quota = 0, n_base, lost = 0;
	size_t i, ns = 0, na = 0, back = 0, longer = 0;
	__u64 lim, was = 0, changed = 0, next_ts = 0, next_to = 0, fsize = 0;
	__s64 rss_file = 0, anon = 0, vm = 0;
	const struct model_file *file = model__data_file(p);
	bool server = llama_conf__read(p, &conf), any;
	int c = v[a].cls;

	look(m, p, v, n, a, b, &s);
	look_server(p, v, a, b, &s, &slot);
	any = s.memory || s.cpu || s.graphs_again || s.evictions || s.clocks || s.context ||
	      s.state_copies;
	for (i = a; i <= b; i++) {
		double t = mode == SLOW_DECODE ? v[i].tokens : v[i].prompt,
		       r = mode == SLOW_DECODE ? v[i].rate : v[i].prate;

		ns += v[i].slow;
		/* a context longer than the usual ones' decodes slower */
		longer += v[i].slow && v[i].longer;
		if (v[i].slow && r > 0)
			lost += t / r - t / v[i].expected;
	}
	/* requests of a few milliseconds swing by as much with the scheduler:
	 * a slowdown is time its requests lost that anyone would notice (two
	 * requests of 56 tokens at 1,400 tokens/s against 2,570 lost 36 ms) */
	if (lost < MIN_LOST_S)
		return;
	if (!any && ns - longer < 2)
		return;
	f = findings__add(fs, F_SLOWDOWN, p->pid);
	if (!f)
		return;
	for (i = 0; i < n; i++) {
		if (i > b && v[i].typical && !back)
			back = i;
		na += i > b && v[i].typical;
	}
	rate = median_of(v, a, b, true, false);
	/* a prompt's baseline is its like prompts', each its own */
	base = mode == SLOW_DECODE && k[c].baseline > 0 ? k[c].baseline : v[a].expected;
	spread = mode == SLOW_DECODE && k[c].baseline > 0 ? k[c].spread : v[a].spread;
	n_base = mode == SLOW_DECODE ? k[c].typical : v[a].n_like;
	snprintf(f->category, sizeof(f->category),
		 mode == SLOW_DECODE ? "decode_rate" : "prompt_rate");
	snprintf(f->where, sizeof(f->where), mode == SLOW_DECODE ? "decode rate" : "prompt rate");
	f->per_request = true;
	f->points = n;
	f->since_s = model__secs(m, v[a].r->start_ts);
	f->since_request = v[a].r->nth;
	f->first = base;
	f->last = rate;
	f->confidence = sureness(v, n, a, b);
	finding__num(f, "baseline_rate", base);
	if (isfinite(spread))
		finding__num(f, "baseline_spread", spread);
	finding__num(f, "rate", rate);
	finding__num(f, "ratio", base / rate);
	finding__num(f, "lost_s", lost);
	finding__num(f, "slow_requests", ns);
	finding__num(f, "first_request", v[a].r->nth);
	finding__num(f, "last_request", v[b].r->nth);
	finding__num(f, "first_s", model__secs(m, v[a].r->start_ts));
	finding__num(f, "last_s", model__secs(m, v[b].r->end_ts));
	finding__num(f, "baseline_requests", n_base);
	finding__num(f, "concurrency", c);
	SAY(f, M_SLOW, .where = f->where, .n = ns, .first = v[a].r->nth, .last = v[b].r->nth,
	    .rate = rate, .baseline = base, .spread = spread, .ratio = base / rate,
	    .n_base = n_base, .seconds = f->since_s, .slots = c, .prompt = mode == SLOW_PROMPT);
	if (back) {
		after = v[back].rate;
		finding__num(f, "recovered_rate", after);
		finding__num(f, "recovered_request", v[back].r->nth);
		SAY(f, M_SLOW_BACK, .request = v[back].r->nth, .rate = after, .n = na);
	} else {
		SAY(f, M_SLOW_TO_END, .more = n - 1 - b);
	}
	/* the cause, strongest first */
	finding__str(f, "cause",
		     s.memory	    ? "memory" :
		     s.cpu	    ? "cpu" :
		     s.evictions    ? "vram_eviction" :
		     s.clocks	    ? "gpu_clocks" :
		     s.graphs_again ? "cuda_graphs" :
		     s.state_copies ? "prompt_cache" :
		     s.context	    ? "context_full" :
				      "none");
	if (isfinite(s.maj)) {
		finding__num(f, "major_faults", s.maj);
		finding__num(f, "major_faults_per_s", s.maj_s);
		finding__num(f, "major_faults_before_per_s", s.maj_before_s);
	}
	if (isfinite(s.flt)) {
		finding__num(f, "page_faults", s.flt);
		finding__num(f, "page_faults_per_s", s.flt_s);
		finding__num(f, "page_faults_before_per_s", s.flt_before_s);
	}
	if (isfinite(s.rd)) {
		finding__num(f, "read_bytes", s.rd);
		finding__num(f, "read_bytes_per_s", s.rd_s);
		finding__num(f, "read_bytes_before_per_s", s.rd_before_s);
	}
	if (isfinite(s.refault_file) && isfinite(s.refault_anon))
		finding__num(f, "refaults", s.refault_file + s.refault_anon);
	if (isfinite(s.delay)) {
		finding__num(f, "cpu_wait_share", s.delay);
		finding__num(f, "cpu_wait_share_before", s.delay_before);
	}
	if (isfinite(s.throttled))
		finding__num(f, "throttled_share", s.throttled);
	if (s.memory) {
		bool anon_more = s.maj_anon > s.maj_file ||
				 (isfinite(s.refault_anon) && s.refault_anon > s.refault_file);
		const char *where = anon_more ? "its anonymous memory" :
				    s.maj_file > 0 || s.refault_file > 0 || s.rd > 0 ?
						"the files it maps" :
						"";

		finding__num(f, "page_faults_per_token", s.maj_token);
		SAY(f, M_SLOW_READ_BACK, .where = where, .read = s.rd, .read_s = s.rd_s,
		    .read_before = s.rd_before_s, .faults_s = s.flt_s,
		    .faults_before = s.flt_before_s, .major = s.maj, .major_s = s.maj_s,
		    .refaults = isfinite(s.refault_file) && isfinite(s.refault_anon) ?
					s.refault_file + s.refault_anon :
					NAN,
		    .per_token = s.maj_token);
		/* the lowest over them: read at their end, a limit lifted as the
		 * last one ended had the weights back already (312 MB of a
		 * 245 MB model, in a fresh clone's run) */
		rss_file = series_min(&p->rss[MODEL_RSS_FILE], v[a].from, v[b].to);
		/* what it held before: its heap, swapped out or not, at the last
		 * usual request before these */
		series__at(&p->anon_swap, before_ts(v, a), &anon);
		if (file) {
			fsize = file->size;
			finding__str(f, "model_file", file->name);
			finding__num(f, "model_file_bytes", file->size);
			finding__num(f, "model_file_resident_min_bytes", file->rss_min);
			finding__num(f, "file_rss_bytes", rss_file);
		}
		if (file && conf.mmap.v && (double)rss_file < 0.9 * file->size)
			SAY(f, M_SLOW_FILE_OUT, .file = file->name, .size = file->size,
			    .resident = file->rss_min, .rss_file = rss_file, .low = rss_file);
		vm = series_max(&p->rss[MODEL_RSS_SWAP], v[a].from, v[b].to);
		{
			const struct span sl = { v, n, a, b, true, 0 };
			struct sum sw = over_ticks(&m->host_ticks, MODEL_H_PSWPIN, &sl);
			double sw_s = per_s(sw) * m->page_size;

			if ((vm > 0 || s.maj_anon > s.maj_file) && sw.ok && sw.v > 0) {
				finding__num(f, "swap_in_bytes_per_s", sw_s);
				SAY(f, M_SLOW_SWAPPED, .swap = vm, .swapins = sw_s);
			}
		}
		/* why: the limit that binds it, lowered; else the host */
		need = (double)fsize + anon;
		lim = limit_over(p, v[a].from, v[b].to, &changed, &was);
		if (lim) {
			bool up = limit_next(p, v[b].to, &next_ts, &next_to);

			finding__num(f, "limit_bytes", lim);
			if (changed) {
				finding__num(f, "limit_before_bytes", was);
				finding__num(f, "limit_changed_s", model__secs(m, changed));
			}
			if (up)
				finding__num(f, "limit_after_bytes", next_to);
			SAY(f, M_SLOW_LIMIT,
			    .cgroup = p->mem_limit_cgroup[0] ? p->mem_limit_cgroup : "?",
			    .file = p->mem_limit_file == MODEL_LIMIT_V1_HARD ?
					    "memory.limit_in_bytes" :
				    p->mem_limit_file == MODEL_LIMIT_V2_HIGH ? "memory.high" :
									       "memory.max",
			    .limit = lim, .before = changed ? (double)was : NAN,
			    .seconds = changed ? model__secs(m, changed) : NAN,
			    .raised = up ? (double)next_to : NAN,
			    .raised_s = up ? model__secs(m, next_ts) : NAN, .need = need);
		} else {
			__u64 av = 0, av0 = 0;

			if (model_ticks__at(&m->host_ticks, MODEL_H_AVAILABLE, v[a].from, &av) &&
			    model_ticks__at(&m->host_ticks, MODEL_H_AVAILABLE, m->start_ts, &av0) &&
			    av)
				SAY(f, M_SLOW_HOST_MEMORY, .available = av, .before = av0,
				    .total = m->mem_total);
		}
		if (isfinite(s.psi_mem) && s.psi_mem >= 0.05)
			SAY(f, M_SLOW_PRESSURE, .share = s.psi_mem,
			    .cgroup = !!(p->waits_flags & MODEL_WAITS_PSI_CGROUP));
	}
	if (s.cpu) {
		__u64 quota = 0, cpus = 0, running = 0;
		/* its compute threads where -t says (its own threads include idle ones) */
		double threads = conf.threads.v > 0 ? conf.threads.v : 0;

		quota = quota_over(&p->waits, v[a].from, v[b].to);
		model_ticks__at(&p->waits, MODEL_W_CPUS, v[a].to, &cpus);
		model_ticks__at(&m->host_ticks, MODEL_H_RUNNING, v[a].to, &running);
		if (quota)
			finding__num(f, "cpu_quota", quota / 1000.0);
		finding__num(f, "cpus_allowed", cpus);
		if (s.cpu_throttled) {
			__u64 q0 = 0;

			model_ticks__at(&p->waits, MODEL_W_QUOTA_MILLI, m->start_ts, &q0);
			SAY(f, M_SLOW_THROTTLED, .cgroup = p->cpu_cgroup[0] ? p->cpu_cgroup : "?",
			    .quota = quota / 1000.0, .share = s.throttled,
			    .before_quota = q0 != quota ? q0 / 1000.0 : NAN, .seconds = NAN,
			    .threads = threads, .v2 = !!(p->waits_flags & MODEL_WAITS_CPU_V2));
		} else {
			SAY(f, M_SLOW_CPU_WAIT, .share = s.delay, .before = s.delay_before,
			    .cpus = cpus, .running = running, .threads = threads);
		}
		try_cpus = cpus;
		try_threads = threads;
		try_quota = quota / 1000.0;
	}
	if (s.evictions) {
		finding__num(f, "evicted_bytes", s.evicted);
		SAY(f, M_SLOW_EVICTED, .bytes = s.evicted, .seconds = s.evicted_ts,
		    .evictor = s.evictor);
	}
	if (isfinite(s.clock)) {
		finding__num(f, "gpu_sm_mhz", s.clock);
		finding__num(f, "gpu_sm_mhz_before", s.clock_before);
	}
	if (s.clocks) {
		finding__num(f, "gpu_clock_reasons", s.clock_reasons);
		SAY(f, M_SLOW_CLOCKS, .mhz = s.clock, .before = s.clock_before, .max = s.clock_max,
		    .power = !!(s.clock_reasons & 0x84), .thermal = !!(s.clock_reasons & 0x60),
		    .hw = !!(s.clock_reasons & 0x8));
	}
	if (s.graphs_again) {
		finding__num(f, "graphs_per_token", s.graphs_token);
		SAY(f, M_SLOW_GRAPHS, .count = s.graphs, .per_token = s.graphs_token,
		    .before = s.graphs_before_token);
	}
	if (s.state_copies) {
		finding__num(f, "state_bytes_per_request", s.state);
		finding__num(f, "state_bytes_before_per_request", s.state_before);
		SAY(f, M_SLOW_STATE_COPIES, .bytes = s.state, .before = s.state_before);
	}
	if (s.context && server)
		SAY(f, M_SLOW_CONTEXT_FULL, .n = s.ctx_full, .slot = slot);
	if (!any)
		SAY(f, M_SLOW_NO_CAUSE, .faults = isfinite(s.maj), .waits = isfinite(s.delay),
		    .gpu = p->gpu != NULL);
	/* what to try, for the strongest cause */
	if (s.memory)
		SAY(f, M_SLOW_TRY_MEMORY, .mmap = conf.mmap.v && file, .mlock = conf.mlock.v,
		    .need = need);
	else if (s.cpu)
		SAY(f, M_SLOW_TRY_CPU, .throttled = s.cpu_throttled, .cpus = try_cpus,
		    .threads = try_threads, .quota = try_quota);
	else if (s.graphs_again)
		SAY(f, M_SLOW_TRY_GRAPHS);
	/* the evidence: rates, then what was counted */
	EVIDENCE(f, E_SLOW_RATES, .where = f->where, .before = base, .during = rate, .after = after,
		 .n_before = n_base, .n_during = ns, .n_after = na);
	before_p = median_of(v, 0, n - 1, false, true);
	during_p = median_of(v, a, b, true, true);
	if (isfinite(before_p) && isfinite(during_p)) {
		finding__num(f, "prompt_rate_before", before_p);
		finding__num(f, "prompt_rate", during_p);
		EVIDENCE(f, E_SLOW_PROMPT, .before = before_p, .during = during_p);
	}
	if (isfinite(s.flt_s))
		EVIDENCE(f, E_SLOW_FAULTS, .before = s.flt_before_s, .during = s.flt_s,
			 .major_before = s.maj_before_s, .major = s.maj_s, .file = s.maj_file,
			 .anon = s.maj_anon);
	if (isfinite(s.rd_s))
		EVIDENCE(f, E_SLOW_READS, .before = s.rd_before_s, .during = s.rd_s,
			 .refaults = isfinite(s.refault_s) ? s.refault_file + s.refault_anon : NAN,
			 .cgroup = s.refault_cgroup);
	if (isfinite(s.delay))
		EVIDENCE(f, E_SLOW_WAITS, .before = s.delay_before, .during = s.delay,
			 .throttled = isfinite(s.throttled) ? s.throttled : NAN);
	if (isfinite(s.psi_mem))
		EVIDENCE(f, E_SLOW_PRESSURE, .memory = s.psi_mem, .cpu = s.psi_cpu, .io = s.psi_io,
			 .cgroup = !!(p->waits_flags & MODEL_WAITS_PSI_CGROUP));
	if (c > 1)
		EVIDENCE(f, E_SLOW_SLOTS, .slots = c, .n = k[c].typical);
	/* which requests, for the reports' tables */
	for (i = a; i <= b; i++)
		if (v[i].slow)
			findings__mark_slow(fs, p->pid, v[i].r->nth, base / v[i].rate, f->strs[0],
					    mode == SLOW_PROMPT);
}

static void judge(const struct model *m, const struct model_proc *p, enum slow_mode mode,
		  struct findings *fs)
{
	struct klass k[CLASSES + 1];
	struct jreq *v = calloc(p->nr_reqs < JUDGED_MAX ? p->nr_reqs : JUDGED_MAX, sizeof(*v));
	size_t n, i, a, episodes = 0;
	double lspread;

	if (!v)
		return;
	n = collect(p, fs, mode, v);
	memset(k, 0, sizeof(k));
	baselines(v, n, k);
	for (i = 0; i < n; i++) {
		if (mode == SLOW_DECODE) {
			v[i].expected = expected_of(k, v[i].cls, &lspread);
			v[i].longer = !comparable(v, n, i);
		} else {
			v[i].expected =
				expected_prompt(v, n, i, &v[i].spread, &lspread, &v[i].n_like);
			v[i].longer = !(v[i].expected > 0);
		}
		/* four spreads below, by ratio: the usual rates are within
		 * TYPICAL_RATIO of their 90th percentile, so however they
		 * vary, a rate a fifth of theirs is slow (after a CPU quota was
		 * lifted a server ran at 360 against 520 before it: 4 linear
		 * spreads below 483 was 51, and 62 under the quota was not slow) */
		v[i].slow = v[i].expected > 0 && v[i].rate < SLOW_RATIO * v[i].expected &&
			    v[i].rate < v[i].expected * exp(-4 * lspread);
	}
	/* runs of slow requests, in the order they ran */
	for (i = 0; i < n; i = a + 1) {
		for (; i < n && !v[i].slow; i++)
			;
		if (i == n)
			break;
		for (a = i; a + 1 < n && v[a + 1].slow; a++)
			;
		if (episodes++ < EPISODES)
			report(m, p, v, n, i, a, k, mode, fs);
	}
	free(v);
}

void findings__slowdowns(const struct model *m, const struct model_proc *p, struct findings *fs)
{
	size_t from = fs->nr_slow;

	if (!p->nr_reqs)
		return;
	judge(m, p, SLOW_DECODE, fs);
	/* the prompts of the requests whose decode was not slow (the marks
	 * searched by request, so sorted) */
	if (fs->nr_slow > from)
		findings__sort_slow(fs);
	judge(m, p, SLOW_PROMPT, fs);
}
