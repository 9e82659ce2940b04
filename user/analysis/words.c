// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the words of the verdicts: one writer a say code (say_M_LEAK, ...), each
 * reading its figures by the names says.h gives them, and the kinds' names
 * for the report and the live view alike. The only place that says a
 * verdict in English. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "analysis/llama_conf.h"
#include "common/fmt.h"
#include "words.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
#define D(buf, v) fmt_delta(buf, sizeof(buf), v)

/* what the writers append to: buf[0..size) holds len (size or more: full) */
struct words {
	const struct finding *f;
	char *buf;
	size_t size, len;
};

__attribute__((format(printf, 2, 3))) static void put(struct words *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->len >= w->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(w->buf + w->len, w->size - w->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		w->len += n;
}

/* a rate's unit, and what a point of a series is */
static const char *unit(double pr)
{
	return pr ? "request" : "s";
}

static const char *point(double pr)
{
	return pr ? "request" : "sample";
}

/* what n points span: n samples, or the n - 1 requests between the levels */
static double spanned(double n, double pr)
{
	return pr && n > 0 ? n - 1 : n;
}

static const char *cache_from(double from)
{
	return from == CONF_ARG ? "from the command line" :
	       from == CONF_ENV ? "from LLAMA_ARG_CACHE_RAM" :
				  "the default";
}

/* a role's bound (findings__bound_name), in words */
static const char *bound_words(const char *name)
{
	return !strcmp(name, "cache_ram")	? "--cache-ram" :
	       !strcmp(name, "ctx_checkpoints") ? "--ctx-checkpoints a slot, of the size the "
						  "server made them, and --cache-ram" :
	       !strcmp(name, "per_shape")	? "buffers made once per graph or image shape "
						  "and reused" :
	       !strcmp(name, "at_load")		? "sized at load" :
						  "no bound";
}

static const char *graphs_advice(double off)
{
	return off ? " (CUDA graphs are already off: GGML_CUDA_DISABLE_GRAPHS is set)" :
		     " (for llama.cpp, try GGML_CUDA_DISABLE_GRAPHS=1)";
}

/* "4 x 1.50 GiB" or "3 of 64.0 MiB..128.0 MiB" */
static const char *sizes(const struct finding_stack *s, char *buf, size_t size)
{
	char a[32], b[32];

	if (s->min_size == s->max_size)
		snprintf(buf, size, "%llu x %s", (unsigned long long)s->count, B(a, s->min_size));
	else
		snprintf(buf, size, "%llu of %s..%s", (unsigned long long)s->count,
			 B(a, s->min_size), B(b, s->max_size));
	return buf;
}

/* what llama.cpp's settings say of a KV cache that filled the device:
 * scaled_kv is the KV cache's bytes where --fit made the context slots x
 * the model's */
static void kv_advice(struct words *w, const struct say_M_FAIL_TRY_KV *x)
{
	struct conf_val ctx = { .from = x->ctx_from }, par = { .from = x->slots_from };
	char c[48], a[32];

	if (!x->read) {
		put(w, "; for llama.cpp, a smaller context (-c) or fewer parallel slots (-np) "
		       "shrinks the KV cache");
		return;
	}
	if (x->scaled_kv) {
		put(w,
		    "; this llama-server has --fit on, %.0f slots (-np, %s) and no context "
		    "(-c): --fit gives each slot up to the model's whole training context, "
		    "so the KV cache is up to %.0f times one slot's (%s each here). -np 1, "
		    "--kv-unified or a -c of the model's context keeps it near one slot's",
		    x->slots, llama_conf__from(&par, "LLAMA_ARG_N_PARALLEL"), x->slots,
		    B(a, x->scaled_kv / x->slots));
		return;
	}
	if (x->ctx)
		snprintf(c, sizeof(c), "%.0f tokens", x->ctx);
	else
		snprintf(c, sizeof(c), "the model's");
	put(w,
	    "; this llama-server has a context of %s (-c, %s) over %.0f slot%s (-np, %s)%s: "
	    "a smaller context or fewer slots shrinks the KV cache",
	    c, llama_conf__from(&ctx, "LLAMA_ARG_CTX_SIZE"), x->slots, x->slots == 1 ? "" : "s",
	    llama_conf__from(&par, "LLAMA_ARG_N_PARALLEL"),
	    x->fit ? "" : ", and --fit is off, so it was not fitted to the free memory");
}

/* a failed call's place: ", memory type 2, heap 0 of 8.0 GiB device-local" */
static const char *failed_where(const struct say_M_FAILED *x, char *buf, size_t size)
{
	struct words w = { .buf = buf, .size = size };
	char a[32];

	buf[0] = 0;
	if (x->type < 0)
		return buf; /* no place: "" */
	put(&w, ", memory type %.0f", x->type);
	if (x->heap >= 0)
		put(&w, ", heap %.0f of %s%s", x->heap, B(a, x->heap_bytes),
		    x->device_local ? " device-local" : "");
	/* with no size the call's parentheses hold the place alone */
	return x->size ? buf : buf + 2; /* past ", " */
}

static void say_M_LEAK(struct words *w, const struct say_M_LEAK *x)
{
	char a[32], b[32], c[32], d[32];
	char e[160];

	put(w,
	    "%s grows by %s per %s (95%% interval %s to %s) with no sign of a "
	    "ceiling: %s at the first %s, %s at the last (%.0f %ss).",
	    x->where, B(a, x->slope), unit(x->pr), B(b, x->lo), B(c, x->hi), B(d, x->first),
	    !x->pr  ? "sample" :
	    x->base ? "request's start" :
		      "request's end",
	    B(e, x->last), x->points, point(x->pr));
}

static void say_M_LEVEL_UNTIL(struct words *w, const struct say_M_LEVEL_UNTIL *x)
{
	put(w, " It was level until about %s %.0f, and has grown since.", point(x->pr), x->point);
}

static void say_M_STEP_RISES(struct words *w, const struct say_M_STEP_RISES *x)
{
	put(w,
	    " The step per request rises with the prompt's length (Kendall tau "
	    "%.2f).",
	    x->tau);
}

static void say_M_FIXED_ENTRIES(struct words *w, const struct say_M_FIXED_ENTRIES *x)
{
	char a[32];

	put(w,
	    " Each request adds a fixed %s, independent of its prompt length "
	    "(%.0f..%.0f tokens): fixed-size entries.",
	    B(a, x->bytes), x->min_tokens, x->max_tokens);
}

static void say_M_RUNS_OUT(struct words *w, const struct say_M_RUNS_OUT *x)
{
	char a[32];

	put(w, " At this rate %s (%s) runs out after about %.0f more %s%s.", x->what,
	    B(a, x->limit), x->more, x->pr ? "requests" : "seconds",
	    x->host ? ": unless it levels off first, the process will be OOM-killed "
		      "then" :
		      "");
}

static void say_M_RUNS_OUT_CGROUP(struct words *w, const struct say_M_RUNS_OUT_CGROUP *x)
{
	char a[32], b[32], c[32];

	put(w,
	    " At this rate it reaches its cgroup's limit (%s of %s: %s, %s in use "
	    "now%s%s%s) after about %.0f more %s: %s.",
	    x->file == MODEL_LIMIT_V2_HIGH ? "memory.high" :
	    x->file == MODEL_LIMIT_V2_MAX  ? "memory.max" :
					     "memory.limit_in_bytes",
	    x->cgroup, B(a, x->limit), B(b, x->used), x->swap > 0 ? "; then " : "",
	    x->swap > 0 ? B(c, x->swap) : "", x->swap > 0 ? " of swap" : "", x->more,
	    x->pr ? "requests" : "seconds",
	    x->file == MODEL_LIMIT_V2_HIGH ?
		    "past it the kernel throttles the cgroup and reclaims its memory" :
		    "unless it levels off first, the kernel will OOM-kill it then, "
		    "whatever the host has free");
}

static void say_M_TRY_HOST_STACKS(struct words *w, const struct say_M_TRY_HOST_STACKS *x)
{
	(void)x;
	put(w, " What to try: the stacks below allocate it.");
}

static void say_M_TRY_API_STACKS(struct words *w, const struct say_M_TRY_API_STACKS *x)
{
	(void)x;
	put(w, " What to try: memory allocated while serving and never freed; the "
	       "stacks below made it.");
}

static void say_M_BOUNDED(struct words *w, const struct say_M_BOUNDED *x)
{
	char a[32], b[32];

	put(w,
	    "%s grew by %s per %s over the first %.0f %ss, then stayed at %s for the "
	    "last %.0f: a bounded cache with a ceiling of %s, not a leak.",
	    x->where, B(a, x->rate), unit(x->pr), x->point, point(x->pr), B(b, x->ceiling),
	    x->points_after, B(b, x->ceiling));
}

static void say_M_SETTLED(struct words *w, const struct say_M_SETTLED *x)
{
	char a[32], b[32];

	put(w,
	    "%s grew by %s over the first %.0f %ss, more slowly as it went, and has "
	    "stayed near %s for the last %.0f: growth that settled (warm-up, pools "
	    "and caches filling with use), not a leak.",
	    x->where, B(a, x->rise), x->point, point(x->pr), B(b, x->ceiling), x->points_after);
}

static void say_M_STEADY_AT(struct words *w, const struct say_M_STEADY_AT *x)
{
	char a[32], b[32], c[32];

	put(w, "%s is steady at about %s (between %s and %s) over %.0f %ss.", x->where,
	    B(a, x->middle), B(b, x->lo), B(c, x->hi), x->points, point(x->pr));
}

static void say_M_STEADY_WANDERS(struct words *w, const struct say_M_STEADY_WANDERS *x)
{
	char a[32], b[32], c[32];

	put(w,
	    "%s moved between %s and %s over %.0f %ss and ended at %s, with no sure "
	    "rise or fall: no leak so far.",
	    x->where, B(b, x->lo), B(c, x->hi), x->points, point(x->pr), B(a, x->last));
}

static void say_M_STEADY_SMALL(struct words *w, const struct say_M_STEADY_SMALL *x)
{
	char a[32], d[32];

	put(w,
	    " It rose by %s in all, under a hundredth of the process's memory or "
	    "the machine's (%s): too little to matter.",
	    B(d, x->rise), B(a, x->material));
}

static void say_M_GROWING_SLOWING(struct words *w, const struct say_M_GROWING_SLOWING *x)
{
	char a[32], b[32], c[32], d[32];

	put(w,
	    "%s rose by %s per %s in the first half of the run and %s in the second "
	    "(%s -> %s over %.0f %ss): it is slowing down and may be levelling off. "
	    "Too early to tell; about %.0f more %ss would show whether it stops.",
	    x->where, D(a, x->early), unit(x->pr), D(b, x->recent), B(c, x->first), B(d, x->last),
	    x->points, point(x->pr), x->more, point(x->pr));
}

static void say_M_GROWING_DRIFT(struct words *w, const struct say_M_GROWING_DRIFT *x)
{
	char a[32], b[32], c[32];

	put(w,
	    "%s rose from %s to %s over %.0f %ss (%s per %s), but not past doubt: "
	    "memory that wanders on its own rises this far too. Too early to tell a "
	    "leak; about %.0f more %ss would decide.",
	    x->where, B(a, x->first), B(b, x->last), x->points, point(x->pr), D(c, x->slope),
	    unit(x->pr), x->more, point(x->pr));
}

static void say_M_HIGH_WATER(struct words *w, const struct say_M_HIGH_WATER *x)
{
	char a[32], b[32], c[32];

	put(w,
	    "%s rose from %s to %s over %.0f requests (%s per request), but %.0f of "
	    "them were each larger than every one before (their prompt or their "
	    "answer): what is sized by the largest request so far (a buffer, a "
	    "thread's stack) rises with each such request as a leak would. Too early "
	    "to tell a leak; requests no larger than earlier ones would tell.",
	    x->where, B(a, x->first), B(b, x->last), x->points, D(c, x->slope), x->larger);
}

static void say_M_STEP_REQUEST(struct words *w, const struct say_M_STEP_REQUEST *x)
{
	char a[32];

	put(w,
	    "%s changed once by %s in request %.0f (%.2f s) and was flat before and "
	    "after: a one-off step (warm-up, a first image, a bigger prompt), not a "
	    "leak.",
	    x->where, D(a, x->step), x->request, x->seconds);
}

static void say_M_STEP_TIME(struct words *w, const struct say_M_STEP_TIME *x)
{
	char a[32];

	put(w,
	    "%s changed once by %s at %.2f s and was flat before and after: a "
	    "one-off step, not a leak.",
	    x->where, D(a, x->step), x->seconds);
}

static void say_M_BY_ROLE(struct words *w, const struct say_M_BY_ROLE *x)
{
	put(w, " By role, from its stacks: %s.", x->roles);
}

static void say_M_ROSE_HELD(struct words *w, const struct say_M_ROSE_HELD *x)
{
	char a[32], b[32], c[32];

	put(w,
	    "%s rose by %s (%.0f%%), from %s to %s over %.0f %ss, and held there "
	    "with no steady climb: growth that stopped, not a leak so far.",
	    x->where, B(a, x->rise), x->percent, B(b, x->first), B(c, x->last),
	    spanned(x->points, x->pr), point(x->pr));
}

static void say_M_HELD_BRIEFLY(struct words *w, const struct say_M_HELD_BRIEFLY *x)
{
	char a[32], b[32];

	put(w,
	    "%s rose by %s over %.1f s, then held at %s for the last %.1f s only. A "
	    "leak pauses when the work that makes it does (a loop that waits, a quiet "
	    "client) and looks the same: too early to tell a ceiling from a pause; "
	    "about %.1f s more at that level would show one.",
	    x->where, B(a, x->rise), x->rise_s, B(b, x->ceiling), x->hold_s, x->more_s);
}

static void say_M_LEAK_UNBOUNDED(struct words *w, const struct say_M_LEAK_UNBOUNDED *x)
{
	put(w, " %.0f%% of it is held by %s, in no role with a bound%s.", x->share, x->label,
	    x->rest_bounded ? " (the rest is in roles that have one)" : "");
}

static void say_M_ROLE_PAST_BOUND(struct words *w, const struct say_M_ROLE_PAST_BOUND *x)
{
	char a[32], b[32];

	put(w,
	    " The %s holds %s of it (%.0f%%), more than its bound (%s, %s) lets it "
	    "hold: past its bound, whatever the shape.",
	    x->role, B(a, x->bytes), x->share, bound_words(x->bound_name), B(b, x->bound));
}

static void say_M_ROLE_FILLING(struct words *w, const struct say_M_ROLE_FILLING *x)
{
	char a[32], b[32];

	put(w,
	    "%s grows by %s per request, and %.0f%% of it is llama-server's prompt "
	    "cache (from its stacks), which --cache-ram bounds at %s: the cache is "
	    "filling, not a leak.",
	    x->where, B(a, x->step), x->share, B(b, x->bound));
}

static void say_M_ROLE_WITHIN(struct words *w, const struct say_M_ROLE_WITHIN *x)
{
	char a[32], b[32], c[32], d[32];

	put(w,
	    "%s grew by %s (%s -> %s over %.0f %ss), and %.0f%% of it is the %s: "
	    "%s%s%s%s, so within its bound, not a leak so far. A leak would keep "
	    "growing past it.",
	    x->where, B(a, x->rise), B(b, x->first), B(c, x->last), spanned(x->points, x->pr),
	    point(x->pr), x->share, x->role, bound_words(x->bound_name),
	    x->bound > 0 ? " (at most " : "", x->bound > 0 ? B(d, x->bound) : "",
	    x->bound > 0 ? ")" : "");
}

static void say_M_ROLES_UNDECIDED(struct words *w, const struct say_M_ROLES_UNDECIDED *x)
{
	char a[32], b[32], c[32], d[32];

	put(w,
	    "%s grew by %s (%s -> %s over %.0f %ss), and %.0f%% of it is in roles "
	    "with a bound, within it; the rest, about %s, is not yet enough to "
	    "judge on its own. Growing, too early to tell: about %.0f more %ss "
	    "would tell (the bounded roles level off; a leak keeps growing).",
	    x->where, B(a, x->rise), B(b, x->first), B(c, x->last), spanned(x->points, x->pr),
	    point(x->pr), x->share, B(d, x->rest), x->more, point(x->pr));
}

static void say_M_UNEXPLAINED(struct words *w, const struct say_M_UNEXPLAINED *x)
{
	char a[32], b[32], c[32], d[32];

	put(w,
	    "the driver counts %s of this process's device memory per %s more than "
	    "its allocation calls explain (%s: %s -> %s over %.0f %ss; API device "
	    "allocations %s per %s).",
	    B(a, x->excess), unit(x->pr), x->where, B(b, x->first), B(c, x->last), x->points,
	    x->pr ? "request" : "second", D(d, x->api_slope), unit(x->pr));
}

static void say_M_GRAPH_CACHE(struct words *w, const struct say_M_GRAPH_CACHE *x)
{
	put(w,
	    " Live graph executables grow with it: likely a growing CUDA graph "
	    "cache%s.",
	    graphs_advice(x->graphs_off));
}

static void say_M_DRIVER_GROWS(struct words *w, const struct say_M_DRIVER_GROWS *x)
{
	(void)x;
	put(w, " Memory the driver allocates by itself (contexts, graphs, pools) grows.");
}

static void say_M_GRAPHS_NOW(struct words *w, const struct say_M_GRAPHS_NOW *x)
{
	put(w, " Graph executables: %+.2f per %s, %.0f live now.", x->per_unit, unit(x->pr),
	    x->live);
}

static void say_M_COUNT_LEAK(struct words *w, const struct say_M_COUNT_LEAK *x)
{
	put(w,
	    "%s grow by %.2f per %s with no sign of a ceiling: %.0f at the first %s, "
	    "%.0f at the last (%.0f %ss).",
	    x->where, x->slope, unit(x->pr), x->first,
	    !x->pr  ? "sample" :
	    x->base ? "request's start" :
		      "request's end",
	    x->last, x->points, point(x->pr));
}

static void say_M_COUNT_GROWING(struct words *w, const struct say_M_COUNT_GROWING *x)
{
	put(w,
	    "%s rose by %.2f per %s, %.0f to %.0f over %.0f %ss: too early to tell "
	    "whether they level off.",
	    x->where, x->slope, unit(x->pr), x->first, x->last, x->points, point(x->pr));
}

static void say_M_COUNT_BEFORE_SWEEP(struct words *w, const struct say_M_COUNT_BEFORE_SWEEP *x)
{
	put(w,
	    "%s rose by %.2f per %s, %.0f to %.0f over %.0f %ss in %.1f s. llama.cpp's "
	    "CUDA backend sweeps out graphs unused for 10 s, every 5 s: a leak of them "
	    "shows only in a count that still grows over %.0f s of work or more. Too "
	    "early to tell.",
	    x->where, x->slope, unit(x->pr), x->first, x->last, x->points, point(x->pr), x->span,
	    x->needed);
}

static void say_M_COUNT_LEVELS(struct words *w, const struct say_M_COUNT_LEVELS *x)
{
	put(w,
	    "%s rose from %.0f and levelled off near %.0f from %s %.0f on (between "
	    "%.0f and %.0f over %.0f %ss): a bounded set of them, not a leak.",
	    x->where, x->first, x->ceiling, point(x->pr), x->point, x->lo, x->hi, x->points,
	    point(x->pr));
}

static void say_M_COUNT_STEP(struct words *w, const struct say_M_COUNT_STEP *x)
{
	put(w,
	    "%s changed once by %+.0f (%.0f to %.0f) at %s %.0f and held: a one-off, "
	    "not a leak.",
	    x->where, x->step, x->first, x->last, point(x->pr), x->point);
}

static void say_M_COUNT_STEADY(struct words *w, const struct say_M_COUNT_STEADY *x)
{
	put(w, "%s stayed between %.0f and %.0f over %.0f %ss.", x->where, x->lo, x->hi, x->points,
	    point(x->pr));
}

static void say_M_COUNT_SWINGS(struct words *w, const struct say_M_COUNT_SWINGS *x)
{
	put(w,
	    "%s rose as high as %.0f (at %s %.0f) and fell back to %.0f, between "
	    "%.0f and %.0f over %.0f %ss: they are let go as well as made, a bounded "
	    "set, not a leak; the most live at once is what they cost.",
	    x->where, x->hi, point(x->pr), x->hi_point, x->last, x->lo, x->hi, x->points,
	    point(x->pr));
}

static void say_M_GRAPHS_HOLD(struct words *w, const struct say_M_GRAPHS_HOLD *x)
{
	put(w,
	    " Each holds device memory that no allocation call shows; NVML's "
	    "figure for the process does%s.",
	    x->llama ? graphs_advice(x->graphs_off) : "");
}

static void say_M_NOT_JUDGED(struct words *w, const struct say_M_NOT_JUDGED *x)
{
	if (x->driver) {
		put(w,
		    "%s: read only %.0f time%s over %.1f s and %.0f requests, and a "
		    "shape needs %.0f points. Trace longer, or sample more often than "
		    "every %.2f s (-i): it is read once an interval.",
		    x->where, x->samples, x->samples == 1 ? "" : "s", x->span, x->requests,
		    x->needed, x->interval);
		return;
	}
	put(w,
	    "%s: %.1f s and %.0f requests are too few for a shape, which needs %.0f "
	    "requests or %.0f sampling intervals (%.2f s each). Trace longer.",
	    x->where, x->span, x->requests, x->needed, x->needed, x->interval);
}

static void say_M_CACHE_OFF(struct words *w, const struct say_M_CACHE_OFF *x)
{
	put(w,
	    " llama-server's prompt cache is off (--cache-ram 0, %s): this is not the "
	    "prompt cache.",
	    cache_from(x->from));
}

static void say_M_CACHE_UNLIMITED(struct words *w, const struct say_M_CACHE_UNLIMITED *x)
{
	put(w,
	    " llama-server's prompt cache has no limit (--cache-ram -1, %s): if this "
	    "is the cache, it grows until memory runs out. What to try: --cache-ram "
	    "N bounds it.",
	    cache_from(x->from));
}

static void say_M_CACHE_EXCEEDED(struct words *w, const struct say_M_CACHE_EXCEEDED *x)
{
	char a[32];

	put(w,
	    " It has grown by %s, more than llama-server's prompt cache may hold "
	    "(--cache-ram %.0f MiB, %s): not the prompt cache alone. What to try: "
	    "the stacks below allocate it.",
	    B(a, x->grown), x->mib, cache_from(x->from));
}

static void say_M_CACHE_STOPS_AT(struct words *w, const struct say_M_CACHE_STOPS_AT *x)
{
	char a[32];

	put(w,
	    " llama-server's prompt cache may hold %.0f MiB (--cache-ram, %s); if "
	    "this is the cache, it stops at about %s.",
	    x->mib, cache_from(x->from), B(a, x->bytes));
}

static void say_M_CACHE_LEVELS(struct words *w, const struct say_M_CACHE_LEVELS *x)
{
	char a[32];

	put(w,
	    x->known ? " At this rate it fills --cache-ram (%.0f MiB, %s) at about %s, "
		       "after about %.0f more requests" :
		       " If this is llama-server's prompt cache (at most %.0f MiB: --cache-ram, "
		       "%s), it levels off at about %s after about %.0f more requests",
	    x->mib, cache_from(x->from), B(a, x->bytes), x->requests);
}

static void say_M_CACHE_OOM_FIRST(struct words *w, const struct say_M_CACHE_OOM_FIRST *x)
{
	char b[32], d[32];

	put(w,
	    "; that is %s more, and %s %s: the process would be OOM-killed first, "
	    "after about %.0f more requests",
	    B(b, x->more), x->by_cgroup ? "its cgroup's limit leaves it" : "the machine has",
	    B(d, x->available), x->requests);
}

static void say_M_CACHE_TRY_LOWER(struct words *w, const struct say_M_CACHE_TRY_LOWER *x)
{
	(void)x;
	put(w, ". What to try: a lower --cache-ram bounds it (0 turns the cache off); "
	       "growth past the limit is not the cache.");
}

static void say_M_CACHE_FILLING(struct words *w, const struct say_M_CACHE_FILLING *x)
{
	char a[32], b[32], c[32], d[32];

	put(w,
	    "%s grows by %s per request as llama-server's prompt cache fills: it "
	    "stored %.0f entries of about %s (its own state copies), %s in all, "
	    "%.1f%% of what --cache-ram %.0f MiB (%s) lets it hold. At this rate it "
	    "is full at about %s after about %.0f more requests: a bounded cache, "
	    "not a leak",
	    x->where, B(a, x->step), x->saves, B(b, x->mean), B(c, x->total),
	    x->mib > 0 ? 100 * x->total / (x->mib * 1048576) : 0, x->mib, cache_from(x->from),
	    B(d, x->ceiling), x->more);
}

static void say_M_LEAK_BESIDE_CACHE(struct words *w, const struct say_M_LEAK_BESIDE_CACHE *x)
{
	char a[32], b[32], c[32], d[32], e[32], f[32];

	put(w,
	    "%s grows by %s per request (95%% interval %s to %s) beyond what "
	    "llama-server's prompt cache holds, with no sign of a ceiling: its "
	    "entries (%s by its own state copies) taken off, the rest rose by %s "
	    "over %.0f requests. %s of what was first touched in no bounded role "
	    "was first touched by %s (%.0f%% of it): a leak beside the cache.",
	    x->where, B(a, x->slope), B(b, x->lo), B(c, x->hi), B(d, x->held), B(e, x->rest),
	    x->points, B(f, x->touched), x->label, x->share);
}

static void say_M_LEAK_BESIDE_HOLDERS(struct words *w, const struct say_M_LEAK_BESIDE_HOLDERS *x)
{
	char a[32], b[32], c[32], d[32], e[32], f[32];

	put(w,
	    "%s rose by %s over %.0f %ss in all; judged on its own, what %s "
	    "holds grows by %s per %s (95%% interval %s to %s) with no sign of "
	    "a ceiling, %s over those %ss and %s live now: a leak of that "
	    "holder, whatever the rest does.",
	    x->where, B(a, x->total), x->points, point(x->pr), x->label, B(b, x->slope),
	    unit(x->pr), B(c, x->lo), B(d, x->hi), B(e, x->rise), point(x->pr), B(f, x->live));
}

static void say_M_CACHE_BESIDE(struct words *w, const struct say_M_CACHE_BESIDE *x)
{
	char a[32], b[32], c[32];

	if (x->full)
		put(w,
		    " Beside it the prompt cache is full: it stored %.0f entries of "
		    "about %s (%s in all), and --cache-ram %.0f MiB (%s) holds %.0f "
		    "of them at once; that part is a bounded cache.",
		    x->saves, B(a, x->mean), B(b, x->total), x->mib, cache_from(x->from), x->fit);
	else if (x->mib > 0)
		put(w,
		    " Beside it the prompt cache fills: it stored %.0f entries of about "
		    "%s, %s in all, of the %.0f MiB --cache-ram (%s) lets it hold; that "
		    "part is a bounded cache (%s of it held now).",
		    x->saves, B(a, x->mean), B(b, x->total), x->mib, cache_from(x->from),
		    B(c, x->held));
	else
		put(w,
		    " Beside it the prompt cache fills with no limit (--cache-ram -1, "
		    "%s): it stored %.0f entries of about %s, %s in all.",
		    cache_from(x->from), x->saves, B(a, x->mean), B(b, x->total));
}

static void say_M_RUNS_OUT_WITH_CACHE(struct words *w, const struct say_M_RUNS_OUT_WITH_CACHE *x)
{
	char a[32], b[32];

	if (isfinite(x->left))
		put(w,
		    " That counts the cache too: it grows by about %s a request until it "
		    "is full (%s more).",
		    B(a, x->fill), B(b, x->left));
	else
		put(w, " That counts the cache too: it grows by about %s a request, with no limit.",
		    B(a, x->fill));
}

static void say_M_CACHE_FULL(struct words *w, const struct say_M_CACHE_FULL *x)
{
	char a[32], b[32];

	put(w,
	    "%s rose from %s to %s and held there: llama-server's prompt cache is "
	    "full. It stored %.0f entries (its own state copies), and --cache-ram "
	    "%.0f MiB (%s) holds %.0f of them at once, so it drops the oldest for "
	    "each new one: a bounded cache, not a leak.",
	    x->where, B(a, x->first), B(b, x->last), x->saves, x->mib, cache_from(x->from), x->fit);
}

static void say_M_CACHE_SHARE(struct words *w, const struct say_M_CACHE_SHARE *x)
{
	char a[32];

	put(w,
	    " It rose by %s, %.0f%% of what llama-server's prompt cache may hold "
	    "(--cache-ram %.0f MiB, %s)%s. If the ceiling is too much for this "
	    "machine, lower --cache-ram.",
	    B(a, x->rise), x->percent, x->mib, cache_from(x->from),
	    x->over ? ": more than the cache holds, since the allocator keeps what the "
		      "entries it dropped had used (or something else grew too)" :
		      "");
}

static void say_M_FAILED(struct words *w, const struct say_M_FAILED *x)
{
	char a[32], b[32];
	char e[160];

	put(w, "%s(%s%s)%s%s failed with %s at %.2f s%s; %s was live", x->call,
	    x->size ? B(a, x->size) : "", failed_where(x, e, sizeof(e)),
	    x->role[0] ? " for the " : "", x->role, x->result, x->seconds,
	    x->times > 1 ? " (and again, the same way)" : "", B(b, x->live));
}

static void say_M_FAILED_ROLES(struct words *w, const struct say_M_FAILED_ROLES *x)
{
	put(w, ": %s", x->roles);
}

static void say_M_FAILED_STACKS(struct words *w, const struct say_M_FAILED_STACKS *x)
{
	char a[32];
	char e[160];
	size_t i;

	for (i = 0; i < w->f->nr_stacks; i++)
		put(w, "%s %s %s (%s)", i ? "," : ":", w->f->stacks[i].label,
		    B(a, w->f->stacks[i].bytes), sizes(&w->f->stacks[i], e, sizeof(e)));
	if (x->other)
		put(w, ", other %s", B(a, x->other));
}

static void say_M_FAIL_TRY_GRAPHS(struct words *w, const struct say_M_FAIL_TRY_GRAPHS *x)
{
	put(w,
	    ". What to try: keep fewer graph executables alive; their memory is not "
	    "in the allocation calls%s.",
	    x->llama ? graphs_advice(x->graphs_off) : "");
}

static void say_M_FAIL_TRY_SHRINK(struct words *w, const struct say_M_FAIL_TRY_SHRINK *x)
{
	put(w, ". What to try: shrink the biggest holder, %s (%.0f%% of what was live)", x->holder,
	    x->percent);
}

static void say_M_FAIL_TRY_CALL(struct words *w, const struct say_M_FAIL_TRY_CALL *x)
{
	char a[32], b[32];

	put(w,
	    ". What to try: shrink what the call was for, the %s: it alone asked for "
	    "%s, more than %s (%s)",
	    x->role, B(a, x->size), x->size > x->live ? "all that was live" : "the biggest holder",
	    B(b, x->size > x->live ? x->live : x->biggest));
}

static void say_M_FAIL_TRY_KV(struct words *w, const struct say_M_FAIL_TRY_KV *x)
{
	kv_advice(w, x);
}

static void say_M_FAIL_END(struct words *w, const struct say_M_FAIL_END *x)
{
	(void)x;
	put(w, ".");
}

static void say_M_EVICTED(struct words *w, const struct say_M_EVICTED *x)
{
	char a[32], c[32];

	put(w, "at %.2f s, %s of this process's buffers moved out of VRAM", x->seconds,
	    B(a, x->bytes));
	if (x->created)
		put(w, " while PID %.0f (%s) allocated %s", x->evictor, x->comm, B(c, x->created));
	put(w, "; ");
}

static void say_M_EVICT_RETURNED(struct words *w, const struct say_M_EVICT_RETURNED *x)
{
	char a[32], b[32];

	put(w, "by the end, %s had moved back and %s was freed.", B(a, x->back), B(b, x->freed));
}

static void say_M_EVICT_STILL_OUT(struct words *w, const struct say_M_EVICT_STILL_OUT *x)
{
	char a[32], b[32], c[32];

	put(w, "%s is still out of VRAM (%s moved back, %s was freed)", B(a, x->out), B(b, x->back),
	    B(c, x->freed));
}

static void say_M_EVICT_NONE_BACK(struct words *w, const struct say_M_EVICT_NONE_BACK *x)
{
	(void)x;
	put(w, "none moved back");
}

static void say_M_EVICT_AFTER_FREE(struct words *w, const struct say_M_EVICT_AFTER_FREE *x)
{
	put(w, " after PID %.0f freed its buffers at %.2f s.", x->evictor, x->seconds);
}

static void say_M_EVICT_BY_END(struct words *w, const struct say_M_EVICT_BY_END *x)
{
	(void)x;
	put(w, " by the end.");
}

static void say_M_DECODE_FELL(struct words *w, const struct say_M_DECODE_FELL *x)
{
	put(w, " Decode rate %.1f -> %.1f tok/s (%.0f requests before, %.0f after)%s", x->before,
	    x->after, x->n_before, x->n_after,
	    x->partly_back ? ": the buffers the GPU reads now sit in system memory. What to "
			     "try: the driver does not move them back by itself; restart the "
			     "server or keep other programs within free VRAM." :
			     ".");
}

static void say_M_DECODE_NOT_FELL(struct words *w, const struct say_M_DECODE_NOT_FELL *x)
{
	put(w,
	    " The decode rate did not clearly fall: %.1f -> %.1f tok/s (%.0f "
	    "requests before, %.0f after).",
	    x->before, x->after, x->n_before, x->n_after);
}

static void say_M_DECODE_NO_RATES(struct words *w, const struct say_M_DECODE_NO_RATES *x)
{
	(void)x;
	put(w, " No decode rates on both sides to compare.");
}

/* the slowdowns: which requests, how much slower, why, what to try */
static void say_M_SLOW(struct words *w, const struct say_M_SLOW *x)
{
	if (x->first == x->last)
		put(w, "request %.0f", x->first);
	else
		put(w, "%.0f requests from %.0f to %.0f", x->n, x->first, x->last);
	put(w, " %s at %.3g tokens/s against this server's own %.3g",
	    x->prompt ? "evaluated their prompts" : "decoded", x->rate, x->baseline);
	if (isfinite(x->spread))
		put(w, " (± %.2g, %.0f requests%s)", x->spread, x->n_base,
		    x->prompt ? " with a prompt as long" : "");
	put(w, ", %.1f times slower, from %.1f s", x->ratio, x->seconds);
	if (x->slots > 1)
		put(w, " (each beside %.0f others, compared with requests that ran so)",
		    x->slots - 1);
	put(w, ".");
}

static void say_M_SLOW_BACK(struct words *w, const struct say_M_SLOW_BACK *x)
{
	put(w, " From request %.0f it was back to %.3g tokens/s.", x->request, x->rate);
}

static void say_M_SLOW_TO_END(struct words *w, const struct say_M_SLOW_TO_END *x)
{
	(void)x;
	put(w, " It was still slow when tracing ended.");
}

static void say_M_SLOW_READ_BACK(struct words *w, const struct say_M_SLOW_READ_BACK *x)
{
	char a[32], b[32], c[32];

	put(w, " Its memory was being read back from storage as it decoded");
	if (x->where[0])
		put(w, " (%s)", x->where);
	put(w, ":");
	if (isfinite(x->read) && x->read > 0)
		put(w, " %s read in those requests, %s a second against %s in the usual ones;",
		    B(a, x->read), B(b, x->read_s), B(c, x->read_before));
	put(w, " %.0f page faults a second against %.0f", x->faults_s, x->faults_before);
	if (isfinite(x->per_token))
		put(w, " (%.0f a token)", x->per_token);
	if (isfinite(x->major))
		put(w, ", %.0f of them major", x->major);
	if (isfinite(x->refaults) && x->refaults > 0)
		put(w, "; %.0f pages were evicted and then needed again", x->refaults);
	put(w, ".");
}

static void say_M_SLOW_FILE_OUT(struct words *w, const struct say_M_SLOW_FILE_OUT *x)
{
	char a[32], b[32];

	put(w,
	    " Its file-backed RSS was %s while it maps %s of %s: the weights no longer fit "
	    "in its RAM and are read from the file at each token.",
	    B(a, x->rss_file), B(b, x->size), x->file);
}

static void say_M_SLOW_SWAPPED(struct words *w, const struct say_M_SLOW_SWAPPED *x)
{
	char a[32], b[32];

	put(w,
	    " Its anonymous memory was in swap (VmSwap up to %s) and read back at %s "
	    "a second.",
	    B(a, x->swap), B(b, x->swapins));
}

static void say_M_SLOW_LIMIT(struct words *w, const struct say_M_SLOW_LIMIT *x)
{
	char a[32], b[32], c[32];

	put(w, " Its memory cgroup %s held it to %s (%s)", x->cgroup, B(a, x->limit), x->file);
	if (isfinite(x->seconds))
		put(w, ", lowered from %s at %.1f s", x->before ? B(b, x->before) : "no limit",
		    x->seconds);
	if (x->need > x->limit)
		put(w, ", below the %s it had in use", B(c, x->need));
	if (isfinite(x->raised_s))
		put(w, "; %s at %.1f s", x->raised ? B(b, x->raised) : "lifted", x->raised_s);
	put(w, ".");
}

static void say_M_SLOW_HOST_MEMORY(struct words *w, const struct say_M_SLOW_HOST_MEMORY *x)
{
	char a[32], b[32], c[32];

	put(w, " No cgroup limit binds it; the host had %s available (%s at the start, of %s).",
	    B(a, x->available), B(b, x->before), B(c, x->total));
}

static void say_M_SLOW_PRESSURE(struct words *w, const struct say_M_SLOW_PRESSURE *x)
{
	put(w, " Memory pressure stalled %s %.0f%% of that time.",
	    x->cgroup ? "its cgroup" : "the host", 100 * x->share);
}

static void say_M_SLOW_CPU_WAIT(struct words *w, const struct say_M_SLOW_CPU_WAIT *x)
{
	put(w,
	    " Its threads waited for a CPU %.0f%% of the time they were ready to run (%.0f%% "
	    "in the usual requests): other work ran on its %.0f CPU%s",
	    100 * x->share, 100 * x->before, x->cpus, x->cpus == 1 ? "" : "s");
	if (x->running)
		put(w, " (the host's run queue held %.0f)", x->running);
	if (x->threads > x->cpus && x->cpus)
		put(w, ", and it runs %.0f compute threads (-t) on them", x->threads);
	put(w, ".");
}

static void say_M_SLOW_THROTTLED(struct words *w, const struct say_M_SLOW_THROTTLED *x)
{
	put(w,
	    " The CPU quota of its cgroup %s, %.2f CPUs (%s), throttled it in %.0f%% of its "
	    "periods",
	    x->cgroup, x->quota, x->v2 ? "cpu.max" : "cpu.cfs_quota_us", 100 * x->share);
	if (isfinite(x->before_quota))
		put(w, " (%s before)", x->before_quota ? "a quota of more CPUs" : "no quota");
	if (x->threads >= 2 && x->threads > x->quota)
		put(w, "; it runs %.0f threads", x->threads);
	put(w, ".");
}

static void say_M_SLOW_GRAPHS(struct words *w, const struct say_M_SLOW_GRAPHS *x)
{
	put(w,
	    " CUDA graphs were captured again instead of reused: %.0f instantiated in those "
	    "requests, %.2f a token (%.2f in the usual ones).",
	    x->count, x->per_token, x->before);
}

static void say_M_SLOW_EVICTED(struct words *w, const struct say_M_SLOW_EVICTED *x)
{
	char a[32];

	put(w,
	    " %s of its buffers left VRAM from %.1f s (PID %.0f's doing: the EVICTION "
	    "verdict).",
	    B(a, x->bytes), x->seconds, x->evictor);
}

static void say_M_SLOW_CLOCKS(struct words *w, const struct say_M_SLOW_CLOCKS *x)
{
	put(w,
	    " Its GPU ran slower: the SM clock was %.0f MHz against %.0f in the usual requests "
	    "(at most %.0f), held down by",
	    x->mhz, x->before, x->max);
	if (x->power)
		put(w, " its power cap%s", x->thermal || x->hw ? " and" : "");
	if (x->thermal)
		put(w, " its temperature%s", x->hw ? " and" : "");
	if (x->hw)
		put(w, " a hardware slowdown");
	put(w, " (NVML's clock reasons).");
}

static void say_M_SLOW_STATE_COPIES(struct words *w, const struct say_M_SLOW_STATE_COPIES *x)
{
	char a[32], b[32];

	put(w,
	    " The server copied %s of sequence state a request in them (its prompt cache's "
	    "saves and loads, llama_state_seq_*), %s in the usual ones.",
	    B(a, x->bytes), B(b, x->before));
}

static void say_M_SLOW_CONTEXT_FULL(struct words *w, const struct say_M_SLOW_CONTEXT_FULL *x)
{
	put(w,
	    " %.0f of them filled their slot's context (%.0f tokens): the server shifts or "
	    "cuts it.",
	    x->n, x->slot);
}

static void say_M_SLOW_NO_CAUSE(struct words *w, const struct say_M_SLOW_NO_CAUSE *x)
{
	if (!x->faults && !x->waits) {
		put(w,
		    " No cause seen by this tool: the recording has none of the counters it "
		    "reads (one from before them)%s.",
		    x->gpu ? ", and no eviction or graph captured again" : "");
		return;
	}
	put(w, " No cause seen by this tool:");
	if (x->faults)
		put(w, " no more reads from storage or page faults,");
	if (x->waits)
		put(w, " no more waiting for a CPU or throttling,");
	if (x->gpu)
		put(w, " no evictions, clocks held down or graphs captured again,");
	put(w, " than in the usual requests.");
}

static void say_M_SLOW_TRY_MEMORY(struct words *w, const struct say_M_SLOW_TRY_MEMORY *x)
{
	char a[32];

	put(w, " What to try: %s", x->mlock ? "" : "--mlock (the weights stay in RAM), or ");
	if (x->need > 0)
		put(w, "room for at least %s (the model and what it held besides)", B(a, x->need));
	else
		put(w, "more room for it");
	if (!x->mmap)
		put(w, ", without swap for it");
	put(w, ".");
}

static void say_M_SLOW_TRY_CPU(struct words *w, const struct say_M_SLOW_TRY_CPU *x)
{
	/* threads: -t where it was given, else 0 */
	if (x->throttled && x->threads >= 1) {
		put(w,
		    " What to try: a quota of at least %.0f CPU%s, one for each of its -t threads",
		    x->threads, x->threads == 1 ? "" : "s");
		if (x->quota >= 1 && x->threads > floor(x->quota))
			put(w, ", or -t %.0f to fit the quota it has", floor(x->quota));
		put(w, ".");
	} else if (x->throttled) {
		put(w,
		    " What to try: a quota of as many CPUs as its compute threads, or -t %.0f to "
		    "fit the quota it has.",
		    x->quota >= 1 ? floor(x->quota) : 1);
	} else {
		put(w, " What to try: CPUs of its own (a cpuset, taskset)");
		if (x->threads >= 1)
			put(w, " for its %.0f thread%s", x->threads, x->threads == 1 ? "" : "s");
		put(w, ", or fewer threads (-t).");
	}
}

static void say_M_SLOW_TRY_GRAPHS(struct words *w, const struct say_M_SLOW_TRY_GRAPHS *x)
{
	(void)x;
	put(w, " What to try: GGML_CUDA_DISABLE_GRAPHS=1 (graphs off) and compare.");
}

static void say_M_EXIT(struct words *w, const struct say_M_EXIT *x)
{
	char a[32];

	put(w, "The process (%s) %s %s at %.2f s", x->comm,
	    x->killed ? "was killed by" : "ended with", x->how, x->seconds);
	if (!x->requests)
		put(w, ", before it served any request");
	else
		put(w, ", after answering %.0f of %.0f requests", x->answered, x->total);
	if (isfinite(x->after_failure))
		put(w, ", %.2f s after a GPU allocation of %s failed (above)", x->after_failure,
		    B(a, x->failed_size));
	put(w, ".");
}

static void say_M_CRASH_THREAD(struct words *w, const struct say_M_CRASH_THREAD *x)
{
	/* a fault (si_code > 0) in the thread, or a signal sent to it */
	if (crash__fault(x->sig, x->code))
		put(w, " It faulted in thread '%s' (tid %.0f) at address 0x%llx", x->thread, x->tid,
		    (unsigned long long)x->addr);
	else if (x->sig == SIGSEGV && x->code == SI_KERNEL)
		/* x86's #GP: the kernel knows no address to give */
		put(w,
		    " It took a general protection fault in thread '%s' (tid %.0f): "
		    "an address no process can map, as a corrupted pointer gives "
		    "(the CPU names no address)",
		    x->thread, x->tid);
	else if (x->sig == SIGABRT && x->self)
		put(w, " Thread '%s' (tid %.0f) called abort", x->thread, x->tid);
	else if (x->sender)
		put(w,
		    " The signal was sent by pid %.0f (kill) and taken by thread '%s' "
		    "(tid %.0f)",
		    x->sender, x->thread, x->tid);
	else if (x->code == SI_KERNEL)
		put(w,
		    " The kernel sent it (as its OOM killer does) and thread '%s' "
		    "(tid %.0f) took it",
		    x->thread, x->tid);
	else
		put(w, " It was taken by thread '%s' (tid %.0f)", x->thread, x->tid);
	put(w, "%s%s.", x->frames[0] ? ", in " : " (no stack)", x->frames);
}

static void say_M_CRASH_HEAP(struct words *w, const struct say_M_CRASH_HEAP *x)
{
	(void)x;
	put(w, " The C library stopped it on finding its heap corrupted, in a malloc or "
	       "free: memory was written out of bounds or freed twice earlier, "
	       "elsewhere (run it under AddressSanitizer or valgrind to find where).");
}

static void say_M_CRASH_SERVING(struct words *w, const struct say_M_CRASH_SERVING *x)
{
	put(w, " It was serving request%s %s.", x->count > 1 ? "s" : "", x->requests);
}

static void say_E_STEP_SPREAD(struct words *w, const struct say_E_STEP_SPREAD *x)
{
	put(w, "the step per request is %s: spread %.0f%% of its mean",
	    x->cv < 0.1 ? "constant" : "variable", x->cv * 100);
}

static void say_E_STEP_FOLLOWS(struct words *w, const struct say_E_STEP_FOLLOWS *x)
{
	put(w, "the step follows the prompt length (Kendall tau %.2f)", x->tau);
}

static void say_E_STEP_NOT_FOLLOWS(struct words *w, const struct say_E_STEP_NOT_FOLLOWS *x)
{
	put(w,
	    "the step does not follow the prompt length (Kendall tau %.2f over %.0f "
	    "requests)",
	    x->tau, x->requests);
}

static void say_E_HELD_BY_ROLE(struct words *w, const struct say_E_HELD_BY_ROLE *x)
{
	put(w, "%s by role: %s", x->touched ? "first touched" : "held", x->roles);
}

static void say_E_TOUCHES(struct words *w, const struct say_E_TOUCHES *x)
{
	char a[32], b[32], c[32];

	put(w,
	    "sampled first touches of anonymous memory between %.2f s and %.2f s "
	    "stand for %s, %s by %s (a stack for about one in %s touched)",
	    x->from, x->to, B(a, x->total), B(b, x->top), x->label, B(c, x->per_touch));
}

static void say_E_MADE_HELD(struct words *w, const struct say_E_MADE_HELD *x)
{
	char a[32], b[32];

	put(w,
	    "%s of it was made between %.2f s and %.2f s and held at the end of that, "
	    "%s by %s",
	    B(a, x->total), x->from, x->to, B(b, x->top), x->label);
}

static void say_E_MAPPINGS_COVER(struct words *w, const struct say_E_MAPPINGS_COVER *x)
{
	char a[32], b[32];

	put(w,
	    "the mappings cover %s but the heap grew by %s: part of them was never "
	    "touched (no smaps read said how much of each)",
	    B(a, x->mapped), B(b, x->grew));
}

static void say_E_GRAPHS_GROW(struct words *w, const struct say_E_GRAPHS_GROW *x)
{
	put(w, "%s grow with it: %+.2f per %s, %.0f live at the end", x->what, x->per_unit,
	    unit(x->pr), x->live);
}

static void say_E_HOST_NOT_GPU(struct words *w, const struct say_E_HOST_NOT_GPU *x)
{
	put(w, "GPU API memory stayed flat (%s): this is host memory, not GPU memory", x->flat);
}

static void say_E_LESS_VULKAN(struct words *w, const struct say_E_LESS_VULKAN *x)
{
	char a[32];

	put(w,
	    "judged less what the %s memory's own change accounts for of it (%s at "
	    "the end): this device's memory is the host's RAM, counted once, as %s's",
	    x->api, B(a, x->bytes), x->api);
}

static void say_E_FIRST_LEFT_OUT(struct words *w, const struct say_E_FIRST_LEFT_OUT *x)
{
	char a[32];

	put(w,
	    "judged from request %.0f on: request %.0f alone raised it by %s, more "
	    "than all the later ones moved it (a one-off on first use: shaders, "
	    "buffers, graphs)",
	    x->request + 1, x->request, B(a, x->step));
}

static void say_E_STEP_FIT(struct words *w, const struct say_E_STEP_FIT *x)
{
	char a[32], b[32], c[32];

	put(w, "step over %.0f %ss: %s before, %s after, noise %s", spanned(x->points, x->pr),
	    point(x->pr), B(a, x->first), B(b, x->last), B(c, x->noise));
}

static void say_E_BOUNDED_FIT(struct words *w, const struct say_E_BOUNDED_FIT *x)
{
	char a[32], b[32];

	put(w,
	    "bounded_cache over %.0f %ss: a rise of %s per %s until %s %.0f, then "
	    "level (noise %s), confidence %.2f",
	    spanned(x->points, x->pr), point(x->pr), D(a, x->rate), unit(x->pr), point(x->pr),
	    x->point, B(b, x->noise), x->confidence);
}

static void say_E_SHAPE_FIT(struct words *w, const struct say_E_SHAPE_FIT *x)
{
	char a[32], b[32];

	put(w, "%s over %.0f %ss: slope %s per %s, noise %s, confidence %.2f", x->shape,
	    spanned(x->points, x->pr), point(x->pr), D(a, x->slope), unit(x->pr), B(b, x->noise),
	    x->confidence);
}

static void say_E_CHANGED_ONCE(struct words *w, const struct say_E_CHANGED_ONCE *x)
{
	char a[32];

	put(w, "%s changed once by %s, in request %.0f (%.2f s)", x->where, D(a, x->step),
	    x->request, x->seconds);
}

static void say_E_DRIVER_AGREES(struct words *w, const struct say_E_DRIVER_AGREES *x)
{
	char a[32];

	put(w, "%s agrees: %s per %s", x->where, D(a, x->slope), unit(x->pr));
}

static void say_E_DRIVER_RATE(struct words *w, const struct say_E_DRIVER_RATE *x)
{
	char a[32], b[32], c[32];

	put(w, "%s: %s per %s (interval %s to %s)", x->where, D(a, x->slope), unit(x->pr),
	    D(b, x->lo), D(c, x->hi));
}

static void say_E_API_RATE(struct words *w, const struct say_E_API_RATE *x)
{
	char a[32], b[32], c[32];

	put(w, "GPU API device allocations: %s per %s (interval %s to %s)", D(a, x->slope),
	    unit(x->pr), D(b, x->lo), D(c, x->hi));
}

static void say_E_GRAPHS_LIVE(struct words *w, const struct say_E_GRAPHS_LIVE *x)
{
	put(w, "live graph executables: %+.2f per %s (now %.0f)", x->per_unit, unit(x->pr),
	    x->live);
}

static void say_E_LIVE_BY_ROLE(struct words *w, const struct say_E_LIVE_BY_ROLE *x)
{
	put(w, "live by role: %s", x->roles);
}

static void say_E_CALL_FAILED(struct words *w, const struct say_E_CALL_FAILED *x)
{
	char a[32];

	put(w, "%s%s%s failed with %s%s", x->call, x->size ? " of " : "",
	    x->size ? B(a, x->size) : "", x->result,
	    x->has_stack ? "; the stack of the failing call is in the JSON report" : "");
}

static void say_E_EVICTIONS(struct words *w, const struct say_E_EVICTIONS *x)
{
	put(w,
	    "%.0f evictions of this process's buffers from VRAM by PID %.0f (%s), "
	    "%.2f s to %.2f s",
	    x->count, x->evictor, x->comm, x->first, x->last);
}

static void say_E_VRAM_LEVELS(struct words *w, const struct say_E_VRAM_LEVELS *x)
{
	char a[32], b[32];

	put(w, "its VRAM-resident buffers: %s before, %s at the end", B(a, x->before),
	    B(b, x->end));
}

static void say_E_DECODE_RATES(struct words *w, const struct say_E_DECODE_RATES *x)
{
	put(w,
	    "decode rate: median %.1f tok/s over %.0f requests before, %.1f tok/s "
	    "over %.0f after (a rate before beats one after %.0f%% of the time)",
	    x->before, x->n_before, x->after, x->n_after, x->share * 100);
}

static void say_E_SLOW_RATES(struct words *w, const struct say_E_SLOW_RATES *x)
{
	put(w, "%s: %.3g tokens/s in the usual requests (%.0f), %.3g in the slow ones (%.0f)",
	    x->where, x->before, x->n_before, x->during, x->n_during);
	if (isfinite(x->after))
		put(w, ", %.3g after them (%.0f usual ones)", x->after, x->n_after);
}

static void say_E_SLOW_PROMPT(struct words *w, const struct say_E_SLOW_PROMPT *x)
{
	put(w, "prompt rate: %.3g tokens/s in the usual requests, %.3g in the slow ones", x->before,
	    x->during);
}

static void say_E_SLOW_FAULTS(struct words *w, const struct say_E_SLOW_FAULTS *x)
{
	put(w,
	    "page faults (/proc/PID/stat): %.1f a second in the usual requests, %.1f in the "
	    "slow ones; major %.1f and %.1f",
	    x->before, x->during, x->major_before, x->major);
	if (x->file || x->anon)
		put(w, "; of the major ones the kernel classed, %.0f in files, %.0f anonymous",
		    x->file, x->anon);
}

static void say_E_SLOW_READS(struct words *w, const struct say_E_SLOW_READS *x)
{
	char a[32], b[32];

	put(w,
	    "read from storage (/proc/PID/io): %s a second in the usual requests, %s in the "
	    "slow ones",
	    B(a, x->before), B(b, x->during));
	if (isfinite(x->refaults))
		put(w, "; %.0f refaults (%s)", x->refaults,
		    x->cgroup ? "its cgroup's memory.stat" : "the host's /proc/vmstat");
}

static void say_E_SLOW_WAITS(struct words *w, const struct say_E_SLOW_WAITS *x)
{
	put(w,
	    "waiting for a CPU (schedstat): %.0f%% of its threads' time in the usual requests, "
	    "%.0f%% in the slow ones",
	    100 * x->before, 100 * x->during);
	if (isfinite(x->throttled))
		put(w, "; throttled in %.0f%% of its quota's periods", 100 * x->throttled);
}

static void say_E_SLOW_PRESSURE(struct words *w, const struct say_E_SLOW_PRESSURE *x)
{
	put(w,
	    "pressure (%s PSI) in the slow requests: memory %.0f%%, CPU %.0f%%, I/O %.0f%% of "
	    "the time",
	    x->cgroup ? "its cgroup's" : "the host's", 100 * x->memory,
	    isfinite(x->cpu) ? 100 * x->cpu : 0, isfinite(x->io) ? 100 * x->io : 0);
}

static void say_E_SLOW_SLOTS(struct words *w, const struct say_E_SLOW_SLOTS *x)
{
	put(w,
	    "compared with the %.0f requests that ran beside as many others (%.0f at once): "
	    "slots share the machine",
	    x->n, x->slots);
}

static void say_E_EXITED(struct words *w, const struct say_E_EXITED *x)
{
	put(w, "%s at %.2f s (%s)", x->how, x->seconds,
	    x->serving ? "while serving" : "during start-up");
}

static void say_E_CACHE_ENTRIES(struct words *w, const struct say_E_CACHE_ENTRIES *x)
{
	char a[32], b[32], c[32];

	put(w,
	    "llama-server stored %.0f prompt-cache entr%s of %s%s%s (%s in all, by "
	    "its own state copies)",
	    x->saves, x->saves == 1 ? "y" : "ies", B(a, x->min), x->max > x->min ? " to " : "",
	    x->max > x->min ? B(b, x->max) : "", B(c, x->total));
	if (x->limit_mib > 0)
		put(w, "; --cache-ram %.0f MiB holds %.0f of %s at once", x->limit_mib, x->fit,
		    x->min == x->max ? "them" : "the largest");
}

static void say_E_FIXED_STATE(struct words *w, const struct say_E_FIXED_STATE *x)
{
	char a[32];

	put(w,
	    "each of its %.0f state copies was %s, for prompts of %.0f to %.0f "
	    "tokens: a fixed-size state (a recurrent or hybrid model), so each entry "
	    "costs the same whatever the prompt",
	    x->saves, B(a, x->bytes), x->min_tokens, x->max_tokens);
}

static void say_E_CHECKPOINTS(struct words *w, const struct say_E_CHECKPOINTS *x)
{
	char a[32], b[32];

	put(w,
	    "llama-server made %.0f context checkpoint%s of up to %s (%s in all), "
	    "kept with the slot's prompt",
	    x->count, x->count == 1 ? "" : "s", B(a, x->max), B(b, x->total));
}

/* the sentence of one code, appended to w */
static void sentence(struct words *w, const struct finding_say *x)
{
	switch (x->code) {
#define X(c, json, ...)              \
	case c:                      \
		say_##c(w, &x->a.c); \
		break;
		SAYS(X)
#undef X
	case SAY_NONE:
	case SAY_NR:
		break;
	}
}

const char *words__message(const struct finding *f, char *buf, size_t size)
{
	struct words w = { .f = f, .buf = buf, .size = size };
	size_t i;

	buf[0] = 0;
	for (i = 0; i < f->nr_says; i++)
		sentence(&w, &f->says[i]);
	return buf;
}

const char *words__evidence(const struct finding *f, const struct finding_say *e, char *buf,
			    size_t size)
{
	struct words w = { .f = f, .buf = buf, .size = size };

	buf[0] = 0;
	sentence(&w, e);
	return buf;
}

/* a finding's rate: bytes, or things where it counts them */
static const char *rate(char *buf, size_t size, const struct finding *f)
{
	double v = f->per_request ? f->bytes_per_request : f->bytes_per_second;

	if (f->counts) {
		snprintf(buf, size, "%+.2f", v);
		return buf;
	}
	return fmt_delta(buf, size, v);
}

const char *words__line(const struct finding *f, char *buf, size_t size)
{
	struct words w = { .f = f, .buf = buf, .size = size };
	char a[32];
	size_t i;

	buf[0] = 0;
	switch (f->kind) {
	case F_ALLOC_FAILURE:
		put(&w, "%s %s at %.1f s", f->strs[0], f->strs[1], f->since_s);
		break;
	case F_EXIT:
		put(&w, "%s at %.1f s", f->strs[0], f->since_s);
		break;
	case F_LEAK:
	case F_UNEXPLAINED:
		put(&w, "%s %s/%s", f->where, rate(a, sizeof(a), f), unit(f->per_request));
		if (f->kind == F_UNEXPLAINED)
			put(&w, " the API does not explain");
		if (finding__reason(f) == M_LEAK_BESIDE_CACHE)
			put(&w, " beside the prompt cache");
		if (finding__reason(f) == M_LEAK_BESIDE_HOLDERS)
			put(&w, " in one holder");
		if (finding__str_of(f, "holder"))
			put(&w, ", held by %s", finding__str_of(f, "holder"));
		if (isfinite(f->requests_to_exhaustion))
			put(&w, ", out of memory in ~%.0f requests", f->requests_to_exhaustion);
		break;
	case F_EVICTION:
		for (i = 0; i < f->nr_nums && strcmp(f->nums[i].key, "evicted_bytes"); i++)
			;
		put(&w, "%s left VRAM at %.1f s (%s)", i < f->nr_nums ? B(a, f->nums[i].v) : "?",
		    f->since_s, f->strs[0]);
		break;
	case F_SLOWDOWN:
		put(&w, "%s %.1fx slower from %.1f s (%s)", f->where, f->first / f->last,
		    f->since_s, f->strs[0]);
		break;
	case F_BOUNDED:
	case F_SETTLED:
		/* a ceiling ahead is not one reached */
		if (finding__reason(f) == M_CACHE_FILLING || finding__reason(f) == M_ROLE_FILLING) {
			put(&w, "%s %s/%s, a cache filling", f->where, rate(a, sizeof(a), f),
			    unit(f->per_request));
			if (isfinite(f->ceiling))
				put(&w, " toward %s", B(a, f->ceiling));
			break;
		}
		put(&w, "%s levelled off at %s", f->where,
		    f->counts ? (snprintf(a, sizeof(a), "%.0f", f->ceiling), a) : B(a, f->ceiling));
		break;
	case F_GROWING:
		if (finding__reason(f) == M_HELD_BRIEFLY)
			put(&w, "%s rose to %s and held briefly, too early to tell", f->where,
			    B(a, f->ceiling));
		else
			put(&w, "%s %s/%s, too early to tell", f->where, rate(a, sizeof(a), f),
			    unit(f->per_request));
		break;
	default:
		put(&w, "%s one step of %s", f->where,
		    f->counts ? (snprintf(a, sizeof(a), "%+.0f", f->shape.step_size), a) :
				D(a, f->shape.step_size));
		break;
	}
	return buf;
}

const char *words__none(size_t steady, char *buf, size_t size)
{
	if (steady)
		snprintf(buf, size, "no leak, cache or failure so far: %zu categories steady",
			 steady);
	else
		snprintf(buf, size, "too few requests or samples to judge yet");
	return buf;
}
