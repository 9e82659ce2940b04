// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the sentences of the verdicts, from their codes and figures */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "analysis/llama_conf.h"
#include "common/fmt.h"
#include "report_words.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
#define D(buf, v) fmt_delta(buf, sizeof(buf), v)

/* appends to buf[0..size) at len; the new length (size or more: full) */
__attribute__((format(printf, 4, 5))) static size_t put(char *buf, size_t size, size_t len,
							const char *fmt, ...)
{
	va_list ap;
	int n;

	if (len >= size)
		return len;
	va_start(ap, fmt);
	n = vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
	return n < 0 ? len : len + n;
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
 * v: settings read, context, its source, slots, their source, fit,
 * the KV cache's bytes where --fit made the context slots x the model's */
static size_t kv_advice(const double *v, char *buf, size_t size, size_t len)
{
	struct conf_val ctx = { .from = v[2] }, par = { .from = v[4] };
	char c[48], a[32];

	if (!v[0])
		return put(buf, size, len,
			   "; for llama.cpp, a smaller context (-c) or fewer parallel slots (-np) "
			   "shrinks the KV cache");
	if (v[6])
		return put(buf, size, len,
			   "; this llama-server has --fit on, %.0f slots (-np, %s) and no context "
			   "(-c): --fit gives each slot up to the model's whole training context, "
			   "so the KV cache is up to %.0f times one slot's (%s each here). -np 1, "
			   "--kv-unified or a -c of the model's context keeps it near one slot's",
			   v[3], llama_conf__from(&par, "LLAMA_ARG_N_PARALLEL"), v[3],
			   B(a, v[6] / v[3]));
	if (v[1])
		snprintf(c, sizeof(c), "%.0f tokens", v[1]);
	else
		snprintf(c, sizeof(c), "the model's");
	return put(buf, size, len,
		   "; this llama-server has a context of %s (-c, %s) over %.0f slot%s (-np, %s)%s: "
		   "a smaller context or fewer slots shrinks the KV cache",
		   c, llama_conf__from(&ctx, "LLAMA_ARG_CTX_SIZE"), v[3], v[3] == 1 ? "" : "s",
		   llama_conf__from(&par, "LLAMA_ARG_N_PARALLEL"),
		   v[5] ? "" : ", and --fit is off, so it was not fitted to the free memory");
}

/* a failed call's place: ", memory type 2, heap 0 of 8.0 GiB device-local" */
static const char *failed_where(const double *v, char *buf, size_t size)
{
	char a[32];
	size_t len = 0;

	buf[0] = 0;
	if (v[1] < 0)
		return buf; /* no place: "" */
	len = put(buf, size, len, ", memory type %.0f", v[1]);
	if (v[2] >= 0)
		put(buf, size, len, ", heap %.0f of %s%s", v[2], B(a, v[3]),
		    v[4] ? " device-local" : "");
	/* with no size the call's parentheses hold the place alone */
	return v[0] ? buf : buf + 2; /* past ", " */
}

static size_t sentence(const struct finding *f, const struct finding_say *x, char *buf, size_t size,
		       size_t len)
{
	const double *v = x->v;
	char a[32], b[32], c[32], d[32], e[160];
	size_t i;

	switch (x->code) {
	case M_LEAK:
		return put(buf, size, len,
			   "%s grows by %s per %s (95%% interval %s to %s) with no sign of a "
			   "ceiling: %s at the first %s, %s at the last (%.0f %ss).",
			   x->s[0], B(a, v[0]), unit(v[6]), B(b, v[1]), B(c, v[2]), B(d, v[3]),
			   !v[6] ? "sample" :
			   v[7]	 ? "request's start" :
				   "request's end",
			   B(e, v[4]), v[5], point(v[6]));
	case M_LEVEL_UNTIL:
		return put(buf, size, len,
			   " It was level until about %s %.0f, and has grown since.", point(v[0]),
			   v[1]);
	case M_STEP_RISES:
		return put(buf, size, len,
			   " The step per request rises with the prompt's length (Kendall tau "
			   "%.2f).",
			   v[0]);
	case M_FIXED_ENTRIES:
		return put(buf, size, len,
			   " Each request adds a fixed %s, independent of its prompt length "
			   "(%.0f..%.0f tokens): fixed-size entries.",
			   B(a, v[0]), v[1], v[2]);
	case M_RUNS_OUT:
		return put(buf, size, len,
			   " At this rate %s (%s) runs out after about %.0f more %s%s.", x->s[0],
			   B(a, v[0]), v[1], v[2] ? "requests" : "seconds",
			   v[3] ? ": unless it levels off first, the process will be OOM-killed "
				  "then" :
				  "");
	case M_RUNS_OUT_CGROUP:
		return put(
			buf, size, len,
			" At this rate it reaches its cgroup's limit (%s of %s: %s, %s in use "
			"now%s%s%s) after about %.0f more %s: %s.",
			v[4] == MODEL_LIMIT_V2_HIGH ? "memory.high" :
			v[4] == MODEL_LIMIT_V2_MAX  ? "memory.max" :
						      "memory.limit_in_bytes",
			x->s[0], B(a, v[0]), B(b, v[1]), v[5] > 0 ? "; then " : "",
			v[5] > 0 ? B(c, v[5]) : "", v[5] > 0 ? " of swap" : "", v[2],
			v[3] ? "requests" : "seconds",
			v[4] == MODEL_LIMIT_V2_HIGH ?
				"past it the kernel throttles the cgroup and reclaims its memory" :
				"unless it levels off first, the kernel will OOM-kill it then, "
				"whatever the host has free");
	case M_TRY_HOST_STACKS:
		return put(buf, size, len, " What to try: the stacks below allocate it.");
	case M_TRY_API_STACKS:
		return put(buf, size, len,
			   " What to try: memory allocated while serving and never freed; the "
			   "stacks below made it.");
	case M_BOUNDED:
		return put(
			buf, size, len,
			"%s grew by %s per %s over the first %.0f %ss, then stayed at %s for the "
			"last %.0f: a bounded cache with a ceiling of %s, not a leak.",
			x->s[0], B(a, v[0]), unit(v[2]), v[1], point(v[2]), B(b, v[3]), v[4],
			B(b, v[3]));
	case M_SETTLED:
		return put(buf, size, len,
			   "%s grew by %s over the first %.0f %ss, more slowly as it went, and has "
			   "stayed near %s for the last %.0f: growth that settled (warm-up, pools "
			   "and caches filling with use), not a leak.",
			   x->s[0], B(a, v[0]), v[1], point(v[2]), B(b, v[3]), v[4]);
	case M_STEADY_AT:
		return put(buf, size, len,
			   "%s is steady at about %s (between %s and %s) over %.0f %ss.", x->s[0],
			   B(a, v[0]), B(b, v[1]), B(c, v[2]), v[3], point(v[4]));
	case M_STEADY_WANDERS:
		return put(buf, size, len,
			   "%s moved between %s and %s over %.0f %ss and ended at %s, with no sure "
			   "rise or fall: no leak so far.",
			   x->s[0], B(b, v[0]), B(c, v[1]), v[2], point(v[3]), B(a, v[4]));
	case M_STEADY_SMALL:
		return put(buf, size, len,
			   " It rose by %s in all, under a hundredth of the process's memory or "
			   "the machine's (%s): too little to matter.",
			   B(d, v[0]), B(a, v[1]));
	case M_GROWING_SLOWING:
		return put(buf, size, len,
			   "%s rose by %s per %s in the first half of the run and %s in the second "
			   "(%s -> %s over %.0f %ss): it is slowing down and may be levelling off. "
			   "Too early to tell; about %.0f more %ss would show whether it stops.",
			   x->s[0], D(a, v[0]), unit(v[5]), D(b, v[1]), B(c, v[2]), B(d, v[3]),
			   v[4], point(v[5]), v[6], point(v[5]));
	case M_GROWING_DRIFT:
		return put(buf, size, len,
			   "%s rose from %s to %s over %.0f %ss (%s per %s), but not past doubt: "
			   "memory that wanders on its own rises this far too. Too early to tell a "
			   "leak; about %.0f more %ss would decide.",
			   x->s[0], B(a, v[0]), B(b, v[1]), v[2], point(v[3]), D(c, v[4]),
			   unit(v[3]), v[5], point(v[3]));
	case M_STEP_REQUEST:
		return put(buf, size, len,
			   "%s changed once by %s in request %.0f (%.2f s) and was flat before and "
			   "after: a one-off step (warm-up, a first image, a bigger prompt), not a "
			   "leak.",
			   x->s[0], D(a, v[0]), v[1], v[2]);
	case M_STEP_TIME:
		return put(buf, size, len,
			   "%s changed once by %s at %.2f s and was flat before and after: a "
			   "one-off step, not a leak.",
			   x->s[0], D(a, v[0]), v[1]);
	case M_BY_ROLE:
		return put(buf, size, len, " By role, from its stacks: %s.", x->s[0]);
	case M_ROSE_HELD:
		return put(buf, size, len,
			   "%s rose by %s (%.0f%%), from %s to %s over %.0f %ss, and held there "
			   "with no steady climb: growth that stopped, not a leak so far.",
			   x->s[0], B(a, v[0]), v[1], B(b, v[2]), B(c, v[3]), spanned(v[4], v[5]),
			   point(v[5]));
	case M_LEAK_UNBOUNDED:
		return put(buf, size, len,
			   " %.0f%% of it is held by %s, in no role with a bound%s.", v[0], x->s[0],
			   v[1] ? " (the rest is in roles that have one)" : "");
	case M_ROLE_PAST_BOUND:
		return put(buf, size, len,
			   " The %s holds %s of it (%.0f%%), more than its bound (%s, %s) lets it "
			   "hold: past its bound, whatever the shape.",
			   x->s[0], B(a, v[0]), v[2], bound_words(x->s[1]), B(b, v[1]));
	case M_ROLE_FILLING:
		return put(buf, size, len,
			   "%s grows by %s per request, and %.0f%% of it is llama-server's prompt "
			   "cache (from its stacks), which --cache-ram bounds at %s: the cache is "
			   "filling, not a leak.",
			   x->s[0], B(a, v[0]), v[1], B(b, v[2]));
	case M_ROLE_WITHIN:
		return put(buf, size, len,
			   "%s grew by %s (%s -> %s over %.0f %ss), and %.0f%% of it is the %s: "
			   "%s%s%s%s, so within its bound, not a leak so far. A leak would keep "
			   "growing past it.",
			   x->s[0], B(a, v[0]), B(b, v[1]), B(c, v[2]), spanned(v[3], v[4]),
			   point(v[4]), v[5], x->s[1], bound_words(x->s[2]),
			   v[6] > 0 ? " (at most " : "", v[6] > 0 ? B(d, v[6]) : "",
			   v[6] > 0 ? ")" : "");
	case M_UNEXPLAINED:
		return put(buf, size, len,
			   "the driver counts %s of this process's device memory per %s more than "
			   "its allocation calls explain (%s: %s -> %s over %.0f %ss; API device "
			   "allocations %s per %s).",
			   B(a, v[0]), unit(v[1]), x->s[0], B(b, v[2]), B(c, v[3]), v[4],
			   v[1] ? "request" : "second", D(d, v[5]), unit(v[1]));
	case M_GRAPH_CACHE:
		return put(buf, size, len,
			   " Live graph executables grow with it: likely a growing CUDA graph "
			   "cache%s.",
			   graphs_advice(v[0]));
	case M_DRIVER_GROWS:
		return put(
			buf, size, len,
			" Memory the driver allocates by itself (contexts, graphs, pools) grows.");
	case M_GRAPHS_NOW:
		return put(buf, size, len, " Graph executables: %+.2f per %s, %.0f live now.", v[0],
			   unit(v[2]), v[1]);
	case M_COUNT_LEAK:
		return put(
			buf, size, len,
			"%s grow by %.2f per %s with no sign of a ceiling: %.0f at the first %s, "
			"%.0f at the last (%.0f %ss).",
			x->s[0], v[0], unit(v[4]), v[1],
			!v[4] ? "sample" :
			v[5]  ? "request's start" :
				"request's end",
			v[2], v[3], point(v[4]));
	case M_COUNT_GROWING:
		return put(buf, size, len,
			   "%s rose by %.2f per %s, %.0f to %.0f over %.0f %ss: too early to tell "
			   "whether they level off.",
			   x->s[0], v[0], unit(v[4]), v[1], v[2], v[3], point(v[4]));
	case M_COUNT_LEVELS:
		return put(buf, size, len,
			   "%s rose from %.0f and levelled off near %.0f from %s %.0f on (between "
			   "%.0f and %.0f over %.0f %ss): a bounded set of them, not a leak.",
			   x->s[0], v[0], v[1], point(v[6]), v[4], v[2], v[3], v[5], point(v[6]));
	case M_COUNT_STEP:
		return put(
			buf, size, len,
			"%s changed once by %+.0f (%.0f to %.0f) at %s %.0f and held: a one-off, "
			"not a leak.",
			x->s[0], v[0], v[1], v[2], point(v[4]), v[3]);
	case M_COUNT_STEADY:
		return put(buf, size, len, "%s stayed between %.0f and %.0f over %.0f %ss.",
			   x->s[0], v[0], v[1], v[2], point(v[3]));
	case M_COUNT_SWINGS:
		return put(
			buf, size, len,
			"%s rose as high as %.0f (at %s %.0f) and fell back to %.0f, between "
			"%.0f and %.0f over %.0f %ss: they are let go as well as made, a bounded "
			"set, not a leak; the most live at once is what they cost.",
			x->s[0], v[0], point(v[5]), v[1], v[2], v[3], v[0], v[4], point(v[5]));
	case M_GRAPHS_HOLD:
		return put(buf, size, len,
			   " Each holds device memory that no allocation call shows; NVML's "
			   "figure for the process does%s.",
			   v[0] ? graphs_advice(v[1]) : "");
	case M_NOT_JUDGED:
		if (v[5])
			return put(
				buf, size, len,
				"%s: read only %.0f time%s over %.1f s and %.0f requests, and a "
				"shape needs %.0f points. Trace longer, or sample more often than "
				"every %.2f s (-i): it is read once an interval.",
				x->s[0], v[0], v[0] == 1 ? "" : "s", v[1], v[2], v[3], v[4]);
		return put(buf, size, len,
			   "%s: %.1f s and %.0f requests are too few for a shape, which needs %.0f "
			   "requests or %.0f sampling intervals (%.2f s each). Trace longer.",
			   x->s[0], v[1], v[2], v[3], v[3], v[4]);
	case M_CACHE_OFF:
		return put(
			buf, size, len,
			" llama-server's prompt cache is off (--cache-ram 0, %s): this is not the "
			"prompt cache.",
			cache_from(v[0]));
	case M_CACHE_UNLIMITED:
		return put(
			buf, size, len,
			" llama-server's prompt cache has no limit (--cache-ram -1, %s): if this "
			"is the cache, it grows until memory runs out. What to try: --cache-ram "
			"N bounds it.",
			cache_from(v[0]));
	case M_CACHE_EXCEEDED:
		return put(buf, size, len,
			   " It has grown by %s, more than llama-server's prompt cache may hold "
			   "(--cache-ram %.0f MiB, %s): not the prompt cache alone. What to try: "
			   "the stacks below allocate it.",
			   B(a, v[0]), v[1], cache_from(v[2]));
	case M_CACHE_STOPS_AT:
		return put(buf, size, len,
			   " llama-server's prompt cache may hold %.0f MiB (--cache-ram, %s); if "
			   "this is the cache, it stops at about %s.",
			   v[0], cache_from(v[1]), B(a, v[2]));
	case M_CACHE_LEVELS:
		return put(
			buf, size, len,
			v[4] ? " At this rate it fills --cache-ram (%.0f MiB, %s) at about %s, "
			       "after about %.0f more requests" :
			       " If this is llama-server's prompt cache (at most %.0f MiB: --cache-ram, "
			       "%s), it levels off at about %s after about %.0f more requests",
			v[0], cache_from(v[1]), B(a, v[2]), v[3]);
	case M_CACHE_OOM_FIRST:
		return put(buf, size, len,
			   "; that is %s more, and %s %s: the process would be OOM-killed first, "
			   "after about %.0f more requests",
			   B(b, v[0]), v[3] ? "its cgroup's limit leaves it" : "the machine has",
			   B(d, v[1]), v[2]);
	case M_CACHE_TRY_LOWER:
		return put(buf, size, len,
			   ". What to try: a lower --cache-ram bounds it (0 turns the cache off); "
			   "growth past the limit is not the cache.");
	case M_CACHE_FILLING:
		return put(buf, size, len,
			   "%s grows by %s per request as llama-server's prompt cache fills: it "
			   "stored %.0f entries of about %s (its own state copies), %s in all, "
			   "%.1f%% of what --cache-ram %.0f MiB (%s) lets it hold. At this rate it "
			   "is full at about %s after about %.0f more requests: a bounded cache, "
			   "not a leak",
			   x->s[0], B(a, v[0]), v[1], B(b, v[2]), B(c, v[3]),
			   v[4] > 0 ? 100 * v[3] / (v[4] * 1048576) : 0, v[4], cache_from(v[5]),
			   B(d, v[6]), v[7]);
	case M_CACHE_FULL:
		return put(buf, size, len,
			   "%s rose from %s to %s and held there: llama-server's prompt cache is "
			   "full. It stored %.0f entries (its own state copies), and --cache-ram "
			   "%.0f MiB (%s) holds %.0f of them at once, so it drops the oldest for "
			   "each new one: a bounded cache, not a leak.",
			   x->s[0], B(a, v[0]), B(b, v[1]), v[2], v[4], cache_from(v[5]), v[3]);
	case M_CACHE_SHARE:
		return put(buf, size, len,
			   " It rose by %s, %.0f%% of what llama-server's prompt cache may hold "
			   "(--cache-ram %.0f MiB, %s)%s. If the ceiling is too much for this "
			   "machine, lower --cache-ram.",
			   B(a, v[0]), v[1], v[2], cache_from(v[3]),
			   v[4] ? ": more than the cache holds, since the allocator keeps what the "
				  "entries it dropped had used (or something else grew too)" :
				  "");
	case M_FAILED:
		return put(buf, size, len, "%s(%s%s)%s%s failed with %s at %.2f s%s; %s was live",
			   x->s[0], v[0] ? B(a, v[0]) : "", failed_where(v, e, sizeof(e)),
			   x->s[2][0] ? " for the " : "", x->s[2], x->s[1], v[5],
			   v[6] > 1 ? " (and again, the same way)" : "", B(b, v[7]));
	case M_FAILED_ROLES:
		return put(buf, size, len, ": %s", x->s[0]);
	case M_FAILED_STACKS:
		for (i = 0; i < f->nr_stacks; i++)
			len = put(buf, size, len, "%s %s %s (%s)", i ? "," : ":",
				  f->stacks[i].label, B(a, f->stacks[i].bytes),
				  sizes(&f->stacks[i], e, sizeof(e)));
		if (v[0])
			len = put(buf, size, len, ", other %s", B(a, v[0]));
		return len;
	case M_FAIL_TRY_GRAPHS:
		return put(buf, size, len,
			   ". What to try: keep fewer graph executables alive; their memory is not "
			   "in the allocation calls%s.",
			   v[0] ? graphs_advice(v[1]) : "");
	case M_FAIL_TRY_SHRINK:
		return put(buf, size, len,
			   ". What to try: shrink the biggest holder, %s (%.0f%% of what was live)",
			   x->s[0], v[0]);
	case M_FAIL_TRY_CALL:
		return put(
			buf, size, len,
			". What to try: shrink what the call was for, the %s: it alone asked for "
			"%s, more than %s (%s)",
			x->s[0], B(a, v[0]),
			v[0] > v[2] ? "all that was live" : "the biggest holder",
			B(b, v[0] > v[2] ? v[2] : v[1]));
	case M_FAIL_TRY_KV:
		return kv_advice(v, buf, size, len);
	case M_FAIL_END:
		return put(buf, size, len, ".");
	case M_EVICTED:
		len = put(buf, size, len,
			  "at %.2f s, %s of this process's buffers moved out of VRAM", v[0],
			  B(a, v[1]));
		if (v[3])
			len = put(buf, size, len, " while PID %.0f (%s) allocated %s", v[2],
				  x->s[0], B(c, v[3]));
		return put(buf, size, len, "; ");
	case M_EVICT_RETURNED:
		return put(buf, size, len, "by the end, %s had moved back and %s was freed.",
			   B(a, v[0]), B(b, v[1]));
	case M_EVICT_STILL_OUT:
		return put(buf, size, len, "%s is still out of VRAM (%s moved back, %s was freed)",
			   B(a, v[0]), B(b, v[1]), B(c, v[2]));
	case M_EVICT_NONE_BACK:
		return put(buf, size, len, "none moved back");
	case M_EVICT_AFTER_FREE:
		return put(buf, size, len, " after PID %.0f freed its buffers at %.2f s.", v[0],
			   v[1]);
	case M_EVICT_BY_END:
		return put(buf, size, len, " by the end.");
	case M_DECODE_FELL:
		return put(buf, size, len,
			   " Decode rate %.1f -> %.1f tok/s (%.0f requests before, %.0f after)%s",
			   v[0], v[1], v[2], v[3],
			   v[4] ? ": the buffers the GPU reads now sit in system memory. What to "
				  "try: the driver does not move them back by itself; restart the "
				  "server or keep other programs within free VRAM." :
				  ".");
	case M_DECODE_NOT_FELL:
		return put(buf, size, len,
			   " The decode rate did not clearly fall: %.1f -> %.1f tok/s (%.0f "
			   "requests before, %.0f after).",
			   v[0], v[1], v[2], v[3]);
	case M_DECODE_NO_RATES:
		return put(buf, size, len, " No decode rates on both sides to compare.");
	case M_EXIT:
		len = put(buf, size, len, "The process (%s) %s %s at %.2f s", x->s[0],
			  v[0] ? "was killed by" : "ended with", x->s[1], v[1]);
		if (!v[2])
			len = put(buf, size, len, ", before it served any request");
		else
			len = put(buf, size, len, ", after answering %.0f of %.0f requests", v[3],
				  v[4]);
		if (isfinite(v[5]))
			len = put(buf, size, len,
				  ", %.2f s after a GPU allocation of %s failed (above)", v[5],
				  B(a, v[6]));
		return put(buf, size, len, ".");
	case M_CRASH_THREAD:
		/* a fault (si_code > 0) in the thread, or a signal sent to it */
		if (crash__fault(v[5], v[1]))
			len = put(buf, size, len,
				  " It faulted in thread '%s' (tid %.0f) at address 0x%llx",
				  x->s[0], v[0], (unsigned long long)v[2]);
		else if (v[5] == SIGSEGV && v[1] == SI_KERNEL)
			/* x86's #GP: the kernel knows no address to give */
			len = put(buf, size, len,
				  " It took a general protection fault in thread '%s' (tid %.0f): "
				  "an address no process can map, as a corrupted pointer gives "
				  "(the CPU names no address)",
				  x->s[0], v[0]);
		else if (v[5] == SIGABRT && v[4])
			len = put(buf, size, len, " Thread '%s' (tid %.0f) called abort", x->s[0],
				  v[0]);
		else if (v[3])
			len = put(
				buf, size, len,
				" The signal was sent by pid %.0f (kill) and taken by thread '%s' "
				"(tid %.0f)",
				v[3], x->s[0], v[0]);
		else if (v[1] == SI_KERNEL)
			len = put(buf, size, len,
				  " The kernel sent it (as its OOM killer does) and thread '%s' "
				  "(tid %.0f) took it",
				  x->s[0], v[0]);
		else
			len = put(buf, size, len, " It was taken by thread '%s' (tid %.0f)",
				  x->s[0], v[0]);
		return put(buf, size, len, "%s%s.", x->s[1][0] ? ", in " : " (no stack)", x->s[1]);
	case M_CRASH_HEAP:
		return put(
			buf, size, len,
			" The C library stopped it on finding its heap corrupted, in a malloc or "
			"free: memory was written out of bounds or freed twice earlier, "
			"elsewhere (run it under AddressSanitizer or valgrind to find where).");
	case M_CRASH_SERVING:
		return put(buf, size, len, " It was serving request%s %s.", v[0] > 1 ? "s" : "",
			   x->s[0]);
	case E_STEP_SPREAD:
		return put(buf, size, len, "the step per request is %s: spread %.0f%% of its mean",
			   v[0] < 0.1 ? "constant" : "variable", v[0] * 100);
	case E_STEP_FOLLOWS:
		return put(buf, size, len, "the step follows the prompt length (Kendall tau %.2f)",
			   v[0]);
	case E_STEP_NOT_FOLLOWS:
		return put(buf, size, len,
			   "the step does not follow the prompt length (Kendall tau %.2f over %.0f "
			   "requests)",
			   v[0], v[1]);
	case E_HELD_BY_ROLE:
		return put(buf, size, len, "%s by role: %s", v[0] ? "first touched" : "held",
			   x->s[0]);
	case E_TOUCHES:
		return put(buf, size, len,
			   "sampled first touches of anonymous memory between %.2f s and %.2f s "
			   "stand for %s, %s by %s (a stack for about one in %s touched)",
			   v[0], v[1], B(a, v[2]), B(b, v[3]), x->s[0], B(c, v[4]));
	case E_MADE_HELD:
		return put(
			buf, size, len,
			"%s of it was made between %.2f s and %.2f s and held at the end of that, "
			"%s by %s",
			B(a, v[0]), v[1], v[2], B(b, v[3]), x->s[0]);
	case E_MAPPINGS_COVER:
		return put(buf, size, len,
			   "the mappings cover %s but the heap grew by %s: part of them was never "
			   "touched (no smaps read said how much of each)",
			   B(a, v[0]), B(b, v[1]));
	case E_GRAPHS_GROW:
		return put(buf, size, len, "%s grow with it: %+.2f per %s, %.0f live at the end",
			   x->s[0], v[0], unit(v[1]), v[2]);
	case E_HOST_NOT_GPU:
		return put(buf, size, len,
			   "GPU API memory stayed flat (%s): this is host memory, not GPU memory",
			   x->s[0]);
	case E_LESS_VULKAN:
		return put(
			buf, size, len,
			"judged less the Vulkan memory (%s at the end): on this device it is host "
			"memory, and is counted once, as Vulkan's",
			B(a, v[0]));
	case E_FIRST_LEFT_OUT:
		return put(buf, size, len,
			   "judged from request %.0f on: request %.0f alone raised it by %s, more "
			   "than all the later ones moved it (a one-off on first use: shaders, "
			   "buffers, graphs)",
			   v[1] + 1, v[1], B(a, v[0]));
	case E_STEP_FIT:
		return put(buf, size, len, "step over %.0f %ss: %s before, %s after, noise %s",
			   spanned(v[0], v[1]), point(v[1]), B(a, v[2]), B(b, v[3]), B(c, v[4]));
	case E_BOUNDED_FIT:
		return put(buf, size, len,
			   "bounded_cache over %.0f %ss: a rise of %s per %s until %s %.0f, then "
			   "level (noise %s), confidence %.2f",
			   spanned(v[0], v[1]), point(v[1]), D(a, v[2]), unit(v[1]), point(v[1]),
			   v[3], B(b, v[4]), v[5]);
	case E_SHAPE_FIT:
		return put(buf, size, len,
			   "%s over %.0f %ss: slope %s per %s, noise %s, confidence %.2f", x->s[0],
			   spanned(v[0], v[1]), point(v[1]), D(a, v[2]), unit(v[1]), B(b, v[3]),
			   v[4]);
	case E_CHANGED_ONCE:
		return put(buf, size, len, "%s changed once by %s, in request %.0f (%.2f s)",
			   x->s[0], D(a, v[0]), v[1], v[2]);
	case E_DRIVER_AGREES:
		return put(buf, size, len, "%s agrees: %s per %s", x->s[0], D(a, v[0]), unit(v[1]));
	case E_DRIVER_RATE:
		return put(buf, size, len, "%s: %s per %s (interval %s to %s)", x->s[0], D(a, v[0]),
			   unit(v[3]), D(b, v[1]), D(c, v[2]));
	case E_API_RATE:
		return put(buf, size, len,
			   "GPU API device allocations: %s per %s (interval %s to %s)", D(a, v[0]),
			   unit(v[3]), D(b, v[1]), D(c, v[2]));
	case E_GRAPHS_LIVE:
		return put(buf, size, len, "live graph executables: %+.2f per %s (now %.0f)", v[0],
			   unit(v[2]), v[1]);
	case E_LIVE_BY_ROLE:
		return put(buf, size, len, "live by role: %s", x->s[0]);
	case E_CALL_FAILED:
		return put(buf, size, len, "%s%s%s failed with %s%s", x->s[0], v[0] ? " of " : "",
			   v[0] ? B(a, v[0]) : "", x->s[1],
			   v[1] ? "; the stack of the failing call is in the JSON report" : "");
	case E_EVICTIONS:
		return put(buf, size, len,
			   "%.0f evictions of this process's buffers from VRAM by PID %.0f (%s), "
			   "%.2f s to %.2f s",
			   v[0], v[1], x->s[0], v[2], v[3]);
	case E_VRAM_LEVELS:
		return put(buf, size, len, "its VRAM-resident buffers: %s before, %s at the end",
			   B(a, v[0]), B(b, v[1]));
	case E_DECODE_RATES:
		return put(buf, size, len,
			   "decode rate: median %.1f tok/s over %.0f requests before, %.1f tok/s "
			   "over %.0f after (a rate before beats one after %.0f%% of the time)",
			   v[0], v[1], v[2], v[3], v[4] * 100);
	case E_EXITED:
		return put(buf, size, len, "%s at %.2f s (%s)", x->s[0], v[0],
			   v[1] ? "while serving" : "during start-up");
	case E_CACHE_ENTRIES:
		len = put(buf, size, len,
			  "llama-server stored %.0f prompt-cache entr%s of %s%s%s (%s in all, by "
			  "its own state copies)",
			  v[0], v[0] == 1 ? "y" : "ies", B(a, v[1]), v[2] > v[1] ? " to " : "",
			  v[2] > v[1] ? B(b, v[2]) : "", B(c, v[3]));
		if (v[4] > 0)
			len = put(buf, size, len, "; --cache-ram %.0f MiB holds %.0f of %s at once",
				  v[4], v[5], v[1] == v[2] ? "them" : "the largest");
		return len;
	case E_FIXED_STATE:
		return put(
			buf, size, len,
			"each of its %.0f state copies was %s, for prompts of %.0f to %.0f "
			"tokens: a fixed-size state (a recurrent or hybrid model), so each entry "
			"costs the same whatever the prompt",
			v[1], B(a, v[0]), v[2], v[3]);
	case E_CHECKPOINTS:
		return put(buf, size, len,
			   "llama-server made %.0f context checkpoint%s of up to %s (%s in all), "
			   "kept with the slot's prompt",
			   v[0], v[0] == 1 ? "" : "s", B(a, v[1]), B(b, v[2]));
	case SAY_NONE:
	case SAY_NR:
		break;
	}
	return len;
}

const char *words__message(const struct finding *f, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = 0;
	for (i = 0; i < f->nr_says; i++)
		len = sentence(f, &f->says[i], buf, size, len);
	return buf;
}

const char *words__evidence(const struct finding *f, const struct finding_say *e, char *buf,
			    size_t size)
{
	buf[0] = 0;
	sentence(f, e, buf, size, 0);
	return buf;
}
