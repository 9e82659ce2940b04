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
/* a file the kernel writes (/proc, /sys, a cgroup's) as one string; false
 * when it cannot be read or is empty */
bool procfs__read_file(const char *path, char *buf, size_t size);
/* when pid started (/proc/PID/stat's starttime, to the clock tick), on
 * CLOCK_MONOTONIC as the events are; 0 when it cannot be read */
__u64 procfs__start_ns(__u32 pid);

/* Every file opened on a target's behalf (its libraries, debug files, what
 * it names) is hostile input: these open it without blocking (a FIFO),
 * only as a regular file of at most PROCFS_MAX_FILE bytes, and, for a path
 * the target names, with the target's own file credentials, so that root
 * never reads for it what it could not read itself. A refusal other than a
 * missing file is said once per file on stderr. */
#define PROCFS_MAX_FILE (8ull << 30)
#define PROCFS_MAX_GROUPS 256

/* who a process is to the kernel's permission checks: its fs uid and gid
 * and its supplementary groups (/proc/PID/status, in our user namespace) */
struct procfs_cred {
	bool known;
	__u32 pid; /* whose, for messages */
	__u32 uid, gid;
	unsigned int nr_groups;
	__u32 groups[PROCFS_MAX_GROUPS];
};
/* false (and c->known false) when the process is gone */
bool procfs__cred(__u32 pid, struct procfs_cred *c);

/* `path` (absolute) as process `root` sees it (0: in our own root), never
 * leaving that root (openat2 RESOLVE_IN_ROOT: a symlink in a container
 * cannot lead to the host's files), opened with c's credentials by a
 * short-lived thread of its own; -1 on error or refusal */
int procfs__open_as(const struct procfs_cred *c, __u32 root, const char *path);
/* the same with pid's credentials, in its root */
int procfs__open_in_root(__u32 pid, const char *path);
/* a directory there, the same way, to list; -1 (quietly) on error */
int procfs__open_dir_in_root(__u32 pid, const char *path);
/* /proc/PID/map_files/START-END: the very file a process maps, which it
 * could read when it mapped it; opened as we are, refused unless regular */
int procfs__open_mapped(__u32 pid, __u64 start, __u64 end);
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
/* the value of NAME in env ("NAME=value\0"..., len bytes), or NULL; *n its
 * length (it need not end in a NUL where env was cut) */
const char *procfs__env_value(const char *env, size_t len, const char *name, size_t *n);
/* pid's pid in its own pid namespace (the last of NSpid in its status); 0
 * where that is the pid we see, or unknown */
__u32 procfs__ns_pid(__u32 pid);

/* one line of /proc/PID/maps, or a mapping's first line in smaps */
struct procfs_map {
	__u64 start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];	  /* "r-xp" */
	const char *path; /* in the line, its newline cut; "" when anonymous */
};
/* false when the line is not a mapping's */
bool procfs__map_line(char *line, struct procfs_map *m);

/* pid's code now: its executable file mappings, as sorted, disjoint
 * ranges, at most max (then the two closest neighbours joined) */
size_t procfs__code_ranges(__u32 pid, __u64 *lo, __u64 *hi, size_t max);

struct gmt_drm_fdinfo;
/* the DRM counters of one fdinfo text (6.1 amdgpu's drm-memory-*, the
 * drm-total-/drm-resident-* of 6.5 on, amd-evicted-vram); false when it is
 * not a DRM file */
bool procfs__parse_drm_fdinfo(const char *text, struct gmt_drm_fdinfo *out);

#endif
