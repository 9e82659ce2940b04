/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the unit tests share: the ASSERT_* macros, the subtests' verdict
 * (failed) and their temporary directory, the runs and events that
 * helpers.c builds, and each topic file's subtests for main.c's list. */
#ifndef GMT_TESTS_UNIT_H
#define GMT_TESTS_UNIT_H
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stream/event.h"
#include "model/model.h"
#include "view/top_layout.h"

extern int failed;
extern char tmpdir[];

#define ASSERT_TRUE(cond, tag)                                                                \
	({                                                                                    \
		bool ok_ = (cond);                                                            \
		if (!ok_) {                                                                   \
			printf("# %s:%d: %s: expected %s\n", __func__, __LINE__, tag, #cond); \
			failed = 1;                                                           \
		}                                                                             \
		ok_;                                                                          \
	})
#define ASSERT_EQ(a, b, tag)                                                                       \
	({                                                                                         \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_) {                                                                    \
			printf("# %s:%d: %s: %s = %lld, expected %lld\n", __func__, __LINE__, tag, \
			       #a, a_, b_);                                                        \
			failed = 1;                                                                \
		}                                                                                  \
		a_ == b_;                                                                          \
	})
#define ASSERT_STR(a, b, tag)                                                                     \
	({                                                                                        \
		bool ok_ = !strcmp((a), (b));                                                     \
		if (!ok_) {                                                                       \
			printf("# %s:%d: %s: \"%s\", expected \"%s\"\n", __func__, __LINE__, tag, \
			       (a), (b));                                                         \
			failed = 1;                                                               \
		}                                                                                 \
		ok_;                                                                              \
	})

__u64 T(double secs);
void send_session(gmt_sink_fn sink, void *ctx, __u32 pid);
void send_rss(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u32 member, __s64 v);
void send_mmap(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u64 addr, __u64 len,
	       __u32 stack);
void send_munmap(gmt_sink_fn sink, void *ctx, __u32 pid, double t, __u64 addr, __u64 len);
void send_stack(gmt_sink_fn sink, void *ctx, __u32 pid, __u32 id);
void synthetic_run(gmt_sink_fn sink, void *ctx, int steps);
struct model *model_of_run(int steps);
void write_report(FILE *f, const struct model *m, bool json);
char *report_text(const struct model *m);
void gpu_call(struct model *m, double t, unsigned int api, unsigned int op, unsigned int kind,
	      __u64 handle, __u64 size, int result, __u32 mem_type);
void http_event(struct model *m, double t, __u64 conn, __u16 kind, const char *path, __u16 status,
		__u16 end);
struct model *leaky_model(bool nvml);
void rss_at(struct model *m, double t, __u64 bytes);
void mmap_at(struct model *m, double t, __u64 addr, __u64 len, __u32 prot, __u32 stack);
bool screen_has(const struct top_line *l, size_t n, const char *what);
void named_stack(struct model *m, __u32 id, const char *sym);
void touch_at(struct model *m, double t, __u32 stack);

/* slow.c */
void test_slow_major_faults_under_a_limit(void);
void test_slow_reads_without_major_faults(void);
void test_slow_cpu_throttled_and_neighbour(void);
void test_slow_usual_rates_of_two_levels(void);
void test_slow_gpu_clocks(void);
void test_slow_prompt_state_copies(void);
void test_slow_no_cause_said(void);
void test_slow_not_material(void);
void test_slow_controls(void);
void test_slow_without_counters(void);
void test_slow_in_the_view_and_the_metrics(void);

/* stream.c */
void test_tracefile_roundtrip(void);
void test_tracedir_rotates(void);
void test_tracedir_keeps_bytes(void);
void test_tracedir_current_never(void);
void test_tracedir_exit_no_ghost(void);
void test_tracedir_devices_in_every_file(void);
void test_tracefile_truncated_everywhere(void);
void test_tracefile_corrupt_block(void);
void test_tracefile_bad_files(void);
void test_event_valid(void);
/* model.c */
void test_model_rss_and_faults(void);
void test_model_mappings(void);
void test_model_exec_resets(void);
void test_model_modules(void);
void test_model_pid_taken_after_exit(void);
void test_model_gpu(void);
void test_model_bo(void);
void test_model_requests(void);
void test_model_concurrent_slots(void);
void test_model_streams_headers_tie(void);
void test_requests_bounded(void);
void test_mappings_bounded(void);
void test_series_bounded(void);
void test_drm_fdinfo(void);
/* report.c */
void test_report_text(void);
void test_report_json(void);
void test_report_faults_classified(void);
void test_random_records_survive(void);
/* analysis.c */
void test_analyze_shapes(void);
void test_analyze_controls(void);
void test_analyze_confidence(void);
void test_findings_counted_once(void);
void test_findings_unified_memory(void);
void test_findings_unified_cuda(void);
void test_findings_role_past_bound_sampled(void);
void test_findings(void);
void test_findings_first_left_out(void);
void test_findings_time_rise_held_briefly(void);
void test_findings_long_run(void);
void test_words_of_each_code(void);
void test_words_line_of_a_filling_cache(void);
void test_request_delta_one_rule(void);
void test_roles_by_stack(void);
void test_llama_conf_fit_scaled(void);
void test_findings_by_role_and_bound(void);
void test_findings_leak_beside_gpu_holders(void);
/* view.c */
void test_top_layout(void);
void test_top_marks_image_requests(void);
/* source.c */
void test_procfs_map_line(void);
void test_procfs_open_as(void);
void test_procfs_redact(void);
void test_gpu_probe_shapes(void);
void test_timings_scan(void);
/* common.c */
void test_search_after(void);
void test_fmt(void);
void test_fmt_clean(void);
void test_container_parse(void);
void test_model_container(void);

#endif
