// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* How often the shape verdicts are wrong, and how soon a leak is found.
 *   bench/shapes [SERIES]   (default 1000 of each kind, length and scale)
 * Controls at 10, 30, 100 and 1000 requests, at three scales (a 100 KiB
 * level, an 8 GiB one, and a 100 MiB one in steps of 256 KiB, whose
 * samples often repeat exactly, as a real process's RSS does between
 * requests that touch nothing new): the share called a leak, a cache, or growing
 * (too early to tell). Then leaks of 1%, 0.1% and 0.01% of the level per
 * request under each noise: the share found by 10, 30, 100 and 1000
 * requests, and the median request at which they were first called a leak.
 * A change under 1% of the level is not material (the footprint is the
 * level here). Last, a reliability table for each verdict: how often one
 * stated with a given confidence was right. Deterministic: the same seed
 * every run. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "analysis/analyze.h"
#include "series.h"

#define MATERIAL 0.01

/* Reliability: every judged series (each control, and each leak series at
 * every checkpoint of the detection part, found there or not) gives one
 * (stated confidence, verdict, truth). A verdict is right when it names
 * what series.c put in the points judged:
 *   LEAK     only on a leak whose growth is in the judged points (a leak
 *            starting late, judged on its first 501 points or fewer, is
 *            i.i.d. noise there: a LEAK verdict on it is wrong).
 *   BOUNDED  only on the fixed-size cache (settling growth also levels
 *            off, but the verdict is "a cache, not settling").
 *   SETTLED  only on settling growth, 1 - exp(-i / tau).
 *   STEP     only on the warm-up step (its jump, 5% to 100% of the level,
 *            is always material).
 *   STEADY   on i.i.d. noise, AR(1) and the random walk (none drifts), and
 *            on a leak whose growth in the judged points is still under
 *            material (analyze.h: "a change smaller than material is
 *            steady"), a late leak before it starts included.
 * Anything else is wrong: a cache called settled or a step, a warm-up
 * called a cache, a walk called a step, a small leak called a cache. The
 * "loose" share also takes STEP, SETTLED and BOUNDED as one answer (it
 * rose, then stayed level: not a leak) on the warm-up, settling and cache
 * series. GROWING ("too early to tell") and UNKNOWN (too few points) claim
 * nothing: counted, not tabled. */
enum truth { TRUE_STEADY, TRUE_STEP, TRUE_SETTLED, TRUE_BOUNDED, TRUE_LEAK, TRUE_SMALL_LEAK };

#define SHAPES 7 /* enum shape, SHAPE_UNKNOWN..SHAPE_SETTLED */
#define BINS 5
#define FEW 50 /* a bin of fewer is not flagged */
static const double bin_lo[BINS] = { 0, 0.5, 0.7, 0.9, 0.99 };
static const char *const bin_name[BINS] = { "[0, 0.5)", "[0.5, 0.7)", "[0.7, 0.9)", "[0.9, 0.99)",
					    "[0.99, 1]" };

static struct {
	long n[SHAPES][BINS], right[SHAPES][BINS], loose[SHAPES][BINS];
	double sum[SHAPES][BINS];
	long growing, unknown;
} rel;

static enum truth truth_of(int kind)
{
	switch (kind) {
	case SER_WARMUP:
		return TRUE_STEP;
	case SER_SETTLE:
		return TRUE_SETTLED;
	case SER_CACHE:
		return TRUE_BOUNDED;
	default:
		return TRUE_STEADY;
	}
}

/* a leak series, made 1000 long, judged on its first n points: what they
 * hold (series.c: a late leak's point i has grown by i - 500 from 501 on) */
static enum truth leak_truth(int kind, size_t n, double rate)
{
	double grown = kind == SER_LEAK_LATE ? (n > 501 ? n - 501.0 : 0) : n - 1.0;

	return grown <= 0 ? TRUE_STEADY : rate * grown < MATERIAL ? TRUE_SMALL_LEAK : TRUE_LEAK;
}

static bool rose_then_level(enum truth t)
{
	return t == TRUE_STEP || t == TRUE_SETTLED || t == TRUE_BOUNDED;
}

static void judged(const struct shape_result *r, enum truth t)
{
	static const enum truth says[SHAPES] = {
		[SHAPE_STEADY] = TRUE_STEADY,	[SHAPE_LEAK] = TRUE_LEAK,
		[SHAPE_BOUNDED] = TRUE_BOUNDED, [SHAPE_STEP] = TRUE_STEP,
		[SHAPE_SETTLED] = TRUE_SETTLED,
	};
	int s = r->shape, b;
	bool right;

	if (s == SHAPE_GROWING) {
		rel.growing++;
		return;
	}
	if (s <= SHAPE_UNKNOWN || s >= SHAPES) {
		rel.unknown++;
		return;
	}
	for (b = BINS - 1; b > 0 && !(r->confidence >= bin_lo[b]); b--)
		;
	right = says[s] == t ||
		(t == TRUE_SMALL_LEAK && (says[s] == TRUE_LEAK || says[s] == TRUE_STEADY));
	rel.n[s][b]++;
	rel.sum[s][b] += r->confidence;
	rel.right[s][b] += right;
	rel.loose[s][b] += right || (rose_then_level(says[s]) && rose_then_level(t));
}

static void reliability(void)
{
	static const int shown[] = { SHAPE_LEAK, SHAPE_BOUNDED, SHAPE_SETTLED, SHAPE_STEP,
				     SHAPE_STEADY };
	static const char *const right_on[] = {
		"right only on a leak",
		"right only on the fixed-size cache",
		"right only on settling growth",
		"right only on the warm-up step",
		"right on noise, AR(1), the random walk, and a leak still under 1%",
	};
	long all = rel.growing + rel.unknown, below = 0;
	size_t v;
	int s, b;

	for (s = 0; s < SHAPES; s++)
		for (b = 0; b < BINS; b++)
			all += rel.n[s][b];
	printf("\nReliability: %ld judged series (every control; every leak series at "
	       "every checkpoint). Growing (too early to tell), not tabled: %ld; unknown: "
	       "%ld. A bin is below when its share right is under its lower edge, "
	       "in a bin of %d series or more.\n",
	       all, rel.growing, rel.unknown, FEW);
	for (v = 0; v < sizeof(shown) / sizeof(shown[0]); v++) {
		s = shown[v];
		printf("\n%s verdicts (%s)\n\n| confidence | judged | mean stated | right | "
		       "share right | at least | loose | |\n|---|---|---|---|---|---|---|---|\n",
		       analyze__shape_name(s), right_on[v]);
		for (b = 0; b < BINS; b++) {
			long n = rel.n[s][b];
			double share = n ? (double)rel.right[s][b] / n : 0;

			if (!n) {
				printf("| %s | 0 | | | | %g | | |\n", bin_name[b], bin_lo[b]);
				continue;
			}
			printf("| %s | %ld | %.3f | %ld | %.1f%% | %g | %.1f%% | %s |\n",
			       bin_name[b], n, rel.sum[s][b] / n, rel.right[s][b], 100 * share,
			       bin_lo[b], 100.0 * rel.loose[s][b] / n,
			       share >= bin_lo[b] ? "" :
			       n >= FEW		  ? "**below**" :
						    "below (few)");
			below += share < bin_lo[b] && n >= FEW;
		}
	}
	printf("\nBins below their lower edge: %ld\n", below);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static void controls(long count)
{
	static const size_t lens[] = { 10, 30, 100, 1000 };
	static const double scales[] = { 100 * 1024.0, 8.0 * (1 << 30), 100.0 * (1 << 20) };
	static const double quanta[] = { 0, 0, 256 << 10 };
	static const char *const names[] = { "100 KiB", "8 GiB", "100 MiB in 256 KiB" };
	struct series_rng rng = { 0x9e3779b97f4a7c15ull };
	double *y = malloc(1000 * sizeof(*y));
	struct shape_result r;
	long i, c[7];
	size_t l, s, j;
	int k;

	printf("| control | requests | scale | leak | cache | growing (too early) | settled | "
	       "step | steady |\n|---|---|---|---|---|---|---|---|---|\n");
	for (k = 0; k < SER_CONTROLS; k++)
		for (l = 0; l < 4; l++)
			for (s = 0; s < 3; s++) {
				for (i = 0; i < 7; i++)
					c[i] = 0;
				for (i = 0; i < count; i++) {
					series__make(k, lens[l], scales[s], 0, &rng, y);
					for (j = 0; quanta[s] && j < lens[l]; j++)
						y[j] = round(y[j] / quanta[s]) * quanta[s];
					analyze__shape(y, lens[l], MATERIAL * scales[s], &r);
					c[r.shape]++;
					judged(&r, truth_of(k));
				}
				printf("| %s | %zu | %s | %.1f%% | %.1f%% | %.1f%% | %.1f%% | "
				       "%.1f%% | %.1f%% |\n",
				       series__name(k), lens[l], names[s],
				       100.0 * c[SHAPE_LEAK] / count,
				       100.0 * c[SHAPE_BOUNDED] / count,
				       100.0 * c[SHAPE_GROWING] / count,
				       100.0 * c[SHAPE_SETTLED] / count,
				       100.0 * c[SHAPE_STEP] / count,
				       100.0 * c[SHAPE_STEADY] / count);
			}
	free(y);
}

static void detection(long count)
{
	static const size_t checks[] = { 4,   5,   6,	8,   10,  13,  16,  20,	 25,
					 30,  40,  50,	65,  80,  100, 130, 160, 200,
					 250, 300, 400, 500, 650, 800, 1000 };
	static const double rates[] = { 0.01, 0.001, 0.0001 };
	const size_t nc = sizeof(checks) / sizeof(checks[0]);
	struct series_rng rng = { 0x2545f4914f6cdd1dull };
	double *y = malloc(1000 * sizeof(*y));
	size_t *first = malloc(count * sizeof(*first)), j;
	struct shape_result r;
	long i, by[4];
	int k, q;

	printf("\n| leak | per request | found by 10 | by 30 | by 100 | by 1000 | median first "
	       "call |\n|---|---|---|---|---|---|---|\n");
	for (k = SER_LEAK_IID; k < SER_NR; k++)
		for (q = 0; q < 3; q++) {
			by[0] = by[1] = by[2] = by[3] = 0;
			for (i = 0; i < count; i++) {
				series__make(k, 1000, 1 << 30, rates[q], &rng, y);
				first[i] = (size_t)-1;
				/* every checkpoint, for the reliability tables: past the
				 * first call too (analyze__shape draws nothing) */
				for (j = 0; j < nc; j++) {
					analyze__shape(y, checks[j], MATERIAL * (1 << 30), &r);
					judged(&r, leak_truth(k, checks[j], rates[q]));
					if (r.shape == SHAPE_LEAK && first[i] == (size_t)-1)
						first[i] = checks[j];
				}
				by[0] += first[i] <= 10;
				by[1] += first[i] <= 30;
				by[2] += first[i] <= 100;
				by[3] += first[i] <= 1000;
			}
			qsort(first, count, sizeof(*first), cmp_size);
			printf("| %s | %g%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | ",
			       series__name(k), rates[q] * 100, 100.0 * by[0] / count,
			       100.0 * by[1] / count, 100.0 * by[2] / count, 100.0 * by[3] / count);
			if (first[count / 2] == (size_t)-1)
				printf("not by 1000 |\n");
			else
				printf("%zu |\n", first[count / 2]);
		}
	free(first);
	free(y);
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 1000;

	if (count < 1) {
		fprintf(stderr, "usage: shapes [SERIES]  (series of each kind, default 1000)\n");
		return 2;
	}
	controls(count);
	detection(count);
	reliability();
	return 0;
}
