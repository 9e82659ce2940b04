// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of what the source reads: /proc (maps lines, files opened
 * as the target, redaction), the GPU probes' shapes, and the BPF timings
 * scanner (bpf/timings_parse.bpf.h) over response bodies. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "source/gpuprobes.h"
#include "source/procfs.h"
#include "stream/gpufuncs.h"
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "timings_parse.bpf.h"

/* /proc/PID/maps lines, as the symbolizer, the GPU library scan and the
 * smaps reader all read them */
void test_procfs_map_line(void)
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
void test_procfs_open_as(void)
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
void test_procfs_redact(void)
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
void test_gpu_probe_shapes(void)
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

void test_timings_scan(void)
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
