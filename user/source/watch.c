// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --watch (watch.h) */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>
#include "procfs.h"
#include "watch.h"

/* a process's name and mappings are looked at each scan while it is
 * younger than this (by its start time), then once a minute */
#define YOUNG_NS (30ull * 1000000000ull)
#define FULL_NS (60ull * 1000000000ull)

struct seen {
	__u32 pid;
	__s64 young_until; /* our clock's time when it is YOUNG_NS old */
	bool chosen;
	bool live; /* seen in the last scan */
	UT_hash_handle hh;
};

struct watch {
	const char *const *comms;
	size_t nr_comms;
	__u32 self;
	__u64 full_ns; /* the last scan that looked at every mapping */
	struct seen *seen;
};

/* what a GPU process maps: an API's library, llama.cpp's GPU backends, a
 * GPU device node */
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

/* how long ago pid started (/proc/PID/stat's starttime, since boot) */
static __s64 age_ns(__u32 pid)
{
	char stat[1024], *p;
	unsigned long long start = 0;
	struct timespec boot;
	int i;

	procfs__read(pid, "stat", stat, sizeof(stat));
	p = strrchr(stat, ')');
	/* starttime is field 22; after the name, field 3 */
	for (i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	if (!p || clock_gettime(CLOCK_BOOTTIME, &boot))
		return 0;
	start = strtoull(p + 1, NULL, 10);
	return (__s64)boot.tv_sec * 1000000000ll + boot.tv_nsec -
	       (__s64)(start * (1000000000.0 / sysconf(_SC_CLK_TCK)));
}

static bool young(const struct seen *s, __u64 now_ns)
{
	return (__s64)now_ns < s->young_until;
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

size_t watch__scan(struct watch *w, __u64 now_ns, __u32 *pids, size_t max)
{
	struct seen *s, *tmp;
	bool full = now_ns - w->full_ns >= FULL_NS;
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return 0;
	if (full)
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
			s->young_until = now_ns + YOUNG_NS - age_ns(pid);
			HASH_ADD(hh, w->seen, pid, sizeof(s->pid), s);
		}
		s->live = true;
		if (s->chosen || !(full || young(s, now_ns)))
			continue;
		if (name_matches(w, pid) || maps_gpu(pid)) {
			if (parent(pid) == w->self)
				continue; /* our helpers load drivers too */
			s->chosen = true;
			pids[n++] = pid;
		}
	}
	closedir(dir);
	/* pids gone from /proc may come back as other processes */
	HASH_ITER(hh, w->seen, s, tmp)
	if (!s->live && n < max) {
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
