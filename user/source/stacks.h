/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The code behind records: the raw addresses and stack slices BPF sends
 * become stack ids, each stack symbolized into one STACK record the first
 * time it is seen, so that a record goes out with an id and no addresses */
#ifndef GMT_STACKS_H
#define GMT_STACKS_H

#include "stream/event.h"

struct stacks;
struct symbolizer;
struct unwinder;

/* unw: NULL without CFI unwinding; the records go to sink(ctx, ...) */
struct stacks *stacks__new(struct symbolizer *sym, struct unwinder *unw, gmt_sink_fn sink,
			   void *ctx);
void stacks__free(struct stacks *s);
/* a thread's stack slice (GMT_EV_USTACK), kept until its record comes */
void stacks__slice(struct stacks *s, const struct gmt_ustack *u);
/* the id of a frame-pointer walk of nr addresses; 0: none */
__u32 stacks__of(struct stacks *s, __u32 pid, const __u64 *ips, unsigned int nr);
/* the id of e's stack: by CFI from its thread's slice when that finds more
 * frames than the frame-pointer walk fp (n addresses) did */
__u32 stacks__unwound(struct stacks *s, const struct gmt_hdr *e, const __u64 *fp, unsigned int n);

#endif
