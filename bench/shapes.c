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
 * level here). Deterministic: the same seed every run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "analysis/analyze.h"
#include "series.h"

#define MATERIAL 0.01

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
				for (j = 0; j < nc; j++) {
					analyze__shape(y, checks[j], MATERIAL * (1 << 30), &r);
					if (r.shape == SHAPE_LEAK) {
						first[i] = checks[j];
						break;
					}
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
	return 0;
}
