// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shape analysis: owns the statistics that call a series steady, a step, a
 * leak, a bounded cache, settled or growing: block means' drift t, a sign
 * test of the steps, the step and plateau searches, Theil-Sen, Kendall.
 * Scale-free: a change is real at 4 noise deviations, and only the caller's
 * "material" is in bytes. Past 512 points a series is judged as bin means,
 * since the step and plateau searches are quadratic. */
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
/* what a verdict's confidence makes of the variance its fit leaves
 * unexplained: a STEP, or a rise and a plateau, is sure to 1 - this times
 * that share (bench/shapes' reliability tables calibrate them), and a
 * verdict made on a half too short to judge is a guess at most */
#define STEP_DOUBT 10.0
#define PLATEAU_DOUBT 3.0
#define GUESS 0.25

const char *analyze__shape_name(enum shape s)
{
	static const char *const names[] = { "unknown", "steady",  "leak",   "bounded_cache",
					     "step",	"growing", "settled" };

	return s <= SHAPE_SETTLED ? names[s] : "unknown";
}

/* the standard normal's distribution function */
static double normal_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double analyze__median(double *v, size_t n)
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

static double theil_sen_small(const double *y, size_t n, double *lo, double *hi)
{
	size_t N, ilo, ihi;
	double *s = pair_slopes(y, n, &N), b, c;

	if (!s) {
		*lo = *hi = 0;
		return 0;
	}
	b = N % 2 ? s[N / 2] : (s[N / 2 - 1] + s[N / 2]) / 2;
	/* the distribution-free interval from Kendall's statistic */
	c = Z95 * sqrt(n * (n - 1.0) * (2 * n + 5.0) / 18);
	ilo = (N - c) / 2 > 0 ? (size_t)((N - c) / 2) : 0;
	ihi = (N + c) / 2 + 1 < N ? (size_t)((N + c) / 2 + 1) : N - 1;
	*lo = s[ilo];
	*hi = s[ihi];
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
double analyze__theil_sen(const double *y, size_t n, double *lo, double *hi)
{
	double bins[MAX_POINTS], w, b;

	if (n <= MAX_POINTS)
		return theil_sen_small(y, n, lo, hi);
	w = bin_means(y, n, bins);
	b = theil_sen_small(bins, MAX_POINTS, lo, hi) / w;
	*lo /= w;
	*hi /= w;
	return b;
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
	m = analyze__median(a, n - 1);
	for (i = 0; i < n - 1; i++)
		a[i] = fabs(d[i] - m);
	mad = analyze__median(a, n - 1);
	free(a);
	free(d);
	/* a step is the difference of two noisy points: sqrt(2) the noise;
	 * perfectly regular data gets a tiny noise, not zero */
	return fmax(1.4826 * mad / sqrt(2), 1e-9 * scale + 1e-12);
}

/* running sums of a series, its level taken off so that squares of GiB
 * keep their precision: any stretch's constant or line fit in O(1) */
struct sums {
	const double *y;
	double off, s[MAX_POINTS + 1], ss[MAX_POINTS + 1], sx[MAX_POINTS + 1];
};

static void sums_of(struct sums *z, const double *y, size_t n)
{
	size_t i;

	z->y = y;
	z->off = y[0];
	z->s[0] = z->ss[0] = z->sx[0] = 0;
	for (i = 0; i < n; i++) {
		double v = y[i] - z->off;

		z->s[i + 1] = z->s[i] + v;
		z->ss[i + 1] = z->ss[i] + v * v;
		z->sx[i + 1] = z->sx[i] + i * v;
	}
}

/* a constant over [a, b): its squared error, and the mean */
static double const_sse(const struct sums *z, size_t a, size_t b, double *mean)
{
	double n = b - a, sy = z->s[b] - z->s[a];

	if (mean)
		*mean = sy / n + z->off;
	return fmax(z->ss[b] - z->ss[a] - sy * sy / n, 0);
}

/* a least-squares line over [a, b): its squared error */
static double line_sse(const struct sums *z, size_t a, size_t b)
{
	double n = b - a, sy = z->s[b] - z->s[a], sxy = z->sx[b] - z->sx[a];
	double sx = (a + b - 1) * n / 2, cxy, cxx;
	/* the sum of i*i over [a, b) */
	double sxx = ((b - 1.0) * b * (2.0 * b - 1) - (a - 1.0) * a * (2.0 * a - 1)) / 6;

	cxx = sxx - sx * sx / n;
	cxy = sxy - sx * sy / n;
	return fmax(const_sse(z, a, b, NULL) - (cxx > 0 ? cxy * cxy / cxx : 0), 0);
}

/* the best approach to a level, c + a * (1 - exp(-i / tau)), over a grid
 * of tau: its squared error. Growth that settles slows all the way; a
 * cache of fixed-size entries rises straight to its limit, and is called
 * one only where a rise and a plateau fit clearly better than this */
static double settle_sse(const double *y, size_t n)
{
	double best = INFINITY, tau;

	for (tau = 0.5; tau <= 2.0 * n; tau *= 1.25) {
		double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, x, cxx, cxy, e;
		size_t i;

		for (i = 0; i < n; i++) {
			x = 1 - exp(-(double)i / tau);
			sx += x;
			sy += y[i] - y[0];
			sxx += x * x;
			sxy += x * (y[i] - y[0]);
			syy += (y[i] - y[0]) * (y[i] - y[0]);
		}
		cxx = sxx - sx * sx / n;
		cxy = sxy - sx * sy / n;
		e = syy - sy * sy / n - (cxx > 0 ? cxy * cxy / cxx : 0);
		if (e < best)
			best = e;
	}
	return fmax(best, 0);
}

/* rising then level: a cache of fixed-size entries, unless a slowing curve
 * fits about as well as the rise-and-plateau did (hinge: its squared error) */
static enum shape cache_or_settled(const double *y, size_t n, double hinge)
{
	return settle_sse(y, n) < 1.25 * hinge ? SHAPE_SETTLED : SHAPE_BOUNDED;
}

/* one-sided quantiles of Student's t, 95% and 99.9%, and the two-sided 95%
 * one, by degrees of freedom (1..25); past that the normal's */
static double t_quantile(int df, int which)
{
	static const double q[3][25] = {
		{ 6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833,
		  1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734,
		  1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708 },
		{ 318.31, 22.327, 10.215, 7.173, 5.893, 5.208, 4.785, 4.501, 4.297,
		  4.144,  4.025,  3.930,  3.852, 3.787, 3.733, 3.686, 3.646, 3.610,
		  3.579,  3.552,  3.527,  3.505, 3.485, 3.467, 3.450 },
		{ 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
		  2.228,  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
		  2.093,  2.086, 2.080, 2.074, 2.069, 2.064, 2.060 },
	};
	static const double normal[3] = { 1.645, 3.090, 1.960 };

	if (df < 1)
		return INFINITY;
	return df <= 25 ? q[which][df - 1] : normal[which];
}
#define T95 0
#define T999 1
#define T975 2

/* Is there drift, and how sure is it? The means of up to 24 consecutive
 * blocks, and the t statistic of their successive differences. Those
 * differences telescope to the whole rise, and their own scatter measures
 * how far the level wanders on its own: exact for a random walk, on the
 * safe side for independent or autocorrelated noise around a level. An
 * interval from independent noise (Theil-Sen's) calls a random walk a
 * leak one time in five. */
struct drift {
	double slope, lo, hi; /* per point, with its 95% interval */
	double se;	      /* the slope's standard error, per point */
	double t;
	int df;
};

static void drift_of(const double *y, size_t n, struct drift *d)
{
	double m[24], c[24], e, sum = 0, sq = 0, mean, sd, se, span, infl;
	size_t nb, i, k;

	memset(d, 0, sizeof(*d));
	if (n < 3)
		return;
	nb = n <= 12 ? n : n / 5 < 12 ? 12 : n / 5 > 24 ? 24 : n / 5;
	for (i = 0; i < nb; i++) {
		size_t a = i * n / nb, b = (i + 1) * n / nb;

		m[i] = 0;
		for (k = a; k < b; k++)
			m[i] += y[k];
		m[i] /= b - a;
		c[i] = (a + b - 1) / 2.0;
	}
	for (i = 1; i < nb; i++) {
		e = m[i] - m[i - 1];
		sum += e;
		sq += e * e;
	}
	mean = sum / (nb - 1);
	sd = sqrt(fmax(sq - sum * mean, 0) / (nb - 2 ? nb - 2 : 1));
	span = (c[nb - 1] - c[0]) / (nb - 1);
	/* block means of a random walk differ with a correlation of a quarter
	 * from one pair to the next */
	infl = nb < n ? 1.5 : 1;
	se = sd * sqrt(infl / (nb - 1));
	d->df = nb - 2;
	d->slope = mean / span;
	d->se = se / span;
	d->t = se > 0 ? mean / se : mean > 0 ? INFINITY : mean < 0 ? -INFINITY : 0;
	d->lo = (mean - t_quantile(d->df, T975) * se) / span;
	d->hi = (mean + t_quantile(d->df, T975) * se) / span;
}

static bool drift_sure(const struct drift *d)
{
	return d->t >= t_quantile(d->df, T999);
}

/* the chance of this many rising steps or more, were each step as likely
 * to fall: a rise made of steps of every size is sure by their signs
 * where their scatter leaves the t statistic in doubt. A step of exactly
 * nothing is neither (a sign test's ties): a cache that filled on six
 * requests of eight, the other two hitting it, rose on every step it took */
static double rising_steps_chance(const double *y, size_t n)
{
	size_t i, up = 0, k = 0;
	double p = 0;

	for (i = 1; i < n; i++) {
		up += y[i] > y[i - 1];
		k += y[i] != y[i - 1];
	}
	for (i = up; i <= k; i++)
		p += exp(lgamma(k + 1.0) - lgamma(i + 1.0) - lgamma(k - i + 1.0) - k * M_LN2);
	return p;
}

static bool drift_maybe(const struct drift *d)
{
	return d->t >= t_quantile(d->df, T95);
}

/* a stretch is flat when it shows no drift either way (or its change stays
 * within the noise), and its points span no more than ten noise deviations
 * or a quarter of what matters (or than what matters, in steps of a quarter
 * of it at most): a step, a ramp or a random walk inside is not flat */
static bool flat(const double *y, size_t n, double noise, double material)
{
	double lo = INFINITY, hi = -INFINITY, step = 0;
	struct drift d;
	size_t i;

	for (i = 0; i < n; i++) {
		lo = fmin(lo, y[i]);
		hi = fmax(hi, y[i]);
		if (i)
			step = fmax(step, fabs(y[i] - y[i - 1]));
	}
	/* a slow creep that never matters is flat too */
	if (n > 1 && hi - lo > fmax(10 * noise, material / 4) &&
	    (hi - lo > material || step > material / 4))
		return false;
	if (n < 3)
		return true;
	drift_of(y, n, &d);
	return fabs(d.t) < t_quantile(d.df, T95) || fabs(d.slope) * n < SIGNIFICANT * noise ||
	       fabs(d.slope) * n < material / 2;
}

/* flat, a jump, flat */
static bool find_step(const struct sums *z, size_t n, double noise, double material,
		      struct shape_result *r)
{
	const double *y = z->y;
	double best = INFINITY, total = const_sse(z, 0, n, NULL), ml, mr, e;
	size_t k, at = 0;
	bool fl, fr;

	/* one point before the jump will do: the level before the first request */
	for (k = 1; k + 2 <= n; k++) {
		e = const_sse(z, 0, k, NULL) + const_sse(z, k, n, NULL);
		if (e < best) {
			best = e;
			at = k;
		}
	}
	if (!at)
		return false;
	const_sse(z, 0, at, &ml);
	const_sse(z, at, n, &mr);
	if (fabs(mr - ml) < 2 * SIGNIFICANT * noise || best > 0.25 * total)
		return false;
	/* one point by the jump may be halfway (a bin, or a request, that
	 * holds part of it): flat on both sides, leaving out one at most */
	fl = flat(y, at, noise, material);
	fr = flat(y + at, n - at, noise, material);
	if (!(fl && fr) && !(fl && n - at > 3 && flat(y + at + 1, n - at - 1, noise, material)) &&
	    !(fr && at > 2 && flat(y, at - 1, noise, material)))
		return false;
	r->shape = fabs(mr - ml) < material ? SHAPE_STEADY : SHAPE_STEP;
	r->change_at = at;
	r->step_size = mr - ml;
	/* a STEP's: a rise over a few points (a cache filling, growth that
	 * settles, a leak's first points) leaves a tenth of the variance or
	 * more to the step, where flat() has too few points to see the ramp;
	 * a real step leaves little but the noise (bench/shapes' reliability
	 * tables: stated 1 - best / total, one in [0.75, 0.9) was right 3% of
	 * the time) */
	r->confidence = total <= 0	       ? 1 :
			r->shape == SHAPE_STEP ? fmax(0, 1 - STEP_DOUBT * best / total) :
						 1 - best / total;
	return true;
}

/* is a rise over y[0..at) sure? By the drift's t, or by its steps being
 * nearly all upward, or, for a plateau that wanders far less than the rise
 * (a cache of entries that differ in size, once full), mostly upward; a
 * short rise must go up at every step, at a steady pace, well past the
 * noise (a rise that slows at once is settling) */
static bool rise_sure(const struct sums *z, size_t at, size_t n, double ceiling, double noise)
{
	const double *y = z->y;
	double chance, lo = INFINITY, hi = 0;
	struct drift rise;
	size_t k;

	if (at >= 5) {
		drift_of(y, at, &rise);
		chance = rising_steps_chance(y, at);
		return drift_sure(&rise) || chance <= 0.001 ||
		       (chance <= 0.05 &&
			ceiling - y[0] >= 10 * sqrt(const_sse(z, at, n, NULL) / (n - at - 1)));
	}
	for (k = 1; k < at; k++) {
		if (y[k] <= y[k - 1])
			return false;
		lo = fmin(lo, y[k] - y[k - 1]);
		hi = fmax(hi, y[k] - y[k - 1]);
	}
	return hi <= 3 * lo && ceiling - y[0] >= 2 * SIGNIFICANT * noise;
}

/* find_plateau's answers: none; a sure rise, then a plateau; a sure rise,
 * then a top that moves too much to call it one, in no sure direction */
enum plateau { PLATEAU_NONE, PLATEAU_FOUND, PLATEAU_MOVES };

/* rising, then a plateau: at least three points and an eighth of the run */
static enum plateau find_plateau(const struct sums *z, size_t n, double noise, double material,
				 struct shape_result *r)
{
	const double *y = z->y;
	double best = INFINITY, lin = line_sse(z, 0, n), e, ceiling;
	size_t k, at = 0, end, least = n / 8 > 3 ? n / 8 : 3;
	struct drift rise, top;

	/* a rise of one step is a step: a cache grows over two at least */
	for (k = 3; k + least <= n; k++) {
		e = line_sse(z, 0, k) + const_sse(z, k, n, NULL);
		if (e < best) {
			best = e;
			at = k;
		}
	}
	if (!at || best > 0.5 * lin)
		return PLATEAU_NONE;
	const_sse(z, at, n, &ceiling);
	if (ceiling - y[0] < SIGNIFICANT * noise || ceiling - y[0] < material)
		return PLATEAU_NONE;
	/* the split may fall either side of the rise's last point, and a
	 * plateau that creeps up draws it a few points late: the rise is sure
	 * when it is up to one of the last two points before the split (the
	 * shapes bench measures what the choice costs in false caches) */
	for (end = at + 1; end >= 3 && end + 2 >= at; end--)
		if (rise_sure(z, end, n, ceiling, noise))
			break;
	if (end < 3 || end + 2 < at)
		return PLATEAU_NONE;
	/* the rise's rate over the rise alone: a split drawn late would count
	 * the plateau's first points in it, and slow it */
	drift_of(y, end, &rise);
	drift_of(y + at, n - at, &top);
	/* a plateau drifts at a tenth of the rise's rate at most, or moves, in
	 * no sure direction, by a quarter of the rise at most (a full cache that
	 * replaces an entry by a bigger one steps once) */
	if (!flat(y + at, n - at, noise, material) && fabs(top.slope) > LEVELLED * rise.slope &&
	    (drift_sure(&top) || fabs(top.slope) * (n - at) > 0.25 * (ceiling - y[0])))
		return top.slope > 0 && !drift_sure(&top) ? PLATEAU_MOVES : PLATEAU_NONE;
	r->shape = cache_or_settled(y, n, best);
	r->change_at = at;
	r->ceiling = ceiling;
	/* a random walk's, or a leak's under one, wander up, then along,
	 * fits a rise and a plateau not much better than a line (bench/shapes:
	 * stated 1 - best / lin, a cache in [0.5, 0.7) was right 1% of the
	 * time) */
	r->confidence = lin > 0 ? fmax(0, 1 - PLATEAU_DOUBT * best / lin) : 1;
	return PLATEAU_FOUND;
}

static void shape_of(const double *y, size_t n, double material, struct shape_result *r);

/* grown, and levelled off in the second half: a cache, or settled */
static bool levelled(const struct sums *z, size_t n, const struct drift *early,
		     const struct drift *recent, struct shape_result *r)
{
	size_t h = n / 2;

	if (drift_maybe(recent) || recent->slope > 0.25 * early->slope)
		return false;
	r->shape = cache_or_settled(z->y, n, line_sse(z, 0, h) + const_sse(z, h, n, NULL));
	r->change_at = h;
	const_sse(z, h, n, &r->ceiling);
	/* a half of two points has no drift of its own (drift_of): the
	 * confidence said the rise is sure, not that it levelled */
	if (early->df < 1 || recent->df < 1)
		r->confidence = fmin(r->confidence, GUESS);
	return true;
}

void analyze__shape(const double *y, size_t n, double material, struct shape_result *r)
{
	double bins[MAX_POINTS], w;

	if (n <= MAX_POINTS) {
		shape_of(y, n, material, r);
		return;
	}
	/* the searches for a step or a plateau are quadratic: judge the means
	 * of equal bins, and give places and slopes back in points */
	w = bin_means(y, n, bins);
	shape_of(bins, MAX_POINTS, material, r);
	r->slope /= w;
	r->slope_lo /= w;
	r->slope_hi /= w;
	r->slope_early /= w;
	r->slope_recent /= w;
	r->step_mean /= w;
	r->change_at = (size_t)(r->change_at * w);
	r->more_points = (size_t)(r->more_points * w);
}

static void shape_of(const double *y, size_t n, double material, struct shape_result *r)
{
	struct drift all, early, recent;
	size_t h = n / 2;
	enum plateau plateau;
	struct sums z;
	double need, chance;

	memset(r, 0, sizeof(*r));
	if (n < 4)
		return; /* SHAPE_UNKNOWN */
	r->noise = noise_of(y, n, &r->step_mean, &r->step_cv);
	drift_of(y, n, &all);
	r->slope = all.slope;
	r->slope_lo = all.lo;
	r->slope_hi = all.hi;
	r->t = all.t;
	sums_of(&z, y, n);
	if (find_step(&z, n, r->noise, material, r))
		return;
	plateau = find_plateau(&z, n, r->noise, material, r);
	if (plateau == PLATEAU_FOUND)
		return;
	drift_of(y, h, &early);
	drift_of(y + h, n - h, &recent);
	r->slope_early = early.slope;
	r->slope_recent = recent.slope;
	r->shape = SHAPE_STEADY;
	/* flat, then rising ever since: a leak that started late */
	if (n - h >= 8 && drift_sure(&recent) && recent.slope * (n - h - 1) >= material &&
	    recent.slope > 2 * fmax(early.slope, 0)) {
		r->shape = SHAPE_LEAK;
		r->slope = recent.slope;
		r->slope_lo = recent.lo;
		r->slope_hi = recent.hi;
		r->t = recent.t;
		r->change_at = h;
		r->confidence = fmin(1, recent.t / (2 * t_quantile(recent.df, T999)));
		return;
	}
	/* a sure rise, then a top that still moves: levelling off, or a slow
	 * leak after a warm-up; the drift over the whole run, which a rise and
	 * a plateau spread unevenly over its blocks, may be unsure, but "no
	 * sure rise" would be wrong */
	if (plateau == PLATEAU_MOVES && !drift_sure(&all)) {
		r->shape = SHAPE_GROWING;
		r->slowing = true;
		r->more_points = h > 5 ? h : 5;
		r->confidence = fmin(1, fmax(0, all.t) / t_quantile(all.df, T999));
		return;
	}
	/* nearly every step up or none: memory that only grows, where a random
	 * walk steps both ways as often. A rise made early, then level, leaves
	 * the drift over blocks in doubt: this says it rose, and whether it
	 * levelled off (a leak still takes the drift test) */
	chance = rising_steps_chance(y, n);
	if (!drift_sure(&all) && chance <= 0.001 && y[n - 1] - y[0] >= material) {
		r->confidence = fmin(1, log(chance) / (2 * log(0.001)));
		if (!levelled(&z, n, &early, &recent, r)) {
			r->shape = SHAPE_GROWING;
			r->slowing = recent.slope < early.slope;
			r->more_points = h > 5 ? h : 5;
		}
		return;
	}
	/* a change small against the process is steady, however clean. How
	 * sure: the chance that the run's drift is under what matters, from
	 * the slope and its standard error; a run too short or too noisy to
	 * tell a material drift from none is not sure of either (1 - t / t95,
	 * as it was, said 1 for any t <= 0: bench/shapes' leaks of 0.1% a
	 * request at 13 to 25 requests were called steady at 1) */
	if (!drift_maybe(&all) || all.slope * (n - 1) < material) {
		r->confidence =
			all.se > 0 ? normal_cdf((material / (n - 1) - all.slope) / all.se) : 1;
		return;
	}
	if (drift_sure(&all)) {
		r->confidence = fmin(1, all.t / (2 * t_quantile(all.df, T999)));
		/* still growing at the end, as fast as before: a leak */
		if (drift_maybe(&recent) && recent.slope >= 0.6 * fmax(early.slope, 0)) {
			r->shape = SHAPE_LEAK;
			return;
		}
		if (levelled(&z, n, &early, &recent, r))
			return;
		/* slowing down: levelling off, or not */
		r->shape = SHAPE_GROWING;
		r->slowing = true;
		r->more_points = h > 5 ? h : 5;
		return;
	}
	/* it rises, but not yet past doubt: with the same rise, a random walk
	 * needs the points to grow as the square of t */
	r->shape = SHAPE_GROWING;
	r->confidence = fmin(1, all.t / t_quantile(all.df, T999));
	need = n * pow(t_quantile(all.df + 1, T999) / all.t, 2);
	r->more_points = need > n + 5 ? (size_t)ceil(need - n) : 5;
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
