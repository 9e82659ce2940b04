/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --watch's look in /proc: those processes that map a GPU library (a GPU
 * API, a GPU backend of llama.cpp) or a GPU device, or whose name is one of
 * --comm. New processes are found by BPF at their exec or first GPU
 * mapping (bpf/proc.bpf.c, bpf/mm.bpf.c); /proc is read in full at start,
 * for those already running, then once a minute as a safety net. */
#ifndef GMT_WATCH_H
#define GMT_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include "stream/event.h"

struct watch;

struct watch *watch__new(const char *const *comms, size_t nr_comms, __u32 self);
/* the processes to trace that were not chosen before, into pids (at most
 * max; a call after one that filled it goes on with the same scan); their
 * number. *late: found by a scan after the one at start. */
size_t watch__scan(struct watch *w, __u64 now_ns, __u32 *pids, size_t max, bool *late);
/* pid has exited: a new process may take its number */
void watch__forget(struct watch *w, __u32 pid);
void watch__free(struct watch *w);

#endif
