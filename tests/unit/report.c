// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the reports: the text and the JSON of a run, and both
 * over records of random content. */
#include <json-c/json.h>
#include "unit.h"
#include "report/report_data.h"

void test_report_text(void)
{
	struct model *m = model_of_run(8);
	char *t = report_text(m);
	const char *want[] = { "target   pid 100: ./server --port 8080",
			       "kernel 6.1.0-test",
			       "until interrupted",
			       "+112.0 MiB",
			       "Page faults",
			       "8 mmap (0 failed)",
			       "grow_cache+0x10 (server)",
			       "main+0x20 (server)",
			       "Lost events: mmap 7" };
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ASSERT_TRUE(strstr(t, want[i]) != NULL, want[i]);
	free(t);
	model__free(m);
}

void test_report_json(void)
{
	struct model *m = model_of_run(8);
	struct json_object *root, *p, *o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	write_report(f, m, true);
	fclose(f);
	root = json_tokener_parse(buf);
	if (!ASSERT_TRUE(root != NULL, "json parses"))
		return;
	p = json_object_array_get_idx(json_object_object_get(root, "processes"), 0);
	o = json_object_object_get(json_object_object_get(p, "rss"), "anon");
	ASSERT_EQ(json_object_get_int64(json_object_object_get(o, "change_bytes")), 112ll << 20,
		  "anon change");
	ASSERT_EQ(json_object_get_int64(json_object_object_get(o, "peak_bytes")), 128ll << 20,
		  "anon peak");
	o = json_object_object_get(json_object_object_get(p, "mappings"), "largest");
	ASSERT_EQ(json_object_array_length(o), 8, "largest mappings");
	o = json_object_object_get(json_object_array_get_idx(o, 0), "stack");
	ASSERT_STR(json_object_get_string(
			   json_object_object_get(json_object_array_get_idx(o, 0), "symbol")),
		   "grow_cache", "stack symbol");
	o = json_object_object_get(root, "lost_events");
	ASSERT_EQ(json_object_get_int64(json_object_object_get(o, "total")), 7, "lost total");
	o = json_object_object_get(root, "session");
	ASSERT_STR(json_object_get_string(json_object_object_get(o, "end_reason")), "signal",
		   "end reason");
	json_object_put(root);
	free(buf);
	model__free(m);
}

/* records of random content that pass validation: the model and both
 * reports must take them without crashing (run under ASan by hand too) */
void test_random_records_survive(void)
{
	union {
		struct gmt_hdr h;
		__u64 buf[512];
	} u;
	struct model *m = model__new();
	char *out = NULL;
	size_t len = 0, i, j, fed = 0;
	FILE *f;

	srand(1);
	for (i = 0; i < 20000; i++) {
		for (j = 0; j < sizeof(u.buf) / sizeof(u.buf[0]); j++)
			u.buf[j] = (__u64)rand() << 32 | rand();
		u.h.type = rand() % (GMT_EV_MAX + 2);
		u.h.len = 8 * (3 + rand() % 60);
		u.h.pid = rand() % 4;
		u.h.ts_ns = 1000000000ull + rand();
		if (u.h.type == GMT_EV_STACK) {
			/* short frame lists, so that the names can be found */
			((struct gmt_stack *)&u.h)->nr_frames = rand() % 3;
			memset((char *)&u.h + 32 + 16 * 3, 0, 64);
		}
		if (!event__valid(&u.h, sizeof(u)))
			continue;
		model__add(m, &u.h);
		fed++;
	}
	f = open_memstream(&out, &len);
	write_report(f, m, false);
	write_report(f, m, true);
	fclose(f);
	ASSERT_TRUE(fed > 1000, "enough valid records");
	ASSERT_TRUE(len > 0, "a report");
	free(out);
	model__free(m);
}

/* fault classes come from the fexit alone; a recording made when the perf
 * event's program classed them (the fexit skipped, saying so) still has them */
void test_report_faults_classified(void)
{
	static const struct {
		__u32 status;
		const char *name, *reason;
		bool want;
	} cases[] = {
		{ MODEL_PROBE_ATTACHED, "fexit:handle_mm_fault", "", true },
		{ MODEL_PROBE_SKIPPED, "fexit:handle_mm_fault",
		  "this kernel refuses fexit programs (Operation not permitted)", false },
		{ MODEL_PROBE_FAILED, "fexit:handle_mm_fault",
		  "attaching fexit_handle_mm_fault failed: not supported by this kernel (ENOTSUPP)",
		  false },
		{ MODEL_PROBE_SKIPPED, "fexit:handle_mm_fault",
		  "perf:page-faults classes them at the fault", true },
		{ MODEL_PROBE_ATTACHED, "perf:page-faults", "", false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model *m = model__new();

		m->probes = calloc(1, sizeof(*m->probes));
		m->nr_probes = m->probes_cap = 1;
		m->probes[0].status = cases[i].status;
		snprintf(m->probes[0].name, sizeof(m->probes[0].name), "%s", cases[i].name);
		snprintf(m->probes[0].reason, sizeof(m->probes[0].reason), "%s", cases[i].reason);
		ASSERT_TRUE(faults_classified(m) == cases[i].want, cases[i].reason);
		model__free(m);
	}
}
