/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* what the finders share: one category's levels and their judging */
#ifndef GMT_FINDINGS_INT_H
#define GMT_FINDINGS_INT_H

#include "findings.h"

#define MIN_POINTS 4	 /* fewer say nothing about a shape */
#define MATERIAL 0.01	 /* of the process's memory: less is steady, however clean */
#define MATERIAL_COUNT 4 /* things (graph executables): warm-up makes a few */

/* one category's levels, and what they make */
struct judged {
	struct category c;
	double *y;
	const struct model_request **req; /* per point, when over requests */
	__u64 *ts;
	double *x; /* where each point is: its request's number, or seconds */
	size_t n;
	bool per_request;
	bool base;	      /* point 0 is the level before the first request */
	double dt;	      /* seconds between points over time */
	double material;      /* a change smaller than this is steady */
	double gpu_part;      /* host_anon: Vulkan memory taken off its last level */
	unsigned int gpu_api; /* whose memory that is (MODEL_API_*); NONE: several */
	double first;	      /* the first request's rise, left out of the shape; 0: none */
	struct shape_result r;
};

/* findings_levels.c: the points to judge */
void judged__levels(const struct model *m, const struct model_proc *p, struct judged *j);
void judged__free(struct judged *j);
/* judge the shape without the first request where it alone rose by more
 * than the rest moved (a one-off on first use) */
void judged__shape(struct judged *j);
/* the request whose end is point i (1-based); 0 for the level before any */
size_t judged__req_no(const struct judged *j, size_t i);
/* growth per point over [0, upto] */
double judged__rise_rate(const struct judged *j, size_t upto);
double judged__per_unit(const struct judged *j, double per_point);
bool judged__growing(const struct judged *j);
/* the process's memory: every category that holds bytes, at its last level */
double judged__footprint(const struct judged *all, size_t n);
/* findings_shape.c: "runs out after about pts more points" (of f->limit,
 * which category__limit named what) */
void judged__runs_out(const struct model_proc *p, const struct judged *j, double pts,
		      const char *what, struct finding *f);
/* findings_shape.c: a finding from each category's shape */
void judged__judge(const struct model *m, const struct model_proc *p, const struct judged *all,
		   size_t nall, const struct judged *j, struct findings *fs);
/* driver counters, against what the API calls explain */
void judged__judge_driver(const struct model *m, const struct model_proc *p,
			  const struct judged *all, size_t nall, const struct judged *j,
			  struct findings *fs);
/* a finding about category j, with its shape, levels, rate and confidence */
struct finding *judged__finding(struct findings *fs, enum finding_kind kind,
				const struct model_proc *p, const struct judged *j);
/* the kind j's shape makes */
enum finding_kind judged__kind(const struct judged *j);
/* findings_count.c: a count's shape, in counts */
void judged__judge_count(const struct model_proc *p, const struct judged *j, struct findings *fs);
/* a series with too few points for a shape, and what would give it some */
void judged__not_judged(const struct model *m, const struct model_proc *p, const struct judged *j,
			struct findings *fs);

/* findings_llama.c: what llama-server's settings say of host growth (its
 * sentences, said to f); false when not llama-server */
bool findings__llama_host(const struct model *m, const struct model_proc *p, const struct judged *j,
			  struct finding *f, bool bounded);
/* findings_holders.c: the host heap of llama-server with its prompt cache's
 * entries taken off, judged alone: a leak beside the cache (the finding
 * made one, with the cache's own sentence) */
bool findings__leak_beside_cache(const struct model *m, const struct model_proc *p,
				 const struct judged *j, struct finding *f);
/* a GPU holder in no bounded role that leaks on its own series
 * (findings_holders.c) */
bool findings__leak_beside_holders(const struct model *m, const struct model_proc *p,
				   const struct judged *j, struct finding *f);
/* what bounds a role's memory (ROLE_NO_BOUND: nothing, or no role) */
enum role_bound findings__role_bound(const char *role);
/* a host level that ended well above its start while llama-server stored
 * more prompt-cache entries than --cache-ram holds: a full cache, whatever
 * the shape (its sentences, said to f); false when that is not so */
bool findings__llama_cache_full(const struct model_proc *p, const struct judged *j,
				struct finding *f);
/* host growth over requests that llama-server's prompt-cache entries
 * account for, while the cache is still filling: where and when it stops
 * (its sentences, said to f); false when that is not so */
bool findings__llama_cache_filling(const struct model *m, const struct model_proc *p,
				   const struct judged *j, struct finding *f);

/* findings_roles.c: f's roles from n stacks of its growth, with bounds */
void findings__roles(const struct model *m, const struct model_proc *p,
		     const struct finding_stack *s, size_t n, struct finding *f);
/* findings_holders.c: llama-server's host heap less its prompt cache's
 * entries (its own state copies), judged into *r; false where not known */
bool findings__rest_of_cache(const struct model_proc *p, const struct judged *j,
			     struct shape_result *r);
enum roles_verdict {
	ROLES_UNKNOWN,	  /* no roles, or none holds most */
	ROLES_UNBOUNDED,  /* "other" holds at least half */
	ROLES_BOUNDED,	  /* roles with a bound hold 80% or more, within it */
	ROLES_PAST_BOUND, /* a role holds more than its bound (*top) */
};
/* of the growth f's roles hold, the share in roles with a bound made while
 * serving (not those sized at load) */
double findings__bounded_share(const struct finding *f);
/* what f's roles say; *top the biggest role with a bound, or the one past it */
enum roles_verdict findings__roles_verdict(const struct finding *f,
					   const struct finding_role **top);

#endif
