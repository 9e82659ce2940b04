// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the live view's layout: its panels on screens of each
 * size, and requests that carried an image. */
#include "unit.h"
#include "analysis/findings.h"

void test_top_layout(void)
{
	static const int sizes[][2] = { { 40, 120 }, { 24, 80 }, { 12, 40 }, { 6, 30 }, { 1, 10 } };
	struct top_line *l = calloc(256, sizeof(*l));
	struct model *m = leaky_model(false);
	struct top_state st = { .refresh_s = 1 };
	struct findings *fs;
	char plain[1024], spark[16];
	double ramp[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	size_t n, i, k, s;

	if (!ASSERT_TRUE(l != NULL, "memory"))
		goto out;
	m->target_pid = 100;
	for (i = 0; i < 5; i++) { /* five refreshes of history */
		st.now = T(4 + 3 * i);
		top__sample(m, &st);
	}
	st.baseline_ts = m->start_ts;
	fs = findings__build(m);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int rows = sizes[s][0], cols = sizes[s][1];

		n = top__layout(m, fs, &st, rows, cols, l, 256);
		ASSERT_TRUE(n >= 1 && n <= (size_t)rows, "no more lines than rows");
		for (i = 0; i < n; i++) {
			ASSERT_TRUE(strlen(l[i].text) <= (size_t)cols,
				    "no line wider than the screen");
			for (k = 0; k < l[i].nspan; k++)
				ASSERT_TRUE(l[i].span[k].at + l[i].span[k].len <= strlen(l[i].text),
					    "highlights inside their line");
		}
		ASSERT_TRUE(strstr(l[0].text, "pid 100") != NULL || cols < 20, "the header first");
		if (rows >= 24) {
			ASSERT_TRUE(screen_has(l, n, "LEAK") && screen_has(l, n, "FAILED"),
				    "the verdicts");
			ASSERT_TRUE(screen_has(l, n, "CUDA device memory"), "the memory panel");
			ASSERT_TRUE(screen_has(l, n, "12 in all"), "the requests panel");
			ASSERT_TRUE(screen_has(l, n, "+1.0 MiB"), "a request's memory");
			ASSERT_TRUE(screen_has(l, n, "CUDA_ERROR_OUT_OF_MEMORY"),
				    "the failure event");
			ASSERT_TRUE(strstr(l[n - 1].text, "q quit") != NULL, "the keys last");
		}
		if (rows == 6)
			ASSERT_TRUE(screen_has(l, n, "panels need"), "a tiny screen says so");
	}
	/* sort and help */
	st.mem_sort = TS_NAME;
	n = top__layout(m, fs, &st, 40, 120, l, 256);
	ASSERT_TRUE(screen_has(l, n, "(by name)"), "the sort is shown");
	st.help = true;
	n = top__layout(m, fs, &st, 40, 120, l, 256);
	ASSERT_TRUE(screen_has(l, n, "HELP") && !screen_has(l, n, "in all"),
		    "help replaces panels");
	top__plain(m, fs, &st, plain, sizeof(plain));
	ASSERT_TRUE(strstr(plain, "cuda_device 12.0 MiB") && strstr(plain, "leak cuda_device"),
		    "the plain line");
	top__spark(ramp, 8, spark, 8);
	ASSERT_STR(spark, " _.-=+*#", "a rising sparkline");
	top__spark(ramp, 8, spark, 4);
	ASSERT_STR(spark, " .+#", "the newest that fit, on their own scale");
	findings__free(fs);
out:
	free(l);
	model__free(m);
}

/* a request whose image the projector encodes is marked as one, in the
 * live view's requests panel */
void test_top_marks_image_requests(void)
{
	struct top_line *l = calloc(64, sizeof(*l));
	struct model *m = model_of_run(2);
	struct top_state st = { .refresh_s = 1 };
	struct gmt_decode e;
	struct findings *fs;
	size_t n;

	m->target_pid = 100;
	http_event(m, 3, 7, GMT_HTTP_REQUEST, "/v1/chat/completions", 0, 0);
	http_event(m, 3.5, 8, GMT_HTTP_REQUEST, "/completion", 0, 0);
	event__init(&e.hdr, GMT_EV_DECODE, sizeof(e), T(3.2), 100);
	memset(&e.kind, 0, sizeof(e) - offsetof(struct gmt_decode, kind));
	e.kind = GMT_DEC_IMAGE;
	e.dur_ns = 3000000;
	model__add(m, &e.hdr);
	st.now = T(4);
	fs = findings__build(m);
	n = l ? top__layout(m, fs, &st, 40, 120, l, 64) : 0;
	ASSERT_TRUE(screen_has(l, n, "/v1/chat/completions") && screen_has(l, n, " image"),
		    "the image request is marked");
	ASSERT_EQ(model__proc(m, 100)->reqs[0].image_ns, 3000000, "its encode");
	ASSERT_EQ(model__proc(m, 100)->reqs[1].image_ns, 0, "the text request has none");
	findings__free(fs);
	free(l);
	model__free(m);
}
