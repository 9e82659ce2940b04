/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The verdicts: for each process, each category's shape over its requests
 * (or over time when there are too few), allocation failures with what was
 * live, evictions against the decode rate, and device growth the API calls
 * do not explain; each with its evidence and a plain message. A pure
 * function of the model. */
#ifndef GMT_FINDINGS_H
#define GMT_FINDINGS_H

#include "analyze.h"
#include "categories.h"

/* in the order the report shows them: the most urgent first */
enum finding_kind {
	F_ALLOC_FAILURE,
	F_EXIT, /* the process died: a signal or a failing exit status */
	F_LEAK,
	F_UNEXPLAINED,
	F_EVICTION,
	F_GROWING, /* rising, too early to tell: what would decide it */
	F_BOUNDED,
	F_SETTLED, /* grew slower and slower, then level */
	F_STEP,
	F_STEADY,
	F_NR,
};

#define FINDING_NUMS 16
#define FINDING_STACKS 8
#define FINDING_EVIDENCE 8

/* a holder of the growth (or of live memory at a failure) */
struct finding_stack {
	__u32 stack_id; /* 0: not a stack (the brk heap) */
	__u64 bytes, count, min_size, max_size;
	char label[96]; /* the frame that tells it from the others */
	char role[24];	/* what it is for (roles.h), when its frames say */
	bool sampled;	/* bytes estimated from `count` sampled first touches */
};

struct finding {
	enum finding_kind kind;
	__u32 pid;
	size_t seq;		      /* the order found: ties keep it */
	char category[32], where[48]; /* categories.h's name and text */
	bool per_request;	      /* judged over requests, not time */
	size_t points;
	/* NAN when not known or not meant for this kind */
	double bytes_per_request, bytes_per_second;
	double ceiling, requests_to_exhaustion, seconds_to_exhaustion, limit;
	double first, last;   /* the level at the first and last point */
	double since_s;	      /* when the shape's change began */
	size_t since_request; /* 1-based; 0 none */
	double confidence;
	struct shape_result shape;
	/* extra figures per kind, by JSON key (docs/json.md) */
	struct {
		const char *key;
		double v;
	} nums[FINDING_NUMS];
	size_t nr_nums;
	const char *strs_key[2];
	char strs[2][64];
	struct finding_stack stacks[FINDING_STACKS];
	size_t nr_stacks;
	char roles[200]; /* what the growth is for, by role, where the stacks say */
	char evidence[FINDING_EVIDENCE][200];
	size_t nr_evidence;
	char message[1536];
};

struct findings {
	struct finding *v;
	size_t n, cap;
};

struct findings *findings__build(const struct model *m);
void findings__free(struct findings *f);
const char *findings__kind_name(enum finding_kind k);

/* helpers for the finders (findings*.c) */
struct finding *findings__add(struct findings *f, enum finding_kind kind, __u32 pid);
void finding__num(struct finding *f, const char *key, double v);
void finding__str(struct finding *f, const char *key, const char *v);
void finding__evidence(struct finding *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* labels for stacks that tell them apart: the first frame they do not share;
 * and their roles, where their frames say */
void findings__label_stacks(const struct model *m, struct finding_stack *s, size_t n);
/* n stacks' bytes by role, biggest first, "other" last, into buf ("KV cache
 * 1.9 GiB (2), ..."): its length; 0 when no stack has a role */
size_t findings__by_role(const struct model *m, const struct finding_stack *s, size_t n,
			 __u64 other, char *buf, size_t size);
/* the same without the counts */
size_t findings__by_role_bytes(const struct model *m, const struct finding_stack *s, size_t n,
			       char *buf, size_t size);
/* add `bytes` made by stack id to v (n of at most max, one entry a stack) */
void findings__hold(struct finding_stack *v, size_t *n, size_t max, __u32 id, __u64 bytes);
/* p's sampled first touches in [from, to], by stack, into v: their number */
size_t findings__touch_stacks(const struct model_proc *p, __u64 from, __u64 to,
			      struct finding_stack *v, size_t max);
/* what p's memory is for, where its stacks say (0: they name no role):
 * GPU API memory live at `at`, and host memory first touched until then
 * (sampled); "KV cache 1.9 GiB, model weights 225.5 MiB, other 2.0 MiB" */
size_t findings__gpu_roles(const struct model *m, const struct model_proc *p, __u64 at, char *buf,
			   size_t size);
size_t findings__touch_roles(const struct model *m, const struct model_proc *p, __u64 at, char *buf,
			     size_t size);
/* failures, and device growth the API does not explain (findings_gpu.c) */
void findings__failures(const struct model *m, const struct model_proc *p, struct findings *f);
/* an exit by a signal or with a failing status (findings_exit.c) */
void findings__exit(const struct model *m, const struct model_proc *p, struct findings *f);
/* evictions of p's buffers against its decode rate (findings_bo.c) */
void findings__evictions(const struct model *m, const struct model_proc *p, struct findings *f);

#endif
