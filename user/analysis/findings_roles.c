// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* each role that holds a finding's growth, against what it may hold: the
 * prompt cache its --cache-ram, context checkpoints --ctx-checkpoints of
 * the size the server made them, the KV cache and weights what load sized,
 * compute and encoder buffers one set per graph or image shape; "other"
 * nothing, so growth there that does not level off is what a leak is */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "common/fmt.h"
#include "findings_int.h"
#include "llama_conf.h"
#include "roles.h"

#define MIB (1024.0 * 1024)

static const struct {
	const char *role;
	enum role_bound bound;
} bounds[] = {
	{ "prompt cache", ROLE_CACHE_RAM },
	{ "context checkpoints", ROLE_CHECKPOINTS },
	{ "KV cache", ROLE_AT_LOAD },
	{ "model weights", ROLE_AT_LOAD },
	{ "output buffers", ROLE_AT_LOAD },
	{ "compute buffers", ROLE_PER_SHAPE },
	{ "multimodal encoder", ROLE_PER_SHAPE },
	{ "CUDA kernel code", ROLE_PER_SHAPE },
	{ "CUDA graphs", ROLE_PER_SHAPE },
	{ "Vulkan shaders", ROLE_PER_SHAPE },
};

const char *findings__bound_name(enum role_bound b)
{
	static const char *const names[] = {
		[ROLE_NO_BOUND] = "none",
		[ROLE_CACHE_RAM] = "cache_ram",
		[ROLE_CHECKPOINTS] = "ctx_checkpoints",
		[ROLE_AT_LOAD] = "at_load",
		[ROLE_PER_SHAPE] = "per_shape",
	};

	return b <= ROLE_PER_SHAPE ? names[b] : "?";
}

enum role_bound findings__role_bound(const char *role)
{
	size_t i;

	for (i = 0; role && i < sizeof(bounds) / sizeof(bounds[0]); i++)
		if (!strcmp(role, bounds[i].role))
			return bounds[i].bound;
	return ROLE_NO_BOUND;
}

static void bound_of(const struct model_proc *p, const struct llama_conf *c, bool llama,
		     struct finding_role *r)
{
	r->bound = findings__role_bound(r->role);
	r->bound_bytes = NAN;
	if (!llama)
		return;
	if (r->bound == ROLE_CACHE_RAM && c->cache_ram.v > 0)
		r->bound_bytes = c->cache_ram.v * MIB;
	/* checkpoints live in their slot (--ctx-checkpoints each) until the
	 * prompt is cached, then in its entry, which --cache-ram counts */
	if (r->bound == ROLE_CHECKPOINTS && c->ctx_checkpoints.v > 0 && p->lstate.ckpt_max)
		r->bound_bytes =
			(double)c->ctx_checkpoints.v * llama_conf__slots(c) * p->lstate.ckpt_max +
			(c->cache_ram.v > 0 ? c->cache_ram.v * MIB : 0);
}

void findings__roles(const struct model *m, const struct model_proc *p,
		     const struct finding_stack *s, size_t n, struct finding *f)
{
	struct finding_role *v = f->role_v, t;
	double total, rise;
	struct llama_conf c;
	bool llama = llama_conf__read(p, &c), any = false;
	size_t i, k;

	f->nr_roles = 0;
	for (i = 0; i < n; i++) {
		const char *r = roles__of(m, s[i].stack_id);

		any |= r != NULL;
		r = r ? r : "other";
		for (k = 0; k < f->nr_roles && strcmp(v[k].role, r); k++)
			;
		if (k == FINDING_ROLES)
			continue;
		if (k == f->nr_roles) {
			v[k] = (struct finding_role){ .bytes = 0 };
			snprintf(v[k].role, sizeof(v[k].role), "%s", r);
			bound_of(p, &c, llama, &v[k]);
			f->nr_roles++;
		}
		v[k].bytes += s[i].bytes;
		v[k].count += s[i].count;
		if (s[i].sampled)
			v[k].sampled += s[i].count;
	}
	/* no role named: in llama-server, all of it is "other"; elsewhere
	 * roles say nothing */
	if (!any && !llama) {
		f->nr_roles = 0;
		return;
	}
	/* first touches count memory made again after it was freed (each new
	 * cache entry, the one it replaced gone): what a role holds now is its
	 * share of the rise */
	for (total = 0, i = 0; i < f->nr_roles; i++)
		total += v[i].bytes;
	rise = isfinite(f->last - f->first) ? fmax(0, f->last - f->first) : total;
	for (i = 0; i < f->nr_roles; i++)
		v[i].held = total > rise ? v[i].bytes * rise / total : v[i].bytes;
	/* biggest first, "other" last */
	for (i = 0; i < f->nr_roles; i++)
		for (k = i + 1; k < f->nr_roles; k++)
			if (v[i].bound == ROLE_NO_BOUND ||
			    (v[k].bound != ROLE_NO_BOUND && v[k].bytes > v[i].bytes)) {
				t = v[i];
				v[i] = v[k];
				v[k] = t;
			}
}

/* made at load: more of it while serving is more contexts (or models) made
 * and kept, not a bound; first use of what load made would be bounded, but
 * its first touches look the same */
double findings__bounded_share(const struct finding *f)
{
	double total = 0, bounded = 0;
	size_t i;

	for (i = 0; i < f->nr_roles; i++) {
		total += f->role_v[i].bytes;
		if (f->role_v[i].bound != ROLE_NO_BOUND && f->role_v[i].bound != ROLE_AT_LOAD)
			bounded += f->role_v[i].bytes;
	}
	return total > 0 ? bounded / total : 0;
}

enum roles_verdict findings__roles_verdict(const struct finding *f, const struct finding_role **top)
{
	double total = 0, other = 0;
	size_t i;

	*top = NULL;
	for (i = 0; i < f->nr_roles; i++)
		total += f->role_v[i].bytes;
	if (!f->nr_roles || total <= 0)
		return ROLES_UNKNOWN;
	for (i = 0; i < f->nr_roles; i++) {
		const struct finding_role *r = &f->role_v[i];
		/* a sampled estimate is off by about itself / sqrt(samples):
		 * twice that is room (6 samples of 1 MiB are not past 4 MiB) */
		double err = r->sampled ? 2 * r->held / sqrt((double)r->sampled) : 0;

		/* past its bound, with room for what the allocator keeps of
		 * the entries it dropped: a finding of its own, never "bounded" */
		if (isfinite(r->bound_bytes) && r->held - err > 1.25 * r->bound_bytes) {
			*top = r;
			return ROLES_PAST_BOUND;
		}
		if (r->bound == ROLE_NO_BOUND)
			other += r->bytes;
		if (!*top && r->bound != ROLE_NO_BOUND && r->bound != ROLE_AT_LOAD)
			*top = r;
	}
	if (findings__bounded_share(f) >= 0.8)
		return ROLES_BOUNDED;
	if (other >= 0.5 * total) {
		*top = NULL;
		return ROLES_UNBOUNDED;
	}
	*top = NULL;
	return ROLES_UNKNOWN;
}

size_t findings__roles_text(const struct finding *f, char *buf, size_t size)
{
	size_t i, len = 0;
	char a[32], b[32];

	for (i = 0; i < f->nr_roles && len < size; i++) {
		const struct finding_role *r = &f->role_v[i];

		len += snprintf(buf + len, size - len, "%s%s %s", i ? ", " : "", r->role,
				fmt_bytes(a, sizeof(a), r->held));
		if (len >= size)
			break;
		switch (r->bound) {
		case ROLE_CACHE_RAM:
		case ROLE_CHECKPOINTS:
			if (isfinite(r->bound_bytes))
				len += snprintf(buf + len, size - len, " (of %s %s)",
						r->bound == ROLE_CACHE_RAM ?
							"--cache-ram" :
							"--ctx-checkpoints and --cache-ram,",
						fmt_bytes(b, sizeof(b), r->bound_bytes));
			else
				len += snprintf(buf + len, size - len, " (no limit set)");
			break;
		case ROLE_AT_LOAD:
			len += snprintf(buf + len, size - len, " (sized at load)");
			break;
		case ROLE_PER_SHAPE:
			len += snprintf(buf + len, size - len, " (once per shape)");
			break;
		default:
			len += snprintf(buf + len, size - len, " (no bound)");
		}
	}
	return len < size ? len : size - 1;
}
