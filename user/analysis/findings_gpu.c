// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* allocation failures, with what was live at that moment */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "findings_int.h"
#include "common/fmt.h"
#include "stream/gpufuncs.h"
#include "roles.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)

static const char *kind_key(unsigned int api, unsigned int kind, char *buf, size_t size)
{
	static const char *const apis[MODEL_API_NR] = { "gpu", "vulkan", "cuda", "hip" };
	static const char *const kinds[MODEL_KIND_NR] = {
		"device", "host", "managed", "vmm", "vmm_mapped", "va", "graphs", "memory"
	};

	snprintf(buf, size, "%s_%s", apis[api < MODEL_API_NR ? api : 0],
		 kinds[kind < MODEL_KIND_NR ? kind : MODEL_KIND_VK_MEMORY]);
	return buf;
}

/* "4 x 1.50 GiB" or "3 of 64.0 MiB..128.0 MiB" */
static const char *sizes(const struct finding_stack *s, char *buf, size_t size)
{
	char a[32], b[32];

	if (s->min_size == s->max_size)
		snprintf(buf, size, "%llu x %s", (unsigned long long)s->count, B(a, s->min_size));
	else
		snprintf(buf, size, "%llu of %s..%s", (unsigned long long)s->count,
			 B(a, s->min_size), B(b, s->max_size));
	return buf;
}

static bool llama(const struct model_proc *p, const struct finding *f)
{
	size_t i;

	if (p->decodes || strstr(p->comm, "llama") || strstr(p->exe, "llama"))
		return true;
	for (i = 0; i < f->nr_stacks; i++)
		if (strstr(f->stacks[i].label, "llama"))
			return true;
	return false;
}

/* what was live by role, biggest first, into buf: "KV cache 1.91 GiB (2),
 * model weights 225.5 MiB (1)"; 0 when no stack names a role */
static void failure(const struct model *m, const struct model_proc *p,
		    const struct model_gpu_failure *x, unsigned int times, struct findings *fs)
{
	const struct model_device *d = x->api == MODEL_API_VK ? model__vk_device(m) : NULL;
	char a[32], b[32], name[32], res[48], where[160] = "", sz[64], kv[320], roles[400];
	const char *role;
	const char *rn = gpufuncs__result_name(x->api, x->result);
	struct finding *f = findings__add(fs, F_ALLOC_FAILURE, p->pid);
	__u64 live = 0;
	size_t i, len;

	if (!f)
		return;
	kind_key(x->api, x->kind, f->category, sizeof(f->category));
	snprintf(f->where, sizeof(f->where), "%s %s", gpufuncs__api_name(x->api),
		 gpufuncs__kind_name(x->kind));
	f->confidence = 1;
	f->since_s = model__secs(m, x->ts);
	f->last = x->size;
	snprintf(name, sizeof(name), "%s", gpufuncs__name(x->func, res, sizeof(res)));
	if (rn)
		snprintf(res, sizeof(res), "%s", rn);
	else
		snprintf(res, sizeof(res), "error %d", x->result);
	finding__str(f, "call", name);
	finding__str(f, "result", res);
	finding__num(f, "size_bytes", x->size);
	finding__num(f, "result_code", x->result);
	finding__num(f, "times", times);
	if (x->mem_type != ~0u) {
		finding__num(f, "memory_type", x->mem_type);
		len = snprintf(where, sizeof(where), ", memory type %u", x->mem_type);
		if (d && x->mem_type < d->nr_types && d->types[x->mem_type].heap < d->nr_heaps) {
			__u32 h = d->types[x->mem_type].heap;

			finding__num(f, "heap", h);
			finding__num(f, "heap_bytes", d->heaps[h].size);
			snprintf(where + len, sizeof(where) - len, ", heap %u of %s%s", h,
				 B(a, d->heaps[h].size),
				 d->heaps[h].flags & 1 ? " device-local" : "");
		}
	}
	for (i = 0; i < x->nr_groups; i++) {
		f->stacks[i] = (struct finding_stack){ .stack_id = x->groups[i].stack_id,
						       .bytes = x->groups[i].bytes,
						       .count = x->groups[i].count,
						       .min_size = x->groups[i].min_size,
						       .max_size = x->groups[i].max_size };
		live += x->groups[i].bytes;
	}
	f->nr_stacks = x->nr_groups;
	live += x->other_bytes;
	findings__label_stacks(m, f->stacks, f->nr_stacks);
	role = roles__of(m, x->stack_id);
	finding__num(f, "live_bytes", live);
	len = snprintf(f->message, sizeof(f->message),
		       "%s(%s%s)%s%s failed with %s at %.2f s%s; %s was live", name,
		       x->size ? B(a, x->size) : "", x->size ? where : where + (where[0] ? 2 : 0),
		       role ? " for the " : "", role ? role : "", res, f->since_s,
		       times > 1 ? " (and again, the same way)" : "", B(b, live));
	/* by what it is for, where the stacks say; else by stack */
	if (findings__by_role(m, f->stacks, f->nr_stacks, x->other_bytes, roles, sizeof(roles))) {
		len += snprintf(f->message + len, sizeof(f->message) - len, ": %s", roles);
		finding__evidence(f, "live by role: %s", roles);
	} else {
		for (i = 0; i < f->nr_stacks && len < sizeof(f->message); i++)
			len += snprintf(f->message + len, sizeof(f->message) - len, "%s %s %s (%s)",
					i ? "," : ":", f->stacks[i].label, B(a, f->stacks[i].bytes),
					sizes(&f->stacks[i], sz, sizeof(sz)));
		if (x->other_bytes && len < sizeof(f->message))
			len += snprintf(f->message + len, sizeof(f->message) - len, ", other %s",
					B(a, x->other_bytes));
	}
	if (x->kind == MODEL_KIND_GRAPH_EXEC && len < sizeof(f->message))
		snprintf(
			f->message + len, sizeof(f->message) - len,
			". What to try: keep fewer graph executables alive; their memory is not in "
			"the allocation calls%s.",
			llama(p, f) ? findings__graphs_advice(p) : "");
	else if (f->nr_stacks && len < sizeof(f->message))
		snprintf(
			f->message + len, sizeof(f->message) - len,
			". What to try: shrink the biggest holder, %s (%.0f%% of what was live)%s.",
			f->stacks[0].role[0] ? f->stacks[0].role : f->stacks[0].label,
			live ? 100.0 * f->stacks[0].bytes / live : 0,
			llama(p, f) ? findings__kv_advice(p, kv, sizeof(kv)) : "");
	else if (len < sizeof(f->message))
		snprintf(f->message + len, sizeof(f->message) - len, ".");
	finding__evidence(f, "%s%s%s failed with %s%s", name, x->size ? " of " : "",
			  x->size ? B(a, x->size) : "", res,
			  x->stack_id ? "; the stack of the failing call is in the JSON report" :
					"");
	finding__num(f, "stack_id", x->stack_id);
}

void findings__failures(const struct model *m, const struct model_proc *p, struct findings *fs)
{
	size_t i, j;

	if (!p->gpu)
		return;
	/* the same call failing the same way again is one finding */
	for (i = 0; i < p->gpu->nr_fails; i = j) {
		const struct model_gpu_failure *x = &p->gpu->fails[i];

		for (j = i + 1; j < p->gpu->nr_fails; j++) {
			const struct model_gpu_failure *y = &p->gpu->fails[j];

			if (y->func != x->func || y->result != x->result || y->size != x->size)
				break;
		}
		failure(m, p, x, j - i, fs);
	}
}
