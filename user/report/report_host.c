// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* a process on the host, in both reports: its memory (RSS by member, its
 * /proc status, the timeline, page faults, mappings, the brk heap), its
 * cgroup's limit, its threads and its exit, how long after its start
 * tracing of it began, and its container and pod */
#include <json-c/json.h>
#include "common/json_util.h"
#include <stdlib.h>
#include "common/fmt.h"
#include "analysis/findings.h"
#include "analysis/roles.h"
#include "report.h"
#include "report_data.h"
#include "report_sections.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
#define D(buf, v) fmt_delta(buf, sizeof(buf), v)

static void print_rss(FILE *out, const struct model *m, const struct model_proc *p)
{
	char a[32], b[32], c[32], d[32], e[32];
	struct member_stats st;
	int i, k;

	fprintf(out, "  RSS by member (kmem:rss_stat)\n");
	fprintf(out, "    %-6s %12s %12s %12s %13s %14s\n", "", "start", "end", "peak", "change",
		"rate");
	for (k = 0; k < MODEL_RSS_NR; k++) {
		i = rss_member_order[k];
		member_stats(m, &p->rss[i], &st);
		if (!st.seen) {
			fprintf(out, "    %-6s %12s\n", rss_member_names[i], "no change seen");
			continue;
		}
		fmt_delta(e, sizeof(e), st.rate);
		fprintf(out, "    %-6s %12s %12s %12s %13s %12s/s\n", rss_member_names[i],
			B(a, st.start), B(b, st.end), B(c, st.peak), D(d, st.end - st.start), e);
	}
}

static void print_status(FILE *out, const struct model_proc *p)
{
	const struct model_sample *f = &p->first_sample, *l = &p->last_sample;
	char a[32], b[32], c[32], d[32], e[32];

	if (!p->nr_samples) {
		fprintf(out, "  /proc/%u/status: no samples\n", p->pid);
		return;
	}
	fprintf(out,
		"  /proc/%u/status (%u samples): VmRSS %s -> %s (peak %s), VmHWM %s, VmSwap %s\n",
		p->pid, p->nr_samples, B(a, f->kb[MODEL_ST_VMRSS] << 10),
		B(b, l->kb[MODEL_ST_VMRSS] << 10), B(c, p->vmrss_peak),
		B(d, l->kb[MODEL_ST_VMHWM] << 10), B(e, l->kb[MODEL_ST_VMSWAP] << 10));
}

static void print_cell(FILE *out, const struct series *s, __u64 ts)
{
	char a[32];
	__s64 v;

	if (series__at(s, ts, &v))
		fprintf(out, " %11s", B(a, v));
	else
		fprintf(out, " %11s", "-");
}

static void print_timeline(FILE *out, const struct model *m, const struct model_proc *p,
			   const struct report_opts *o)
{
	unsigned int i, n = timeline_rows(m, p, o);
	int k;

	fprintf(out, "\n  Timeline (rss_stat by member; VmRSS from /proc; - = not seen yet)\n");
	fprintf(out, "    %9s", "time");
	for (k = 0; k < MODEL_RSS_NR; k++)
		fprintf(out, " %11s", rss_member_names[rss_member_order[k]]);
	fprintf(out, " %11s\n", "VmRSS");
	for (i = 0; i < n; i++) {
		__u64 ts = timeline_ts(m, p, i, n);

		fprintf(out, "    %7.2f s", model__secs(m, ts));
		for (k = 0; k < MODEL_RSS_NR; k++)
			print_cell(out, &p->rss[rss_member_order[k]], ts);
		print_cell(out, &p->vmrss, ts);
		fputc('\n', out);
	}
}

static void print_fault_row(FILE *out, const char *name, __u64 n, double secs, double peak)
{
	fprintf(out, "    %-7s %12llu %12.0f %12.0f\n", name, (unsigned long long)n,
		secs > 0 ? n / secs : 0, peak);
}

static void print_faults(FILE *out, const struct model *m, const struct model_proc *p)
{
	double secs = model__duration_ns(m) / 1e9;
	bool classified = faults_classified(m);
	int i;

	fprintf(out, "\n  Page faults%s\n    %-7s %12s %12s %12s\n",
		classified ? "" : " (not told apart by class here: see Skipped)", "class", "total",
		"avg/s", "peak/s");
	print_fault_row(out, "all", p->faults_all, secs, p->faults_all_peak_rate);
	for (i = 0; classified && i < MODEL_FAULT_NR; i++)
		print_fault_row(out, fault_class_names[i], p->faults[i], secs,
				p->fault_peak_rate[i]);
}

static void print_mappings(FILE *out, const struct model *m, const struct model_proc *p,
			   const struct report_opts *o)
{
	unsigned int max = o && o->max_mappings ? o->max_mappings : 10;
	size_t *idx = mappings_by_size(p), i, n;
	char a[32], b[32], prot[8];
	__u64 live = 0;

	for (i = 0; i < p->nr_maps; i++)
		live += p->maps[i].live;
	fprintf(out,
		"\n  Mappings made during the run: %llu mmap (%llu failed), %llu munmap, "
		"%llu mremap; %s of them still mapped\n",
		(unsigned long long)p->mmap_calls, (unsigned long long)p->mmap_failed,
		(unsigned long long)p->munmap_calls, (unsigned long long)p->mremap_calls,
		B(a, live));
	if (!idx || !p->nr_maps) {
		free(idx);
		return;
	}
	n = p->nr_maps < max ? p->nr_maps : max;
	fprintf(out, "    largest %zu of %llu", n, (unsigned long long)p->maps_made);
	if (p->maps_summarized)
		fprintf(out,
			" (%llu unmapped ones, %s, kept only as this count: at most %d are kept)",
			(unsigned long long)p->maps_summarized, B(a, p->maps_summarized_bytes),
			MODEL_MAPS_MAX);
	fprintf(out, ":\n");
	fprintf(out, "    %11s %4s %6s %9s  %s\n", "size", "prot", "kind", "at", "now");
	for (i = 0; i < n; i++) {
		const struct model_mapping *mp = &p->maps[idx[i]];

		fprintf(out, "    %11s %4s %6s %7.2f s  ", B(a, mp->len),
			fmt_prot(prot, sizeof(prot), mp->prot), fd_class_name(mp->fd_class),
			model__secs(m, mp->ts));
		if (mp->live == mp->len)
			fprintf(out, "mapped\n");
		else if (!mp->live)
			fprintf(out, "unmapped at %.2f s\n", model__secs(m, mp->gone_ts));
		else
			fprintf(out, "%s still mapped\n", B(b, mp->live));
		print_stack(out, m, mp->stack_id);
	}
	free(idx);
}

static void print_brk(FILE *out, const struct model_proc *p)
{
	char a[32], b[32];

	if (!p->brk_seen) {
		fprintf(out, "  brk heap: no brk calls\n");
		return;
	}
	fprintf(out,
		"  brk heap: %s over the run (peak %s above the first break seen), %llu calls\n",
		D(a, (double)p->brk_last - (double)p->brk_first),
		B(b, (double)(p->brk_peak - p->brk_first)), (unsigned long long)p->brk_calls);
}

void print_host(FILE *out, const struct model *m, const struct model_proc *p,
		const struct report_opts *o)
{
	print_rss(out, m, p);
	print_status(out, p);
	print_timeline(out, m, p, o);
	print_faults(out, m, p);
	print_mappings(out, m, p, o);
	print_brk(out, p);
}

void print_exit(FILE *out, const struct model *m, const struct model_proc *p)
{
	fprintf(out, "  threads: peak %d, %u created; children: %u", p->threads_peak,
		p->threads_created, p->children);
	if (p->children)
		fprintf(out, " (%u followed)", p->children_followed);
	fputc('\n', out);
	if (!p->exited) {
		fprintf(out, "  still running when tracing stopped\n");
		return;
	}
	if (p->exit_code & 0x7f)
		fprintf(out, "  killed by signal %d at %.2f s\n", p->exit_code & 0x7f,
			model__secs(m, p->exit_ts));
	else
		fprintf(out, "  exited with code %d at %.2f s\n", (p->exit_code >> 8) & 0xff,
			model__secs(m, p->exit_ts));
}

/* seconds from its start to its tracing; < 0: its start is not known */
static double traced_from(const struct model_proc *p)
{
	if (!p->start_ts || !p->traced_ts)
		return -1;
	return p->traced_ts > p->start_ts ? (p->traced_ts - p->start_ts) / 1e9 : 0;
}

static const char *const pod_from_names[] = {
	[MODEL_POD_FROM_NODE] = "node", [MODEL_POD_FROM_ENV] = "environment"
};

/* "container 1a2b3c4d5e6f (podman), pid 1 inside; pod NAME in NAMESPACE" */
void print_container(FILE *out, const struct model_proc *p)
{
	const struct model_container *c = &p->container;

	if (!c->id[0] && !c->pod_uid[0] && !p->ns_pid)
		return;
	fputs("  in      ", out);
	if (c->id[0])
		fprintf(out, " container %.12s (%s)%s", c->id, c->runtime, p->ns_pid ? "," : "");
	if (p->ns_pid)
		fprintf(out, " pid %u inside", p->ns_pid);
	if (c->pod_uid[0] && c->pod[0])
		fprintf(out, "; pod %s", c->pod);
	else if (c->pod_uid[0])
		fprintf(out, "; pod uid %s", c->pod_uid);
	if (c->pod_uid[0] && c->pod_ns[0])
		fprintf(out, " in %s", c->pod_ns);
	fprintf(out, "%s\n", c->pod_from == MODEL_POD_FROM_ENV ? " (from its environment)" : "");
}

struct json_object *container_json(const struct model_proc *p)
{
	const struct model_container *c = &p->container;
	struct json_object *o;

	if (!c->id[0] && !c->pod_uid[0])
		return NULL;
	o = json_object_new_object();
	add(o, "id", c->id[0] ? str(c->id) : NULL);
	add(o, "runtime", c->runtime ? str(c->runtime) : NULL);
	add(o, "pod_uid", c->pod_uid[0] ? str(c->pod_uid) : NULL);
	add(o, "pod", c->pod[0] ? str(c->pod) : NULL);
	add(o, "namespace", c->pod_ns[0] ? str(c->pod_ns) : NULL);
	add(o, "pod_from", c->pod_from ? str(pod_from_names[c->pod_from]) : NULL);
	return o;
}

void print_traced(FILE *out, const struct model_proc *p)
{
	double s = traced_from(p);
	char after[48] = "";

	if (s >= 0)
		snprintf(after, sizeof(after), ", %.3f s after it started", s);
	switch (p->join) {
	case MODEL_JOIN_EXEC:
		fprintf(out, "  traced   from its exec%s: --watch found its name\n", after);
		break;
	case MODEL_JOIN_MAP:
		fprintf(out,
			"  traced   from when it mapped %s%s (--watch): what it did before is "
			"not seen\n",
			p->join_what[0] ? p->join_what : "a GPU file", after);
		break;
	case MODEL_JOIN_SCAN:
		fprintf(out,
			"  traced   from tracing's start%s: it was running already; requests "
			"before that are not counted\n",
			after);
		break;
	case MODEL_JOIN_LATE:
		fprintf(out,
			"  traced   late%s, found by a /proc scan: BPF saw neither an exec of a "
			"--comm name nor a GPU mapping (a record lost, or no mapping); requests "
			"before that are not counted\n",
			after);
		break;
	case MODEL_JOIN_PID:
		fprintf(out,
			"  traced   from the attach (-p)%s: requests before that are not counted\n",
			after);
		break;
	case MODEL_JOIN_COMMAND:
		fprintf(out, "  traced   from its first instruction: gpumemtrace started it\n");
		break;
	case MODEL_JOIN_FORK:
		fprintf(out, "  traced   from its fork: a child of a traced process\n");
		break;
	}
}

/* --json */

static const char *const join_names[] = {
	[MODEL_JOIN_EXEC] = "exec",    [MODEL_JOIN_MAP] = "gpu_mapping",
	[MODEL_JOIN_SCAN] = "running", [MODEL_JOIN_LATE] = "late_scan",
	[MODEL_JOIN_PID] = "attached", [MODEL_JOIN_COMMAND] = "command",
	[MODEL_JOIN_FORK] = "fork",
};

void traced_json(struct json_object *proc, const struct model *m, const struct model_proc *p)
{
	double s = traced_from(p);

	add(proc, "traced_how", p->join ? str(join_names[p->join]) : NULL);
	add(proc, "traced_at_s", p->traced_ts ? num(model__secs(m, p->traced_ts)) : NULL);
	add(proc, "traced_from_s", s >= 0 ? num(s) : NULL);
	add(proc, "traced_mapping", p->join == MODEL_JOIN_MAP ? str(p->join_what) : NULL);
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

struct json_object *mem_limit_json(const struct model_proc *p)
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

void host_json(struct json_object *proc, const struct model *m, const struct model_proc *p,
	       const struct report_opts *o)
{
	add(proc, "rss", rss_json(m, p));
	add(proc, "proc_status", status_json(p));
	add(proc, "rss_timeline", timeline_json(m, p, o));
	add(proc, "page_faults", faults_json(m, p));
	add(proc, "mappings", mappings_json(m, p, o));
	add(proc, "brk", brk_json(p));
}

void exit_json(struct json_object *proc, const struct model *m, const struct model_proc *p)
{
	add(proc, "exited", json_object_new_boolean(p->exited));
	add(proc, "exit_code",
	    p->exited && !(p->exit_code & 0x7f) ? i64((p->exit_code >> 8) & 0xff) : NULL);
	add(proc, "exit_signal",
	    p->exited && (p->exit_code & 0x7f) ? i64(p->exit_code & 0x7f) : NULL);
	add(proc, "exit_s", p->exited ? num(model__secs(m, p->exit_ts)) : NULL);
	add(proc, "threads_peak", i64(p->threads_peak));
	add(proc, "threads_created", u64(p->threads_created));
	add(proc, "children", u64(p->children));
}
