// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the run as a whole, in both reports: the session (what was traced, where,
 * how long), the trace file's damage, the probes, lost events, where the
 * tracer's memory caps bit, the count of events; and, in JSON only, the
 * host's RAM and NVML's devices */
#include <json-c/json.h>
#include "common/json_util.h"
#include "common/fmt.h"
#include "report.h"
#include "report_data.h"
#include "report_sections.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)

void print_header(FILE *out, const struct model *m)
{
	char when[48];

	fprintf(out, "gpumemtrace %s report\n", m->tool_version[0] ? m->tool_version : "?");
	if (!m->have_session) {
		fprintf(out, "  (the recording has no session record: its start is missing)\n");
		return;
	}
	if (m->watch)
		fprintf(out, "  target   every GPU process (--watch)%s\n",
			m->cmdline && *m->cmdline ? m->cmdline : "");
	else
		fprintf(out, "  target   pid %u: %s\n", m->target_pid,
			m->cmdline ? m->cmdline : "?");
	fprintf(out, "  host     %s (%s), kernel %s\n", m->host, m->arch, m->kernel);
	fprintf(out, "  started  %s\n", fmt_utc(when, sizeof(when), m->start_realtime_ns));
	fprintf(out, "  traced   %.2f s, %s; samples every %.2f s%s\n", model__duration_ns(m) / 1e9,
		end_reason_text(m->end_reason), m->interval_ms / 1e3,
		m->follow ? "; following children (-f)" : "");
}

void print_damage(FILE *out, const struct report_opts *o)
{
	unsigned int i;

	if (!o || !o->nr_notes)
		return;
	fprintf(out, "\nTrace file damage (the report covers the intact parts)\n");
	for (i = 0; i < o->nr_notes; i++)
		fprintf(out, "  %s\n", o->notes[i]);
}

void print_probes(FILE *out, const struct model *m)
{
	const char *titles[] = { "Traced", "Skipped", "Failed" };
	__u32 status[] = { MODEL_PROBE_ATTACHED, MODEL_PROBE_SKIPPED, MODEL_PROBE_FAILED };
	size_t i, j, n;

	for (j = 0; j < 3; j++) {
		for (i = 0, n = 0; i < m->nr_probes; i++) {
			const struct model_probe *p = &m->probes[i];

			if (p->status != status[j])
				continue;
			if (!n++)
				fprintf(out, "\n%s\n", titles[j]);
			fprintf(out, "  %-32s %s", p->name, p->what);
			if (p->reason[0])
				fprintf(out, ": %s", p->reason);
			fputc('\n', out);
		}
		if (!n && status[j] == MODEL_PROBE_SKIPPED)
			fprintf(out, "\nSkipped\n  nothing\n");
	}
}

void print_lost(FILE *out, const struct model *m)
{
	int i, n = 0;

	if (!lost_total(m)) {
		fprintf(out, "\nLost events: none\n");
		return;
	}
	fprintf(out, "\nLost events:");
	for (i = 0; i < MODEL_SRC_NR; i++)
		if (m->lost[i])
			fprintf(out, "%s %s %llu", n++ ? "," : "", source_names[i],
				(unsigned long long)m->lost[i]);
	fprintf(out, " (the ring buffer was full: figures above are low; "
		     "a bigger --ringbuf-mb helps)\n");
}

/* where the tracer's memory caps bit: what the report holds as counts */
void print_bounds(FILE *out, const struct model *m)
{
	struct model_bounds b;
	char x[32];

	if (!model__bounds(m, &b))
		return;
	fprintf(out, "\nKept as counts (the tracer's memory is capped over a long run)\n");
	if (b.procs_summarized)
		fprintf(out,
			"  %llu exited processes past the %d kept, the least notable, largest %s\n",
			(unsigned long long)b.procs_summarized, MODEL_PROCS_MAX,
			B(x, b.procs_summarized_peak));
	if (b.maps_summarized)
		fprintf(out, "  %llu unmapped mappings, %s, past the %d kept a process\n",
			(unsigned long long)b.maps_summarized, B(x, b.maps_summarized_bytes),
			MODEL_MAPS_MAX);
	if (b.reqs_summarized)
		fprintf(out,
			"  %llu ended requests past the %d kept a process, the kept ones evenly spread\n",
			(unsigned long long)b.reqs_summarized, MODEL_REQS_MAX);
	if (b.series_thinned)
		fprintf(out,
			"  %llu memory series thinned to %d points, one per %.3g s at the widest\n",
			(unsigned long long)b.series_thinned, SERIES_MAX, b.series_gap_ns / 1e9);
	if (b.touches_thinned)
		fprintf(out, "  first-touch samples halved %llu times (%d kept a process)\n",
			(unsigned long long)b.touches_thinned, MODEL_TOUCHES_MAX);
	if (b.stacks_dropped)
		fprintf(out, "  %llu stacks past the %d kept went unnamed\n",
			(unsigned long long)b.stacks_dropped, MODEL_STACKS_MAX);
	if (b.pids_reused)
		fprintf(out,
			"  %llu processes took the pid of an earlier one: each is reported apart\n",
			(unsigned long long)b.pids_reused);
}

void print_events(FILE *out, const struct model *m)
{
	fprintf(out, "Events: %llu\n", (unsigned long long)m->events);
}

/* --json */

struct json_object *session_json(const struct model *m)
{
	struct json_object *o;
	char when[48];

	if (!m->have_session)
		return NULL;
	o = json_object_new_object();
	add(o, "target_pid", u64(m->target_pid));
	add(o, "cmdline", str(m->cmdline));
	add(o, "host", str(m->host));
	add(o, "arch", str(m->arch));
	add(o, "kernel", str(m->kernel));
	add(o, "start_utc", str(fmt_utc(when, sizeof(when), m->start_realtime_ns)));
	add(o, "start_realtime_ns", u64(m->start_realtime_ns));
	/* the same instant on CLOCK_MONOTONIC, which every event's time is on
	 * (a step of the wall clock since does not move them) */
	add(o, "start_monotonic_ns", u64(m->start_ts));
	add(o, "duration_s", num(model__duration_ns(m) / 1e9));
	add(o, "interval_s", num(m->interval_ms / 1e3));
	add(o, "follow_forks", json_object_new_boolean(m->follow));
	add(o, "watch", json_object_new_boolean(m->watch));
	add(o, "end_reason", str(end_reason_key(m->end_reason)));
	return o;
}

struct json_object *damage_json(const struct report_opts *o)
{
	struct json_object *a = json_object_new_array();
	unsigned int i;

	for (i = 0; o && i < o->nr_notes; i++)
		json_object_array_add(a, str(o->notes[i]));
	return a;
}

struct json_object *probes_json(const struct model *m)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < m->nr_probes; i++) {
		struct json_object *o = json_object_new_object();

		add(o, "name", str(m->probes[i].name));
		add(o, "status", str(probe_status_name(m->probes[i].status)));
		add(o, "what", str(m->probes[i].what));
		add(o, "reason", str(m->probes[i].reason));
		json_object_array_add(a, o);
	}
	return a;
}

struct json_object *lost_json(const struct model *m)
{
	struct json_object *o = json_object_new_object();
	int i;

	for (i = 0; i <= MODEL_SRC_DECODE; i++)
		add(o, source_names[i], u64(m->lost[i]));
	add(o, "total", u64(lost_total(m)));
	return o;
}

/* where the tracer's memory caps bit */
struct json_object *bounds_json(const struct model *m)
{
	struct json_object *o = json_object_new_object();
	struct model_bounds b;

	model__bounds(m, &b);
	add(o, "processes_summarized", u64(b.procs_summarized));
	add(o, "processes_summarized_peak_bytes", u64(b.procs_summarized_peak));
	add(o, "processes_kept_max", u64(MODEL_PROCS_MAX));
	add(o, "mappings_summarized", u64(b.maps_summarized));
	add(o, "mappings_summarized_bytes", u64(b.maps_summarized_bytes));
	add(o, "requests_summarized", u64(b.reqs_summarized));
	add(o, "requests_kept_max", u64(MODEL_REQS_MAX));
	add(o, "series_thinned", u64(b.series_thinned));
	add(o, "series_widest_gap_s", json_object_new_double(b.series_gap_ns / 1e9));
	add(o, "series_points_max", u64(SERIES_MAX));
	add(o, "first_touches_halved", u64(b.touches_thinned));
	add(o, "stacks_dropped", u64(b.stacks_dropped));
	add(o, "pids_reused", u64(b.pids_reused));
	return o;
}

struct json_object *events_json(const struct model *m)
{
	struct json_object *o = json_object_new_object(), *t = json_object_new_object();
	unsigned int i;

	add(o, "total", u64(m->events));
	for (i = 1; i < EVENT_TYPES; i++)
		add(t, event__type_name(i), u64(m->events_by_type[i]));
	add(t, "unknown", u64(m->unknown_events));
	add(o, "by_type", t);
	return o;
}

struct json_object *meminfo_json(const struct model *m)
{
	struct json_object *o;

	if (!m->meminfo_seen)
		return NULL;
	o = json_object_new_object();
	add(o, "total_bytes", u64(m->mem_total));
	add(o, "available_bytes", u64(m->mem_available));
	return o;
}

struct json_object *nvml_json(const struct model *m)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < m->nr_nvml; i++) {
		struct json_object *o = json_object_new_object();

		add(o, "index", u64(m->nvml[i].index));
		add(o, "name", str(m->nvml[i].name));
		add(o, "total_bytes", u64(m->nvml[i].total));
		add(o, "free_bytes", u64(m->nvml[i].free));
		/* how fast it ran at the last sample, and its slowest */
		if (m->nvml[i].clocks_valid & MODEL_NVML_CLOCK) {
			const struct series *c = &m->nvml[i].sm_mhz;
			__s64 lo = c->n ? c->p[0].v : 0;

			for (size_t k = 1; k < c->n; k++)
				lo = c->p[k].v < lo ? c->p[k].v : lo;
			add(o, "sm_mhz", c->n ? u64(c->p[c->n - 1].v) : NULL);
			add(o, "sm_min_mhz", c->n ? u64(lo) : NULL);
			add(o, "sm_max_mhz", u64(m->nvml[i].sm_max_mhz));
		}
		if (m->nvml[i].clocks_valid & MODEL_NVML_REASONS) {
			const struct series *r = &m->nvml[i].reasons;
			__u64 any = 0;

			for (size_t k = 0; k < r->n; k++)
				any |= r->p[k].v;
			add(o, "clock_reasons_seen", u64(any));
		}
		if (m->nvml[i].clocks_valid & 0x4)
			add(o, "temperature_c", u64(m->nvml[i].temp_c));
		if (m->nvml[i].clocks_valid & 0x8)
			add(o, "power_w", num(m->nvml[i].power_mw / 1000.0));
		json_object_array_add(a, o);
	}
	return a;
}
