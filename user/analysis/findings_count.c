// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* verdicts on counts (CUDA's live graph executables), in counts, and on
 * any series too short to judge: each series gets one */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "findings_int.h"
#include "llama_conf.h"

/* a count that moves by fewer than this is steady, whatever its shape */
#define SWING_MIN 8
/* ggml-cuda (ggml_backend_cuda_context::cuda_graph) sweeps every 5 s the
 * graphs unused for 10 s: a set of them still growing over longer than
 * that was not swept */
#define GRAPH_SWEEP_S 15.0

static double lowest(const struct judged *j)
{
	double lo = INFINITY;
	size_t i;

	for (i = 0; i < j->n; i++)
		lo = fmin(lo, j->y[i]);
	return lo;
}

static double highest(const struct judged *j)
{
	double hi = -INFINITY;
	size_t i;

	for (i = 0; i < j->n; i++)
		hi = fmax(hi, j->y[i]);
	return hi;
}

/* device growth that the driver saw and these counts explain says them
 * already (findings_shape.c's judged__judge_driver) */
static bool cited(const struct model_proc *p, const struct findings *fs)
{
	size_t i, k;

	for (i = 0; i < fs->n; i++)
		for (k = 0; fs->v[i].pid == p->pid && k < fs->v[i].nr_says; k++)
			if (fs->v[i].says[k].code == M_GRAPH_CACHE)
				return true;
	return false;
}

void judged__judge_count(const struct model_proc *p, const struct judged *j, struct findings *fs)
{
	struct llama_conf conf;
	struct finding *f;
	double pts = j->n - j->base, lo, hi, span;
	bool swings, before_sweep;
	size_t i;

	if (j->r.shape == SHAPE_UNKNOWN || !j->n || cited(p, fs))
		return;
	lo = lowest(j);
	hi = highest(j);
	/* no trend, or a ceiling, but the last far under the most: made and
	 * let go (ggml-cuda's sweep of graphs unused for 10 s), which neither
	 * "steady" nor "levelled off" says */
	swings = (j->r.shape == SHAPE_STEADY || j->r.shape == SHAPE_SETTLED ||
		  j->r.shape == SHAPE_BOUNDED) &&
		 hi - j->y[j->n - 1] >= fmax(SWING_MIN, hi / 2);
	/* read before the swings' jump to hold:, which says it */
	llama_conf__read(p, &conf);
	span = j->n > 1 ? (j->ts[j->n - 1] - j->ts[0]) / 1e9 : 0;
	before_sweep = j->r.shape == SHAPE_LEAK && j->c.kind == MODEL_KIND_GRAPH_EXEC &&
		       conf.server && span < GRAPH_SWEEP_S;
	f = judged__finding(fs,
			    swings	 ? F_BOUNDED :
			    before_sweep ? F_GROWING :
					   judged__kind(j),
			    p, j);
	if (!f)
		return;
	if (before_sweep) {
		f->confidence = fmin(f->confidence, 0.5);
		SAY(f, M_COUNT_BEFORE_SWEEP, .where = j->c.text,
		    .slope = judged__per_unit(j, j->r.slope), .first = j->y[0],
		    .last = j->y[j->n - 1], .points = pts, .pr = j->per_request, .span = span,
		    .needed = GRAPH_SWEEP_S);
		goto hold;
	}
	if (swings) {
		for (i = 0; i < j->n && j->y[i] < hi; i++)
			;
		f->ceiling = hi;
		SAY(f, M_COUNT_SWINGS, .where = j->c.text, .hi = hi,
		    .hi_point = judged__req_no(j, i), .last = j->y[j->n - 1], .lo = lo,
		    .points = pts, .pr = j->per_request);
		goto hold;
	}
	switch (j->r.shape) {
	case SHAPE_LEAK:
		SAY(f, M_COUNT_LEAK, .where = j->c.text, .slope = judged__per_unit(j, j->r.slope),
		    .first = j->y[0], .last = j->y[j->n - 1], .points = pts, .pr = j->per_request,
		    .base = j->base);
		break;
	case SHAPE_GROWING:
		SAY(f, M_COUNT_GROWING, .where = j->c.text,
		    .slope = judged__per_unit(j, j->r.slope), .first = j->y[0],
		    .last = j->y[j->n - 1], .points = pts, .pr = j->per_request);
		break;
	case SHAPE_BOUNDED:
	case SHAPE_SETTLED:
		f->ceiling = j->r.ceiling;
		SAY(f, M_COUNT_LEVELS, .where = j->c.text, .first = j->y[0],
		    .ceiling = j->r.ceiling, .lo = lo, .hi = hi,
		    .point = judged__req_no(j, j->r.change_at), .points = pts,
		    .pr = j->per_request);
		break;
	case SHAPE_STEP:
		SAY(f, M_COUNT_STEP, .where = j->c.text, .step = j->r.step_size, .first = j->y[0],
		    .last = j->y[j->n - 1], .point = judged__req_no(j, j->r.change_at),
		    .pr = j->per_request);
		break;
	default:
		SAY(f, M_COUNT_STEADY, .where = j->c.text, .lo = lo, .hi = hi, .points = pts,
		    .pr = j->per_request);
		return;
	}
hold:
	/* what a graph executable holds is in no allocation call */
	if (j->c.kind == MODEL_KIND_GRAPH_EXEC)
		SAY(f, M_GRAPHS_HOLD, .llama = conf.server, .graphs_off = conf.cuda_graphs_off);
}

/* a series with too few points for a shape: say so, with what would do */
void judged__not_judged(const struct model *m, const struct model_proc *p, const struct judged *j,
			struct findings *fs)
{
	struct finding *f = findings__add(fs, F_NOT_JUDGED, p->pid);
	size_t samples = j->c.s ? j->c.s->n : 0;
	__u64 to = p->exited ? p->exit_ts : m->last_ts;
	double span = samples && to > j->c.s->p[0].ts ? (to - j->c.s->p[0].ts) / 1e9 : 0;

	if (!f)
		return;
	snprintf(f->category, sizeof(f->category), "%s", j->c.name);
	snprintf(f->where, sizeof(f->where), "%s", j->c.text);
	f->counts = j->c.cls == CAT_COUNT;
	f->points = j->n;
	/* a driver counter is read once an interval; others change by events,
	 * and are judged at requests' ends or once an interval */
	if (j->c.cls == CAT_DRIVER)
		finding__num(f, "samples", samples);
	finding__num(f, "requests", p->nr_reqs);
	SAY(f, M_NOT_JUDGED, .where = j->c.text, .samples = samples, .span = span,
	    .requests = p->nr_reqs, .needed = MIN_POINTS, .interval = m->interval_ms / 1000.0,
	    .driver = j->c.cls == CAT_DRIVER);
}
