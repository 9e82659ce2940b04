/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* small reads from /proc/PID */
#ifndef GMT_PROCFS_H
#define GMT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* /proc/PID/NAME as one string, NULs between arguments turned into spaces;
 * empty when it cannot be read */
void procfs__read(__u32 pid, const char *name, char *buf, size_t size);

/* a file as process pid sees it (an absolute path in its root), opened for
 * reading without ever leaving that root (openat2 RESOLVE_IN_ROOT: a
 * symlink in a container cannot lead to the host's files); -1 on error */
int procfs__open_in_root(__u32 pid, const char *path);
/* /proc/PID/NAME as it is (NULs kept); its length, 0 when it cannot be read */
size_t procfs__read_raw(__u32 pid, const char *name, char *buf, size_t size);
/* a command line as /proc/PID/cmdline has it (len bytes of arguments, each
 * ended by a NUL; room for one more byte) into one string, the arguments
 * joined by spaces, with the values of options that hold secrets
 * (--api-key V, --api-key=V, --hf-token, -hft) turned into '*', each value
 * the whole argument it is; the string's length */
size_t procfs__redact(char *args, size_t len);
/* of an environment ("NAME=value\0"...), the variables that set how
 * llama.cpp uses memory, in the same form; their length */
size_t procfs__settings(const char *env, size_t len, char *out, size_t size);

/* one line of /proc/PID/maps, or a mapping's first line in smaps */
struct procfs_map {
	__u64 start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];	  /* "r-xp" */
	const char *path; /* in the line, its newline cut; "" when anonymous */
};
/* false when the line is not a mapping's */
bool procfs__map_line(char *line, struct procfs_map *m);

struct gmt_drm_fdinfo;
/* the DRM counters of one fdinfo text (6.1 amdgpu's drm-memory-*, the
 * drm-total-/drm-resident-* of 6.5 on, amd-evicted-vram); false when it is
 * not a DRM file */
bool procfs__parse_drm_fdinfo(const char *text, struct gmt_drm_fdinfo *out);

#endif
