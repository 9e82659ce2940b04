// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include "series.h"

const char *series__name(enum series_kind k)
{
	static const char *const names[SER_NR] = {
		"i.i.d. noise",	    "AR(1)",	     "random walk", "warm-up step",
		"settling growth",  "fixed-size cache", "leak, i.i.d. noise",
		"leak, AR(1) noise", "leak, random walk", "leak starting late",
	};

	return k < SER_NR ? names[k] : "?";
}

/* xorshift64*: uniform in (0, 1) */
static double uniform(struct series_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return ((r->s * 2685821657736338717ull >> 11) + 0.5) / 9007199254740992.0;
}

static double between(struct series_rng *r, double a, double b)
{
	return a + (b - a) * uniform(r);
}

/* standard normal, Box-Muller */
static double normal(struct series_rng *r)
{
	return sqrt(-2 * log(uniform(r))) * cos(2 * M_PI * uniform(r));
}

/* noise as a fraction of the level: 0.1% to 3%, spread on a log scale */
static double some_noise(struct series_rng *r)
{
	return exp(between(r, log(0.001), log(0.03)));
}

void series__make(enum series_kind k, size_t n, double level, double rate,
		  struct series_rng *rng, double *y)
{
	double sd = some_noise(rng) * level, u = 0, phi, jump, tau, entry, amp;
	size_t i, at;

	switch (k) {
	case SER_IID:
		for (i = 0; i < n; i++)
			y[i] = level + sd * normal(rng);
		break;
	case SER_AR1:
	case SER_LEAK_AR1:
		phi = k == SER_AR1 ? between(rng, 0.3, 0.97) : 0.8;
		if (k == SER_LEAK_AR1)
			sd = 0.01 * level;
		u = sd * normal(rng);
		for (i = 0; i < n; i++) {
			y[i] = level + u + (k == SER_LEAK_AR1 ? rate * level * i : 0);
			u = phi * u + sd * sqrt(1 - phi * phi) * normal(rng);
		}
		break;
	case SER_WALK:
	case SER_LEAK_WALK:
		/* a walk's steps: its noise spread over 30 steps */
		sd = k == SER_WALK ? sd / sqrt(30) * 3 : 0.001 * level;
		for (i = 0; i < n; i++) {
			y[i] = level + u + (k == SER_LEAK_WALK ? rate * level * i : 0);
			u += sd * normal(rng);
		}
		break;
	case SER_WARMUP:
		at = 1 + (size_t)(uniform(rng) * (n / 4 > 1 ? n / 4 : 1));
		jump = between(rng, 0.05, 1) * level;
		for (i = 0; i < n; i++)
			y[i] = level + (i >= at ? jump : 0) + sd * normal(rng);
		break;
	case SER_SETTLE:
		tau = between(rng, n / 20.0, n / 4.0);
		amp = between(rng, 0.05, 0.5) * level;
		for (i = 0; i < n; i++)
			y[i] = level + amp * (1 - exp(-(double)i / tau)) + sd * normal(rng);
		break;
	case SER_CACHE:
		at = (size_t)between(rng, n / 5.0, n / 2.0);
		if (at < 2)
			at = 2;
		amp = between(rng, 0.05, 0.5) * level;
		entry = amp / at;
		u = 0;
		for (i = 0; i < n; i++) {
			/* entries a tenth apart in size; once full, one replaces another */
			if (i && i <= at)
				u += entry * (1 + 0.1 * normal(rng));
			else if (i > at)
				u += 0.1 * entry * normal(rng) / sqrt(2) - 0.05 * (u - amp);
			y[i] = level + u + sd * normal(rng);
		}
		break;
	case SER_LEAK_IID:
	case SER_LEAK_LATE:
		sd = 0.01 * level;
		for (i = 0; i < n; i++) {
			double grown = k == SER_LEAK_LATE ? (i > n / 2 ? i - n / 2 : 0) : i;

			y[i] = level + rate * level * grown + sd * normal(rng);
		}
		break;
	default:
		for (i = 0; i < n; i++)
			y[i] = level;
		break;
	}
}
