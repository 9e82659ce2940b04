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

/* --watch -o DIR: a file per process, started again past its size, none
 * removed within the budget; each begins with the session and
 * what the process said of itself, so it replays alone */
void test_tracedir_rotates(void)
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
	{
		struct gmt_module m;

		event__init(&m.hdr, GMT_EV_MODULE, sizeof(m), 1, 1);
		strcpy(m.name, "libc.so.6");
		ASSERT_TRUE(event__valid(&m.hdr, sizeof(m)), "a module");
		memset(m.build_id, 'a', sizeof(m.build_id));
		ASSERT_TRUE(!event__valid(&m.hdr, sizeof(m)), "an unterminated build id");
		m.build_id[0] = 0;
		memset(m.name, 'x', sizeof(m.name));
		ASSERT_TRUE(!event__valid(&m.hdr, sizeof(m)), "an unterminated name");
	}
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
void test_tracedir_keeps_bytes(void)
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
void test_tracedir_current_never(void)
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
void test_tracedir_exit_no_ghost(void)
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

/* two processes load one Vulkan driver: the helper reads it once, for the
 * first, and its devices are in the second's file too (its allocations'
 * kinds came out "memory" in a replay of that file alone) */
void test_tracedir_devices_in_every_file(void)
{
	struct tracefile_info info = { .tool = "unit" };
	struct tracedir_opts o = { .max_bytes = 1 << 20,
				   .max_age_ns = 3600000000000ull,
				   .retain = { .max_bytes = 1 << 30 },
				   .info = &info };
	struct gmt_gpu_device dev = {};
	struct td_names now;
	char dir[128], err[256], path[400];
	struct tracedir *d;
	__u64 ts = 1000000000ull;
	int i, k, files = 0;

	snprintf(dir, sizeof(dir), "%s/devices", tmpdir);
	o.dir = dir;
	d = tracedir__open(&o, err, sizeof(err));
	if (!ASSERT_TRUE(d != NULL, err))
		return;
	td_proc(d, 300, ts, "first", "/usr/bin/first");
	td_proc(d, 301, ts, "second", "/usr/bin/second");
	event__init(&dev.hdr, GMT_EV_GPU_DEVICE, sizeof(dev), ts + 1000, 300);
	dev.api = GMT_API_VK;
	dev.nr_types = 1;
	dev.types[0].flags = 1;
	tracedir__write(d, &dev.hdr);
	td_mmaps(d, 301, 5, &ts);
	td_proc(d, 302, ts, "third", "/usr/bin/third"); /* a file started after */
	ASSERT_EQ(tracedir__close(d), 0, "no write error");
	td_list(dir, &now, NULL);
	for (i = 0; i < now.n; i++) {
		struct typed t = {};
		struct replay_result r;
		int n = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, now.name[i]);
		if (!ASSERT_EQ(tracefile__replay(path, typed_sink, &t, &r), 0, now.name[i]))
			continue;
		for (k = 0; k < (int)t.n; k++)
			n += t.type[k] == GMT_EV_GPU_DEVICE;
		ASSERT_EQ(n, 1, now.name[i]);
		files++;
	}
	ASSERT_EQ(files, 3, "a file for each process");
}
