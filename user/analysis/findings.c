// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the findings: their records, stack labels, and each process's judging */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "findings_int.h"
#include "common/fmt.h"
#include "roles.h"

const char *findings__kind_name(enum finding_kind k)
{
#define X(k, json, title, tag) [k] = json,
	static const char *const names[F_NR] = { FINDING_KINDS(X) };
#undef X

	return k < F_NR ? names[k] : "?";
}

const char *findings__kind_title(enum finding_kind k)
{
#define X(k, json, title, tag) [k] = title,
	static const char *const titles[F_NR] = { FINDING_KINDS(X) };
#undef X

	return k < F_NR ? titles[k] : "?";
}

const char *findings__kind_tag(enum finding_kind k)
{
#define X(k, json, title, tag) [k] = tag,
	static const char *const tags[F_NR] = { FINDING_KINDS(X) };
#undef X

	return k < F_NR ? tags[k] : "?";
}

struct finding *findings__add(struct findings *fs, enum finding_kind kind, __u32 pid)
{
	struct finding *f;

	if (model__grow((void **)&fs->v, &fs->cap, fs->n, sizeof(*fs->v)))
		return NULL;
	f = &fs->v[fs->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->pid = pid;
	f->seq = fs->n;
	f->bytes_per_request = f->bytes_per_second = f->ceiling = NAN;
	f->requests_to_exhaustion = f->seconds_to_exhaustion = f->limit = NAN;
	f->first = f->last = f->since_s = NAN;
	return f;
}

void finding__num(struct finding *f, const char *key, double v)
{
	size_t i;

	/* a key said twice keeps the last figure */
	for (i = 0; i < f->nr_nums && strcmp(f->nums[i].key, key); i++)
		;
	if (i < FINDING_NUMS)
		f->nums[i] = (typeof(f->nums[0])){ key, v };
	if (i == f->nr_nums && i < FINDING_NUMS)
		f->nr_nums++;
}

const char *finding__str_of(const struct finding *f, const char *key)
{
	size_t i;

	for (i = 0; i < FINDING_STRS && f->strs_key[i]; i++)
		if (!strcmp(f->strs_key[i], key))
			return f->strs[i];
	return NULL;
}

void finding__str(struct finding *f, const char *key, const char *v)
{
	size_t i;

	for (i = 0; i < FINDING_STRS && f->strs_key[i]; i++)
		;
	if (i == FINDING_STRS)
		return;
	f->strs_key[i] = key;
	snprintf(f->strs[i], sizeof(f->strs[i]), "%s", v);
}

const char *findings__say_name(enum say code)
{
#define X(code, json, ...) [code] = json,
	static const char *const names[SAY_NR] = { [SAY_NONE] = "none", SAYS(X) };
#undef X

	return code < SAY_NR && names[code] ? names[code] : "?";
}

enum say finding__reason(const struct finding *f)
{
	return f->nr_says ? f->says[0].code : SAY_NONE;
}

/* says.h's fill functions, one a code: strings copied, figures set */
#define S(n) snprintf(o->n, sizeof(o->n), "%s", in->n ? in->n : "");
#define V(n) o->n = in->n;
#define X(c, json, ...)                                                    \
	void says__##c(struct finding_say *x, const struct say_in_##c *in) \
	{                                                                  \
		struct say_##c *o;                                         \
                                                                           \
		if (!x)                                                    \
			return;                                            \
		memset(x, 0, sizeof(*x));                                  \
		x->code = c;                                               \
		o = &x->a.c;                                               \
		(void)o;                                                   \
		(void)in;                                                  \
		__VA_ARGS__                                                \
	}
SAYS(X)
#undef X
#undef S
#undef V

struct finding_say *finding__say_slot(struct finding *f)
{
	return f->nr_says < FINDING_SAYS ? &f->says[f->nr_says++] : NULL;
}

struct finding_say *finding__evidence_slot(struct finding *f)
{
	return f->nr_evidence < FINDING_EVIDENCE ? &f->evidence[f->nr_evidence++] : NULL;
}

const char *findings__frame_name(const struct model_frame *fr, char *buf, size_t size)
{
	if (fr->sym && fr->sym[0])
		return fr->sym;
	snprintf(buf, size, "%s+0x%llx", fr->module && fr->module[0] ? fr->module : "?",
		 (unsigned long long)fr->sym_off);
	return buf;
}

static size_t roles_of(const struct model *m, const struct finding_stack *s, size_t n, __u64 other,
		       bool counts, char *buf, size_t size);

size_t findings__by_role(const struct model *m, const struct finding_stack *s, size_t n,
			 __u64 other, char *buf, size_t size)
{
	return roles_of(m, s, n, other, true, buf, size);
}

void findings__hold(struct finding_stack *v, size_t *n, size_t max, __u32 id, __u64 bytes)
{
	size_t i;

	for (i = 0; i < *n && v[i].stack_id != id; i++)
		;
	if (i == *n) {
		if (*n == max)
			return;
		v[(*n)++] = (struct finding_stack){ .stack_id = id, .min_size = bytes };
	}
	v[i].bytes += bytes;
	v[i].count++;
	if (bytes < v[i].min_size)
		v[i].min_size = bytes;
	if (bytes > v[i].max_size)
		v[i].max_size = bytes;
}

size_t findings__touch_stacks(const struct model_proc *p, __u64 from, __u64 to,
			      struct finding_stack *v, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < p->nr_touches && p->touches[i].ts <= to; i++)
		if (p->touches[i].ts >= from)
			findings__hold(v, &n, max, p->touches[i].stack_id, p->touches[i].bytes);
	/* each sample stands for the same bytes: a count, not sizes */
	for (i = 0; i < n; i++) {
		v[i].min_size = v[i].max_size = 0;
		v[i].sampled = true;
	}
	return n;
}

size_t findings__gpu_roles(const struct model *m, const struct model_proc *p, __u64 at, char *buf,
			   size_t size)
{
	struct finding_stack v[256];
	size_t i, n = 0;
	__s64 y;

	for (i = 0; p && p->gpu && i < p->gpu->nr_holders; i++)
		if (series__at(&p->gpu->holders[i].live, at, &y) && y > 0)
			findings__hold(v, &n, 256, p->gpu->holders[i].stack_id, y);
	return n ? roles_of(m, v, n, 0, false, buf, size) : 0;
}

size_t findings__touch_roles(const struct model *m, const struct model_proc *p, __u64 at, char *buf,
			     size_t size)
{
	struct finding_stack v[256];
	size_t n = p ? findings__touch_stacks(p, 0, at, v, 256) : 0;

	return n ? roles_of(m, v, n, 0, false, buf, size) : 0;
}

/* add bytes of stack id's role in category to v */
static bool role_add(const struct model *m, struct role_bytes *v, size_t *n, size_t max, __u32 id,
		     const char *category, double bytes)
{
	const char *r = roles__of(m, id);
	size_t k;

	for (k = 0; k < *n; k++)
		if (!strcmp(v[k].role, r ? r : "other") && !strcmp(v[k].category, category))
			break;
	if (k == *n) {
		if (*n == max)
			return r != NULL;
		v[k] = (struct role_bytes){ .role = r ? r : "other" };
		snprintf(v[k].category, sizeof(v[k].category), "%s", category);
		(*n)++;
	}
	v[k].bytes += bytes;
	return r != NULL;
}

size_t findings__role_bytes(const struct model *m, const struct model_proc *p, struct role_bytes *v,
			    size_t max)
{
	struct finding_stack t[256];
	struct category cats[CAT_MAX];
	size_t i, k, n = 0, nc = categories__list(m, p, cats, CAT_MAX),
		     nt = findings__touch_stacks(p, 0, ~0ull, t, 256);
	bool any = false;

	for (i = 0; p->gpu && i < p->gpu->nr_holders; i++) {
		const struct model_gpu_holder *h = &p->gpu->holders[i];

		for (k = 0; k < nc; k++)
			if (cats[k].cls == CAT_API && cats[k].api == h->api &&
			    cats[k].kind == h->kind)
				break;
		if (k < nc && h->bytes > 0)
			any |= role_add(m, v, &n, max, h->stack_id, cats[k].name, h->bytes);
	}
	for (i = 0; i < nt; i++)
		any |= role_add(m, v, &n, max, t[i].stack_id, "host_anon", t[i].bytes);
	return any ? n : 0;
}

static size_t roles_of(const struct model *m, const struct finding_stack *s, size_t n, __u64 other,
		       bool counts, char *buf, size_t size)
{
	struct {
		const char *role;
		__u64 bytes, count;
	} v[16], t;
	size_t i, k, nv = 0, len = 0;
	bool any = false;
	char a[32];

	for (i = 0; i < n; i++) {
		const char *r = roles__of(m, s[i].stack_id);

		any |= r != NULL;
		r = r ? r : "other";
		for (k = 0; k < nv && strcmp(v[k].role, r); k++)
			;
		if (k == sizeof(v) / sizeof(v[0]))
			continue; /* more roles than roles.c names: cannot be */
		if (k == nv)
			v[nv++] = (typeof(v[0])){ r, 0, 0 };
		v[k].bytes += s[i].bytes;
		v[k].count += s[i].count;
	}
	if (!any)
		return 0;
	/* biggest first; "other" last, whatever its size */
	for (i = 0; i < nv; i++)
		for (k = i + 1; k < nv; k++)
			if (!strcmp(v[i].role, "other") ||
			    (strcmp(v[k].role, "other") && v[k].bytes > v[i].bytes)) {
				t = v[i];
				v[i] = v[k];
				v[k] = t;
			}
	for (i = 0; i < nv && len < size; i++) {
		if (!strcmp(v[i].role, "other"))
			other += v[i].bytes;
		else
			len += snprintf(buf + len, size - len, "%s%s %s", i ? ", " : "", v[i].role,
					fmt_bytes(a, sizeof(a), v[i].bytes));
		if (counts && strcmp(v[i].role, "other") && len < size)
			len += snprintf(buf + len, size - len, " (%llu)",
					(unsigned long long)v[i].count);
	}
	if (other && len < size)
		len += snprintf(buf + len, size - len, ", other %s",
				fmt_bytes(a, sizeof(a), other));
	return len < size ? len : size - 1;
}

void findings__label_stacks(const struct model *m, struct finding_stack *s, size_t n)
{
	const struct model_stack *st[FINDING_STACKS] = { 0 };
	char a[96], b[96];
	size_t i, j, k = 0, nr = 0;

	for (i = 0; i < n && i < FINDING_STACKS; i++) {
		if (!s[i].stack_id || !(st[i] = model__stack(m, s[i].stack_id)) ||
		    !st[i]->nr_frames) {
			st[i] = NULL;
			continue;
		}
		/* distinct stacks: one stack in two size classes is still one */
		for (j = 0; j < i && s[j].stack_id != s[i].stack_id; j++)
			;
		nr += j == i;
	}
	/* frames every stack shares from the top (the allocator's own layers)
	 * say nothing about who holds the memory */
	for (; nr > 1; k++) {
		const struct model_stack *first = NULL;
		bool same = true;

		for (i = 0; i < n && i < FINDING_STACKS && same; i++) {
			if (!st[i])
				continue;
			if (k + 1 >= st[i]->nr_frames) {
				/* one is the other's start (a walk cut short): no frame
				 * tells them apart, and their own code is nearest the top */
				same = false;
				k = 0;
				break;
			}
			if (!first) {
				first = st[i];
				continue;
			}
			same = !strcmp(findings__frame_name(&first->frames[k], a, sizeof(a)),
				       findings__frame_name(&st[i]->frames[k], b, sizeof(b)));
		}
		if (!same)
			break;
	}
	for (i = 0; i < n && i < FINDING_STACKS; i++) {
		const char *role = roles__of(m, s[i].stack_id);

		if (role)
			snprintf(s[i].role, sizeof(s[i].role), "%s", role);
		if (s[i].label[0])
			continue;
		if (!st[i]) {
			snprintf(s[i].label, sizeof(s[i].label), "%s",
				 s[i].stack_id ? "(no user stack)" : "(no stack)");
			continue;
		}
		/* that frame and its two callers, those with names */
		size_t at = k < st[i]->nr_frames ? k : st[i]->nr_frames - 1, len = 0, d, shown = 0;

		for (d = at; d < st[i]->nr_frames && shown < 3 && len < sizeof(s[i].label); d++) {
			const struct model_frame *fr = &st[i]->frames[d];

			if ((!fr->sym || !fr->sym[0]) && d + 1 < st[i]->nr_frames)
				continue;
			len += snprintf(s[i].label + len, sizeof(s[i].label) - len, "%s%s",
					shown++ ? " < " : "",
					findings__frame_name(fr, a, sizeof(a)));
		}
	}
}

/* host RSS that the GPU API's allocations made is counted once, as theirs:
 * where the device's memory is the host's RAM, the host heap is judged less
 * the part of its change since the first point that the Vulkan memory's
 * change can account for (as far as both moved the same way). Not all of
 * the live Vulkan memory: RSS holds only the pages touched, and lavapipe's
 * untouched allocations would leave the heap below zero. */
static void host_less_vulkan(struct judged *host, const struct judged *all, size_t n)
{
	double v, vk, vk0 = 0, d_vk, d_host, part;
	size_t i, k;

	if (strcmp(host->c.name, "host_anon"))
		return;
	/* whose memory: one API's, or (NONE) several */
	for (k = 0, i = 0; k < n; k++)
		if (all[k].c.cls == CAT_API && all[k].c.in_host)
			host->gpu_api = !i++ || host->gpu_api == all[k].c.api ? all[k].c.api :
										MODEL_API_NONE;
	for (i = 0; i < host->n; i++) {
		for (vk = 0, k = 0; k < n; k++)
			if (all[k].c.cls == CAT_API && all[k].c.in_host &&
			    category__level(&all[k].c, host->ts[i], &v))
				vk += v;
		if (!i)
			vk0 = vk;
		d_vk = vk - vk0;
		d_host = host->y[i] - host->y[0];
		part = d_vk > 0 && d_host > 0 ? fmin(d_vk, d_host) :
		       d_vk < 0 && d_host < 0 ? fmax(d_vk, d_host) :
						0;
		if (i == host->n - 1)
			host->gpu_part = part;
		host->y[i] -= part;
	}
}

/* a change is material when it is a hundredth of the process's memory, or
 * of what the machine (or the device) has, whichever is less */
static double material_of(const struct model *m, const struct model_proc *p, const struct judged *j,
			  double footprint)
{
	double t = MATERIAL * footprint, limit;
	const char *what;

	if (j->n && category__limit(m, p, &j->c, j->y[j->n - 1], &limit, &what) &&
	    MATERIAL * limit < t)
		t = MATERIAL * limit;
	return t;
}

static void process_findings(const struct model *m, const struct model_proc *p, struct findings *fs)
{
	struct category cats[CAT_MAX];
	struct judged all[CAT_MAX];
	size_t n = categories__list(m, p, cats, CAT_MAX), i;
	double size;

	memset(all, 0, sizeof(all));
	for (i = 0; i < n; i++) {
		all[i].c = cats[i];
		judged__levels(m, p, &all[i]);
	}
	size = judged__footprint(all, n);
	for (i = 0; i < n; i++) {
		host_less_vulkan(&all[i], all, n);
		all[i].material = all[i].c.cls == CAT_COUNT ? MATERIAL_COUNT :
							      material_of(m, p, &all[i], size);
		judged__shape(&all[i]);
	}
	findings__failures(m, p, fs);
	findings__exit(m, p, fs);
	findings__evictions(m, p, fs);
	findings__slowdowns(m, p, fs);
	for (i = 0; i < n; i++)
		if (all[i].c.cls == CAT_HOST || all[i].c.cls == CAT_API ||
		    all[i].c.cls == CAT_KERNEL)
			judged__judge(m, p, all, n, &all[i], fs);
	for (i = 0; i < n; i++)
		if (all[i].c.cls == CAT_DRIVER && all[i].n)
			judged__judge_driver(m, p, all, n, &all[i], fs);
	for (i = 0; i < n; i++)
		if (all[i].c.cls == CAT_COUNT)
			judged__judge_count(p, &all[i], fs);
	for (i = 0; i < n; i++)
		if (!all[i].n || all[i].r.shape == SHAPE_UNKNOWN)
			judged__not_judged(m, p, &all[i], fs);
	for (i = 0; i < n; i++)
		judged__free(&all[i]);
}

static int by_request(const void *a, const void *b)
{
	const struct slow_req *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->nth < y->nth ? -1 : x->nth > y->nth;
}

static int by_kind(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct findings *findings__build(const struct model *m)
{
	struct findings *fs = calloc(1, sizeof(*fs));
	size_t i;

	if (!fs)
		return NULL;
	for (i = 0; i < m->nr_procs; i++)
		process_findings(m, m->procs[i], fs);
	if (fs->n)
		qsort(fs->v, fs->n, sizeof(*fs->v), by_kind);
	findings__sort_slow(fs);
	return fs;
}

void findings__mark_slow(struct findings *fs, __u32 pid, __u64 nth, double ratio, const char *cause,
			 bool prompt)
{
	struct slow_req *r;

	if (model__grow((void **)&fs->slow, &fs->slow_cap, fs->nr_slow, sizeof(*fs->slow)))
		return;
	r = &fs->slow[fs->nr_slow++];
	*r = (struct slow_req){ .pid = pid, .nth = nth, .ratio = ratio, .prompt = prompt };
	snprintf(r->cause, sizeof(r->cause), "%s", cause ? cause : "none");
}

void findings__sort_slow(struct findings *fs)
{
	if (fs->nr_slow)
		qsort(fs->slow, fs->nr_slow, sizeof(*fs->slow), by_request);
}

const struct slow_req *findings__slow(const struct findings *fs, __u32 pid, __u64 nth)
{
	struct slow_req key = { .pid = pid, .nth = nth };

	if (!fs || !fs->nr_slow)
		return NULL;
	return bsearch(&key, fs->slow, fs->nr_slow, sizeof(key), by_request);
}

void findings__free(struct findings *fs)
{
	if (!fs)
		return;
	free(fs->slow);
	free(fs->v);
	free(fs);
}
