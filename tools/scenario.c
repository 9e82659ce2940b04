// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Writes a trace file, in the format gpumemtrace records, of one of the
 * field reports in docs/scenarios.md or of a control that must not be
 * called a leak. Sizes, counts, rates and noise come from the seed, so a
 * test run over several seeds judges cases no threshold was tuned to.
 *
 *   gmt-scenario NAME FILE [SEED]    writes FILE
 *   gmt-scenario NAME FILE SEED -e   also prints, as JSON, what it put in
 *   gmt-scenario --list
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stream/gpufuncs.h"
#include "stream/tracefile.h"

#define MiB (1024.0 * 1024)
#define GiB (1024.0 * MiB)
#define PID 4100
#define EVICTOR 4242
#define SEC 1000000000ull

struct gen {
	struct tracefile_writer *w;
	unsigned long long rng;
	__u64 t;      /* now, ns */
	__u32 stacks; /* stack ids handed out */
	__u64 conn;   /* connection ids */
	__u64 handle; /* GPU handles and addresses */
	double anon;  /* the target's anonymous RSS */
	double avail; /* the host's MemAvailable */
	double nvml;  /* the target's device memory as NVML tells it */
	int requests; /* made so far */
	FILE *expect; /* -e: what was put in, for the test */
	int nexpect;
	__u64 buf[8192];
};

static double uniform(struct gen *g, double a, double b)
{
	/* xorshift64*: the same numbers on every machine */
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return a + (b - a) * ((g->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static double jitter(struct gen *g, double v, double frac)
{
	return v * (1 + uniform(g, -frac, frac));
}

static void expect(struct gen *g, const char *key, double v)
{
	if (g->expect)
		fprintf(g->expect, "%s\"%s\": %.17g", g->nexpect++ ? ", " : "{", key, v);
}

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void *rec(struct gen *g, unsigned int type, size_t len, __u32 pid)
{
	struct gmt_hdr *h = (struct gmt_hdr *)g->buf;

	event__init(h, type, round8(len), g->t, pid);
	return h;
}

static void put(struct gen *g)
{
	if (tracefile__write(g->w, (struct gmt_hdr *)g->buf)) {
		perror("gmt-scenario: write");
		exit(1);
	}
}

static void session(struct gen *g, const char *cmd, __u32 flags)
{
	size_t n = strlen(cmd);
	struct gmt_session *s = rec(g, GMT_EV_SESSION, sizeof(*s) + n + 1, PID);

	s->start_realtime_ns = 1796212800ull * SEC; /* 2026-12-02 12:00 UTC */
	s->interval_ms = 1000;
	s->flags = flags;
	s->target_pid = PID;
	s->page_size = 4096;
	snprintf(s->tool_version, sizeof(s->tool_version), "scenario");
	snprintf(s->kernel, sizeof(s->kernel), "6.12.0-scenario");
	snprintf(s->host, sizeof(s->host), "scenario-host");
	snprintf(s->arch, sizeof(s->arch), "x86_64");
	s->cmdline_len = n + 1;
	memcpy(s->cmdline, cmd, n + 1);
	put(g);
}

static void proc(struct gen *g, __u32 pid, const char *comm, const char *exe, const char *cmd)
{
	size_t n = strlen(cmd);
	struct gmt_proc *p = rec(g, GMT_EV_PROC, sizeof(*p) + n + 1, pid);

	p->ppid = 1;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	snprintf(p->exe, sizeof(p->exe), "%s", exe);
	p->cmdline_len = n + 1;
	memcpy(p->cmdline, cmd, n + 1);
	put(g);
}

static void probe(struct gen *g, const char *name, const char *what)
{
	struct gmt_probe *p = rec(g, GMT_EV_PROBE, sizeof(*p), PID);

	p->status = GMT_PROBE_ATTACHED;
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->what, sizeof(p->what), "%s", what);
	put(g);
}

static void meminfo(struct gen *g)
{
	struct gmt_meminfo *m = rec(g, GMT_EV_MEMINFO, sizeof(*m), PID);

	m->total_kb = 64 * GiB / 1024;
	m->available_kb = (__u64)(g->avail > 0 ? g->avail : 0) / 1024;
	put(g);
}

static void rss(struct gen *g, __u32 member, double bytes)
{
	struct gmt_rss *r = rec(g, GMT_EV_RSS, sizeof(*r), PID);

	r->member = member;
	r->bytes = (__s64)bytes / 4096 * 4096;
	put(g);
}

/* frames as "symbol@module" */
static __u32 stack(struct gen *g, int n, const char *const *frames)
{
	struct gmt_stack *s = rec(g, GMT_EV_STACK, sizeof(*s), PID);
	char *names = (char *)&s->frames[n];
	size_t len = offsetof(struct gmt_stack, frames) + n * sizeof(s->frames[0]);
	int i;

	s->stack_id = ++g->stacks;
	s->nr_frames = n;
	for (i = 0; i < n; i++) {
		const char *at = strchr(frames[i], '@');
		size_t sl = at ? (size_t)(at - frames[i]) : strlen(frames[i]);

		s->frames[i].ip = 0x7f0000000000ull + g->stacks * 0x10000 + i * 0x40;
		s->frames[i].sym_off = 0x20 + i;
		memcpy(names, frames[i], sl);
		names[sl] = 0;
		names += sl + 1;
		strcpy(names, at ? at + 1 : "");
		names += strlen(names) + 1;
	}
	len = names - (char *)s;
	s->hdr.len = round8(len);
	memset(names, 0, s->hdr.len - len);
	put(g);
	return s->stack_id;
}

static __u64 host_alloc(struct gen *g, double bytes, __u32 stack_id)
{
	struct gmt_mmap *m = rec(g, GMT_EV_MMAP, sizeof(*m), PID);
	__u64 addr = 0x7e0000000000ull + (g->handle += 0x100000000ull);

	m->addr = addr;
	m->len = (__u64)bytes / 4096 * 4096;
	m->prot = 3;
	m->flags = 0x22;
	m->fd = -1;
	m->fd_class = GMT_FD_ANON;
	m->stack_id = stack_id;
	put(g);
	g->anon += m->len;
	rss(g, GMT_RSS_ANON, g->anon);
	g->avail -= bytes;
	return addr;
}

static void host_free(struct gen *g, __u64 addr, double bytes)
{
	struct gmt_munmap *m = rec(g, GMT_EV_MUNMAP, sizeof(*m), PID);

	m->addr = addr;
	m->len = (__u64)bytes / 4096 * 4096;
	put(g);
	g->anon -= m->len;
	rss(g, GMT_RSS_ANON, g->anon);
	g->avail += bytes;
}

static unsigned int func(const char *name)
{
	size_t i;

	for (i = 0; i < gpu_nr_funcs; i++)
		if (!strcmp(gpu_funcs[i].name, name))
			return i;
	fprintf(stderr, "gmt-scenario: no function %s\n", name);
	exit(1);
}

static void vk_device(struct gen *g, double heap)
{
	struct gmt_gpu_device *d = rec(g, GMT_EV_GPU_DEVICE, sizeof(*d), PID);

	d->api = GMT_API_VK;
	d->vendor_id = 0x106b;
	d->nr_types = 2;
	d->nr_heaps = 1;
	snprintf(d->name, sizeof(d->name), "Apple M1 (scenario)");
	snprintf(d->driver, sizeof(d->driver), "libvulkan_asahi.so");
	d->types[0] = (struct gmt_gpu_mem_type){ .flags = 1, .heap = 0 };
	d->types[1] = (struct gmt_gpu_mem_type){ .flags = 7, .heap = 0 };
	d->heaps[0] = (struct gmt_gpu_mem_heap){ .size = (__u64)heap, .flags = 1 };
	put(g);
}

/* one GPU call; returns its handle */
static __u64 gpu(struct gen *g, const char *name, __u64 size, __u64 handle, __u32 stack_id,
		 __s32 result)
{
	struct gmt_gpu_call *c = rec(g, GMT_EV_GPU_CALL, sizeof(*c), PID);
	unsigned int f = func(name);

	c->api = gpu_funcs[f].api;
	c->op = gpu_funcs[f].op;
	c->kind = gpu_funcs[f].kind;
	c->func = f;
	c->result = result;
	c->mem_type = c->api == GMT_API_VK ? 0 : ~0u;
	c->stack_id = stack_id;
	c->size = size;
	c->handle = handle ? handle : result ? 0 : 0xd0000000ull + (g->handle += 0x1000);
	c->dur_ns = 20000;
	put(g);
	return c->handle;
}

static void nvml(struct gen *g, double total)
{
	struct gmt_nvml *n = rec(g, GMT_EV_NVML, sizeof(*n), PID);

	n->index = 0;
	n->used = (__u64)g->nvml;
	n->total = (__u64)total;
	n->free = (__u64)(total - g->nvml - 2 * GiB);
	snprintf(n->name, sizeof(n->name), "NVIDIA (scenario)");
	put(g);
}

static void bo(struct gen *g, __u32 op, __u64 id, double size, int from, int to, __u32 owner,
	       __u32 cur, const char *comm)
{
	struct gmt_bo *b = rec(g, GMT_EV_BO, sizeof(*b), cur);

	b->bo = id;
	b->size = (__u64)size / 4096 * 4096;
	b->op = op;
	b->from = from;
	b->to = to;
	b->evict = op == GMT_BO_MOVE && cur != owner;
	b->owner = owner;
	b->evict_id = b->evict ? (__u32)(id & 0xffff) : 0;
	snprintf(b->comm, sizeof(b->comm), "%s", comm);
	put(g);
}

static void http(struct gen *g, __u16 kind, __u16 status)
{
	struct gmt_http *h = rec(g, GMT_EV_HTTP, sizeof(*h), PID);

	h->conn = g->conn;
	h->fd = 9;
	h->kind = kind;
	h->status = status;
	if (kind == GMT_HTTP_REQUEST) {
		snprintf(h->method, sizeof(h->method), "POST");
		snprintf(h->path, sizeof(h->path), "/v1/chat/completions");
	}
	if (kind == GMT_HTTP_RESP_END) {
		h->end = GMT_HTTP_END_LENGTH;
		h->bytes_in = 600;
		h->bytes_out = 900;
	}
	put(g);
}

static void decode(struct gen *g, __u32 tokens, double secs)
{
	struct gmt_decode *d;

	g->t += (__u64)(secs * SEC);
	d = rec(g, GMT_EV_DECODE, sizeof(*d), PID);
	d->dur_ns = (__u64)(secs * SEC * 0.9);
	d->kind = GMT_DEC_DECODE;
	d->n_tokens = tokens;
	put(g);
}

/* a request: its line, the prompt's decode, `work` (what it does to
 * memory), the generated tokens at `rate` per second, the response */
static void request(struct gen *g, __u32 prompt, __u32 gen, double rate,
		    void (*work)(struct gen *, void *), void *arg)
{
	__u32 i;

	g->conn++;
	g->t += SEC / 4;
	http(g, GMT_HTTP_REQUEST, 0);
	decode(g, prompt, prompt / 2000.0 + 0.01);
	if (work)
		work(g, arg);
	for (i = 0; i + 1 < gen; i++)
		decode(g, 1, jitter(g, 1 / rate, 0.03));
	http(g, GMT_HTTP_RESP_BEGIN, 200);
	g->t += SEC / 100;
	http(g, GMT_HTTP_RESP_END, 200);
	g->requests++;
	meminfo(g);
}

static void end(struct gen *g, __u32 reason)
{
	struct gmt_end *e;

	g->t += SEC;
	e = rec(g, GMT_EV_END, sizeof(*e), PID);
	e->reason = reason;
	put(g);
}

static void exit_proc(struct gen *g, int code)
{
	struct gmt_exit *e = rec(g, GMT_EV_EXIT, sizeof(*e), PID);

	e->exit_code = code << 8;
	e->group_dead = 1;
	snprintf(e->comm, sizeof(e->comm), "llama-server");
	put(g);
}

/* what every llama-server scenario starts with */
static void server_start(struct gen *g, const char *cmd, __u32 flags)
{
	session(g, cmd, flags);
	probe(g, "kmem:rss_stat", "RSS by member");
	probe(g, "uprobe:vkAllocateMemory", "GPU API allocations");
	proc(g, PID, "llama-server", "/usr/local/bin/llama-server", cmd);
	g->t += SEC / 10;
	rss(g, GMT_RSS_FILE, 900 * MiB);
	g->anon = jitter(g, 700 * MiB, 0.3);
	rss(g, GMT_RSS_ANON, g->anon);
	meminfo(g);
}

static const char *const weights_stack[] = {
	"ggml_vk_create_buffer@libggml-vulkan.so",
	"ggml_backend_vk_buffer_type_alloc_buffer@libggml-vulkan.so",
	"llama_model::load_tensors@libllama.so", "llama_model_load_from_file@libllama.so",
	"main@llama-server"
};
static const char *const kv_stack[] = {
	"ggml_vk_create_buffer@libggml-vulkan.so",
	"ggml_backend_vk_buffer_type_alloc_buffer@libggml-vulkan.so",
	"llama_kv_cache::llama_kv_cache@libllama.so", "llama_init_from_model@libllama.so",
	"main@llama-server"
};
static const char *const compute_stack[] = {
	"ggml_vk_create_buffer@libggml-vulkan.so",
	"ggml_backend_vk_buffer_type_alloc_buffer@libggml-vulkan.so",
	"ggml_gallocr_reserve_n@libggml-base.so", "llama_context::graph_reserve@libllama.so",
	"main@llama-server"
};
static const char *const cache_stack[] = { "operator new@libstdc++.so.6",
					   "server_tokens::server_tokens@llama-server",
					   "server_prompt_cache::save@llama-server",
					   "server_context::update_slots@llama-server",
					   "main@llama-server" };
static const char *const churn_stack[] = { "malloc@libc.so.6", "common_tokenize@llama-server",
					   "server_context::handle_completions@llama-server",
					   "main@llama-server" };

static void vk_weights(struct gen *g, double bytes, int n)
{
	__u32 s = stack(g, 5, weights_stack);
	int i;

	for (i = 0; i < n; i++)
		gpu(g, "vkAllocateMemory", (__u64)(bytes / n), 0, s, 0);
}

/* scenario 1: the prompt cache holds ~300 MB a request in host memory; it
 * would stop at 8 GiB, above what the host has free */
struct cache {
	double step, jit;
	__u32 stack_id;
	int limit; /* entries kept; 0: no limit */
	__u64 addr[4096];
	double size[4096];
	int n, first;
	bool per_token; /* entry size follows the prompt; the limit is in bytes */
	double held, limit_bytes;
	__u32 prompt;
};

static void cache_put(struct gen *g, void *arg)
{
	struct cache *c = arg;
	double b = c->per_token ? c->step * c->prompt : jitter(g, c->step, c->jit);

	if (c->n >= 4096)
		return;
	c->size[c->n] = b;
	/* over the limit: the oldest entries go */
	while (c->per_token && c->limit && c->held + b > c->limit_bytes && c->first < c->n - 1) {
		host_free(g, c->addr[c->first], c->size[c->first]);
		c->held -= c->size[c->first++];
	}
	c->held += b;
	c->addr[c->n++] = host_alloc(g, b, c->stack_id);
	while (!c->per_token && c->limit && c->n - c->first > c->limit) {
		host_free(g, c->addr[c->first], c->size[c->first]);
		c->first++;
	}
}

static void host_cache(struct gen *g, bool fixed, bool bounded, bool per_token)
{
	struct cache c = { .step = fixed ? 126 * MiB : 300 * MiB, .jit = fixed ? 0.002 : 0.03 };
	int n, i;

	/* report 2 without a plateau: a fixed step past --cache-ram 1024 */
	server_start(g,
		     fixed && !bounded ? "llama-server -m model.gguf --port 8080 --cache-ram 1024" :
					 "llama-server -m model.gguf --port 8080",
		     0);
	vk_device(g, 16 * GiB);
	vk_weights(g, jitter(g, 2 * GiB, 0.5), 4);
	c.step = jitter(g, c.step, 0.6);
	c.stack_id = stack(g, 5, cache_stack);
	c.per_token = per_token;
	if (per_token)
		c.step = jitter(g, 0.25 * MiB, 0.5); /* bytes per prompt token */
	c.limit = bounded ? (int)uniform(g, 4, 9) + (per_token ? 5 : 0) : 0;
	c.limit_bytes = c.limit * c.step * 1500; /* about that many average prompts */
	n = bounded ? c.limit + (int)uniform(g, 8, 20) : (int)uniform(g, 15, 35);
	/* report 1: the cache filling toward llama-server's default 8 GiB
	 * (a third to nine tenths of it by the end), on a machine whose free
	 * memory at the end is 0.3 to 1.5 times what the cache may still take */
	if (!fixed && !bounded && !per_token)
		n = (int)fmax(15, uniform(g, 0.33, 0.9) * 8 * GiB / c.step);
	expect(g, "base_bytes", g->anon);
	g->avail = fixed ? 1e15 : c.step * uniform(g, 12, 60) + n * c.step;
	if (!fixed && !bounded && !per_token)
		g->avail = n * c.step + fmax(8 * GiB - n * c.step, c.step) * uniform(g, 0.3, 1.5);
	if (fixed || per_token)
		g->avail = 48 * GiB;
	meminfo(g);
	for (i = 0; i < n; i++) {
		c.prompt = (__u32)uniform(g, 20, 3000);
		request(g, c.prompt, (__u32)uniform(g, 16, 64), jitter(g, 20, 0.2), cache_put, &c);
	}
	expect(g, "requests", n);
	expect(g, "step_bytes", c.step);
	expect(g, "limit_entries", c.limit);
	expect(g, "limit_bytes", per_token ? c.limit_bytes : 0);
	expect(g, "anon_bytes", g->anon);
	expect(g, "available_bytes", g->avail);
	end(g, GMT_END_SIGNAL);
}

/* scenario 3: buffers in VRAM, evicted by another process, never back;
 * or (a control) moved back once it is gone, and as fast as before */
static void eviction(struct gen *g, bool back)
{
	double total = jitter(g, 3.9 * GiB, 0.4), other = jitter(g, 4.1 * GiB, 0.4);
	double fast = jitter(g, 10, 0.3), slow = fast / uniform(g, 5, 12);
	int nb = (int)uniform(g, 10, 16), n1 = (int)uniform(g, 4, 10), n2 = (int)uniform(g, 4, 12);
	int i;

	server_start(g, "llama-server -m model.gguf -ngl 99", GMT_SESSION_ALL_BOS);
	probe(g, "fentry:ttm_bo_handle_move_mem", "buffer moves");
	for (i = 0; i < nb; i++) {
		bo(g, GMT_BO_CREATE, 0xffff888100000000ull + i * 0x1000, total / nb, GMT_PL_NONE,
		   GMT_PL_NONE, PID, PID, "llama-server");
		bo(g, GMT_BO_MOVE, 0xffff888100000000ull + i * 0x1000, total / nb, GMT_PL_NONE,
		   GMT_PL_VRAM, PID, PID, "llama-server");
	}
	for (i = 0; i < n1; i++)
		request(g, (__u32)uniform(g, 20, 200), (__u32)uniform(g, 24, 48),
			jitter(g, fast, 0.05), NULL, NULL);
	g->t += 2 * SEC;
	/* the other program loads: its buffers take VRAM, ours go to GTT */
	for (i = 0; i < 8; i++) {
		g->t += SEC / 20;
		bo(g, GMT_BO_CREATE, 0xffff888200000000ull + i * 0x1000, other / 8, GMT_PL_NONE,
		   GMT_PL_NONE, EVICTOR, EVICTOR, "llava");
		if (i < nb)
			bo(g, GMT_BO_MOVE, 0xffff888100000000ull + i * 0x1000, total / nb,
			   GMT_PL_VRAM, GMT_PL_TT, PID, EVICTOR, "llava");
		bo(g, GMT_BO_MOVE, 0xffff888200000000ull + i * 0x1000, other / 8, GMT_PL_NONE,
		   GMT_PL_VRAM, EVICTOR, EVICTOR, "llava");
	}
	g->t += 3 * SEC;
	for (i = 0; i < 8; i++)
		bo(g, GMT_BO_FREE, 0xffff888200000000ull + i * 0x1000, other / 8, GMT_PL_VRAM,
		   GMT_PL_VRAM, EVICTOR, EVICTOR, "llava");
	for (i = 0; back && i < 8 && i < nb; i++)
		bo(g, GMT_BO_MOVE, 0xffff888100000000ull + i * 0x1000, total / nb, GMT_PL_TT,
		   GMT_PL_VRAM, PID, PID, "llama-server");
	if (back)
		slow = fast;
	for (i = 0; i < n2; i++)
		request(g, (__u32)uniform(g, 20, 200), (__u32)uniform(g, 24, 48),
			jitter(g, slow, 0.05), NULL, NULL);
	expect(g, "evicted_bytes", (double)((__u64)(total / nb) / 4096 * 4096) * (nb < 8 ? nb : 8));
	expect(g, "rate_before", fast);
	expect(g, "rate_after", slow);
	expect(g, "requests_before", n1);
	expect(g, "requests_after", n2);
	end(g, GMT_END_SIGNAL);
}

/* scenario 4: device memory grows with a graph per request; the CUDA
 * allocation calls stay flat; in the end cuGraphInstantiate fails */
static void graph_step(struct gen *g, void *arg)
{
	double *step = arg;

	gpu(g, "cuGraphInstantiateWithFlags", 0, 0, 0, 0);
	g->nvml += jitter(g, *step, 0.02);
	nvml(g, 80 * GiB);
}

static void graphs(struct gen *g)
{
	static const char *const pool[] = { "cuMemCreate@libcuda.so.1",
					    "ggml_cuda_pool_vmm::alloc@libggml-cuda.so",
					    "ggml_backend_cuda_graph_compute@libggml-cuda.so",
					    "main@llama-server" };
	double step = jitter(g, 25 * MiB, 0.6), weights = jitter(g, 6 * GiB, 0.5);
	int n = (int)uniform(g, 16, 40), i;
	__u32 s = stack(g, 4, pool);

	server_start(g, "llama-server -m gemma-3-4b.gguf --mmproj mmproj.gguf", 0);
	gpu(g, "cuMemAlloc_v2", (__u64)weights, 0, s, 0);
	gpu(g, "cuMemCreate", 512 * MiB, 0, s, 0);
	g->nvml = weights + 512 * MiB + 300 * MiB; /* and the context */
	nvml(g, 80 * GiB);
	for (i = 0; i < n; i++)
		request(g, (__u32)uniform(g, 300, 1200), (__u32)uniform(g, 16, 48),
			jitter(g, 40, 0.1), graph_step, &step);
	g->conn++;
	g->t += SEC / 4;
	http(g, GMT_HTTP_REQUEST, 0);
	gpu(g, "cuGraphInstantiateWithFlags", 0, 0, s, 2 /* CUDA_ERROR_OUT_OF_MEMORY */);
	expect(g, "requests", n);
	expect(g, "step_bytes", step);
	expect(g, "graphs", n);
	end(g, GMT_END_SIGNAL);
}

/* the same, as on a fast GPU: graphs one a request, a hundred requests
 * between NVML's few samples; the count is judged, NVML is not */
static void burst_step(struct gen *g, void *arg)
{
	gpu(g, "cuGraphInstantiateWithFlags", 0, 0, 0, 0);
	g->nvml += 100 * 1024;
	if (g->requests % 40 == 39)
		nvml(g, 80 * GiB);
	(void)arg;
}

/* short: 24 requests, a few seconds, as the H100's short image run was:
 * ggml-cuda's sweep (graphs unused for 10 s) could not have come yet */
static void graph_burst(struct gen *g, bool short_run)
{
	int n = short_run ? 24 : (int)uniform(g, 90, 120), i;

	server_start(g, "llama-server -m gemma-3-4b.gguf --mmproj mmproj.gguf", 0);
	gpu(g, "cuMemAlloc_v2", 200 * MiB, 0, 0, 0);
	g->nvml = 800 * MiB;
	for (i = 0; i < n; i++)
		request(g, (__u32)uniform(g, 170, 180), 16, jitter(g, 3000, 0.1), burst_step, NULL);
	expect(g, "requests", n);
	expect(g, "graphs", n);
	expect(g, "nvml_samples", n / 40);
	end(g, GMT_END_SIGNAL);
}

/* report 4 as the H200 showed it: a graph a request, until ggml-cuda's
 * sweep lets go of those unused for 10 s; then a few at a time, swept
 * again. NVML rises with the first ones and holds; the API's only growth is
 * a step at the second request. Graphs: made and let go, a bounded set;
 * NVML: a verdict of its own (it had none) */
struct sweep {
	__u64 handles[1024];
	int live, peak, sweep_at;
	int end_peak; /* the most live at a request's end */
};

static void sweep_step(struct gen *g, void *arg)
{
	struct sweep *w = arg;

	if (g->requests == 1) {
		gpu(g, "cuMemAlloc_v2", 100 * MiB, 0, 0, 0);
		g->nvml += 104 * MiB;
	}
	if (w->live < 1024)
		w->handles[w->live++] = gpu(g, "cuGraphInstantiateWithFlags", 0, 0, 0, 0);
	if (w->live > w->peak) {
		w->peak = w->live;
		g->nvml += 240 * 1024;
	}
	/* the first sweep, then one every 50 requests down to a few */
	if (g->requests == w->sweep_at || (g->requests > w->sweep_at && g->requests % 50 == 0)) {
		while (w->live > (int)uniform(g, 2, 6))
			gpu(g, "cuGraphExecDestroy", 0, w->handles[--w->live], 0, 0);
	}
	if (w->live > w->end_peak)
		w->end_peak = w->live;
	nvml(g, 141 * GiB);
}

static void graph_sweep(struct gen *g)
{
	struct sweep w = { .sweep_at = (int)uniform(g, 240, 280) };
	int n = (int)uniform(g, 1000, 1100), i;

	server_start(g, "llama-server -m gemma-3-4b.gguf --mmproj mmproj.gguf", 0);
	gpu(g, "cuMemAlloc_v2", 200 * MiB, 0, 0, 0);
	g->nvml = 730 * MiB;
	for (i = 0; i < n; i++)
		request(g, (__u32)uniform(g, 170, 180), 16, jitter(g, 3000, 0.1), sweep_step, &w);
	expect(g, "requests", n);
	expect(g, "peak_graphs", w.end_peak);
	expect(g, "last_graphs", w.live);
	end(g, GMT_END_SIGNAL);
}

/* scenario 5: start-up runs out of device memory; the KV cache is most */
static void startup_oom(struct gen *g)
{
	double heap = jitter(g, 16 * GiB, 0.5), kv = jitter(g, 5.9 * GiB, 0.3) / 4;
	double weights = jitter(g, 1.1 * GiB, 0.3), compute = jitter(g, 0.3 * GiB, 0.3);
	double fail = jitter(g, 369827840, 0.3);
	__u32 s;
	int i;

	server_start(g, "llama-server -m gemma-4-E2B.gguf", 0);
	vk_device(g, heap);
	g->t += SEC;
	vk_weights(g, weights, 3);
	g->t += SEC;
	s = stack(g, 5, kv_stack);
	for (i = 0; i < 4; i++)
		gpu(g, "vkAllocateMemory", (__u64)kv, 0, s, 0);
	g->t += SEC / 2;
	s = stack(g, 5, compute_stack);
	gpu(g, "vkAllocateMemory", (__u64)compute, 0, s, 0);
	gpu(g, "vkAllocateMemory", (__u64)fail, 0, s, -2 /* VK_ERROR_OUT_OF_DEVICE_MEMORY */);
	g->t += SEC / 10;
	exit_proc(g, 1);
	expect(g, "failed_bytes", (__u64)fail);
	expect(g, "kv_bytes", 4.0 * (__u64)kv);
	expect(g, "live_bytes", 4.0 * (__u64)kv + 3.0 * (__u64)(weights / 3) + (__u64)compute);
	end(g, GMT_END_TARGET_EXIT);
}

/* controls: a steady server, a warm-up that settles, noisy but flat use */
struct churn {
	double base, noise;
	__u32 stack_id;
	__u64 addr;
	double size;
	int warm; /* requests that still allocate once */
	__u32 warm_stack;
};

static void churn(struct gen *g, void *arg)
{
	struct churn *c = arg;

	if (c->addr)
		host_free(g, c->addr, c->size);
	c->size = c->base + uniform(g, 0, c->noise);
	c->addr = host_alloc(g, c->size, c->stack_id);
	if (c->warm-- > 0)
		gpu(g, "vkAllocateMemory", (__u64)jitter(g, 300 * MiB, 0.5), 0, c->warm_stack, 0);
}

static void control(struct gen *g, double noise_frac, int warm)
{
	struct churn c = { 0 };
	int n = (int)uniform(g, 15, 40), i;

	server_start(g, "llama-server -m model.gguf", 0);
	vk_device(g, 16 * GiB);
	vk_weights(g, jitter(g, 2 * GiB, 0.5), 4);
	g->avail = 20 * GiB;
	c.stack_id = stack(g, 4, churn_stack);
	c.warm_stack = stack(g, 5, compute_stack);
	c.base = jitter(g, 64 * MiB, 0.5);
	c.noise = c.base * noise_frac;
	c.warm = warm;
	c.size = c.base;
	c.addr = host_alloc(g, c.size, c.stack_id);
	for (i = 0; i < n; i++)
		request(g, (__u32)uniform(g, 20, 3000), (__u32)uniform(g, 16, 64),
			jitter(g, 20, 0.2), churn, &c);
	expect(g, "requests", n);
	end(g, GMT_END_SIGNAL);
}

/* the prompt cache filling toward --cache-ram 8192 as the real server fills
 * it: each entry's size comes in its own state copy (llama_state_seq_get_
 * data_ext); with `leak`, half an entry a request more, from another stack,
 * is never given back */
struct filling {
	struct cache c;
	double leak, saved;
	__u32 leak_stack;
};

static void state_save(struct gen *g, double bytes)
{
	struct gmt_llama_state *s = rec(g, GMT_EV_LLAMA_STATE, sizeof(*s), PID);

	s->size = (__u64)bytes;
	s->kind = GMT_DEC_STATE_SAVE;
	put(g);
}

static void fill_put(struct gen *g, void *arg)
{
	struct filling *f = arg;

	cache_put(g, &f->c);
	state_save(g, f->c.size[f->c.n - 1]);
	f->saved += (__u64)f->c.size[f->c.n - 1];
	if (f->leak > 0)
		host_alloc(g, jitter(g, f->leak, 0.05), f->leak_stack);
}

static void cache_filling(struct gen *g, bool leak)
{
	struct filling f = { .c = { .jit = 0.05 } };
	int n, i;

	server_start(g, "llama-server -m model.gguf --cache-ram 8192", 0);
	f.c.step = jitter(g, 40 * MiB, 0.5);
	f.c.stack_id = stack(g, 5, cache_stack);
	f.leak_stack = stack(g, 4, churn_stack);
	f.leak = leak ? f.c.step / 2 : 0;
	n = (int)uniform(g, 15, 30);
	g->avail = 48 * GiB;
	meminfo(g);
	for (i = 0; i < n; i++)
		request(g, (__u32)uniform(g, 20, 3000), (__u32)uniform(g, 16, 64),
			jitter(g, 20, 0.2), fill_put, &f);
	expect(g, "requests", n);
	expect(g, "step_bytes", f.c.step);
	expect(g, "leak_bytes", f.leak);
	expect(g, "saved_bytes", f.saved);
	expect(g, "limit_bytes", 8192 * MiB);
	end(g, GMT_END_SIGNAL);
}

static const char *const names[] = {
	"host-cache",	  "fixed-step-cache", "fixed-step-leak", "eviction",
	"graph-growth",	  "startup-oom",      "steady",		 "warmup",
	"noisy",	  "cache-fills",      "eviction-back",	 "cache-filling",
	"cache-and-leak", "graph-burst",      "graph-sweep",	 "graph-short",
};

int main(int argc, char **argv)
{
	struct tracefile_info info = { .version = TRACEFILE_VERSION };
	char err[512];
	struct gen *g;
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			printf("%s\n", names[i]);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: gmt-scenario NAME FILE [SEED [-e]]  (--list for names)\n");
		return 2;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]) && strcmp(names[i], argv[1]); i++)
		;
	if (i == sizeof(names) / sizeof(names[0])) {
		fprintf(stderr, "gmt-scenario: no scenario '%s' (--list names them)\n", argv[1]);
		return 2;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return 1;
	g->rng = 0x9e3779b97f4a7c15ull ^
		 (argc > 3 ? strtoull(argv[3], NULL, 0) : 1) * 0xbf58476d1ce4e5b9ull;
	if (!g->rng)
		g->rng = 1;
	g->t = SEC;
	g->avail = 40 * GiB;
	g->expect = argc > 4 && !strcmp(argv[4], "-e") ? stdout : NULL;
	snprintf(info.tool, sizeof(info.tool), "gmt-scenario %s", argv[1]);
	snprintf(info.cmdline, sizeof(info.cmdline), "gmt-scenario %s", argv[1]);
	g->w = tracefile__create(argv[2], &info, err, sizeof(err));
	if (!g->w) {
		fprintf(stderr, "gmt-scenario: %s\n", err);
		return 1;
	}
	switch (i) {
	case 0:
		host_cache(g, false, false, false);
		break;
	case 1:
		host_cache(g, true, true, false);
		break;
	case 2:
		host_cache(g, true, false, false);
		break;
	case 3:
		eviction(g, false);
		break;
	case 4:
		graphs(g);
		break;
	case 5:
		startup_oom(g);
		break;
	case 6:
		control(g, 0.02, 0);
		break;
	case 7:
		control(g, 0.02, (int)uniform(g, 1, 3));
		break;
	case 8:
		control(g, 0.5, 0);
		break;
	case 9:
		host_cache(g, false, true, true);
		break;
	case 10:
		eviction(g, true);
		break;
	case 11:
		cache_filling(g, false);
		break;
	case 12:
		cache_filling(g, true);
		break;
	case 13:
		graph_burst(g, false);
		break;
	case 14:
		graph_sweep(g);
		break;
	case 15:
		graph_burst(g, true);
		break;
	}
	if (g->expect)
		fprintf(g->expect, "}\n");
	if (tracefile__close(g->w)) {
		perror("gmt-scenario: close");
		return 1;
	}
	free(g);
	return 0;
}
