/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --watch -o DIR: one trace file per process, COMM.YYYYmmddTHHMMSS.PID.gmt,
 * started again past a size or an age, the oldest of a name removed past
 * a number of files. Each file replays on its own: it begins with the
 * session, the probes and devices, and what the process's records said of
 * it so far (its metadata, its last RSS, its stacks), as a -p attach would
 * have seen it then. */
#ifndef GMT_TRACEDIR_H
#define GMT_TRACEDIR_H

#include <stdbool.h>
#include "tracefile.h"

struct tracedir;

struct tracedir_opts {
	const char *dir;   /* created (0700) when missing */
	__u64 max_bytes;   /* a file is started again past this */
	__u64 max_age_ns;  /* or this long after it began */
	unsigned int keep; /* files of one process name; older ones removed */
	const struct tracefile_info *info;
	/* the name of a process whose first record does not say it (live: its
	 * /proc comm); NULL: "pid" */
	void (*comm_of)(__u32 pid, char *buf, size_t size);
};

/* NULL with err set when the directory cannot be used */
struct tracedir *tracedir__open(const struct tracedir_opts *o, char *err, size_t len);
/* routes `e` to its process's file; 0, or the first write error (-errno):
 * the file that failed is closed, the others go on */
int tracedir__write(struct tracedir *d, const struct gmt_hdr *e);
/* flushes each file's pending block, and starts old ones again */
int tracedir__tick(struct tracedir *d, __u64 now_ns);
/* how many files were written; the directory */
unsigned int tracedir__files(const struct tracedir *d);
/* closes every file; the first error seen, as -errno */
int tracedir__close(struct tracedir *d);
/* true when `path` names a directory (or ends in '/'): --watch's -o */
bool tracedir__is_dir(const char *path);

#endif
