// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Drives a CUDA driver or HIP library loaded with dlopen (the fakes of
 * tests/fake in CI) through a known script of allocations, frees, failures,
 * VMM and graph calls, and prints what it expects a tracer to count, in the
 * shape of the report's gpu.by_kind entries.
 *
 *   gpuwork --lib PATH --api cuda|hip [--n N] [--wait FIFO] [--out FILE]
 *   gpuwork --lib PATH --escape N: a cuMemAlloc_v2 jumped out of (its return
 *       never comes), then N of 1 MiB from the same level
 *   gpuwork --lib PATH --loop N       time N cuMemAlloc_v2/cuMemFree_v2 pairs
 *
 * --ready FIFO write a line once the library is loaded
 * --wait FIFO  read one byte after dlopen, before the first call (the tracer
 *              has attached to the library)
 * --hold FIFO  read one byte after writing the summary, before exiting (its
 *              memory stays live while the tracer samples) */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fifo.h"
#include <time.h>

typedef int (*out_size_fn)(void **, size_t);
typedef int (*out_size_flags_fn)(void **, size_t, unsigned int);
typedef int (*out_size_ptr_fn)(void **, size_t, void *);
typedef int (*out_size_ptr2_fn)(void **, size_t, void *, void *);
typedef int (*handle_fn)(void *);
typedef int (*handle_ptr_fn)(void *, void *);
typedef int (*pitch_fn)(void **, size_t *, size_t, size_t, unsigned int);
typedef int (*create_fn)(void **, size_t, const void *, unsigned long long);
typedef int (*map_fn)(void *, size_t, size_t, void *, unsigned long long);
typedef int (*ptr_size_fn)(void *, size_t);
typedef int (*reserve_fn)(void **, size_t, size_t, void *, unsigned long long);
typedef int (*inst5_fn)(void **, void *, void *, char *, size_t);
typedef int (*inst_flags_fn)(void **, void *, unsigned long long);
typedef int (*inst_params_fn)(void **, void *, void *);
typedef int (*info_fn)(size_t *, size_t *);
typedef int (*attr_fn)(int *, int, int);

#define MIB (1ull << 20)
#define MAX_KINDS 8

static void *lib;

struct expect {
	const char *kind;
	unsigned long long allocs, frees, failed, alloc_bytes, live_bytes;
};

static struct expect ex[MAX_KINDS];
static int nr_ex;

static struct expect *kind(const char *name)
{
	int i;

	for (i = 0; i < nr_ex; i++)
		if (!strcmp(ex[i].kind, name))
			return &ex[i];
	ex[nr_ex].kind = name;
	return &ex[nr_ex++];
}

static void *sym(const char *name)
{
	void *f = dlsym(lib, name);

	if (!f) {
		fprintf(stderr, "gpuwork: %s: %s\n", name, dlerror());
		exit(1);
	}
	return f;
}

static void check(int r, const char *what)
{
	if (r) {
		fprintf(stderr, "gpuwork: %s returned %d\n", what, r);
		exit(1);
	}
}

static void alloc_ok(const char *k, unsigned long long n)
{
	kind(k)->allocs++;
	kind(k)->alloc_bytes += n;
	kind(k)->live_bytes += n;
}

static void free_ok(const char *k, unsigned long long n)
{
	kind(k)->frees++;
	kind(k)->live_bytes -= n;
}

/* noinline with frame pointers: the report's stacks must name these */
__attribute__((noinline)) static void *alloc_weights(const char *fn, size_t n)
{
	void *p = NULL;

	check(((out_size_fn)sym(fn))(&p, n), fn);
	alloc_ok("device", n);
	return p;
}

__attribute__((noinline)) static int alloc_too_much(const char *fn, size_t n)
{
	void *p = NULL;
	int r = ((out_size_fn)sym(fn))(&p, n);

	kind("device")->failed++;
	return r;
}

/* CU_DEVICE_ATTRIBUTE_INTEGRATED of device 0 */
static int integrated = -1;

/* as cudart's cudaGetDeviceProperties does: every attribute, one by one
 * (the tracer keeps the one it reads, 18: integrated) */
static void device_properties(void)
{
	attr_fn get = (attr_fn)sym("cuDeviceGetAttribute");
	int a, v;

	for (a = 1; a <= 120; a++) {
		check(get(&v, a, 0), "attribute");
		if (a == 18)
			integrated = v;
	}
}

static void cuda_script(int n)
{
	void *p[64], *h[2], *va, *g[3], *graph = (void *)1, *q;
	size_t pitch, fr, total;
	int i;

	device_properties();
	for (i = 0; i < n; i++)
		p[i] = alloc_weights("cuMemAlloc_v2", (i + 1) * MIB);
	check(((pitch_fn)sym("cuMemAllocPitch_v2"))(&q, &pitch, 1000, 100, 4), "pitch");
	alloc_ok("device", pitch * 100);
	check(((out_size_fn)sym("cuMemAllocHost_v2"))(&p[n], 2 * MIB), "host");
	alloc_ok("host-pinned", 2 * MIB);
	check(((out_size_flags_fn)sym("cuMemHostAlloc"))(&q, 3 * MIB, 0), "hostalloc");
	alloc_ok("host-pinned", 3 * MIB);
	check(((out_size_flags_fn)sym("cuMemAllocManaged"))(&q, 4 * MIB, 1), "managed");
	alloc_ok("managed", 4 * MIB);
	/* calls the exported FromPool inside the library: counted once */
	check(((out_size_ptr_fn)sym("cuMemAllocAsync"))(&p[n + 1], 5 * MIB, NULL), "async");
	alloc_ok("device", 5 * MIB);
	check(((out_size_ptr2_fn)sym("cuMemAllocFromPoolAsync"))(&q, 6 * MIB, NULL, NULL), "pool");
	alloc_ok("device", 6 * MIB);
	check(((reserve_fn)sym("cuMemAddressReserve"))(&va, 64 * MIB, 0, NULL, 0), "reserve");
	alloc_ok("va-reserved", 64 * MIB);
	for (i = 0; i < 2; i++) {
		check(((create_fn)sym("cuMemCreate"))(&h[i], 8 * MIB, NULL, 0), "create");
		alloc_ok("vmm-physical", 8 * MIB);
		check(((map_fn)sym("cuMemMap"))((char *)va + i * 8 * MIB, 8 * MIB, 0, h[i], 0),
		      "map");
		alloc_ok("vmm-mapped", 8 * MIB);
	}
	check(((ptr_size_fn)sym("cuMemUnmap"))((char *)va + 8 * MIB, 8 * MIB), "unmap");
	free_ok("vmm-mapped", 8 * MIB);
	check(((handle_fn)sym("cuMemRelease"))(h[1]), "release");
	free_ok("vmm-physical", 8 * MIB);
	check(((inst5_fn)sym("cuGraphInstantiate"))(&g[0], graph, NULL, NULL, 0), "inst");
	check(((inst_flags_fn)sym("cuGraphInstantiateWithFlags"))(&g[1], graph, 0), "inst");
	check(((inst_params_fn)sym("cuGraphInstantiateWithParams"))(&g[2], graph, NULL), "inst");
	for (i = 0; i < 3; i++)
		alloc_ok("graph-exec", 0);
	check(((handle_fn)sym("cuGraphExecDestroy"))(g[0]), "destroy");
	free_ok("graph-exec", 0);
	check(((info_fn)sym("cuMemGetInfo_v2"))(&fr, &total), "info");
	for (i = 0; i < n / 2; i++) {
		check(((handle_fn)sym("cuMemFree_v2"))(p[i]), "free");
		free_ok("device", (i + 1) * MIB);
	}
	check(((handle_fn)sym("cuMemFreeHost"))(p[n]), "freehost");
	free_ok("host-pinned", 2 * MIB);
	check(((handle_ptr_fn)sym("cuMemFreeAsync"))(p[n + 1], NULL), "freeasync");
	free_ok("device", 5 * MIB);
	if (alloc_too_much("cuMemAlloc_v2", 1ull << 50) != 2)
		exit(1);
}

static void hip_script(int n)
{
	void *p[64], *h, *g[2], *graph = (void *)1, *q;
	int i;

	for (i = 0; i < n; i++)
		p[i] = alloc_weights("hipMalloc", (i + 1) * MIB);
	check(((out_size_flags_fn)sym("hipMallocManaged"))(&q, 4 * MIB, 1), "managed");
	alloc_ok("managed", 4 * MIB);
	check(((out_size_flags_fn)sym("hipHostMalloc"))(&p[n], 2 * MIB, 0), "host");
	alloc_ok("host-pinned", 2 * MIB);
	check(((out_size_ptr_fn)sym("hipMallocAsync"))(&p[n + 1], 5 * MIB, NULL), "async");
	alloc_ok("device", 5 * MIB);
	check(((create_fn)sym("hipMemCreate"))(&h, 8 * MIB, NULL, 0), "create");
	alloc_ok("vmm-physical", 8 * MIB);
	check(((inst5_fn)sym("hipGraphInstantiate"))(&g[0], graph, NULL, NULL, 0), "inst");
	check(((inst_flags_fn)sym("hipGraphInstantiateWithFlags"))(&g[1], graph, 0), "inst");
	alloc_ok("graph-exec", 0);
	alloc_ok("graph-exec", 0);
	check(((handle_fn)sym("hipGraphExecDestroy"))(g[1]), "destroy");
	free_ok("graph-exec", 0);
	for (i = 0; i < n / 2; i++) {
		check(((handle_fn)sym("hipFree"))(p[i]), "free");
		free_ok("device", (i + 1) * MIB);
	}
	check(((handle_fn)sym("hipHostFree"))(p[n]), "hostfree");
	free_ok("host-pinned", 2 * MIB);
	check(((handle_ptr_fn)sym("hipFreeAsync"))(p[n + 1], NULL), "freeasync");
	free_ok("device", 5 * MIB);
	check(((handle_fn)sym("hipMemRelease"))(h), "release");
	free_ok("vmm-physical", 8 * MIB);
	if (alloc_too_much("hipMalloc", 1ull << 50) != 2)
		exit(1);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* an allocation that never returns (the stand-in jumps out of it), then n
 * allocations of 1 MiB from the same level: each must still be seen */
static void escape(int n)
{
	void (*set)(jmp_buf *) = (void (*)(jmp_buf *))sym("gmt_fake_escape");
	out_size_fn alloc = (out_size_fn)sym("cuMemAlloc_v2");
	static jmp_buf j;
	void *p;
	int i;

	set(&j);
	if (!setjmp(j))
		alloc(&p, 12345);
	for (i = 0; i < n; i++) {
		check(alloc(&p, MIB), "alloc");
		alloc_ok("device", MIB);
	}
}

/* the benchmark: alloc/free pairs, nothing else */
static void loop(long n)
{
	out_size_fn alloc = (out_size_fn)sym("cuMemAlloc_v2");
	handle_fn release = (handle_fn)sym("cuMemFree_v2");
	double t0 = now_s(), t;
	void *p;
	long i;

	for (i = 0; i < n; i++) {
		check(alloc(&p, 4096), "alloc");
		check(release(p), "free");
	}
	t = now_s() - t0;
	printf("{\"pairs\": %ld, \"seconds\": %.3f, \"ns_per_pair\": %.0f}\n", n, t, t * 1e9 / n);
}

int main(int argc, char **argv)
{
	const char *path = NULL, *api = "cuda", *wait = NULL, *out = NULL, *ready = NULL,
		   *hold = NULL;
	long loops = 0;
	int n = 8, i, escapes = 0;
	FILE *f;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(argv[i], "--lib"))
			path = v, i++;
		else if (!strcmp(argv[i], "--api"))
			api = v, i++;
		else if (!strcmp(argv[i], "--n"))
			n = atoi(v), i++;
		else if (!strcmp(argv[i], "--ready"))
			ready = v, i++;
		else if (!strcmp(argv[i], "--wait"))
			wait = v, i++;
		else if (!strcmp(argv[i], "--hold"))
			hold = v, i++;
		else if (!strcmp(argv[i], "--out"))
			out = v, i++;
		else if (!strcmp(argv[i], "--loop"))
			loops = atol(v), i++;
		else if (!strcmp(argv[i], "--escape"))
			escapes = atoi(v), i++;
		else {
			fprintf(stderr, "gpuwork: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (!path || n < 0 || n > 60) {
		fprintf(stderr, "usage: gpuwork --lib PATH [--api cuda|hip] [--n N] [--loop N]\n");
		return 2;
	}
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "gpuwork: %s\n", dlerror());
		return 1;
	}
	say_ready(ready);
	wait_fifo(wait);
	if (loops) {
		loop(loops);
		return 0;
	}
	if (escapes)
		escape(escapes);
	else if (!strcmp(api, "hip"))
		hip_script(n);
	else
		cuda_script(n);
	f = out ? fopen(out, "w") : stdout;
	if (!f)
		return 1;
	fprintf(f, "{\"api\": \"%s\", \"by_kind\": [", !strcmp(api, "hip") ? "HIP" : "CUDA");
	for (i = 0; i < nr_ex; i++)
		fprintf(f,
			"%s{\"kind\": \"%s\", \"allocs\": %llu, \"frees\": %llu, \"failed\": %llu, "
			"\"alloc_bytes\": %llu, \"live_bytes\": %llu}",
			i ? ", " : "", ex[i].kind, ex[i].allocs, ex[i].frees, ex[i].failed,
			ex[i].alloc_bytes, ex[i].live_bytes);
	fprintf(f, "]");
	if (integrated >= 0)
		fprintf(f, ", \"integrated\": %d", integrated);
	fprintf(f, "}\n");
	if (f != stdout)
		fclose(f);
	wait_fifo(hold);
	return 0;
}
