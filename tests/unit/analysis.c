// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the analysis: the shape verdicts and their controls, the
 * findings, the words of each code, a request's delta, memory by role, and
 * llama-server's configuration. */
#include <math.h>
#include "unit.h"
#include "series.h"
#include "analysis/analyze.h"
#include "analysis/findings.h"
#include "analysis/findings_int.h"
#include "analysis/llama_conf.h"
#include "analysis/requests.h"
#include "analysis/words.h"
#include "report/report.h"

/* deterministic noise in [-a, a] */
static double wobble(unsigned int *seed, double a)
{
	*seed = *seed * 1103515245u + 12345u;
	return ((*seed >> 16) % 2001 / 1000.0 - 1) * a;
}

/* the shapes, at two scales (bytes and GiB) so no threshold hides in them */
/* the lavapipe demo's host heap as measured: its first level, then the change
 * over each of the first nd requests, flat after them */
static void judge_cache_run(const double *d, size_t nd, double first, size_t n, double material,
			    struct shape_result *r)
{
	double h[64];
	size_t i;

	h[0] = first;
	for (i = 1; i < n && i < 64; i++)
		h[i] = h[i - 1] + (i <= nd ? d[i - 1] : 0);
	analyze__shape(h, n < 64 ? n : 64, material, r);
}

void test_analyze_shapes(void)
{
	static const double scales[] = { 1, 1 << 30 };
	struct shape_result r;
	double y[30];
	unsigned int seed = 7;
	size_t i, s;

	for (s = 0; s < 2; s++) {
		double k = scales[s];

		/* a leak: +10 a request, noise of +-2 */
		for (i = 0; i < 30; i++)
			y[i] = k * (100 + 10.0 * i + wobble(&seed, 2));
		analyze__shape(y, 30, 0, &r);
		ASSERT_EQ(r.shape, SHAPE_LEAK, "linear growth is a leak");
		ASSERT_TRUE(r.slope > 9.5 * k && r.slope < 10.5 * k, "its slope");
		ASSERT_TRUE(r.slope_lo > 0 && r.slope_lo <= r.slope && r.slope <= r.slope_hi,
			    "the interval holds the slope");
		ASSERT_TRUE(r.step_cv < 0.5, "a constant step");
		ASSERT_EQ((long long)(analyze__points_to(&r, y[29], y[29] + 100 * k) + 0.5), 10,
			  "ten requests to 100 more");
		/* a cache: +10 a request up to 80, then flat */
		for (i = 0; i < 30; i++)
			y[i] = k * (fmin(10.0 * i, 80) + wobble(&seed, 2));
		analyze__shape(y, 30, 0, &r);
		ASSERT_EQ(r.shape, SHAPE_BOUNDED, "growth to a ceiling is a bounded cache");
		ASSERT_TRUE(fabs(r.ceiling - 80 * k) < 3 * k, "its ceiling");
		ASSERT_TRUE(r.change_at >= 7 && r.change_at <= 10, "where it levels off");
		/* noise around a level */
		for (i = 0; i < 30; i++)
			y[i] = k * (500 + wobble(&seed, 20));
		analyze__shape(y, 30, 0, &r);
		ASSERT_EQ(r.shape, SHAPE_STEADY, "noisy but flat is steady");
		/* warm-up: one jump, then flat */
		for (i = 0; i < 30; i++)
			y[i] = k * ((i < 4 ? 50 : 350) + wobble(&seed, 3));
		analyze__shape(y, 30, 0, &r);
		ASSERT_EQ(r.shape, SHAPE_STEP, "a one-off jump is a step");
		ASSERT_EQ(r.change_at, 4, "the step's place");
		ASSERT_TRUE(fabs(r.step_size - 300 * k) < 6 * k, "the step's size");
		/* warm-up that settles over a few requests: not a leak */
		for (i = 0; i < 30; i++)
			y[i] = k * (200 * (1 - exp(-(double)i)) + wobble(&seed, 1));
		analyze__shape(y, 30, 0, &r);
		ASSERT_TRUE(r.shape != SHAPE_LEAK, "warm-up that settles is no leak");
	}
	analyze__shape(y, 3, 0, &r);
	ASSERT_EQ(r.shape, SHAPE_UNKNOWN, "three points say nothing");
	/* a steady llama-server on CUDA (H200, --cache-ram 0): its host heap
	 * before each of 20 requests' ends, as measured; a warm-up, then 256 KiB
	 * every other request, under a hundredth of its 350 MiB */
	{
		static const double d[] = { 107741184, 262144, 0, 262144, 0,	  0,	  0,
					    262144,    0,      0, 262144, 0,	  262144, 0,
					    0,	       262144, 0, 0,	  262144, 0 };
		double h[21] = { 159551488 };

		for (i = 0; i < 20; i++)
			h[i + 1] = h[i] + d[i];
		analyze__shape(h, 21, 0.01 * (350 << 20), &r);
		ASSERT_EQ(r.shape, SHAPE_STEP, "a warm-up, then a creep that does not matter");
	}
	/* llama-server on lavapipe, --cache-ram 8: its host heap less Vulkan's
	 * after each of 48 requests, as measured. Six entries fill the cache,
	 * then it creeps by a third of that over 42 requests (malloc reusing
	 * freed entries imperfectly): growth that levelled off, not steady */
	{
		static const double d[] = { 987136, 1834648, 2040832, 1310720, 1572864, 1572864, 0,
					    0,	    0,	     0,	      0,       0,	0,	 0,
					    0,	    1310720, 0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      0,       262144,	0,	 0,
					    0,	    0,	     0,	      262144,  1310720 };
		judge_cache_run(d, 33, 114651136, 49, 0.01 * 215e6, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED,
			    "a filled cache that creeps levelled off");
	}
	/* another run: the last entry took two requests to land, so the split
	 * falls after a step of 256 KiB and the rise is not sure up to it */
	{
		static const double d[] = { 987136, 1834648, 1778688, 1572864, 1310720, 1572864, 0,
					    262144, 0,	     0,	      0,       0,	0,	 0,
					    0,	    1310720, 0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      0,       0,	0,	 0,
					    0,	    262144,  0,	      0,       1572864 };
		judge_cache_run(d, 33, 114753536, 52, 2151663, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED,
			    "a cache whose last entry landed late levelled off");
	}
	/* a third run, of 38 requests: the creep (3.4 MiB over 32 requests)
	 * drew the split two points late, and the rise's rate taken up to the
	 * split counted two plateau points in it; its plateau then drifted at
	 * over a tenth of that rate, and the heap was called steady */
	{
		static const double d[] = { 724992, 2096792, 1778688, 1572864, 1310720, 1572864, 0,
					    0,	    0,	     0,	      262144,  0,	0,	 0,
					    0,	    1310720, 0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      262144,  1572864 };
		judge_cache_run(d, 33, 114900992, 39, 2151830, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED,
			    "a cache whose creep drew the split late levelled off");
	}
	/* a fourth, of 35 requests: the same creep over fewer requests, at
	 * more than a tenth of the rise's rate, in no sure direction. Not a
	 * plateau yet; but the heap rose surely, so not steady either: growing,
	 * slowing, too early to tell */
	{
		static const double d[] = { 724992, 2096792, 1778688, 1572864, 1310720, 1572864, 0,
					    262144, 0,	     0,	      0,       0,	0,	 0,
					    0,	    1310720, 0,	      0,       0,	0,	 0,
					    0,	    0,	     0,	      0,       0,	0,	 0,
					    0,	    262144,  0,	      0,       1572864 };
		judge_cache_run(d, 33, 114794496, 36, 2149080, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED ||
				    (r.shape == SHAPE_GROWING && r.slowing),
			    "a cache that still creeps is no steady heap");
		ASSERT_TRUE(r.shape != SHAPE_GROWING || r.more_points > 0,
			    "and says how many more requests would tell");
	}
	/* a fifth, of 57 requests on a loaded CPU: 9.3 MiB over six requests,
	 * then 3.3 MiB in five steps over 31, then level for 20. Neither a line
	 * nor a rise and a flat top fits it well, and the drift over blocks is
	 * in doubt; but no step went down: it rose, and levelled off */
	{
		static const double d[] = { 1310720, 1835008, 2097152, 1572864, 1310720, 1572864, 0,
					    0,	     0,	      0,       0,	0,	 0,	  0,
					    0,	     1310720, 0,       0,	0,	 0,	  0,
					    0,	     262144,  0,       0,	0,	 0,	  0,
					    0,	     0,	      0,       262144,	1310720, 0,	  0,
					    0,	     0,	      262144 };

		judge_cache_run(d, 38, 114610176, 58, 2151663, &r);
		ASSERT_TRUE(r.shape == SHAPE_BOUNDED || r.shape == SHAPE_SETTLED,
			    "a cache that filled, crept and stopped levelled off");
	}
	/* the real llama-server, --cache-ram 40, its host heap after each of
	 * 28 requests, as measured under a loaded CPU: two requests of the
	 * eight that filled the cache touched nothing new, so the rise has
	 * two steps of exactly nothing, neither up nor down */
	{
		static const double h[] = { 51097600,  58175488,  70234112,  82554880,
					    95137792,  95137792,  107196416, 107196416,
					    119517184, 119517184, 119517184, 119517184,
					    119517184, 119517184, 119517184, 119779328 };
		double y[28];

		for (i = 0; i < 28; i++)
			y[i] = h[i < 16 ? i : 15];
		analyze__shape(y, 28, 2185380, &r);
		ASSERT_EQ(r.shape, SHAPE_BOUNDED, "a cache that filled on six requests of eight");
	}
	/* a long series is binned, and still judged */
	double *big = malloc(1200 * sizeof(*big));

	if (!ASSERT_TRUE(big != NULL, "memory"))
		return;
	for (i = 0; i < 1200; i++)
		big[i] = 5.0 * i + wobble(&seed, 1);
	analyze__shape(big, 1200, 0, &r);
	ASSERT_EQ(r.shape, SHAPE_LEAK, "long leak");
	ASSERT_TRUE(r.slope > 4.9 && r.slope < 5.1, "its slope, per point");
	free(big);
}

/* the controls a verdict must not call a leak or a cache, 300 of each at
 * 30 and 100 requests (bench/shapes measures 1,000 at four lengths), and
 * leaks of 1% a request under each noise, found by 100 requests */
void test_analyze_controls(void)
{
	static const size_t lens[] = { 30, 100 };
	struct series_rng rng = { 12345 };
	struct shape_result r;
	double y[100];
	int k, i, leak, cache, found;
	size_t l;

	for (k = 0; k < SER_CONTROLS; k++)
		for (l = 0; l < 2; l++) {
			for (leak = cache = i = 0; i < 300; i++) {
				series__make(k, lens[l], 1 << 30, 0, &rng, y);
				analyze__shape(y, lens[l], 0.01 * (1 << 30), &r);
				leak += r.shape == SHAPE_LEAK;
				cache += r.shape == SHAPE_BOUNDED;
			}
			printf("# %s over %zu requests: %d of 300 called a leak, %d a cache\n",
			       series__name(k), lens[l], leak, cache);
			if (!ASSERT_TRUE(leak <= 3, "false leaks") ||
			    !ASSERT_TRUE(k == SER_CACHE || cache <= 3, "false caches") ||
			    !ASSERT_TRUE(k != SER_CACHE || cache >= 150, "caches found"))
				return;
		}
	for (k = SER_LEAK_IID; k <= SER_LEAK_WALK; k++) {
		for (found = i = 0; i < 300; i++) {
			series__make(k, 100, 1 << 30, 0.01, &rng, y);
			analyze__shape(y, 100, 0.01 * (1 << 30), &r);
			found += r.shape == SHAPE_LEAK;
		}
		printf("# %s, 1%% a request, 100 requests: %d of 300 found\n", series__name(k),
		       found);
		if (!ASSERT_TRUE(found >= 294, "leaks found"))
			return;
	}
}

/* a verdict's confidence is as sure as the run could be (bench/shapes'
 * reliability tables): sure where the points leave no doubt, and not
 * sure where the same verdict, so stated, was mostly wrong there */
void test_analyze_confidence(void)
{
	struct series_rng rng = { 4242 };
	double *y = malloc(1000 * sizeof(*y)), k = 1 << 30;
	unsigned int seed = 7;
	struct shape_result r;
	int i, n, judged, sure;

	if (!ASSERT_TRUE(y != NULL, "memory"))
		return;
	/* no doubt: 0.1% noise over 100 requests; a jump of 300 under noise
	 * of 3; a rise to 80 under noise of 2 */
	for (i = 0; i < 100; i++)
		y[i] = k * (1 + wobble(&seed, 0.001));
	analyze__shape(y, 100, 0.01 * k, &r);
	ASSERT_TRUE(r.shape == SHAPE_STEADY && r.confidence >= 0.99,
		    "quiet and long: steady, sure");
	for (i = 0; i < 30; i++)
		y[i] = k * ((i < 4 ? 50 : 350) + wobble(&seed, 3));
	analyze__shape(y, 30, 0, &r);
	ASSERT_TRUE(r.shape == SHAPE_STEP && r.confidence >= 0.99, "a clean jump: a step, sure");
	for (i = 0; i < 30; i++)
		y[i] = k * (fmin(10.0 * i, 80) + wobble(&seed, 2));
	analyze__shape(y, 30, 0, &r);
	ASSERT_TRUE(r.shape == SHAPE_BOUNDED && r.confidence >= 0.9, "a clean fill: a cache, sure");
	/* noise of 3% over 10 requests cannot tell a change of 1% from none
	 * (1 - t / t95 said 1 wherever t fell below 0) */
	for (judged = sure = n = 0; n < 20; n++) {
		for (i = 0; i < 10; i++)
			y[i] = k * (1 + wobble(&seed, 0.03));
		analyze__shape(y, 10, 0.01 * k, &r);
		judged += r.shape == SHAPE_STEADY;
		sure += r.confidence >= 0.9;
	}
	ASSERT_TRUE(judged == 20 && sure == 0, "short and noisy: steady, not sure");
	/* leaks of 0.1% a request under 1% noise, 20 requests: 1.9% grown,
	 * past what matters, and called steady (it was sure, at 1, of most) */
	for (judged = sure = i = 0; i < 300; i++) {
		series__make(SER_LEAK_IID, 20, k, 0.001, &rng, y);
		analyze__shape(y, 20, 0.01 * k, &r);
		judged += r.shape == SHAPE_STEADY;
		sure += r.shape == SHAPE_STEADY && r.confidence >= 0.9;
	}
	printf("# a leak of 0.1%% a request over 20: %d of 300 steady, %d of them at 0.9 or more\n",
	       judged, sure);
	ASSERT_TRUE(sure <= 3, "a leak hidden in the noise is not surely steady");
	/* caches and settling growth over 10 requests, called a step: a ramp
	 * of a few points the step leaves a tenth of the variance to */
	for (judged = sure = i = 0; i < 300; i++) {
		series__make(i % 2 ? SER_CACHE : SER_SETTLE, 10, k, 0, &rng, y);
		analyze__shape(y, 10, 0.01 * k, &r);
		judged += r.shape == SHAPE_STEP;
		sure += r.shape == SHAPE_STEP && r.confidence >= 0.7;
	}
	printf("# caches and settling over 10: %d of 300 a step, %d of them at 0.7 or more\n",
	       judged, sure);
	ASSERT_TRUE(sure * 10 <= judged, "a rise over a few points is not surely a step");
	/* leaks of 0.01% a request under a random walk, judged at 20 to 640
	 * requests, called a cache: a walk's wander, not a plateau */
	for (judged = sure = i = 0; i < 300; i++) {
		series__make(SER_LEAK_WALK, 1000, k, 0.0001, &rng, y);
		for (n = 20; n <= 1000; n *= 2) {
			analyze__shape(y, n, 0.01 * k, &r);
			judged += r.shape == SHAPE_BOUNDED;
			sure += r.shape == SHAPE_BOUNDED && r.confidence >= 0.7;
		}
	}
	printf("# leaks under a walk: %d judgements a cache, %d of them at 0.7 or more\n", judged,
	       sure);
	ASSERT_TRUE(sure * 10 <= judged, "a walk that wandered up is not surely a cache");
	/* four points of a leak: a half of two points cannot show levelling */
	for (judged = sure = i = 0; i < 300; i++) {
		series__make(SER_LEAK_WALK, 4, k, 0.01, &rng, y);
		analyze__shape(y, 4, 0.01 * k, &r);
		judged += r.shape == SHAPE_SETTLED || r.shape == SHAPE_BOUNDED;
		sure += (r.shape == SHAPE_SETTLED || r.shape == SHAPE_BOUNDED) &&
			r.confidence >= 0.5;
	}
	printf("# leaks over 4 requests: %d of 300 levelled, %d of them at 0.5 or more\n", judged,
	       sure);
	ASSERT_TRUE(sure == 0, "levelled on two points is a guess");
	free(y);
}

static const struct finding *find_finding(const struct findings *fs, enum finding_kind k,
					  const char *cat)
{
	size_t i;

	for (i = 0; fs && i < fs->n; i++)
		if (fs->v[i].kind == k && !strcmp(fs->v[i].category, cat))
			return &fs->v[i];
	return NULL;
}

/* request i at t: 8 MiB of Vulkan memory allocated, anonymous RSS up by
 * touched of it (and some noise) */
static void vk_request(struct model *m, double t, size_t i, __u64 touched)
{
	http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
	gpu_call(m, t + 0.1, GMT_API_VK, GMT_GOP_ALLOC, GMT_GK_VK_MEMORY, 0x100 + i, 8 << 20, 0, 0);
	rss_at(m, t + 0.3, (200ull << 20) + (i + 1) * touched + 4096 * (i % 3));
	http_event(m, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
	http_event(m, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
}

/* host memory that Vulkan allocations make on llvmpipe is counted once, as
 * Vulkan's; a PROT_NONE reservation holds none of a host leak */
void test_findings_counted_once(void)
{
	struct model *m = model_of_run(2), *h = model_of_run(2);
	const struct finding *f;
	struct gmt_gpu_device d;
	struct findings *fs = NULL, *hs = NULL;
	struct gmt_map_rss *r;
	size_t i, k;
	bool said = false;

	memset(&d, 0, sizeof(d));
	event__init(&d.hdr, GMT_EV_GPU_DEVICE, sizeof(d), T(1), 100);
	d.api = GMT_API_VK;
	d.vendor_id = 0x10005;
	snprintf(d.name, sizeof(d.name), "llvmpipe (LLVM 15.0.6, 256 bits)");
	d.nr_types = d.nr_heaps = 1;
	d.types[0] = (struct gmt_gpu_mem_type){ 1, 0 };
	d.heaps[0] = (struct gmt_gpu_mem_heap){ 16ull << 30, 1, 0 };
	model__add(m, &d.hdr);
	rss_at(m, 2.9, 200ull << 20);
	rss_at(h, 2.9, 200ull << 20);
	for (i = 0; i < 12; i++) {
		double t = 3 + i;

		vk_request(m, t, i, 8 << 20);

		/* the other process: 16 MiB mapped of which 8 touched, 64 MiB
		 * reserved, and an arena reserved of which 4 MiB made usable */
		http_event(h, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		mmap_at(h, t + 0.1, 0x7f0000000000 + i * (1ull << 30), 16 << 20, 3, 7);
		mmap_at(h, t + 0.2, 0x7e0000000000 + i * (1ull << 30), 64 << 20, 0, 9);
		mmap_at(h, t + 0.2, 0x7d0000000000 + i * (1ull << 30), 64 << 20, 0, 11);
		rss_at(h, t + 0.3, (200ull << 20) + (i + 1) * (12ull << 20) + 4096 * (i % 3));
		http_event(h, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(h, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	/* smaps at the end: what each area holds */
	r = calloc(1, sizeof(*r) + 36 * sizeof(r->v[0]));
	if (!ASSERT_TRUE(r != NULL, "memory"))
		goto out;
	event__init(&r->hdr, GMT_EV_MAP_RSS, sizeof(*r) + 36 * sizeof(r->v[0]), T(15.5), 100);
	for (i = 0; i < 36; i++) {
		__u64 base =
			(0x7d0000000000ull + (i / 12) * 0x10000000000ull) + (i % 12) * (1ull << 30);

		r->v[i].start = base;
		r->v[i].end = base + (i < 24 ? 64 << 20 : 16 << 20);
		r->v[i].rss = i < 12 ? 4 << 20 : i < 24 ? 0 : 8 << 20;
	}
	r->nr = 36;
	model__add(h, &r->hdr);
	free(r);
	fs = findings__build(m);
	hs = findings__build(h);
	ASSERT_TRUE(find_finding(fs, F_LEAK, "vulkan_device") != NULL, "the Vulkan leak");
	f = find_finding(fs, F_STEADY, "host_anon");
	if (!ASSERT_TRUE(f != NULL, "the host heap, less Vulkan memory, is steady"))
		goto out;
	for (k = 0; k < f->nr_evidence; k++)
		said |= f->evidence[k].code == E_LESS_VULKAN &&
			f->evidence[k].a.E_LESS_VULKAN.bytes > 0;
	ASSERT_TRUE(said, "and says so, with the Vulkan bytes taken off");
	f = find_finding(hs, F_LEAK, "host_anon");
	if (!ASSERT_TRUE(f != NULL, "without Vulkan, the host heap leaks"))
		goto out;
	for (k = 0; k < f->nr_stacks; k++)
		ASSERT_TRUE(f->stacks[k].stack_id != 9, "a PROT_NONE reservation holds nothing");
	ASSERT_TRUE(f->nr_stacks >= 2 && f->stacks[0].stack_id == 7 &&
			    f->stacks[0].bytes == 12 * (8ull << 20),
		    "the mappings hold what was touched of them");
	ASSERT_TRUE(f->nr_stacks >= 2 && f->stacks[1].stack_id == 11 &&
			    f->stacks[1].bytes == 12 * (4ull << 20),
		    "and the arenas what was made usable");
out:
	findings__free(fs);
	findings__free(hs);
	model__free(m);
	model__free(h);
}

/* a model whose Vulkan device is of TYPE (GMT_GPU_TYPE_*; UNSAID: a record
 * of before the type, of Mesa's vendor), 12 requests each allocating 8 MiB
 * of Vulkan memory while anonymous RSS rises by TOUCHED of it; 1 GiB of
 * RAM available */
static struct model *device_model(unsigned int type, __u64 touched)
{
	struct model *m = model_of_run(2);
	struct gmt_meminfo mi;
	struct gmt_gpu_device d;
	size_t i;

	memset(&d, 0, sizeof(d));
	event__init(&d.hdr, GMT_EV_GPU_DEVICE, sizeof(d), T(1), 100);
	if (type == GMT_GPU_TYPE_UNSAID)
		d.hdr.len = offsetof(struct gmt_gpu_device, device_type);
	d.api = GMT_API_VK;
	d.vendor_id = type == GMT_GPU_TYPE_UNSAID ? 0x10005 : 0x10de;
	d.device_type = type;
	snprintf(d.name, sizeof(d.name), "%s", type == GMT_GPU_TYPE_UNSAID ? "llvmpipe" : "GPU");
	d.nr_types = d.nr_heaps = 1;
	d.types[0] = (struct gmt_gpu_mem_type){ 1, 0 };
	d.heaps[0] = (struct gmt_gpu_mem_heap){ 16ull << 30, 1, 0 };
	model__add(m, &d.hdr);
	memset(&mi, 0, sizeof(mi));
	event__init(&mi.hdr, GMT_EV_MEMINFO, sizeof(mi), T(1.5), 0);
	mi.total_kb = 4 << 20;
	mi.available_kb = 1 << 20;
	model__add(m, &mi.hdr);
	rss_at(m, 2.9, 200ull << 20);
	for (i = 0; i < 12; i++) {
		double t = 3 + i;

		vk_request(m, t, i, touched);
	}
	return m;
}

/* the bytes its E_LESS_VULKAN took off, and whose they were (API, "" for
 * none); 0 for none */
static double less_gpu(const struct finding *f, const char **api)
{
	size_t k;

	*api = "";
	for (k = 0; f && k < f->nr_evidence; k++)
		if (f->evidence[k].code == E_LESS_VULKAN) {
			*api = f->evidence[k].a.E_LESS_VULKAN.api;
			return f->evidence[k].a.E_LESS_VULKAN.bytes;
		}
	return 0;
}

/* issue 38: a device's memory is the host's RAM where the device is a CPU or
 * an integrated GPU (or, recorded without a type, Mesa's CPU driver), and is
 * counted once, in the host's; a discrete device's stays apart, judged as
 * before */
void test_findings_unified_memory(void)
{
	static const struct {
		unsigned int type;
		__u64 touched;
		bool host_ram;
	} cases[] = {
		{ GMT_GPU_TYPE_DISCRETE, 8 << 20, false },
		{ GMT_GPU_TYPE_INTEGRATED, 8 << 20, true },
		{ GMT_GPU_TYPE_CPU, 8 << 20, true },
		{ GMT_GPU_TYPE_UNSAID, 8 << 20, true },
		/* lavapipe's untouched allocations: RSS does not move */
		{ GMT_GPU_TYPE_CPU, 0, true },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model *m = device_model(cases[i].type, cases[i].touched);
		struct findings *fs = findings__build(m);
		const struct model_proc *p = model__proc(m, 100);
		const struct finding *host = find_finding(fs, F_STEADY, "host_anon");
		const struct finding *leak = find_finding(fs, F_LEAK, "vulkan_device");
		struct category cats[CAT_MAX];
		size_t n = p ? categories__list(m, p, cats, CAT_MAX) : 0, k;
		const char *what = NULL;
		double limit = 0;
		char *prom = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&prom, &len);

		ASSERT_EQ(m->nr_devices, 1, "one device");
		ASSERT_EQ(m->devices[0].memory == MODEL_DEVMEM_HOST_RAM, cases[i].host_ram,
			  "the device's memory kind");
		ASSERT_EQ(model__host_ram(m, MODEL_API_VK), cases[i].host_ram,
			  "Vulkan's memory is the host's");
		ASSERT_TRUE(leak != NULL, "the Vulkan growth is Vulkan's, whatever the device");
		for (k = 0; k < n; k++) {
			if (strcmp(cats[k].name, "vulkan_device"))
				continue;
			ASSERT_EQ(cats[k].in_host, cases[i].host_ram, "counted in the host's");
			ASSERT_TRUE(category__limit(m, p, &cats[k], 96 << 20, &limit, &what),
				    "a limit");
			if (cases[i].host_ram)
				ASSERT_TRUE(!strcmp(what, "the host's available RAM") &&
						    limit == (96 << 20) + (1ull << 30),
					    "runs out where the host's RAM does");
			else
				ASSERT_TRUE(!strcmp(what, "the device-local heap") &&
						    limit == 16ull << 30,
					    "a discrete device's runs out at its heap");
		}
		if (cases[i].host_ram) {
			/* the host heap less what Vulkan's change accounts for:
			 * steady, never below where it started */
			ASSERT_TRUE(host != NULL, "the host heap, counted once, is steady");
			/* all 96 MiB where touched; of untouched, the RSS's noise */
			ASSERT_TRUE(fabs(less_gpu(host, &what) - 12 * cases[i].touched) <= 8192,
				    "says what was taken off: what RSS holds of it");
			ASSERT_TRUE(!cases[i].touched || !strcmp(what, "Vulkan"), "Vulkan's");
			ASSERT_TRUE(!find_finding(fs, F_STEP, "host_anon"),
				    "no step down for memory never touched");
		} else {
			ASSERT_TRUE(find_finding(fs, F_LEAK, "host_anon") != NULL,
				    "a discrete device: the host heap's growth is its own");
			ASSERT_TRUE(!host, "not steady");
		}
		if (ASSERT_TRUE(f != NULL, "memstream")) {
			report__prometheus(f, m, fs);
			fclose(f);
			ASSERT_EQ(strstr(prom, "memory=\"host_ram\"") != NULL, cases[i].host_ram,
				  "the metrics mark the bytes counted in the host's");
		}
		free(prom);
		findings__free(fs);
		model__free(m);
	}
}

/* the target's cuDeviceGetAttribute(&v, ATTR, DEV) returning RESULT */
static void cu_attr(struct model *m, double t, __u32 attr, __u32 dev, __u32 v, int result)
{
	struct gmt_gpu_call e;

	memset(&e, 0, sizeof(e));
	event__init(&e.hdr, GMT_EV_GPU_CALL, sizeof(e), T(t), 100);
	e.api = GMT_API_CU;
	e.op = GMT_GOP_ATTR;
	e.kind = GMT_GK_DEVICE;
	e.mem_type = ~0u;
	e.handle = dev;
	e.aux2 = attr;
	e.aux = v;
	e.result = result;
	model__add(m, &e.hdr);
}

/* issue 38 for CUDA: a device whose CU_DEVICE_ATTRIBUTE_INTEGRATED is 1
 * (Jetson, GB10) has the host's RAM for memory: its cuMemAlloc bytes are
 * counted once, in the host's; 0, or no answer, or several devices of which
 * one is not integrated: apart, as before */
void test_findings_unified_cuda(void)
{
	static const struct {
		int integrated[2]; /* devices 0 and 1; -1: not asked */
		bool other_attrs;  /* attributes other than 18, and failed calls */
		bool host_ram;
		size_t devices;
	} cases[] = {
		{ { 1, -1 }, false, true, 1 },	 { { 0, -1 }, false, false, 1 },
		{ { -1, -1 }, false, false, 0 }, { { 1, 0 }, false, false, 2 },
		{ { 1, 1 }, true, true, 2 },	 { { -1, -1 }, true, false, 0 },
	};
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model *m = model_of_run(2);
		struct findings *fs;
		const struct model_proc *p;
		struct category cats[CAT_MAX];
		struct gmt_meminfo mi;
		size_t n, seen = 0;
		struct req_delta d;
		const char *what = NULL;
		double limit = 0;
		__u32 dev;

		memset(&mi, 0, sizeof(mi));
		event__init(&mi.hdr, GMT_EV_MEMINFO, sizeof(mi), T(1.5), 0);
		mi.total_kb = 4 << 20;
		mi.available_kb = 1 << 20;
		model__add(m, &mi.hdr);
		for (dev = 0; dev < 2; dev++) {
			if (cases[i].other_attrs) {
				cu_attr(m, 2, 16, dev, 132, 0);
				cu_attr(m, 2, GMT_CU_ATTR_INTEGRATED, dev, 1, 101);
			}
			if (cases[i].integrated[dev] >= 0) /* asked twice: one device */
				for (k = 0; k < 2; k++)
					cu_attr(m, 2 + k * 0.1, GMT_CU_ATTR_INTEGRATED, dev,
						cases[i].integrated[dev], 0);
		}
		rss_at(m, 2.9, 200ull << 20);
		for (k = 0; k < 12; k++) {
			double t = 3 + k;

			http_event(m, t, 10 + k, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
			gpu_call(m, t + 0.1, GMT_API_CU, GMT_GOP_ALLOC, GMT_GK_DEVICE, 0x100 + k,
				 8 << 20, 0, ~0u);
			rss_at(m, t + 0.3, (200ull << 20) + (k + 1) * (8 << 20));
			http_event(m, t + 0.5, 10 + k, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
			http_event(m, t + 0.6, 10 + k, GMT_HTTP_RESP_END, NULL, 200,
				   GMT_HTTP_END_LENGTH);
		}
		fs = findings__build(m);
		p = model__proc(m, 100);
		ASSERT_EQ(m->nr_devices, cases[i].devices, "a device per ordinal asked");
		for (k = 0; k < m->nr_devices; k++)
			ASSERT_TRUE(m->devices[k].api == MODEL_API_CU &&
					    m->devices[k].type ==
						    (cases[i].integrated[k] ?
							     MODEL_GPU_TYPE_INTEGRATED :
							     MODEL_GPU_TYPE_DISCRETE) &&
					    (m->devices[k].memory == MODEL_DEVMEM_HOST_RAM) ==
						    (cases[i].integrated[k] == 1),
				    "integrated: the host's RAM; else separate");
		ASSERT_EQ(model__host_ram(m, MODEL_API_CU), cases[i].host_ram,
			  "CUDA's memory is the host's");
		ASSERT_TRUE(!model__host_ram(m, MODEL_API_VK), "not Vulkan's");
		n = p ? categories__list(m, p, cats, CAT_MAX) : 0;
		for (k = 0; k < n; k++) {
			if (strcmp(cats[k].name, "cuda_device"))
				continue;
			seen++;
			ASSERT_EQ(cats[k].in_host, cases[i].host_ram, "counted in the host's");
			ASSERT_EQ(category__in_total(&cats[k]), !cases[i].host_ram,
				  "in the total only where it is not the host's");
			if (cases[i].host_ram)
				ASSERT_TRUE(
					category__limit(m, p, &cats[k], 96 << 20, &limit, &what) &&
						!strcmp(what, "the host's available RAM") &&
						limit == (96 << 20) + (1ull << 30),
					"runs out where the host's RAM does");
			else
				ASSERT_TRUE(
					!category__limit(m, p, &cats[k], 96 << 20, &limit, &what),
					"a discrete device's: no limit known (no NVML here)");
		}
		ASSERT_EQ(seen, 1, "the CUDA device memory");
		if (p && p->nr_reqs) {
			requests__delta(m, p, &p->reqs[0], &d);
			ASSERT_EQ(requests__memory(&d), cases[i].host_ram ? 8 << 20 : 16 << 20,
				  "a request's memory: each byte once");
		}
		if (cases[i].host_ram) {
			const struct finding *host = find_finding(fs, F_STEADY, "host_anon");

			ASSERT_TRUE(host != NULL,
				    "the host heap, less the CUDA bytes it holds, is steady");
			ASSERT_TRUE(fabs(less_gpu(host, &what) - (96 << 20)) <= 8192 &&
					    !strcmp(what, "CUDA"),
				    "says what was taken off, and whose: all 96 MiB, touched");
		} else
			ASSERT_TRUE(find_finding(fs, F_LEAK, "host_anon") != NULL,
				    "apart: the host heap's growth is its own");
		findings__free(fs);
		model__free(m);
	}
}

/* the leaky model: a leak, growth the API does not explain, and the failure
 * with what was live */
void test_findings(void)
{
	struct model *m = leaky_model(true), *empty = model__new();
	const struct finding *f;
	struct findings *fs;
	char *text;

	fs = findings__build(m);
	if (!ASSERT_TRUE(fs != NULL, "findings"))
		goto out;
	f = find_finding(fs, F_LEAK, "cuda_device");
	if (ASSERT_TRUE(f != NULL, "a CUDA device leak")) {
		ASSERT_EQ((long long)f->bytes_per_request, 1 << 20, "1 MiB a request");
		ASSERT_EQ(f->points, 13, "the level before the first request, and after each");
		ASSERT_TRUE(f->nr_stacks == 3 && f->stacks[0].bytes == 4 << 20,
			    "held by three stacks, 4 MiB the most");
		/* 80 GiB free at 3 MiB a request, as NVML says */
		ASSERT_TRUE(f->requests_to_exhaustion > 80000, "the GPU's free memory is far");
	}
	f = find_finding(fs, F_UNEXPLAINED, "nvml_device");
	if (ASSERT_TRUE(f != NULL, "growth the API does not explain"))
		ASSERT_EQ((long long)(f->bytes_per_request / 1024 + 0.5), 2048, "2 MiB a request");
	f = find_finding(fs, F_ALLOC_FAILURE, "cuda_device");
	if (ASSERT_TRUE(f != NULL, "the failure")) {
		ASSERT_EQ(finding__reason(f), M_FAILED, "said as a failed call");
		ASSERT_TRUE(!strcmp(f->says[0].a.M_FAILED.result, "CUDA_ERROR_OUT_OF_MEMORY"),
			    "its result");
		ASSERT_EQ(f->nr_stacks, 3, "what was live, by stack");
	}
	ASSERT_EQ(fs->v[0].kind, F_ALLOC_FAILURE, "the most urgent first");
	text = report_text(m);
	ASSERT_TRUE(text && strstr(text, "Verdicts\n  ALLOCATION FAILURE: CUDA device"),
		    "the report opens with them");
	free(text);
	findings__free(fs);
	/* nothing to judge is no crash */
	fs = findings__build(empty);
	ASSERT_TRUE(fs && fs->n == 0, "no findings without events");
	findings__free(fs);
out:
	model__free(empty);
	model__free(m);
}

/* a fresh server's first request makes its shaders and buffers; a cache that
 * fills behind it, then levels, is no steady heap */
static void run_behind_warm_up(struct model *m, double warm_up)
{
	double level = 200ull << 20;
	size_t i;

	rss_at(m, 2.9, (__u64)level);
	for (i = 0; i < 30; i++) {
		double t = 3 + i;

		level += i == 0 ? warm_up : i < 7 ? 1.5 * (1 << 20) : 0;
		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		rss_at(m, t + 0.3, (__u64)level + 4096 * (i % 3));
		http_event(m, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
}

static const struct finding_say *evidence_of(const struct finding *f, enum say code)
{
	size_t k;

	for (k = 0; f && k < f->nr_evidence; k++)
		if (f->evidence[k].code == code)
			return &f->evidence[k];
	return NULL;
}

void test_findings_first_left_out(void)
{
	struct model *m = model_of_run(2), *plain = model_of_run(2);
	const struct finding_say *e;
	const struct finding *f;
	struct findings *fs, *ps;

	run_behind_warm_up(m, 35 << 20);
	run_behind_warm_up(plain, 1.5 * (1 << 20));
	fs = findings__build(m);
	ps = findings__build(plain);
	ASSERT_TRUE(!find_finding(fs, F_STEADY, "host_anon"), "not steady behind a warm-up");
	f = find_finding(fs, F_BOUNDED, "host_anon");
	if (!f)
		f = find_finding(fs, F_SETTLED, "host_anon");
	e = evidence_of(f, E_FIRST_LEFT_OUT);
	if (ASSERT_TRUE(e != NULL, "levelled off, judged without request 1")) {
		ASSERT_EQ((long long)e->a.E_FIRST_LEFT_OUT.step >> 20, 35,
			  "which raised it by 35 MiB");
		ASSERT_EQ((long long)e->a.E_FIRST_LEFT_OUT.request, 1, "request 1");
	}
	f = find_finding(ps, F_BOUNDED, "host_anon");
	if (!f)
		f = find_finding(ps, F_SETTLED, "host_anon");
	ASSERT_TRUE(f != NULL, "without a warm-up, the same verdict");
	ASSERT_TRUE(!evidence_of(f, E_FIRST_LEFT_OUT), "from every request");
	findings__free(fs);
	findings__free(ps);
	model__free(m);
	model__free(plain);
}

/* over time (no requests), a rise then a level: a ceiling only once the
 * level has held as long as the rise took; before that, a leak that paused
 * looks the same, and the verdict is too early to tell */
static struct model *rise_then_hold(size_t held)
{
	struct model *m = model__new();
	struct gmt_end end;
	size_t i;

	send_session(model__add, m, 100);
	for (i = 0; i < 15 + held; i++)
		send_rss(model__add, m, 100, 1 + i, GMT_RSS_ANON,
			 (100ll << 20) + (i < 15 ? i : 14) * (8ll << 20) + 4096 * (i % 2));
	event__init(&end.hdr, GMT_EV_END, sizeof(end), T(15 + held), 100);
	end.reason = GMT_END_SIGNAL;
	model__add(m, &end.hdr);
	return m;
}

void test_findings_time_rise_held_briefly(void)
{
	static const struct {
		size_t held;
		bool ceiling;
	} cases[] = { { 3, false }, { 8, false }, { 20, true }, { 40, true } };
	const struct finding *f;
	struct findings *fs;
	struct model *m;
	char *text, line[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = rise_then_hold(cases[i].held);
		fs = findings__build(m);
		f = find_finding(fs, F_GROWING, "host_anon");
		printf("# held %zu points: %s\n", cases[i].held,
		       f ? findings__say_name(finding__reason(f)) :
		       find_finding(fs, F_BOUNDED, "host_anon") ? "bounded" :
		       find_finding(fs, F_SETTLED, "host_anon") ? "settled" :
								  "other");
		if (cases[i].ceiling) {
			ASSERT_TRUE(!f && (find_finding(fs, F_BOUNDED, "host_anon") ||
					   find_finding(fs, F_SETTLED, "host_anon")),
				    "held longer than it rose: a ceiling");
		} else if (ASSERT_TRUE(f && finding__reason(f) == M_HELD_BRIEFLY,
				       "held briefly: too early to tell")) {
			ASSERT_TRUE(!find_finding(fs, F_BOUNDED, "host_anon") &&
					    !find_finding(fs, F_LEAK, "host_anon"),
				    "neither a cache nor a leak");
			ASSERT_EQ((long long)f->ceiling >> 20, 212, "the level it held");
			text = report_text(m);
			ASSERT_TRUE(text && strstr(text, "rose by 112.0 MiB over 1") &&
					    strstr(text, "then held at 212.0 MiB for the last") &&
					    strstr(text, "too early to tell a ceiling"),
				    "the report says what it saw and why it will not call it");
			ASSERT_TRUE(strstr(words__line(f, line, sizeof(line)),
					   "rose to 212.0 MiB and held briefly, too early to tell"),
				    "the live view's line");
			free(text);
		}
		findings__free(fs);
		model__free(m);
	}
}

/* a long run: 5000 requests are judged as quickly as 50, and alike */
void test_findings_long_run(void)
{
	struct model *m = model_of_run(2);
	const struct finding *f;
	struct findings *fs;
	int i;

	for (i = 0; i < 5000; i++) {
		double t = 3 + i * 0.01;

		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		gpu_call(m, t + 0.001, GMT_API_CU, GMT_GOP_ALLOC, GMT_GK_DEVICE, 0x1000 + i, 4096,
			 0, ~0u);
		http_event(m, t + 0.004, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.005, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	fs = findings__build(m);
	f = find_finding(fs, F_LEAK, "cuda_device");
	if (ASSERT_TRUE(f != NULL, "a leak over 5000 requests"))
		ASSERT_EQ((long long)(f->bytes_per_request + 0.5), 4096, "4 KiB a request");
	findings__free(fs);
	model__free(m);
}

/* the live view's line of a cache still filling says where it is going,
 * never that it levelled off there (issue 48: "levelled off at 8.08 GiB"
 * while the heap was at 181.6 MiB); a leak beside the cache says so */
void test_words_line_of_a_filling_cache(void)
{
	struct finding f = { .kind = F_BOUNDED, .nr_says = 1, .per_request = true };
	struct say_in_M_CACHE_FILLING in = { .where = "host heap", .mib = 8192 };
	struct say_in_M_LEAK_BESIDE_CACHE leak = { .where = "host heap", .label = "gmt_leak_keep" };
	char line[256];

	f.bytes_per_request = 18.8 * 1048576;
	f.ceiling = 8.08 * 1073741824;
	f.requests_to_exhaustion = NAN;
	snprintf(f.where, sizeof(f.where), "host heap");
	says__M_CACHE_FILLING(&f.says[0], &in);
	words__line(&f, line, sizeof(line));
	printf("# %s\n", line);
	ASSERT_TRUE(strstr(line, "a cache filling toward 8.08 GiB") &&
			    !strstr(line, "levelled off"),
		    "filling toward its ceiling, not levelled off at it");
	f.kind = F_LEAK;
	says__M_LEAK_BESIDE_CACHE(&f.says[0], &leak);
	words__line(&f, line, sizeof(line));
	printf("# %s\n", line);
	ASSERT_TRUE(strstr(line, "beside the prompt cache") != NULL, "a leak beside the cache");
	/* and what holds it, as the live view and Prometheus show it */
	finding__str(&f, "holder", "gmt_leak_keep");
	words__line(&f, line, sizeof(line));
	printf("# %s\n", line);
	ASSERT_TRUE(strstr(line, "held by gmt_leak_keep") != NULL, "the leak's holder named");
}

/* the words of the verdicts: every code has a name and a sentence that
 * holds its figures, and nothing of a format string shows */
void test_words_of_each_code(void)
{
	struct finding f = { .kind = F_LEAK, .nr_says = 1 };
	char buf[2048], name[64];
	unsigned int code, bad = 0, unnamed = 0;

	for (code = SAY_NONE + 1; code < SAY_NR; code++) {
		/* each code's strings and figures, in the order says.h names them */
		static const double v[] = { 3, 2, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
		static const char *const s[] = { "alpha", "beta", "gamma", "delta" };
		size_t vi = 0, si = 0;

		switch ((enum say)code) {
#define S(n) in.n = s[si++];
#define V(n) in.n = v[vi++];
#define X(c, json, ...)                                 \
	case c: {                                       \
		struct say_in_##c in = {};              \
                                                        \
		__VA_ARGS__ says__##c(&f.says[0], &in); \
		break;                                  \
	}
			SAYS(X)
#undef X
#undef S
#undef V
		default:
			break;
		}
		(void)vi;
		(void)si;
		words__message(&f, buf, sizeof(buf));
		snprintf(name, sizeof(name), "%s", findings__say_name(code));
		unnamed += !strcmp(name, "?");
		if (!buf[0] || strstr(buf, "(null)") || strstr(buf, "%s") || strstr(buf, "%.") ||
		    strstr(buf, "%z") || strstr(buf, "%l") || strstr(buf, "%d") ||
		    strstr(buf, "%u")) {
			printf("# %s: \"%s\"\n", name, buf);
			bad++;
		}
	}
	ASSERT_EQ(unnamed, 0, "every code has a name");
	ASSERT_EQ(bad, 0, "every code has words");
	/* the figures are the finding's: a leak over time runs out in seconds */
	says__M_RUNS_OUT(&f.says[0],
			 &(const struct say_in_M_RUNS_OUT){ .what = "the machine's memory",
							    .limit = 1 << 30,
							    .more = 120,
							    .pr = 0,
							    .host = 1 });
	words__message(&f, buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "(1.00 GiB) runs out after about 120 more seconds: unless") != NULL,
		    buf);
	ASSERT_TRUE(strstr(buf, "OOM-killed") != NULL, "host memory: the OOM killer");
	f.says[0].a.M_RUNS_OUT.host = 0;
	words__message(&f, buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "OOM-killed") == NULL, "device memory: no OOM killer");
	/* 41 levels, one before each request and one after the last, span 40
	 * requests; 41 samples are 41 */
	says__E_SHAPE_FIT(&f.says[0], &(const struct say_in_E_SHAPE_FIT){ .shape = "settled",
									  .points = 41,
									  .pr = 1,
									  .slope = 1024,
									  .noise = 0,
									  .confidence = 1 });
	words__message(&f, buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "settled over 40 requests:") != NULL, buf);
	f.says[0].a.E_SHAPE_FIT.pr = 0;
	words__message(&f, buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "settled over 41 samples:") != NULL, buf);
}

/* what a request did to memory, one rule for the report's table and the
 * live view: the first request made the first GPU allocation (its level
 * before had no point yet: 0), and both say +1.0 MiB for it as for the rest */
void test_request_delta_one_rule(void)
{
	struct top_line *l = calloc(256, sizeof(*l));
	struct model *m = leaky_model(false);
	struct top_state st = { .refresh_s = 1, .now = T(16) };
	const struct model_proc *p = model__proc(m, 100);
	struct req_delta d;
	size_t n, i, rows = 0;
	char *text;

	if (!ASSERT_TRUE(l && p && p->nr_reqs == 12, "the model"))
		goto out;
	for (i = 0; i < p->nr_reqs; i++) {
		requests__delta(m, p, &p->reqs[i], &d);
		ASSERT_EQ(d.gpu, 1 << 20, "each request's GPU API memory");
	}
	text = report_text(m);
	ASSERT_TRUE(text && strstr(text, "+1.0 MiB"), "the report's table");
	free(text);
	m->target_pid = 100;
	n = top__layout(m, NULL, &st, 100, 160, l, 256);
	for (i = 0; i < n; i++) {
		if (!strstr(l[i].text, "/v1/completions"))
			continue;
		rows++;
		if (!ASSERT_TRUE(strstr(l[i].text, "+1.0 MiB") != NULL, "the view's row"))
			printf("# %s\n", l[i].text);
	}
	ASSERT_EQ(rows, 12, "every request in the view");
out:
	model__free(m);
	free(l);
}

/* memory by what it is for: GPU memory live now by its stacks' roles,
 * biggest first and "other" last; host memory by who touched it first;
 * both in the live view's memory panel */
void test_roles_by_stack(void)
{
	static const char *const syms[] = { "llama_kv_cache::llama_kv_cache", "load_tensors",
					    "ggml_gallocr_reserve_n", "unnamed_helper",
					    "server_prompt_cache::alloc" };
	static const __u64 sizes[] = { 980ull << 20, 225ull << 20, 5939, 1 << 20 };
	struct top_line *l = calloc(256, sizeof(*l));
	struct model *m = model_of_run(2);
	struct top_state st = { .refresh_s = 1 };
	struct gmt_gpu_call e;
	struct findings *fs;
	char buf[256];
	size_t n;
	int i;

	for (i = 0; i < 5; i++)
		named_stack(m, 11 + i, syms[i]);
	for (i = 0; i < 5; i++) { /* two KV buffers, one each of the others */
		event__init(&e.hdr, GMT_EV_GPU_CALL, sizeof(e), T(1 + 0.1 * i), 100);
		e.api = GMT_API_VK;
		e.op = GMT_GOP_ALLOC;
		e.kind = GMT_GK_DEVICE;
		e.handle = 0x1000 + i;
		e.size = sizes[i ? i - 1 : 0];
		e.result = 0;
		e.mem_type = 0;
		e.stack_id = 11 + (i ? i - 1 : 0);
		model__add(m, &e.hdr);
	}
	for (i = 0; i < 4; i++)
		touch_at(m, 2 + i, i < 3 ? 15 : 14);
	n = findings__gpu_roles(m, model__proc(m, 100), T(3), buf, sizeof(buf));
	ASSERT_TRUE(n > 0, "GPU memory has roles");
	ASSERT_STR(
		buf,
		"KV cache 1.91 GiB, model weights 225.0 MiB, compute buffers 5.8 KiB, other 1.0 MiB",
		"GPU memory by role");
	n = findings__touch_roles(m, model__proc(m, 100), T(10), buf, sizeof(buf));
	ASSERT_STR(buf, "prompt cache 3.0 MiB, other 1.0 MiB",
		   "host memory by who touched it first");
	n = findings__touch_roles(m, model__proc(m, 100), T(1.5), buf, sizeof(buf));
	ASSERT_TRUE(n == 0, "nothing touched yet");
	m->target_pid = 100;
	st.now = T(10);
	fs = findings__build(m);
	n = l ? top__layout(m, fs, &st, 40, 200, l, 256) : 0;
	ASSERT_TRUE(screen_has(l, n, "GPU for: KV cache 1.91 GiB") &&
			    screen_has(l, n, "host first touched: prompt cache 3.0 MiB"),
		    "the live view says what memory is for");
	{ /* and the metrics, by role and category */
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (f) {
			report__prometheus(f, m, fs);
			fclose(f);
		}
		ASSERT_TRUE(text && strstr(text, "role=\"KV cache\",category=\"vulkan_device\"} "
						 "2055208960\n"),
			    "metrics: the KV cache's two buffers");
		ASSERT_TRUE(text && strstr(text, "role=\"other\",category=\"vulkan_device\"} "
						 "1048576\n"),
			    "metrics: GPU memory of no role");
		ASSERT_TRUE(text && strstr(text, "role=\"prompt cache\",category=\"host_anon\"} "
						 "3145728\n"),
			    "metrics: host memory first touched by the prompt cache");
		free(text);
	}
	findings__free(fs);
	free(l);
	model__free(m);
}

/* llama-server (its exec), 14 requests; its heap before each and after
 * the last at level[i]; each request's rise first touched by `stack` */
static struct model *server_run(const double *level, __u32 stack, const char *sym)
{
	struct model *m = model_of_run(2);
	struct gmt_exec x;
	int i;

	event__init(&x.hdr, GMT_EV_EXEC, sizeof(x), T(0.3), 100);
	strcpy(x.comm, "llama-server");
	strcpy(x.filename, "/opt/llama/llama-server");
	model__add(m, &x.hdr);
	named_stack(m, stack, sym);
	rss_at(m, 2.9, (__u64)level[0]);
	for (i = 0; i < 14; i++) {
		double t = 3 + i, k;

		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		for (k = 0; k < level[i + 1] - level[i]; k += 1 << 20)
			touch_at(m, t + 0.1, stack);
		rss_at(m, t + 0.3, (__u64)level[i + 1]);
		http_event(m, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	return m;
}

/* GPU memory of 24 requests: compute buffers made larger for the first 12
 * (8 MiB more each, the old one freed: bounded, once per shape) and, with
 * leak_mib, a helper of no role keeping that much more each request */
static struct model *gpu_holders_run(double leak_mib)
{
	struct model *m = model_of_run(2);
	struct gmt_exec x;
	__u64 h = 0;
	int i;

	event__init(&x.hdr, GMT_EV_EXEC, sizeof(x), T(0.3), 100);
	strcpy(x.comm, "llama-server");
	strcpy(x.filename, "/opt/llama/llama-server");
	model__add(m, &x.hdr);
	/* gpu_call's stack: the handle's remainder by 3, plus 1 */
	named_stack(m, 1, "ggml_gallocr_reserve_n");
	named_stack(m, 2, "unnamed_helper");
	rss_at(m, 2.9, 200ull << 20);
	for (i = 0; i < 24; i++) {
		double t = 3 + i;

		http_event(m, t, 10 + i, GMT_HTTP_REQUEST, "/v1/completions", 0, 0);
		if (i < 12) {
			if (i)
				gpu_call(m, t + 0.05, GMT_API_VK, GMT_GOP_FREE, GMT_GK_VK_MEMORY,
					 3 * (i - 1), 0, 0, 0);
			gpu_call(m, t + 0.1, GMT_API_VK, GMT_GOP_ALLOC, GMT_GK_VK_MEMORY, 3 * i,
				 (__u64)(i + 1) * (8 << 20), 0, 0);
		}
		if (leak_mib > 0)
			gpu_call(m, t + 0.2, GMT_API_VK, GMT_GOP_ALLOC, GMT_GK_VK_MEMORY,
				 3 * (100 + h++) + 1, (__u64)(leak_mib * (1 << 20)), 0, 0);
		rss_at(m, t + 0.3, (200ull << 20) + 4096 * (i % 3));
		http_event(m, t + 0.5, 10 + i, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
		http_event(m, t + 0.6, 10 + i, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	}
	return m;
}

/* a GPU holder judged on its own series: a leak of 1 MiB a request beside
 * compute buffers that grew 96 MiB is a leak named by its stack; without it,
 * or with the helper's memory freed again, none */
void test_findings_leak_beside_gpu_holders(void)
{
	static const double leaks[] = { 1, 0 };
	const struct finding *f;
	struct findings *fs;
	struct model *m;
	char said[2048];
	size_t i, k;
	double rate;

	for (i = 0; i < 2; i++) {
		m = gpu_holders_run(leaks[i]);
		fs = findings__build(m);
		for (f = NULL, k = 0; fs && k < fs->n; k++)
			if (!strcmp(fs->v[k].category, "vulkan_memory"))
				f = &fs->v[k];
		if (ASSERT_TRUE(f != NULL, "Vulkan memory judged")) {
			printf("# %g MiB a request: %s, %s: %s\n", leaks[i],
			       findings__kind_name(f->kind), findings__say_name(finding__reason(f)),
			       words__message(f, said, sizeof(said)));
			for (rate = NAN, k = 0; k < f->nr_nums; k++)
				if (!strcmp(f->nums[k].key, "leak_bytes_per_request"))
					rate = f->nums[k].v;
			if (leaks[i] > 0) {
				ASSERT_TRUE(f->kind == F_LEAK &&
						    finding__reason(f) == M_LEAK_BESIDE_HOLDERS,
					    "a leak beside the holders with a bound");
				ASSERT_TRUE(finding__str_of(f, "holder") &&
						    strstr(finding__str_of(f, "holder"),
							   "unnamed_helper"),
					    "named by its stack");
				ASSERT_TRUE(fabs(rate - (1 << 20)) < 0.1 * (1 << 20),
					    "at its rate");
			} else {
				ASSERT_TRUE(f->kind != F_LEAK, "no leak without it");
			}
		}
		findings__free(fs);
		model__free(m);
	}
}

/* --fit makes the context slots x the model's only for -np N > 1 with no
 * -c and no shared KV buffer (llama.cpp's server.cpp and common/fit.cpp) */
void test_llama_conf_fit_scaled(void)
{
	static const struct {
		const char *cmd, *env;
		bool scaled;
	} cases[] = {
		{ "llama-server -m m.gguf -np 4", "", true },
		{ "llama-server -m m.gguf --parallel=2 -c 0", "", true },
		{ "llama-server -m m.gguf", "", false }, /* auto: 4 slots, unified */
		{ "llama-server -m m.gguf -np 4 -c 8192", "", false },
		{ "llama-server -m m.gguf -np 4 -kvu", "", false },
		{ "llama-server -m m.gguf -np 4 --kv-unified -no-kvu", "", true },
		{ "llama-server -m m.gguf -np 4 --fit off", "", false },
		{ "llama-server -m m.gguf -np 1", "", false },
		{ "llama-server -m m.gguf -np 4 --kv-unified-per-slot 4096", "", false },
		{ "llama-server -m m.gguf -np 4", "LLAMA_ARG_KV_UNIFIED=1", false },
		{ "llama-server -m m.gguf", "LLAMA_ARG_N_PARALLEL=3", true },
		{ "llama-server -m m.gguf -np 4", "LLAMA_ARG_CTX_SIZE=4096", false },
	};
	struct model_proc p = { 0 };
	struct llama_conf c;
	char cmd[128], env[64];
	size_t i;

	strcpy(p.comm, "llama-server");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s", cases[i].cmd);
		snprintf(env, sizeof(env), "%s", cases[i].env);
		p.cmdline = cmd;
		p.env = env;
		p.env_len = strlen(env) + 1;
		ASSERT_TRUE(llama_conf__read(&p, &c), cases[i].cmd);
		ASSERT_TRUE(llama_conf__ctx_scaled(&c) == cases[i].scaled, cases[i].cmd);
	}
}

static bool says(const struct finding *f, enum say code)
{
	size_t i;

	for (i = 0; f && i < f->nr_says; i++)
		if (f->says[i].code == code)
			return true;
	return false;
}

/* the same growth, judged by what holds it: the prompt cache within
 * --cache-ram fills, compute buffers warm up once per shape, memory in
 * no role with a bound leaks; and a level that rose and held is not steady */
void test_findings_by_role_and_bound(void)
{
	static const struct {
		const char *sym;
		enum finding_kind kind;
		enum say reason;
		const char *bound;
	} cases[] = {
		{ "server_prompt_cache::alloc", F_BOUNDED, M_ROLE_FILLING, "cache_ram" },
		{ "ggml_gallocr_reserve_n", F_GROWING, M_ROLE_WITHIN, "per_shape" },
		{ "unnamed_helper", F_LEAK, M_LEAK, "none" },
	};
	/* 4 MiB a request with a little noise; then one that rose and swung */
	double line[15], held[15] = { 70,  100, 85,  130, 110, 160, 140, 200,
				      150, 190, 160, 200, 155, 195, 170 };
	const struct finding *f;
	struct findings *fs;
	struct model *m;
	char *text;
	size_t i, k;

	for (i = 0; i < 15; i++) {
		line[i] = (100.0 + 4 * i) * (1 << 20) + 8192 * (i % 3);
		held[i] *= 1 << 20;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = server_run(line, 31, cases[i].sym);
		fs = findings__build(m);
		for (f = NULL, k = 0; fs && k < fs->n; k++)
			if (!strcmp(fs->v[k].category, "host_anon"))
				f = &fs->v[k];
		if (ASSERT_TRUE(f != NULL, cases[i].sym)) {
			printf("# %s: %s, %s\n", cases[i].sym, findings__kind_name(f->kind),
			       findings__say_name(finding__reason(f)));
			ASSERT_EQ(f->kind, cases[i].kind, cases[i].sym);
			ASSERT_EQ(finding__reason(f), cases[i].reason, cases[i].sym);
			ASSERT_TRUE(f->nr_roles > 0 &&
					    !strcmp(findings__bound_name(f->role_v[0].bound),
						    cases[i].bound),
				    "the role's bound");
			ASSERT_TRUE(cases[i].kind != F_LEAK || says(f, M_LEAK_UNBOUNDED),
				    "a leak held in no role with a bound says so");
		}
		findings__free(fs);
		model__free(m);
	}
	m = server_run(held, 31, "unnamed_helper");
	fs = findings__build(m);
	f = find_finding(fs, F_SETTLED, "host_anon");
	ASSERT_TRUE(!find_finding(fs, F_STEADY, "host_anon"), "not steady after +100 MiB");
	if (ASSERT_TRUE(f != NULL && says(f, M_ROSE_HELD), "it rose and held")) {
		text = report_text(m);
		ASSERT_TRUE(text && strstr(text, "rose by 100.0 MiB (143%)"), "by how much");
		free(text);
	}
	findings__free(fs);
	model__free(m);
}

/* a role past its bound only past the sampling error: 6 samples of 1 MiB
 * against --cache-ram 4 MiB are within it; 600 of them are not; exact
 * (unsampled) bytes get no room */
void test_findings_role_past_bound_sampled(void)
{
	struct finding f;
	const struct finding_role *top;

	memset(&f, 0, sizeof(f));
	f.nr_roles = 1;
	snprintf(f.role_v[0].role, sizeof(f.role_v[0].role), "prompt cache");
	f.role_v[0].bound = ROLE_CACHE_RAM;
	f.role_v[0].bound_bytes = 4.0 * 1048576;
	f.role_v[0].bytes = f.role_v[0].held = 6.0 * 1048576;
	f.role_v[0].count = f.role_v[0].sampled = 6;
	ASSERT_TRUE(findings__roles_verdict(&f, &top) != ROLES_PAST_BOUND,
		    "6 samples of 1 MiB: within the error of 4 MiB");
	f.role_v[0].sampled = 0;
	ASSERT_TRUE(findings__roles_verdict(&f, &top) == ROLES_PAST_BOUND,
		    "6 MiB counted exactly: past 4 MiB");
	f.role_v[0].bound_bytes = 400.0 * 1048576;
	f.role_v[0].bytes = f.role_v[0].held = 600.0 * 1048576;
	f.role_v[0].count = f.role_v[0].sampled = 600;
	ASSERT_TRUE(findings__roles_verdict(&f, &top) == ROLES_PAST_BOUND,
		    "600 samples of 1 MiB: past 400 MiB");
}
