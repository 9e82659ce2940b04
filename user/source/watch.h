/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --watch: which processes to trace, found in /proc each interval: those
 * that map a GPU library (a GPU API, a GPU backend of llama.cpp) or a GPU
 * device, or whose name is one of --comm. A process is looked at each
 * interval while it is young (under 30 s: a server loads its GPU backend
 * after it starts), then once a minute. */
#ifndef GMT_WATCH_H
#define GMT_WATCH_H

#include <stddef.h>
#include "stream/event.h"

struct watch;

struct watch *watch__new(const char *const *comms, size_t nr_comms, __u32 self);
/* the processes to trace that were not chosen before, into pids (at most
 * max); their number */
size_t watch__scan(struct watch *w, __u64 now_ns, __u32 *pids, size_t max);
/* pid has exited: a new process may take its number */
void watch__forget(struct watch *w, __u32 pid);
void watch__free(struct watch *w);

#endif
