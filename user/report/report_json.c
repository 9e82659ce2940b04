// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the --json report; every field is described in docs/json.md */
#include <json-c/json.h>
#include "common/json_util.h"
#include <stdlib.h>
#include "common/fmt.h"
#include "report.h"
#include "analysis/findings.h"
#include "report_data.h"
#include "analysis/roles.h"

static struct json_object *session_json(const struct model *m)
{
	struct json_object *o = json_object_new_object();
	char when[48];

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

static struct json_object *probes_json(const struct model *m)
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

static struct json_object *rss_json(const struct model *m, const struct model_proc *p)
{
	struct json_object *o = json_object_new_object();
	struct member_stats st;
	int i, k;

	for (k = 0; k < MODEL_RSS_NR; k++) {
		struct json_object *r;

		i = rss_member_order[k];
		member_stats(m, &p->rss[i], &st);
		if (!st.seen) {
			add(o, rss_member_names[i], NULL);
			continue;
		}
		r = json_object_new_object();
		add(r, "start_bytes", i64(st.start));
		add(r, "end_bytes", i64(st.end));
		add(r, "peak_bytes", i64(st.peak));
		add(r, "change_bytes", i64(st.end - st.start));
		add(r, "rate_bytes_per_s", num(st.rate));
		add(r, "events", u64(st.events));
		add(o, rss_member_names[i], r);
	}
	return o;
}

static struct json_object *status_json(const struct model_proc *p)
{
	struct json_object *o = json_object_new_object();

	add(o, "samples", u64(p->nr_samples));
	if (!p->nr_samples)
		return o;
	add(o, "vmrss_first_bytes", u64(p->first_sample.kb[MODEL_ST_VMRSS] << 10));
	add(o, "vmrss_last_bytes", u64(p->last_sample.kb[MODEL_ST_VMRSS] << 10));
	add(o, "vmrss_peak_bytes", u64(p->vmrss_peak));
	add(o, "vmhwm_bytes", u64(p->last_sample.kb[MODEL_ST_VMHWM] << 10));
	add(o, "rssanon_last_bytes", u64(p->last_sample.kb[MODEL_ST_RSSANON] << 10));
	add(o, "rssfile_last_bytes", u64(p->last_sample.kb[MODEL_ST_RSSFILE] << 10));
	add(o, "vmswap_last_bytes", u64(p->last_sample.kb[MODEL_ST_VMSWAP] << 10));
	add(o, "threads_last", u64(p->last_sample.threads));
	return o;
}

static struct json_object *cell(const struct series *s, __u64 ts)
{
	__s64 v;

	return series__at(s, ts, &v) ? i64(v) : NULL;
}

static struct json_object *timeline_json(const struct model *m, const struct model_proc *p,
					 const struct report_opts *opts)
{
	struct json_object *a = json_object_new_array();
	unsigned int i, n = timeline_rows(m, p, opts);
	char key[32];
	int k;

	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();
		__u64 ts = timeline_ts(m, p, i, n);

		add(o, "t_s", num(model__secs(m, ts)));
		for (k = 0; k < MODEL_RSS_NR; k++) {
			snprintf(key, sizeof(key), "%s_bytes",
				 rss_member_names[rss_member_order[k]]);
			add(o, key, cell(&p->rss[rss_member_order[k]], ts));
		}
		add(o, "vmrss_bytes", cell(&p->vmrss, ts));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *fault_json(__u64 n, double secs, double peak)
{
	struct json_object *c = json_object_new_object();

	add(c, "total", u64(n));
	add(c, "avg_per_s", num(secs > 0 ? n / secs : 0));
	add(c, "peak_per_s", num(peak));
	return c;
}

static struct json_object *faults_json(const struct model *m, const struct model_proc *p)
{
	struct json_object *o = json_object_new_object();
	double secs = model__duration_ns(m) / 1e9;
	bool classified = faults_classified(m);
	int i;

	add(o, "all", fault_json(p->faults_all, secs, p->faults_all_peak_rate));
	add(o, "classified", json_object_new_boolean(classified));
	for (i = 0; i < MODEL_FAULT_NR; i++)
		add(o, fault_class_names[i],
		    classified ? fault_json(p->faults[i], secs, p->fault_peak_rate[i]) : NULL);
	return o;
}

struct json_object *stack_json(const struct model *m, __u32 id)
{
	const struct model_stack *s = model__stack(m, id);
	struct json_object *a;
	unsigned int i;

	if (!id || !s)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < s->nr_frames; i++) {
		struct json_object *f = json_object_new_object();

		add(f, "ip", u64(s->frames[i].ip));
		add(f, "symbol", str(s->frames[i].sym));
		add(f, "offset", u64(s->frames[i].sym_off));
		add(f, "module", str(s->frames[i].module));
		json_object_array_add(a, f);
	}
	return a;
}

static struct json_object *mapping_json(const struct model *m, const struct model_mapping *mp)
{
	struct json_object *o = json_object_new_object();
	char prot[8];

	add(o, "t_s", num(model__secs(m, mp->ts)));
	add(o, "addr", u64(mp->addr));
	add(o, "size_bytes", u64(mp->len));
	add(o, "live_bytes", u64(mp->live));
	add(o, "resident_bytes", mp->resident_ts ? u64(mp->resident) : NULL);
	add(o, "prot", str(fmt_prot(prot, sizeof(prot), mp->prot)));
	add(o, "flags", u64(mp->flags));
	add(o, "kind", str(fd_class_name(mp->fd_class)));
	add(o, "unmapped_s", mp->live ? NULL : num(model__secs(m, mp->gone_ts)));
	add(o, "stack", stack_json(m, mp->stack_id));
	return o;
}

/* bytes first touched by role, "other" where the frames name none */
static struct json_object *touch_roles_json(const struct model *m, const struct model_proc *p)
{
	struct json_object *o = json_object_new_object(), *v;
	struct finding_stack s[256];
	size_t i, n = findings__touch_stacks(p, 0, ~0ull, s, 256);

	for (i = 0; i < n; i++) {
		const char *role = roles__of(m, s[i].stack_id);
		__u64 was = 0;

		role = role ? role : "other";
		if (json_object_object_get_ex(o, role, &v))
			was = json_object_get_uint64(v);
		add(o, role, u64(was + s[i].bytes));
	}
	return o;
}

static struct json_object *mappings_json(const struct model *m, const struct model_proc *p,
					 const struct report_opts *opts)
{
	unsigned int max = opts && opts->max_mappings ? opts->max_mappings : 10;
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t *idx = mappings_by_size(p), i;
	__u64 live = 0;

	for (i = 0; i < p->nr_maps; i++)
		live += p->maps[i].live;
	add(o, "mmap_calls", u64(p->mmap_calls));
	add(o, "mmap_failed", u64(p->mmap_failed));
	add(o, "munmap_calls", u64(p->munmap_calls));
	add(o, "mremap_calls", u64(p->mremap_calls));
	add(o, "made", u64(p->maps_made));
	add(o, "summarized", u64(p->maps_summarized));
	add(o, "live_bytes", u64(live));
	add(o, "first_touch_samples", u64(p->nr_touches));
	add(o, "first_touched_bytes", u64(p->touched_bytes));
	add(o, "first_touched_by_role", touch_roles_json(m, p));
	for (i = 0; idx && i < p->nr_maps && i < max; i++)
		json_object_array_add(a, mapping_json(m, &p->maps[idx[i]]));
	add(o, "largest", a);
	free(idx);
	return o;
}

static struct json_object *brk_json(const struct model_proc *p)
{
	struct json_object *o = json_object_new_object();

	add(o, "calls", u64(p->brk_calls));
	add(o, "first", p->brk_seen ? u64(p->brk_first) : NULL);
	add(o, "last", p->brk_seen ? u64(p->brk_last) : NULL);
	add(o, "peak", p->brk_seen ? u64(p->brk_peak) : NULL);
	return o;
}

static struct json_object *mem_limit_json(const struct model_proc *p)
{
	static const char *const files[] = { [MODEL_LIMIT_V1_HARD] = "memory.limit_in_bytes",
					     [MODEL_LIMIT_V2_MAX] = "memory.max",
					     [MODEL_LIMIT_V2_HIGH] = "memory.high" };
	struct json_object *o;

	if (!p->mem_limit_ts)
		return NULL;
	o = json_object_new_object();
	add(o, "cgroup", str(p->mem_limit_cgroup));
	add(o, "file", str(files[p->mem_limit_file]));
	add(o, "limit_bytes", u64(p->mem_limit));
	add(o, "used_bytes", u64(p->mem_limit_used));
	return o;
}

/* llama.cpp's own state copies: llama-server's prompt-cache entries and
 * context checkpoints, as its calls sized them */
static struct json_object *llama_state_json(const struct model_llama_state *s)
{
	struct json_object *o;

	if (!s->saves && !s->ckpts && !s->loads)
		return NULL;
	o = json_object_new_object();
	add(o, "saves", u64(s->saves));
	add(o, "save_bytes", u64(s->save_bytes));
	add(o, "save_min_bytes", s->saves ? u64(s->save_min) : NULL);
	add(o, "save_max_bytes", s->saves ? u64(s->save_max) : NULL);
	add(o, "entry_bytes", u64(s->entry_bytes));
	add(o, "entry_min_bytes", s->saves ? u64(s->entry_min) : NULL);
	add(o, "entry_max_bytes", s->saves ? u64(s->entry_max) : NULL);
	add(o, "checkpoints", u64(s->ckpts));
	add(o, "checkpoint_bytes", u64(s->ckpt_bytes));
	add(o, "checkpoint_max_bytes", s->ckpts ? u64(s->ckpt_max) : NULL);
	add(o, "loads", u64(s->loads));
	add(o, "load_bytes", u64(s->load_bytes));
	return o;
}

static struct json_object *proc_json(const struct model *m, const struct model_proc *p,
				     const struct report_opts *opts)
{
	struct json_object *o = json_object_new_object();

	add(o, "pid", u64(p->pid));
	add(o, "ppid", u64(p->ppid));
	add(o, "comm", str(p->comm));
	add(o, "exe", str(p->exe));
	add(o, "cgroup", p->cgroup[0] ? str(p->cgroup) : NULL);
	add(o, "memory_limit", mem_limit_json(p));
	add(o, "llama_state", llama_state_json(&p->lstate));
	add(o, "cmdline", str(p->cmdline));
	add(o, "followed", json_object_new_boolean(p->followed));
	add(o, "exited", json_object_new_boolean(p->exited));
	add(o, "exit_code",
	    p->exited && !(p->exit_code & 0x7f) ? i64((p->exit_code >> 8) & 0xff) : NULL);
	add(o, "exit_signal", p->exited && (p->exit_code & 0x7f) ? i64(p->exit_code & 0x7f) : NULL);
	add(o, "exit_s", p->exited ? num(model__secs(m, p->exit_ts)) : NULL);
	add(o, "threads_peak", i64(p->threads_peak));
	add(o, "threads_created", u64(p->threads_created));
	add(o, "children", u64(p->children));
	add(o, "rss", rss_json(m, p));
	add(o, "proc_status", status_json(p));
	add(o, "rss_timeline", timeline_json(m, p, opts));
	add(o, "page_faults", faults_json(m, p));
	add(o, "mappings", mappings_json(m, p, opts));
	add(o, "brk", brk_json(p));
	add(o, "gpu", gpu_json(m, p));
	add(o, "drm_fdinfo", drm_json(p));
	add(o, "tls_connections", u64(p->tls_conns));
	add(o, "requests", requests_json(m, p));
	add(o, "requests_summarized", u64(p->reqs_summarized));
	add(o, "llama", llama_json(p));
	add(o, "llama_server", llama_server_json(p));
	add(o, "memory_by_interval", memory_by_interval_json(m, p));
	return o;
}

static struct json_object *lost_json(const struct model *m)
{
	struct json_object *o = json_object_new_object();
	int i;

	for (i = 0; i <= MODEL_SRC_DECODE; i++)
		add(o, source_names[i], u64(m->lost[i]));
	add(o, "total", u64(lost_total(m)));
	return o;
}

/* where the tracer's memory caps bit */
static struct json_object *bounds_json(const struct model *m)
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

static struct json_object *events_json(const struct model *m)
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

static struct json_object *host_memory_json(const struct model *m)
{
	struct json_object *o;

	if (!m->meminfo_seen)
		return NULL;
	o = json_object_new_object();
	add(o, "total_bytes", u64(m->mem_total));
	add(o, "available_bytes", u64(m->mem_available));
	return o;
}

static struct json_object *nvml_json(const struct model *m)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < m->nr_nvml; i++) {
		struct json_object *o = json_object_new_object();

		add(o, "index", u64(m->nvml[i].index));
		add(o, "name", str(m->nvml[i].name));
		add(o, "total_bytes", u64(m->nvml[i].total));
		add(o, "free_bytes", u64(m->nvml[i].free));
		json_object_array_add(a, o);
	}
	return a;
}

int report__json(FILE *out, const struct model *m, const struct findings *fs,
		 const struct report_opts *opts)
{
	struct json_object *root = json_object_new_object(), *a, *notes;
	struct model_proc **procs = procs_in_order(m);
	unsigned int i;
	size_t j;

	json_c_set_serialization_double_format("%.6g", JSON_C_OPTION_THREAD);
	add(root, "tool", str("gpumemtrace"));
	add(root, "version", str(m->tool_version));
	add(root, "session", m->have_session ? session_json(m) : NULL);
	add(root, "findings", findings_json(m, fs));
	notes = json_object_new_array();
	for (i = 0; opts && i < opts->nr_notes; i++)
		json_object_array_add(notes, str(opts->notes[i]));
	add(root, "trace_file_damage", notes);
	add(root, "probes", probes_json(m));
	add(root, "gpu_devices", gpu_devices_json(m));
	a = json_object_new_array();
	for (j = 0; procs && j < m->nr_procs; j++)
		json_object_array_add(a, proc_json(m, procs[j], opts));
	add(root, "processes", a);
	add(root, "kernel_buffers", bos_json(m));
	add(root, "host_memory", host_memory_json(m));
	add(root, "nvml", nvml_json(m));
	add(root, "lost_events", lost_json(m));
	add(root, "bounded", bounds_json(m));
	add(root, "events", events_json(m));
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	free(procs);
	return 0;
}
