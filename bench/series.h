/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Generated memory levels, one value per request: the controls a verdict
 * must not call a leak or a cache (noise, AR(1), a random walk, a warm-up
 * step, growth that settles, a fixed-size cache) and leaks under each kind
 * of noise. Shared by bench/shapes.c and the unit tests. */
#ifndef GMT_SERIES_H
#define GMT_SERIES_H

#include <stddef.h>
#include <stdint.h>

enum series_kind {
	SER_IID,     /* the level, with independent noise */
	SER_AR1,     /* noise that remembers: phi 0.3..0.97 */
	SER_WALK,    /* a random walk with no drift */
	SER_WARMUP,  /* flat, one jump in the first quarter, flat */
	SER_SETTLE,  /* rises as 1 - exp(-i / tau), tau n/20..n/4 */
	SER_CACHE,   /* fixed-size entries until full (n/5..n/2), then level */
	SER_CONTROLS,
	SER_LEAK_IID = SER_CONTROLS, /* a leak under each noise */
	SER_LEAK_AR1,
	SER_LEAK_WALK,
	SER_LEAK_LATE, /* flat for the first half, then a leak (iid noise) */
	SER_NR,
};

struct series_rng {
	uint64_t s;
};

const char *series__name(enum series_kind k);
/* y[0..n) of kind k around level; rate: a leak's growth per request, as
 * a fraction of the level (leak kinds only) */
void series__make(enum series_kind k, size_t n, double level, double rate,
		  struct series_rng *rng, double *y);

#endif
