/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The verdicts: for each process, each category's shape over its requests
 * (or over time when there are too few), allocation failures with what was
 * live, evictions against the decode rate, and device growth the API calls
 * do not explain; each with its figures, and what it says as codes
 * (says.h; words.c words them). A pure function of the model. */
#ifndef GMT_FINDINGS_H
#define GMT_FINDINGS_H

#include "analyze.h"
#include "categories.h"
#include "says.h"

#define FINDING_NUMS 32
#define FINDING_STACKS 8
#define FINDING_EVIDENCE 12
#define FINDING_SAYS 10
/* a holder of the growth (or of live memory at a failure) */
struct finding_stack {
	__u32 stack_id; /* 0: not a stack (the brk heap) */
	__u64 bytes, count, min_size, max_size;
	char label[96]; /* the frame that tells it from the others */
	char role[24];	/* what it is for (roles.h), when its frames say */
	bool sampled;	/* bytes estimated from `count` sampled first touches */
};

/* what bounds a role's memory (findings_roles.c) */
enum role_bound {
	ROLE_NO_BOUND,	  /* "other" */
	ROLE_CACHE_RAM,	  /* the prompt cache: --cache-ram */
	ROLE_CHECKPOINTS, /* --ctx-checkpoints a slot, of the size the server made */
	ROLE_AT_LOAD,	  /* KV cache, weights, output buffers: sized at load */
	ROLE_PER_SHAPE,	  /* compute and encoder buffers, kernel code, graphs */
};

/* a role's part of what grew, against its bound */
struct finding_role {
	char role[24];
	double bytes; /* of the growth: held, or first touched (sampled) */
	double held;  /* its share of what the level rose by */
	__u64 count;
	__u64 sampled; /* of count, sampled first touches: held is an estimate */
	enum role_bound bound;
	double bound_bytes; /* NAN where no figure bounds it */
};

#define FINDING_ROLES 12

struct finding {
	enum finding_kind kind;
	__u32 pid;
	size_t seq;		      /* the order found: ties keep it */
	char category[32], where[48]; /* categories.h's name and text */
	bool per_request;	      /* judged over requests, not time */
	bool counts;		      /* of things (graph executables), not bytes */
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
#define FINDING_STRS 4
	const char *strs_key[FINDING_STRS];
	char strs[FINDING_STRS][96]; /* a stack's label fits (finding_stack) */
	struct finding_stack stacks[FINDING_STACKS];
	size_t nr_stacks;
	char roles[200]; /* what the growth is for, by role, where the stacks say */
	struct finding_role role_v[FINDING_ROLES]; /* the same, with bounds */
	size_t nr_roles;
	struct finding_say says[FINDING_SAYS]; /* the message */
	size_t nr_says;
	struct finding_say evidence[FINDING_EVIDENCE];
	size_t nr_evidence;
};

/* a request a slowdown names: which, how much slower, and why */
struct slow_req {
	__u32 pid;
	__u64 nth;
	double ratio;	/* its baseline's rate over its own */
	char cause[16]; /* the finding's "cause" */
	bool prompt;	/* its prompt was slow, not its decode */
};

struct findings {
	struct finding *v;
	size_t n, cap;
	struct slow_req *slow; /* by pid, then request */
	size_t nr_slow, slow_cap;
};

struct findings *findings__build(const struct model *m);
void findings__free(struct findings *f);
/* "leak", "bounded_cache": a kind as the JSON report names it; its title in
 * the text report ("BOUNDED CACHE") and its tag in the live view ("CACHE") */
const char *findings__kind_name(enum finding_kind k);
const char *findings__kind_title(enum finding_kind k);
const char *findings__kind_tag(enum finding_kind k);
/* "leak", "runs_out", ...: a say code as the JSON report names it */
const char *findings__say_name(enum say code);
/* the finding's reason: its message's first code */
enum say finding__reason(const struct finding *f);
/* the value of one of its strs by key; NULL where it has none */
const char *finding__str_of(const struct finding *f, const char *key);
/* a frame as the reports name it: its symbol, else "module+0xOFFSET" (in buf) */
const char *findings__frame_name(const struct model_frame *fr, char *buf, size_t size);

/* helpers for the finders (findings*.c) */
struct finding *findings__add(struct findings *f, enum finding_kind kind, __u32 pid);
void finding__num(struct finding *f, const char *key, double v);
void finding__str(struct finding *f, const char *key, const char *v);
/* the next sentence of the message, line of evidence (NULL: full) */
struct finding_say *finding__say_slot(struct finding *f);
struct finding_say *finding__evidence_slot(struct finding *f);
/* SAY(f, M_LEAK, .where = text, .slope = s, ...): a sentence of the
 * message, its arguments by the names says.h gives them; EVIDENCE: a line
 * of evidence */
#define SAY(f, c, ...) says__##c(finding__say_slot(f), &(const struct say_in_##c){ __VA_ARGS__ })
#define EVIDENCE(f, c, ...) \
	says__##c(finding__evidence_slot(f), &(const struct say_in_##c){ __VA_ARGS__ })
/* labels for stacks that tell them apart: the first frame they do not share;
 * and their roles, where their frames say */
void findings__label_stacks(const struct model *m, struct finding_stack *s, size_t n);
/* n stacks' bytes by role, biggest first, "other" last, into buf ("KV cache
 * 1.9 GiB (2), ..."): its length; 0 when no stack has a role */
size_t findings__by_role(const struct model *m, const struct finding_stack *s, size_t n,
			 __u64 other, char *buf, size_t size);
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
/* what p's memory is for at the end, by role and category: GPU API memory
 * live (its category: vulkan_device, ...) and host memory first touched
 * (host_anon, sampled), "other" where the frames name none; the number of
 * entries, 0 when no stack names a role */
struct role_bytes {
	const char *role;
	char category[32];
	double bytes;
};
size_t findings__role_bytes(const struct model *m, const struct model_proc *p, struct role_bytes *v,
			    size_t max);
/* f's roles with their bounds, in words ("prompt cache 6.0 MiB (of
 * --cache-ram 8.0 GiB), other 21.0 MiB (no bound)"): its length */
size_t findings__roles_text(const struct finding *f, char *buf, size_t size);
/* "cache_ram", "per_shape", ...: a bound as the JSON report names it */
const char *findings__bound_name(enum role_bound b);
/* failures, and device growth the API does not explain (findings_gpu.c) */
void findings__failures(const struct model *m, const struct model_proc *p, struct findings *f);
/* an exit by a signal or with a failing status (findings_exit.c) */
void findings__exit(const struct model *m, const struct model_proc *p, struct findings *f);
bool crash__fault(int sig, int code);
/* evictions of p's buffers against its decode rate (findings_bo.c) */
void findings__evictions(const struct model *m, const struct model_proc *p, struct findings *f);
/* requests slower than p's own, and why (findings_slow.c) */
void findings__slowdowns(const struct model *m, const struct model_proc *p, struct findings *f);
void findings__mark_slow(struct findings *f, __u32 pid, __u64 nth, double ratio, const char *cause,
			 bool prompt);
/* the marks in order, for findings__slow (findings__build does it last) */
void findings__sort_slow(struct findings *f);
/* the slowdown that names request nth of pid; NULL none */
const struct slow_req *findings__slow(const struct findings *f, __u32 pid, __u64 nth);

#endif
