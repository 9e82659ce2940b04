/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the target (a running pid, or a command started stopped before exec) and
 * the BPF programs: feature probes, load, attach, one result per probe */
#ifndef GMT_ATTACH_H
#define GMT_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "stream/event.h"

struct attach;
struct gmt_bpf;

struct attach_opts {
	pid_t pid;		  /* trace this process, or */
	char **argv;		  /* start this command, traced from its first instruction, or */
	bool watch;		  /* none yet: the collector adds them (--watch) */
	const char *const *comms; /* --watch: names BPF finds at their exec */
	size_t nr_comms;
	bool follow_forks;
	bool all_bos; /* -a: kernel GPU buffers of every process */
	unsigned int ringbuf_mb;
	__u64 touch_bytes; /* a stack for about one in this many bytes first touched; 0: none */
	bool verbose;
};

/* 0 when this process may load BPF; else -EPERM and `msg` says what is needed */
int attach__check_privileges(char *msg, size_t size);
/* NULL on failure, with `err` saying why and what to do */
struct attach *attach__new(const struct attach_opts *o, char *err, size_t size);
/* lets a started command exec; -errno (and `err`) when it could not run */
int attach__release(struct attach *a, char *err, size_t size);
pid_t attach__target(const struct attach *a);
/* the gpuapi programs loaded: gpulib may attach them */
bool attach__gpu_ready(const struct attach *a);
/* loaded for uprobe_multi links (else for a perf event per uprobe) */
bool attach__uprobe_multi(const struct attach *a);
/* stack slices may go out at any time, redacted by the code ranges BPF is
 * given (bpf/ustack.bpf.h) */
bool attach__redacts(const struct attach *a);
struct gpulib;
/* its uprobes go when the attach does, after the report, with the other
 * links at once */
void attach__adopt_gpulib(struct attach *a, struct gpulib *g);
/* a pidfd of the target: readable once it has exited */
int attach__pidfd(const struct attach *a);
struct gmt_bpf *attach__skel(const struct attach *a);
/* what each probe group did, as records ready for the stream */
const struct gmt_probe *attach__probes(const struct attach *a, size_t *n);
/* Tracing has ended: the tracepoints' links start going, from a thread of
 * their own, while what they sent is read and the report is made (perf
 * events detach in turn, a grace period each: half a second for the
 * syscall tracepoints). The GPU uprobes go in attach__free. */
void attach__stop(struct attach *a);
/* reaps a started command that has exited */
void attach__free(struct attach *a);

#endif
