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
#include "common/container.h"

#define NO_LIMIT GMT_MEM_NO_LIMIT /* v1 says "none" with PAGE_COUNTER_MAX pages */

/* where the memory controller is: the v2 hierarchy where it is enabled,
 * else the v1 hierarchy that has it; found once */
static char mount_v2[256], mount_v1[256];
static bool mounts_read;

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
			if (c && fgets(ctl, sizeof(ctl), c) && strstr(ctl, "memory"))
				snprintf(mount_v2, sizeof(mount_v2), "%s", dir);
			if (c)
				fclose(c);
		} else if (!strcmp(fstype, "cgroup") && !mount_v1[0]) {
			char *o, *save = NULL;

			for (o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
				if (!strcmp(o, "memory"))
					snprintf(mount_v1, sizeof(mount_v1), "%s", dir);
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

/* the path of pid's cgroup in the hierarchy with the memory controller */
static bool cgroup_path(__u32 pid, bool v2, char *out, size_t size)
{
	char buf[4096], *cur = buf, *line, *ctl, *path;

	procfs__read(pid, "cgroup", buf, sizeof(buf));
	while (next_line(&cur, &line, &ctl, &path)) {
		if (v2 ? strcmp(line, "0") || *ctl : !strstr(ctl, "memory"))
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
	if (!cgroup_path(pid, v2, path, sizeof(path)))
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
