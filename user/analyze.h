/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The shape of a memory level over requests (or time): steady, linear
 * without bound, linear then a plateau, a one-off step. Judged with robust,
 * scale-free statistics (Theil-Sen slopes with their rank confidence
 * interval, noise from the median absolute deviation of the steps), never
 * with thresholds in bytes. The first piece of the verdicts issue. */
#ifndef GMT_ANALYZE_H
#define GMT_ANALYZE_H

#include <stddef.h>

enum shape {
	SHAPE_UNKNOWN = 0, /* too few points to say */
	SHAPE_STEADY,
	SHAPE_LEAK,    /* grows at a steady rate, no sign of a ceiling */
	SHAPE_BOUNDED, /* grows, then stays at a ceiling */
	SHAPE_STEP,    /* one jump between two flat stretches */
};

struct shape_result {
	enum shape shape;
	double slope, slope_lo, slope_hi; /* per point, with its 95% interval */
	double noise;			  /* robust sd of the steps' scatter */
	double step_mean, step_cv;	  /* the per-point change: mean, spread/mean */
	double ceiling;			  /* BOUNDED: the plateau's level */
	size_t change_at;		  /* BOUNDED: plateau start; STEP: first point after */
	double step_size;		  /* STEP: the jump */
	double confidence;		  /* 0..1 */
};

const char *analyze__shape_name(enum shape s);
/* the shape of y[0..n) (one value per request, in order) */
void analyze__shape(const double *y, size_t n, struct shape_result *r);
/* Theil-Sen slope of y over its index, with the rank-based 95% interval */
double analyze__theil_sen(const double *y, size_t n, double *lo, double *hi);
/* the same with x given (points at uneven places: requests with a sample) */
double analyze__theil_sen_xy(const double *x, const double *y, size_t n, double *lo, double *hi);
/* Kendall's tau-b of x and y, and its z score under no association */
double analyze__kendall(const double *x, const double *y, size_t n, double *z);
/* points until a growing level reaches limit; -1 when it does not grow */
double analyze__points_to(const struct shape_result *r, double current, double limit);

#endif
