/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A live run, from its SESSION record to its END record: the subsystems
 * that the loop and the dispatch use, made in order with what each needs;
 * the stream's first records, the first target, the GPU libraries and NVML
 * before the target is let go; each interval's samples and counters; the
 * last records once tracing has stopped. */
#ifndef GMT_SESSION_H
#define GMT_SESSION_H

#include <stddef.h>
#include "drain.h"
#include "stream/event.h"

struct attach;
struct collect_opts;
struct gpulib;
struct session;
struct stacks;
struct targets;

/* the subsystems, with nothing emitted yet; the ring buffer's records go
 * to ring(ctx, ...), and to early(ctx, ...) on the reader's thread
 * (drain.h). NULL with `err` set and errno ENOMEM or EIO. */
struct session *session__new(struct attach *a, const struct collect_opts *o, drain_fn ring,
			     drain_early_fn early, void *ctx, char *err, size_t size);
void session__free(struct session *s);
/* what the loop and the dispatch use; the session owns them */
struct drain *session__drain(const struct session *s);
struct stacks *session__stacks(const struct session *s);
struct targets *session__targets(const struct session *s);
struct gpulib *session__gpu(const struct session *s); /* NULL: no gpuapi programs */
/* the stream's first records (SESSION, the probe groups'), the first
 * target joined, the GPU libraries, --watch's first search, NVML */
void session__begin(struct session *s);
/* the target let go and the reader's thread started: tracing has begun.
 * -errno with `err` set, the stream ended (END: error), when it could not */
int session__release(struct session *s, char *err, size_t size);
/* each interval: the records queued, the GPU helpers, the targets, their
 * samples (smaps every few), the BPF counters */
void session__interval(struct session *s);
/* tracing has stopped for `reason` (GMT_END_*): the records left, the last
 * samples and counts, then END */
void session__end(struct session *s, __u32 reason);

#endif
