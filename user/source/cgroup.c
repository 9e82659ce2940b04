// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The memory limit that binds a process, from the cgroup files: the kernel
 * OOM-kills a cgroup that reaches its limit whatever the host has free, so
 * a projection of growth ends there (a pod's 6 GiB, not the node's RAM).
 * And which of its cgroup paths names its container, and its pod's name
 * and namespace as the node's kubelet logs them. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup.h"
#include "procfs.h"
#include "waits.h"
#include "common/container.h"

#define NO_LIMIT GMT_MEM_NO_LIMIT /* v1 says "none" with PAGE_COUNTER_MAX pages */

/* where the memory controller is: the v2 hierarchy where it is enabled,
 * else the v1 hierarchy that has it; found once */
static char mount_v2[256], mount_v1[256];
/* and for CPU: any v2 hierarchy (its *.pressure files), the one with the
 * cpu controller, else v1's that has it */
static char mount_v2_any[256], mount_v2_cpu[256], mount_v1_cpu[256];
static bool mounts_read;

/* whether a list of words (split by any of seps) has word */
static bool has_word(const char *list, const char *word, const char *seps)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)); p += n)
		if ((p == list || strchr(seps, p[-1])) && (!p[n] || strchr(seps, p[n])))
			return true;
	return false;
}

static void find_mounts(void)
{
	char line[1024], dir[256], fstype[32], opts[512], path[300], ctl[512];
	FILE *f;

	mounts_read = true;
	f = fopen("/proc/self/mountinfo", "re");
	while (f && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT DIR OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS */
		char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %255s", dir) != 1 ||
		    sscanf(sep + 3, "%31s %*s %511s", fstype, opts) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !mount_v2[0]) {
			FILE *c;

			snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
			c = fopen(path, "re");
			ctl[0] = 0;
			if (c && fgets(ctl, sizeof(ctl), c) && strstr(ctl, "memory"))
				snprintf(mount_v2, sizeof(mount_v2), "%s", dir);
			if (has_word(ctl, "cpu", " \n") && !mount_v2_cpu[0])
				snprintf(mount_v2_cpu, sizeof(mount_v2_cpu), "%s", dir);
			if (!mount_v2_any[0])
				snprintf(mount_v2_any, sizeof(mount_v2_any), "%s", dir);
			if (c)
				fclose(c);
		} else if (!strcmp(fstype, "cgroup")) {
			if (!mount_v1[0] && has_word(opts, "memory", ","))
				snprintf(mount_v1, sizeof(mount_v1), "%s", dir);
			if (!mount_v1_cpu[0] && has_word(opts, "cpu", ","))
				snprintf(mount_v1_cpu, sizeof(mount_v1_cpu), "%s", dir);
		}
	}
	if (f)
		fclose(f);
}

/* a file's number; "max" and v1's "none" are NO_LIMIT; false when missing */
static bool read_num(const char *dir, const char *name, __u64 *v)
{
	char path[600], buf[64];
	FILE *f;
	bool ok;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	if (!strncmp(buf, "max", 3)) {
		*v = NO_LIMIT;
		return true;
	}
	*v = strtoull(buf, NULL, 10);
	if (*v >= NO_LIMIT)
		*v = NO_LIMIT;
	return true;
}

/* the next line of /proc/PID/cgroup's text at *cur, split in place into
 * HIERARCHY:CONTROLLERS:PATH; false at the end */
static bool next_line(char **cur, char **hier, char **ctl, char **path)
{
	char *next;

	while (*cur && **cur) {
		*hier = *cur;
		next = strchr(*cur, '\n');
		if (next)
			*next++ = 0;
		*cur = next;
		*ctl = strchr(*hier, ':');
		*path = *ctl ? strchr(*ctl + 1, ':') : NULL;
		if (!*path)
			continue;
		*(*path)++ = 0;
		*(*ctl)++ = 0;
		return true;
	}
	return false;
}

/* the path of pid's cgroup in v2's hierarchy, or in v1's with controller */
static bool cgroup_path_of(__u32 pid, bool v2, const char *controller, char *out, size_t size)
{
	char buf[4096], *cur = buf, *line, *ctl, *path;

	procfs__read(pid, "cgroup", buf, sizeof(buf));
	while (next_line(&cur, &line, &ctl, &path)) {
		if (v2 ? strcmp(line, "0") || *ctl : !has_word(ctl, controller, ","))
			continue;
		/* the kernel writes it; still, no way up and out of the hierarchy */
		if (path[0] != '/' || strstr(path, "/..") || strlen(path) >= size)
			return false;
		snprintf(out, size, "%s", path);
		return true;
	}
	return false;
}

int cgroup__mem_limit(__u32 pid, struct gmt_mem_limit *e)
{
	char path[GMT_PATH_LEN], dir[600];
	bool v2, found = false;
	__u64 room = NO_LIMIT, limit, high, used, swap_max, swap_used, swap_room = NO_LIMIT;
	char *slash;

	if (!mounts_read)
		find_mounts();
	v2 = mount_v2[0];
	if (!v2 && !mount_v1[0])
		return -ENOENT;
	if (!cgroup_path_of(pid, v2, "memory", path, sizeof(path)))
		return -ENOENT;
	/* from the process's cgroup up to the root: the least room left binds */
	for (;;) {
		snprintf(dir, sizeof(dir), "%s%s", v2 ? mount_v2 : mount_v1,
			 strcmp(path, "/") ? path : "");
		if (v2) {
			if (!read_num(dir, "memory.max", &limit))
				limit = NO_LIMIT;
			if (!read_num(dir, "memory.high", &high))
				high = NO_LIMIT;
			if (!read_num(dir, "memory.current", &used))
				used = 0;
			if (read_num(dir, "memory.swap.max", &swap_max) && swap_max < NO_LIMIT) {
				if (!read_num(dir, "memory.swap.current", &swap_used))
					swap_used = 0;
				swap_max = swap_max > swap_used ? swap_max - swap_used : 0;
				if (swap_max < swap_room)
					swap_room = swap_max;
			}
		} else {
			high = NO_LIMIT;
			if (!read_num(dir, "memory.limit_in_bytes", &limit))
				limit = NO_LIMIT;
			if (!read_num(dir, "memory.usage_in_bytes", &used))
				used = 0;
			/* memory and swap together, where swap is accounted */
			if (read_num(dir, "memory.memsw.limit_in_bytes", &swap_max) &&
			    swap_max < NO_LIMIT && limit < NO_LIMIT &&
			    read_num(dir, "memory.memsw.usage_in_bytes", &swap_used)) {
				swap_max = swap_max > swap_used ? swap_max - swap_used : 0;
				swap_used = limit > used ? limit - used : 0;
				swap_max = swap_max > swap_used ? swap_max - swap_used : 0;
				if (swap_max < swap_room)
					swap_room = swap_max;
			}
		}
		if (high < limit)
			limit = high;
		if (limit < NO_LIMIT && (limit > used ? limit - used : 0) < room) {
			room = limit > used ? limit - used : 0;
			e->limit = limit;
			e->used = used;
			e->file = !v2		? GMT_MEM_LIMIT_V1_HARD :
				  limit == high ? GMT_MEM_LIMIT_V2_HIGH :
						  GMT_MEM_LIMIT_V2_MAX;
			snprintf(e->path, sizeof(e->path), "%s", path);
			found = true;
		}
		if (!strcmp(path, "/"))
			break;
		slash = strrchr(path, '/');
		if (slash == path)
			path[1] = 0;
		else
			*slash = 0;
	}
	e->swap_room = swap_room;
	return found ? 0 : -ENOENT;
}

/* path's parent, in place; false at the root */
static bool up(char *path)
{
	char *slash = strrchr(path, '/');

	if (!strcmp(path, "/") || !slash)
		return false;
	if (slash == path)
		path[1] = 0;
	else
		*slash = 0;
	return true;
}

/* "KEY N" lines: N of key, or 0 */
static __u64 stat_value(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ' ')
			return strtoull(p + n + 1, NULL, 10);
	return 0;
}

static bool read_text(const char *dir, const char *name, char *buf, size_t size)
{
	char path[600];

	buf[0] = 0;
	return snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path) &&
	       procfs__read_file(path, buf, size);
}

/* the quota of the cgroup at dir, as CPUs times period: false for none */
static bool quota_of(const char *dir, bool v2, __u64 *quota, __u64 *period)
{
	char text[128];
	long long q = -1;
	unsigned long long per = 0;

	if (v2) {
		if (!read_text(dir, "cpu.max", text, sizeof(text)) || !strncmp(text, "max", 3) ||
		    sscanf(text, "%lld %llu", &q, &per) != 2)
			return false;
	} else {
		if (!read_text(dir, "cpu.cfs_quota_us", text, sizeof(text)) ||
		    sscanf(text, "%lld", &q) != 1 || q <= 0 ||
		    !read_text(dir, "cpu.cfs_period_us", text, sizeof(text)) ||
		    sscanf(text, "%llu", &per) != 1)
			return false;
	}
	if (q <= 0 || !per)
		return false;
	*quota = q;
	*period = per;
	return true;
}

void cgroup__cpu(__u32 pid, struct gmt_proc_stat *e)
{
	char path[GMT_PATH_LEN], dir[600], bind[600] = "", text[1024];
	__u64 q, per;
	bool v2;

	if (!mounts_read)
		find_mounts();
	v2 = mount_v2_cpu[0];
	/* from its cgroup up: the fewest CPUs binds */
	if ((v2 || mount_v1_cpu[0]) && cgroup_path_of(pid, v2, "cpu", path, sizeof(path)))
		do {
			snprintf(dir, sizeof(dir), "%s%s", v2 ? mount_v2_cpu : mount_v1_cpu,
				 strcmp(path, "/") ? path : "");
			if (quota_of(dir, v2, &q, &per) &&
			    (!e->cpu_quota_us ||
			     (double)q / per < (double)e->cpu_quota_us / e->cpu_period_us)) {
				e->cpu_quota_us = q;
				e->cpu_period_us = per;
				snprintf(bind, sizeof(bind), "%s", dir);
				snprintf(e->cpu_cgroup, sizeof(e->cpu_cgroup), "%s", path);
			}
		} while (up(path));
	if (bind[0] && read_text(bind, "cpu.stat", text, sizeof(text))) {
		e->nr_periods = stat_value(text, "nr_periods");
		e->nr_throttled = stat_value(text, "nr_throttled");
		e->throttled_ns = v2 ? stat_value(text, "throttled_usec") * 1000 :
				       stat_value(text, "throttled_time");
		e->flags |= GMT_PSTAT_CPU_STAT | (v2 ? GMT_PSTAT_CPU_V2 : 0);
	}
	/* pressure: its own cgroup's (v2 counts it with no controller on),
	 * else the host's */
	if (mount_v2_any[0] && cgroup_path_of(pid, true, "", path, sizeof(path)) &&
	    strcmp(path, "/")) {
		__u64 unused = 0;

		snprintf(dir, sizeof(dir), "%s%s", mount_v2_any, path);
		if (read_text(dir, "memory.pressure", text, sizeof(text)) &&
		    waits__psi(text, &e->psi_mem_some_us, &e->psi_mem_full_us)) {
			e->flags |= GMT_PSTAT_PSI | GMT_PSTAT_PSI_CGROUP;
			if (read_text(dir, "cpu.pressure", text, sizeof(text)))
				waits__psi(text, &e->psi_cpu_some_us, &unused);
			if (read_text(dir, "io.pressure", text, sizeof(text)))
				waits__psi(text, &e->psi_io_some_us, &e->psi_io_full_us);
			return;
		}
	}
	if (waits__host_psi(&e->psi_mem_some_us, &e->psi_mem_full_us, &e->psi_cpu_some_us,
			    &e->psi_io_some_us, &e->psi_io_full_us))
		e->flags |= GMT_PSTAT_PSI;
}

void cgroup__mem_stat(__u32 pid, struct gmt_proc_stat *e)
{
	char path[GMT_PATH_LEN], dir[600], text[8192];
	bool v2;

	if (!mounts_read)
		find_mounts();
	v2 = mount_v2[0];
	if ((!v2 && !mount_v1[0]) || !cgroup_path_of(pid, v2, "memory", path, sizeof(path)) ||
	    !strcmp(path, "/"))
		return;
	snprintf(dir, sizeof(dir), "%s%s", v2 ? mount_v2 : mount_v1, path);
	if (!read_text(dir, "memory.stat", text, sizeof(text)) ||
	    !strstr(text, "workingset_refault_file "))
		return;
	/* v2's are of the cgroup and those below it; v1's first ones of the
	 * cgroup alone (its "total_" ones below), where the process is */
	e->refault_file = stat_value(text, "workingset_refault_file");
	e->refault_anon = stat_value(text, "workingset_refault_anon");
	e->flags |= GMT_PSTAT_REFAULTS;
}

bool cgroup__pick(char *buf, char *out, size_t size)
{
	char *cur = buf, *line, *ctl, *path, *v2 = NULL, *mem = NULL, *named = NULL;
	struct container ct;

	while (next_line(&cur, &line, &ctl, &path)) {
		if (!strcmp(line, "0") && !*ctl)
			v2 = path;
		else if (!mem && !strcmp(ctl, "memory"))
			mem = path;
		if (!named && container__parse(path, &ct))
			named = path;
	}
	if (v2 && container__parse(v2, &ct))
		named = v2;
	path = named ? named : v2 ? v2 : mem;
	if (!path)
		return false;
	snprintf(out, size, "%s", path);
	return true;
}

bool cgroup__pod_names(const char *uid, char *name, size_t name_size, char *ns, size_t ns_size)
{
	const char *root = getenv("GMT_PODS_DIR");
	size_t n, k = strlen(uid);
	struct dirent *d;
	const char *u;
	bool found = false;
	DIR *dir;

	dir = opendir(root && *root ? root : "/var/log/pods");
	while (dir && !found && (d = readdir(dir))) {
		/* <namespace>_<name>_<uid>: neither name has a '_' */
		n = strlen(d->d_name);
		if (n < k + 4 || strcmp(d->d_name + n - k, uid) || d->d_name[n - k - 1] != '_')
			continue;
		u = strchr(d->d_name, '_');
		if (!container__name_ok(d->d_name, u - d->d_name, false) ||
		    !container__name_ok(u + 1, d->d_name + n - k - 1 - (u + 1), true))
			continue;
		snprintf(ns, ns_size, "%.*s", (int)(u - d->d_name), d->d_name);
		snprintf(name, name_size, "%.*s", (int)(d->d_name + n - k - 1 - (u + 1)), u + 1);
		found = true;
	}
	if (dir)
		closedir(dir);
	return found;
}
