/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* helpers for the event stream of bpf/gmt_events.h */
#ifndef GMT_EVENT_H
#define GMT_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "gmt_events.h"

#define GMT_USER_CPU 0xffffffffu

/* where events go after the source: the model, the recorder */
typedef void (*gmt_sink_fn)(void *ctx, const struct gmt_hdr *e);

/* record types are 1 to EVENT_TYPES - 1; the name of one, "unknown" past them */
#define EVENT_TYPES GMT_EV_MAX
const char *event__type_name(unsigned int type);
/* true when `e` (with `avail` bytes readable) is a well-formed record */
bool event__valid(const struct gmt_hdr *e, size_t avail);
/* header for an event made in user space */
void event__init(struct gmt_hdr *h, unsigned int type, size_t len, __u64 ts_ns, __u32 pid);
/* the llama_context a decode or encode ran on, or 0 (a recording without it) */
__u64 event__decode_ctx(const struct gmt_decode *e);
/* the length of a record of n bytes: records are 8-byte aligned */
static inline size_t event__round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}
__u64 event__now_ns(void);
/* the stack's frame names: "symbol\0module\0" per frame, after the frames */
const char *event__stack_names(const struct gmt_stack *s);

#endif
