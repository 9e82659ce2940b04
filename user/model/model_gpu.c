// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* live GPU API allocations of a process, from GPU_CALL events */
#include <stdlib.h>
#include <string.h>
#include "model_int.h"

#define SERIES_STEP_NS 10000000ull /* one point per 10 ms at most */

/* mapped views and address reservations hold no memory of their own;
 * a graph's size is unknown */
bool model_gpu__holds_memory(unsigned int kind)
{
	return kind != MODEL_KIND_VMM_MAP && kind != MODEL_KIND_VA_RESERVE &&
	       kind != MODEL_KIND_GRAPH_EXEC;
}

/* handles of different classes may share a value: a device pointer and a
 * VMM handle are unrelated numbers */
enum gpu_class { C_MEMORY, C_VMM_PHYS, C_VMM_MAP, C_VA, C_GRAPH };

static unsigned int kind_class(unsigned int kind)
{
	switch (kind) {
	case MODEL_KIND_VMM_PHYS:
		return C_VMM_PHYS;
	case MODEL_KIND_VMM_MAP:
		return C_VMM_MAP;
	case MODEL_KIND_VA_RESERVE:
		return C_VA;
	case MODEL_KIND_GRAPH_EXEC:
		return C_GRAPH;
	default:
		return C_MEMORY;
	}
}

static size_t slot_of(__u64 handle, unsigned int cls, unsigned int api, size_t cap)
{
	__u64 h = (handle ^ ((__u64)cls << 56) ^ ((__u64)api << 60)) * 0x9e3779b97f4a7c15ull;

	return (h >> 17) & (cap - 1);
}

static struct model_gpu_live *find(struct model_gpu *g, __u64 handle, unsigned int cls,
				   unsigned int api)
{
	size_t i;

	if (!g->live_cap)
		return NULL;
	for (i = slot_of(handle, cls, api, g->live_cap);; i = (i + 1) & (g->live_cap - 1)) {
		struct model_gpu_live *l = &g->live[i];

		if (!l->used)
			return NULL;
		if (l->used == 1 && l->handle == handle && l->cls == cls && l->api == api)
			return l;
	}
}

static int rehash(struct model_gpu *g)
{
	size_t cap = 256, i, j;
	struct model_gpu_live *old = g->live, *v;

	while (cap < (g->nr_live + 1) * 4)
		cap *= 2;
	v = calloc(cap, sizeof(*v));

	if (!v)
		return -1;
	for (i = 0; i < g->live_cap; i++) {
		if (old[i].used != 1)
			continue;
		for (j = slot_of(old[i].handle, old[i].cls, old[i].api, cap); v[j].used;
		     j = (j + 1) & (cap - 1))
			;
		v[j] = old[i];
	}
	free(old);
	g->live = v;
	g->live_cap = cap;
	g->nr_slots = g->nr_live;
	return 0;
}

/* used: 0 empty, 1 live, 2 freed (a tombstone the probe walks past) */
static struct model_gpu_live *insert(struct model_gpu *g, __u64 handle, unsigned int cls,
				     unsigned int api)
{
	size_t i;

	if ((g->nr_slots + 1) * 2 > g->live_cap && rehash(g))
		return NULL;
	for (i = slot_of(handle, cls, api, g->live_cap); g->live[i].used == 1;
	     i = (i + 1) & (g->live_cap - 1))
		;
	g->nr_slots += !g->live[i].used;
	g->nr_live++;
	return &g->live[i];
}

/* a size as a signed count, held below what a crafted file could overflow */
static __s64 bytes_of(__u64 size)
{
	return size > (1ull << 62) ? 1ll << 62 : (__s64)size;
}

static void account(struct model_gpu_stat *st, __u64 ts, __s64 bytes, int count)
{
	st->live_bytes = model__add_sat(st->live_bytes, bytes);
	st->live += count;
	if (st->live_bytes > st->peak_bytes)
		st->peak_bytes = st->live_bytes;
	if (st->live > st->peak_live)
		st->peak_live = st->live;
	series__add(&st->series, ts, st->live_bytes, SERIES_STEP_NS);
	series__add(&st->counts, ts, st->live, SERIES_STEP_NS);
}

static struct model_gpu_holder *hold(struct model_gpu *g, const struct model_gpu_live *l, __u64 ts,
				     __s64 bytes)
{
	struct model_gpu_holder *h = NULL;
	size_t i;

	for (i = 0; i < g->nr_holders; i++)
		if (g->holders[i].stack_id == l->stack_id && g->holders[i].api == l->api &&
		    g->holders[i].kind == l->kind) {
			h = &g->holders[i];
			break;
		}
	if (!h) {
		if (model__grow((void **)&g->holders, &g->holders_cap, g->nr_holders,
				sizeof(*g->holders)))
			return NULL;
		h = &g->holders[g->nr_holders++];
		*h = (struct model_gpu_holder){ .stack_id = l->stack_id,
						.api = l->api,
						.kind = l->kind };
	}
	h->bytes = model__add_sat(h->bytes, bytes);
	series__add(&h->live, ts, h->bytes, SERIES_STEP_NS);
	return h;
}

static int by_group_bytes(const void *a, const void *b)
{
	const struct model_gpu_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static unsigned int log2_of(__u64 v)
{
	unsigned int n = 0;

	while (v >>= 1)
		n++;
	return n;
}

/* what is live, by stack and size class, biggest first: the groups a
 * failure report shows */
static void snapshot_groups(struct model_gpu *g, struct model_gpu_failure *f)
{
	struct model_gpu_group *v = calloc(g->nr_live ? g->nr_live : 1, sizeof(*v));
	size_t i, j, n = 0;

	if (!v)
		return;
	for (i = 0; i < g->live_cap; i++) {
		const struct model_gpu_live *l = &g->live[i];
		unsigned int c = log2_of(l->size);

		if (l->used != 1 || !model_gpu__holds_memory(l->kind))
			continue;
		for (j = 0; j < n; j++)
			if (v[j].stack_id == l->stack_id && v[j].size_log2 == c &&
			    v[j].api == l->api && v[j].kind == l->kind)
				break;
		if (j == n)
			v[n++] = (struct model_gpu_group){ .stack_id = l->stack_id,
							   .api = l->api,
							   .kind = l->kind,
							   .size_log2 = c,
							   .min_size = l->size };
		v[j].bytes += l->size;
		v[j].count++;
		if (l->size < v[j].min_size)
			v[j].min_size = l->size;
		if (l->size > v[j].max_size)
			v[j].max_size = l->size;
	}
	qsort(v, n, sizeof(*v), by_group_bytes);
	for (i = 0; i < n; i++) {
		if (i < MODEL_FAIL_GROUPS) {
			f->groups[f->nr_groups++] = v[i];
			continue;
		}
		f->other_bytes += v[i].bytes;
		f->other_count += v[i].count;
	}
	free(v);
}

static void on_alloc(struct model *m, struct model_gpu *g, const struct gmt_gpu_call *e,
		     unsigned int kind)
{
	struct model_gpu_stat *st = &g->st[e->api][kind];
	struct model_gpu_holder *h;
	struct model_gpu_failure *f;
	struct model_gpu_live *l;

	if (e->result) {
		st->failed++;
		if (model__grow((void **)&g->fails, &g->fails_cap, g->nr_fails, sizeof(*f)))
			return;
		f = &g->fails[g->nr_fails++];
		*f = (struct model_gpu_failure){ .ts = e->hdr.ts_ns,
						 .size = e->size,
						 .tid = e->hdr.tid,
						 .mem_type = e->mem_type,
						 .stack_id = e->stack_id,
						 .flags = e->flags,
						 .result = e->result,
						 .func = e->func,
						 .api = e->api,
						 .kind = kind };
		for (unsigned int a = 0; a < MODEL_API_NR; a++)
			for (unsigned int k = 0; k < MODEL_KIND_NR; k++)
				f->live_bytes[a][k] = g->st[a][k].live_bytes;
		snapshot_groups(g, f);
		return;
	}
	st->allocs++;
	st->alloc_bytes += e->size;
	/* graphs instantiated, over time: captured again instead of reused */
	if (kind == MODEL_KIND_GRAPH_EXEC)
		series__add(&g->graphs_made, e->hdr.ts_ns, st->allocs, SERIES_STEP_NS);
	g->dedicated += !!(e->flags & (GMT_GF_DEDICATED_IMAGE | GMT_GF_DEDICATED_BUFFER));
	g->imported += !!(e->flags & (GMT_GF_IMPORT_FD | GMT_GF_IMPORT_HOST | GMT_GF_IMPORT_OTHER));
	g->exported += !!(e->flags & GMT_GF_EXPORT);
	l = find(g, e->handle, kind_class(kind), e->api);
	if (l) { /* a handle reused without a free we saw: the old one is gone */
		account(&g->st[l->api][l->kind], e->hdr.ts_ns, -bytes_of(l->size), -1);
		hold(g, l, e->hdr.ts_ns, -bytes_of(l->size));
		l->used = 2;
		g->nr_live--;
	}
	l = insert(g, e->handle, kind_class(kind), e->api);
	if (!l)
		return;
	*l = (struct model_gpu_live){ .handle = e->handle,
				      .size = e->size,
				      .ts = e->hdr.ts_ns,
				      .stack_id = e->stack_id,
				      .mem_type = e->mem_type,
				      .flags = e->flags,
				      .func = e->func,
				      .api = e->api,
				      .kind = kind,
				      .cls = kind_class(kind),
				      .used = 1 };
	if (l->cls == C_VMM_MAP) {
		struct model_gpu_live *phys = find(g, e->aux, C_VMM_PHYS, e->api);

		l->phys = e->aux;
		if (phys)
			phys->maps++;
	}
	account(st, e->hdr.ts_ns, bytes_of(e->size), 1);
	h = hold(g, l, e->hdr.ts_ns, bytes_of(e->size));
	if (h) {
		h->allocs++;
		h->alloc_bytes += e->size;
	}
	(void)m;
}

/* l's bytes are no longer live */
static void end_live(struct model_gpu *g, struct model_gpu_live *l, __u64 ts)
{
	g->st[l->api][l->kind].frees++;
	g->st[l->api][l->kind].freed_bytes += l->size;
	account(&g->st[l->api][l->kind], ts, -bytes_of(l->size), -1);
	hold(g, l, ts, -bytes_of(l->size));
	l->used = 2;
	g->nr_live--;
}

static void on_free(struct model_gpu *g, const struct gmt_gpu_call *e)
{
	struct model_gpu_live *l, *phys;

	if (e->result)
		return; /* a failed free frees nothing */
	if (!e->handle)
		return; /* freeing NULL is allowed and does nothing */
	l = find(g, e->handle, kind_class(e->kind), e->api);
	if (!l) {
		g->unknown_frees++; /* allocated before tracing began */
		return;
	}
	/* CUDA VMM: physical memory released while mapped stays live until
	 * its last unmap (ggml's pool releases right after mapping) */
	if (l->cls == C_VMM_PHYS && l->maps) {
		l->released = true;
		return;
	}
	if (l->cls == C_VMM_MAP && (phys = find(g, l->phys, C_VMM_PHYS, l->api)) && phys->maps &&
	    !--phys->maps && phys->released)
		end_live(g, phys, e->hdr.ts_ns);
	end_live(g, l, e->hdr.ts_ns);
}

void model_gpu__add(struct model *m, struct model_proc *p, const struct gmt_gpu_call *e)
{
	struct model_gpu *g = p->gpu;
	unsigned int kind = e->kind;

	if (e->api >= MODEL_API_NR || kind >= MODEL_KIND_NR)
		return;
	if (!g && !(g = p->gpu = calloc(1, sizeof(*g))))
		return;
	g->calls++;
	if (kind == MODEL_KIND_VK_MEMORY && e->op == GMT_GOP_ALLOC)
		kind = model__vk_kind(m, e->mem_type);
	switch (e->op) {
	case GMT_GOP_ALLOC:
		on_alloc(m, g, e, kind);
		break;
	case GMT_GOP_FREE:
		on_free(g, e);
		break;
	case GMT_GOP_MAP:
		g->maps += !e->result;
		break;
	case GMT_GOP_UNMAP:
		g->unmaps++;
		break;
	case GMT_GOP_INFO:
		if (e->result)
			break;
		if (!g->info_seen || e->aux < g->info_min_free)
			g->info_min_free = e->aux;
		g->info_seen = true;
		g->info_free = e->aux;
		g->info_total = e->aux2;
		g->info_ts = e->hdr.ts_ns;
		break;
	}
}

void model_gpu__free(struct model_gpu *g)
{
	if (!g)
		return;
	for (unsigned int a = 0; a < MODEL_API_NR; a++)
		for (unsigned int k = 0; k < MODEL_KIND_NR; k++) {
			free(g->st[a][k].series.p);
			free(g->st[a][k].counts.p);
		}
	for (size_t i = 0; i < g->nr_holders; i++)
		free(g->holders[i].live.p);
	free(g->holders);
	free(g->graphs_made.p);
	free(g->live);
	free(g->fails);
	free(g);
}
