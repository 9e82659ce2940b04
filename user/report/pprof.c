// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* replay --pprof and --folded (pprof.h): owns what a profile counts (a
 * sample per live allocation, per allocating stack's total, per first
 * touch, each with its labels) and the two encodings of it */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>
#include <zlib.h>
#include "analysis/categories.h"
#include "analysis/findings.h"
#include "analysis/roles.h"
#include "common/outfile.h"
#include "stream/gpufuncs.h"
#include "pprof.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* the values of a sample: alloc_objects, alloc_space, inuse_objects,
 * inuse_space; a growth profile's: objects, space */
enum { V_ALLOC_N, V_ALLOC, V_INUSE_N, V_INUSE, V_NR };
#define LABELS_MAX 7

/* one sample: a live allocation, a stack's total, or a first touch */
struct entry {
	const struct model_proc *p;
	__u32 stack_id;
	__u8 api, kind;
	bool touch;
	__u64 req; /* the request open when it was made, by number; 0: none */
	char cat[sizeof(((struct category *)0)->name)]; /* the report's category; "" none */
	int64_t v[V_NR];
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

bool pprof__point_ok(const char *s)
{
	char *end;
	double v;

	if (!s || !*s)
		return false;
	if (*s == '#')
		return s[1] >= '1' && s[1] <= '9' && strspn(s + 1, "0123456789") == strlen(s + 1) &&
		       strlen(s + 1) < 19;
	errno = 0;
	v = strtod(s, &end);
	return !errno && end != s && !*end && isfinite(v) && v >= 0 && v <= 1e9;
}

/* a point of the run as a timestamp; end: for --to (a request's end) */
static int point(const struct model *m, const char *s, bool end, __u64 *ts, char *err, size_t size)
{
	unsigned long long nth;
	size_t i, k;

	if (!s) {
		*ts = end ? m->last_ts : m->start_ts;
		return 0;
	}
	if (*s != '#') {
		*ts = m->start_ts + (__u64)(strtod(s, NULL) * 1e9);
		if (*ts > m->last_ts)
			*ts = m->last_ts;
		return 0;
	}
	nth = strtoull(s + 1, NULL, 10);
	for (i = 0; i < m->nr_procs; i++)
		for (k = 0; k < m->procs[i]->nr_reqs; k++) {
			const struct model_request *r = &m->procs[i]->reqs[k];

			if (r->nth != nth)
				continue;
			*ts = !end ? r->start_ts : r->end_ts ? r->end_ts : m->last_ts;
			return 0;
		}
	snprintf(err, size, "no request #%llu in the recording (thinned, or never made)", nth);
	return -1;
}

/* the request open at ts: the latest one started by then and not ended */
static __u64 request_at(const struct model_proc *p, __u64 ts)
{
	size_t lo = 0, hi = p->nr_reqs, mid, i;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->reqs[mid].start_ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a bound on the walk back: requests open for long are few */
	for (i = lo; i > 0 && lo - i < 256; i--)
		if (!p->reqs[i - 1].end_ts || p->reqs[i - 1].end_ts >= ts)
			return p->reqs[i - 1].nth;
	return 0;
}

static struct entry *add(struct entries *es, const struct model_proc *p, __u32 stack_id)
{
	struct entry *e;

	if (model__grow((void **)&es->v, &es->cap, es->n, sizeof(*es->v)))
		return NULL;
	e = &es->v[es->n++];
	*e = (struct entry){ .p = p, .stack_id = stack_id };
	return e;
}

static int collect_gpu(const struct model *m, const struct model_proc *p, enum pprof_sample s,
		       __u64 from, __u64 to, struct entries *es)
{
	const struct model_gpu *g = p->gpu;
	struct category c[CAT_MAX];
	size_t i, nc = categories__list(m, p, c, CAT_MAX), first = es->n;
	struct entry *e;
	__s64 y0, y1;

	/* what is live now is kept allocation by allocation; at an earlier
	 * --to, only each stack's live bytes over time are */
	for (i = 0; (s != PPROF_GROWTH || to >= m->last_ts) && i < g->live_cap; i++) {
		const struct model_gpu_live *l = &g->live[i];

		if (l->used != 1 || !model_gpu__holds_memory(l->kind))
			continue;
		if (s == PPROF_GROWTH && (l->ts < from || l->ts > to))
			continue;
		if (!(e = add(es, p, l->stack_id)))
			return -1;
		e->api = l->api;
		e->kind = l->kind;
		e->req = request_at(p, l->ts);
		e->v[s == PPROF_GROWTH ? V_ALLOC_N : V_INUSE_N] = 1;
		e->v[s == PPROF_GROWTH ? V_ALLOC : V_INUSE] =
			l->size > INT64_MAX ? INT64_MAX : (int64_t)l->size;
	}
	for (i = 0; i < g->nr_holders; i++) {
		const struct model_gpu_holder *h = &g->holders[i];

		if (!model_gpu__holds_memory(h->kind))
			continue;
		if (s == PPROF_GROWTH) {
			if (to >= m->last_ts)
				break;
			if (!series__at(&h->live, from, &y0))
				y0 = 0;
			if (!series__at(&h->live, to, &y1) || y1 <= y0)
				continue;
		} else if (!h->allocs)
			continue;
		if (!(e = add(es, p, h->stack_id)))
			return -1;
		e->api = h->api;
		e->kind = h->kind;
		if (s == PPROF_GROWTH) {
			/* a crafted file's sizes saturate: never past the range */
			if (__builtin_sub_overflow(y1, y0, &e->v[V_ALLOC]))
				e->v[V_ALLOC] = INT64_MAX;
			continue;
		}
		e->v[V_ALLOC_N] = h->allocs;
		e->v[V_ALLOC] = h->alloc_bytes > INT64_MAX ? INT64_MAX : (int64_t)h->alloc_bytes;
	}
	for (; first < es->n; first++)
		for (e = &es->v[first], i = 0; i < nc; i++)
			if (c[i].cls == CAT_API && c[i].api == e->api && c[i].kind == e->kind)
				memcpy(e->cat, c[i].name, sizeof(e->cat));
	return 0;
}

static int collect(const struct model *m, enum pprof_sample s, __u64 from, __u64 to,
		   struct entries *es)
{
	struct entry *e;
	size_t i, k;

	for (i = 0; i < m->nr_procs; i++) {
		const struct model_proc *p = m->procs[i];

		/* first touches: memory made resident, never known to be freed;
		 * a run of them from one stack in one request is one sample */
		for (k = 0, e = NULL; k < p->nr_touches; k++) {
			const struct model_touch *t = &p->touches[k];
			__u64 req;
			int64_t v;

			if (s == PPROF_GROWTH && (t->ts < from || t->ts > to))
				continue;
			req = request_at(p, t->ts);
			if (!e || e->stack_id != t->stack_id || e->req != req) {
				if (!(e = add(es, p, t->stack_id)))
					return -1;
				e->touch = true;
				snprintf(e->cat, sizeof(e->cat), "host_anon");
				e->req = req;
			}
			v = t->bytes > INT64_MAX ? INT64_MAX : (int64_t)t->bytes;
			if (__builtin_add_overflow(e->v[V_ALLOC], v, &e->v[V_ALLOC]))
				e->v[V_ALLOC] = INT64_MAX;
			if (s != PPROF_GROWTH)
				e->v[V_INUSE] = e->v[V_ALLOC];
		}
		if (p->gpu && collect_gpu(m, p, s, from, to, es))
			return -1;
	}
	return 0;
}

/* folded text: a line a stack, root first, the chosen value summed */
static int write_folded(const struct model *m, const struct entries *es, int col, FILE *out)
{
	struct sum {
		__u32 stack_id;
		int64_t v;
		UT_hash_handle hh;
	} *sums = NULL, *x, *tmp, **order = NULL;
	size_t i, n = 0, cap = 0;
	char buf[512];
	int rc = 0;

	for (i = 0; i < es->n; i++) {
		if (!es->v[i].v[col])
			continue;
		HASH_FIND(hh, sums, &es->v[i].stack_id, sizeof(__u32), x);
		if (!x) {
			if (model__grow((void **)&order, &cap, n, sizeof(*order)) ||
			    !(x = calloc(1, sizeof(*x)))) {
				free(x);
				rc = -ENOMEM;
				break;
			}
			x->stack_id = es->v[i].stack_id;
			HASH_ADD(hh, sums, stack_id, sizeof(__u32), x);
			order[n++] = x;
		}
		/* a recording's sizes are the target's to say: saturate */
		if (__builtin_add_overflow(x->v, es->v[i].v[col], &x->v))
			x->v = es->v[i].v[col] > 0 ? INT64_MAX : INT64_MIN;
	}
	for (i = 0; !rc && i < n; i++) {
		const struct model_stack *s = model__stack(m, order[i]->stack_id);
		unsigned int f;

		if (!s || !s->nr_frames)
			fputs("[no stack]", out);
		for (f = s ? s->nr_frames : 0; f > 0; f--) {
			const char *name =
				findings__frame_name(&s->frames[f - 1], buf, sizeof(buf));

			/* ';' parts frames and the last ' ' the value */
			if (f < s->nr_frames)
				fputc(';', out);
			for (; *name; name++)
				fputc(*name == ';' ? ':' : *name == '\n' ? ' ' : *name, out);
		}
		fprintf(out, " %lld\n", (long long)order[i]->v);
	}
	HASH_ITER(hh, sums, x, tmp)
	{
		HASH_DEL(sums, x);
		free(x);
	}
	free(order);
	return rc;
}

/* pprof's tables: strings, mappings, functions, locations, interned */
struct key {
	__u64 k[3];
	__u64 id;
	UT_hash_handle hh;
};

struct str {
	char *s;
	__u64 id;
	UT_hash_handle hh;
};

struct stack_locs {
	__u32 stack_id;
	uint64_t *ids;
	size_t n;
	const char *role; /* roles__of, which reads every frame: once a stack */
	UT_hash_handle hh;
};

struct builder {
	Profile prof;
	struct str *strs;
	struct key *keys;
	struct stack_locs *stacks;
	size_t str_cap, map_cap, fn_cap, loc_cap;
	size_t build_ids; /* mappings given one */
	bool oom;
};

static int64_t intern(struct builder *b, const char *s)
{
	struct str *x;

	HASH_FIND_STR(b->strs, s, x);
	if (x)
		return x->id;
	if (model__grow((void **)&b->prof.string_table, &b->str_cap, b->prof.n_string_table,
			sizeof(char *)) ||
	    !(x = calloc(1, sizeof(*x))) || !(x->s = strdup(s))) {
		if (x)
			free(x);
		b->oom = true;
		return 0;
	}
	x->id = b->prof.n_string_table;
	b->prof.string_table[b->prof.n_string_table++] = x->s;
	HASH_ADD_KEYPTR(hh, b->strs, x->s, strlen(x->s), x);
	return x->id;
}

/* the entry of key (kind, a, c); fresh: made now, its id not set yet */
static struct key *find_key(struct builder *b, __u64 kind, __u64 a, __u64 c, bool *fresh)
{
	struct key q = { .k = { kind, a, c } }, *x;

	HASH_FIND(hh, b->keys, q.k, sizeof(q.k), x);
	*fresh = !x;
	if (x)
		return x;
	if (!(x = calloc(1, sizeof(*x)))) {
		b->oom = true;
		return NULL;
	}
	memcpy(x->k, q.k, sizeof(q.k));
	HASH_ADD(hh, b->keys, k, sizeof(x->k), x);
	return x;
}

/* a new message of `size` bytes at the end of a table (ids count from 1);
 * NULL when out of memory */
static void *table_add(struct builder *b, void *table, size_t *n, size_t *cap, size_t size)
{
	void ***v = table, *x = NULL;

	if (model__grow((void **)v, cap, *n, sizeof(void *)) || !(x = malloc(size))) {
		b->oom = true;
		return NULL;
	}
	(*v)[(*n)++] = x;
	return x;
}

/* a module's mapping; raw: the one for its frames with no name, whose
 * addresses are the file's virtual addresses (start 0, no limit, offset 0:
 * pprof takes them as they are), left for pprof to symbolize by the build
 * id. A module with a build id gets its raw mapping first: pprof merges a
 * mapping into the one before it when that one ends where it starts, and
 * a named mapping (0 to 0) followed by its raw one (from 0) would be. */
static uint64_t mapping_of(struct builder *b, const struct model *m, const char *module, bool raw)
{
	int64_t file = intern(b, module && module[0] ? module : "?");
	const struct model_module *mod = module && module[0] ? model__module(m, module) : NULL;
	bool fresh, id = mod && mod->build_id[0];
	struct key *x;
	Mapping *mp;

	if (id && !raw)
		mapping_of(b, m, module, true);
	if (!(x = find_key(b, 1, file, raw, &fresh)) || !fresh)
		return x ? x->id : 0;
	if (!(mp = table_add(b, &b->prof.mapping, &b->prof.n_mapping, &b->map_cap, sizeof(*mp))))
		return 0;
	perftools__profiles__mapping__init(mp);
	x->id = mp->id = b->prof.n_mapping;
	mp->filename = file;
	if (id) {
		mp->build_id = intern(b, mod->build_id);
		b->build_ids++;
	}
	if (raw)
		mp->memory_limit = UINT64_MAX;
	else
		mp->has_functions = true; /* named already: nothing for pprof to look up */
	return x->id;
}

static uint64_t function_of(struct builder *b, const char *name, const char *module)
{
	int64_t n = intern(b, name), file = intern(b, module && module[0] ? module : "?");
	bool fresh;
	struct key *x = find_key(b, 2, n, file, &fresh);
	Function *fn;

	if (!x || !fresh)
		return x ? x->id : 0;
	if (!(fn = table_add(b, &b->prof.function, &b->prof.n_function, &b->fn_cap, sizeof(*fn))))
		return 0;
	perftools__profiles__function__init(fn);
	x->id = fn->id = b->prof.n_function;
	fn->name = fn->system_name = n;
	fn->filename = file;
	return x->id;
}

static uint64_t location_of(struct builder *b, const struct model *m, const struct model_frame *f)
{
	const struct model_module *mod = f->sym[0] ? NULL : model__module(m, f->module);
	/* a frame with no name: its file offset, as the file's virtual address */
	bool raw = mod && mod->build_id[0] && f->sym_off >= mod->text_off &&
		   f->sym_off - mod->text_off < mod->text_size;
	__u64 addr = raw ? f->sym_off - mod->text_off + mod->text_vaddr : f->ip;
	uint64_t map = mapping_of(b, m, f->module, raw), fn;
	bool fresh;
	struct key *x;
	Location *loc;
	char buf[512];

	fn = function_of(b, findings__frame_name(f, buf, sizeof(buf)), f->module);
	if (!(x = find_key(b, 3, addr, fn, &fresh)) || !fresh)
		return x ? x->id : 0;
	/* the message, its one line's pointer and the line, in one block */
	if (!(loc = table_add(b, &b->prof.location, &b->prof.n_location, &b->loc_cap,
			      sizeof(*loc) + sizeof(Line *) + sizeof(Line))))
		return 0;
	perftools__profiles__location__init(loc);
	x->id = loc->id = b->prof.n_location;
	loc->mapping_id = map;
	loc->address = addr;
	loc->n_line = 1;
	loc->line = (Line **)(loc + 1);
	loc->line[0] = (Line *)(loc->line + 1);
	perftools__profiles__line__init(loc->line[0]);
	loc->line[0]->function_id = fn;
	return x->id;
}

/* a stack's locations, leaf first, made once */
static struct stack_locs *stack_of(struct builder *b, const struct model *m, __u32 id)
{
	const struct model_stack *s = model__stack(m, id);
	static const struct model_frame none = { .sym = "[no stack]", .module = "" };
	struct stack_locs *x;
	size_t i, n = s && s->nr_frames ? s->nr_frames : 1;

	HASH_FIND(hh, b->stacks, &id, sizeof(id), x);
	if (x)
		return x;
	if (!(x = calloc(1, sizeof(*x))) || !(x->ids = calloc(n, sizeof(*x->ids)))) {
		free(x);
		b->oom = true;
		return NULL;
	}
	x->stack_id = id;
	x->role = roles__of(m, id);
	x->n = n;
	for (i = 0; i < n; i++)
		x->ids[i] = location_of(b, m, s && s->nr_frames ? &s->frames[i] : &none);
	HASH_ADD(hh, b->stacks, stack_id, sizeof(id), x);
	return x;
}

static void label(struct builder *b, Label *l, const char *key, const char *str, int64_t num)
{
	perftools__profiles__label__init(l);
	l->key = intern(b, key);
	if (str)
		l->str = intern(b, str);
	else {
		l->num = num;
		l->num_unit = intern(b, "count"); /* a number, not bytes */
	}
}

/* a sample's memory: the message, its labels, their pointers */
struct sample_mem {
	Sample s;
	Label l[LABELS_MAX];
	Label *lp[LABELS_MAX];
};

static void sample_of(struct builder *b, const struct model *m, const struct entry *e,
		      struct sample_mem *sm, size_t nv)
{
	struct stack_locs *st = stack_of(b, m, e->stack_id);
	const char *role = st ? st->role : NULL;
	size_t n = 0;

	perftools__profiles__sample__init(&sm->s);
	if (st) {
		sm->s.location_id = st->ids;
		sm->s.n_location_id = st->n;
	}
	sm->s.value = (int64_t *)e->v;
	sm->s.n_value = nv;
	if (e->cat[0])
		label(b, &sm->l[n++], "category", e->cat, 0);
	if (!e->touch)
		label(b, &sm->l[n++], "api", gpufuncs__api_name(e->api), 0);
	label(b, &sm->l[n++], "kind", e->touch ? "first_touch" : gpufuncs__kind_name(e->kind), 0);
	if (role)
		label(b, &sm->l[n++], "role", role, 0);
	if (e->req)
		label(b, &sm->l[n++], "request", NULL, e->req);
	label(b, &sm->l[n++], "pid", NULL, e->p->pid);
	label(b, &sm->l[n++], "comm", e->p->comm, 0);
	for (size_t i = 0; i < n; i++)
		sm->lp[i] = &sm->l[i];
	sm->s.label = sm->lp;
	sm->s.n_label = n;
}

static void builder_free(struct builder *b)
{
	struct str *s, *st;
	struct key *k, *kt;
	struct stack_locs *x, *xt;
	size_t i;

	HASH_ITER(hh, b->strs, s, st)
	{
		HASH_DEL(b->strs, s);
		free(s->s);
		free(s);
	}
	HASH_ITER(hh, b->keys, k, kt)
	{
		HASH_DEL(b->keys, k);
		free(k);
	}
	HASH_ITER(hh, b->stacks, x, xt)
	{
		HASH_DEL(b->stacks, x);
		free(x->ids);
		free(x);
	}
	for (i = 0; i < b->prof.n_mapping; i++)
		free(b->prof.mapping[i]);
	for (i = 0; i < b->prof.n_function; i++)
		free(b->prof.function[i]);
	for (i = 0; i < b->prof.n_location; i++)
		free(b->prof.location[i]);
	free(b->prof.mapping);
	free(b->prof.function);
	free(b->prof.location);
	free(b->prof.string_table);
}

static __u64 touch_period(const struct model *m)
{
	for (size_t i = 0; i < m->nr_procs; i++)
		if (m->procs[i]->nr_touches)
			return m->procs[i]->touches[0].bytes;
	return 0;
}

/* the profile, gzipped, into fd (closed here) */
static int write_pprof(const struct model *m, const struct entries *es, enum pprof_sample s,
		       const char *window, int fd)
{
	static const char *const types[] = { "alloc_objects", "alloc_space", "inuse_objects",
					     "inuse_space" };
	static const char *const growth[] = { "growth_objects", "growth_space" };
	struct builder b = { .prof = PERFTOOLS__PROFILES__PROFILE__INIT };
	ValueType vt[V_NR], *vtp[V_NR], period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	size_t nv = s == PPROF_GROWTH ? 2 : V_NR, i, len;
	struct sample_mem *sm = calloc(es->n ? es->n : 1, sizeof(*sm));
	Sample **sp = calloc(es->n ? es->n : 1, sizeof(*sp));
	int64_t comments[4];
	unsigned char *buf = NULL;
	char text[160];
	gzFile gz = NULL;
	int rc = -ENOMEM;

	intern(&b, ""); /* string 0 */
	if (!sm || !sp)
		goto out;
	for (i = 0; i < nv; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = intern(&b, s == PPROF_GROWTH ? growth[i] : types[i]);
		vt[i].unit = intern(&b, i % 2 ? "bytes" : "count");
		vtp[i] = &vt[i];
	}
	b.prof.sample_type = vtp;
	b.prof.n_sample_type = nv;
	b.prof.default_sample_type = vt[s == PPROF_INUSE ? V_INUSE : V_ALLOC].type;
	/* pprof takes the first mapping for the program: the traced one's */
	for (i = 0; i < m->nr_procs; i++)
		if (m->procs[i]->exe[0]) {
			const char *base = strrchr(m->procs[i]->exe, '/');

			mapping_of(&b, m, base ? base + 1 : m->procs[i]->exe, false);
			break;
		}
	for (i = 0; i < es->n; i++) {
		sample_of(&b, m, &es->v[i], &sm[i], nv);
		sp[i] = &sm[i].s;
	}
	b.prof.sample = sp;
	b.prof.n_sample = es->n;
	/* the sampling: one first touch stands for about `period` bytes */
	period.type = intern(&b, "space");
	period.unit = intern(&b, "bytes");
	b.prof.period_type = &period;
	b.prof.period = touch_period(m);
	b.prof.time_nanos = m->start_realtime_ns;
	b.prof.duration_nanos = m->last_ts > m->start_ts ? m->last_ts - m->start_ts : 0;
	comments[0] = intern(&b, "gpumemtrace: GPU API allocations counted exactly; host first "
				 "touches (kind first_touch) sampled, each weighted by the bytes "
				 "it stands for");
	snprintf(text, sizeof(text), "host first touches: about one sample in %llu bytes",
		 (unsigned long long)b.prof.period);
	comments[1] = intern(&b, text);
	snprintf(text, sizeof(text),
		 "build ids: %zu of %zu mappings (a file's frames with no name are in a mapping "
		 "of their own, at the file's addresses, for pprof to symbolize)",
		 b.build_ids, b.prof.n_mapping);
	comments[2] = intern(&b, text);
	comments[3] = intern(&b, window);
	b.prof.comment = comments;
	b.prof.n_comment = 4;
	if (b.oom)
		goto out;
	len = perftools__profiles__profile__get_packed_size(&b.prof);
	if (!(buf = malloc(len ? len : 1)))
		goto out;
	perftools__profiles__profile__pack(&b.prof, buf);
	rc = -EIO;
	if (!(gz = gzdopen(fd, "wb")))
		goto out;
	fd = -1;
	if (len && gzwrite(gz, buf, len) != (int)len)
		goto out;
	rc = 0;
out:
	if (gz && gzclose(gz) != Z_OK && !rc)
		rc = -EIO;
	if (fd >= 0)
		close(fd);
	free(buf);
	free(sm);
	free(sp);
	b.prof.sample = NULL;
	builder_free(&b);
	return rc;
}

/* the window, the samples and the comment that says what they count;
 * -1 with err set when the window is not in the recording */
static int prepare(const struct model *m, const struct pprof_opts *o, struct entries *es,
		   char *window, size_t wsize, char *err, size_t size)
{
	__u64 from, to;

	if (point(m, o->from, false, &from, err, size) || point(m, o->to, true, &to, err, size))
		return -1;
	if (o->sample == PPROF_GROWTH && from > to) {
		snprintf(err, size, "--from %s comes after --to %s", o->from ? o->from : "(start)",
			 o->to ? o->to : "(end)");
		return -1;
	}
	if (collect(m, o->sample, from, to, es)) {
		snprintf(err, size, "out of memory");
		return -1;
	}
	if (o->sample != PPROF_GROWTH)
		snprintf(window, wsize, "%s (%.3f s)",
			 o->sample == PPROF_INUSE ? "live at the end of the run" :
						    "allocated over the whole run",
			 model__secs(m, m->last_ts));
	else
		snprintf(window, wsize,
			 "growth: allocated from %.3f s to %.3f s and live at %.3f s%s",
			 model__secs(m, from), model__secs(m, to), model__secs(m, to),
			 to < m->last_ts ? " (GPU: each stack's net growth)" : "");
	return 0;
}

/* the samples into fd, which it closes; 0 or -errno */
static int emit(const struct model *m, const struct pprof_opts *o, const struct entries *es,
		const char *window, int fd, bool folded)
{
	static const int col[] = {
		[PPROF_INUSE] = V_INUSE, [PPROF_ALLOC] = V_ALLOC, [PPROF_GROWTH] = V_ALLOC
	};
	FILE *f;
	int rc;

	if (!folded)
		return write_pprof(m, es, o->sample, window, fd);
	if (!(f = fdopen(fd, "w"))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = write_folded(m, es, col[o->sample], f);
	if (fclose(f) && !rc)
		rc = -EIO;
	return rc;
}

int pprof__to(const struct model *m, const struct pprof_opts *o, int fd, bool folded, char *err,
	      size_t size)
{
	struct entries es = { 0 };
	char window[160];
	int rc = -1;

	if (!prepare(m, o, &es, window, sizeof(window), err, size)) {
		rc = emit(m, o, &es, window, fd, folded);
		fd = -1;
		if (rc)
			snprintf(err, size, "writing failed: %s", strerror(-rc));
	}
	if (fd >= 0)
		close(fd);
	free(es.v);
	return rc ? -1 : 0;
}

int pprof__inuse(const struct model *m, void (*fn)(void *ctx, const struct pprof_stack *s),
		 void *ctx)
{
	struct entries es = { 0 };
	size_t i;

	if (collect(m, PPROF_INUSE, m->start_ts, m->last_ts, &es)) {
		free(es.v);
		return -1;
	}
	for (i = 0; i < es.n; i++)
		if (es.v[i].v[V_INUSE])
			fn(ctx, &(struct pprof_stack){ .pid = es.v[i].p->pid,
						       .stack_id = es.v[i].stack_id,
						       .category = es.v[i].cat,
						       .sampled = es.v[i].touch,
						       .bytes = es.v[i].v[V_INUSE] });
	free(es.v);
	return 0;
}

int pprof__write(const struct model *m, const struct pprof_opts *o, const char *path, bool folded,
		 char *err, size_t size)
{
	struct entries es = { 0 };
	char window[160];
	int fd, rc;

	/* the window checked before OUT is made: a wrong one leaves no file */
	if (prepare(m, o, &es, window, sizeof(window), err, size) ||
	    (fd = outfile__create(AT_FDCWD, path, err, size)) < 0) {
		free(es.v);
		return -1;
	}
	rc = emit(m, o, &es, window, fd, folded);
	free(es.v);
	if (rc) {
		snprintf(err, size, "writing %s failed: %s", path, strerror(-rc));
		unlink(path);
		return -1;
	}
	return 0;
}
