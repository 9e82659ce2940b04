/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The shape of a memory level over requests (or time): steady, a one-off
 * step, growth then a plateau, growth with no end in sight, or growth not
 * yet past doubt. Judged with scale-free statistics that hold when the
 * level wanders on its own (a random walk, autocorrelated noise): drift is
 * the t statistic of block means' differences; the only bytes are the
 * caller's "material" change, below which any shape is steady. */
#ifndef GMT_ANALYZE_H
#define GMT_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>

enum shape {
	SHAPE_UNKNOWN = 0, /* too few points to say */
	SHAPE_STEADY,
	SHAPE_LEAK,    /* grows at a steady rate, no sign of a ceiling */
	SHAPE_BOUNDED, /* grows, then stays at a ceiling */
	SHAPE_STEP,    /* one jump between two flat stretches */
	SHAPE_GROWING, /* rising, but too early to tell a leak from the rest */
	SHAPE_SETTLED, /* grew, slower and slower, then level: not a cache */
};

struct shape_result {
	enum shape shape;
	double slope, slope_lo, slope_hi; /* per point, with its 95% interval */
	double t;			  /* the drift's t statistic */
	double slope_early, slope_recent; /* per point, in each half */
	bool slowing;			  /* GROWING: the second half rises slower */
	size_t more_points;		  /* GROWING: about how many more would decide */
	double noise;			  /* robust sd of the steps' scatter */
	double step_mean, step_cv;	  /* the per-point change: mean, spread/mean */
	double ceiling;			  /* BOUNDED, SETTLED: the plateau's level */
	size_t change_at;		  /* plateau start; STEP: first point after */
	double step_size;		  /* STEP: the jump */
	double confidence;		  /* 0..1 */
};

const char *analyze__shape_name(enum shape s);
/* the shape of y[0..n) (one value per request, in order); a change
 * smaller than material (in y's units) is steady */
void analyze__shape(const double *y, size_t n, double material, struct shape_result *r);
/* the median of v[0..n), which it sorts */
double analyze__median(double *v, size_t n);
/* Theil-Sen slope of y over its index, with the rank-based 95% interval */
double analyze__theil_sen(const double *y, size_t n, double *lo, double *hi);
/* the same with x given (points at uneven places: requests with a sample) */
double analyze__theil_sen_xy(const double *x, const double *y, size_t n, double *lo, double *hi);
/* Kendall's tau-b of x and y, and its z score under no association */
double analyze__kendall(const double *x, const double *y, size_t n, double *z);
/* points until a growing level reaches limit; -1 when it does not grow */
double analyze__points_to(const struct shape_result *r, double current, double limit);

#endif
