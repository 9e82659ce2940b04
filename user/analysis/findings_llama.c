// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* what llama-server's own settings say of a verdict: where its prompt cache
 * stops (--cache-ram), after how many more requests, and whether the
 * machine has that much; advice only where the setting is not already so */
#include <math.h>
#include <stdio.h>
#include "findings_int.h"
#include "common/fmt.h"
#include "llama_conf.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
#define MIB (1024.0 * 1024)

static const char *cache_from(const struct llama_conf *c)
{
	return c->cache_ram.from == CONF_ARG ? "from the command line" :
	       c->cache_ram.from == CONF_ENV ? "from LLAMA_ARG_CACHE_RAM" :
					       "the default";
}

/* host growth that is still going: where the prompt cache would stop it */
static size_t growing(const struct model *m, const struct judged *j, const struct llama_conf *c,
		      struct finding *f, char *buf, size_t size)
{
	double limit = c->cache_ram.v * MIB, base = j->y[0], now = j->y[j->n - 1];
	double step = judged__per_unit(j, j->r.slope), left = limit - (now - base), avail, more;
	char a[32], b[32], d[32];
	size_t len;

	finding__num(f, "cache_ram_bytes", limit);
	if (left <= 0)
		return snprintf(buf, size,
				" It has grown by %s, more than llama-server's prompt cache may "
				"hold (--cache-ram %ld MiB, %s): not the prompt cache alone. What "
				"to try: the stacks below allocate it.",
				B(a, now - base), c->cache_ram.v, cache_from(c));
	if (!j->per_request || step <= 0)
		return snprintf(buf, size,
				" llama-server's prompt cache may hold %ld MiB (--cache-ram, %s); "
				"if this is the cache, it stops at about %s.",
				c->cache_ram.v, cache_from(c), B(a, base + limit));
	more = ceil(left / step);
	finding__num(f, "cache_full_bytes", base + limit);
	finding__num(f, "requests_to_cache_full", more);
	len = snprintf(
		buf, size,
		" If this is llama-server's prompt cache (at most %ld MiB: --cache-ram, %s), "
		"it levels off at about %s after about %.0f more requests",
		c->cache_ram.v, cache_from(c), B(a, base + limit), more);
	avail = m->meminfo_seen ? (double)m->mem_available : NAN;
	if (isfinite(avail) && left > avail && len < size)
		len += snprintf(buf + len, size - len,
				"; that is %s more, and the machine has %s available: the process "
				"would be OOM-killed first, after about %.0f more requests",
				B(b, left), B(d, avail), floor(avail / step));
	if (len < size)
		len += snprintf(buf + len, size - len,
				". What to try: a lower --cache-ram bounds it (0 turns the cache "
				"off); growth past the limit is not the cache.");
	return len;
}

size_t findings__llama_host(const struct model *m, const struct model_proc *p,
			    const struct judged *j, struct finding *f, bool bounded, char *buf,
			    size_t size)
{
	struct llama_conf c;
	char a[32];
	double rise;

	buf[0] = 0;
	if (j->c.cls != CAT_HOST || !llama_conf__read(p, &c))
		return 0;
	if (!c.cache_ram.v)
		return snprintf(buf, size,
				" llama-server's prompt cache is off (--cache-ram 0, %s): this is "
				"not the prompt cache.",
				cache_from(&c));
	if (c.cache_ram.v < 0)
		return snprintf(
			buf, size,
			" llama-server's prompt cache has no limit (--cache-ram -1, %s): if "
			"this is the cache, it grows until memory runs out. What to try: "
			"--cache-ram N bounds it.",
			cache_from(&c));
	if (!bounded)
		return growing(m, j, &c, f, buf, size);
	rise = j->r.ceiling - j->y[0];
	finding__num(f, "cache_ram_bytes", c.cache_ram.v * MIB);
	return snprintf(buf, size,
			" It rose by %s, %.0f%% of what llama-server's prompt cache may hold "
			"(--cache-ram %ld MiB, %s)%s. If the ceiling is too much for this machine, "
			"lower --cache-ram.",
			B(a, rise), 100 * rise / (c.cache_ram.v * MIB), c.cache_ram.v,
			cache_from(&c),
			rise > 1.25 * c.cache_ram.v * MIB ?
				": more than the cache holds, since the allocator keeps what the "
				"entries it dropped had used (or something else grew too)" :
				"");
}

const char *findings__kv_advice(const struct model_proc *p, char *buf, size_t size)
{
	struct llama_conf c;
	char ctx[48];

	if (!llama_conf__read(p, &c))
		return "; for llama.cpp, a smaller context (-c) or fewer parallel slots (-np) shrinks the "
		       "KV cache";
	if (c.ctx.v)
		snprintf(ctx, sizeof(ctx), "%ld tokens", c.ctx.v);
	else
		snprintf(ctx, sizeof(ctx), "the model's");
	snprintf(buf, size,
		 "; this llama-server has a context of %s (-c, %s) over %ld slot%s (-np, %s)%s: a "
		 "smaller context or fewer slots shrinks the KV cache",
		 ctx, llama_conf__from(&c.ctx, "LLAMA_ARG_CTX_SIZE"), llama_conf__slots(&c),
		 llama_conf__slots(&c) == 1 ? "" : "s",
		 llama_conf__from(&c.parallel, "LLAMA_ARG_N_PARALLEL"),
		 c.fit.v ? "" : ", and --fit is off, so it was not fitted to the free memory");
	return buf;
}

const char *findings__graphs_advice(const struct model_proc *p)
{
	struct llama_conf c;

	llama_conf__read(p, &c);
	return c.cuda_graphs_off ?
		       " (CUDA graphs are already off: GGML_CUDA_DISABLE_GRAPHS is set)" :
		       " (for llama.cpp, try GGML_CUDA_DISABLE_GRAPHS=1)";
}
