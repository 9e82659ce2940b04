/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --watch -o DIR: one trace file per process, COMM.YYYYmmddTHHMMSS.PID.gmt,
 * started again past a size or an age; the directory kept within its
 * budget by retain.h. Each file replays on its own: it begins with the
 * session, the probes and devices, and what the process's records said of
 * it so far (its metadata, its last RSS, its stacks), as a -p attach would
 * have seen it then.
 *
 * A process's first file starts at a record that says what it runs: its
 * PROC (with an executable or a command line), its EXEC, or the FORK that
 * made it; before that only what a file begins with is kept. After its
 * exit, its records are dropped, never a new file, until a new process
 * takes its pid (an EXEC, a FORK, a PROC naming an executable). */
#ifndef GMT_TRACEDIR_H
#define GMT_TRACEDIR_H

#include <stdbool.h>
#include "retain.h"
#include "tracefile.h"

struct tracedir;

struct tracedir_opts {
	const char *dir;  /* created (0700) when missing */
	__u64 max_bytes;  /* a file is started again past this */
	__u64 max_age_ns; /* or this long after it began */
	/* the directory's limits and messages (dirname, class_of and
	 * class_ctx are tracedir's own) */
	struct retain_opts retain;
	const struct tracefile_info *info;
};

/* NULL with err set when the directory cannot be used */
struct tracedir *tracedir__open(const struct tracedir_opts *o, char *err, size_t len);
/* routes `e` to its process's file; 0, or the first write error (-errno):
 * the file that failed is closed, the others go on */
int tracedir__write(struct tracedir *d, const struct gmt_hdr *e);
/* flushes each file's pending block, and starts old ones again */
int tracedir__tick(struct tracedir *d, __u64 now_ns);
/* how many files were written */
unsigned int tracedir__files(const struct tracedir *d);
/* the directory's budget in bytes (--max-disk or its default) */
__u64 tracedir__budget(const struct tracedir *d);
/* closes every file; the first error seen, as -errno */
int tracedir__close(struct tracedir *d);
/* true when `path` names a directory (or ends in '/'): --watch's -o */
bool tracedir__is_dir(const char *path);

#endif
