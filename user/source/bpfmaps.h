/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The BPF maps user space reads and writes: the counters BPF aggregates
 * (page faults per process, drops per source), sent as records when they
 * move, and the per-process slots user space fills or frees (the target
 * set, code ranges, the last RSS sent, the fault counts) */
#ifndef GMT_BPFMAPS_H
#define GMT_BPFMAPS_H

#include <stdbool.h>
#include "stream/event.h"

struct attach;
struct drain;
struct bpfmaps;

/* NULL with errno set */
struct bpfmaps *bpfmaps__new(struct attach *a, gmt_sink_fn sink, void *ctx);
void bpfmaps__free(struct bpfmaps *m);
/* BPF follows pid (and its children) from now; false when it cannot */
bool bpfmaps__add_target(struct bpfmaps *m, __u32 pid);
/* pid's code, as /proc says it now, to BPF: it sends a stack slice only
 * for a process whose code it knows. Safe on the ring buffer's reader
 * thread. */
void bpfmaps__push_code(struct bpfmaps *m, __u32 pid);
/* pid is a target whose fault counts start from zero (a new process, or
 * one that has exec'd: BPF restarts its counts there) */
void bpfmaps__restart(struct bpfmaps *m, __u32 pid);
/* pid has exited: its last fault counts go out, and its slots in BPF are
 * freed, so that a day of short-lived children costs nothing */
void bpfmaps__leave(struct bpfmaps *m, __u32 pid);
/* each interval: the fault counts of the targets, where they moved */
void bpfmaps__faults(struct bpfmaps *m);
/* the records lost, in the kernel and in d's queue, where that moved */
void bpfmaps__lost(struct bpfmaps *m, const struct drain *d);

#endif
