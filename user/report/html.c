// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* replay --html (html.h): owns the page's data, one JSON object made from
 * the report's own JSON sections (verdicts, requests, failures, evictions,
 * lost events), the categories' levels at evenly spaced times, roles over
 * time, and the in-use stacks pprof counts; the page that draws it
 * (html_page.html, its script and style inline) is built in */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>
#include "analysis/categories.h"
#include "analysis/findings.h"
#include "analysis/roles.h"
#include "common/json_util.h"
#include "common/outfile.h"
#include "html.h"
#include "pprof.h"
#include "report_data.h"
#include "report_sections.h"

/* the most a page holds: points a series, requests, marks, stacks */
#define HTML_POINTS 300
#define HTML_REQS 1000
#define HTML_MARKS 500
#define HTML_STACKS 400
#define HTML_ROLES 24
#define DATA_MARK "<!--PAGE_DATA-->"

/* the page, built in: the data goes where DATA_MARK is */
extern const char html_page_text[];
__asm__(".pushsection .rodata\n"
	".balign 16\n"
	"html_page_text:\n"
	".incbin \"user/report/html_page.html\"\n"
	".byte 0\n"
	".popsection\n");

/* a new object of src's keys (shared, not copied: the report's figures) */
static struct json_object *pick(struct json_object *src, const char *const *keys)
{
	struct json_object *o = json_object_new_object(), *v;

	for (; *keys; keys++)
		if (json_object_object_get_ex(src, *keys, &v))
			add(o, *keys, json_object_get(v));
	return o;
}

/* the report's findings, each with the text report's title */
static struct json_object *verdicts_json(const struct model *m, const struct findings *fs)
{
	static const char *const keys[] = { "kind",    "pid",	     "category", "where",
					    "message", "confidence", NULL };
	struct json_object *all = findings_json(m, fs), *a = json_object_new_array(), *o;
	size_t i, n = json_object_array_length(all);

	for (i = 0; i < n; i++) {
		o = pick(json_object_array_get_idx(all, i), keys);
		if (fs && n == fs->n)
			add(o, "title", str(findings__kind_title(fs->v[i].kind)));
		json_object_array_add(a, o);
	}
	json_object_put(all);
	return a;
}

/* HTML_POINTS evenly spaced times from the process's first record to its
 * end (memory_by_interval's span), where the lines give each level */
static size_t grid(const struct model *m, const struct model_proc *p, __u64 *ts)
{
	__u64 from = p->first_ts, to = p->exited ? p->exit_ts : m->last_ts;
	size_t i;

	if (to <= from)
		return 0;
	for (i = 0; i < HTML_POINTS; i++)
		ts[i] = from + (__u64)((double)(to - from) * i / (HTML_POINTS - 1));
	return HTML_POINTS;
}

/* a level in bytes (or things) as the JSON report gives it: whole */
static struct json_object *level(double v)
{
	return i64((__s64)llround(v));
}

static struct json_object *times_json(const struct model *m, const __u64 *ts, size_t n)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, num(model__secs(m, ts[i])));
	return a;
}

/* each category: its level at the grid's times, at the end, its peak */
static struct json_object *categories_json(const struct model *m, const struct model_proc *p,
					   const __u64 *ts, size_t n)
{
	struct category cats[CAT_MAX];
	size_t nc = categories__list(m, p, cats, CAT_MAX), k, i;
	__u64 end = p->exited ? p->exit_ts : m->last_ts;
	struct json_object *a = json_object_new_array(), *o, *v;
	double y;

	for (k = 0; k < nc; k++) {
		o = json_object_new_object();
		add(o, "name", str(cats[k].name));
		add(o, "text", str(cats[k].text));
		add(o, "unit", str(cats[k].cls == CAT_COUNT ? "count" : "bytes"));
		add(o, "end", category__level(&cats[k], end, &y) ? level(y) : NULL);
		add(o, "peak", cats[k].s ? i64(series__peak(cats[k].s)) : NULL);
		add(o, "recorded", u64(cats[k].s ? cats[k].s->n : 0));
		v = json_object_new_array();
		for (i = 0; i < n; i++)
			json_object_array_add(v, category__level(&cats[k], ts[i], &y) ? level(y) :
											NULL);
		add(o, "values", v);
		json_object_array_add(a, o);
	}
	return a;
}

/* what the memory is for over time, by role and category, as
 * findings__role_bytes counts it at the end: GPU API memory live, host
 * memory first touched (sampled); empty when no stack names a role */
struct role_line {
	const char *role, *category;
	bool sampled;
	double v[HTML_POINTS];
};

static struct role_line *role_line(struct role_line *l, size_t *nl, const char *role,
				   const char *cat, bool sampled)
{
	size_t k;

	for (k = 0; k < *nl; k++)
		if (!strcmp(l[k].role, role) && !strcmp(l[k].category, cat))
			return &l[k];
	if (*nl == HTML_ROLES)
		return NULL;
	l[*nl] = (struct role_line){ .role = role, .category = cat, .sampled = sampled };
	return &l[(*nl)++];
}

static struct json_object *roles_json(const struct model *m, const struct model_proc *p,
				      const __u64 *ts, size_t n)
{
	struct role_line *l = calloc(HTML_ROLES, sizeof(*l)), *x;
	struct category cats[CAT_MAX];
	size_t nc = categories__list(m, p, cats, CAT_MAX), nl = 0, i, k, j;
	struct json_object *a = json_object_new_array(), *o, *v;
	bool any = false;
	const char *r;
	__s64 y;

	for (i = 0; l && p->gpu && i < p->gpu->nr_holders; i++) {
		const struct model_gpu_holder *h = &p->gpu->holders[i];

		for (k = 0; k < nc; k++)
			if (cats[k].cls == CAT_API && cats[k].api == h->api &&
			    cats[k].kind == h->kind)
				break;
		if (k == nc || !model_gpu__holds_memory(h->kind))
			continue;
		any |= (r = roles__of(m, h->stack_id)) != NULL;
		if (!(x = role_line(l, &nl, r ? r : "other", cats[k].name, false)))
			continue;
		for (j = 0; j < n; j++)
			if (series__at(&h->live, ts[j], &y))
				x->v[j] += y;
	}
	/* first touches count from their time on, never freed (as pprof) */
	for (i = 0, j = 0; l && i < p->nr_touches; i++) {
		const struct model_touch *t = &p->touches[i];

		any |= (r = roles__of(m, t->stack_id)) != NULL;
		if (!(x = role_line(l, &nl, r ? r : "other", "host_anon", true)))
			continue;
		for (j = 0; j < n; j++)
			if (ts[j] >= t->ts)
				x->v[j] += t->bytes;
	}
	for (k = 0; any && k < nl; k++) {
		o = json_object_new_object();
		add(o, "role", str(l[k].role));
		add(o, "category", str(l[k].category));
		add(o, "sampled", json_object_new_boolean(l[k].sampled));
		v = json_object_new_array();
		for (j = 0; j < n; j++)
			json_object_array_add(v, level(l[k].v[j]));
		add(o, "values", v);
		json_object_array_add(a, o);
	}
	free(l);
	return a;
}

/* the report's requests, an even share of them past HTML_REQS */
static struct json_object *requests_of(const struct model *m, const struct model_proc *p,
				       const struct findings *fs)
{
	static const char *const keys[] = { "method",
					    "path",
					    "status",
					    "start_s",
					    "end_s",
					    "latency_s",
					    "prompt_tokens",
					    "generated_tokens",
					    "cached_tokens",
					    "decode_tokens_per_s",
					    "tokens_from",
					    "anon_rss_delta_bytes",
					    "gpu_api_delta_bytes",
					    "slow",
					    NULL };
	struct json_object *all = requests_json(m, p, fs), *o = json_object_new_object(), *a, *r;
	size_t i, k, n = json_object_array_length(all), shown = n < HTML_REQS ? n : HTML_REQS;

	a = json_object_new_array();
	for (k = 0; k < shown; k++) {
		i = k * n / shown;
		r = pick(json_object_array_get_idx(all, i), keys);
		add(r, "nth", u64(p->reqs[i].nth));
		json_object_array_add(a, r);
	}
	add(o, "total", u64(n));
	add(o, "summarized", u64(p->reqs_summarized));
	add(o, "rows", a);
	json_object_put(all);
	return o;
}

static void mark(struct json_object *a, struct json_object *t, const char *kind,
		 struct json_object *text, struct json_object *bytes)
{
	struct json_object *o = json_object_new_object();

	add(o, "t_s", json_object_get(t));
	add(o, "kind", str(kind));
	add(o, "text", text);
	add(o, "bytes", json_object_get(bytes));
	json_object_array_add(a, o);
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "";
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

/* failed allocations, evictions of its buffers, its exit: the report's */
static struct json_object *marks_json(const struct model *m, const struct model_proc *p,
				      const struct findings *fs, struct json_object *evictions)
{
	struct json_object *a = json_object_new_array(), *gpu = gpu_json(m, p), *f, *x, *ex;
	size_t i, n;
	char text[256];

	f = gpu ? get(gpu, "failures") : NULL;
	n = f ? json_object_array_length(f) : 0;
	for (i = 0; i < n && json_object_array_length(a) < HTML_MARKS; i++) {
		x = json_object_array_get_idx(f, i);
		snprintf(text, sizeof(text), "%s failed: %s", get_str(x, "call"),
			 get_str(x, "result_name"));
		mark(a, get(x, "t_s"), "alloc_failure", str(text), get(x, "size_bytes"));
	}
	n = evictions ? json_object_array_length(evictions) : 0;
	for (i = 0; i < n && json_object_array_length(a) < HTML_MARKS; i++) {
		x = json_object_array_get_idx(evictions, i);
		if (json_object_get_uint64(get(x, "owner_pid")) != p->pid)
			continue;
		snprintf(text, sizeof(text), "evicted from %s to %s by pid %s (%s)",
			 get_str(x, "from"), get_str(x, "to"), get_str(x, "evictor_pid"),
			 get_str(x, "evictor_comm"));
		mark(a, get(x, "t_s"), "eviction", str(text), get(x, "size_bytes"));
	}
	/* where requests became slower than its own, and why */
	for (i = 0; fs && i < fs->n && json_object_array_length(a) < HTML_MARKS; i++) {
		const struct finding *f = &fs->v[i];

		if (f->kind != F_SLOWDOWN || f->pid != p->pid)
			continue;
		snprintf(text, sizeof(text), "slowdown: %s %.1f times slower (cause: %s)", f->where,
			 f->first / f->last, f->strs[0]);
		x = num(f->since_s);
		mark(a, x, "slowdown", str(text), NULL);
		json_object_put(x);
	}
	ex = json_object_new_object();
	exit_json(ex, m, p);
	if (p->exited) {
		snprintf(text, sizeof(text), "exit: %s %s",
			 get(ex, "exit_signal") ? "signal" : "status",
			 get(ex, "exit_signal") ? get_str(ex, "exit_signal") :
						  get_str(ex, "exit_code"));
		mark(a, get(ex, "exit_s"), "exit", str(text), NULL);
	}
	json_object_put(ex);
	json_object_put(gpu);
	return a;
}

static struct json_object *process_json(const struct model *m, const struct model_proc *p,
					const struct findings *fs, struct json_object *evictions,
					__u64 *ts)
{
	struct json_object *o = json_object_new_object(), *s = json_object_new_object();
	size_t n = grid(m, p, ts), recorded = 0, k;
	struct category cats[CAT_MAX];
	size_t nc = categories__list(m, p, cats, CAT_MAX);

	for (k = 0; k < nc; k++)
		recorded += cats[k].s ? cats[k].s->n : 0;
	add(o, "pid", u64(p->pid));
	add(o, "comm", str(p->comm));
	add(o, "exe", str(p->exe));
	add(o, "cmdline", str(p->cmdline));
	add(s, "t", times_json(m, ts, n));
	add(s, "recorded", u64(recorded));
	add(s, "categories", categories_json(m, p, ts, n));
	add(s, "roles", roles_json(m, p, ts, n));
	add(o, "series", s);
	add(o, "requests", requests_of(m, p, fs));
	add(o, "marks", marks_json(m, p, fs, evictions));
	return o;
}

/* the flame graph's stacks: in-use bytes summed by category and stack, the
 * biggest HTML_STACKS, the rest one line */
struct flame_key {
	__u32 stack_id;
	bool sampled;
	char cat[32];
};

struct flame_sum {
	struct flame_key k;
	int64_t bytes;
	UT_hash_handle hh;
};

struct flame {
	struct flame_sum *sums;
	bool failed;
};

static void flame_add(void *ctx, const struct pprof_stack *s)
{
	struct flame *f = ctx;
	struct flame_key k = { .stack_id = s->stack_id, .sampled = s->sampled };
	struct flame_sum *x;

	snprintf(k.cat, sizeof(k.cat), "%s", s->category[0] ? s->category : "other");
	HASH_FIND(hh, f->sums, &k, sizeof(k), x);
	if (!x) {
		if (!(x = calloc(1, sizeof(*x)))) {
			f->failed = true;
			return;
		}
		x->k = k;
		HASH_ADD(hh, f->sums, k, sizeof(k), x);
	}
	x->bytes = model__add_sat(x->bytes, s->bytes);
}

static int by_bytes(struct flame_sum *a, struct flame_sum *b)
{
	return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : 0;
}

struct frame_name {
	char *name;
	size_t idx;
	UT_hash_handle hh;
};

static size_t intern(struct frame_name **names, struct json_object *list, const char *s)
{
	struct frame_name *x;

	HASH_FIND_STR(*names, s, x);
	if (x)
		return x->idx;
	if (!(x = calloc(1, sizeof(*x))) || !(x->name = strdup(s))) {
		free(x);
		return 0; /* the first name stands in: out of memory */
	}
	x->idx = json_object_array_length(list);
	json_object_array_add(list, str(s));
	HASH_ADD_KEYPTR(hh, *names, x->name, strlen(x->name), x);
	return x->idx;
}

static struct json_object *stack_frames(const struct model *m, __u32 id, struct frame_name **names,
					struct json_object *list)
{
	const struct model_stack *s = model__stack(m, id);
	struct json_object *a = json_object_new_array();
	char buf[512];
	unsigned int f;

	if (!s || !s->nr_frames)
		json_object_array_add(a, u64(intern(names, list, "[no stack]")));
	for (f = s ? s->nr_frames : 0; f > 0; f--)
		json_object_array_add(
			a, u64(intern(names, list,
				      findings__frame_name(&s->frames[f - 1], buf, sizeof(buf)))));
	return a;
}

static struct json_object *flame_json(const struct model *m)
{
	struct flame f = { 0 };
	struct flame_sum *x, *tmp;
	struct frame_name *names = NULL, *y, *ytmp;
	struct json_object *o = json_object_new_object(), *a = json_object_new_array(),
			   *list = json_object_new_array(), *e;
	size_t n = 0;
	int64_t rest = 0;
	char label[64];

	if (pprof__inuse(m, flame_add, &f) || f.failed)
		add(o, "error", str("out of memory"));
	HASH_SORT(f.sums, by_bytes);
	HASH_ITER(hh, f.sums, x, tmp)
	{
		if (n++ >= HTML_STACKS) {
			/* the smaller ones: one line */
			rest = model__add_sat(rest, x->bytes);
			continue;
		}
		e = json_object_new_object();
		add(e, "category", str(x->k.cat));
		add(e, "sampled", json_object_new_boolean(x->k.sampled));
		add(e, "bytes", i64(x->bytes));
		add(e, "frames", stack_frames(m, x->k.stack_id, &names, list));
		json_object_array_add(a, e);
	}
	if (n > HTML_STACKS) {
		e = json_object_new_object();
		add(e, "category", str("smaller stacks"));
		add(e, "sampled", json_object_new_boolean(false));
		add(e, "bytes", i64(rest));
		snprintf(label, sizeof(label), "[%zu smaller stacks]", n - HTML_STACKS);
		add(e, "frames", json_object_new_array());
		json_object_array_add(get(e, "frames"), u64(intern(&names, list, label)));
		json_object_array_add(a, e);
	}
	HASH_ITER(hh, f.sums, x, tmp)
	{
		HASH_DEL(f.sums, x);
		free(x);
	}
	HASH_ITER(hh, names, y, ytmp)
	{
		HASH_DEL(names, y);
		free(y->name);
		free(y);
	}
	add(o, "frames", list);
	add(o, "stacks", a);
	add(o, "stacks_total", u64(n));
	return o;
}

/* what the page cannot show: events lost, sampling, the model's caps */
static struct json_object *gaps_json(const struct model *m)
{
	struct json_object *o = json_object_new_object();
	__u64 period = 0, samples = 0;
	size_t i;

	for (i = 0; i < m->nr_procs; i++) {
		if (!period && m->procs[i]->nr_touches)
			period = m->procs[i]->touches[0].bytes;
		samples += m->procs[i]->nr_touches;
	}
	add(o, "lost", lost_json(m));
	add(o, "bounded", bounds_json(m));
	add(o, "touch_sample_bytes", period ? u64(period) : NULL);
	add(o, "first_touch_samples", u64(samples));
	add(o, "points_max", u64(HTML_POINTS));
	add(o, "requests_max", u64(HTML_REQS));
	add(o, "marks_max", u64(HTML_MARKS));
	add(o, "stacks_max", u64(HTML_STACKS));
	return o;
}

static struct json_object *page_json(const struct model *m, const struct findings *fs,
				     const char *name)
{
	struct json_object *root = json_object_new_object(), *a = json_object_new_array(), *bos;
	struct model_proc **procs = procs_in_order(m);
	__u64 *ts = calloc(HTML_POINTS, sizeof(*ts));
	size_t j;

	add(root, "tool", str("gpumemtrace"));
	add(root, "version", str(m->tool_version));
	add(root, "recording", str(name));
	add(root, "host", str(m->host));
	add(root, "kernel", str(m->kernel));
	add(root, "duration_s", num(model__secs(m, m->last_ts)));
	add(root, "verdicts", verdicts_json(m, fs));
	bos = bos_json(m);
	for (j = 0; ts && procs && j < m->nr_procs; j++)
		json_object_array_add(a, process_json(m, procs[j], fs, get(bos, "evictions"), ts));
	json_object_put(bos);
	add(root, "processes", a);
	add(root, "flame", flame_json(m));
	add(root, "gaps", gaps_json(m));
	free(procs);
	free(ts);
	return root;
}

/* JSON inside <script>: nothing in it may end the element or open a
 * comment, and JavaScript's line separators are escaped too; '<', '>' and
 * '&' stand only inside strings, where \u escapes mean the same */
static void put_json(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '<' || c == '>' || c == '&')
			fprintf(out, "\\u%04x", c);
		else if (c == 0xe2 && (unsigned char)s[1] == 0x80 &&
			 ((unsigned char)s[2] == 0xa8 || (unsigned char)s[2] == 0xa9)) {
			fprintf(out, "\\u%04x", (unsigned char)s[2] == 0xa8 ? 0x2028 : 0x2029);
			s += 2;
		} else
			fputc(c, out);
	}
}

int html__write(const struct model *m, const struct findings *fs, const char *name,
		const char *path, char *err, size_t size)
{
	const char *at = strstr(html_page_text, DATA_MARK);
	struct json_object *root;
	FILE *out;
	int fd, rc;

	if (!at) {
		snprintf(err, size, "the built-in page has no place for its data");
		return -1;
	}
	if ((fd = outfile__create(AT_FDCWD, path, err, size)) < 0)
		return -1;
	if (!(out = fdopen(fd, "w"))) {
		snprintf(err, size, "writing %s failed: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	json_c_set_serialization_double_format("%.6g", JSON_C_OPTION_THREAD);
	root = page_json(m, fs, name);
	fwrite(html_page_text, 1, at - html_page_text, out);
	put_json(out, json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
	fputs(at + strlen(DATA_MARK), out);
	json_object_put(root);
	rc = ferror(out);
	if (fclose(out) || rc) {
		snprintf(err, size, "writing %s failed", path);
		unlink(path);
		return -1;
	}
	return 0;
}
