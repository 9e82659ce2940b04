// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the stream: trace files written and read back (whole,
 * truncated, corrupt, bad), a directory of rotated files, event validation. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "stream/tracedir.h"
#include "stream/tracefile.h"

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

void test_tracefile_roundtrip(void)
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

/* --watch -o DIR: a file per process, started again past its size, the
 * oldest of a name removed past --keep; each begins with the session and
 * what the process said of itself, so it replays alone */
void test_tracedir_rotates(void)
{
	struct tracefile_info info = { .tool = "unit" };
	struct tracedir_opts o = {
		.max_bytes = 8192, .max_age_ns = 3600000000000ull, .keep = 3, .info = &info
	};
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
	/* a file of another user under our name, dated ahead: --keep neither
	 * counts nor removes it (as root, which can give it away) */
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
	tracedir__write(d, &proc.p.hdr);
	event__init(&proc.p.hdr, GMT_EV_PROC, sizeof(proc), ts, 200);
	snprintf(proc.p.comm, sizeof(proc.p.comm), "work/1 x");
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
	ASSERT_EQ(llama, 3, "rotated, and the oldest removed past --keep 3");
	ASSERT_TRUE(worker >= 1 && worker <= 3, "the worker's files");
	ASSERT_EQ(ended, 1, "the worker's last file ends at its exit, none after it");
	ASSERT_EQ(other, 0, "names from the comm, made safe");
	ASSERT_EQ(bad, 0,
		  "each file 0600, whole, one process, starting with its session, "
		  "process and stacks");
}

/* cut at every offset: never a crash, whole blocks before the cut replay */
void test_tracefile_truncated_everywhere(void)
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
void test_tracefile_corrupt_block(void)
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

void test_tracefile_bad_files(void)
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

void test_event_valid(void)
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
