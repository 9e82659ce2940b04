// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the file format, the model and the report, in the manner of
 * the kernel's BPF selftests: subtests by name, ASSERT_* print what failed.
 * Prints "ok NAME", "not ok NAME - why" per subtest. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "stream/event.h"
#include "common/fmt.h"
#include "common/search.h"
#include "source/gpuprobes.h"
#include "stream/gpufuncs.h"
#include "analysis/analyze.h"
#include "series.h"
#include "analysis/findings.h"
#include "analysis/llama_conf.h"
#include "analysis/requests.h"
#include "view/top_layout.h"
#include "model/model.h"
#include "source/procfs.h"
#include "report/report.h"
#include "analysis/words.h"
#include "stream/tracedir.h"
#include "stream/tracefile.h"
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "timings_parse.bpf.h"

static int failed;
static char tmpdir[] = "/tmp/gmt-unit-XXXXXX";

#define ASSERT_TRUE(cond, tag)                                                                \
	({                                                                                    \
		bool ok_ = (cond);                                                            \
		if (!ok_) {                                                                   \
			printf("# %s:%d: %s: expected %s\n", __func__, __LINE__, tag, #cond); \
			failed = 1;                                                           \
		}                                                                             \
		ok_;                                                                          \
	})
#define ASSERT_EQ(a, b, tag)                                                                       \
	({                                                                                         \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_) {                                                                    \
			printf("# %s:%d: %s: %s = %lld, expected %lld\n", __func__, __LINE__, tag, \
			       #a, a_, b_);                                                        \
			failed = 1;                                                                \
		}                                                                                  \
		a_ == b_;                                                                          \
	})
#define ASSERT_STR(a, b, tag)                                                                     \
	({                                                                                        \
		bool ok_ = !strcmp((a), (b));                                                     \
		if (!ok_) {                                                                       \
			printf("# %s:%d: %s: \"%s\", expected \"%s\"\n", __func__, __LINE__, tag, \
			       (a), (b));                                                         \
			failed = 1;                                                               \
		}                                                                                 \
		ok_;                                                                              \
	})

/* a captured stream: what a sink received */
struct capture {
	unsigned char *buf;
	size_t len, cap;
	size_t events;
};

static void capture_sink(void *ctx, const struct gmt_hdr *e)
{
	struct capture *c = ctx;

	if (c->len + e->len > c->cap) {
		c->cap = (c->cap + e->len) * 2;
		c->buf = realloc(c->buf, c->cap);
	}
	memcpy(c->buf + c->len, e, e->len);
	c->len += e->len;
	c->events++;
}

static __u64 T(double secs)
{
	return 1000000000ull + (__u64)(secs * 1e9);
}

static void send_session(gmt_sink_fn sink, void *ctx, __u32 pid)
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

static void send_rss(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u32 member, __s64 v)
{
	struct gmt_rss e;

	event__init(&e.hdr, GMT_EV_RSS, sizeof(e), T(t), pid);
	e.member = member;
	e.bytes = v;
	sink(ctx, &e.hdr);
}

static void send_mmap(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u64 addr, __u64 len,
		      __u32 stack)
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

static void send_munmap(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u64 addr, __u64 len)
{
	struct gmt_munmap e;

	event__init(&e.hdr, GMT_EV_MUNMAP, sizeof(e), T(t), pid);
	e.addr = addr;
	e.len = len;
	sink(ctx, &e.hdr);
}

static void send_stack(gmt_sink_fn sink, void *ctx, __u32 pid, __u32 id)
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
static void synthetic_run(gmt_sink_fn sink, void *ctx, int steps)
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

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		perror(path);
	close(fd);
}

static unsigned char *read_file(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	buf = malloc(st.st_size + 1);
	*len = read(fd, buf, st.st_size);
	close(fd);
	return buf;
}

static void record(const char *path, int steps, int blocks)
{
	struct tracefile_info info = { .tool = "gpumemtrace test", .cmdline = "./server" };
	char err[256];
	struct tracefile_writer *w = tracefile__create(path, &info, err, sizeof(err));
	struct capture c = {};
	size_t off = 0;
	int b = 0;

	synthetic_run(capture_sink, &c, steps);
	/* spread the events over `blocks` blocks with forced flushes */
	while (off < c.len) {
		const struct gmt_hdr *e = (const void *)(c.buf + off);

		tracefile__write(w, e);
		off += e->len;
		if (b < blocks - 1 && off >= c.len * (b + 1) / blocks) {
			tracefile__tick(w, (b + 2) * 2000000000ull);
			b++;
		}
	}
	tracefile__close(w);
	free(c.buf);
}

static void test_tracefile_roundtrip(void)
{
	struct capture direct = {}, replayed = {};
	struct replay_result r;
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/rt.gmt", tmpdir);
	record(path, 8, 3);
	synthetic_run(capture_sink, &direct, 8);
	ASSERT_EQ(tracefile__replay(path, capture_sink, &replayed, &r), 0, "replay");
	ASSERT_EQ(r.blocks, 3, "blocks");
	ASSERT_EQ(r.nr_notes, 0, "no damage");
	ASSERT_EQ(replayed.len, direct.len, "bytes");
	ASSERT_TRUE(replayed.len == direct.len && !memcmp(replayed.buf, direct.buf, direct.len),
		    "same events");
	ASSERT_STR(r.info.cmdline, "./server", "header cmdline");
	ASSERT_TRUE(!stat(path, &st) && (st.st_mode & 0777) == 0600, "mode 0600");
	free(direct.buf);
	free(replayed.buf);
}

/* the types and pids of a file's records, in order */
struct typed {
	__u16 type[4096];
	__u32 pid[4096];
	size_t n;
};

static void typed_sink(void *ctx, const struct gmt_hdr *e)
{
	struct typed *t = ctx;

	if (t->n < 4096) {
		t->type[t->n] = e->type;
		t->pid[t->n++] = e->pid;
	}
}

/* --watch -o DIR: a file per process, started again past its size, none
 * removed within the budget; each begins with the session and
 * what the process said of itself, so it replays alone */
static void test_tracedir_rotates(void)
{
	struct tracefile_info info = { .tool = "unit" };
	struct tracedir_opts o = { .max_bytes = 8192,
				   .max_age_ns = 3600000000000ull,
				   .retain = { .max_bytes = 1 << 30 },
				   .info = &info };
	struct {
		struct gmt_proc p;
		char cmd[8];
	} proc = {};
	/* two frames, each with an empty symbol and module name */
	struct {
		struct gmt_stack s;
		struct gmt_stack_frame f[2];
		char names[8];
	} st = {};
	struct {
		struct gmt_session s;
		char cmd[8];
	} ses = {};
	struct gmt_exit ex = {};
	struct gmt_mmap mm = {};
	char dir[128], err[256], path[400];
	unsigned int x = 1, llama = 0, worker = 0, idle = 0, bad = 0, other = 0, ended = 0;
	bool foreign, foreign_kept = false;
	struct tracedir *d;
	struct dirent *de;
	struct stat sb;
	__u64 ts = 1000000000ull;
	DIR *dd;
	int i;

	snprintf(dir, sizeof(dir), "%s/svc/", tmpdir);
	o.dir = dir;
	ASSERT_TRUE(tracedir__is_dir(tmpdir) && tracedir__is_dir(dir) &&
			    !tracedir__is_dir("/etc/hostname"),
		    "a directory: one there, or a path ending in /");
	d = tracedir__open(&o, err, sizeof(err));
	if (!ASSERT_TRUE(d != NULL, err))
		return;
	/* a file of another user under our name, dated ahead: retention
	 * neither counts nor removes it (as root, which can give it away) */
	snprintf(path, sizeof(path), "%sllama-server.20991231T000000.7.gmt", dir);
	i = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
	foreign = i >= 0 && !fchown(i, 65534, 65534) &&
		  !futimens(i, (struct timespec[]){ { 4102444800, 0 }, { 4102444800, 0 } });
	if (i >= 0)
		close(i);
	if (!foreign)
		unlink(path);
	event__init(&ses.s.hdr, GMT_EV_SESSION, sizeof(ses), ts, 0);
	ses.s.flags = GMT_SESSION_WATCH;
	tracedir__write(d, &ses.s.hdr);
	event__init(&proc.p.hdr, GMT_EV_PROC, sizeof(proc), ts, 100);
	snprintf(proc.p.comm, sizeof(proc.p.comm), "llama-server");
	snprintf(proc.p.exe, sizeof(proc.p.exe), "/usr/bin/x");
	tracedir__write(d, &proc.p.hdr);
	event__init(&proc.p.hdr, GMT_EV_PROC, sizeof(proc), ts, 200);
	snprintf(proc.p.comm, sizeof(proc.p.comm), "work/1 x");
	snprintf(proc.p.exe, sizeof(proc.p.exe), "/usr/bin/x");
	tracedir__write(d, &proc.p.hdr);
	event__init(&st.s.hdr, GMT_EV_STACK, sizeof(st), ts, 100);
	st.s.stack_id = 7;
	st.s.nr_frames = 2;
	tracedir__write(d, &st.s.hdr);
	/* mmaps of addresses that do not compress, a flush each 100 */
	for (i = 0; i < 4000; i++) {
		ts += 10000000;
		event__init(&mm.hdr, GMT_EV_MMAP, sizeof(mm), ts,
			    i == 1001	      ? 200 :
			    i % 2 || i > 1001 ? 100 :
						200);
		x = x * 1103515245 + 12345;
		mm.addr = (__u64)x << 12;
		mm.len = x;
		mm.stack_id = 7;
		tracedir__write(d, &mm.hdr);
		/* the live loop's clock, read before the records it drains,
		 * can be behind their stamps */
		if (i % 100 == 99) {
			/* a quiet process, first seen just before a tick: one
			 * file, as its few bytes and its hour never run out */
			if (i == 99) {
				event__init(&proc.p.hdr, GMT_EV_PROC, sizeof(proc), ts, 300);
				snprintf(proc.p.comm, sizeof(proc.p.comm), "idle");
				snprintf(proc.p.exe, sizeof(proc.p.exe), "/usr/bin/x");
				tracedir__write(d, &proc.p.hdr);
			}
			event__init(&mm.hdr, GMT_EV_MMAP, sizeof(mm), ts, 300);
			tracedir__write(d, &mm.hdr);
			tracedir__tick(d, ts - 5000000);
		}
		if (i == 1000) { /* the worker exits: a late record of it is dropped */
			event__init(&ex.hdr, GMT_EV_EXIT, sizeof(ex), ts, 200);
			ex.group_dead = 1;
			tracedir__write(d, &ex.hdr);
			tracedir__tick(d, ts - 5000000);
		}
	}
	ASSERT_EQ(tracedir__close(d), 0, "no write error");
	dd = opendir(dir);
	if (!ASSERT_TRUE(dd != NULL, "the directory"))
		return;
	while ((de = readdir(dd))) {
		struct typed t = {};
		struct replay_result r;
		bool has_proc = false, has_stack = false;
		size_t k;

		if (de->d_name[0] == '.')
			continue;
		if (!strcmp(de->d_name, "llama-server.20991231T000000.7.gmt")) {
			foreign_kept = true;
			continue;
		}
		snprintf(path, sizeof(path), "%s%s", dir, de->d_name);
		if (!strncmp(de->d_name, "llama-server.", 13))
			llama++;
		else if (!strncmp(de->d_name, "work_1_x.", 9))
			worker++;
		else if (!strncmp(de->d_name, "idle.", 5))
			idle++;
		else if (++other)
			printf("# not a process's name: %s\n", de->d_name);
		if (stat(path, &sb) || (sb.st_mode & 0777) != 0600 ||
		    tracefile__replay(path, typed_sink, &t, &r) || !t.n ||
		    t.type[0] != GMT_EV_SESSION)
			bad++;
		for (k = 0; k < t.n; k++) {
			has_proc |= t.type[k] == GMT_EV_PROC;
			has_stack |= t.type[k] == GMT_EV_STACK;
			if (t.pid[k] && t.pid[k] != t.pid[t.n - 1])
				bad++; /* one process a file */
		}
		if (!has_proc || (t.pid[t.n - 1] == 100 && !has_stack))
			bad++;
		/* the worker's last file ends at its exit */
		ended += t.pid[t.n - 1] == 200 && t.type[t.n - 1] == GMT_EV_EXIT;
	}
	closedir(dd);
	printf("# %u files of llama-server, %u of the worker, %u of the quiet one, %u others\n",
	       llama, worker, idle, other);
	ASSERT_EQ(idle, 1, "a quiet process: no rotation by size or age");
	if (foreign)
		ASSERT_TRUE(foreign_kept, "another user's file under our name is left alone");
	ASSERT_TRUE(llama > 3, "rotated, none removed within the budget");
	ASSERT_TRUE(worker >= 1 && worker <= 3, "the worker's files");
	ASSERT_EQ(ended, 1, "the worker's last file ends at its exit, none after it");
	ASSERT_EQ(other, 0, "names from the comm, made safe");
	ASSERT_EQ(bad, 0,
		  "each file 0600, whole, one process, starting with its session, "
		  "process and stacks");
}

/* cut at every offset: never a crash, whole blocks before the cut replay */
static void test_tracefile_truncated_everywhere(void)
{
	struct capture full = {};
	struct replay_result r;
	char path[64], cut[64];
	unsigned char *buf;
	size_t len, n, last = (size_t)-1, i;
	int bad = 0;
	bool boundary;

	snprintf(path, sizeof(path), "%s/full.gmt", tmpdir);
	snprintf(cut, sizeof(cut), "%s/cut.gmt", tmpdir);
	record(path, 8, 4);
	buf = read_file(path, &len);
	tracefile__replay(path, capture_sink, &full, &r);
	for (n = 0; n <= len; n++) {
		struct capture c = {};
		int ret;

		write_file(cut, buf, n);
		ret = tracefile__replay(cut, capture_sink, &c, &r);
		/* events only grow with the length, and never beyond the full file */
		if (c.events > full.events || (ret == 0 && last != (size_t)-1 && c.events < last))
			bad++;
		/* a cut inside a block must say so; at a block's start it cannot */
		boundary = n + 4 > len || !memcmp(buf + n, "GMTB", 4);
		for (i = 0; !boundary && i + 4 <= n; i++)
			if (!memcmp(buf + i, "GMTB", 4))
				break;
		if (i + 4 > n)
			boundary = true; /* the header itself */
		if (ret == 0 && !boundary && !r.nr_notes)
			bad++;
		if (ret == 0)
			last = c.events;
		free(c.buf);
	}
	ASSERT_EQ(bad, 0, "cuts misreported");
	ASSERT_EQ(last, full.events, "whole file replays all");
	free(buf);
	free(full.buf);
}

/* a flipped byte inside one block loses that block only */
static void test_tracefile_corrupt_block(void)
{
	struct capture full = {}, c;
	struct replay_result r;
	char path[64];
	unsigned char *buf;
	size_t len, i, starts[8], nb = 0;
	int bad = 0;

	snprintf(path, sizeof(path), "%s/corrupt.gmt", tmpdir);
	record(path, 8, 4);
	buf = read_file(path, &len);
	tracefile__replay(path, capture_sink, &full, &r);
	for (i = 0; i + 4 <= len && nb < 8; i++)
		if (!memcmp(buf + i, "GMTB", 4))
			starts[nb++] = i;
	ASSERT_EQ(nb, 4, "blocks found");
	/* every byte of the second block, header included */
	for (i = starts[1]; nb == 4 && i < starts[2]; i++) {
		buf[i] ^= 0x5a;
		write_file(path, buf, len);
		buf[i] ^= 0x5a;
		memset(&c, 0, sizeof(c));
		if (tracefile__replay(path, capture_sink, &c, &r) || !r.nr_notes || r.blocks != 3 ||
		    c.events >= full.events || !c.events)
			bad++;
		free(c.buf);
	}
	ASSERT_EQ(bad, 0, "flips not contained to one block");
	free(buf);
	free(full.buf);
}

static void test_tracefile_bad_files(void)
{
	struct replay_result r;
	struct capture c = {};
	char path[64];
	unsigned char *buf;
	size_t len;

	snprintf(path, sizeof(path), "%s/bad.gmt", tmpdir);
	write_file(path, "hello world, not a trace\n", 25);
	ASSERT_EQ(tracefile__replay(path, capture_sink, &c, &r), -1, "text file");
	ASSERT_TRUE(strstr(r.error, "not a gpumemtrace trace file") != NULL, r.error);
	write_file(path, "", 0);
	ASSERT_EQ(tracefile__replay(path, capture_sink, &c, &r), -1, "empty file");
	ASSERT_EQ(tracefile__replay("/nonexistent/x.gmt", capture_sink, &c, &r), -1, "missing");
	ASSERT_TRUE(strstr(r.error, "cannot open") != NULL, r.error);
	ASSERT_EQ(tracefile__replay("/tmp", capture_sink, &c, &r), -1, "directory");
	record(path, 2, 1);
	buf = read_file(path, &len);
	buf[8] = TRACEFILE_VERSION + 1;
	write_file(path, buf, len);
	ASSERT_EQ(tracefile__replay(path, capture_sink, &c, &r), -1, "newer version");
	ASSERT_TRUE(strstr(r.error, "newer") != NULL, r.error);
	ASSERT_EQ(c.events, 0, "no events from bad files");
	free(buf);
}

static void test_event_valid(void)
{
	struct gmt_rss e;
	union {
		struct gmt_stack s;
		__u64 buf[16];
	} u;

	event__init(&e.hdr, GMT_EV_RSS, sizeof(e), 1, 1);
	ASSERT_TRUE(event__valid(&e.hdr, sizeof(e)), "good rss");
	ASSERT_TRUE(!event__valid(&e.hdr, sizeof(e) - 8), "longer than the buffer");
	e.hdr.len = 16;
	ASSERT_TRUE(!event__valid(&e.hdr, sizeof(e)), "shorter than a header");
	e.hdr.len = sizeof(e) - 4;
	ASSERT_TRUE(!event__valid(&e.hdr, sizeof(e)), "not a multiple of 8");
	e.hdr.len = 24;
	ASSERT_TRUE(!event__valid(&e.hdr, sizeof(e)), "shorter than its type");
	memset(&u, 'x', sizeof(u));
	event__init(&u.s.hdr, GMT_EV_STACK, 64, 1, 1);
	u.s.nr_frames = 1;
	memset((char *)&u.s.frames[1], 'x', 64 - 48);
	ASSERT_TRUE(!event__valid(&u.s.hdr, 64), "unterminated frame names");
}

static struct model *model_of_run(int steps)
{
	struct model *m = model__new();

	synthetic_run(model__add, m, steps);
	return m;
}

static void test_model_rss_and_faults(void)
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

static void test_model_mappings(void)
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

static void test_model_exec_resets(void)
{
	struct model *m = model__new();
	struct gmt_exec x;
	struct model_proc *p;

	send_session(model__add, m, 9);
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
	model__free(m);
}

/* -p, and the pid taken by another program as soon as the target exits:
 * that program's exec and memory are not the target's (it once reset the
 * target's series, and its report had no anonymous RSS at all) */
static void test_model_pid_taken_after_exit(void)
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

/* the report as main makes it: one analysis pass, handed to the writer */
static void write_report(FILE *f, const struct model *m, bool json)
{
	struct findings *fs = findings__build(m);

	if (json)
		report__json(f, m, fs, NULL);
	else
		report__text(f, m, fs, NULL);
	findings__free(fs);
}

static char *report_text(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	write_report(f, m, false);
	fclose(f);
	return buf;
}

static void test_report_text(void)
{
	struct model *m = model_of_run(8);
	char *t = report_text(m);
	const char *want[] = { "target   pid 100: ./server --port 8080",
			       "kernel 6.1.0-test",
			       "until interrupted",
			       "+112.0 MiB",
			       "Page faults",
			       "8 mmap (0 failed)",
			       "grow_cache+0x10 (server)",
			       "main+0x20 (server)",
			       "Lost events: mmap 7" };
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ASSERT_TRUE(strstr(t, want[i]) != NULL, want[i]);
	free(t);
	model__free(m);
}

static void test_report_json(void)
{
	struct model *m = model_of_run(8);
	struct json_object *root, *p, *o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	write_report(f, m, true);
	fclose(f);
	root = json_tokener_parse(buf);
	if (!ASSERT_TRUE(root != NULL, "json parses"))
		return;
	p = json_object_array_get_idx(json_object_object_get(root, "processes"), 0);
	o = json_object_object_get(json_object_object_get(p, "rss"), "anon");
	ASSERT_EQ(json_object_get_int64(json_object_object_get(o, "change_bytes")), 112ll << 20,
		  "anon change");
	ASSERT_EQ(json_object_get_int64(json_object_object_get(o, "peak_bytes")), 128ll << 20,
		  "anon peak");
	o = json_object_object_get(json_object_object_get(p, "mappings"), "largest");
	ASSERT_EQ(json_object_array_length(o), 8, "largest mappings");
	o = json_object_object_get(json_object_array_get_idx(o, 0), "stack");
	ASSERT_STR(json_object_get_string(
			   json_object_object_get(json_object_array_get_idx(o, 0), "symbol")),
		   "grow_cache", "stack symbol");
	o = json_object_object_get(root, "lost_events");
	ASSERT_EQ(json_object_get_int64(json_object_object_get(o, "total")), 7, "lost total");
	o = json_object_object_get(root, "session");
	ASSERT_STR(json_object_get_string(json_object_object_get(o, "end_reason")), "signal",
		   "end reason");
	json_object_put(root);
	free(buf);
	model__free(m);
}

/* records of random content that pass validation: the model and both
 * reports must take them without crashing (run under ASan by hand too) */
static void test_random_records_survive(void)
{
	union {
		struct gmt_hdr h;
		__u64 buf[512];
	} u;
	struct model *m = model__new();
	char *out = NULL;
	size_t len = 0, i, j, fed = 0;
	FILE *f;

	srand(1);
	for (i = 0; i < 20000; i++) {
		for (j = 0; j < sizeof(u.buf) / sizeof(u.buf[0]); j++)
			u.buf[j] = (__u64)rand() << 32 | rand();
		u.h.type = rand() % (GMT_EV_MAX + 2);
		u.h.len = 8 * (3 + rand() % 60);
		u.h.pid = rand() % 4;
		u.h.ts_ns = 1000000000ull + rand();
		if (u.h.type == GMT_EV_STACK) {
			/* short frame lists, so that the names can be found */
			((struct gmt_stack *)&u.h)->nr_frames = rand() % 3;
			memset((char *)&u.h + 32 + 16 * 3, 0, 64);
		}
		if (!event__valid(&u.h, sizeof(u)))
			continue;
		model__add(m, &u.h);
		fed++;
	}
	f = open_memstream(&out, &len);
	write_report(f, m, false);
	write_report(f, m, true);
	fclose(f);
	ASSERT_TRUE(fed > 1000, "enough valid records");
	ASSERT_TRUE(len > 0, "a report");
	free(out);
	model__free(m);
}

static void gpu_call(struct model *m, double t, unsigned int api, unsigned int op,
		     unsigned int kind, __u64 handle, __u64 size, int result, __u32 mem_type)
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

static void test_model_gpu(void)
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
static void test_model_bo(void)
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

static void http_event(struct model *m, double t, __u64 conn, __u16 kind, const char *path,
		       __u16 status, __u16 end)
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
static void test_model_requests(void)
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
static void test_model_concurrent_slots(void)
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
static void test_model_streams_headers_tie(void)
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
static void test_requests_bounded(void)
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

/* deterministic noise in [-a, a] */
static double wobble(unsigned int *seed, double a)
{
	*seed = *seed * 1103515245u + 12345u;
	return ((*seed >> 16) % 2001 / 1000.0 - 1) * a;
}

/* the shapes, at two scales (bytes and GiB) so no threshold hides in them */
/* the lavapipe demo's host heap as measured: its first level, then the change
 * over each of the first nd requests, flat after them */
static void judge_cache_run(const double *d, size_t nd, double first, size_t n, double material,
			    struct shape_result *r)
{
	double h[64];
	size_t i;

	h[0] = first;
	for (i = 1; i < n && i < 64; i++)
		h[i] = h[i - 1] + (i <= nd ? d[i - 1] : 0);
	analyze__shape(h, n < 64 ? n : 64, material, r);
}

static void test_analyze_shapes(void)
{
	static const double scales[] = { 1, 1 << 30 };
	struct shape_result r;
	double y[30];
	unsigned int seed = 7;
	size_t i, s;

	for (s = 0; s < 2; s++) {
		double k = scales[s];

		/* a leak: +10 a request, noise of +-2 */
		for (i = 0; i < 30; i++)
			y[i] = k * (100 + 10.0 * i + wobble(&seed, 2));
		analyze__shape(y, 30, 0, &r);
		ASSERT_EQ(r.shape, SHAPE_LEAK, "linear growth is a leak");
		ASSERT_TRUE(r.slope > 9.5 * k && r.slope < 10.5 * k, "its slope");
		ASSERT_TRUE(r.slope_lo > 0 && r.slope_lo <= r.slope && r.slope <= r.slope_hi,
			    "the interval holds the slope");
		ASSERT_TRUE(r.step_cv < 0.5, "a constant step");
		ASSERT_EQ((long long)(analyze__points_to(&r, y[29], y[29] + 100 * k) + 0.5), 10,
			  "ten requests to 100 more");
		/* a cache: +10 a request up to 80, then flat */
		for (i = 0; i < 30; i++)
			y[i] = k * (fmin(10.0 * i, 80) + wobble(&seed, 2));
		analyze__shape(y, 30, 0, &r);
		ASSERT_EQ(r.shape, SHAPE_BOUNDED, "growth to a ceiling is a bounded cache");
		ASSERT_TRUE(fabs(r.ceiling - 80 * k) < 3 * k, "its ceiling");
		ASSERT_TRUE(r.change_at >= 7 && r.change_at <= 10, "where it levels off");
		/* noise around a level */
		for (i = 0; i < 30; i++)
			y[i] = k * (500 + wobble(&seed, 20));
		analyze__shape(y, 30, 0, &r);
		ASSERT_EQ(r.shape, SHAPE_STEADY, "noisy but flat is steady");
		/* warm-up: one jump, then flat */
		for (i = 0; i < 30; i++)
			y[i] = k * ((i < 4 ? 50 : 350) + wobble(&seed, 3));
		analyze__shape(y, 30, 0, &r);
		ASSERT_EQ(r.shape, SHAPE_STEP, "a one-off jump is a step");
		ASSERT_EQ(r.change_at, 4, "the step's place");
		ASSERT_TRUE(fabs(r.step_size - 300 * k) < 6 * k, "the step's size");
		/* warm-up that settles over a few requests: not a leak */
		for (i = 0; i < 30; i++)
			y[i] = k * (200 * (1 - exp(-(double)i)) + wobble(&seed, 1));
		analyze__shape(y, 30, 0, &r);
		ASSERT_TRUE(r.shape != SHAPE_LEAK, "warm-up that settles is no leak");
	}
	analyze__shape(y, 3, 0, &r);
	ASSERT_EQ(r.shape, SHAPE_UNKNOWN, "three points say nothing");
	/* a steady llama-server on CUDA (H200, --cache-ram 0): its host heap
	 * before each of 20 requests' ends, as measured; a warm-up, then 256 KiB
	 * every other request, under a hundredth of its 350 MiB */
	{
		static const double d[] = { 107741184, 262144, 0, 262144, 0,	  0,	  0,
					    262144,    0,      0, 262144, 0,	  262144, 0,
					    0,	       262144, 0, 0,	  262144, 0 };
		double h[21] = { 159551488 };

		for (i = 0; i < 20; i++)
			h[i + 1] = h[i] + d[i];
		analyze__shape(h, 21, 0.01 * (350 << 20), &r);
		ASSERT_EQ(r.shape, SHAPE_STEP, "a warm-up, then a creep that does not matter");
	}
	/* llama-server on lavapipe, --cache-ram 8: its host heap less Vulkan's
	 * after each of 48 requests, as measured. Six entries fill the cache,
	 * then it creeps by a third of that over 42 requests (malloc reusing
	 * freed entries imperfectly): growth that levelled off, not steady */
	{
		static const double d[] = { 987136, 1834648, 2040832, 1310720, 1572864, 1572864, 0,
					    0,	    0,	     0,	      0,       0,	0,	 0,
					    0,	    1310720, 0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      0,       262144,	0,	 0,
					    0,	    0,	     0,	      262144,  1310720 };
		judge_cache_run(d, 33, 114651136, 49, 0.01 * 215e6, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED,
			    "a filled cache that creeps levelled off");
	}
	/* another run: the last entry took two requests to land, so the split
	 * falls after a step of 256 KiB and the rise is not sure up to it */
	{
		static const double d[] = { 987136, 1834648, 1778688, 1572864, 1310720, 1572864, 0,
					    262144, 0,	     0,	      0,       0,	0,	 0,
					    0,	    1310720, 0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      0,       0,	0,	 0,
					    0,	    262144,  0,	      0,       1572864 };
		judge_cache_run(d, 33, 114753536, 52, 2151663, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED,
			    "a cache whose last entry landed late levelled off");
	}
	/* a third run, of 38 requests: the creep (3.4 MiB over 32 requests)
	 * drew the split two points late, and the rise's rate taken up to the
	 * split counted two plateau points in it; its plateau then drifted at
	 * over a tenth of that rate, and the heap was called steady */
	{
		static const double d[] = { 724992, 2096792, 1778688, 1572864, 1310720, 1572864, 0,
					    0,	    0,	     0,	      262144,  0,	0,	 0,
					    0,	    1310720, 0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      262144,  1572864 };
		judge_cache_run(d, 33, 114900992, 39, 2151830, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED,
			    "a cache whose creep drew the split late levelled off");
	}
	/* a fourth, of 35 requests: the same creep over fewer requests, at
	 * more than a tenth of the rise's rate, in no sure direction. Not a
	 * plateau yet; but the heap rose surely, so not steady either: growing,
	 * slowing, too early to tell */
	{
		static const double d[] = { 724992, 2096792, 1778688, 1572864, 1310720, 1572864, 0,
					    262144, 0,	     0,	      0,       0,	0,	 0,
					    0,	    1310720, 0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      0,       0,	0,	 0,
					    0,	    262144,  0,	      0,       1572864 };
		judge_cache_run(d, 33, 114794496, 36, 2149080, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED ||
				    (r.shape == SHAPE_GROWING && r.slowing),
			    "a cache that still creeps is no steady heap");
		ASSERT_TRUE(r.shape != SHAPE_GROWING || r.more_points > 0,
			    "and says how many more requests would tell");
	}
	/* a fifth, of 57 requests on a loaded CPU: 9.3 MiB over six requests,
	 * then 3.3 MiB in five steps over 31, then level for 20. Neither a line
	 * nor a rise and a flat top fits it well, and the drift over blocks is
	 * in doubt; but no step went down: it rose, and levelled off */
	{
		static const double d[] = { 1310720, 1835008, 2097152, 1572864, 1310720, 1572864, 0,
					    0,	     0,	      0,       0,	0,	 0,	  0,
					    0,	     1310720, 0,       0,	0,	 0,	  0,
					    0,	     262144,  0,       0,	0,	 0,	  0,
					    0,	     0,	      0,       262144,	1310720, 0,	  0,
					    0,	     0,	      262144 };

		judge_cache_run(d, 38, 114610176, 58, 2151663, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED,
			    "a cache that filled, crept and stopped levelled off");
	}
	/* the real llama-server, --cache-ram 40, its host heap after each of
	 * 28 requests, as measured under a loaded CPU: two requests of the
	 * eight that filled the cache touched nothing new, so the rise has
	 * two steps of exactly nothing, neither up nor down */
	{
		static const double h[] = { 51097600,  58175488,  70234112,  82554880,
					    95137792,  95137792,  107196416, 107196416,
					    119517184, 119517184, 119517184, 119517184,
					    119517184, 119517184, 119517184, 119779328 };
		double y[28];

		for (i = 0; i < 28; i++)
			y[i] = h[i < 16 ? i : 15];
		analyze__shape(y, 28, 2185380, &r);
		ASSERT_EQ(r.shape, SHAPE_BOUNDED, "a cache that filled on six requests of eight");
	}
	/* a long series is binned, and still judged */
	double *big = malloc(1200 * sizeof(*big));

	if (!ASSERT_TRUE(big != NULL, "memory"))
		return;
	for (i = 0; i < 1200; i++)
		big[i] = 5.0 * i + wobble(&seed, 1);
	analyze__shape(big, 1200, 0, &r);
	ASSERT_EQ(r.shape, SHAPE_LEAK, "long leak");
	ASSERT_TRUE(r.slope > 4.9 && r.slope < 5.1, "its slope, per point");
	free(big);
}

/* the controls a verdict must not call a leak or a cache, 300 of each at
 * 30 and 100 requests (bench/shapes measures 1,000 at four lengths), and
 * leaks of 1% a request under each noise, found by 100 requests */
static void test_analyze_controls(void)
{
	static const size_t lens[] = { 30, 100 };
	struct series_rng rng = { 12345 };
	struct shape_result r;
	double y[100];
	int k, i, leak, cache, found;
	size_t l;

	for (k = 0; k < SER_CONTROLS; k++)
		for (l = 0; l < 2; l++) {
			for (leak = cache = i = 0; i < 300; i++) {
				series__make(k, lens[l], 1 << 30, 0, &rng, y);
				analyze__shape(y, lens[l], 0.01 * (1 << 30), &r);
				leak += r.shape == SHAPE_LEAK;
				cache += r.shape == SHAPE_BOUNDED;
			}
			printf("# %s over %zu requests: %d of 300 called a leak, %d a cache\n",
			       series__name(k), lens[l], leak, cache);
			if (!ASSERT_TRUE(leak <= 3, "false leaks") ||
			    !ASSERT_TRUE(k == SER_CACHE || cache <= 3, "false caches") ||
			    !ASSERT_TRUE(k != SER_CACHE || cache >= 150, "caches found"))
				return;
		}
	for (k = SER_LEAK_IID; k <= SER_LEAK_WALK; k++) {
		for (found = i = 0; i < 300; i++) {
			series__make(k, 100, 1 << 30, 0.01, &rng, y);
			analyze__shape(y, 100, 0.01 * (1 << 30), &r);
			found += r.shape == SHAPE_LEAK;
		}
		printf("# %s, 1%% a request, 100 requests: %d of 300 found\n", series__name(k),
		       found);
		if (!ASSERT_TRUE(found >= 294, "leaks found"))
			return;
	}
}

/* twelve requests that each keep 1 MiB of CUDA memory (and, with nvml, the
 * driver counts 3 MiB more), then a failure */
static struct model *leaky_model(bool nvml)
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

static const struct finding *find_finding(const struct findings *fs, enum finding_kind k,
					  const char *cat)
{
	size_t i;

	for (i = 0; fs && i < fs->n; i++)
		if (fs->v[i].kind == k && !strcmp(fs->v[i].category, cat))
			return &fs->v[i];
	return NULL;
}

static void rss_at(struct model *m, double t, __u64 bytes)
{
	struct gmt_rss e;

	event__init(&e.hdr, GMT_EV_RSS, sizeof(e), T(t), 100);
	e.member = GMT_RSS_ANON;
	e.bytes = bytes;
	model__add(m, &e.hdr);
}

static void mmap_at(struct model *m, double t, __u64 addr, __u64 len, __u32 prot, __u32 stack)
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

/* host memory that Vulkan allocations make on llvmpipe is counted once, as
 * Vulkan's; a PROT_NONE reservation holds none of a host leak */
static void test_findings_counted_once(void)
{
	struct model *m = model_of_run(2), *h = model_of_run(2);
	const struct finding *f;
	struct gmt_gpu_device d;
	struct findings *fs = NULL, *hs = NULL;
	struct gmt_map_rss *r;
	size_t i, k;
	bool said = false;

	memset(&d, 0, sizeof(d));
	event__init(&d.hdr, GMT_EV_GPU_DEVICE, sizeof(d), T(1), 100);
	d.api = GMT_API_VK;
	d.vendor_id = 0x10005;
	snprintf(d.name, sizeof(d.name), "llvmpipe (LLVM 15.0.6, 256 bits)");
	d.nr_types = d.nr_heaps = 1;
	d.types[0] = (struct gmt_gpu_mem_type){ 1, 0 };
	d.heaps[0] = (struct gmt_gpu_mem_heap){ 16ull << 30, 1, 0 };
	model__add(m, &d.hdr);
	rss_at(m, 2.9, 200ull << 20);
	rss_at(h, 2.9, 200ull << 20);
	for (i = 0; i < 12; i++) {
		double t = 3 + i;

		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		gpu_call(m, t + 0.1, GMT_API_VK, GMT_GOP_ALLOC, GMT_GK_VK_MEMORY, 0x100 + i,
			 8 << 20, 0, 0);
		rss_at(m, t + 0.3, (200ull << 20) + (i + 1) * (8ull << 20) + 4096 * (i % 3));
		http_event(m, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);

		/* the other process: 16 MiB mapped of which 8 touched, 64 MiB
		 * reserved, and an arena reserved of which 4 MiB made usable */
		http_event(h, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		mmap_at(h, t + 0.1, 0x7f0000000000 + i * (1ull << 30), 16 << 20, 3, 7);
		mmap_at(h, t + 0.2, 0x7e0000000000 + i * (1ull << 30), 64 << 20, 0, 9);
		mmap_at(h, t + 0.2, 0x7d0000000000 + i * (1ull << 30), 64 << 20, 0, 11);
		rss_at(h, t + 0.3, (200ull << 20) + (i + 1) * (12ull << 20) + 4096 * (i % 3));
		http_event(h, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(h, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	/* smaps at the end: what each area holds */
	r = calloc(1, sizeof(*r) + 36 * sizeof(r->v[0]));
	if (!ASSERT_TRUE(r != NULL, "memory"))
		goto out;
	event__init(&r->hdr, GMT_EV_MAP_RSS, sizeof(*r) + 36 * sizeof(r->v[0]), T(15.5), 100);
	for (i = 0; i < 36; i++) {
		__u64 base =
			(0x7d0000000000ull + (i / 12) * 0x10000000000ull) + (i % 12) * (1ull << 30);

		r->v[i].start = base;
		r->v[i].end = base + (i < 24 ? 64 << 20 : 16 << 20);
		r->v[i].rss = i < 12 ? 4 << 20 : i < 24 ? 0 : 8 << 20;
	}
	r->nr = 36;
	model__add(h, &r->hdr);
	free(r);
	fs = findings__build(m);
	hs = findings__build(h);
	ASSERT_TRUE(find_finding(fs, F_LEAK, "vulkan_device") != NULL, "the Vulkan leak");
	f = find_finding(fs, F_STEADY, "host_anon");
	if (!ASSERT_TRUE(f != NULL, "the host heap, less Vulkan memory, is steady"))
		goto out;
	for (k = 0; k < f->nr_evidence; k++)
		said |= f->evidence[k].code == E_LESS_VULKAN &&
			f->evidence[k].a.E_LESS_VULKAN.bytes > 0;
	ASSERT_TRUE(said, "and says so, with the Vulkan bytes taken off");
	f = find_finding(hs, F_LEAK, "host_anon");
	if (!ASSERT_TRUE(f != NULL, "without Vulkan, the host heap leaks"))
		goto out;
	for (k = 0; k < f->nr_stacks; k++)
		ASSERT_TRUE(f->stacks[k].stack_id != 9, "a PROT_NONE reservation holds nothing");
	ASSERT_TRUE(f->nr_stacks >= 2 && f->stacks[0].stack_id == 7 &&
			    f->stacks[0].bytes == 12 * (8ull << 20),
		    "the mappings hold what was touched of them");
	ASSERT_TRUE(f->nr_stacks >= 2 && f->stacks[1].stack_id == 11 &&
			    f->stacks[1].bytes == 12 * (4ull << 20),
		    "and the arenas what was made usable");
out:
	findings__free(fs);
	findings__free(hs);
	model__free(m);
	model__free(h);
}

/* the leaky model: a leak, growth the API does not explain, and the failure
 * with what was live */
static void test_findings(void)
{
	struct model *m = leaky_model(true), *empty = model__new();
	const struct finding *f;
	struct findings *fs;
	char *text;

	fs = findings__build(m);
	if (!ASSERT_TRUE(fs != NULL, "findings"))
		goto out;
	f = find_finding(fs, F_LEAK, "cuda_device");
	if (ASSERT_TRUE(f != NULL, "a CUDA device leak")) {
		ASSERT_EQ((long long)f->bytes_per_request, 1 << 20, "1 MiB a request");
		ASSERT_EQ(f->points, 13, "the level before the first request, and after each");
		ASSERT_TRUE(f->nr_stacks == 3 && f->stacks[0].bytes == 4 << 20,
			    "held by three stacks, 4 MiB the most");
		/* 80 GiB free at 3 MiB a request, as NVML says */
		ASSERT_TRUE(f->requests_to_exhaustion > 80000, "the GPU's free memory is far");
	}
	f = find_finding(fs, F_UNEXPLAINED, "nvml_device");
	if (ASSERT_TRUE(f != NULL, "growth the API does not explain"))
		ASSERT_EQ((long long)(f->bytes_per_request / 1024 + 0.5), 2048, "2 MiB a request");
	f = find_finding(fs, F_ALLOC_FAILURE, "cuda_device");
	if (ASSERT_TRUE(f != NULL, "the failure")) {
		ASSERT_EQ(finding__reason(f), M_FAILED, "said as a failed call");
		ASSERT_TRUE(!strcmp(f->says[0].a.M_FAILED.result, "CUDA_ERROR_OUT_OF_MEMORY"),
			    "its result");
		ASSERT_EQ(f->nr_stacks, 3, "what was live, by stack");
	}
	ASSERT_EQ(fs->v[0].kind, F_ALLOC_FAILURE, "the most urgent first");
	text = report_text(m);
	ASSERT_TRUE(text && strstr(text, "Verdicts\n  ALLOCATION FAILURE: CUDA device"),
		    "the report opens with them");
	free(text);
	findings__free(fs);
	/* nothing to judge is no crash */
	fs = findings__build(empty);
	ASSERT_TRUE(fs && fs->n == 0, "no findings without events");
	findings__free(fs);
out:
	model__free(empty);
	model__free(m);
}

/* a fresh server's first request makes its shaders and buffers; a cache that
 * fills behind it, then levels, is no steady heap */
static void run_behind_warm_up(struct model *m, double warm_up)
{
	double level = 200ull << 20;
	size_t i;

	rss_at(m, 2.9, (__u64)level);
	for (i = 0; i < 30; i++) {
		double t = 3 + i;

		level += i == 0 ? warm_up : i < 7 ? 1.5 * (1 << 20) : 0;
		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		rss_at(m, t + 0.3, (__u64)level + 4096 * (i % 3));
		http_event(m, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
}

static const struct finding_say *evidence_of(const struct finding *f, enum say code)
{
	size_t k;

	for (k = 0; f && k < f->nr_evidence; k++)
		if (f->evidence[k].code == code)
			return &f->evidence[k];
	return NULL;
}

static void test_findings_first_left_out(void)
{
	struct model *m = model_of_run(2), *plain = model_of_run(2);
	const struct finding_say *e;
	const struct finding *f;
	struct findings *fs, *ps;

	run_behind_warm_up(m, 35 << 20);
	run_behind_warm_up(plain, 1.5 * (1 << 20));
	fs = findings__build(m);
	ps = findings__build(plain);
	ASSERT_TRUE(!find_finding(fs, F_STEADY, "host_anon"), "not steady behind a warm-up");
	f = find_finding(fs, F_BOUNDED, "host_anon");
	if (!f)
		f = find_finding(fs, F_SETTLED, "host_anon");
	e = evidence_of(f, E_FIRST_LEFT_OUT);
	if (ASSERT_TRUE(e != NULL, "levelled off, judged without request 1")) {
		ASSERT_EQ((long long)e->a.E_FIRST_LEFT_OUT.step >> 20, 35,
			  "which raised it by 35 MiB");
		ASSERT_EQ((long long)e->a.E_FIRST_LEFT_OUT.request, 1, "request 1");
	}
	f = find_finding(ps, F_BOUNDED, "host_anon");
	if (!f)
		f = find_finding(ps, F_SETTLED, "host_anon");
	ASSERT_TRUE(f != NULL, "without a warm-up, the same verdict");
	ASSERT_TRUE(!evidence_of(f, E_FIRST_LEFT_OUT), "from every request");
	findings__free(fs);
	findings__free(ps);
	model__free(m);
	model__free(plain);
}

/* a long run: 5000 requests are judged as quickly as 50, and alike */
static void test_findings_long_run(void)
{
	struct model *m = model_of_run(2);
	const struct finding *f;
	struct findings *fs;
	int i;

	for (i = 0; i < 5000; i++) {
		double t = 3 + i * 0.01;

		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		gpu_call(m, t + 0.001, GMT_API_CU, GMT_GOP_ALLOC, GMT_GK_DEVICE, 0x1000 + i, 4096,
			 0, ~0u);
		http_event(m, t + 0.004, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.005, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	fs = findings__build(m);
	f = find_finding(fs, F_LEAK, "cuda_device");
	if (ASSERT_TRUE(f != NULL, "a leak over 5000 requests"))
		ASSERT_EQ((long long)(f->bytes_per_request + 0.5), 4096, "4 KiB a request");
	findings__free(fs);
	model__free(m);
}

/* the one binary search: the first key past the one asked, over equal keys
 * too, with the key anywhere in the element */
static void test_search_after(void)
{
	struct {
		__u32 tag;
		__u64 key;
	} v[] = { { 0, 1 }, { 1, 3 }, { 2, 3 }, { 3, 5 } };
	const __u64 keys[] = { 0, 1, 2, 3, 4, 5, 99 };
	const size_t want[] = { 0, 1, 1, 3, 3, 4, 4 };
	size_t i, got;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		got = search__after(v, 4, sizeof(v[0]), offsetof(typeof(v[0]), key), keys[i]);
		ASSERT_EQ(got, want[i], "the first element after the key");
	}
	ASSERT_EQ(search__after(v, 0, sizeof(v[0]), 8, 3), 0, "none in an empty array");
}

/* the words of the verdicts: every code has a name and a sentence that
 * holds its figures, and nothing of a format string shows */
static void test_words_of_each_code(void)
{
	struct finding f = { .kind = F_LEAK, .nr_says = 1 };
	char buf[2048], name[64];
	unsigned int code, bad = 0, unnamed = 0;

	for (code = SAY_NONE + 1; code < SAY_NR; code++) {
		/* each code's strings and figures, in the order says.h names them */
		static const double v[] = { 3, 2, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
		static const char *const s[] = { "alpha", "beta", "gamma", "delta" };
		size_t vi = 0, si = 0;

		switch ((enum say)code) {
#define S(n) in.n = s[si++];
#define V(n) in.n = v[vi++];
#define X(c, json, ...)                                 \
	case c: {                                       \
		struct say_in_##c in = {};              \
                                                        \
		__VA_ARGS__ says__##c(&f.says[0], &in); \
		break;                                  \
	}
			SAYS(X)
#undef X
#undef S
#undef V
		default:
			break;
		}
		(void)vi;
		(void)si;
		words__message(&f, buf, sizeof(buf));
		snprintf(name, sizeof(name), "%s", findings__say_name(code));
		unnamed += !strcmp(name, "?");
		if (!buf[0] || strstr(buf, "(null)") || strstr(buf, "%s") || strstr(buf, "%.") ||
		    strstr(buf, "%z") || strstr(buf, "%l") || strstr(buf, "%d") ||
		    strstr(buf, "%u")) {
			printf("# %s: \"%s\"\n", name, buf);
			bad++;
		}
	}
	ASSERT_EQ(unnamed, 0, "every code has a name");
	ASSERT_EQ(bad, 0, "every code has words");
	/* the figures are the finding's: a leak over time runs out in seconds */
	says__M_RUNS_OUT(&f.says[0],
			 &(const struct say_in_M_RUNS_OUT){ .what = "the machine's memory",
							    .limit = 1 << 30,
							    .more = 120,
							    .pr = 0,
							    .host = 1 });
	words__message(&f, buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "(1.00 GiB) runs out after about 120 more seconds: unless") != NULL,
		    buf);
	ASSERT_TRUE(strstr(buf, "OOM-killed") != NULL, "host memory: the OOM killer");
	f.says[0].a.M_RUNS_OUT.host = 0;
	words__message(&f, buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "OOM-killed") == NULL, "device memory: no OOM killer");
	/* 41 levels, one before each request and one after the last, span 40
	 * requests; 41 samples are 41 */
	says__E_SHAPE_FIT(&f.says[0], &(const struct say_in_E_SHAPE_FIT){ .shape = "settled",
									  .points = 41,
									  .pr = 1,
									  .slope = 1024,
									  .noise = 0,
									  .confidence = 1 });
	words__message(&f, buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "settled over 40 requests:") != NULL, buf);
	f.says[0].a.E_SHAPE_FIT.pr = 0;
	words__message(&f, buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "settled over 41 samples:") != NULL, buf);
}

static bool screen_has(const struct top_line *l, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(l[i].text, what))
			return true;
	return false;
}

/* what a request did to memory, one rule for the report's table and the
 * live view: the first request made the first GPU allocation (its level
 * before had no point yet: 0), and both say +1.0 MiB for it as for the rest */
static void test_request_delta_one_rule(void)
{
	struct top_line *l = calloc(256, sizeof(*l));
	struct model *m = leaky_model(false);
	struct top_state st = { .refresh_s = 1, .now = T(16) };
	const struct model_proc *p = model__proc(m, 100);
	struct req_delta d;
	size_t n, i, rows = 0;
	char *text;

	if (!ASSERT_TRUE(l && p && p->nr_reqs == 12, "the model"))
		goto out;
	for (i = 0; i < p->nr_reqs; i++) {
		requests__delta(m, p, &p->reqs[i], &d);
		ASSERT_EQ(d.gpu, 1 << 20, "each request's GPU API memory");
	}
	text = report_text(m);
	ASSERT_TRUE(text && strstr(text, "+1.0 MiB"), "the report's table");
	free(text);
	m->target_pid = 100;
	n = top__layout(m, NULL, &st, 100, 160, l, 256);
	for (i = 0; i < n; i++) {
		if (!strstr(l[i].text, "/v1/completions"))
			continue;
		rows++;
		if (!ASSERT_TRUE(strstr(l[i].text, "+1.0 MiB") != NULL, "the view's row"))
			printf("# %s\n", l[i].text);
	}
	ASSERT_EQ(rows, 12, "every request in the view");
out:
	model__free(m);
	free(l);
}

static void test_top_layout(void)
{
	static const int sizes[][2] = { { 40, 120 }, { 24, 80 }, { 12, 40 }, { 6, 30 }, { 1, 10 } };
	struct top_line *l = calloc(256, sizeof(*l));
	struct model *m = leaky_model(false);
	struct top_state st = { .refresh_s = 1 };
	struct findings *fs;
	char plain[1024], spark[16];
	double ramp[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	size_t n, i, k, s;

	if (!ASSERT_TRUE(l != NULL, "memory"))
		goto out;
	m->target_pid = 100;
	for (i = 0; i < 5; i++) { /* five refreshes of history */
		st.now = T(4 + 3 * i);
		top__sample(m, &st);
	}
	st.baseline_ts = m->start_ts;
	fs = findings__build(m);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int rows = sizes[s][0], cols = sizes[s][1];

		n = top__layout(m, fs, &st, rows, cols, l, 256);
		ASSERT_TRUE(n >= 1 && n <= (size_t)rows, "no more lines than rows");
		for (i = 0; i < n; i++) {
			ASSERT_TRUE(strlen(l[i].text) <= (size_t)cols,
				    "no line wider than the screen");
			for (k = 0; k < l[i].nspan; k++)
				ASSERT_TRUE(l[i].span[k].at + l[i].span[k].len <= strlen(l[i].text),
					    "highlights inside their line");
		}
		ASSERT_TRUE(strstr(l[0].text, "pid 100") != NULL || cols < 20, "the header first");
		if (rows >= 24) {
			ASSERT_TRUE(screen_has(l, n, "LEAK") && screen_has(l, n, "FAILED"),
				    "the verdicts");
			ASSERT_TRUE(screen_has(l, n, "CUDA device memory"), "the memory panel");
			ASSERT_TRUE(screen_has(l, n, "12 in all"), "the requests panel");
			ASSERT_TRUE(screen_has(l, n, "+1.0 MiB"), "a request's memory");
			ASSERT_TRUE(screen_has(l, n, "CUDA_ERROR_OUT_OF_MEMORY"),
				    "the failure event");
			ASSERT_TRUE(strstr(l[n - 1].text, "q quit") != NULL, "the keys last");
		}
		if (rows == 6)
			ASSERT_TRUE(screen_has(l, n, "panels need"), "a tiny screen says so");
	}
	/* sort and help */
	st.mem_sort = TS_NAME;
	n = top__layout(m, fs, &st, 40, 120, l, 256);
	ASSERT_TRUE(screen_has(l, n, "(by name)"), "the sort is shown");
	st.help = true;
	n = top__layout(m, fs, &st, 40, 120, l, 256);
	ASSERT_TRUE(screen_has(l, n, "HELP") && !screen_has(l, n, "in all"),
		    "help replaces panels");
	top__plain(m, fs, &st, plain, sizeof(plain));
	ASSERT_TRUE(strstr(plain, "cuda_device 12.0 MiB") && strstr(plain, "leak cuda_device"),
		    "the plain line");
	top__spark(ramp, 8, spark, 8);
	ASSERT_STR(spark, " _.-=+*#", "a rising sparkline");
	top__spark(ramp, 8, spark, 4);
	ASSERT_STR(spark, " .+#", "the newest that fit, on their own scale");
	findings__free(fs);
out:
	free(l);
	model__free(m);
}

/* a request whose image the projector encodes is marked as one, in the
 * live view's requests panel */
static void test_top_marks_image_requests(void)
{
	struct top_line *l = calloc(64, sizeof(*l));
	struct model *m = model_of_run(2);
	struct top_state st = { .refresh_s = 1 };
	struct gmt_decode e;
	struct findings *fs;
	size_t n;

	m->target_pid = 100;
	http_event(m, 3, 7, GMT_HTTP_REQUEST, "/v1/chat/completions", 0, 0);
	http_event(m, 3.5, 8, GMT_HTTP_REQUEST, "/completion", 0, 0);
	event__init(&e.hdr, GMT_EV_DECODE, sizeof(e), T(3.2), 100);
	memset(&e.kind, 0, sizeof(e) - offsetof(struct gmt_decode, kind));
	e.kind = GMT_DEC_IMAGE;
	e.dur_ns = 3000000;
	model__add(m, &e.hdr);
	st.now = T(4);
	fs = findings__build(m);
	n = l ? top__layout(m, fs, &st, 40, 120, l, 64) : 0;
	ASSERT_TRUE(screen_has(l, n, "/v1/chat/completions") && screen_has(l, n, " image"),
		    "the image request is marked");
	ASSERT_EQ(model__proc(m, 100)->reqs[0].image_ns, 3000000, "its encode");
	ASSERT_EQ(model__proc(m, 100)->reqs[1].image_ns, 0, "the text request has none");
	findings__free(fs);
	free(l);
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
static void test_mappings_bounded(void)
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
static void test_series_bounded(void)
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

/* a one-frame stack named `sym` */
static void named_stack(struct model *m, __u32 id, const char *sym)
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

static void touch_at(struct model *m, double t, __u32 stack)
{
	struct gmt_touch e;

	event__init(&e.hdr, GMT_EV_TOUCH, sizeof(e), T(t), 100);
	e.addr = 0x7f0000000000ull;
	e.bytes = 1 << 20;
	e.stack_id = stack;
	model__add(m, &e.hdr);
}

/* memory by what it is for: GPU memory live now by its stacks' roles,
 * biggest first and "other" last; host memory by who touched it first;
 * both in the live view's memory panel */
static void test_roles_by_stack(void)
{
	static const char *const syms[] = { "llama_kv_cache::llama_kv_cache", "load_tensors",
					    "ggml_gallocr_reserve_n", "unnamed_helper",
					    "server_prompt_cache::alloc" };
	static const __u64 sizes[] = { 980ull << 20, 225ull << 20, 5939, 1 << 20 };
	struct top_line *l = calloc(256, sizeof(*l));
	struct model *m = model_of_run(2);
	struct top_state st = { .refresh_s = 1 };
	struct gmt_gpu_call e;
	struct findings *fs;
	char buf[256];
	size_t n;
	int i;

	for (i = 0; i < 5; i++)
		named_stack(m, 11 + i, syms[i]);
	for (i = 0; i < 5; i++) { /* two KV buffers, one each of the others */
		event__init(&e.hdr, GMT_EV_GPU_CALL, sizeof(e), T(1 + 0.1 * i), 100);
		e.api = GMT_API_VK;
		e.op = GMT_GOP_ALLOC;
		e.kind = GMT_GK_DEVICE;
		e.handle = 0x1000 + i;
		e.size = sizes[i ? i - 1 : 0];
		e.result = 0;
		e.mem_type = 0;
		e.stack_id = 11 + (i ? i - 1 : 0);
		model__add(m, &e.hdr);
	}
	for (i = 0; i < 4; i++)
		touch_at(m, 2 + i, i < 3 ? 15 : 14);
	n = findings__gpu_roles(m, model__proc(m, 100), T(3), buf, sizeof(buf));
	ASSERT_TRUE(n > 0, "GPU memory has roles");
	ASSERT_STR(
		buf,
		"KV cache 1.91 GiB, model weights 225.0 MiB, compute buffers 5.8 KiB, other 1.0 MiB",
		"GPU memory by role");
	n = findings__touch_roles(m, model__proc(m, 100), T(10), buf, sizeof(buf));
	ASSERT_STR(buf, "prompt cache 3.0 MiB, other 1.0 MiB",
		   "host memory by who touched it first");
	n = findings__touch_roles(m, model__proc(m, 100), T(1.5), buf, sizeof(buf));
	ASSERT_TRUE(n == 0, "nothing touched yet");
	m->target_pid = 100;
	st.now = T(10);
	fs = findings__build(m);
	n = l ? top__layout(m, fs, &st, 40, 200, l, 256) : 0;
	ASSERT_TRUE(screen_has(l, n, "GPU for: KV cache 1.91 GiB") &&
			    screen_has(l, n, "host first touched: prompt cache 3.0 MiB"),
		    "the live view says what memory is for");
	findings__free(fs);
	free(l);
	model__free(m);
}

/* llama-server (its exec), 14 requests; its heap before each and after
 * the last at level[i]; each request's rise first touched by `stack` */
static struct model *server_run(const double *level, __u32 stack, const char *sym)
{
	struct model *m = model_of_run(2);
	struct gmt_exec x;
	int i;

	event__init(&x.hdr, GMT_EV_EXEC, sizeof(x), T(0.3), 100);
	strcpy(x.comm, "llama-server");
	strcpy(x.filename, "/opt/llama/llama-server");
	model__add(m, &x.hdr);
	named_stack(m, stack, sym);
	rss_at(m, 2.9, (__u64)level[0]);
	for (i = 0; i < 14; i++) {
		double t = 3 + i, k;

		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		for (k = 0; k < level[i + 1] - level[i]; k += 1 << 20)
			touch_at(m, t + 0.1, stack);
		rss_at(m, t + 0.3, (__u64)level[i + 1]);
		http_event(m, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	return m;
}

/* --fit makes the context slots x the model's only for -np N > 1 with no
 * -c and no shared KV buffer (llama.cpp's server.cpp and common/fit.cpp) */
static void test_llama_conf_fit_scaled(void)
{
	static const struct {
		const char *cmd, *env;
		bool scaled;
	} cases[] = {
		{ "llama-server -m m.gguf -np 4", "", true },
		{ "llama-server -m m.gguf --parallel=2 -c 0", "", true },
		{ "llama-server -m m.gguf", "", false }, /* auto: 4 slots, unified */
		{ "llama-server -m m.gguf -np 4 -c 8192", "", false },
		{ "llama-server -m m.gguf -np 4 -kvu", "", false },
		{ "llama-server -m m.gguf -np 4 --kv-unified -no-kvu", "", true },
		{ "llama-server -m m.gguf -np 4 --fit off", "", false },
		{ "llama-server -m m.gguf -np 1", "", false },
		{ "llama-server -m m.gguf -np 4 --kv-unified-per-slot 4096", "", false },
		{ "llama-server -m m.gguf -np 4", "LLAMA_ARG_KV_UNIFIED=1", false },
		{ "llama-server -m m.gguf", "LLAMA_ARG_N_PARALLEL=3", true },
		{ "llama-server -m m.gguf -np 4", "LLAMA_ARG_CTX_SIZE=4096", false },
	};
	struct model_proc p = { 0 };
	struct llama_conf c;
	char cmd[128], env[64];
	size_t i;

	strcpy(p.comm, "llama-server");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s", cases[i].cmd);
		snprintf(env, sizeof(env), "%s", cases[i].env);
		p.cmdline = cmd;
		p.env = env;
		p.env_len = strlen(env) + 1;
		ASSERT_TRUE(llama_conf__read(&p, &c), cases[i].cmd);
		ASSERT_TRUE(llama_conf__ctx_scaled(&c) == cases[i].scaled, cases[i].cmd);
	}
}

static bool says(const struct finding *f, enum say code)
{
	size_t i;

	for (i = 0; f && i < f->nr_says; i++)
		if (f->says[i].code == code)
			return true;
	return false;
}

/* the same growth, judged by what holds it: the prompt cache within
 * --cache-ram fills, compute buffers warm up once per shape, memory in
 * no role with a bound leaks; and a level that rose and held is not steady */
static void test_findings_by_role_and_bound(void)
{
	static const struct {
		const char *sym;
		enum finding_kind kind;
		enum say reason;
		const char *bound;
	} cases[] = {
		{ "server_prompt_cache::alloc", F_BOUNDED, M_ROLE_FILLING, "cache_ram" },
		{ "ggml_gallocr_reserve_n", F_GROWING, M_ROLE_WITHIN, "per_shape" },
		{ "unnamed_helper", F_LEAK, M_LEAK, "none" },
	};
	/* 4 MiB a request with a little noise; then one that rose and swung */
	double line[15], held[15] = { 70,  100, 85,  130, 110, 160, 140, 200,
				      150, 190, 160, 200, 155, 195, 170 };
	const struct finding *f;
	struct findings *fs;
	struct model *m;
	char *text;
	size_t i, k;

	for (i = 0; i < 15; i++) {
		line[i] = (100.0 + 4 * i) * (1 << 20) + 8192 * (i % 3);
		held[i] *= 1 << 20;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = server_run(line, 31, cases[i].sym);
		fs = findings__build(m);
		for (f = NULL, k = 0; fs && k < fs->n; k++)
			if (!strcmp(fs->v[k].category, "host_anon"))
				f = &fs->v[k];
		if (ASSERT_TRUE(f != NULL, cases[i].sym)) {
			printf("# %s: %s, %s\n", cases[i].sym, findings__kind_name(f->kind),
			       findings__say_name(finding__reason(f)));
			ASSERT_EQ(f->kind, cases[i].kind, cases[i].sym);
			ASSERT_EQ(finding__reason(f), cases[i].reason, cases[i].sym);
			ASSERT_TRUE(f->nr_roles > 0 &&
					    !strcmp(findings__bound_name(f->role_v[0].bound),
						    cases[i].bound),
				    "the role's bound");
			ASSERT_TRUE(cases[i].kind != F_LEAK || says(f, M_LEAK_UNBOUNDED),
				    "a leak held in no role with a bound says so");
		}
		findings__free(fs);
		model__free(m);
	}
	m = server_run(held, 31, "unnamed_helper");
	fs = findings__build(m);
	f = find_finding(fs, F_SETTLED, "host_anon");
	ASSERT_TRUE(!find_finding(fs, F_STEADY, "host_anon"), "not steady after +100 MiB");
	if (ASSERT_TRUE(f != NULL && says(f, M_ROSE_HELD), "it rose and held")) {
		text = report_text(m);
		ASSERT_TRUE(text && strstr(text, "rose by 100.0 MiB (143%)"), "by how much");
		free(text);
	}
	findings__free(fs);
	model__free(m);
}

/* DRM fdinfo, as 6.1's amdgpu and the generic helpers of 6.5 on print it */
static void test_drm_fdinfo(void)
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

/* /proc/PID/maps lines, as the symbolizer, the GPU library scan and the
 * smaps reader all read them */
static void test_procfs_map_line(void)
{
	char code[] = "7f0c1a200000-7f0c1a3c5000 r-xp 00028000 fd:01 1315387    "
		      "/usr/lib/x86_64-linux-gnu/lib c.so.6 (deleted)\n";
	char anon[] = "7ffd4c5e1000-7ffd4c602000 rw-p 00000000 00:00 0 \n";
	char field[] = "AnonHugePages:         0 kB\n", rss[] = "Rss:                 132 kB\n";
	struct procfs_map m;

	ASSERT_TRUE(procfs__map_line(code, &m), "a code mapping");
	ASSERT_EQ(m.start, 0x7f0c1a200000ull, "start");
	ASSERT_EQ(m.end, 0x7f0c1a3c5000ull, "end");
	ASSERT_EQ(m.pgoff, 0x28000, "offset");
	ASSERT_EQ(m.maj, 0xfd, "major");
	ASSERT_EQ(m.min, 1, "minor");
	ASSERT_EQ(m.ino, 1315387, "inode");
	ASSERT_STR(m.perms, "r-xp", "perms");
	ASSERT_STR(m.path, "/usr/lib/x86_64-linux-gnu/lib c.so.6 (deleted)", "a path with spaces");
	ASSERT_TRUE(procfs__map_line(anon, &m), "an anonymous mapping");
	ASSERT_STR(m.path, "", "no name");
	ASSERT_EQ(m.ino, 0, "no inode");
	ASSERT_TRUE(!procfs__map_line(field, &m), "an smaps field that starts with hex digits");
	ASSERT_TRUE(!procfs__map_line(rss, &m), "an smaps field");
}

/* a target's file: a FIFO refused at once (never a blocking open), a
 * regular file read, a root-only one not read for a target of another user */
static void test_procfs_open_as(void)
{
	struct procfs_cred me, nobody = { .known = true, .uid = 65534, .gid = 65534 };
	char fifo[256], dir[256], file[256];
	int fd;

	snprintf(fifo, sizeof(fifo), "%s/procfs.fifo", tmpdir);
	snprintf(dir, sizeof(dir), "%s/procfs.dir", tmpdir);
	snprintf(file, sizeof(file), "%s/procfs.dir/secret", tmpdir);
	if (!ASSERT_TRUE(!mkfifo(fifo, 0666) && !mkdir(dir, 0700), "fixtures") ||
	    !ASSERT_TRUE(procfs__cred(getpid(), &me), "our own credentials"))
		return;
	ASSERT_EQ(me.uid, geteuid(), "fs uid");
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (!ASSERT_TRUE(fd >= 0 && write(fd, "x", 1) == 1, "the file"))
		return;
	close(fd);
	ASSERT_EQ(procfs__open_as(&me, 0, fifo), -1, "a FIFO, refused without blocking");
	fd = procfs__open_as(&me, getpid(), file);
	ASSERT_TRUE(fd >= 0, "our own file, in our root");
	if (fd >= 0)
		close(fd);
	if (geteuid() == 0) {
		fd = procfs__open_as(&nobody, 0, file);
		ASSERT_TRUE(fd < 0 && errno == EACCES, "root's file, not read for nobody");
		if (fd >= 0)
			close(fd);
	}
	ASSERT_TRUE(access(file, R_OK) == 0, "we still read as ourselves after");
}

/* a command line's secrets, argument by argument, before the arguments are
 * joined: a value with a space in it is all one value */
static void test_procfs_redact(void)
{
	char a[] = "srv\0--api-key\0tok1 SECRET\0-m\0x.gguf\0--api-key=k SECRET\0"
		   "-hft\0--hf-token\0--api-keys\0v\0--api-key";
	char b[] = "--hf-token=\0\0\0";
	size_t n = procfs__redact(a, sizeof(a) - 1);

	ASSERT_STR(a,
		   "srv --api-key *********** -m x.gguf --api-key=******** -hft ********** "
		   "--api-keys v --api-key",
		   "values starred, the options and the rest kept");
	ASSERT_EQ(n, strlen(a), "its length");
	ASSERT_TRUE(!strstr(a, "SECRET"), "no secret");
	ASSERT_EQ(procfs__redact(b, sizeof(b) - 1), 11, "trailing NULs dropped");
	ASSERT_STR(b, "--hf-token=", "an empty value");
}

/* every function the stream names has the argument shape its probe needs,
 * and its cookie carries its index, shape and kind back */
static void test_gpu_probe_shapes(void)
{
	__u64 c = 0;
	size_t i;

	for (i = 0; i < gpu_nr_funcs; i++) {
		ASSERT_EQ(gpuprobes__cookie(i, &c), 0, gpu_funcs[i].name);
		ASSERT_EQ(GMT_COOKIE_FUNC(c), i, gpu_funcs[i].name);
		ASSERT_TRUE(GMT_COOKIE_SHAPE(c) != 0, gpu_funcs[i].name);
	}
	ASSERT_EQ(gpuprobes__cookie(gpu_nr_funcs, &c), -1, "an index past the table");
}

static void test_fmt(void)
{
	char b[32];

	ASSERT_STR(fmt_bytes(b, sizeof(b), 0), "0 B", "zero");
	ASSERT_STR(fmt_bytes(b, sizeof(b), 1023), "1023 B", "bytes");
	ASSERT_STR(fmt_bytes(b, sizeof(b), 4096), "4.0 KiB", "KiB");
	ASSERT_STR(fmt_bytes(b, sizeof(b), 128 << 20), "128.0 MiB", "MiB");
	ASSERT_STR(fmt_bytes(b, sizeof(b), 1.5 * (1 << 30)), "1.50 GiB", "GiB");
	ASSERT_STR(fmt_delta(b, sizeof(b), -(4 << 10)), "-4.0 KiB", "negative");
	ASSERT_STR(fmt_delta(b, sizeof(b), 126 << 20), "+126.0 MiB", "positive");
	ASSERT_STR(fmt_prot(b, sizeof(b), 5), "r-x", "prot");
}

/* what a target names, as printable UTF-8: U+FFFD for each bad byte */
static void test_fmt_clean(void)
{
	char b[64], small[7];

	fmt_clean(b, sizeof(b), "/v1/\xc3\xa9t\xc3\xa9", 64);
	ASSERT_STR(b, "/v1/\xc3\xa9t\xc3\xa9", "valid UTF-8 is kept");
	fmt_clean(b, sizeof(b),
		  "a\x1b[2J\x7f\x07"
		  "b",
		  64);
	ASSERT_STR(b,
		   "a\xef\xbf\xbd[2J\xef\xbf\xbd\xef\xbf\xbd"
		   "b",
		   "C0 and DEL");
	fmt_clean(b, sizeof(b),
		  "\xc2\x9b"
		  "1m",
		  64);
	ASSERT_STR(b,
		   "\xef\xbf\xbd\xef\xbf\xbd"
		   "1m",
		   "C1's CSI, each byte");
	fmt_clean(b, sizeof(b), "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xff", 64);
	ASSERT_EQ(strlen(b), 10 * 3, "overlong, surrogate, past U+10FFFF, 0xff: ten bytes, ten");
	fmt_clean(b, sizeof(b), "ab\xe2\x82", 64);
	ASSERT_STR(b, "ab\xef\xbf\xbd\xef\xbf\xbd", "a sequence cut short");
	fmt_clean(b, sizeof(b), "abcdef", 3);
	ASSERT_STR(b, "abc", "at most n bytes");
	fmt_clean(small, sizeof(small), "abcd\xff\xff", 64);
	ASSERT_STR(small, "abcd", "cut at a whole character where dst is small");
	ASSERT_STR(fmt_col(b, sizeof(b),
			   "/\xef\xbf\xbd"
			   "ab",
			   3),
		   "/\xef\xbf\xbd"
		   "a",
		   "a column counts characters");
	ASSERT_STR(fmt_col(b, sizeof(b), "ab", 4), "ab  ", "and pads");
	ASSERT_STR(fmt_col(small, 4, "\xef\xbf\xbd\xef\xbf\xbd", 2), "\xef\xbf\xbd",
		   "whole characters in a small buffer");
}

/* the timings scanner (bpf/timings_parse.bpf.h) over a body: the objects it
 * completes, fed in one piece */
struct tm_seen {
	int n;
	struct tm_scan last;
};

static struct tm_seen tm_feed(const char *body, size_t len)
{
	struct tm_seen r = { 0 };
	struct tm_scan s;
	size_t i;

	memset(&s, 0, sizeof(s));
	tm__reset(&s);
	for (i = 0; i < len; i++)
		if (tm__byte(&s, (__u8)body[i])) {
			r.n++;
			r.last = s;
		}
	return r;
}

#define TM_FEED(lit) tm_feed(lit, sizeof(lit) - 1)

static void test_timings_scan(void)
{
	struct tm_seen r;

	/* llama-server's own: a chat completion's last fields */
	r = TM_FEED(
		"{\"choices\":[{\"finish_reason\":\"length\",\"index\":0,\"message\":"
		"{\"role\":\"assistant\",\"content\":\"hi\"}}],\"usage\":{\"completion_tokens\":8},"
		"\"timings\":{\"cache_n\":3,\"prompt_n\":36,\"prompt_ms\":30.958,"
		"\"prompt_per_token_ms\":0.86,\"prompt_per_second\":1162.9,\"predicted_n\":8,"
		"\"predicted_ms\":661.0645,\"predicted_per_token_ms\":82.6,"
		"\"predicted_per_second\":12.1}}");
	ASSERT_EQ(r.n, 1, "one timings object");
	ASSERT_EQ(r.last.prompt_n, 36, "prompt_n");
	ASSERT_EQ(r.last.predicted_n, 8, "predicted_n");
	ASSERT_EQ(r.last.cache_n, 3, "cache_n");
	ASSERT_EQ(r.last.prompt_us, 30958, "prompt_ms to the microsecond");
	ASSERT_EQ(r.last.predicted_us, 661064, "predicted_ms, its fourth digit dropped");
	ASSERT_EQ(r.last.have & TM_INDEX, TM_INDEX, "the choice's index");
	ASSERT_EQ(r.last.index, 0, "index 0");

	/* a stream's last event, in a chunk's data */
	r = TM_FEED(
		"data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":2,\"delta\":{}}],"
		"\"timings\":{\"prompt_n\":5,\"prompt_ms\":1,\"predicted_n\":17,\"predicted_ms\":"
		"250.5}}\n\ndata: [DONE]\n\n");
	ASSERT_EQ(r.n, 1, "in an event stream");
	ASSERT_EQ(r.last.index, 2, "the task's index");
	ASSERT_EQ(r.last.prompt_us, 1000, "an integer ms");
	ASSERT_EQ(r.last.predicted_us, 250500, "one fraction digit");

	/* text that spells the keys, in strings: a model's output, a prompt
	 * echoed back, a key of the client's own with a quote in its name */
	r = TM_FEED(
		"{\"content\":\"\\\"timings\\\":{\\\"prompt_n\\\":999,\\\"predicted_n\\\":999}\","
		"\"prompt\":\"x\\\\\",\"a\\\"timings\":{\"prompt_n\":7,\"predicted_n\":7},"
		"\"s\":\"\\\"index\\\":5\"}");
	ASSERT_EQ(r.n, 0, "nothing from strings or escaped keys");
	r = TM_FEED("{\"content\":\"\\\\\",\"timings\":{\"prompt_n\":4,\"predicted_n\":2}}");
	ASSERT_EQ(r.n, 1, "a string ending in an escaped backslash closes");
	ASSERT_EQ(r.last.prompt_n, 4, "and the key after it is read");

	/* values llama-server never writes are not taken */
	r = TM_FEED("{\"timings\":{\"prompt_n\":-4,\"predicted_n\":2}}");
	ASSERT_EQ(r.n, 0, "a negative count");
	r = TM_FEED("{\"timings\":{\"prompt_n\":4,\"predicted_n\":2e3}}");
	ASSERT_EQ(r.n, 0, "an exponent");
	r = TM_FEED("{\"timings\":{\"prompt_n\":{\"predicted_n\":2},\"predicted_n\":2}}");
	ASSERT_EQ(r.n, 0, "a nested object");
	r = TM_FEED("{\"timings\":{\"prompt_n\":99999999999999999999,\"predicted_n\":2}}");
	ASSERT_EQ(r.n, 0, "a count past 2^40");
	/* a body that is not JSON is not looked at */
	r = TM_FEED("<html>\"timings\":{\"prompt_n\":4,\"predicted_n\":2}}");
	ASSERT_EQ(r.n, 0, "HTML");
	/* an array of results: one each */
	r = TM_FEED("[{\"index\":0,\"timings\":{\"prompt_n\":4,\"predicted_n\":2}},"
		    "{\"index\":1,\"timings\":{\"prompt_n\":6,\"predicted_n\":3}}]");
	ASSERT_EQ(r.n, 2, "two results");
	ASSERT_EQ(r.last.index, 1, "the second's index");
	ASSERT_EQ(r.last.predicted_n, 3, "the second's tokens");
}

/* --- tracedir: retention by bytes, and a pid's records past its exit (issue 35) --- */

/* what tracedir said, one line each */
struct said {
	char line[64][320];
	int n;
};

static void said_line(void *ctx, const char *line)
{
	struct said *s = ctx;

	if (s->n < 64)
		snprintf(s->line[s->n++], sizeof(s->line[0]), "%s", line);
}

/* the times a name is said removed */
static int said_removed(const struct said *s, const char *name)
{
	int i, n = 0;

	for (i = 0; i < s->n; i++)
		n += !strncmp(s->line[i], "removed ", 8) && strstr(s->line[i], name) &&
		     strstr(s->line[i], name)[strlen(name)] == ':';
	return n;
}

struct td_names {
	char name[256][96];
	int n;
};

/* the directory's files; seen: every name met so far, added to */
static __u64 td_list(const char *dir, struct td_names *now, struct td_names *seen)
{
	char path[512];
	struct dirent *de;
	struct stat sb;
	__u64 bytes = 0;
	DIR *dd = opendir(dir);
	int i;

	now->n = 0;
	while (dd && (de = readdir(dd))) {
		if (de->d_name[0] == '.' || now->n == 256)
			continue;
		snprintf(now->name[now->n++], sizeof(now->name[0]), "%.95s", de->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!stat(path, &sb))
			bytes += sb.st_size;
		for (i = 0; seen && i < seen->n; i++)
			if (!strcmp(seen->name[i], de->d_name))
				break;
		if (seen && i == seen->n && seen->n < 256)
			snprintf(seen->name[seen->n++], sizeof(seen->name[0]), "%.95s", de->d_name);
	}
	if (dd)
		closedir(dd);
	return bytes;
}

static bool td_has(const struct td_names *l, const char *name)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->name[i], name))
			return true;
	return false;
}

/* files of a pid (".PID." or ".PID.gmt" in the name) */
static int td_count(const struct td_names *l, __u32 pid)
{
	char a[24], b[24];
	int i, n = 0;

	snprintf(a, sizeof(a), ".%u.", pid);
	snprintf(b, sizeof(b), ".%u.gmt", pid);
	for (i = 0; i < l->n; i++)
		n += strstr(l->name[i] + 24, a) || strstr(l->name[i], b) ? 1 : 0;
	return n;
}

static void td_proc(struct tracedir *d, __u32 pid, __u64 ts, const char *comm, const char *exe)
{
	struct {
		struct gmt_proc p;
		char cmd[8];
	} proc = {};

	event__init(&proc.p.hdr, GMT_EV_PROC, sizeof(proc), ts, pid);
	snprintf(proc.p.comm, sizeof(proc.p.comm), "%s", comm);
	snprintf(proc.p.exe, sizeof(proc.p.exe), "%s", exe);
	tracedir__write(d, &proc.p.hdr);
}

static void td_exit(struct tracedir *d, __u32 pid, __u64 ts)
{
	struct gmt_exit ex = {};

	event__init(&ex.hdr, GMT_EV_EXIT, sizeof(ex), ts, pid);
	ex.group_dead = 1;
	tracedir__write(d, &ex.hdr);
}

/* n mmaps of pid that do not compress, 10 ms apart, a tick each 100 */
static void td_mmaps(struct tracedir *d, __u32 pid, int n, __u64 *ts)
{
	static unsigned int x = 7;
	struct gmt_mmap mm = {};
	int i;

	for (i = 0; i < n; i++) {
		*ts += 10000000;
		event__init(&mm.hdr, GMT_EV_MMAP, sizeof(mm), *ts, pid);
		x = x * 1103515245 + 12345;
		mm.addr = (__u64)x << 12;
		mm.len = x;
		tracedir__write(d, &mm.hdr);
		if (i % 100 == 99)
			tracedir__tick(d, *ts);
	}
}

/* --max-disk: a budget of bytes over all names; the oldest closed files of
 * exited processes go first, then closed files of running ones, a current
 * file never; each removal said once, with its name and why; --max-age
 * removes an old file of an earlier run */
static void test_tracedir_keeps_bytes(void)
{
	struct tracefile_info info = { .tool = "unit" };
	struct said s = {};
	struct tracedir_opts o = { .max_bytes = 8192,
				   .max_age_ns = 3600000000000ull,
				   .retain = { .max_bytes = 40 << 10,
					       .max_age_s = 86400,
					       .say = said_line,
					       .say_ctx = &s },
				   .info = &info };
	struct td_names now, seen = {}, first_exited;
	char dir[128], path[400];
	int i, fd, unsaid = 0, twice = 0, early_200 = 0;
	const char *old = "workload.20200101T000000.42.gmt";
	struct tracedir *d;
	__u64 ts = 1000000000ull, bytes;

	snprintf(dir, sizeof(dir), "%s/keep", tmpdir);
	mkdir(dir, 0700);
	/* a file of an earlier run, two days old */
	snprintf(path, sizeof(path), "%s/%s", dir, old);
	fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
	if (fd >= 0) {
		ASSERT_EQ(write(fd, "x", 1), 1, "the old file");
		futimens(fd, (struct timespec[]){ { time(NULL) - 2 * 86400, 0 },
						  { time(NULL) - 2 * 86400, 0 } });
		close(fd);
	}
	o.dir = dir;
	d = tracedir__open(&o, path, sizeof(path));
	if (!ASSERT_TRUE(d != NULL, path))
		return;
	ASSERT_EQ(tracedir__budget(d), 40 << 10, "--max-disk");
	ASSERT_EQ(said_removed(&s, old), 1, "the old file said removed past --max-age");
	ASSERT_TRUE(s.n && strstr(s.line[0], "--max-age"), "why: its age");
	td_proc(d, 100, ts, "workload", "/usr/bin/workload");
	td_proc(d, 200, ts, "llama-server", "/usr/bin/llama-server");
	td_proc(d, 300, ts, "idle", "/usr/bin/idle");
	/* 100 writes some files and exits, 200 runs on: under the budget */
	td_mmaps(d, 100, 1500, &ts);
	td_exit(d, 100, ts);
	td_mmaps(d, 200, 200, &ts);
	td_list(dir, &first_exited, &seen);
	ASSERT_TRUE(td_count(&first_exited, 100) >= 2, "the exited process's files");
	ASSERT_EQ(s.n, 1, "nothing removed under the budget");
	/* 200 grows past it: 100's files go before any of 200's */
	for (i = 0; i < 30; i++) {
		td_mmaps(d, 200, 100, &ts);
		td_list(dir, &now, &seen);
		if (td_count(&now, 100) && td_count(&now, 200) < td_count(&seen, 200))
			early_200++;
	}
	ASSERT_EQ(early_200, 0, "a running process's file went while an exited one's stayed");
	ASSERT_EQ(td_count(&now, 100), 0, "the exited process's files are gone");
	ASSERT_TRUE(td_count(&now, 200) >= 1, "the running process keeps its newest");
	ASSERT_EQ(td_count(&now, 300), 1, "the quiet process's current file");
	bytes = td_list(dir, &now, NULL);
	ASSERT_TRUE(bytes <= (40 << 10), "the budget held");
	printf("# %d files seen, %d now, %llu bytes; %d lines said\n", seen.n, now.n,
	       (unsigned long long)bytes, s.n);
	/* every file gone was said gone, once */
	for (i = 0; i < seen.n; i++) {
		if (td_has(&now, seen.name[i]))
			continue;
		if (!said_removed(&s, seen.name[i]) && ++unsaid)
			printf("# removed unsaid: %s\n", seen.name[i]);
		twice += said_removed(&s, seen.name[i]) > 1;
	}
	ASSERT_EQ(unsaid, 0, "no file removed without a word");
	ASSERT_EQ(twice, 0, "each removal said once");
	for (i = 0; i < s.n; i++)
		if (strncmp(s.line[i], "removed ", 8) ||
		    !(strstr(s.line[i], ": past --max-disk 40.0 KiB") ||
		      strstr(s.line[i], ": older than --max-age")))
			printf("# said: %s\n", s.line[i]), failed = 1;
	ASSERT_EQ(tracedir__close(d), 0, "no write error");
}

/* a budget only the current files break: none removed, said once */
static void test_tracedir_current_never(void)
{
	struct tracefile_info info = { .tool = "unit" };
	struct said s = {};
	struct tracedir_opts o = { .max_bytes = 1 << 20,
				   .max_age_ns = 3600000000000ull,
				   .retain = { .max_bytes = 4096, .say = said_line, .say_ctx = &s },
				   .info = &info };
	struct td_names now;
	char dir[128], err[256];
	struct tracedir *d;
	__u64 ts = 1000000000ull;
	int i;

	snprintf(dir, sizeof(dir), "%s/current", tmpdir);
	o.dir = dir;
	d = tracedir__open(&o, err, sizeof(err));
	if (!ASSERT_TRUE(d != NULL, err))
		return;
	td_proc(d, 100, ts, "a", "/bin/a");
	td_proc(d, 200, ts, "b", "/bin/b");
	for (i = 0; i < 10; i++) {
		td_mmaps(d, 100, 100, &ts);
		td_mmaps(d, 200, 100, &ts);
	}
	td_list(dir, &now, NULL);
	ASSERT_EQ(now.n, 2, "both current files kept");
	ASSERT_EQ(s.n, 1, "said once");
	ASSERT_TRUE(s.n && strstr(s.line[0], "current file is never removed"), s.line[0]);
	ASSERT_EQ(tracedir__close(d), 0, "no write error");
}

/* a pid that exits while its records still come: no second file, whatever
 * comes and however late (a zombie's PROC, samples, maps); a new process
 * that takes the pid (EXEC, or a PROC naming an executable) has its own; no
 * file before a record says what the process runs; a followed child's file
 * begins with its parent's executable under its own name */
static void test_tracedir_exit_no_ghost(void)
{
	struct tracefile_info info = { .tool = "unit" };
	struct tracedir_opts o = { .max_bytes = 1 << 20,
				   .max_age_ns = 3600000000000ull,
				   .retain = { .max_bytes = 1 << 30 },
				   .info = &info };
	struct {
		struct gmt_exec x;
	} ex = {};
	struct gmt_fork fk = {};
	struct gmt_rss rss = {};
	struct td_names now;
	char dir[128], err[256], path[400];
	struct tracedir *d;
	__u64 ts = 1000000000ull;
	int i, child = -1, ended = -1;

	snprintf(dir, sizeof(dir), "%s/ghost", tmpdir);
	o.dir = dir;
	d = tracedir__open(&o, err, sizeof(err));
	if (!ASSERT_TRUE(d != NULL, err))
		return;
	/* first seen by its RSS, as a found process is: no file yet */
	event__init(&rss.hdr, GMT_EV_RSS, sizeof(rss), ts, 1715);
	rss.bytes = 1 << 20;
	tracedir__write(d, &rss.hdr);
	td_mmaps(d, 1715, 10, &ts);
	td_list(dir, &now, NULL);
	ASSERT_EQ(now.n, 0, "no file before the process says what it runs");
	td_proc(d, 1715, ts, "workload", "/usr/bin/workload");
	td_mmaps(d, 1715, 50, &ts);
	td_exit(d, 1715, ts);
	/* 9 ms later the watch finds its zombie: a PROC with no executable */
	td_proc(d, 1715, ts + 9000000, "workload", "");
	td_proc(d, 1715, ts + 9000000, "", "");
	for (i = 0; i < 30; i++) { /* sampled on, past any time it is kept */
		ts += 1000000000ull;
		event__init(&rss.hdr, GMT_EV_RSS, sizeof(rss), ts, 1715);
		tracedir__write(d, &rss.hdr);
		td_mmaps(d, 1715, 1, &ts);
		tracedir__tick(d, ts);
	}
	ts += 60000000000ull; /* and quiet for a minute, then once more */
	tracedir__tick(d, ts);
	td_mmaps(d, 1715, 5, &ts);
	td_proc(d, 1715, ts, "", "");
	td_list(dir, &now, NULL);
	ASSERT_EQ(td_count(&now, 1715), 1, "one file of the exited pid, no ghost");
	for (i = 0; i < now.n; i++)
		ASSERT_TRUE(strncmp(now.name[i], "pid.", 4), now.name[i]);
	/* a new process takes the pid by exec: its own file */
	event__init(&ex.x.hdr, GMT_EV_EXEC, sizeof(ex), ts, 1715);
	snprintf(ex.x.comm, sizeof(ex.x.comm), "other");
	snprintf(ex.x.filename, sizeof(ex.x.filename), "/usr/bin/other");
	tracedir__write(d, &ex.x.hdr);
	td_mmaps(d, 1715, 5, &ts);
	/* the other's child, followed: its own file, named as the fork says */
	td_proc(d, 1715, ts, "other", "/usr/bin/other");
	event__init(&fk.hdr, GMT_EV_FORK, sizeof(fk), ts, 1715);
	fk.child_pid = 1800;
	fk.child_tid = 1800;
	fk.followed = 1;
	snprintf(fk.comm, sizeof(fk.comm), "worker");
	tracedir__write(d, &fk.hdr);
	td_mmaps(d, 1800, 5, &ts);
	/* a pid that exits before it says what it runs: no file at all */
	td_mmaps(d, 1900, 5, &ts);
	td_exit(d, 1900, ts);
	td_proc(d, 1900, ts + 1000, "late", "");
	ASSERT_EQ(tracedir__close(d), 0, "no write error");
	td_list(dir, &now, NULL);
	ASSERT_EQ(td_count(&now, 1715), 2, "the exited pid's file and the new process's");
	ASSERT_EQ(td_count(&now, 1800), 1, "the child's file");
	ASSERT_EQ(td_count(&now, 1900), 0, "no file without its executable and start");
	for (i = 0; i < now.n; i++) {
		struct typed t = {};
		struct replay_result r;

		snprintf(path, sizeof(path), "%s/%s", dir, now.name[i]);
		if (tracefile__replay(path, typed_sink, &t, &r))
			printf("# %s does not replay\n", now.name[i]), failed = 1;
		if (!strncmp(now.name[i], "workload.", 9))
			ended = t.n && t.type[t.n - 1] == GMT_EV_EXIT;
		if (!strncmp(now.name[i], "worker.", 7))
			child = t.n && t.type[0] == GMT_EV_PROC && t.pid[0] == 1800;
		ASSERT_TRUE(!strncmp(now.name[i], "workload.", 9) ||
				    !strncmp(now.name[i], "other.", 6) ||
				    !strncmp(now.name[i], "worker.", 7),
			    now.name[i]);
	}
	ASSERT_EQ(child, 1, "the child's file begins with its PROC");
	ASSERT_EQ(ended, 1, "the exited process's file ends at its exit");
}
/* --- end of tracedir retention tests --- */

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "unit_tracefile_roundtrip", test_tracefile_roundtrip },
	{ "unit_tracedir_rotates", test_tracedir_rotates },
	{ "unit_tracefile_truncated_everywhere", test_tracefile_truncated_everywhere },
	{ "unit_tracefile_corrupt_block", test_tracefile_corrupt_block },
	{ "unit_tracefile_bad_files", test_tracefile_bad_files },
	{ "unit_event_valid", test_event_valid },
	{ "unit_model_rss_and_faults", test_model_rss_and_faults },
	{ "unit_model_mappings", test_model_mappings },
	{ "unit_model_exec_resets", test_model_exec_resets },
	{ "unit_report_text", test_report_text },
	{ "unit_report_json", test_report_json },
	{ "unit_random_records_survive", test_random_records_survive },
	{ "unit_model_gpu", test_model_gpu },
	{ "unit_model_bo", test_model_bo },
	{ "unit_drm_fdinfo", test_drm_fdinfo },
	{ "unit_model_requests", test_model_requests },
	{ "unit_model_concurrent_slots", test_model_concurrent_slots },
	{ "unit_model_streams_headers_tie", test_model_streams_headers_tie },
	{ "unit_analyze_shapes", test_analyze_shapes },
	{ "unit_analyze_controls", test_analyze_controls },
	{ "unit_findings", test_findings },
	{ "unit_findings_counted_once", test_findings_counted_once },
	{ "unit_findings_first_left_out", test_findings_first_left_out },
	{ "unit_findings_long_run", test_findings_long_run },
	{ "unit_top_layout", test_top_layout },
	{ "unit_request_delta_one_rule", test_request_delta_one_rule },
	{ "unit_roles_by_stack", test_roles_by_stack },
	{ "unit_top_marks_image_requests", test_top_marks_image_requests },
	{ "unit_findings_by_role_and_bound", test_findings_by_role_and_bound },
	{ "unit_llama_conf_fit_scaled", test_llama_conf_fit_scaled },
	{ "unit_mappings_bounded", test_mappings_bounded },
	{ "unit_series_bounded", test_series_bounded },
	{ "unit_requests_bounded", test_requests_bounded },
	{ "unit_gpu_probe_shapes", test_gpu_probe_shapes },
	{ "unit_procfs_map_line", test_procfs_map_line },
	{ "unit_procfs_open_as", test_procfs_open_as },
	{ "unit_procfs_redact", test_procfs_redact },
	{ "unit_fmt", test_fmt },
	{ "unit_fmt_clean", test_fmt_clean },
	{ "unit_words_of_each_code", test_words_of_each_code },
	{ "unit_search_after", test_search_after },
	{ "unit_model_pid_taken_after_exit", test_model_pid_taken_after_exit },
	{ "unit_timings_scan", test_timings_scan },
	{ "unit_tracedir_keeps_bytes", test_tracedir_keeps_bytes },
	{ "unit_tracedir_current_never", test_tracedir_current_never },
	{ "unit_tracedir_exit_no_ghost", test_tracedir_exit_no_ghost },
};

int main(int argc, char **argv)
{
	size_t i;
	int any = 0;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		failed = 0;
		tests[i].fn();
		printf("%s %s\n", failed ? "not ok" : "ok", tests[i].name);
		fflush(stdout);
		any |= failed;
	}
	if (fork() == 0)
		execlp("rm", "rm", "-rf", tmpdir, (char *)NULL);
	return any;
}
