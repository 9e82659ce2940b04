// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* what llama-server's own settings say of a verdict: where its prompt cache
 * stops (--cache-ram), after how many more requests, and whether the
 * machine has that much; advice only where the setting is not already so */
#include <math.h>
#include <stdio.h>
#include "findings_int.h"
#include "llama_conf.h"

#define MIB (1024.0 * 1024)

/* host growth that is still going: where the prompt cache would stop it */
/* the room the process had left when the cache would take more, and whose
 * limit that was (1: its cgroup's, 0: the machine's available memory) */
static void oom_room(struct finding *f, double room, const char *what)
{
	finding__num(f, "oom_room_bytes", room);
	finding__num(f, "oom_by_cgroup", what == category_cgroup_limit);
}

static void growing(const struct model *m, const struct model_proc *p, const struct judged *j,
		    const struct llama_conf *c, struct finding *f)
{
	const char *what;
	double limit = c->cache_ram.v * MIB, base = j->y[0], now = j->y[j->n - 1];
	double step = judged__per_unit(j, j->r.slope), left = limit - (now - base), avail, more;

	finding__num(f, "cache_ram_bytes", limit);
	if (left <= 0) {
		SAY(f, M_CACHE_EXCEEDED, .grown = now - base, .mib = c->cache_ram.v,
		    .from = c->cache_ram.from);
		return;
	}
	if (!j->per_request || step <= 0) {
		SAY(f, M_CACHE_STOPS_AT, .mib = c->cache_ram.v, .from = c->cache_ram.from,
		    .bytes = base + limit);
		return;
	}
	more = ceil(left / step);
	/* the server's own entries, where they were seen and none can have
	 * been dropped yet: the cache holds what it saved, and fills by the
	 * mean entry */
	if (p->lstate.saves && (double)p->lstate.entry_bytes < limit)
		more = ceil((limit - p->lstate.entry_bytes) /
			    ((double)p->lstate.entry_bytes / p->lstate.saves));
	finding__num(f, "cache_full_bytes", base + limit);
	finding__num(f, "requests_to_cache_full", more);
	SAY(f, M_CACHE_LEVELS, .mib = c->cache_ram.v, .from = c->cache_ram.from,
	    .bytes = base + limit, .requests = more,
	    .known = f->nr_says && f->says[0].code == M_ROLE_FILLING);
	/* what the process may still use: its cgroup's limit, or the host's */
	if (!category__host_room(m, p, &avail, &what))
		avail = NAN;
	if (isfinite(avail) && left > avail) {
		finding__num(f, "requests_to_oom", floor(avail / step));
		oom_room(f, avail, what);
		SAY(f, M_CACHE_OOM_FIRST, .more = left, .available = avail,
		    .requests = floor(avail / step), .by_cgroup = what == category_cgroup_limit);
	}
	SAY(f, M_CACHE_TRY_LOWER);
}

/* every state copy the same size while the prompts were not: a recurrent
 * model's fixed state (field report 2), which fills the cache by a fixed
 * step whatever the prompt */
static void fixed_state(const struct model_proc *p, struct finding *f)
{
	const struct model_llama_state *s = &p->lstate;
	double tmin = INFINITY, tmax = 0;
	size_t i;

	if (s->saves < 3 || s->save_max - s->save_min > s->save_max / 100)
		return;
	for (i = 0; i < p->nr_reqs; i++) {
		double t = model_req__prompt_tokens(&p->reqs[i]);

		if (t > 0) {
			tmin = fmin(tmin, t);
			tmax = fmax(tmax, t);
		}
	}
	if (tmax < 1.2 * tmin)
		return;
	finding__num(f, "cache_state_bytes", s->save_max);
	EVIDENCE(f, E_FIXED_STATE, .bytes = s->save_max, .saves = s->saves, .min_tokens = tmin,
		 .max_tokens = tmax);
}

/* what the server's own state copies say: each prompt-cache entry it kept
 * and each context checkpoint, sized by its calls, against --cache-ram */
static void state_evidence(const struct model_proc *p, const struct llama_conf *c,
			   struct finding *f)
{
	const struct model_llama_state *s = &p->lstate;
	double fit = 0;

	if (s->saves) {
		if (c->cache_ram.v > 0 && s->entry_max)
			fit = floor(c->cache_ram.v * MIB / s->entry_max);
		finding__num(f, "cache_entries", s->saves);
		if (fit > 0)
			finding__num(f, "cache_entries_fit", fit);
		finding__num(f, "cache_entry_max_bytes", s->entry_max);
		EVIDENCE(f, E_CACHE_ENTRIES, .saves = s->saves, .min = s->entry_min,
			 .max = s->entry_max, .total = s->entry_bytes,
			 .limit_mib = c->cache_ram.v > 0 ? c->cache_ram.v : 0, .fit = fit);
	}
	fixed_state(p, f);
	if (s->ckpts) {
		finding__num(f, "checkpoints", s->ckpts);
		EVIDENCE(f, E_CHECKPOINTS, .count = s->ckpts, .max = s->ckpt_max,
			 .total = s->ckpt_bytes);
	}
}

bool findings__llama_cache_full(const struct model_proc *p, const struct judged *j,
				struct finding *f)
{
	const struct model_llama_state *s = &p->lstate;
	struct llama_conf c;
	double limit, rise;
	size_t i, k;

	/* sizes of 0 are no entries (the target says them: hostile input) */
	if (j->c.cls != CAT_HOST || !s->saves || !s->entry_min || !llama_conf__read(p, &c) ||
	    c.cache_ram.v <= 0)
		return false;
	limit = c.cache_ram.v * MIB;
	rise = j->y[j->n - 1] - j->y[0];
	/* more entries than it can ever hold at once: it has dropped some to
	 * make room (each new one is allocated before the oldest goes, so the
	 * level swings by an entry and its shape alone says "steady") */
	if (s->saves <= floor(limit / s->entry_min) || rise < j->material)
		return false;
	/* full since the request during which its entries first passed the
	 * limit (the server made room then) */
	for (i = 0; i < p->lentry_bytes.n && (double)p->lentry_bytes.p[i].v <= limit; i++)
		;
	if (j->per_request && i < p->lentry_bytes.n) {
		for (k = 0; k < j->n && j->ts[k] < p->lentry_bytes.p[i].ts; k++)
			;
		if (k < j->n)
			f->since_request = judged__req_no(j, k);
	}
	finding__num(f, "cache_ram_bytes", limit);
	finding__num(f, "cache_entries_fit", floor(limit / s->entry_max));
	SAY(f, M_CACHE_FULL, .where = j->c.text, .first = j->y[0], .last = j->y[j->n - 1],
	    .saves = s->saves, .fit = floor(limit / s->entry_max), .mib = c.cache_ram.v,
	    .from = c.cache_ram.from);
	SAY(f, M_CACHE_SHARE, .rise = rise, .percent = 100 * rise / limit, .mib = c.cache_ram.v,
	    .from = c.cache_ram.from, .over = rise > 1.25 * limit);
	state_evidence(p, &c, f);
	return true;
}

bool findings__llama_cache_filling(const struct model *m, const struct model_proc *p,
				   const struct judged *j, struct finding *f)
{
	const struct model_llama_state *s = &p->lstate;
	struct llama_conf c;
	double limit, rise, step, mean, more, room;
	const char *what;

	if (j->c.cls != CAT_HOST || !j->per_request || s->saves < 3 || !s->entry_bytes ||
	    !llama_conf__read(p, &c) || c.cache_ram.v <= 0)
		return false;
	limit = c.cache_ram.v * MIB;
	rise = j->y[j->n - 1] - j->y[0];
	step = judged__per_unit(j, j->r.slope);
	mean = (double)s->entry_bytes / s->saves;
	/* still filling: nothing dropped yet, and the entries hold most of
	 * the rise (growth well past them is something else's: a leak) */
	if ((double)s->entry_bytes >= limit || rise <= 0 || (double)s->entry_bytes < 0.8 * rise ||
	    step <= 0)
		return false;
	more = ceil((limit - s->entry_bytes) / mean);
	finding__num(f, "cache_ram_bytes", limit);
	finding__num(f, "cache_full_bytes", j->y[j->n - 1] + (limit - s->entry_bytes));
	finding__num(f, "requests_to_cache_full", more);
	f->ceiling = j->y[j->n - 1] + (limit - s->entry_bytes);
	SAY(f, M_CACHE_FILLING, .where = j->c.text, .step = step, .saves = s->saves, .mean = mean,
	    .total = s->entry_bytes, .mib = c.cache_ram.v, .from = c.cache_ram.from,
	    .ceiling = f->ceiling, .more = more);
	/* what the process may still use: its cgroup's limit, or the host's */
	if (category__host_room(m, p, &room, &what) && limit - s->entry_bytes > room) {
		finding__num(f, "requests_to_oom", floor(room / step));
		oom_room(f, room, what);
		SAY(f, M_CACHE_OOM_FIRST, .more = limit - s->entry_bytes, .available = room,
		    .requests = floor(room / step), .by_cgroup = what == category_cgroup_limit);
	}
	SAY(f, M_CACHE_TRY_LOWER);
	state_evidence(p, &c, f);
	return true;
}

bool findings__llama_host(const struct model *m, const struct model_proc *p, const struct judged *j,
			  struct finding *f, bool bounded)
{
	struct llama_conf c;
	double rise;

	if (j->c.cls != CAT_HOST || !llama_conf__read(p, &c))
		return false;
	state_evidence(p, &c, f);
	if (!c.cache_ram.v) {
		SAY(f, M_CACHE_OFF, .from = c.cache_ram.from);
	} else if (c.cache_ram.v < 0) {
		SAY(f, M_CACHE_UNLIMITED, .from = c.cache_ram.from);
	} else if (!bounded) {
		growing(m, p, j, &c, f);
	} else {
		rise = (isfinite(f->ceiling) ? f->ceiling : j->r.ceiling) - j->y[0];
		finding__num(f, "cache_ram_bytes", c.cache_ram.v * MIB);
		SAY(f, M_CACHE_SHARE, .rise = rise, .percent = 100 * rise / (c.cache_ram.v * MIB),
		    .mib = c.cache_ram.v, .from = c.cache_ram.from,
		    .over = rise > 1.25 * c.cache_ram.v * MIB);
	}
	return true;
}
