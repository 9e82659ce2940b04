// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* allocation failures, with what was live at that moment */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "findings_int.h"
#include "stream/gpufuncs.h"
#include "roles.h"
#include "llama_conf.h"

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

/* the live KV cache, or the failing call where it was for the KV cache */
static __u64 kv_bytes(const struct finding *f, const char *role, __u64 size)
{
	__u64 n = role && !strcmp(role, "KV cache") ? size : 0;
	size_t i;

	for (i = 0; i < f->nr_stacks; i++)
		if (!strcmp(f->stacks[i].role, "KV cache"))
			n += f->stacks[i].bytes;
	return n;
}

/* what to try: shrink the biggest holder, or what the call was for when it
 * alone asked for more; for llama.cpp's KV cache, its settings */
static void try_shrink(const struct model_proc *p, const struct model_gpu_failure *x,
		       struct finding *f, const char *role, __u64 live, bool is_llama)
{
	__u64 top = f->nr_stacks ? f->stacks[0].bytes : 0;
	bool call = role && x->size > top;
	const char *what = call ? role :
			   f->nr_stacks ?
				  (f->stacks[0].role[0] ? f->stacks[0].role : f->stacks[0].label) :
				  NULL;
	struct llama_conf c;
	bool conf = llama_conf__read(p, &c);

	if (!what) {
		SAY(f, M_FAIL_END);
		return;
	}
	if (call)
		SAY(f, M_FAIL_TRY_CALL, .role = role, .size = x->size, .biggest = top,
		    .live = live);
	else
		SAY(f, M_FAIL_TRY_SHRINK, .holder = what, .percent = live ? 100.0 * top / live : 0);
	if (is_llama && !strcmp(what, "KV cache")) {
		__u64 kv =
			llama_conf__ctx_scaled(&c) ? kv_bytes(f, call ? role : NULL, x->size) : 0;

		if (kv)
			finding__num(f, "kv_bytes_per_slot", kv / llama_conf__slots(&c));
		SAY(f, M_FAIL_TRY_KV, .read = conf, .ctx = c.ctx.v, .ctx_from = c.ctx.from,
		    .slots = llama_conf__slots(&c), .slots_from = c.parallel.from, .fit = c.fit.v,
		    .scaled_kv = kv);
	}
	SAY(f, M_FAIL_END);
}

/* one failure (times: the same way, in a row): what was live, by role or
 * else by stack, and what to try */
static void failure(const struct model *m, const struct model_proc *p,
		    const struct model_gpu_failure *x, unsigned int times, struct findings *fs)
{
	const struct model_device *d = x->api == MODEL_API_VK ? model__vk_device(m) : NULL;
	char name[32], res[48], roles[400];
	const char *role;
	const char *rn = gpufuncs__result_name(x->api, x->result);
	struct finding *f = findings__add(fs, F_ALLOC_FAILURE, p->pid);
	double heap = -1, heap_bytes = 0, local = 0;
	struct llama_conf c;
	bool is_llama;
	__u64 live = 0;
	size_t i;

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
		if (d && x->mem_type < d->nr_types && d->types[x->mem_type].heap < d->nr_heaps) {
			__u32 h = d->types[x->mem_type].heap;

			finding__num(f, "heap", h);
			finding__num(f, "heap_bytes", d->heaps[h].size);
			heap = h;
			heap_bytes = d->heaps[h].size;
			local = d->heaps[h].flags & 1;
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
	if (role)
		finding__str(f, "role", role); /* what the failing call was for */
	finding__num(f, "live_bytes", live);
	SAY(f, M_FAILED, .call = name, .result = res, .role = role, .size = x->size,
	    .type = x->mem_type != ~0u ? (double)x->mem_type : -1, .heap = heap,
	    .heap_bytes = heap_bytes, .device_local = local, .seconds = f->since_s, .times = times,
	    .live = live);
	/* by what it is for, where the stacks say; else by stack */
	if (findings__by_role(m, f->stacks, f->nr_stacks, x->other_bytes, roles, sizeof(roles))) {
		SAY(f, M_FAILED_ROLES, .roles = roles);
		EVIDENCE(f, E_LIVE_BY_ROLE, .roles = roles);
	} else {
		SAY(f, M_FAILED_STACKS, .other = x->other_bytes);
	}
	is_llama = llama(p, f);
	if (x->kind == MODEL_KIND_GRAPH_EXEC) {
		llama_conf__read(p, &c);
		SAY(f, M_FAIL_TRY_GRAPHS, .llama = is_llama, .graphs_off = c.cuda_graphs_off);
	} else {
		try_shrink(p, x, f, role, live, is_llama);
	}
	EVIDENCE(f, E_CALL_FAILED, .call = name, .result = res, .size = x->size,
		 .has_stack = x->stack_id != 0);
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
