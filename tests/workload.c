// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A test workload that grows anonymous memory by a known amount per step and
 * touches a known number of pages, then prints what it did as JSON.
 *
 *   workload [--steps N] [--step-mib M] [--step-ms MS] [--wait FIFO]
 *            [--hold FIFO] [--fork] [--churn N]
 *
 * --wait FIFO   read one byte from FIFO before the first step (the tracer is in)
 * --hold FIFO   read one byte from FIFO before exiting
 * --fork        do the steps in a child process too
 * --churn N     then N small mmap/munmap pairs (fills a ring buffer)
 * --churn-kib K each of K KiB, its first page touched (default 4, untouched)
 * --spawn N     then N short-lived children, one after another, each
 *               touching 64 KiB (a job runner over a long run)
 * --http N      then N HTTP/1.1 requests to itself over loopback TCP, one
 *               keep-alive connection, a server thread answering each
 * --out FILE    write the summary to FILE (may be a FIFO) instead of stdout
 * --threads N   start and join N threads first
 * --spare-mib M each step also maps M MiB it never touches
 * --entries N   each step also mallocs N entries of --entry-kib K (default
 *               96: from malloc's heap, not mmap) and fills them, as a cache
 *               of saved states does (built without frame pointers too:
 *               workload-nofp)
 * --fill-read   fill the entries with read(2) from /dev/zero: the kernel
 *               touches them first
 * --crash       the HTTP server thread (--http) dereferences NULL while it
 *               serves the last request, in crash_here < http_server
 * --crash-heap  instead, it overwrites a freed chunk's link and mallocs:
 *               glibc's inlined tcache check aborts in malloc itself
 * --crash-gp    instead, it reads a non-canonical address: on x86-64 a
 *               general protection fault, SIGSEGV with no address
 * --map FILE    map FILE (read-only, shared) before waiting: a file named
 *               as a GPU library is what --watch finds a GPU process by
 * --secret      the steps run below a frame whose 8 KiB of stack hold
 *               "SECRET-REQUEST-BYTES!" over and over, as a server's
 *               stack holds a request: none of it may leave the kernel
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_STEPS 1024

struct totals {
	long mmaps, pages, bytes, spare_bytes, entry_bytes;
	unsigned long addrs[MAX_STEPS];
};

static void wait_fifo(const char *path)
{
	char c;
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) < 0) {
		perror(path);
		exit(2);
	}
	close(fd);
}

/* noinline so the tracer's stacks can name it */
__attribute__((noinline)) static char *map_anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	asm volatile("" ::: "memory");
	return p == MAP_FAILED ? NULL : p;
}

__attribute__((noinline)) static void grow_step(size_t len, struct totals *t)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = map_anon(len);
	size_t off;

	if (!p) {
		perror("mmap");
		exit(2);
	}
	/* one fault per page: no transparent huge pages */
	madvise(p, len, MADV_NOHUGEPAGE);
	for (off = 0; off < len; off += page)
		p[off] = 1;
	if (t->mmaps < MAX_STEPS)
		t->addrs[t->mmaps] = (unsigned long)p;
	t->mmaps++;
	t->pages += len / page;
	t->bytes += len;
}

/* address space only: mapped, never touched */
__attribute__((noinline)) static void spare_step(size_t len, struct totals *t)
{
	if (!len)
		return;
	if (!map_anon(len)) {
		perror("mmap");
		exit(2);
	}
	t->spare_bytes += len;
}

static int fill_fd = -1; /* --fill-read: /dev/zero */

/* a cache entry: malloc'ed and filled, held until exit */
__attribute__((noinline)) static void save_entry(size_t len, struct totals *t)
{
	char *p = malloc(len);
	size_t off;
	ssize_t n;

	if (!p) {
		perror("malloc");
		exit(2);
	}
	if (fill_fd < 0)
		memset(p, 1, len);
	for (off = 0; fill_fd >= 0 && off < len; off += n)
		if ((n = read(fill_fd, p + off, len - off)) <= 0) {
			perror("read");
			exit(2);
		}
	asm volatile("" ::"r"(p) : "memory");
	t->entry_bytes += len;
}

static void *idle_thread(void *arg)
{
	return arg;
}

static void run_threads(int n)
{
	pthread_t t;
	int i;

	for (i = 0; i < n; i++)
		if (!pthread_create(&t, NULL, idle_thread, NULL))
			pthread_join(t, NULL);
}

static void churn(long n, long kib)
{
	size_t len = kib << 10;
	long i;

	for (i = 0; i < n; i++) {
		char *p = mmap(NULL, len, PROT_READ | (kib > 4 ? PROT_WRITE : 0),
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			continue;
		if (kib > 4)
			*(volatile char *)p = 1;
		munmap(p, len);
	}
}

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void run_steps(int steps, size_t step, size_t spare, long step_ms, int entries, size_t entry,
		      struct totals *t)
{
	struct timespec ts = { step_ms / 1000, (step_ms % 1000) * 1000000L };
	int i, k;

	for (i = 0; i < steps; i++) {
		if (step)
			grow_step(step, t);
		spare_step(spare, t);
		for (k = 0; k < entries; k++)
			save_entry(entry, t);
		if (step_ms)
			nanosleep(&ts, NULL);
	}
}

/* the steps, below a frame full of a request-like secret */
__attribute__((noinline)) static void run_with_secret(int steps, size_t step, size_t spare,
						      long step_ms, int entries, size_t entry,
						      struct totals *t)
{
	static const char secret[] = "SECRET-REQUEST-BYTES!";
	char buf[8192];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = secret[i % (sizeof(secret) - 1)];
	asm volatile("" ::"r"(buf) : "memory");
	run_steps(steps, step, spare, step_ms, entries, entry, t);
	asm volatile("" ::"r"(buf) : "memory");
}

static void spawn(long n)
{
	long i;

	for (i = 0; i < n; i++) {
		pid_t c = fork();

		if (!c) {
			char *p = map_anon(64 << 10);

			memset(p, 1, 64 << 10);
			_exit(0);
		}
		if (c < 0 || waitpid(c, NULL, 0) < 0) {
			perror("spawn");
			exit(2);
		}
	}
}

static const char http_req[] = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
static const char http_resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/* reads one whole message of `len` bytes */
static void read_msg(int fd, size_t len)
{
	char buf[256];
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		r = read(fd, buf, len - got < sizeof(buf) ? len - got : sizeof(buf));
		if (r <= 0) {
			perror("http read");
			exit(2);
		}
		got += r;
	}
}

static long http_n;
static int http_crash;

/* a crash in code of the program's own: a fault reading address 0 */
__attribute__((noinline)) static int crash_here(volatile int *p)
{
	return *p;
}

/* a use after free: the freed chunk's tcache link overwritten, so the
 * second malloc of its size finds a misaligned chunk and glibc aborts */
__attribute__((noinline)) static void heap_here(void)
{
	char *volatile a = malloc(40), *volatile b = malloc(40);

	free(b); /* two in the cache: the second malloc reads a's link */
	free(a);
	for (int i = 0; i < 8; i++) /* no memset: a store the compiler keeps */
		((volatile char *)a)[i] = 0x41;
	b = malloc(40);
	b = malloc(40);
	fprintf(stderr, "not reached: %p\n", (void *)b);
}

static void *http_server(void *arg)
{
	int ls = *(int *)arg, fd = accept(ls, NULL, NULL);
	long i;

	if (fd < 0) {
		perror("accept");
		exit(2);
	}
	/* the truth for a crash's thread */
	if (http_crash)
		fprintf(stderr, "http_server tid %ld\n", (long)syscall(SYS_gettid));
	for (i = 0; i < http_n; i++) {
		read_msg(fd, sizeof(http_req) - 1);
		if (http_crash == 1 && i == http_n - 1)
			crash_here(NULL);
		if (http_crash == 3 && i == http_n - 1)
			crash_here((volatile int *)0x8000000000000000ull);
		if (http_crash == 2 && i == http_n - 1)
			heap_here();
		if (write(fd, http_resp, sizeof(http_resp) - 1) != sizeof(http_resp) - 1)
			exit(2);
	}
	close(fd);
	return NULL;
}

static void http(long n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0), fd, one = 1;
	pthread_t t;
	long i;

	if (!n)
		return;
	http_n = n;
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &alen) ||
	    pthread_create(&t, NULL, http_server, &ls)) {
		perror("http server");
		exit(2);
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("http connect");
		exit(2);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (i = 0; i < n; i++) {
		if (write(fd, http_req, sizeof(http_req) - 1) != sizeof(http_req) - 1)
			exit(2);
		read_msg(fd, sizeof(http_resp) - 1);
	}
	close(fd);
	pthread_join(t, NULL);
	close(ls);
}

int main(int argc, char **argv)
{
	const char *wait = NULL, *hold = NULL, *out = NULL;
	FILE *f = stdout;
	int i, steps = 8, do_fork = 0, threads = 0;
	long step_mib = 16, step_ms = 0, churn_n = 0, churn_kib = 4, spare_mib = 0, steps_ns,
	     churn_ns;
	long spawn_n = 0, http_reqs = 0;
	long entries = 0, entry_kib = 96;
	int secret = 0;
	struct totals t = { 0 };
	pid_t child = 0;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "0";

		if (!strcmp(argv[i], "--steps"))
			steps = atoi(v), i++;
		else if (!strcmp(argv[i], "--step-mib"))
			step_mib = atol(v), i++;
		else if (!strcmp(argv[i], "--spare-mib"))
			spare_mib = atol(v), i++;
		else if (!strcmp(argv[i], "--entries"))
			entries = atol(v), i++;
		else if (!strcmp(argv[i], "--entry-kib"))
			entry_kib = atol(v), i++;
		else if (!strcmp(argv[i], "--step-ms"))
			step_ms = atol(v), i++;
		else if (!strcmp(argv[i], "--wait"))
			wait = v, i++;
		else if (!strcmp(argv[i], "--hold"))
			hold = v, i++;
		else if (!strcmp(argv[i], "--out"))
			out = v, i++;
		else if (!strcmp(argv[i], "--churn"))
			churn_n = atol(v), i++;
		else if (!strcmp(argv[i], "--churn-kib"))
			churn_kib = atol(v) > 4 ? atol(v) : 4, i++;
		else if (!strcmp(argv[i], "--spawn"))
			spawn_n = atol(v), i++;
		else if (!strcmp(argv[i], "--crash"))
			http_crash = 1;
		else if (!strcmp(argv[i], "--crash-heap"))
			http_crash = 2;
		else if (!strcmp(argv[i], "--crash-gp"))
			http_crash = 3;
		else if (!strcmp(argv[i], "--http"))
			http_reqs = atol(v), i++;
		else if (!strcmp(argv[i], "--threads"))
			threads = atoi(v), i++;
		else if (!strcmp(argv[i], "--fork"))
			do_fork = 1;
		else if (!strcmp(argv[i], "--secret"))
			secret = 1;
		else if (!strcmp(argv[i], "--fill-read"))
			fill_fd = open("/dev/zero", O_RDONLY);
		else if (!strcmp(argv[i], "--map")) {
			int fd = open(v, O_RDONLY);

			i++;
			if (fd < 0 ||
			    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) {
				perror(v);
				return 2;
			}
		} else {
			fprintf(stderr, "workload: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	wait_fifo(wait);
	run_threads(threads);
	if (do_fork) {
		child = fork();
		if (!child) {
			run_steps(steps, step_mib << 20, spare_mib << 20, step_ms, entries,
				  entry_kib << 10, &t);
			_exit(0);
		}
	}
	steps_ns = now_ns();
	if (secret)
		run_with_secret(steps, step_mib << 20, spare_mib << 20, step_ms, entries,
				entry_kib << 10, &t);
	else
		run_steps(steps, step_mib << 20, spare_mib << 20, step_ms, entries, entry_kib << 10,
			  &t);
	steps_ns = now_ns() - steps_ns;
	churn_ns = now_ns();
	churn(churn_n, churn_kib);
	spawn(spawn_n);
	http(http_reqs);
	churn_ns = now_ns() - churn_ns;
	if (child > 0)
		waitpid(child, NULL, 0);
	if (out && !(f = fopen(out, "w"))) {
		perror(out);
		return 2;
	}
	fprintf(f,
		"{\"pid\": %d, \"mmaps\": %ld, \"pages\": %ld, \"bytes\": %ld, \"spare_bytes\": %ld, "
		"\"entry_bytes\": %ld, \"page_size\": %ld, \"churn\": %ld, \"steps_ns\": %ld, "
		"\"churn_ns\": %ld, \"addrs\": [",
		getpid(), t.mmaps, t.pages, t.bytes, t.spare_bytes, t.entry_bytes,
		sysconf(_SC_PAGESIZE), churn_n, steps_ns, churn_ns);
	for (i = 0; i < t.mmaps && i < MAX_STEPS; i++)
		fprintf(f, "%s%lu", i ? ", " : "", t.addrs[i]);
	fprintf(f, "]}\n");
	fclose(f);
	wait_fifo(hold);
	return 0;
}
