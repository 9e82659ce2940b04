// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the verdicts and a live-view frame cost as a run grows: a model of
 * N requests, each with its decode, an RSS change and a GPU allocation
 * (half freed again), an NVML sample every ten; then findings__build and
 * one 120x40 frame, timed.
 *   bench/verdicts [N...]   (default 100 1000 10000 100000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "analysis/findings.h"
#include "view/top_layout.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void add(struct model *m, void *e)
{
	model__add(m, e);
}

static struct model *model_of(long n)
{
	struct model *m = model__new();
	struct gmt_session s;
	__u64 t = 1000000000ull;
	long i;

	event__init(&s.hdr, GMT_EV_SESSION, sizeof(s), t, 100);
	s.interval_ms = 1000;
	s.target_pid = 100;
	s.page_size = 4096;
	add(m, &s);
	for (i = 0; i < n; i++, t += 50000000ull) {
		struct gmt_http h;
		struct gmt_decode d;
		struct gmt_rss r;
		struct gmt_gpu_call g;
		struct gmt_nvml v;

		event__init(&h.hdr, GMT_EV_HTTP, sizeof(h), t, 100);
		h.conn = i;
		h.kind = GMT_HTTP_REQUEST;
		strcpy(h.path, "/v1/completions");
		add(m, &h);
		event__init(&d.hdr, GMT_EV_DECODE, sizeof(d), t + 10000000, 100);
		d.kind = GMT_DEC_DECODE;
		d.n_tokens = 100;
		add(m, &d);
		event__init(&r.hdr, GMT_EV_RSS, sizeof(r), t + 11000000, 100);
		r.member = GMT_RSS_ANON;
		r.bytes = (100 + i) << 20;
		add(m, &r);
		event__init(&g.hdr, GMT_EV_GPU_CALL, sizeof(g), t + 12000000, 100);
		g.api = GMT_API_CU;
		g.op = GMT_GOP_ALLOC;
		g.kind = GMT_GK_DEVICE;
		g.handle = 0x10000 + i;
		g.size = 1 << 20;
		g.stack_id = i % 7 + 1;
		add(m, &g);
		if (i % 2) {
			g.hdr.ts_ns += 1000000;
			g.op = GMT_GOP_FREE;
			add(m, &g);
		}
		if (!(i % 10)) {
			event__init(&v.hdr, GMT_EV_NVML, sizeof(v), t + 20000000, 100);
			v.used = (__u64)(i + 1) << 20;
			v.total = 80ull << 30;
			add(m, &v);
		}
		h.kind = GMT_HTTP_RESP_BEGIN;
		h.status = 200;
		h.hdr.ts_ns = t + 30000000;
		add(m, &h);
		h.kind = GMT_HTTP_RESP_END;
		h.end = GMT_HTTP_END_LENGTH;
		h.hdr.ts_ns = t + 31000000;
		add(m, &h);
	}
	return m;
}

int main(int argc, char **argv)
{
	static const long sizes[] = { 100, 1000, 10000, 100000 };
	struct top_line *lines = calloc(64, sizeof(*lines));
	long n;
	int i, k, runs = 5;

	printf("| requests | events | verdicts (findings__build) | one 120x40 frame (layout) |\n");
	printf("|---|---|---|---|\n");
	for (i = 0; i < (argc > 1 ? argc - 1 : 4); i++) {
		struct top_state st = { .refresh_s = 1 };
		struct findings *fs = NULL;
		struct model *m;
		double t0, tf, tl;

		n = argc > 1 ? atol(argv[i + 1]) : sizes[i];
		m = model_of(n);
		st.now = m->last_ts;
		t0 = now_s();
		for (k = 0; k < runs; k++) {
			findings__free(fs);
			fs = findings__build(m);
		}
		tf = (now_s() - t0) / runs;
		t0 = now_s();
		for (k = 0; k < runs; k++) {
			top__sample(m, &st);
			top__layout(m, fs, &st, 40, 120, lines, 64);
		}
		tl = (now_s() - t0) / runs;
		printf("| %ld | %llu | %.2f ms (%zu findings) | %.2f ms |\n", n,
		       (unsigned long long)m->events, tf * 1e3, fs ? fs->n : 0, tl * 1e3);
		findings__free(fs);
		model__free(m);
	}
	free(lines);
	return 0;
}
