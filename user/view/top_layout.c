// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Top layout: owns the live view's screen as text: the header, the probes
 * and the verdicts, then the memory, requests and events panels sharing the
 * rows left (or the help), then the footer; and the one plain line for a
 * log or a pipe. No curses here, so it is unit tested and the plain-lines
 * mode shares it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/fmt.h"
#include "stream/gpufuncs.h"
#include "analysis/requests.h"
#include "analysis/words.h"
#include "top_layout.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
#define D(buf, v) fmt_delta(buf, sizeof(buf), v)
#define RATE_WINDOW_NS 10000000000ull /* the /s column: over the last 10 s */
#define MIN_COLS 40
#define MIN_ROWS 12
#define MAX_VERDICTS 3

struct screen {
	struct top_line *out;
	size_t n, max;
	int cols;
};

static struct top_line *line(struct screen *s, unsigned char attr)
{
	struct top_line *l;

	if (s->n >= s->max)
		return NULL;
	l = &s->out[s->n++];
	memset(l, 0, sizeof(*l));
	l->attr = attr;
	return l;
}

/* appends to the line, cut at the screen's width; `attr` marks it */
static void put(struct screen *s, struct top_line *l, unsigned char attr, const char *fmt, ...)
{
	size_t len, at, room;
	va_list ap;

	if (!l)
		return;
	at = strlen(l->text);
	room = (size_t)s->cols < sizeof(l->text) - 1 ? (size_t)s->cols : sizeof(l->text) - 1;
	if (at >= room)
		return;
	va_start(ap, fmt);
	vsnprintf(l->text + at, room - at + 1, fmt, ap);
	va_end(ap);
	len = strlen(l->text) - at;
	if (attr != TA_NORMAL && len && l->nspan < TOP_SPANS) {
		l->span[l->nspan].at = at;
		l->span[l->nspan].len = len;
		l->span[l->nspan++].attr = attr;
	}
}

static const struct model_proc *target(const struct model *m)
{
	const struct model_proc *p = model__proc(m, m->target_pid);

	return p ? p : m->nr_procs ? m->procs[0] : NULL;
}

void top__spark(const double *v, unsigned int n, char *buf, size_t width)
{
	static const char levels[] = " _.-=+*#";
	double lo = INFINITY, hi = -INFINITY;
	unsigned int i, from = n > width ? n - width : 0;

	for (i = from; i < n; i++) {
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
	}
	for (i = from; i < n; i++) {
		int k = hi > lo ? (int)((v[i] - lo) / (hi - lo) * 7 + 0.5) : 1;

		buf[i - from] = levels[k < 0 ? 0 : k > 7 ? 7 : k];
	}
	buf[n - from] = 0;
}

static struct top_history *history_of(struct top_state *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nr_hist; i++)
		if (!strcmp(st->hist[i].name, name))
			return &st->hist[i];
	if (st->nr_hist == CAT_MAX)
		return NULL;
	memset(&st->hist[st->nr_hist], 0, sizeof(st->hist[0]));
	memcpy(st->hist[st->nr_hist].name, name, strnlen(name, sizeof(st->hist[0].name) - 1));
	return &st->hist[st->nr_hist++];
}

void top__sample(const struct model *m, struct top_state *st)
{
	const struct model_proc *p = target(m);
	struct category cats[CAT_MAX];
	size_t n = p ? categories__list(m, p, cats, CAT_MAX) : 0, i;
	struct top_history *h;
	double v;

	for (i = 0; i < n; i++) {
		if (!category__level(&cats[i], st->now, &v) || !(h = history_of(st, cats[i].name)))
			continue;
		h->v[h->head] = v;
		h->head = (h->head + 1) % TOP_HISTORY;
		h->n += h->n < TOP_HISTORY;
	}
}

/* the history oldest first */
static unsigned int history(const struct top_state *st, const char *name, double *v)
{
	unsigned int i, k;
	size_t j;

	for (j = 0; j < st->nr_hist; j++) {
		const struct top_history *h = &st->hist[j];

		if (strcmp(h->name, name))
			continue;
		for (i = 0; i < h->n; i++) {
			k = (h->head + TOP_HISTORY - h->n + i) % TOP_HISTORY;
			v[i] = h->v[k];
		}
		return h->n;
	}
	return 0;
}

static void header(struct screen *s, const struct model *m, const struct top_state *st)
{
	const struct model_proc *p = target(m);
	struct top_line *l = line(s, TA_STATUS);
	__u64 up = st->now > m->start_ts ? (st->now - m->start_ts) / 1000000000ull : 0, lost = 0;
	size_t i;

	for (i = 0; i < MODEL_SRC_NR; i++)
		lost += m->lost[i];
	put(s, l, TA_STATUS, "gpumemtrace  pid %u %s  %s %02llu:%02llu:%02llu  %.0f ev/s  ",
	    m->target_pid, p && p->comm[0] ? p->comm : "?", st->replay ? "at" : "up",
	    (unsigned long long)up / 3600, (unsigned long long)up / 60 % 60,
	    (unsigned long long)up % 60, st->events_per_s);
	put(s, l, lost ? TA_ALERT : TA_STATUS, "lost %llu", (unsigned long long)lost);
	if (p && p->exited)
		put(s, l, TA_ALERT, "  exited");
	if (st->recording)
		put(s, l, TA_STATUS, "  %s %s", st->replay ? "replay" : "rec", st->recording);
	if (st->replay && st->speed != 1)
		put(s, l, TA_STATUS, " x%g", st->speed);
	if (st->paused)
		put(s, l, TA_ALERT, "  PAUSED");
	if (st->finished)
		put(s, l, TA_ALERT, "  END (q for the report)");
	if (m->cmdline && m->cmdline[0])
		put(s, l, TA_STATUS, "  $ %s", m->cmdline);
}

static void probes(struct screen *s, const struct model *m)
{
	struct top_line *l = line(s, TA_DIM);
	size_t i, k;
	int n;

	for (k = 0; k < 2; k++) {
		n = 0;
		put(s, l, TA_NORMAL, "%s", k ? "  skipped:" : "attached:");
		for (i = 0; i < m->nr_probes; i++)
			if ((m->probes[i].status == MODEL_PROBE_ATTACHED) == !k)
				put(s, l, k ? TA_ALERT : TA_NORMAL, "%s%s", n++ ? ", " : " ",
				    m->probes[i].name);
		if (!n)
			put(s, l, TA_NORMAL, " none");
	}
}

/* a verdict in a line */
static void verdict(struct screen *s, const struct model *m, const struct finding *f)
{
	struct top_line *l = line(s, TA_NORMAL);
	char said[256];

	put(s, l,
	    f->kind == F_BOUNDED || f->kind == F_STEP || f->kind == F_SETTLED ||
			    f->kind == F_GROWING ?
		    TA_HEAD :
		    TA_ALERT,
	    "%-11s", findings__kind_tag(f->kind));
	put(s, l, TA_NORMAL, " %s", words__line(f, said, sizeof(said)));
	if (f->kind != F_ALLOC_FAILURE && f->kind != F_EXIT)
		put(s, l, TA_DIM, "  (confidence %.2f)", f->confidence);
	(void)m;
}

static size_t verdicts(struct screen *s, const struct model *m, const struct findings *fs,
		       size_t max)
{
	size_t i, n = 0, steady = 0;
	struct top_line *l;
	char buf[96];

	for (i = 0; fs && i < fs->n; i++) {
		if (fs->v[i].kind == F_STEADY || fs->v[i].kind == F_NOT_JUDGED) {
			steady += fs->v[i].kind == F_STEADY;
			continue;
		}
		if (n < max)
			verdict(s, m, &fs->v[i]);
		n++;
	}
	if (!n) {
		l = line(s, TA_NORMAL);
		put(s, l, TA_GOOD, "%-11s", "OK");
		put(s, l, TA_NORMAL, " %s", words__none(steady, buf, sizeof(buf)));
		return 1;
	}
	if (n > max && (l = line(s, TA_DIM)))
		put(s, l, TA_DIM, "%-11s and %zu more: the final report has them all", "", n - max);
	return n > max ? max + 1 : n;
}

struct mem_row {
	struct category c;
	double now, per_s, per_req;
	bool has_per_req;
};

static int by_row(const void *a, const void *b, void *key)
{
	const struct mem_row *x = a, *y = b;
	int sort_key = *(const int *)key;

	if (sort_key == TS_NAME)
		return strcmp(x->c.text, y->c.text);
	if (sort_key == TS_RATE && fabs(x->per_s) != fabs(y->per_s))
		return fabs(x->per_s) < fabs(y->per_s) ? 1 : -1;
	if (x->now != y->now)
		return x->now < y->now ? 1 : -1;
	return strcmp(x->c.name, y->c.name);
}

/* what the memory is for, where the stacks say: one line into buf */
static bool roles(const struct model *m, const struct model_proc *p, __u64 now, char *buf,
		  size_t size)
{
	static const char gpu[] = "GPU for: ", host[] = "host first touched: ";
	size_t len = 0;

	buf[0] = 0;
	if (findings__gpu_roles(m, p, now, buf + strlen(gpu), size - strlen(gpu))) {
		memcpy(buf, gpu, strlen(gpu));
		len = strlen(buf);
		if (len + 3 < size)
			len += snprintf(buf + len, size - len, " | ");
	}
	if (len + strlen(host) + 32 < size &&
	    findings__touch_roles(m, p, now, buf + len + strlen(host), size - len - strlen(host)))
		memcpy(buf + len, host, strlen(host));
	else if (len)
		buf[len - 3] = 0;
	return buf[0] != 0;
}

static void memory(struct screen *s, const struct model *m, const struct top_state *st, size_t rows)
{
	static const char *const sorts[] = { "(by size)", "(by rate)", "(by name)" };
	const struct model_proc *p = target(m);
	struct mem_row r[CAT_MAX];
	struct category cats[CAT_MAX];
	size_t n, i, k, reqs = 0;
	__u64 base = 0;
	struct top_line *l;
	double v, hist[TOP_HISTORY];
	char a[32], b[32], c[32], spark[TOP_HISTORY + 1], why[512];
	int sw = s->cols - 74;

	n = p ? categories__list(m, p, cats, CAT_MAX) : 0;
	/* per request: from the first request's start since the baseline */
	for (i = 0; p && i < p->nr_reqs; i++) {
		if (p->reqs[i].start_ts < st->baseline_ts)
			continue;
		if (!reqs++ && !base)
			base = p->reqs[i].start_ts;
		if (!p->reqs[i].done)
			reqs--;
	}
	for (i = k = 0; i < n; i++) {
		if (!category__level(&cats[i], st->now, &r[k].now))
			continue;
		r[k].c = cats[i];
		r[k].per_s = 0;
		if (category__level(&cats[i],
				    st->now > RATE_WINDOW_NS ? st->now - RATE_WINDOW_NS : 0, &v))
			r[k].per_s = (r[k].now - v) / (RATE_WINDOW_NS / 1e9);
		r[k].has_per_req = reqs && category__level(&cats[i], base, &v);
		r[k].per_req = r[k].has_per_req ? (r[k].now - v) / reqs : 0;
		k++;
	}
	qsort_r(r, k, sizeof(r[0]), by_row, (void *)&st->mem_sort);
	l = line(s, TA_NORMAL);
	put(s, l, st->focus == TP_MEMORY ? TA_FOCUS : TA_TITLE, "MEMORY");
	put(s, l, TA_HEAD, " %-21s %11s %12s %12s  %s", sorts[st->mem_sort], "now", "per second",
	    "per request", sw > 4 ? "history" : "");
	if (!k && rows && (l = line(s, TA_DIM)))
		put(s, l, TA_DIM, "  nothing measured yet");
	for (i = 0; i < k && i < rows; i++) {
		l = line(s, TA_NORMAL);
		put(s, l, TA_NORMAL, "  %-26.26s %11s ", r[i].c.text,
		    r[i].c.cls == CAT_COUNT ? (snprintf(a, sizeof(a), "%.0f", r[i].now), a) :
					      B(a, r[i].now));
		if (r[i].c.cls == CAT_COUNT)
			snprintf(b, sizeof(b), "%+.2f", r[i].per_s);
		else
			D(b, r[i].per_s);
		put(s, l, r[i].per_s > 0 ? TA_ALERT : TA_NORMAL, "%10s/s", b);
		if (!r[i].has_per_req)
			snprintf(c, sizeof(c), "-");
		else if (r[i].c.cls == CAT_COUNT)
			snprintf(c, sizeof(c), "%+.2f", r[i].per_req);
		else
			D(c, r[i].per_req);
		put(s, l, TA_NORMAL, " %12s", c);
		if (sw > 4) {
			unsigned int h = history(st, r[i].c.name, hist);

			top__spark(hist, h, spark, sw < TOP_HISTORY ? sw : TOP_HISTORY);
			put(s, l, TA_DIM, "  %s", spark);
		}
	}
	if (k > rows && rows && s->n > 0)
		put(s, &s->out[s->n - 1], TA_DIM, "  (+%zu)", k - rows);
	else if (k < rows && p && roles(m, p, st->now, why, sizeof(why)) && (l = line(s, TA_DIM)))
		put(s, l, TA_DIM, "  %s", why);
}

/* what a request did to memory: host anon and GPU API bytes together, as
 * the report's table has them (a host-RAM device's bytes once, in anon) */
static double request_delta(const struct model *m, const struct model_proc *p,
			    const struct model_request *r)
{
	struct req_delta d;

	requests__delta(m, p, r, &d);
	return (double)requests__memory(&d);
}

struct req_row {
	const struct model_request *r;
	size_t no;
	double latency, delta;
};

static int by_req(const void *a, const void *b, void *key)
{
	const struct req_row *x = a, *y = b;
	int sort_key = *(const int *)key;

	if (sort_key == TS_LATENCY && x->latency != y->latency)
		return x->latency < y->latency ? 1 : -1;
	if (sort_key == TS_DELTA && x->delta != y->delta)
		return x->delta < y->delta ? 1 : -1;
	return x->no < y->no ? 1 : x->no > y->no ? -1 : 0;
}

static void requests(struct screen *s, const struct model *m, const struct findings *fs,
		     const struct top_state *st, size_t rows)
{
	static const char *const sorts[] = { "newest", "latency", "memory" };
	const struct model_proc *p = target(m);
	size_t i, k = 0, open = 0, from, pw = s->cols > 80 ? (size_t)s->cols - 60 : 20;
	struct req_row *v;
	struct top_line *l;
	char a[32], t[16];
	__u64 end;

	if (pw > 48)
		pw = 48;
	for (i = 0; p && i < p->nr_reqs; i++)
		open += !p->reqs[i].done;
	l = line(s, TA_NORMAL);
	put(s, l, st->focus == TP_REQUESTS ? TA_FOCUS : TA_TITLE, "REQUESTS");
	put(s, l, TA_HEAD, " %zu in flight, %llu in all (sorted by %s)", open,
	    p ? (unsigned long long)(p->nr_reqs + p->reqs_summarized) : 0ull, sorts[st->req_sort]);
	if (!p || !p->nr_reqs) {
		if (rows && (l = line(s, TA_DIM)))
			put(s, l, TA_DIM, "  no HTTP requests seen yet");
		return;
	}
	if (rows && (l = line(s, TA_HEAD)))
		put(s, l, TA_HEAD, "  %5s %-*s %6s %9s %5s %7s %11s", "#", (int)pw, "path",
		    "status", "latency", "gen", "tok/s", "memory");
	/* the newest few hundred are enough to pick from */
	from = p->nr_reqs > 512 ? p->nr_reqs - 512 : 0;
	v = calloc(p->nr_reqs - from, sizeof(*v));
	if (!v)
		return;
	for (i = from; i < p->nr_reqs; i++, k++) {
		const struct model_request *r = &p->reqs[i];

		v[k].r = r;
		v[k].no = p->reqs[i].nth;
		end = r->done ? r->end_ts : st->now;
		v[k].latency = end > r->start_ts ? (end - r->start_ts) / 1e9 : 0;
		v[k].delta = request_delta(m, p, r);
	}
	qsort_r(v, k, sizeof(*v), by_req, (void *)&st->req_sort);
	for (i = 0; i + 1 < rows && i < k; i++) {
		const struct model_request *r = v[i].r;
		double tps = model_req__tokens_per_s(r);

		if (tps >= 0)
			snprintf(t, sizeof(t), "%.1f", tps);
		else
			snprintf(t, sizeof(t), "-");
		l = line(s, TA_NORMAL);
		put(s, l, TA_NORMAL, "  %5zu %-*.*s %6s %7.0fms %5llu %7s ", v[i].no, (int)pw,
		    (int)pw, r->path,
		    r->responded ? (snprintf(a, sizeof(a), "%u", r->status), a) : "-",
		    v[i].latency * 1e3, (unsigned long long)model_req__generated(r), t);
		put(s, l, v[i].delta > 0 ? TA_ALERT : TA_NORMAL, "%11s",
		    fmt_delta(a, sizeof(a), v[i].delta));
		if (r->t.image_tokens || r->image_ns)
			put(s, l, TA_DIM, " image");
		if (!r->done)
			put(s, l, TA_DIM, " open");
		/* slower than its usual rate: by how much, and why */
		if (findings__slow(fs, p->pid, r->nth))
			put(s, l, TA_ALERT, " slow %.1fx: %s",
			    findings__slow(fs, p->pid, r->nth)->ratio,
			    findings__slow(fs, p->pid, r->nth)->cause);
	}
	free(v);
}

struct ev_row {
	__u64 ts;
	char text[160];
	bool alert;
};

static int by_ts(const void *a, const void *b)
{
	const struct ev_row *x = a, *y = b;

	return x->ts < y->ts ? 1 : x->ts > y->ts ? -1 : 0;
}

static void events(struct screen *s, const struct model *m, const struct top_state *st, size_t rows)
{
	const struct model_proc *p = target(m);
	struct ev_row v[256];
	struct top_line *l;
	size_t i, n = 0, tot = 0;
	char a[32], b[48], fn[32];

	for (i = m->nr_evictions; i-- > 0 && n < 128;) {
		const struct model_eviction *e = &m->evictions[i];

		if (p && e->owner != p->pid && e->evictor != p->pid)
			continue;
		v[n].ts = e->ts;
		v[n].alert = true;
		snprintf(v[n++].text, sizeof(v[0].text),
			 "evicted %s %s -> %s, owner %u, by %u (%s)", B(a, e->size),
			 model_bo__place_name(e->from, e->amdgpu),
			 model_bo__place_name(e->to, e->amdgpu), e->owner, e->evictor,
			 e->evictor_comm);
		tot++;
	}
	for (i = 0; p && p->gpu && i < p->gpu->nr_fails && n < 224; i++) {
		const struct model_gpu_failure *f = &p->gpu->fails[i];
		const char *rn = gpufuncs__result_name(f->api, f->result);

		if (!rn)
			snprintf(b, sizeof(b), "error %d", f->result);
		v[n].ts = f->ts;
		v[n].alert = true;
		snprintf(v[n++].text, sizeof(v[0].text), "failed %s(%s) -> %s",
			 gpufuncs__name(f->func, fn, sizeof(fn)), B(a, f->size), rn ? rn : b);
		tot++;
	}
	for (i = 0; i < m->nr_procs && n < 256; i++)
		if (m->procs[i]->exited) {
			v[n].ts = m->procs[i]->exit_ts;
			v[n].alert = m->procs[i]->exit_code != 0;
			snprintf(v[n++].text, sizeof(v[0].text), "exit pid %u (%s), status %d",
				 m->procs[i]->pid, m->procs[i]->comm,
				 m->procs[i]->exit_code & 0x7f ?
					 -(m->procs[i]->exit_code & 0x7f) :
					 (m->procs[i]->exit_code >> 8) & 0xff);
			tot++;
		}
	qsort(v, n, sizeof(v[0]), by_ts);
	l = line(s, TA_NORMAL);
	put(s, l, st->focus == TP_EVENTS ? TA_FOCUS : TA_TITLE, "EVENTS");
	put(s, l, TA_HEAD, " evictions, failed allocations, exits: %zu", tot);
	if (!n && rows && (l = line(s, TA_DIM)))
		put(s, l, TA_DIM, "  none");
	for (i = 0; i < n && i < rows; i++) {
		l = line(s, TA_NORMAL);
		put(s, l, TA_DIM, "  %8.2f s ", model__secs(m, v[i].ts));
		put(s, l, v[i].alert ? TA_ALERT : TA_NORMAL, "%s", v[i].text);
	}
}

static void help(struct screen *s, size_t rows)
{
	static const char *const text[] = {
		"q        quit, and print the report",
		"p        pause the view (tracing goes on)",
		"h or ?   this help",
		"tab      move the focus between the panels",
		"s        change the sort of the focused panel",
		"+ / -    refresh slower / faster",
		"r        reset: per-request figures count from now",
		"",
		"MEMORY: each place memory lives, now, its change per second over the",
		"last 10 s and per request since the start (or the last r).",
		"REQUESTS: what each HTTP request took, and what it did to host heap",
		"and GPU API memory. EVENTS: evictions, failed allocations, exits.",
	};
	struct top_line *l;
	size_t i;

	l = line(s, TA_NORMAL);
	put(s, l, TA_FOCUS, "HELP");
	put(s, l, TA_HEAD, " any key closes it");
	for (i = 0; i < sizeof(text) / sizeof(text[0]) && i < rows; i++)
		put(s, line(s, TA_NORMAL), TA_NORMAL, "  %s", text[i]);
}

static void footer(struct screen *s, const struct top_state *st)
{
	struct top_line *l = line(s, TA_DIM);

	put(s, l, TA_DIM, "q quit  p %s  h help  tab focus  s sort  +/- refresh %.1f s  r reset",
	    st->paused ? "resume" : "pause", st->refresh_s);
}

size_t top__layout(const struct model *m, const struct findings *fs, const struct top_state *st,
		   int rows, int cols, struct top_line *out, size_t max)
{
	struct screen s = { out, 0, max < (size_t)(rows > 0 ? rows : 0) ? max : (size_t)rows,
			    cols > TOP_MAX_COLS ? TOP_MAX_COLS : cols };
	size_t nv, avail, mem, ev, req, ncat, nev;
	const struct model_proc *p = target(m);
	struct category cats[CAT_MAX];

	if (rows <= 0 || cols <= 0)
		return 0;
	header(&s, m, st);
	if (rows < MIN_ROWS || cols < MIN_COLS) {
		/* too small for panels: the verdict, and how to get them */
		verdicts(&s, m, fs, 1);
		put(&s, line(&s, TA_DIM), TA_DIM, "%dx%d: panels need %dx%d", cols, rows, MIN_COLS,
		    MIN_ROWS);
		return s.n;
	}
	probes(&s, m);
	nv = verdicts(&s, m, fs, MAX_VERDICTS);
	/* the panels share what is left: titles, a heading, the footer */
	avail = rows - 2 - nv - 5;
	if (st->help) {
		help(&s, avail + 2);
		s.n = s.n < (size_t)rows - 1 ? s.n : (size_t)rows - 1;
		footer(&s, st);
		return s.n;
	}
	ncat = p ? categories__list(m, p, cats, CAT_MAX) : 0;
	nev = m->nr_evictions + (p && p->gpu ? p->gpu->nr_fails : 0) + 1;
	/* and a line of what it is for */
	mem = ncat + 1 < avail * 2 / 5 ? ncat + 1 : avail * 2 / 5;
	mem = mem ? mem : 1;
	ev = nev < avail / 5 ? nev : avail / 5;
	ev = ev ? ev : 1;
	req = avail > mem + ev ? avail - mem - ev : 1;
	memory(&s, m, st, mem);
	requests(&s, m, fs, st, req + 1);
	events(&s, m, st, ev);
	while (s.n < (size_t)rows - 1 && s.n < s.max)
		line(&s, TA_NORMAL);
	footer(&s, st);
	return s.n;
}

void top__plain(const struct model *m, const struct findings *fs, const struct top_state *st,
		char *buf, size_t size)
{
	const struct model_proc *p = target(m);
	struct category cats[CAT_MAX];
	size_t n = p ? categories__list(m, p, cats, CAT_MAX) : 0, i, len, k = 0;
	char a[32];
	double v;

	len = snprintf(buf, size, "gpumemtrace: %7.1f s", model__secs(m, st->now));
	for (i = 0; i < n && len < size; i++)
		if (cats[i].cls != CAT_DRIVER && category__level(&cats[i], st->now, &v) &&
		    (v || cats[i].cls == CAT_HOST))
			len += snprintf(buf + len, size - len, " %s %s", cats[i].name,
					cats[i].cls == CAT_COUNT ?
						(snprintf(a, sizeof(a), "%.0f", v), a) :
						B(a, v));
	if (p && len < size)
		len += snprintf(buf + len, size - len, " requests %llu",
				(unsigned long long)(p->nr_reqs + p->reqs_summarized));
	for (i = 0; fs && i < fs->n && len < size; i++)
		if (fs->v[i].kind != F_STEADY && fs->v[i].kind != F_NOT_JUDGED)
			len += snprintf(buf + len, size - len, "%s%s %s", k++ ? ", " : " | ",
					findings__kind_name(fs->v[i].kind), fs->v[i].category);
}
