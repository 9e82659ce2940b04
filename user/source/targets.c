// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Targets: owns the set of processes traced (and --watch's search for
 * more) and is the one place a pid's life reaches the subsystems that
 * keep state per process. A new per-process resource is one hook here.
 *
 *              join             fork (child)  exec            mapped   exit
 * BPF targets  add (--watch)    (BPF follows) -               -        -
 *              (or BPF did: its JOIN record, at an exec or GPU mapping)
 * bpfmaps      restart, code    restart       restart         -        leave
 *              (code also on the reader thread: exec, mapped, fork)
 * samples      join records     -             -               -        -
 * symbolizer   refresh          invalidate    invalidate,     refresh  invalidate
 *                                             refresh
 * unwinder     prepare          forget        refresh         refresh  forget
 * gpulib       scan             -             scan            scan     -
 * watch        (it finds them)  -             -               -        forget
 *
 * Each interval the set is sampled (samples: /proc, the cgroup's limit,
 * DRM fdinfo, NVML) and scanned for GPU libraries; none of those keeps
 * state per process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "targets.h"
#include "bpfmaps.h"
#include "gpulib.h"
#include "procfs.h"
#include "samples.h"
#include "symbolize.h"
#include "unwind.h"
#include "watch.h"

#define MAX_PIDS 4096

struct targets {
	struct targets_deps d;
	struct watch *watch; /* --watch: which processes to trace */
	__u32 pids[MAX_PIDS];
	size_t nr_pids;
};

struct targets *targets__new(const struct targets_deps *d)
{
	struct targets *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->d = *d;
	if (d->watch && !(t->watch = watch__new(d->comms, d->nr_comms, getpid()))) {
		free(t);
		return NULL;
	}
	return t;
}

void targets__free(struct targets *t)
{
	if (!t)
		return;
	watch__free(t->watch);
	free(t);
}

static bool has(const struct targets *t, __u32 pid)
{
	size_t i;

	for (i = 0; i < t->nr_pids; i++)
		if (t->pids[i] == pid)
			return true;
	return false;
}

/* 1: pid is new to the set; 0: it was there; -1: the set is full */
static int add(struct targets *t, __u32 pid)
{
	if (has(t, pid))
		return 0;
	if (t->nr_pids == MAX_PIDS)
		return -1;
	t->pids[t->nr_pids++] = pid;
	return 1;
}

static void remove_pid(struct targets *t, __u32 pid)
{
	size_t i;

	for (i = 0; i < t->nr_pids; i++)
		if (t->pids[i] == pid) {
			t->pids[i] = t->pids[--t->nr_pids];
			return;
		}
}

/* the JOIN record's how (0: BPF sent it) */
static __u32 join_how(enum targets_how how)
{
	switch (how) {
	case TARGETS_ATTACHED:
		return GMT_JOIN_PID;
	case TARGETS_SPAWNED:
		return GMT_JOIN_COMMAND;
	case TARGETS_FOUND:
		return GMT_JOIN_SCAN;
	case TARGETS_LATE:
		return GMT_JOIN_LATE;
	default:
		return 0;
	}
}

void targets__join(struct targets *t, __u32 pid, enum targets_how how)
{
	bool running = how != TARGETS_SPAWNED;
	bool found = how == TARGETS_FOUND || how == TARGETS_LATE || how == TARGETS_SEEN;
	char comm[32];

	/* BPF and the scan may both find it: the first joins it */
	if (found && has(t, pid))
		return;
	if ((how == TARGETS_FOUND || how == TARGETS_LATE) &&
	    (t->nr_pids == MAX_PIDS || !bpfmaps__add_target(t->d.maps, pid)))
		return;
	if (add(t, pid) > 0)
		bpfmaps__restart(t->d.maps, pid);
	samples__join(t->d.samples, pid, !running, join_how(how));
	if (running)
		symbolizer__refresh(t->d.sym, pid);
	bpfmaps__push_code(t->d.maps, pid);
	if (running && t->d.unwind_early)
		unwinder__prepare(t->d.unw, pid);
	/* a started command has not run yet: what it maps comes with its mmaps */
	if (running && t->d.gpu)
		gpulib__scan(t->d.gpu, pid);
	if (found && !t->d.quiet) {
		procfs__read(pid, "comm", comm, sizeof(comm));
		comm[strcspn(comm, "\n")] = 0;
		fprintf(stderr, "gpumemtrace: tracing pid %u (%s)\n", pid, comm);
	}
}

void targets__fork(struct targets *t, __u32 child)
{
	/* what was known of an earlier process with this pid is not this one's */
	symbolizer__invalidate(t->d.sym, child);
	if (t->d.unw)
		unwinder__forget(t->d.unw, child);
	if (add(t, child) >= 0)
		bpfmaps__restart(t->d.maps, child);
}

void targets__exec(struct targets *t, __u32 pid)
{
	symbolizer__invalidate(t->d.sym, pid);
	symbolizer__refresh(t->d.sym, pid);
	if (t->d.unw)
		unwinder__refresh(t->d.unw, pid);
	/* BPF restarts a process's fault counts at exec */
	if (has(t, pid))
		bpfmaps__restart(t->d.maps, pid);
	if (t->d.gpu)
		gpulib__scan(t->d.gpu, pid);
	if (has(t, pid))
		samples__exec(t->d.samples, pid);
}

/* new code to symbolize against; a GPU library dlopen'ed now is probed now */
void targets__mapped(struct targets *t, __u32 pid)
{
	symbolizer__refresh(t->d.sym, pid);
	if (t->d.unw)
		unwinder__refresh(t->d.unw, pid);
	if (t->d.gpu)
		gpulib__scan(t->d.gpu, pid);
}

void targets__code_early(struct targets *t, __u32 pid)
{
	bpfmaps__push_code(t->d.maps, pid);
}

void targets__exit(struct targets *t, __u32 pid)
{
	if (t->watch)
		watch__forget(t->watch, pid); /* its pid may come back */
	bpfmaps__leave(t->d.maps, pid);
	remove_pid(t, pid);
	/* nothing of it is symbolized past its exit */
	symbolizer__invalidate(t->d.sym, pid);
	if (t->d.unw)
		unwinder__forget(t->d.unw, pid);
}

void targets__discover(struct targets *t)
{
	__u32 pids[64];
	size_t i, n;
	bool late;

	if (!t->watch)
		return;
	do {
		n = watch__scan(t->watch, event__now_ns(), pids, 64, &late);
		for (i = 0; i < n; i++)
			targets__join(t, pids[i], late ? TARGETS_LATE : TARGETS_FOUND);
	} while (n == 64);
}

void targets__tick(struct targets *t)
{
	size_t i;

	targets__discover(t);
	/* a fallback for kernels without the mmap tracepoint, and for
	 * libraries mapped while the reader was behind */
	for (i = 0; t->d.gpu && i < t->nr_pids; i++)
		gpulib__scan(t->d.gpu, t->pids[i]);
}

const __u32 *targets__pids(const struct targets *t, size_t *n)
{
	*n = t->nr_pids;
	return t->pids;
}
