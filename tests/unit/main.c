// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the file format, the model and the report, in the manner of
 * the kernel's BPF selftests: subtests by name, ASSERT_* print what failed.
 * Prints "ok NAME", "not ok NAME - why" per subtest. The subtests live in a
 * file a topic beside this one; this is their list and the runner. */
#include <unistd.h>
#include "unit.h"

int failed;
char tmpdir[] = "/tmp/gmt-unit-XXXXXX";

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "unit_slow_major_faults_under_a_limit", test_slow_major_faults_under_a_limit },
	{ "unit_slow_reads_without_major_faults", test_slow_reads_without_major_faults },
	{ "unit_slow_cpu_throttled_and_neighbour", test_slow_cpu_throttled_and_neighbour },
	{ "unit_slow_usual_rates_of_two_levels", test_slow_usual_rates_of_two_levels },
	{ "unit_slow_gpu_clocks", test_slow_gpu_clocks },
	{ "unit_slow_prompt_state_copies", test_slow_prompt_state_copies },
	{ "unit_slow_no_cause_said", test_slow_no_cause_said },
	{ "unit_slow_not_material", test_slow_not_material },
	{ "unit_slow_controls", test_slow_controls },
	{ "unit_slow_without_counters", test_slow_without_counters },
	{ "unit_slow_in_the_view_and_the_metrics", test_slow_in_the_view_and_the_metrics },
	{ "unit_tracefile_roundtrip", test_tracefile_roundtrip },
	{ "unit_tracedir_rotates", test_tracedir_rotates },
	{ "unit_tracefile_truncated_everywhere", test_tracefile_truncated_everywhere },
	{ "unit_tracefile_corrupt_block", test_tracefile_corrupt_block },
	{ "unit_tracefile_bad_files", test_tracefile_bad_files },
	{ "unit_event_valid", test_event_valid },
	{ "unit_model_rss_and_faults", test_model_rss_and_faults },
	{ "unit_model_mappings", test_model_mappings },
	{ "unit_model_exec_resets", test_model_exec_resets },
	{ "unit_model_modules", test_model_modules },
	{ "unit_report_text", test_report_text },
	{ "unit_report_json", test_report_json },
	{ "unit_report_faults_classified", test_report_faults_classified },
	{ "unit_random_records_survive", test_random_records_survive },
	{ "unit_model_gpu", test_model_gpu },
	{ "unit_model_bo", test_model_bo },
	{ "unit_drm_fdinfo", test_drm_fdinfo },
	{ "unit_model_requests", test_model_requests },
	{ "unit_model_concurrent_slots", test_model_concurrent_slots },
	{ "unit_model_streams_headers_tie", test_model_streams_headers_tie },
	{ "unit_analyze_shapes", test_analyze_shapes },
	{ "unit_analyze_controls", test_analyze_controls },
	{ "unit_analyze_confidence", test_analyze_confidence },
	{ "unit_findings", test_findings },
	{ "unit_findings_counted_once", test_findings_counted_once },
	{ "unit_findings_unified_memory", test_findings_unified_memory },
	{ "unit_findings_unified_cuda", test_findings_unified_cuda },
	{ "unit_findings_role_past_bound_sampled", test_findings_role_past_bound_sampled },
	{ "unit_findings_first_left_out", test_findings_first_left_out },
	{ "unit_findings_time_rise_held_briefly", test_findings_time_rise_held_briefly },
	{ "unit_findings_long_run", test_findings_long_run },
	{ "unit_top_layout", test_top_layout },
	{ "unit_request_delta_one_rule", test_request_delta_one_rule },
	{ "unit_roles_by_stack", test_roles_by_stack },
	{ "unit_top_marks_image_requests", test_top_marks_image_requests },
	{ "unit_findings_by_role_and_bound", test_findings_by_role_and_bound },
	{ "unit_findings_leak_beside_gpu_holders", test_findings_leak_beside_gpu_holders },
	{ "unit_llama_conf_fit_scaled", test_llama_conf_fit_scaled },
	{ "unit_mappings_bounded", test_mappings_bounded },
	{ "unit_series_bounded", test_series_bounded },
	{ "unit_requests_bounded", test_requests_bounded },
	{ "unit_gpu_probe_shapes", test_gpu_probe_shapes },
	{ "unit_procfs_map_line", test_procfs_map_line },
	{ "unit_procfs_open_as", test_procfs_open_as },
	{ "unit_procfs_redact", test_procfs_redact },
	{ "unit_fmt", test_fmt },
	{ "unit_fmt_clean", test_fmt_clean },
	{ "unit_container_parse", test_container_parse },
	{ "unit_model_container", test_model_container },
	{ "unit_words_of_each_code", test_words_of_each_code },
	{ "unit_words_line_of_a_filling_cache", test_words_line_of_a_filling_cache },
	{ "unit_search_after", test_search_after },
	{ "unit_model_pid_taken_after_exit", test_model_pid_taken_after_exit },
	{ "unit_timings_scan", test_timings_scan },
	{ "unit_tracedir_keeps_bytes", test_tracedir_keeps_bytes },
	{ "unit_tracedir_current_never", test_tracedir_current_never },
	{ "unit_tracedir_exit_no_ghost", test_tracedir_exit_no_ghost },
	{ "unit_tracedir_devices_in_every_file", test_tracedir_devices_in_every_file },
};

int main(int argc, char **argv)
{
	size_t i;
	int any = 0;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		failed = 0;
		tests[i].fn();
		printf("%s %s\n", failed ? "not ok" : "ok", tests[i].name);
		fflush(stdout);
		any |= failed;
	}
	if (fork() == 0)
		execlp("rm", "rm", "-rf", tmpdir, (char *)NULL);
	return any;
}
