/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `replay --pprof OUT` and `replay --folded OUT`: the allocating stacks of
 * a recording as a gzipped pprof profile (proto/profile.proto, encoded by
 * protobuf-c), or as folded text for flamegraph.pl and speedscope. GPU API
 * allocations count exactly; host first touches are samples, each weighted
 * by the bytes it stands for. docs/pprof.md says what each value means. */
#ifndef GMT_PPROF_H
#define GMT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

enum pprof_sample {
	PPROF_INUSE,  /* live at the end */
	PPROF_ALLOC,  /* allocated over the run */
	PPROF_GROWTH, /* allocated between --from and --to, live at --to */
};

struct pprof_opts {
	enum pprof_sample sample;
	/* "SECS" from the start, or "#N", request N (its start for from, its
	 * end for to); NULL: the start, the end */
	const char *from, *to;
};

/* whether s is a point --from and --to take */
bool pprof__point_ok(const char *s);
/* the profile of m into a new file at path (mode 0600, never through a
 * symlink); folded: as folded text. 0, or -1 with err set and no file */
int pprof__write(const struct model *m, const struct pprof_opts *o, const char *path, bool folded,
		 char *err, size_t size);
/* the in-use samples as --folded sums them (live at the end), one call of
 * fn each, unsummed: the stack, the report's category, and whether it is a
 * sampled first touch (an estimate); 0, or -1 out of memory */
struct pprof_stack {
	__u32 pid, stack_id;
	const char *category;
	bool sampled;
	int64_t bytes;
};
int pprof__inuse(const struct model *m, void (*fn)(void *ctx, const struct pprof_stack *s),
		 void *ctx);
/* the same into fd, which it closes */
int pprof__to(const struct model *m, const struct pprof_opts *o, int fd, bool folded, char *err,
	      size_t size);

#endif
