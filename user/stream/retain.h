/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --watch -o DIR's recordings kept within a budget of bytes (--max-disk),
 * an age (--max-age) and, if asked, a number of files (--keep), all names
 * together. What goes first: the oldest closed files of exited processes,
 * then the oldest closed files of running ones; a running process's
 * current file never. Every removal is said once, with the file's name. */
#ifndef GMT_RETAIN_H
#define GMT_RETAIN_H

#include <stdbool.h>
#include <time.h>
#include "event.h"

enum retain_class {
	RETAIN_EXITED,	/* closed, of a process gone (or of an earlier run) */
	RETAIN_RUNNING, /* closed by a rotation, its process still runs */
	RETAIN_CURRENT, /* being written: never removed */
};

struct retain_opts {
	__u64 max_bytes;     /* the files' sizes together; 0: the default */
	__u64 max_age_s;     /* a closed file's last write; 0: no limit */
	unsigned int keep;   /* files; 0: no limit */
	const char *dirname; /* for the messages */
	/* which of the three a file is */
	enum retain_class (*class_of)(void *ctx, const char *name, __u32 pid, time_t mtime);
	void *class_ctx;
	/* one line said (no newline); NULL: standard error */
	void (*say)(void *ctx, const char *line);
	void *say_ctx;
};

struct retain;

/* NULL when out of memory. The default budget: 10% of the filesystem
 * dirfd is on, at most 10 GiB */
struct retain *retain__new(int dirfd, const struct retain_opts *o);
/* the budget in bytes */
__u64 retain__budget(const struct retain *r);
/* the directory looked at: what is past a limit is removed, and said */
void retain__run(struct retain *r);
void retain__free(struct retain *r);
/* COMM.YYYYmmddTHHMMSS.PID[.N].gmt, COMM of [A-Za-z0-9_-]: a name the
 * tracer gives its recordings; *pid from it */
bool retain__ours(const char *name, __u32 *pid);

#endif
