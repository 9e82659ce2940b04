// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --watch (watch.h) */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>
#include "procfs.h"
#include "watch.h"

/* BPF finds new processes as they exec or map a GPU file; /proc is
 * looked at in full at start, for what was already running, then once a
 * minute, as a safety net for what BPF could not say (its record lost to a
 * full ring buffer, a 32-bit process, a GPU used without a mapping) */
#define SAFETY_NS (60ull * 1000000000ull)

struct seen {
	__u32 pid;
	bool chosen;
	bool live; /* seen in the last scan */
	UT_hash_handle hh;
};

struct watch {
	const char *const *comms;
	size_t nr_comms;
	__u32 self;
	__u64 full_ns; /* when the last scan began */
	bool started;  /* the scan at start is done */
	bool resume;   /* the last call stopped at max: the scan goes on */
	struct seen *seen;
};

/* what a GPU process maps: an API's library, llama.cpp's GPU backends, a
 * GPU device node (bpf/mm.bpf.c's lists are the same, by file name) */
static const char *const gpu_maps[] = {
	"/libcuda.so",	      "/libvulkan.so",	  "/libamdhip64.so", "/libggml-cuda.so",
	"/libggml-vulkan.so", "/libggml-hip.so",  "/dev/nvidia",     "/dev/dri/renderD",
	"/dev/kfd",	      "/libnvidia-ml.so", "/libcudart.so",
};

struct watch *watch__new(const char *const *comms, size_t nr_comms, __u32 self)
{
	struct watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->comms = comms;
	w->nr_comms = nr_comms;
	w->self = self;
	return w;
}

static bool name_matches(const struct watch *w, __u32 pid)
{
	char comm[64];
	size_t i;

	if (!w->nr_comms)
		return false;
	procfs__read(pid, "comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = 0;
	for (i = 0; i < w->nr_comms; i++)
		if (!strncmp(comm, w->comms[i], 15) && comm[0])
			return true;
	return false;
}

static __u32 parent(__u32 pid)
{
	char stat[512], *p;

	procfs__read(pid, "stat", stat, sizeof(stat));
	p = strrchr(stat, ')'); /* the name may hold spaces and parentheses */
	return p ? strtoul(p + 4, NULL, 10) : 0;
}

static bool maps_gpu(__u32 pid)
{
	char path[64], line[4096];
	bool found = false;
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		for (i = 0; i < sizeof(gpu_maps) / sizeof(gpu_maps[0]) && !found; i++)
			found = strstr(line, gpu_maps[i]) != NULL;
	fclose(f);
	return found;
}

size_t watch__scan(struct watch *w, __u64 now_ns, __u32 *pids, size_t max, bool *late)
{
	struct seen *s, *tmp;
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	*late = w->started;
	if (!w->resume && w->started && now_ns - w->full_ns < SAFETY_NS)
		return 0;
	dir = opendir("/proc");
	if (!dir)
		return 0;
	if (!w->resume)
		w->full_ns = now_ns;
	HASH_ITER(hh, w->seen, s, tmp)
	s->live = false;
	while ((d = readdir(dir)) && n < max) {
		char *end;
		unsigned long v = strtoul(d->d_name, &end, 10);
		__u32 pid = v;

		if (!isdigit((unsigned char)d->d_name[0]) || *end || !v || v > 0x7fffffff ||
		    pid == w->self)
			continue;
		HASH_FIND(hh, w->seen, &pid, sizeof(pid), s);
		if (!s) {
			s = calloc(1, sizeof(*s));
			if (!s)
				break;
			s->pid = pid;
			HASH_ADD(hh, w->seen, pid, sizeof(s->pid), s);
		}
		s->live = true;
		if (s->chosen)
			continue;
		if (name_matches(w, pid) || maps_gpu(pid)) {
			if (parent(pid) == w->self)
				continue; /* our helpers load drivers too */
			s->chosen = true;
			pids[n++] = pid;
		}
	}
	closedir(dir);
	w->resume = n == max;
	w->started = w->started || !w->resume;
	/* pids gone from /proc may come back as other processes */
	HASH_ITER(hh, w->seen, s, tmp)
	if (!s->live && !w->resume) {
		HASH_DEL(w->seen, s);
		free(s);
	}
	return n;
}

void watch__forget(struct watch *w, __u32 pid)
{
	struct seen *s;

	HASH_FIND(hh, w->seen, &pid, sizeof(pid), s);
	if (s) {
		HASH_DEL(w->seen, s);
		free(s);
	}
}

void watch__free(struct watch *w)
{
	struct seen *s, *tmp;

	if (!w)
		return;
	HASH_ITER(hh, w->seen, s, tmp)
	{
		HASH_DEL(w->seen, s);
		free(s);
	}
	free(w);
}
