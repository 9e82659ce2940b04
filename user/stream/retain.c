// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Retention of --watch -o DIR's recordings: owns the limits (bytes, age,
 * count), the order files go in, and the messages that say each removal */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "common/fmt.h"
#include "retain.h"

#define BUDGET_CAP (10ull << 30)

struct retain {
	struct retain_opts o;
	int dirfd;
	bool over_said, fail_said;
};

struct rfile {
	char *name;
	__u32 pid;
	enum retain_class cls;
	struct timespec mtime;
	__u64 size;
};

bool retain__ours(const char *name, __u32 *pid)
{
	const char *p = name;
	unsigned long v;
	char *end;
	int i;

	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
	       *p == '_' || *p == '-')
		p++;
	if (p == name || *p++ != '.')
		return false;
	for (i = 0; i < 15; i++)
		if (i == 8 ? p[i] != 'T' : (p[i] < '0' || p[i] > '9'))
			return false;
	p += 15;
	if (*p++ != '.' || *p < '0' || *p > '9')
		return false;
	v = strtoul(p, &end, 10);
	p = end;
	if (*p == '.' && p[1] >= '0' && p[1] <= '9')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if (strcmp(p, ".gmt") || v > 0xffffffffu)
		return false;
	*pid = v;
	return true;
}

static void say(struct retain *r, const char *line)
{
	if (r->o.say)
		r->o.say(r->o.say_ctx, line);
	else
		fprintf(stderr, "gpumemtrace: %s\n", line);
}

static __u64 default_budget(int dirfd)
{
	struct statvfs sv;
	__u64 b;

	if (fstatvfs(dirfd, &sv))
		return BUDGET_CAP;
	b = (__u64)sv.f_blocks * sv.f_frsize / 10;
	return b && b < BUDGET_CAP ? b : BUDGET_CAP;
}

struct retain *retain__new(int dirfd, const struct retain_opts *o)
{
	struct retain *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	r->dirfd = dirfd;
	if (!r->o.max_bytes)
		r->o.max_bytes = default_budget(dirfd);
	return r;
}

__u64 retain__budget(const struct retain *r)
{
	return r->o.max_bytes;
}

void retain__free(struct retain *r)
{
	free(r);
}

/* by class, then oldest first: by the last write, which a name's second
 * cannot order */
static int by_age(const void *a, const void *b)
{
	const struct rfile *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* only the tracer's own: in a directory others may write, files planted
 * under our names (and dated ahead) must not make it remove its
 * recordings, nor be removed by it */
static size_t list(struct retain *r, struct rfile **out)
{
	struct rfile *files = NULL, *grown;
	int fd = openat(r->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	struct stat st;
	size_t n = 0;
	DIR *dir;
	__u32 pid;

	*out = NULL;
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(dir))) {
		if (!retain__ours(de->d_name, &pid) ||
		    fstatat(r->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (!(grown = realloc(files, (n + 1) * sizeof(*files))))
			break;
		files = grown;
		if (!(files[n].name = strdup(de->d_name)))
			break;
		files[n].pid = pid;
		files[n].mtime = st.st_mtim;
		files[n].size = st.st_size;
		files[n].cls = r->o.class_of(r->o.class_ctx, de->d_name, pid, st.st_mtim.tv_sec);
		n++;
	}
	closedir(dir);
	if (n)
		qsort(files, n, sizeof(*files), by_age);
	*out = files;
	return n;
}

static const char *slash(const char *dir)
{
	size_t n = strlen(dir);

	return n && dir[n - 1] == '/' ? "" : "/";
}

static void remove_file(struct retain *r, const struct rfile *f, const char *why)
{
	char line[512];

	if (unlinkat(r->dirfd, f->name, 0)) {
		if (!r->fail_said) {
			snprintf(line, sizeof(line), "cannot remove %s%s%s (%s): kept",
				 r->o.dirname, slash(r->o.dirname), f->name, strerror(errno));
			say(r, line);
		}
		r->fail_said = true;
		return;
	}
	snprintf(line, sizeof(line), "removed %s%s%s: %s", r->o.dirname, slash(r->o.dirname),
		 f->name, why);
	say(r, line);
}

void retain__run(struct retain *r)
{
	char why_age[64], why_keep[64], why_disk[64], held[32], line[512];
	struct timespec now;
	struct rfile *files;
	size_t n, i, count;
	__u64 total = 0;
	const char *why;

	clock_gettime(CLOCK_REALTIME, &now);
	n = list(r, &files);
	for (i = 0; i < n; i++)
		total += files[i].size;
	count = n;
	snprintf(why_age, sizeof(why_age), "older than --max-age %llu s",
		 (unsigned long long)r->o.max_age_s);
	snprintf(why_keep, sizeof(why_keep), "past --keep %u files", r->o.keep);
	snprintf(why_disk, sizeof(why_disk), "past --max-disk ");
	fmt_bytes(why_disk + strlen(why_disk), sizeof(why_disk) - strlen(why_disk), r->o.max_bytes);
	for (i = 0; i < n; i++) {
		const struct rfile *f = &files[i];

		if (f->cls == RETAIN_CURRENT)
			why = NULL;
		else if (r->o.max_age_s && f->mtime.tv_sec + (time_t)r->o.max_age_s <= now.tv_sec)
			why = why_age;
		else if (r->o.keep && count > r->o.keep)
			why = why_keep;
		else if (total > r->o.max_bytes)
			why = why_disk;
		else
			why = NULL;
		if (!why)
			continue;
		remove_file(r, f, why);
		total -= f->size;
		count--;
	}
	/* only the files being written are left: said once while it lasts */
	if (total > r->o.max_bytes || (r->o.keep && count > r->o.keep)) {
		if (!r->over_said) {
			snprintf(line, sizeof(line),
				 "the %zu recording%s under %s (%s) are past --max-disk or --keep "
				 "with only files being written left: kept, as a running "
				 "process's current file is never removed",
				 count, count == 1 ? "" : "s", r->o.dirname,
				 fmt_bytes(held, sizeof(held), total));
			say(r, line);
		}
		r->over_said = true;
	} else {
		r->over_said = false;
	}
	for (i = 0; i < n; i++)
		free(files[i].name);
	free(files);
}
