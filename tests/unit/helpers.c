// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The runs and events the subtests of more than one topic build: a small
 * synthetic run, events fed to a model, a model's reports as text. */
#include "unit.h"
#include "analysis/findings.h"
#include "report/report.h"

__u64 T(double secs)
{
	return 1000000000ull + (__u64)(secs * 1e9);
}

void send_session(gmt_sink_fn sink, void *ctx, __u32 pid)
{
	union {
		struct gmt_session s;
		char buf[512];
	} u;
	const char *cmd = "./server --port 8080";

	event__init(&u.s.hdr, GMT_EV_SESSION, 256, T(0), pid);
	u.s.start_realtime_ns = 1764670000ull * 1000000000ull;
	u.s.interval_ms = 1000;
	u.s.target_pid = pid;
	u.s.page_size = 4096;
	strcpy(u.s.tool_version, "0.1.0");
	strcpy(u.s.kernel, "6.1.0-test");
	strcpy(u.s.host, "testhost");
	strcpy(u.s.arch, "x86_64");
	u.s.cmdline_len = strlen(cmd);
	memcpy(u.s.cmdline, cmd, strlen(cmd));
	sink(ctx, &u.s.hdr);
}

void send_rss(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u32 member, __s64 v)
{
	struct gmt_rss e;

	event__init(&e.hdr, GMT_EV_RSS, sizeof(e), T(t), pid);
	e.member = member;
	e.bytes = v;
	sink(ctx, &e.hdr);
}

void send_mmap(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u64 addr, __u64 len, __u32 stack)
{
	struct gmt_mmap e;

	event__init(&e.hdr, GMT_EV_MMAP, sizeof(e), T(t), pid);
	e.addr = addr;
	e.len = len;
	e.prot = 3;
	e.flags = 0x22;
	e.fd = -1;
	e.fd_class = GMT_FD_ANON;
	e.stack_id = stack;
	sink(ctx, &e.hdr);
}

void send_munmap(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u64 addr, __u64 len)
{
	struct gmt_munmap e;

	event__init(&e.hdr, GMT_EV_MUNMAP, sizeof(e), T(t), pid);
	e.addr = addr;
	e.len = len;
	sink(ctx, &e.hdr);
}

void send_stack(gmt_sink_fn sink, void *ctx, __u32 pid, __u32 id)
{
	union {
		struct gmt_stack s;
		__u64 buf[64];
	} u;
	char *names;
	size_t off;

	memset(&u, 0, sizeof(u));
	u.s.stack_id = id;
	u.s.nr_frames = 2;
	u.s.frames[0] = (struct gmt_stack_frame){ 0x401000, 0x10 };
	u.s.frames[1] = (struct gmt_stack_frame){ 0x402000, 0x20 };
	names = (char *)&u.s.frames[2];
	off = sprintf(names, "grow_cache") + 1;
	off += sprintf(names + off, "server") + 1;
	off += sprintf(names + off, "main") + 1;
	off += sprintf(names + off, "server") + 1;
	off += offsetof(struct gmt_stack, frames) + 2 * sizeof(u.s.frames[0]);
	u.s.hdr = (struct gmt_hdr){ T(0.5), pid, pid, GMT_EV_STACK, (off + 7) & ~7ul, ~0u };
	sink(ctx, &u.s.hdr);
}

/* a small but complete run: growth of 8 x 16 MiB, faults, a lost count */
void synthetic_run(gmt_sink_fn sink, void *ctx, int steps)
{
	struct gmt_faults f;
	struct gmt_lost l;
	struct gmt_end end;
	int i;

	send_session(sink, ctx, 100);
	send_stack(sink, ctx, 100, 1);
	for (i = 0; i < steps; i++) {
		send_mmap(sink, ctx, 100, 1 + i, 0x7f0000000000ull + i * (32ull << 20), 16 << 20,
			  1);
		send_rss(sink, ctx, 100, 1 + i + 0.5, GMT_RSS_ANON, (i + 1) * (16ll << 20));
		event__init(&f.hdr, GMT_EV_FAULTS, sizeof(f), T(1 + i + 0.6), 100);
		f.count[GMT_FAULT_ANON] = (i + 1) * 4096ull;
		sink(ctx, &f.hdr);
	}
	event__init(&l.hdr, GMT_EV_LOST, sizeof(l), T(steps + 1), 100);
	l.count[GMT_SRC_MMAP] = 7;
	sink(ctx, &l.hdr);
	event__init(&end.hdr, GMT_EV_END, sizeof(end), T(steps + 2), 100);
	end.reason = GMT_END_SIGNAL;
	sink(ctx, &end.hdr);
}

struct model *model_of_run(int steps)
{
	struct model *m = model__new();

	synthetic_run(model__add, m, steps);
	return m;
}

/* the report as main makes it: one analysis pass, handed to the writer */
void write_report(FILE *f, const struct model *m, bool json)
{
	struct findings *fs = findings__build(m);

	if (json)
		report__json(f, m, fs, NULL);
	else
		report__text(f, m, fs, NULL);
	findings__free(fs);
}

char *report_text(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	write_report(f, m, false);
	fclose(f);
	return buf;
}

void gpu_call(struct model *m, double t, unsigned int api, unsigned int op, unsigned int kind,
	      __u64 handle, __u64 size, int result, __u32 mem_type)
{
	struct gmt_gpu_call e;

	event__init(&e.hdr, GMT_EV_GPU_CALL, sizeof(e), T(t), 100);
	e.api = api;
	e.op = op;
	e.kind = kind;
	e.handle = handle;
	e.size = size;
	e.result = result;
	e.mem_type = mem_type;
	e.stack_id = handle % 3 + 1;
	model__add(m, &e.hdr);
}

void http_event(struct model *m, double t, __u64 conn, __u16 kind, const char *path, __u16 status,
		__u16 end)
{
	struct gmt_http e;

	event__init(&e.hdr, GMT_EV_HTTP, sizeof(e), T(t), 100);
	e.conn = conn;
	e.kind = kind;
	e.status = status;
	e.end = end;
	if (path) {
		snprintf(e.method, sizeof(e.method), "GET");
		snprintf(e.path, sizeof(e.path), "%s", path);
	}
	model__add(m, &e.hdr);
}

/* twelve requests that each keep 1 MiB of CUDA memory (and, with nvml, the
 * driver counts 3 MiB more), then a failure */
struct model *leaky_model(bool nvml)
{
	struct model *m = model_of_run(2);
	struct gmt_nvml n;
	int i;

	for (i = 0; i < 12; i++) {
		double t = 3 + i;

		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		gpu_call(m, t + 0.1, GMT_API_CU, GMT_GOP_ALLOC, GMT_GK_DEVICE, 0x1000 + i, 1 << 20,
			 0, ~0u);
		event__init(&n.hdr, GMT_EV_NVML, sizeof(n), T(t + 0.2), 100);
		n.index = 0;
		n.used = (__u64)(i + 1) * (3 << 20) + 100 * (i % 2);
		n.total = 80ull << 30;
		n.free = n.total - n.used;
		if (nvml)
			model__add(m, &n.hdr);
		http_event(m, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	gpu_call(m, 20, GMT_API_CU, GMT_GOP_ALLOC, GMT_GK_DEVICE, 0, 1ull << 40, 2, ~0u);
	return m;
}

void rss_at(struct model *m, double t, __u64 bytes)
{
	struct gmt_rss e;

	event__init(&e.hdr, GMT_EV_RSS, sizeof(e), T(t), 100);
	e.member = GMT_RSS_ANON;
	e.bytes = bytes;
	model__add(m, &e.hdr);
}

void mmap_at(struct model *m, double t, __u64 addr, __u64 len, __u32 prot, __u32 stack)
{
	struct gmt_mmap e;

	memset(&e, 0, sizeof(e));
	event__init(&e.hdr, GMT_EV_MMAP, sizeof(e), T(t), 100);
	e.addr = addr;
	e.len = len;
	e.prot = prot;
	e.flags = 0x22;
	e.fd = -1;
	e.fd_class = GMT_FD_ANON;
	e.stack_id = stack;
	model__add(m, &e.hdr);
}

bool screen_has(const struct top_line *l, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(l[i].text, what))
			return true;
	return false;
}

/* a one-frame stack named `sym` */
void named_stack(struct model *m, __u32 id, const char *sym)
{
	union {
		struct gmt_stack s;
		__u64 buf[32];
	} u;
	size_t off;

	memset(&u, 0, sizeof(u));
	u.s.stack_id = id;
	u.s.nr_frames = 1;
	u.s.frames[0] = (struct gmt_stack_frame){ 0x401000 + id * 0x100, 0x10 };
	off = sprintf((char *)&u.s.frames[1], "%s", sym) + 1;
	off += sprintf((char *)&u.s.frames[1] + off, "llama-server") + 1;
	off += offsetof(struct gmt_stack, frames) + sizeof(u.s.frames[0]);
	u.s.hdr = (struct gmt_hdr){ T(0.5), 100, 100, GMT_EV_STACK, (off + 7) & ~7ul, ~0u };
	model__add(m, &u.s.hdr);
}

void touch_at(struct model *m, double t, __u32 stack)
{
	struct gmt_touch e;

	event__init(&e.hdr, GMT_EV_TOUCH, sizeof(e), T(t), 100);
	e.addr = 0x7f0000000000ull;
	e.bytes = 1 << 20;
	e.stack_id = stack;
	model__add(m, &e.hdr);
}
