// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A deliberate leak with a known owner, injected into the real llama-server
 * by LD_PRELOAD: each call of llama_sampler_chain_init (the server makes a
 * slot's sampler once a request, common_sampler_init) leaks LEAK_KIB KiB,
 * written to, from gmt_leak_keep, a function of its own. The ground truth
 * is its own count: after each call LEAK_LOG holds "CALLS BYTES". */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct llama_sampler_chain_params {
	bool no_perf;
};

static unsigned long calls, leaked;
static void *kept; /* a list, so that nothing reports it unreachable */

__attribute__((noinline, visibility("default"))) void gmt_leak_keep(size_t bytes)
{
	void **b = malloc(bytes);

	if (!b)
		return;
	memset(b, 0x5a, bytes);
	*b = kept;
	kept = b;
	leaked += bytes;
}

static void log_count(void)
{
	const char *path = getenv("LEAK_LOG");
	char line[64];
	int fd, n;

	if (!path || (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%lu %lu\n", calls, leaked);
	if (write(fd, line, n) != n)
		perror("leak.so: LEAK_LOG");
	close(fd);
}

void *llama_sampler_chain_init(struct llama_sampler_chain_params p)
{
	static void *(*real)(struct llama_sampler_chain_params);
	const char *kib = getenv("LEAK_KIB");

	if (!real && !(real = (void *(*)(struct llama_sampler_chain_params))dlsym(
			       RTLD_NEXT, "llama_sampler_chain_init")))
		abort();
	calls++;
	gmt_leak_keep((kib ? strtoul(kib, NULL, 10) : 2048) * 1024);
	log_count();
	return real(p);
}
