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
	static const char *const names[F_NR] = { "alloc_failure",
						 "exit",
						 "leak",
						 "unexplained_device_growth",
						 "eviction_slowdown",
						 "growing",
						 "bounded_cache",
						 "settled",
						 "step",
						 "steady",
						 "not_judged" };

	return k < F_NR ? names[k] : "?";
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
	static const char *const names[SAY_NR] = {
		[SAY_NONE] = "none",
		[M_LEAK] = "leak",
		[M_LEVEL_UNTIL] = "level_until",
		[M_STEP_RISES] = "step_rises",
		[M_FIXED_ENTRIES] = "fixed_entries",
		[M_RUNS_OUT] = "runs_out",
		[M_RUNS_OUT_CGROUP] = "runs_out_cgroup",
		[M_TRY_HOST_STACKS] = "try_host_stacks",
		[M_TRY_API_STACKS] = "try_api_stacks",
		[M_BOUNDED] = "bounded",
		[M_SETTLED] = "settled",
		[M_STEADY_AT] = "steady_at",
		[M_STEADY_WANDERS] = "steady_wanders",
		[M_STEADY_SMALL] = "steady_small",
		[M_GROWING_SLOWING] = "growing_slowing",
		[M_GROWING_DRIFT] = "growing_drift",
		[M_STEP_REQUEST] = "step_request",
		[M_STEP_TIME] = "step_time",
		[M_BY_ROLE] = "by_role",
		[M_ROSE_HELD] = "rose_and_held",
		[M_LEAK_UNBOUNDED] = "leak_unbounded",
		[M_ROLE_PAST_BOUND] = "role_past_bound",
		[M_ROLE_FILLING] = "role_filling",
		[M_ROLE_WITHIN] = "role_within_bound",
		[M_UNEXPLAINED] = "unexplained",
		[M_GRAPH_CACHE] = "graph_cache",
		[M_DRIVER_GROWS] = "driver_grows",
		[M_GRAPHS_NOW] = "graphs_now",
		[M_COUNT_LEAK] = "count_leak",
		[M_COUNT_GROWING] = "count_growing",
		[M_COUNT_LEVELS] = "count_levels",
		[M_COUNT_STEP] = "count_step",
		[M_COUNT_STEADY] = "count_steady",
		[M_COUNT_SWINGS] = "count_swings",
		[M_GRAPHS_HOLD] = "graphs_hold",
		[M_NOT_JUDGED] = "not_judged",
		[M_CACHE_OFF] = "cache_off",
		[M_CACHE_UNLIMITED] = "cache_unlimited",
		[M_CACHE_EXCEEDED] = "cache_exceeded",
		[M_CACHE_STOPS_AT] = "cache_stops_at",
		[M_CACHE_LEVELS] = "cache_levels",
		[M_CACHE_OOM_FIRST] = "cache_oom_first",
		[M_CACHE_TRY_LOWER] = "cache_try_lower",
		[M_CACHE_SHARE] = "cache_share",
		[M_CACHE_FULL] = "cache_full",
		[M_CACHE_FILLING] = "cache_filling",
		[M_FAILED] = "failed",
		[M_FAILED_ROLES] = "failed_roles",
		[M_FAILED_STACKS] = "failed_stacks",
		[M_FAIL_TRY_GRAPHS] = "fail_try_graphs",
		[M_FAIL_TRY_SHRINK] = "fail_try_shrink",
		[M_FAIL_TRY_CALL] = "fail_try_call",
		[M_FAIL_TRY_KV] = "fail_try_kv",
		[M_FAIL_END] = "fail_end",
		[M_EVICTED] = "evicted",
		[M_EVICT_RETURNED] = "evict_returned",
		[M_EVICT_STILL_OUT] = "evict_still_out",
		[M_EVICT_NONE_BACK] = "evict_none_back",
		[M_EVICT_AFTER_FREE] = "evict_after_free",
		[M_EVICT_BY_END] = "evict_by_end",
		[M_DECODE_FELL] = "decode_fell",
		[M_DECODE_NOT_FELL] = "decode_not_fell",
		[M_DECODE_NO_RATES] = "decode_no_rates",
		[M_EXIT] = "exit",
		[M_CRASH_THREAD] = "crash_thread",
		[M_CRASH_SERVING] = "crash_serving",
		[M_CRASH_HEAP] = "crash_heap",
		[E_STEP_SPREAD] = "step_spread",
		[E_STEP_FOLLOWS] = "step_follows",
		[E_STEP_NOT_FOLLOWS] = "step_not_follows",
		[E_HELD_BY_ROLE] = "held_by_role",
		[E_TOUCHES] = "touches",
		[E_MADE_HELD] = "made_held",
		[E_MAPPINGS_COVER] = "mappings_cover",
		[E_GRAPHS_GROW] = "graphs_grow",
		[E_HOST_NOT_GPU] = "host_not_gpu",
		[E_LESS_VULKAN] = "less_vulkan",
		[E_FIRST_LEFT_OUT] = "first_left_out",
		[E_STEP_FIT] = "step_fit",
		[E_BOUNDED_FIT] = "bounded_fit",
		[E_SHAPE_FIT] = "shape_fit",
		[E_CHANGED_ONCE] = "changed_once",
		[E_DRIVER_AGREES] = "driver_agrees",
		[E_DRIVER_RATE] = "driver_rate",
		[E_API_RATE] = "api_rate",
		[E_GRAPHS_LIVE] = "graphs_live",
		[E_LIVE_BY_ROLE] = "live_by_role",
		[E_CALL_FAILED] = "call_failed",
		[E_EVICTIONS] = "evictions",
		[E_VRAM_LEVELS] = "vram_levels",
		[E_DECODE_RATES] = "decode_rates",
		[E_EXITED] = "exited",
		[E_CACHE_ENTRIES] = "cache_entries",
		[E_CHECKPOINTS] = "checkpoints",
		[E_FIXED_STATE] = "fixed_state",
	};

	return code < SAY_NR && names[code] ? names[code] : "?";
}

enum say finding__reason(const struct finding *f)
{
	return f->nr_says ? f->says[0].code : SAY_NONE;
}

static void say_into(struct finding_say *x, enum say code, const char *const s[SAY_STRS],
		     const double *v, size_t nv)
{
	size_t i;

	memset(x, 0, sizeof(*x));
	x->code = code;
	x->nr_v = nv < SAY_VALUES ? nv : SAY_VALUES;
	memcpy(x->v, v, x->nr_v * sizeof(*v));
	for (i = 0; s && i < SAY_STRS; i++)
		if (s[i])
			snprintf(x->s[i], sizeof(x->s[i]), "%s", s[i]);
}

void finding__say(struct finding *f, enum say code, const char *const s[SAY_STRS], const double *v,
		  size_t nv)
{
	if (f->nr_says < FINDING_SAYS)
		say_into(&f->says[f->nr_says++], code, s, v, nv);
}

void finding__evidence(struct finding *f, enum say code, const char *const s[SAY_STRS],
		       const double *v, size_t nv)
{
	if (f->nr_evidence < FINDING_EVIDENCE)
		say_into(&f->evidence[f->nr_evidence++], code, s, v, nv);
}

static const char *frame_name(const struct model_frame *fr, char *buf, size_t size)
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

size_t findings__by_role_bytes(const struct model *m, const struct finding_stack *s, size_t n,
			       char *buf, size_t size)
{
	return roles_of(m, s, n, 0, false, buf, size);
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
			same = !strcmp(frame_name(&first->frames[k], a, sizeof(a)),
				       frame_name(&st[i]->frames[k], b, sizeof(b)));
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
					shown++ ? " < " : "", frame_name(fr, a, sizeof(a)));
		}
	}
}

/* a Vulkan device whose memory is host memory: Mesa's CPU drivers
 * (llvmpipe, lavapipe) allocate it with the host's allocator */
static bool vk_memory_is_host(const struct model *m)
{
	const struct model_device *d = model__vk_device(m);

	return d && (d->vendor_id == 0x10005 || strstr(d->name, "llvmpipe"));
}

/* host RSS that the GPU API's allocations made is counted once, as theirs:
 * the host level is judged less the Vulkan memory live at each point */
static void host_less_vulkan(const struct model *m, struct judged *host, const struct judged *all,
			     size_t n)
{
	double v, sum;
	size_t i, k;

	if (!vk_memory_is_host(m) || strcmp(host->c.name, "host_anon"))
		return;
	for (i = 0; i < host->n; i++) {
		for (sum = 0, k = 0; k < n; k++)
			if (all[k].c.cls == CAT_API && all[k].c.api == MODEL_API_VK &&
			    category__level(&all[k].c, host->ts[i], &v))
				sum += v;
		host->y[i] -= sum;
		if (i == host->n - 1)
			host->gpu_part = sum;
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
		host_less_vulkan(m, &all[i], all, n);
		all[i].material = all[i].c.cls == CAT_COUNT ? MATERIAL_COUNT :
							      material_of(m, p, &all[i], size);
		judged__shape(&all[i]);
	}
	findings__failures(m, p, fs);
	findings__exit(m, p, fs);
	findings__evictions(m, p, fs);
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
	return fs;
}

void findings__free(struct findings *fs)
{
	if (!fs)
		return;
	free(fs->v);
	free(fs);
}
