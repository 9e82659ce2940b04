// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Categories: owns the list of where one process's memory lives (host RSS,
 * each GPU API's kinds, kernel buffers, the drivers' counters), their names
 * and order, each one's level at a moment, and what would bound its growth
 * (a cgroup limit or the host's RAM and swap, a Vulkan heap, the GPU's free
 * memory by NVML or cuMemGetInfo). The verdicts, the per-request table and
 * the live view share it. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "categories.h"
#include "stream/gpufuncs.h"

static struct category *next(struct category *out, size_t *n, size_t max, const char *name,
			     const char *text, enum cat_class cls, const struct series *s)
{
	struct category *c;

	if (*n >= max || !s || !s->n)
		return NULL;
	c = &out[(*n)++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->text, sizeof(c->text), "%s", text);
	c->cls = cls;
	c->s = s;
	return c;
}

static const char *api_key(unsigned int api)
{
	static const char *const keys[MODEL_API_NR] = { "gpu", "vulkan", "cuda", "hip" };

	return api < MODEL_API_NR ? keys[api] : "gpu";
}

static const char *kind_key(unsigned int kind)
{
	static const char *const keys[MODEL_KIND_NR] = {
		"device", "host", "managed", "vmm", "vmm_mapped", "va", "graphs", "memory"
	};

	return kind < MODEL_KIND_NR ? keys[kind] : "memory";
}

static void api_categories(const struct model *m, const struct model_proc *p, struct category *out,
			   size_t *n, size_t max)
{
	char name[32], text[48];
	unsigned int a, k;

	for (a = 1; p->gpu && a < MODEL_API_NR; a++)
		for (k = 0; k < MODEL_KIND_NR; k++) {
			const struct model_gpu_stat *st = &p->gpu->st[a][k];
			bool graphs = k == MODEL_KIND_GRAPH_EXEC;
			struct category *c;

			if (!st->allocs || (!graphs && !model_gpu__holds_memory(k)))
				continue;
			snprintf(name, sizeof(name), "%s_%s", api_key(a), kind_key(k));
			/* the kind of no known type is "memory" itself: not said twice */
			if (graphs)
				snprintf(text, sizeof(text), "%s live graph executables",
					 gpufuncs__api_name(a));
			else if (!strcmp(gpufuncs__kind_name(k), "memory"))
				snprintf(text, sizeof(text), "%s memory", gpufuncs__api_name(a));
			else
				snprintf(text, sizeof(text), "%s %s memory", gpufuncs__api_name(a),
					 gpufuncs__kind_name(k));
			c = next(out, n, max, name, text, graphs ? CAT_COUNT : CAT_API,
				 graphs ? &st->counts : &st->series);
			if (!c)
				continue;
			c->api = a;
			c->kind = k;
			c->zero_before = true;
			c->device = k == MODEL_KIND_DEVICE || k == MODEL_KIND_MANAGED ||
				    k == MODEL_KIND_VMM_PHYS;
			/* every kind: host-visible and pinned memory is the host's too */
			c->in_host = model__host_ram(m, a);
		}
}

size_t categories__list(const struct model *m, const struct model_proc *p, struct category *out,
			size_t max)
{
	struct category *c;
	size_t n = 0, i;

	/* where some of it was swapped out, the heap is what is resident and
	 * what is in swap: a heap growing into swap leaves RSS flat */
	if (series__peak(&p->rss[MODEL_RSS_SWAP]) > 0)
		next(out, &n, max, "host_anon", "host heap (anonymous RSS + swap)", CAT_HOST,
		     &p->anon_swap);
	else
		next(out, &n, max, "host_anon", "host heap (anonymous RSS)", CAT_HOST,
		     &p->rss[MODEL_RSS_ANON]);
	next(out, &n, max, "host_file", "host file-backed RSS", CAT_HOST, &p->rss[MODEL_RSS_FILE]);
	next(out, &n, max, "host_shmem", "host shared memory RSS", CAT_HOST,
	     &p->rss[MODEL_RSS_SHMEM]);
	api_categories(m, p, out, &n, max);
	for (i = 0; i < m->nr_bo_owners; i++) {
		if (m->bo_owners[i].pid != p->pid)
			continue;
		if ((c = next(out, &n, max, "bo_vram", "kernel buffers in VRAM", CAT_KERNEL,
			      &m->bo_owners[i].vram))) {
			c->device = true;
			c->zero_before = true;
		}
		if ((c = next(out, &n, max, "bo_gtt", "kernel buffers in GTT", CAT_KERNEL,
			      &m->bo_owners[i].gtt)))
			c->zero_before = true;
	}
	if (p->drm) {
		if ((c = next(out, &n, max, "drm_vram", "VRAM by DRM fdinfo", CAT_DRIVER,
			      &p->drm->vram)))
			c->device = true;
		next(out, &n, max, "drm_gtt", "GTT by DRM fdinfo", CAT_DRIVER, &p->drm->gtt);
	}
	if ((c = next(out, &n, max, "nvml_device", "device memory by NVML", CAT_DRIVER,
		      &p->nvml_used)))
		c->device = true;
	return n;
}

bool category__in_total(const struct category *c)
{
	return c->cls != CAT_COUNT && c->cls != CAT_DRIVER && !c->in_host;
}

bool category__level(const struct category *c, __u64 ts, double *v)
{
	__s64 x;

	if (series__at(c->s, ts, &x)) {
		*v = x;
		return true;
	}
	*v = 0;
	return c->zero_before;
}

/* the biggest Vulkan heap that is (or is not) device-local */
static bool vk_heap(const struct model *m, bool local, double *size)
{
	const struct model_device *d = model__vk_device(m);
	__u32 i;

	*size = 0;
	for (i = 0; d && i < d->nr_heaps; i++)
		if (!!(d->heaps[i].flags & 1) == local && d->heaps[i].size > *size)
			*size = d->heaps[i].size;
	return *size > 0;
}

const char *const category_cgroup_limit = "its cgroup's memory limit";

bool category__host_room(const struct model *m, const struct model_proc *p, double *room,
			 const char **what)
{
	/* anonymous memory past what RAM holds goes to swap, where there is
	 * some: the OOM killer comes when both are full */
	double swap = m->meminfo_seen ? (double)m->swap_free : 0, host = NAN, cg = NAN;

	if (m->meminfo_seen)
		host = m->mem_available + swap;
	if (p->mem_limit_ts) {
		cg = p->mem_limit > p->mem_limit_used ? p->mem_limit - p->mem_limit_used : 0;
		cg += p->mem_limit_swap_room < swap ? p->mem_limit_swap_room : swap;
	}
	if (isfinite(cg) && (!isfinite(host) || cg < host)) {
		*room = cg;
		*what = category_cgroup_limit;
		return true;
	}
	if (!isfinite(host))
		return false;
	*room = host;
	*what = swap > 0 ? "the host's available RAM and swap" : "the host's available RAM";
	return true;
}

bool category__limit(const struct model *m, const struct model_proc *p, const struct category *c,
		     double level, double *limit, const char **what)
{
	double free_dev = 0, room;
	size_t i;

	switch (c->cls) {
	case CAT_HOST:
		if (!category__host_room(m, p, &room, what))
			return false;
		*limit = level + room;
		return true;
	case CAT_API:
		if (c->in_host) {
			/* the device's memory is the host's: it runs out where the
			 * host's RAM or the cgroup's limit does, or at its (Vulkan) heap */
			double heap;
			bool host = category__host_room(m, p, &room, what);

			if (c->api == MODEL_API_VK && vk_heap(m, true, &heap) &&
			    (!host || heap < level + room)) {
				*limit = heap;
				*what = "the device-local heap (the host's RAM)";
				return true;
			}
			*limit = level + room;
			return host;
		}
		if (c->api == MODEL_API_VK) {
			*what = c->kind == MODEL_KIND_HOST ? "the host-memory heap" :
							     "the device-local heap";
			return vk_heap(m, c->kind != MODEL_KIND_HOST, limit);
		}
		/* CUDA and HIP memory ends where the device's does */
		__attribute__((fallthrough));
	case CAT_DRIVER:
		if (!strcmp(c->name, "drm_vram") || !strcmp(c->name, "drm_gtt") ||
		    (c->cls == CAT_API && c->kind == MODEL_KIND_HOST))
			return false;
		for (i = 0; i < m->nr_nvml; i++)
			free_dev += m->nvml[i].free;
		if (m->nr_nvml) {
			*limit = level + free_dev;
			*what = "the GPU's free memory (NVML)";
			return true;
		}
		if (p->gpu && p->gpu->info_seen) {
			*limit = level + p->gpu->info_free;
			*what = "the GPU's free memory (cuMemGetInfo)";
			return true;
		}
		return false;
	default:
		return false;
	}
}
