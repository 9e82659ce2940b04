/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Stacks of code built without frame pointers, unwound by the call frame
 * information every binary keeps (.eh_frame), with elfutils' libdwfl, from
 * the registers and the slice of user stack that BPF sent (gmt_ustack).
 * A target's files are opened inside its root; nothing of it runs. */
#ifndef GMT_UNWIND_H
#define GMT_UNWIND_H

#include <stddef.h>
#include <linux/types.h>
#include "symbolize.h"

struct gmt_ustack;
struct unwinder;

/* modules and their files come from sym, which keeps them past exit */
struct unwinder *unwinder__new(struct symbolizer *sym);
/* where pid's modules come from, in symbolizer__each_module's shape (the
 * fuzzer's own files) */
typedef void (*unwinder_modules_fn)(void *src, __u32 pid, symbolizer_module_fn fn, void *arg);
struct unwinder *unwinder__new_from(unwinder_modules_fn modules, void *src);
void unwinder__free(struct unwinder *u);
/* the frames of u's stack, innermost first, into ips (at most max): their
 * number, 0 when it could not be unwound */
unsigned int unwinder__unwind(struct unwinder *u, const struct gmt_ustack *s, __u64 *ips,
			      unsigned int max);
/* read pid's modules and their call frame information now, not at its
 * first stack: a process attached while it serves would wait on that */
void unwinder__prepare(struct unwinder *u, __u32 pid);
/* pid's code changed (exec, dlopen): report its modules again when next
 * used, as the symbolizer read them */
void unwinder__refresh(struct unwinder *u, __u32 pid);
/* pid is gone */
void unwinder__forget(struct unwinder *u, __u32 pid);

#endif
