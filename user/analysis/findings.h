/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The verdicts: for each process, each category's shape over its requests
 * (or over time when there are too few), allocation failures with what was
 * live, evictions against the decode rate, and device growth the API calls
 * do not explain; each with its figures, and what it says as codes (the
 * report words them). A pure function of the model. */
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
	F_NOT_JUDGED, /* too few points for a shape */
	F_NR,
};

#define FINDING_NUMS 32
#define FINDING_STACKS 8
#define FINDING_EVIDENCE 12
#define FINDING_SAYS 10
#define SAY_VALUES 8
#define SAY_STRS 3

/* What a finding says, sentence by sentence, as codes with figures: the
 * report's words (report/report_words.c) write each one, and the tests
 * assert on the codes and figures. M_ codes make the message (the first is
 * its reason), E_ codes the lines of evidence. The comment of each names
 * its strings (s) and values (v), in order. */
enum say {
	SAY_NONE,
	/* shapes (findings_shape.c); v "pr" is 1 over requests, 0 over time */
	M_LEAK,		   /* s where; v slope lo hi (a unit), first last points pr base */
	M_LEVEL_UNTIL,	   /* v pr point */
	M_STEP_RISES,	   /* v tau */
	M_FIXED_ENTRIES,   /* v bytes, min and max prompt tokens */
	M_RUNS_OUT,	   /* s what; v limit more pr host */
	M_RUNS_OUT_CGROUP, /* s cgroup; v limit used more pr file (enum model_limit_file) swap */
	M_TRY_HOST_STACKS, /* the stacks below allocate it */
	M_TRY_API_STACKS,  /* allocated while serving and never freed */
	M_BOUNDED,	   /* s where; v rate point pr ceiling points_after */
	M_SETTLED,	   /* s where; v rise point pr ceiling points_after */
	M_STEADY_AT,	   /* s where; v middle lo hi points pr */
	M_STEADY_WANDERS,  /* s where; v lo hi points pr last */
	M_STEADY_SMALL,	   /* v rise material */
	M_GROWING_SLOWING, /* s where; v early recent (a unit) first last points pr more */
	M_GROWING_DRIFT,   /* s where; v first last points pr slope more */
	M_STEP_REQUEST,	   /* s where; v step request seconds */
	M_STEP_TIME,	   /* s where; v step seconds */
	M_BY_ROLE,	   /* s roles */
	M_ROSE_HELD,	   /* s where; v rise percent first last points pr */
	/* roles against their bounds (findings_roles.c) */
	M_LEAK_UNBOUNDED,  /* s label of its biggest stack; v share rest_bounded */
	M_ROLE_PAST_BOUND, /* s role bound; v bytes bound share */
	M_ROLE_FILLING,	   /* s where; v step share bound */
	M_ROLE_WITHIN,	   /* s where role bound; v rise first last points pr share bound */
	M_UNEXPLAINED,	   /* s where; v excess pr first last span api_slope */
	M_GRAPH_CACHE,	   /* v graphs_off */
	M_DRIVER_GROWS,
	M_GRAPHS_NOW, /* v per_unit live pr */
	/* counts and series too short (findings_count.c) */
	M_COUNT_LEAK,	 /* s where; v slope first last points pr base */
	M_COUNT_GROWING, /* s where; v slope first last points pr */
	M_COUNT_LEVELS,	 /* s where; v first ceiling lo hi point points pr */
	M_COUNT_STEP,	 /* s where; v step first last point pr */
	M_COUNT_STEADY,	 /* s where; v lo hi points pr */
	M_COUNT_SWINGS,	 /* s where; v hi hi_point last lo points pr */
	M_GRAPHS_HOLD,	 /* v llama graphs_off */
	M_NOT_JUDGED,	 /* s where; v samples span requests needed interval driver */
	/* llama-server's prompt cache (findings_llama.c); v from: enum conf_from */
	M_CACHE_OFF,	   /* v from */
	M_CACHE_UNLIMITED, /* v from */
	M_CACHE_EXCEEDED,  /* v grown mib from */
	M_CACHE_STOPS_AT,  /* v mib from bytes */
	M_CACHE_LEVELS,	   /* v mib from bytes requests known (the stacks say it is the cache) */
	M_CACHE_OOM_FIRST, /* v more available requests by_cgroup */
	M_CACHE_TRY_LOWER,
	M_CACHE_SHARE,	 /* v rise percent mib from over */
	M_CACHE_FULL,	 /* s where; v first last saves fit mib from */
	M_CACHE_FILLING, /* s where; v step saves mean total mib from ceiling more */
	/* allocation failures (findings_gpu.c) */
	M_FAILED, /* s call result role; v size type heap heap_bytes device_local seconds times live
		   */
	M_FAILED_ROLES,	   /* s roles */
	M_FAILED_STACKS,   /* v other: the stacks are the finding's */
	M_FAIL_TRY_GRAPHS, /* v llama graphs_off */
	M_FAIL_TRY_SHRINK, /* s holder; v percent */
	M_FAIL_TRY_CALL,   /* s role; v size biggest live */
	M_FAIL_TRY_KV,	   /* v read ctx from slots from fit scaled_kv */
	M_FAIL_END,
	/* evictions (findings_bo.c) */
	M_EVICTED,	   /* s comm; v seconds bytes evictor created */
	M_EVICT_RETURNED,  /* v back freed */
	M_EVICT_STILL_OUT, /* v out back freed */
	M_EVICT_NONE_BACK,
	M_EVICT_AFTER_FREE, /* v evictor seconds */
	M_EVICT_BY_END,
	M_DECODE_FELL,	   /* v before after n_before n_after partly_back */
	M_DECODE_NOT_FELL, /* v before after n_before n_after */
	M_DECODE_NO_RATES,
	/* exits (findings_exit.c) */
	M_EXIT, /* s comm how; v killed seconds requests answered total after_failure failed_size */
	M_CRASH_THREAD,	 /* s thread frames (NULL: no stack); v tid code addr sender self sig */
	M_CRASH_SERVING, /* s the requests; v how many */
	M_CRASH_HEAP,	 /* the C library found its heap corrupted */
	/* evidence */
	E_STEP_SPREAD,	    /* v cv */
	E_STEP_FOLLOWS,	    /* v tau */
	E_STEP_NOT_FOLLOWS, /* v tau requests */
	E_HELD_BY_ROLE,	    /* s roles; v touched */
	E_TOUCHES,	    /* s label; v from to total top per_touch */
	E_MADE_HELD,	    /* s label; v total from to top */
	E_MAPPINGS_COVER,   /* v mapped grew */
	E_GRAPHS_GROW,	    /* s what; v per_unit pr live */
	E_HOST_NOT_GPU,	    /* s the flat categories */
	E_LESS_VULKAN,	    /* v bytes */
	E_FIRST_LEFT_OUT,   /* v step request */
	E_STEP_FIT,	    /* v points pr first last noise */
	E_BOUNDED_FIT,	    /* v points pr rate point noise confidence */
	E_SHAPE_FIT,	    /* s shape; v points pr slope noise confidence */
	E_CHANGED_ONCE,	    /* s where; v step request seconds */
	E_DRIVER_AGREES,    /* s where; v slope pr */
	E_DRIVER_RATE,	    /* s where; v slope lo hi pr */
	E_API_RATE,	    /* v slope lo hi pr */
	E_GRAPHS_LIVE,	    /* v per_unit live pr */
	E_LIVE_BY_ROLE,	    /* s roles */
	E_CALL_FAILED,	    /* s call result; v size has_stack */
	E_EVICTIONS,	    /* s comm; v count evictor first last */
	E_VRAM_LEVELS,	    /* v before end */
	E_DECODE_RATES,	    /* v before n_before after n_after share */
	E_EXITED,	    /* s how; v seconds serving */
	E_CACHE_ENTRIES,    /* v saves min max total limit_mib fit (0: no limit) */
	E_CHECKPOINTS,	    /* v count max total */
	E_FIXED_STATE,	    /* v bytes saves min_tokens max_tokens */
	SAY_NR,
};

struct finding_say {
	enum say code;
	size_t nr_v;
	double v[SAY_VALUES];
	char s[SAY_STRS][240];
};

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
#define FINDING_STRS 3
	const char *strs_key[FINDING_STRS];
	char strs[FINDING_STRS][64];
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

struct findings {
	struct finding *v;
	size_t n, cap;
};

struct findings *findings__build(const struct model *m);
void findings__free(struct findings *f);
const char *findings__kind_name(enum finding_kind k);
/* "leak", "runs_out", ...: a say code as the JSON report names it */
const char *findings__say_name(enum say code);
/* the finding's reason: its message's first code */
enum say finding__reason(const struct finding *f);

/* helpers for the finders (findings*.c) */
struct finding *findings__add(struct findings *f, enum finding_kind kind, __u32 pid);
void finding__num(struct finding *f, const char *key, double v);
void finding__str(struct finding *f, const char *key, const char *v);
/* a sentence of the message, a line of evidence: its code, strings (NULL:
 * none) and values */
void finding__say(struct finding *f, enum say code, const char *const s[SAY_STRS], const double *v,
		  size_t nv);
void finding__evidence(struct finding *f, enum say code, const char *const s[SAY_STRS],
		       const double *v, size_t nv);
/* more than SAY_VALUES values is an error at compile time (excess elements) */
#define SAY_V(...)                                 \
	(const double[SAY_VALUES]){ __VA_ARGS__ }, \
		sizeof((double[]){ __VA_ARGS__ }) / sizeof(double)
#define SAY_S(...)                    \
	(const char *const[SAY_STRS]) \
	{                             \
		__VA_ARGS__           \
	}
/* SAY(f, M_X, SAY_S("a"), 1, 2): at least one value (0 where none) */
#define SAY(f, code, s, ...) finding__say((f), (code), (s), SAY_V(__VA_ARGS__))
#define EVIDENCE(f, code, s, ...) finding__evidence((f), (code), (s), SAY_V(__VA_ARGS__))
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

#endif
