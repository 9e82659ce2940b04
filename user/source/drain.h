/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel ring buffer, emptied by a thread of its own into a queue in
 * user space, so that slow work on the main loop (the live view's frame,
 * the Prometheus text, a symbol lookup) never fills the kernel's buffer.
 * The main loop takes the records when drain__fd is readable and at its own
 * ticks: the queued ones and what the kernel holds, all up to that moment,
 * in order. */
#ifndef GMT_DRAIN_H
#define GMT_DRAIN_H

#include <stddef.h>
#include "stream/event.h"

/* past this many queued bytes, records are dropped and counted */
#define DRAIN_QUEUE_MAX (256u << 20)

struct drain;
/* one record: the ring buffer callback's shape */
typedef int (*drain_fn)(void *ctx, void *data, size_t size);

/* a reader of the BPF ring buffer map map_fd; records go to fn(ctx, ...)
 * on the thread that calls drain__run. NULL with errno set. */
struct drain *drain__new(int map_fd, drain_fn fn, void *ctx);
/* fn(ctx, record) on the reader's thread as each record is read, before
 * it is queued: for what must be done while the record's process lives
 * (the main loop may take the record after it has exited). Quick, and
 * safe beside the main loop. Set before drain__start. */
typedef void (*drain_early_fn)(void *ctx, const struct gmt_hdr *e);
void drain__set_early(struct drain *d, drain_early_fn fn, void *ctx);
/* starts the thread; -errno */
int drain__start(struct drain *d);
/* readable when the kernel asked for a reader (the buffer filling, or a
 * record that must be read while its process lives) */
int drain__fd(const struct drain *d);
/* empties the kernel's buffer into the queue, then hands the queued
 * records to fn */
void drain__run(struct drain *d);
/* stops and joins the thread; later drain__run calls read the kernel */
void drain__stop(struct drain *d);
/* records dropped for a full queue, by source (GMT_SRC_*) */
__u64 drain__dropped(const struct drain *d, unsigned int src);
void drain__free(struct drain *d);

#endif
