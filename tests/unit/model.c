// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the model: RSS, faults and mappings, exec and pids, GPU
 * calls, buffer objects, DRM fdinfo, requests and their slots, and the
 * bounds on mappings, requests and series over a long run. */
#include "unit.h"
#include "source/procfs.h"

void test_model_rss_and_faults(void)
{
	struct model *m = model_of_run(8);
	struct model_proc *p = model__proc(m, 100);
	__s64 v = 0;

	if (!ASSERT_TRUE(p != NULL, "target process"))
		return;
	ASSERT_EQ(p->rss[GMT_RSS_ANON].n, 8, "rss points");
	ASSERT_EQ(series__peak(&p->rss[GMT_RSS_ANON]), 128ll << 20, "peak");
	ASSERT_TRUE(series__at(&p->rss[GMT_RSS_ANON], T(3.0), &v), "value at 3 s");
	ASSERT_EQ(v, 32ll << 20, "rss at 3 s");
	ASSERT_TRUE(!series__at(&p->rss[GMT_RSS_ANON], T(1.0), &v), "nothing before 1.5 s");
	ASSERT_EQ(p->faults[GMT_FAULT_ANON], 8 * 4096, "fault total");
	/* the first interval runs from the process's first event (1 s) to 1.6 s */
	ASSERT_EQ((long long)p->fault_peak_rate[GMT_FAULT_ANON], 4096 / 0.6, "fault peak rate");
	ASSERT_EQ(m->lost[GMT_SRC_MMAP], 7, "lost");
	ASSERT_EQ(m->end_reason, GMT_END_SIGNAL, "end reason");
	ASSERT_EQ(model__duration_ns(m), 10ull * 1000000000ull, "duration");
	model__free(m);
}

void test_model_mappings(void)
{
	struct model *m = model__new();
	struct model_proc *p;
	const __u64 base = 0x7f0000000000ull, mib = 1 << 20;

	send_session(model__add, m, 7);
	send_mmap(model__add, m, 7, 1, base, 16 * mib, 0);
	send_mmap(model__add, m, 7, 2, base + 32 * mib, 8 * mib, 0);
	/* a hole in the middle of the first, then its head */
	send_munmap(model__add, m, 7, 3, base + 4 * mib, 4 * mib);
	send_munmap(model__add, m, 7, 4, base, 4 * mib);
	/* unmapping what was never mapped during the run changes nothing */
	send_munmap(model__add, m, 7, 5, base + 64 * mib, 64 * mib);
	/* one call across both */
	send_munmap(model__add, m, 7, 6, base + 8 * mib, 28 * mib);
	p = model__proc(m, 7);
	if (!ASSERT_TRUE(p != NULL, "process"))
		return;
	ASSERT_EQ(p->nr_maps, 2, "mappings");
	ASSERT_EQ(p->maps[0].live, 0, "first gone");
	ASSERT_EQ(p->maps[0].gone_ts, T(6), "first gone at 6 s");
	ASSERT_EQ(p->maps[1].live, 4 * mib, "second half left");
	ASSERT_EQ(p->munmap_calls, 4, "munmap calls");
	/* a fixed mapping over the rest replaces it */
	send_mmap(model__add, m, 7, 7, base + 36 * mib, 4 * mib, 0);
	ASSERT_EQ(p->maps[1].live, 0, "replaced by MAP_FIXED");
	ASSERT_EQ(p->maps[2].live, 4 * mib, "new mapping live");
	model__free(m);
}

void test_model_exec_resets(void)
{
	struct model *m = model__new();
	struct gmt_exec x;
	struct model_proc *p;

	struct {
		struct gmt_proc p;
		char cmdline[16];
	} pr = {};

	send_session(model__add, m, 9);
	/* read at its fork: its parent's command line */
	event__init(&pr.p.hdr, GMT_EV_PROC, sizeof(pr), T(0.05), 9);
	strcpy(pr.p.comm, "router");
	strcpy(pr.p.cmdline, "router --x");
	pr.p.cmdline_len = strlen(pr.p.cmdline);
	model__add(m, &pr.p.hdr);
	p = model__proc(m, 9);
	if (!ASSERT_TRUE(p && p->cmdline && !strcmp(p->cmdline, "router --x"),
			 "PROC's command line"))
		return;
	send_rss(model__add, m, 9, 0.1, GMT_RSS_ANON, 6 << 20);
	send_mmap(model__add, m, 9, 0.2, 0x10000, 1 << 20, 0);
	event__init(&x.hdr, GMT_EV_EXEC, sizeof(x), T(0.3), 9);
	strcpy(x.comm, "server");
	strcpy(x.filename, "/usr/bin/server");
	model__add(m, &x.hdr);
	send_rss(model__add, m, 9, 0.4, GMT_RSS_ANON, 1 << 20);
	p = model__proc(m, 9);
	if (!ASSERT_TRUE(p != NULL, "process"))
		return;
	ASSERT_EQ(p->rss[GMT_RSS_ANON].n, 1, "only the new image's rss");
	ASSERT_EQ(p->nr_maps, 0, "old mappings forgotten");
	ASSERT_STR(p->comm, "server", "comm from exec");
	ASSERT_STR(p->exe, "/usr/bin/server", "exe from exec");
	ASSERT_TRUE(!p->cmdline || !*p->cmdline,
		    "the parent's command line is not the new program's");
	model__free(m);
}

/* -p, and the pid taken by another program as soon as the target exits:
 * that program's exec and memory are not the target's (it once reset the
 * target's series, and its report had no anonymous RSS at all) */
void test_model_pid_taken_after_exit(void)
{
	struct model *m = model__new();
	struct gmt_exit ex;
	struct gmt_exec x;
	struct model_proc *p;

	send_session(model__add, m, 9);
	send_rss(model__add, m, 9, 0.1, GMT_RSS_ANON, 16 << 20);
	event__init(&ex.hdr, GMT_EV_EXIT, sizeof(ex), T(0.2), 9);
	ex.group_dead = 1;
	model__add(m, &ex.hdr);
	event__init(&x.hdr, GMT_EV_EXEC, sizeof(x), T(0.3), 9);
	strcpy(x.comm, "other");
	model__add(m, &x.hdr);
	send_rss(model__add, m, 9, 0.4, GMT_RSS_ANON, 64 << 20);
	p = model__proc(m, 9);
	if (!ASSERT_TRUE(p != NULL, "process"))
		return;
	ASSERT_EQ(p->rss[GMT_RSS_ANON].n, 1, "the target's own rss only");
	ASSERT_EQ(series__peak(&p->rss[GMT_RSS_ANON]), 16 << 20, "its own 16 MiB");
	ASSERT_TRUE(strcmp(p->comm, "other") != 0, "its own name");
	model__free(m);
}

void test_model_gpu(void)
{
	struct model *m = model_of_run(2);
	struct gmt_gpu_device d;
	struct model_gpu *g;
	struct model_proc *p;
	__s64 v = 0;
	int i;

	/* a device with a device-local type 0 and a host-only type 1 */
	event__init(&d.hdr, GMT_EV_GPU_DEVICE, sizeof(d), T(1), 100);
	d.api = GMT_API_VK;
	d.nr_types = 2;
	d.types[0] = (struct gmt_gpu_mem_type){ 1, 0 };
	d.types[1] = (struct gmt_gpu_mem_type){ 6, 1 };
	model__add(m, &d.hdr);
	gpu_call(m, 2.0, GMT_API_VK, GMT_GOP_ALLOC, GMT_GK_VK_MEMORY, 0x10, 100, 0, 0);
	gpu_call(m, 2.1, GMT_API_VK, GMT_GOP_ALLOC, GMT_GK_VK_MEMORY, 0x20, 50, 0, 1);
	gpu_call(m, 2.2, GMT_API_VK, GMT_GOP_FREE, GMT_GK_VK_MEMORY, 0x20, 0, 0, ~0u);
	/* a failure keeps the live bytes of that moment */
	gpu_call(m, 2.3, GMT_API_VK, GMT_GOP_ALLOC, GMT_GK_VK_MEMORY, 0, 1 << 30, -2, 0);
	/* CUDA: the same number as a pointer and as a graph are different things */
	gpu_call(m, 3.0, GMT_API_CU, GMT_GOP_ALLOC, GMT_GK_DEVICE, 0x10, 1000, 0, ~0u);
	gpu_call(m, 3.0, GMT_API_CU, GMT_GOP_ALLOC, GMT_GK_GRAPH_EXEC, 0x10, 0, 0, ~0u);
	gpu_call(m, 3.1, GMT_API_CU, GMT_GOP_FREE, GMT_GK_GRAPH_EXEC, 0x10, 0, 0, ~0u);
	/* freed memory the tracer never saw allocated; a failed free frees nothing */
	gpu_call(m, 3.2, GMT_API_CU, GMT_GOP_FREE, GMT_GK_DEVICE, 0x999, 0, 0, ~0u);
	gpu_call(m, 3.3, GMT_API_CU, GMT_GOP_FREE, GMT_GK_DEVICE, 0x10, 0, 1, ~0u);
	/* many short-lived allocations: the table must not fill with freed slots */
	for (i = 0; i < 20000; i++) {
		gpu_call(m, 4.0 + i * 1e-6, GMT_API_HIP, GMT_GOP_ALLOC, GMT_GK_DEVICE, 0x1000 + i,
			 8, 0, ~0u);
		gpu_call(m, 4.0 + i * 1e-6, GMT_API_HIP, GMT_GOP_FREE, GMT_GK_DEVICE, 0x1000 + i, 0,
			 0, ~0u);
	}
	p = model__proc(m, 100);
	if (!ASSERT_TRUE(p && p->gpu, "gpu state"))
		goto out;
	g = p->gpu;
	ASSERT_EQ(g->st[GMT_API_VK][GMT_GK_DEVICE].live_bytes, 100, "device-local type");
	ASSERT_EQ(g->st[GMT_API_VK][GMT_GK_HOST].allocs, 1, "host type");
	ASSERT_EQ(g->st[GMT_API_VK][GMT_GK_HOST].live_bytes, 0, "host type freed");
	ASSERT_EQ(g->st[GMT_API_VK][GMT_GK_HOST].peak_bytes, 50, "host peak");
	ASSERT_EQ(g->st[GMT_API_VK][GMT_GK_DEVICE].failed, 1, "failure counted");
	if (ASSERT_EQ(g->nr_fails, 1, "one failure")) {
		ASSERT_EQ(g->fails[0].live_bytes[GMT_API_VK][GMT_GK_DEVICE], 100, "live then");
		ASSERT_EQ(g->fails[0].result, -2, "result");
	}
	ASSERT_EQ(g->st[GMT_API_CU][GMT_GK_DEVICE].live_bytes, 1000, "pointer still live");
	ASSERT_EQ(g->st[GMT_API_CU][GMT_GK_GRAPH_EXEC].live, 0, "graph destroyed");
	ASSERT_EQ(g->unknown_frees, 1, "unknown free");
	ASSERT_EQ(g->st[GMT_API_HIP][GMT_GK_DEVICE].allocs, 20000, "churn allocs");
	ASSERT_EQ(g->st[GMT_API_HIP][GMT_GK_DEVICE].live, 0, "churn freed");
	ASSERT_TRUE(g->live_cap <= 1024, "freed slots reused");
	/* each stack's allocations over the run, freed or not (pprof's alloc_space) */
	{
		__u64 n = 0, bytes = 0;

		for (size_t k = 0; k < g->nr_holders; k++)
			if (g->holders[k].api == GMT_API_HIP) {
				n += g->holders[k].allocs;
				bytes += g->holders[k].alloc_bytes;
			}
		ASSERT_EQ(n, 20000, "allocations by stack");
		ASSERT_EQ(bytes, 20000 * 8, "bytes allocated by stack");
	}
	/* the series keeps a point per 10 ms at most, and the value at a time */
	ASSERT_TRUE(g->st[GMT_API_HIP][GMT_GK_DEVICE].series.n < 10, "series coalesced");
	ASSERT_TRUE(series__at(&g->st[GMT_API_VK][GMT_GK_DEVICE].series, T(2.05), &v), "at 2.05");
	ASSERT_EQ(v, 100, "value at 2.05 s");
	/* CUDA VMM as ggml's pool does it: create, map, release at once; the
	 * physical memory is live until its mapping goes */
	{
		struct gmt_gpu_call e;

		gpu_call(m, 9.0, GMT_API_CU, GMT_GOP_ALLOC, GMT_GK_VMM_PHYS, 0x77, 2 << 20, 0, 0);
		event__init(&e.hdr, GMT_EV_GPU_CALL, sizeof(e), T(9.1), 100);
		e.api = GMT_API_CU;
		e.op = GMT_GOP_ALLOC;
		e.kind = GMT_GK_VMM_MAP;
		e.handle = 0x7f0000000000;
		e.size = 2 << 20;
		e.aux = 0x77;
		e.result = 0;
		model__add(m, &e.hdr);
		gpu_call(m, 9.2, GMT_API_CU, GMT_GOP_FREE, GMT_GK_VMM_PHYS, 0x77, 0, 0, 0);
		ASSERT_EQ(g->st[GMT_API_CU][GMT_GK_VMM_PHYS].live_bytes, 2 << 20,
			  "released while mapped: still live");
		gpu_call(m, 9.3, GMT_API_CU, GMT_GOP_FREE, GMT_GK_VMM_MAP, 0x7f0000000000, 2 << 20,
			 0, 0);
		ASSERT_EQ(g->st[GMT_API_CU][GMT_GK_VMM_PHYS].live_bytes, 0, "unmapped: gone");
		ASSERT_EQ(g->st[GMT_API_CU][GMT_GK_VMM_MAP].live, 0, "no mapping left");
	}
out:
	model__free(m);
}

static void bo_event_flags(struct model *m, double t, __u32 pid, __u32 op, __u64 bo, __s32 from,
			   __s32 to, __u32 evict, __u32 owner, __u32 evict_id, __u32 flags,
			   __u32 prefer)
{
	struct gmt_bo e;

	event__init(&e.hdr, GMT_EV_BO, sizeof(e), T(t), pid);
	e.bo = bo;
	e.size = 1 << 20;
	e.op = op;
	e.from = from;
	e.to = to;
	e.evict = evict;
	e.owner = owner;
	e.evict_id = evict_id;
	e.flags = flags;
	e.prefer = prefer;
	e.allowed = prefer | GMT_AMDGPU_DOMAIN_GTT;
	snprintf(e.comm, sizeof(e.comm), "%s", pid == 100 ? "server" : "llava");
	model__add(m, &e.hdr);
}

static void bo_event(struct model *m, double t, __u32 pid, __u32 op, __u64 bo, __s32 from, __s32 to,
		     __u32 evict, __u32 owner, __u32 evict_id)
{
	bo_event_flags(m, t, pid, op, bo, from, to, evict, owner, evict_id, 0, 0);
}

/* the eviction of scenario 3: another process's allocation pushes the
 * server's buffers out of VRAM, TTM bouncing one through GTT */
void test_model_bo(void)
{
	struct model *m = model_of_run(2);
	const struct model_bo_owner *o = NULL;
	char *out = NULL;
	size_t len = 0, i;
	FILE *f;

	bo_event(m, 1.0, 100, GMT_BO_CREATE, 0xa0, GMT_PL_NONE, GMT_PL_VRAM, 0, 100, 0);
	bo_event(m, 1.1, 100, GMT_BO_CREATE, 0xb0, GMT_PL_NONE, GMT_PL_VRAM, 0, 100, 0);
	/* made before tracing, first seen moving */
	bo_event(m, 1.2, 100, GMT_BO_MOVE, 0xc0, GMT_PL_SYSTEM, GMT_PL_VRAM, 0, 0, 0);
	/* pid 200 evicts 0xa0 in two hops, and 0xb0 straight to system */
	bo_event(m, 2.0, 200, GMT_BO_MOVE, 0xa0, GMT_PL_VRAM, GMT_PL_TT, 1, 100, 7);
	bo_event(m, 2.0, 200, GMT_BO_MOVE, 0xa0, GMT_PL_TT, GMT_PL_SYSTEM, 1, 100, 7);
	bo_event(m, 2.1, 200, GMT_BO_MOVE, 0xb0, GMT_PL_VRAM, GMT_PL_SYSTEM, 1, 100, 9);
	/* 0xb0 comes back; 0xa0 never does */
	bo_event(m, 3.0, 100, GMT_BO_MOVE, 0xb0, GMT_PL_SYSTEM, GMT_PL_VRAM, 0, 100, 0);
	bo_event(m, 3.5, 100, GMT_BO_FREE, 0xc0, GMT_PL_NONE, GMT_PL_NONE, 0, 0, 0);
	/* an amdgpu buffer that wants VRAM, evicted to GTT, then put in one of
	 * amdgpu's own placements (6: preempt) */
	bo_event_flags(m, 4.0, 100, GMT_BO_CREATE, 0xd0, GMT_PL_NONE, GMT_PL_VRAM, 0, 100, 0,
		       GMT_BOF_AMDGPU, 0);
	bo_event_flags(m, 4.0, 100, GMT_BO_DOMAINS, 0xd0, GMT_PL_NONE, GMT_PL_NONE, 0, 100, 0,
		       GMT_BOF_AMDGPU, GMT_AMDGPU_DOMAIN_VRAM);
	bo_event_flags(m, 4.5, 200, GMT_BO_MOVE, 0xd0, GMT_PL_VRAM, GMT_PL_TT, 1, 100, 11,
		       GMT_BOF_AMDGPU, 0);
	bo_event_flags(m, 4.6, 100, GMT_BO_MOVE, 0xd0, GMT_PL_TT, 6, 0, 100, 0, GMT_BOF_AMDGPU, 0);
	for (i = 0; i < m->nr_bo_owners; i++)
		if (m->bo_owners[i].pid == 100)
			o = &m->bo_owners[i];
	if (!ASSERT_TRUE(o != NULL, "the server owns buffers"))
		goto out;
	ASSERT_EQ(m->nr_evictions, 3, "the hop is part of one eviction");
	ASSERT_EQ(m->evictions[0].from, GMT_PL_VRAM, "from VRAM");
	ASSERT_EQ(m->evictions[0].to, GMT_PL_SYSTEM, "to system memory, through GTT");
	ASSERT_EQ(m->evictions[0].evictor, 200, "evictor");
	ASSERT_EQ(m->evictions[0].owner, 100, "owner");
	ASSERT_EQ(o->bytes[BO_VRAM], 1 << 20, "VRAM now");
	ASSERT_EQ(o->bytes[BO_OTHER], 1 << 20, "in amdgpu's own placement");
	ASSERT_EQ(o->bytes[BO_SYSTEM], 1 << 20, "system now");
	ASSERT_EQ(o->bytes[BO_GTT], 0, "nothing left in GTT");
	ASSERT_EQ(o->peak[BO_VRAM], 2 << 20, "VRAM peak");
	ASSERT_EQ(o->evictions, 3, "evictions of its buffers");
	f = open_memstream(&out, &len);
	write_report(f, m, false);
	fclose(f);
	ASSERT_TRUE(strstr(out, "Evicted from VRAM and not back: 2 buffers, 2.0 MiB") != NULL,
		    "the buffers that never came back");
	ASSERT_TRUE(strstr(out, "1.0 MiB in preempt since 4.50 s") != NULL, "amdgpu's placement");
	ASSERT_TRUE(strstr(out, "it prefers vram") != NULL, "amdgpu's wish");
	ASSERT_TRUE(strstr(out, "vram -> gtt ") != NULL, "an eviction to GTT");
	if (!ASSERT_TRUE(strstr(out, "vram -> system   pid 100 (server)") != NULL, "eviction row"))
		printf("%s", out);
	ASSERT_TRUE(strstr(out, "pid 200 (llava)") != NULL, "the evictor named");
	ASSERT_TRUE(strstr(out, "made before tracing") != NULL, "unknown owner");
	free(out);
out:
	model__free(m);
}

static void decode_event(struct model *m, double t, __u32 n_tokens, double dur)
{
	struct gmt_decode e;

	event__init(&e.hdr, GMT_EV_DECODE, sizeof(e), T(t), 100);
	e.kind = GMT_DEC_DECODE;
	e.n_tokens = n_tokens;
	e.dur_ns = dur * 1e9;
	model__add(m, &e.hdr);
}

/* requests: pipelined ones answered in order, one cut by a close, decodes
 * counted for every request in flight */
void test_model_requests(void)
{
	struct model *m = model_of_run(2);
	struct model_proc *p = model__proc(m, 100);
	const struct model_request *r;
	int i;

	/* two pipelined on conn 1, answered in order */
	http_event(m, 2.0, 1, GMT_HTTP_REQUEST, "/a", 0, 0);
	http_event(m, 2.0, 1, GMT_HTTP_REQUEST, "/b", 0, 0);
	http_event(m, 2.1, 1, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
	http_event(m, 2.2, 1, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	http_event(m, 2.3, 1, GMT_HTTP_RESP_BEGIN, NULL, 404, 0);
	http_event(m, 2.4, 1, GMT_HTTP_RESP_END, NULL, 404, GMT_HTTP_END_LENGTH);
	/* a generation on conn 2: a prompt of 10, then 4 fed-back tokens */
	http_event(m, 3.0, 2, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
	decode_event(m, 3.2, 10, 0.1);
	for (i = 0; i < 4; i++)
		decode_event(m, 3.3 + i * 0.05, 1, 0.02);
	/* conn 3 starts while conn 2 still runs: both see this decode */
	http_event(m, 3.45, 3, GMT_HTTP_REQUEST, "/other", 0, 0);
	decode_event(m, 3.5, 1, 0.02);
	http_event(m, 3.6, 2, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
	http_event(m, 3.7, 2, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_CHUNKED);
	/* conn 3 closes without a response */
	http_event(m, 4.0, 3, GMT_HTTP_CLOSE, NULL, 0, 0);
	if (!ASSERT_TRUE(p && p->nr_reqs == 4, "four requests"))
		goto out;
	r = &p->reqs[0];
	ASSERT_STR(r->path, "/a", "first");
	ASSERT_EQ(r->status, 200, "first answered first");
	ASSERT_EQ(p->reqs[1].status, 404, "second answered second");
	ASSERT_EQ(p->reqs[1].end_ts, T(2.4), "second's end");
	r = &p->reqs[2];
	ASSERT_EQ(r->t.prompt_tokens, 10, "prompt");
	ASSERT_EQ(model_req__generated(r), 6, "generated: 5 fed back, and the last sampled");
	ASSERT_EQ((long long)(model_req__tokens_per_s(r) + 0.5), 20, "a token per 50 ms");
	ASSERT_EQ(r->end, GMT_HTTP_END_CHUNKED, "chunked end");
	r = &p->reqs[3];
	ASSERT_EQ(r->t.decodes, 1, "the shared decode counts for both in flight");
	ASSERT_TRUE(r->done && r->end == GMT_HTTP_END_CLOSE && !r->responded, "cut by the close");
out:
	model__free(m);
}

/* a decode of several sequences: {seq, n_tokens, n_outputs, pos_min} each */
static void seq_decode(struct model *m, double t, double dur, int n, const int (*q)[4])
{
	char buf[sizeof(struct gmt_decode) + GMT_DECODE_SEQS * sizeof(struct gmt_decode_seq)];
	struct gmt_decode *e = (struct gmt_decode *)buf;
	int i;

	event__init(&e->hdr, GMT_EV_DECODE, sizeof(*e) + n * sizeof(e->seqs[0]), T(t), 100);
	e->kind = GMT_DEC_DECODE;
	e->dur_ns = dur * 1e9;
	e->nr_seqs = n;
	for (i = 0; i < n; i++) {
		e->seqs[i] = (struct gmt_decode_seq){
			q[i][0], q[i][1], q[i][2], q[i][3], q[i][3] + q[i][1] - 1, 0
		};
		e->n_tokens += q[i][1];
	}
	model__add(m, &e->hdr);
}

static void post(struct model *m, double t, __u64 conn, const char *path)
{
	struct gmt_http e;

	event__init(&e.hdr, GMT_EV_HTTP, sizeof(e), T(t), 100);
	e.conn = conn;
	e.kind = GMT_HTTP_REQUEST;
	snprintf(e.method, sizeof(e.method), "POST");
	snprintf(e.path, sizeof(e.path), "%s", path);
	model__add(m, &e.hdr);
}

/* two slots batched together, the later request served first: each request
 * gets its own sequence's tokens and rate; a warm-up decode goes to none */
void test_model_concurrent_slots(void)
{
	struct model *m = model_of_run(3);
	struct model_proc *p = model__proc(m, 100);
	const struct model_request *a, *b;
	int i;

	seq_decode(m, 1.5, 0.01, 1, (const int[][4]){ { 0, 2, 1, 0 } }); /* warm-up */
	post(m, 2.000, 1, "/completion");
	post(m, 2.001, 2, "/v1/completions");
	/* the second request's prompt first: seq 1, 20 tokens */
	seq_decode(m, 2.010, 0.008, 1, (const int[][4]){ { 1, 20, 1, 0 } });
	/* then the first's (seq 0, 30 tokens, reusing 5 cached) beside seq 1's step */
	seq_decode(m, 2.020, 0.008, 2, (const int[][4]){ { 1, 1, 1, 20 }, { 0, 30, 1, 5 } });
	/* steps of 10 ms: seq 1 takes 3 more, seq 0 takes 6 */
	for (i = 0; i < 6; i++) {
		if (i < 3)
			seq_decode(m, 2.030 + i * 0.01, 0.008, 2,
				   (const int[][4]){ { 0, 1, 1, 35 + i }, { 1, 1, 1, 21 + i } });
		else
			seq_decode(m, 2.030 + i * 0.01, 0.008, 1,
				   (const int[][4]){ { 0, 1, 1, 35 + i } });
		if (i == 3) { /* answered a batch late: seq 1 ended at 2.05 */
			http_event(m, 2.061, 2, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
			http_event(m, 2.0612, 2, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
		}
	}
	http_event(m, 2.081, 1, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
	http_event(m, 2.0812, 1, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	/* a new prompt on seq 1 goes back in position: a run with no request */
	seq_decode(m, 2.2, 0.008, 1, (const int[][4]){ { 1, 4, 1, 0 } });
	if (!ASSERT_TRUE(p && p->nr_reqs == 2, "two requests"))
		goto out;
	a = &p->reqs[0];
	b = &p->reqs[1];
	ASSERT_EQ(a->seq, 0, "the first request: sequence 0");
	ASSERT_EQ(a->t.prompt_tokens, 30, "its prompt");
	ASSERT_EQ(model_req__generated(a), 7, "6 steps, and the last sampled");
	/* 6 steps, starting 10 ms apart */
	ASSERT_EQ((long long)(model_req__tokens_per_s(a) + 0.5), 100, "a token per 10 ms");
	ASSERT_EQ(b->seq, 1, "the second: sequence 1");
	ASSERT_EQ(b->t.prompt_tokens, 20, "its prompt");
	ASSERT_EQ(model_req__generated(b), 5, "4 steps, and the last sampled");
	ASSERT_EQ(model_req__untied_tokens(p), 2 + 4, "warm-up and the last prompt: no request");
	ASSERT_EQ(p->decodes, 10, "every decode counted once");
out:
	model__free(m);
}

static void sync_event(struct model *m, double t)
{
	struct gmt_decode e;

	event__init(&e.hdr, GMT_EV_DECODE, sizeof(e), T(t), 100);
	e.kind = GMT_DEC_SYNC;
	model__add(m, &e.hdr);
}

static void stream_headers(struct model *m, double t, __u64 conn)
{
	struct gmt_http h;

	event__init(&h.hdr, GMT_EV_HTTP, sizeof(h), T(t), 100);
	h.conn = conn;
	h.kind = GMT_HTTP_RESP_BEGIN;
	h.status = 200;
	h.sse = 1;
	model__add(m, &h.hdr);
}

/* the server starts the later request's task first and both runs finish in
 * the same batch; the plain answer goes out first: the stream's headers,
 * sent as its task starts, say which run is the stream's. After each batch
 * the slots are sampled in order, each after a synchronize, and one more
 * follows: a slot's token is done at the synchronize after its own. */
void test_model_streams_headers_tie(void)
{
	struct model *m = model_of_run(3);
	struct model_proc *p = model__proc(m, 100);
	int i;

	post(m, 2.000, 1, "/v1/completions");
	post(m, 2.001, 2, "/v1/chat/completions");
	/* seq 1 (the stream's) first: its headers, its cached prompt's last
	 * token, 3 steps, each sampled 0.5 ms after a synchronize */
	stream_headers(m, 2.0085, 2);
	seq_decode(m, 2.010, 0.001, 1, (const int[][4]){ { 1, 1, 1, 70 } });
	sync_event(m, 2.0101);
	sync_event(m, 2.0106);
	for (i = 0; i < 3; i++) {
		seq_decode(m, 2.012 + i * 0.002, 0.001, 1, (const int[][4]){ { 1, 1, 1, 71 + i } });
		sync_event(m, 2.0121 + i * 0.002);
		sync_event(m, 2.0126 + i * 0.002);
	}
	/* then seq 0's prompt beside a step, and 5 steps of both; seq 0 is
	 * sampled first, seq 1 0.5 ms later; after the first of these batches
	 * other work holds the thread 3.5 ms before the last synchronize */
	for (i = 0; i < 6; i++) {
		seq_decode(m, 2.018 + i * 0.006, 0.001, 2,
			   (const int[][4]){ { 0, 1, 1, 70 + i }, { 1, 1, 1, 74 + i } });
		sync_event(m, 2.0181 + i * 0.006);
		sync_event(m, 2.0186 + i * 0.006);
		sync_event(m, (i ? 2.0191 : 2.0226) + i * 0.006);
	}
	http_event(m, 2.0505, 1, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
	http_event(m, 2.0506, 1, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	http_event(m, 2.051, 2, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_CHUNKED);
	seq_decode(m, 2.1, 0.001, 1, (const int[][4]){ { 0, 4, 1, 0 } });
	if (!ASSERT_TRUE(p && p->nr_reqs == 2, "two requests"))
		goto out;
	ASSERT_EQ(p->reqs[0].seq, 0, "the plain answer: sequence 0, though it ended first");
	ASSERT_EQ(model_req__generated(&p->reqs[0]), 6, "5 steps, and the last sampled");
	ASSERT_EQ(p->reqs[1].seq, 1, "the stream: sequence 1");
	ASSERT_EQ(model_req__generated(&p->reqs[1]), 10, "9 steps, and the last sampled");
	/* seq 0: sampled at 2.0186 first, 2.0486 last: 5 steps in 30 ms; seq 1:
	 * 2.0106 first, 2.0491 last: 9 steps in 38.5 ms */
	ASSERT_EQ((long long)(model_req__tokens_per_s(&p->reqs[0]) * 10 + 0.5), 1667,
		  "sequence 0's rate, from its own samplings");
	ASSERT_EQ((long long)(model_req__tokens_per_s(&p->reqs[1]) * 10 + 0.5), 2338,
		  "sequence 1's rate, from its own samplings");
out:
	model__free(m);
}

/* 200,000 completions on one process, each on its own run: past
 * MODEL_REQS_MAX the ended ones are kept one in a stride, evenly, the rest
 * counted, and every kept one keeps its own run's tokens */
void test_requests_bounded(void)
{
	struct model *m = model_of_run(3);
	struct model_proc *p = model__proc(m, 100);
	size_t i, n = 200000, bad = 0, uneven = 0;

	post(m, 2.5, 99, "/completion"); /* never answered, never closed */
	for (i = 0; i < n; i++) {
		double t = 3 + i * 1e-3;
		int seq = i % 2, len = i % 50 + 2;

		post(m, t, 1, "/completion");
		seq_decode(m, t + 2e-4, 1e-4, 1, (const int[][4]){ { seq, len, 1, 0 } });
		seq_decode(m, t + 3e-4, 1e-4, 1, (const int[][4]){ { seq, 1, 1, len } });
		http_event(m, t + 5e-4, 1, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 6e-4, 1, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	seq_decode(m, 3 + n * 1e-3, 1e-4, 1, (const int[][4]){ { 0, 3, 1, 0 } });
	if (!ASSERT_TRUE(p && p->nr_reqs <= MODEL_REQS_MAX, "at most MODEL_REQS_MAX kept"))
		goto out;
	ASSERT_TRUE(p->reqs_summarized > 0 && p->nr_reqs + p->reqs_summarized == n + 1,
		    "every request kept or counted");
	ASSERT_TRUE(p->nr_open == 1 && p->reqs[p->open[0]].conn == 99 && !p->reqs[0].done &&
			    p->reqs[0].nth == 1,
		    "the one never answered is kept, first, and the only one open");
	ASSERT_TRUE(p->reqs_stride >= 4, "the stride doubled each time");
	for (i = 1; i < p->nr_reqs; i++) {
		const struct model_request *r = &p->reqs[i];

		if (r->t.prompt_tokens != (r->nth - 2) % 50 + 2 || model_req__generated(r) != 2)
			bad++;
		if (i + 1 < p->nr_reqs && p->reqs[i + 1].nth <= n - MODEL_REQS_MAX &&
		    p->reqs[i + 1].nth - r->nth != p->reqs_stride)
			uneven++;
	}
	ASSERT_EQ(bad, 0, "each kept request has its own run's tokens");
	ASSERT_EQ(uneven, 0, "the older kept ones one stride apart");
	ASSERT_EQ(p->nr_runs, p->nr_reqs,
		  "a run for each kept request but the open one, and the last");
out:
	model__free(m);
}

static void munmap_at(struct model *m, double t, __u64 addr, __u64 len)
{
	struct gmt_munmap e;

	event__init(&e.hdr, GMT_EV_MUNMAP, sizeof(e), T(t), 100);
	e.addr = addr;
	e.len = len;
	e.ret = 0;
	model__add(m, &e.hdr);
}

/* a run of days: 300,000 mmap/munmap pairs keep at most MODEL_MAPS_MAX
 * mappings, the rest as a count; mappings still live are all kept, and
 * their ranges still find them after the others moved */
void test_mappings_bounded(void)
{
	struct model *m = model_of_run(2);
	const struct model_proc *p = model__proc(m, 100);
	__u64 made0, live0 = 0, live = 0;
	size_t i;
	bool first_gone = false;

	if (!ASSERT_TRUE(p != NULL, "the target"))
		goto out;
	made0 = p->maps_made;
	for (i = 0; i < p->nr_maps; i++)
		live0 += p->maps[i].live;
	for (i = 0; i < 5; i++) /* live all along, made first */
		mmap_at(m, 4, 0x10000000 + i * 0x100000, 1 << 20, 3, 0);
	for (i = 0; i < 300000; i++) {
		mmap_at(m, 4 + i * 1e-5, 0x40000000, 4096, 3, 0);
		munmap_at(m, 4 + i * 1e-5, 0x40000000, 4096);
	}
	munmap_at(m, 8, 0x10000000, 1 << 20); /* one of the first, found by its range */
	ASSERT_TRUE(p->nr_maps <= MODEL_MAPS_MAX, "at most MODEL_MAPS_MAX kept");
	ASSERT_TRUE(p->maps_made == made0 + 300005, "every mapping counted");
	ASSERT_TRUE(p->maps_summarized > 0 && p->maps_summarized + p->nr_maps == p->maps_made,
		    "the rest summarized");
	ASSERT_TRUE(p->maps_summarized_bytes == p->maps_summarized * 4096, "with their bytes");
	for (i = 0; i < p->nr_maps; i++) {
		live += p->maps[i].live;
		first_gone |=
			p->maps[i].addr == 0x10000000 && !p->maps[i].live && p->maps[i].gone_ts;
	}
	ASSERT_TRUE(live == live0 + (4 << 20), "the four still mapped hold 4 MiB more");
	ASSERT_TRUE(first_gone, "the first, unmapped after the others moved, is gone and kept");
out:
	model__free(m);
}

/* a series over a long run: at most SERIES_MAX points, the peak kept, a
 * level read anywhere close to the truth, later points at the kept density */
void test_series_bounded(void)
{
	struct series s = { 0 };
	__s64 v;
	size_t i, n = 10 * SERIES_MAX, bad = 0;

	for (i = 0; i < n; i++) /* a ramp, one point a millisecond, one spike */
		series__add(&s, 1000000ull * (i + 1), i == n / 3 ? 1ll << 40 : (__s64)i, 0);
	series__add(&s, 1000000ull * (n + 1), 1ll << 62, 0); /* a crafted value */
	ASSERT_TRUE(s.n <= SERIES_MAX && s.n > SERIES_MAX / 4, "at most SERIES_MAX points kept");
	ASSERT_TRUE(s.gap_ns >= 1000000ull * n / SERIES_MAX / 2,
		    "later points at the kept density");
	ASSERT_TRUE(series__peak(&s) == 1ll << 56, "the peak of every value, held below 2^56");
	for (i = 1; i <= n; i += 997)
		if (!series__at(&s, 1000000ull * i, &v) || v > (__s64)i ||
		    (i != n / 3 + 1 && v < (__s64)i - 40 * (__s64)(n / SERIES_MAX)))
			bad++;
	ASSERT_TRUE(!bad, "a level read anywhere is a recent value, never a later one");
	ASSERT_TRUE(series__at(&s, 1000000ull * (n + 1), &v) && v == 1ll << 56,
		    "the last point kept");
	free(s.p);
}

/* DRM fdinfo, as 6.1's amdgpu and the generic helpers of 6.5 on print it */
void test_drm_fdinfo(void)
{
	static const char amdgpu_61[] = "pos:\t0\nflags:\t02100002\nmnt_id:\t24\n"
					"drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\n"
					"drm-client-id:\t42\npasid:\t32770\n"
					"drm-memory-vram:\t1024 KiB\ndrm-memory-gtt: \t2048 KiB\n"
					"drm-memory-cpu: \t0 KiB\namd-memory-visible-vram:\t0 KiB\n"
					"amd-evicted-vram:\t512 KiB\ndrm-engine-gfx:\t0 ns\n";
	static const char generic[] = "pos:\t0\ndrm-driver:\tpanfrost\ndrm-client-id:\t7\n"
				      "drm-total-memory:\t8 MiB\ndrm-shared-memory:\t0\n"
				      "drm-resident-memory:\t6291456\n";
	struct model *m = model_of_run(2);
	struct gmt_drm_fdinfo d;
	struct model_proc *p;

	ASSERT_TRUE(!procfs__parse_drm_fdinfo("pos:\t0\nflags:\t02\n", &d), "not DRM");
	event__init(&d.hdr, GMT_EV_DRM_FDINFO, sizeof(d), T(2), 100);
	if (!ASSERT_TRUE(procfs__parse_drm_fdinfo(amdgpu_61, &d), "amdgpu 6.1"))
		goto out;
	ASSERT_STR(d.driver, "amdgpu", "driver");
	ASSERT_EQ(d.client_id, 42, "client id");
	ASSERT_EQ(d.bytes[GMT_DRM_VRAM_RESIDENT], 1 << 20, "vram");
	ASSERT_EQ(d.bytes[GMT_DRM_GTT_RESIDENT], 2 << 20, "gtt");
	ASSERT_EQ(d.bytes[GMT_DRM_EVICTED_VRAM], 512 << 10, "evicted");
	ASSERT_TRUE(!(d.valid & (1u << GMT_DRM_VRAM_TOTAL)), "no total on 6.1");
	model__add(m, &d.hdr);
	/* a second client of the same process adds up; a resample replaces */
	d.client_id = 43;
	d.bytes[GMT_DRM_VRAM_RESIDENT] = 3 << 20;
	d.hdr.ts_ns = T(3);
	model__add(m, &d.hdr);
	d.bytes[GMT_DRM_VRAM_RESIDENT] = 1 << 20;
	d.hdr.ts_ns = T(4);
	model__add(m, &d.hdr);
	p = model__proc(m, 100);
	if (ASSERT_TRUE(p && p->drm, "drm state")) {
		ASSERT_EQ(p->drm->nr_clients, 2, "clients");
		ASSERT_EQ(p->drm->bytes[GMT_DRM_VRAM_RESIDENT], 2 << 20, "vram now");
		ASSERT_EQ(p->drm->peak[GMT_DRM_VRAM_RESIDENT], 4 << 20, "vram peak");
		ASSERT_EQ(p->drm->samples, 3, "samples");
	}
	if (ASSERT_TRUE(procfs__parse_drm_fdinfo(generic, &d), "generic")) {
		ASSERT_STR(d.driver, "panfrost", "driver");
		ASSERT_EQ(d.bytes[GMT_DRM_CPU_TOTAL], 8 << 20, "total");
		ASSERT_EQ(d.bytes[GMT_DRM_CPU_RESIDENT], 6291456, "resident, in bytes");
	}
out:
	model__free(m);
}

/* the CGROUP record: the container its path names, the pid inside and the
 * pod's names the host told, cleaned; a record of before (the path alone)
 * is valid and gives the container but no pid inside */
void test_model_container(void)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct model *m = model__new();
	struct gmt_cgroup g;
	struct model_proc *p;
	__u16 old_len = offsetof(struct gmt_cgroup, ns_pid);

	send_session(model__add, m, 9);
	event__init(&g.hdr, GMT_EV_CGROUP, sizeof(g), T(0.1), 9);
	snprintf(g.path, sizeof(g.path), "/kubepods/burstable/pod%s/%s",
		 "1a2b3c4d-0000-4abc-8def-0123456789ab", id);
	g.ns_pid = 7;
	g.pod_from = GMT_POD_FROM_ENV;
	strcpy(g.pod, "llama\x1b[2J");
	strcpy(g.pod_ns, "team-a");
	model__add(m, &g.hdr);
	p = model__proc(m, 9);
	if (!ASSERT_TRUE(p != NULL, "process"))
		return;
	ASSERT_STR(p->container.id, id, "the id");
	ASSERT_STR(p->container.runtime, "containerd", "the runtime");
	ASSERT_STR(p->container.pod_uid, "1a2b3c4d-0000-4abc-8def-0123456789ab", "the pod uid");
	ASSERT_EQ(p->ns_pid, 7, "the pid inside");
	ASSERT_EQ(p->container.pod_from, MODEL_POD_FROM_ENV, "from its environment");
	ASSERT_STR(p->container.pod, "llama\xef\xbf\xbd[2J", "cleaned at the model's door");
	ASSERT_STR(p->container.pod_ns, "team-a", "the namespace");

	g.hdr.len = old_len;
	ASSERT_TRUE(event__valid(&g.hdr, old_len), "a record of before is valid");
	g.hdr.len = old_len - 8;
	ASSERT_TRUE(!event__valid(&g.hdr, old_len - 8), "shorter is not");
	g.hdr.len = old_len;
	snprintf(g.path, sizeof(g.path), "/libpod_parent/libpod-%s", id);
	model__add(m, &g.hdr);
	ASSERT_STR(p->container.runtime, "podman", "the path read again");
	ASSERT_EQ(p->ns_pid, 0, "no pid inside in a record of before");
	ASSERT_STR(p->container.pod_uid, "", "no pod");
	ASSERT_STR(p->container.pod, "", "no pod name");
	model__free(m);
}

/* MODULE records: the first of a name is kept; a build id that is not
 * lowercase hex (a hostile recording's) is dropped, the module kept */
void test_model_modules(void)
{
	struct model *m = model__new();
	const struct model_module *x;
	struct gmt_module r;

	send_session(model__add, m, 9);
	event__init(&r.hdr, GMT_EV_MODULE, sizeof(r), T(0.1), 9);
	strcpy(r.name, "libfoo.so");
	strcpy(r.build_id, "00ff");
	r.text_off = 0x1000;
	r.text_vaddr = 0x401000;
	r.text_size = 0x2000;
	model__add(m, &r.hdr);
	strcpy(r.build_id, "1234");
	model__add(m, &r.hdr);
	strcpy(r.name, "evil.so");
	strcpy(r.build_id, "</script>");
	model__add(m, &r.hdr);
	x = model__module(m, "libfoo.so");
	ASSERT_TRUE(x && !strcmp(x->build_id, "00ff") && x->text_vaddr == 0x401000,
		    "the first record of a name");
	x = model__module(m, "evil.so");
	ASSERT_TRUE(x && !x->build_id[0], "a build id that is not hex dropped");
	ASSERT_TRUE(!model__module(m, "other.so"), "one never recorded");
	model__free(m);
}
