/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The processes traced, and each one's life: it joins (the -p target, the
 * command started, one --watch finds), forks a child BPF follows, execs,
 * maps new code, exits. Each of these calls the hook of every subsystem
 * that keeps state per process (the table in targets.c). */
#ifndef GMT_TARGETS_H
#define GMT_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include "stream/event.h"

struct targets;
struct symbolizer;
struct unwinder;
struct bpfmaps;
struct samples;
struct gpulib;

/* the subsystems a pid's life concerns; targets owns none of them */
struct targets_deps {
	struct symbolizer *sym;
	struct unwinder *unw; /* NULL: no CFI unwinding */
	bool unwind_early;    /* read a joining process's CFI now */
	struct bpfmaps *maps;
	struct samples *samples;
	struct gpulib *gpu; /* NULL when the gpuapi programs did not load */
	bool quiet;
	/* --watch: every GPU process, and those named comms[] */
	bool watch;
	const char *const *comms;
	size_t nr_comms;
};

enum targets_how {
	TARGETS_ATTACHED, /* -p: running */
	TARGETS_SPAWNED,  /* a command we started, not yet exec'd */
	TARGETS_FOUND,	  /* --watch's /proc scan at start found it: BPF is told */
	TARGETS_LATE,	  /* --watch's later /proc scan found it (a safety net) */
	TARGETS_SEEN,	  /* BPF found it (--watch): at its exec or GPU mapping */
};

/* NULL when out of memory */
struct targets *targets__new(const struct targets_deps *d);
void targets__free(struct targets *t);
void targets__join(struct targets *t, __u32 pid, enum targets_how how);
/* a child of a target, followed by BPF */
void targets__fork(struct targets *t, __u32 child);
void targets__exec(struct targets *t, __u32 pid);
/* pid mapped code from a file (a library dlopen'ed) */
void targets__mapped(struct targets *t, __u32 pid);
/* pid's code changed (exec, mmap, a followed fork): on the ring buffer's
 * reader thread, while it still lives */
void targets__code_early(struct targets *t, __u32 pid);
/* the whole thread group of pid has exited */
void targets__exit(struct targets *t, __u32 pid);
/* --watch: the processes found since the last look join */
void targets__discover(struct targets *t);
/* each interval: those found, and GPU libraries the mmap records missed */
void targets__tick(struct targets *t);
/* the live targets, for samples */
const __u32 *targets__pids(const struct targets *t, size_t *n);

#endif
