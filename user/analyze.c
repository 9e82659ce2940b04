// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analyze.h"

#define MAX_POINTS 512 /* longer series are averaged into this many bins */
#define Z95 1.96
/* a change is real when it is this many noise deviations: statistics, not
 * byte thresholds, so any scale of memory is judged alike */
#define SIGNIFICANT 4.0
/* a plateau may still drift, at a tenth of the rise's rate at most: a
 * cache that evicts entries of slightly different sizes wanders */
#define LEVELLED 0.1

const char *analyze__shape_name(enum shape s)
{
	static const char *const names[] = { "unknown", "steady", "leak", "bounded_cache", "step" };

	return s <= SHAPE_STEP ? names[s] : "unknown";
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* slopes between every pair, sorted; *np their number; NULL if none */
static double *pair_slopes(const double *y, size_t n, size_t *np)
{
	size_t i, j, k = 0, N = n * (n - 1) / 2;
	double *s;

	*np = 0;
	if (n < 2 || !(s = malloc(N * sizeof(*s))))
		return NULL;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			s[k++] = (y[j] - y[i]) / (double)(j - i);
	qsort(s, k, sizeof(*s), cmp_double);
	*np = k;
	return s;
}

static double theil_sen_small(const double *y, size_t n, double *lo, double *hi, double *pos)
{
	size_t N, ilo, ihi, i;
	double *s = pair_slopes(y, n, &N), b, c;

	if (!s) {
		*lo = *hi = 0;
		if (pos)
			*pos = 0.5;
		return 0;
	}
	b = N % 2 ? s[N / 2] : (s[N / 2 - 1] + s[N / 2]) / 2;
	/* the distribution-free interval from Kendall's statistic */
	c = Z95 * sqrt(n * (n - 1.0) * (2 * n + 5.0) / 18);
	ilo = (N - c) / 2 > 0 ? (size_t)((N - c) / 2) : 0;
	ihi = (N + c) / 2 + 1 < N ? (size_t)((N + c) / 2 + 1) : N - 1;
	*lo = s[ilo];
	*hi = s[ihi];
	if (pos) {
		for (i = 0; i < N && s[i] <= 0; i++)
			;
		*pos = (double)(N - i) / N;
	}
	free(s);
	return b;
}

/* y[0..n) as the means of MAX_POINTS equal bins; returns the points a bin */
static double bin_means(const double *y, size_t n, double *bins)
{
	double w = (double)n / MAX_POINTS;
	size_t i;

	for (i = 0; i < MAX_POINTS; i++) {
		size_t a = i * w, e = (i + 1) * w, k;
		double sum = 0;

		for (k = a; k < e; k++)
			sum += y[k];
		bins[i] = e > a ? sum / (e - a) : y[a];
	}
	return w;
}

/* long series: means of equal bins, the slope scaled back per point */
static double theil_sen_pos(const double *y, size_t n, double *lo, double *hi, double *pos)
{
	double bins[MAX_POINTS], w, b;
	size_t m;

	if (n <= MAX_POINTS)
		return theil_sen_small(y, n, lo, hi, pos);
	m = MAX_POINTS;
	w = bin_means(y, n, bins);
	b = theil_sen_small(bins, m, lo, hi, pos) / w;
	*lo /= w;
	*hi /= w;
	return b;
}

double analyze__theil_sen(const double *y, size_t n, double *lo, double *hi)
{
	return theil_sen_pos(y, n, lo, hi, NULL);
}

/* robust sd of one point's noise, from the scatter of the steps */
static double noise_of(const double *y, size_t n, double *step_mean, double *step_cv)
{
	double *d = malloc((n - 1) * sizeof(*d)), *a, m, mad, sum = 0, sq = 0, scale = 0;
	size_t i;

	*step_mean = *step_cv = 0;
	if (!d)
		return 0;
	for (i = 1; i < n; i++) {
		d[i - 1] = y[i] - y[i - 1];
		sum += d[i - 1];
		sq += d[i - 1] * d[i - 1];
		if (fabs(y[i]) > scale)
			scale = fabs(y[i]);
	}
	*step_mean = sum / (n - 1);
	if (*step_mean)
		*step_cv = sqrt(fmax(sq / (n - 1) - *step_mean * *step_mean, 0)) / fabs(*step_mean);
	a = malloc((n - 1) * sizeof(*a));
	if (!a) {
		free(d);
		return 0;
	}
	memcpy(a, d, (n - 1) * sizeof(*a));
	m = median(a, n - 1);
	for (i = 0; i < n - 1; i++)
		a[i] = fabs(d[i] - m);
	mad = median(a, n - 1);
	free(a);
	free(d);
	/* a step is the difference of two noisy points: sqrt(2) the noise;
	 * perfectly regular data gets a tiny noise, not zero */
	return fmax(1.4826 * mad / sqrt(2), 1e-9 * scale + 1e-12);
}

/* least squares: a line over [a, b) and its squared error */
static double line_sse(const double *y, size_t a, size_t b, double *slope)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, n = b - a, k, c, e = 0;
	size_t i;

	for (i = a; i < b; i++) {
		sx += i;
		sy += y[i];
		sxx += (double)i * i;
		sxy += i * y[i];
	}
	k = n * sxx - sx * sx ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : 0;
	c = (sy - k * sx) / n;
	for (i = a; i < b; i++)
		e += (y[i] - k * i - c) * (y[i] - k * i - c);
	if (slope)
		*slope = k;
	return e;
}

static double const_sse(const double *y, size_t a, size_t b, double *mean)
{
	double s = 0, e = 0, m;
	size_t i;

	for (i = a; i < b; i++)
		s += y[i];
	m = s / (b - a);
	for (i = a; i < b; i++)
		e += (y[i] - m) * (y[i] - m);
	if (mean)
		*mean = m;
	return e;
}

/* a stretch is flat when its slope's interval holds 0, or the change over
 * it stays within the noise */
static bool flat(const double *y, size_t n, double noise)
{
	double lo, hi, b = analyze__theil_sen(y, n, &lo, &hi);

	return (lo <= 0 && hi >= 0) || fabs(b) * n < SIGNIFICANT * noise;
}

/* flat, a jump, flat */
static bool find_step(const double *y, size_t n, double noise, struct shape_result *r)
{
	double best = INFINITY, total = const_sse(y, 0, n, NULL), ml, mr, e;
	size_t k, at = 0;

	/* one point before the jump will do: the level before the first request */
	for (k = 1; k + 2 <= n; k++) {
		e = const_sse(y, 0, k, NULL) + const_sse(y, k, n, NULL);
		if (e < best) {
			best = e;
			at = k;
		}
	}
	if (!at)
		return false;
	const_sse(y, 0, at, &ml);
	const_sse(y, at, n, &mr);
	if (fabs(mr - ml) < 2 * SIGNIFICANT * noise || !flat(y, at, noise) ||
	    !flat(y + at, n - at, noise) || best > 0.25 * total)
		return false;
	r->shape = SHAPE_STEP;
	r->change_at = at;
	r->step_size = mr - ml;
	r->confidence = total > 0 ? 1 - best / total : 1;
	return true;
}

/* rising, then a plateau of at least three points */
static bool find_plateau(const double *y, size_t n, double noise, struct shape_result *r)
{
	double best = INFINITY, lin = line_sse(y, 0, n, NULL), lo, hi, b, rise, e, ceiling;
	size_t k, at = 0;

	/* a rise of one step is a step: a cache grows over two at least */
	for (k = 3; k + 3 <= n; k++) {
		e = line_sse(y, 0, k, NULL) + const_sse(y, k, n, NULL);
		if (e < best) {
			best = e;
			at = k;
		}
	}
	if (!at || best > 0.5 * lin)
		return false;
	b = analyze__theil_sen(y, at + 1, &lo, &hi);
	const_sse(y, at, n, &ceiling);
	rise = ceiling - y[0];
	if (b <= 0 || rise < SIGNIFICANT * noise)
		return false;
	if (!flat(y + at, n - at, noise) &&
	    fabs(analyze__theil_sen(y + at, n - at, &lo, &hi)) > LEVELLED * b)
		return false;
	analyze__theil_sen(y, at + 1, &lo, &hi);
	if (at >= 3 && lo <= 0)
		return false; /* the rise itself is not clear */
	r->shape = SHAPE_BOUNDED;
	r->change_at = at;
	r->ceiling = ceiling;
	r->confidence = lin > 0 ? 1 - best / lin : 1;
	return true;
}

static void shape_of(const double *y, size_t n, struct shape_result *r);

void analyze__shape(const double *y, size_t n, struct shape_result *r)
{
	double bins[MAX_POINTS], w;

	if (n <= MAX_POINTS) {
		shape_of(y, n, r);
		return;
	}
	/* the searches for a step or a plateau are quadratic: judge the means
	 * of equal bins, and give places and slopes back in points */
	w = bin_means(y, n, bins);
	shape_of(bins, MAX_POINTS, r);
	r->slope /= w;
	r->slope_lo /= w;
	r->slope_hi /= w;
	r->step_mean /= w;
	r->change_at = (size_t)(r->change_at * w);
}

static void shape_of(const double *y, size_t n, struct shape_result *r)
{
	double pos, tail_lo, tail_hi, tail;

	memset(r, 0, sizeof(*r));
	if (n < 4)
		return; /* SHAPE_UNKNOWN */
	r->noise = noise_of(y, n, &r->step_mean, &r->step_cv);
	r->slope = theil_sen_pos(y, n, &r->slope_lo, &r->slope_hi, &pos);
	if (find_step(y, n, r->noise, r) || find_plateau(y, n, r->noise, r))
		return;
	tail = analyze__theil_sen(y + n - n / 3, n / 3, &tail_lo, &tail_hi);
	if (r->slope_lo > 0 && r->slope * (n - 1) >= SIGNIFICANT * r->noise &&
	    (n / 3 < 3 || tail >= 0.5 * r->slope)) {
		r->shape = SHAPE_LEAK;
		r->confidence = fmin(1, fmax(0, 2 * (pos - 0.5)));
		return;
	}
	if (r->slope_lo > 0 && r->slope * (n - 1) >= SIGNIFICANT * r->noise && n / 3 >= 3 &&
	    fabs(tail) <= LEVELLED * r->slope) {
		/* it grew, and the last third has levelled off */
		r->shape = SHAPE_BOUNDED;
		r->change_at = n - n / 3;
		const_sse(y, r->change_at, n, &r->ceiling);
		r->confidence = fmin(1, fmax(0, 1 - fabs(tail) / r->slope)) * 0.8;
		return;
	}
	r->shape = SHAPE_STEADY;
	r->confidence = fmin(1, fmax(0, 1 - fabs(2 * (pos - 0.5))));
}

double analyze__points_to(const struct shape_result *r, double current, double limit)
{
	if (r->shape != SHAPE_LEAK || r->slope <= 0 || limit <= current)
		return -1;
	return (limit - current) / r->slope;
}

double analyze__kendall(const double *x, const double *y, size_t n, double *z)
{
	double c = 0, d = 0, tx = 0, ty = 0, n0, tau;
	size_t i, j;

	*z = 0;
	if (n < 3)
		return 0;
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			double a = (x[j] - x[i]) * (y[j] - y[i]);

			if (a > 0)
				c++;
			else if (a < 0)
				d++;
			else if (x[j] == x[i] && y[j] != y[i])
				tx++;
			else if (y[j] == y[i] && x[j] != x[i])
				ty++;
		}
	n0 = n * (n - 1) / 2.0;
	if ((c + d + tx) * (c + d + ty) <= 0)
		return 0;
	tau = (c - d) / sqrt((c + d + tx) * (c + d + ty));
	/* the normal approximation of tau's spread with no association */
	*z = 3 * tau * sqrt(n0 * 2) / sqrt(2 * (2 * n + 5.0));
	return tau;
}

double analyze__theil_sen_xy(const double *x, const double *y, size_t n, double *lo, double *hi)
{
	double bx[MAX_POINTS], by[MAX_POINTS], *s, b, c, w;
	size_t i, j, k = 0, N, m = n, ilo, ihi;

	*lo = *hi = 0;
	if (n > MAX_POINTS) { /* means of equal bins, in x and in y */
		m = MAX_POINTS;
		w = (double)n / m;
		for (i = 0; i < m; i++) {
			size_t a = i * w, e = (i + 1) * w;

			bx[i] = by[i] = 0;
			for (j = a; j < e; j++) {
				bx[i] += x[j];
				by[i] += y[j];
			}
			bx[i] /= e - a;
			by[i] /= e - a;
		}
		x = bx;
		y = by;
	}
	N = m * (m - 1) / 2;
	if (m < 2 || !(s = malloc(N * sizeof(*s))))
		return 0;
	for (i = 0; i < m; i++)
		for (j = i + 1; j < m; j++)
			if (x[j] != x[i])
				s[k++] = (y[j] - y[i]) / (x[j] - x[i]);
	if (!k) {
		free(s);
		return 0;
	}
	qsort(s, k, sizeof(*s), cmp_double);
	b = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	c = Z95 * sqrt(m * (m - 1.0) * (2 * m + 5.0) / 18);
	ilo = (k - c) / 2 > 0 ? (size_t)((k - c) / 2) : 0;
	ihi = (k + c) / 2 + 1 < k ? (size_t)((k + c) / 2 + 1) : k - 1;
	*lo = s[ilo];
	*hi = s[ihi];
	free(s);
	return b;
}
