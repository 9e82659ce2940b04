// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the text report */
#include <stdlib.h>
#include <string.h>
#include "common/fmt.h"
#include "analysis/findings.h"
#include "report.h"
#include "report_data.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
#define D(buf, v) fmt_delta(buf, sizeof(buf), v)

static void print_header(FILE *out, const struct model *m)
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

static void print_probes(FILE *out, const struct model *m)
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

void print_stack(FILE *out, const struct model *m, __u32 id)
{
	const struct model_stack *s = model__stack(m, id);
	unsigned int i;

	if (!id)
		return;
	if (!s || !s->nr_frames) {
		fprintf(out, "        (no user stack)\n");
		return;
	}
	for (i = 0; i < s->nr_frames; i++) {
		const struct model_frame *f = &s->frames[i];

		if (f->sym[0])
			fprintf(out, "        %s+0x%llx (%s)\n", f->sym,
				(unsigned long long)f->sym_off, f->module);
		else
			fprintf(out, "        0x%llx (%s+0x%llx)\n", (unsigned long long)f->ip,
				f->module[0] ? f->module : "?", (unsigned long long)f->sym_off);
	}
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

static void print_exit(FILE *out, const struct model *m, const struct model_proc *p)
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

static void print_proc(FILE *out, const struct model *m, const struct model_proc *p,
		       const struct report_opts *o)
{
	fprintf(out, "\nProcess %u (%s)%s\n", p->pid, p->comm[0] ? p->comm : "?",
		p->followed ? ", a followed child" : "");
	if (p->exe[0])
		fprintf(out, "  exe      %s\n", p->exe);
	if (p->cmdline && p->cmdline[0])
		fprintf(out, "  command  %s\n", p->cmdline);
	print_llama_server(out, p);
	print_rss(out, m, p);
	print_status(out, p);
	print_timeline(out, m, p, o);
	print_faults(out, m, p);
	print_mappings(out, m, p, o);
	print_brk(out, p);
	print_gpu(out, m, p);
	print_drm(out, p);
	print_exit(out, m, p);
}

static void print_lost(FILE *out, const struct model *m)
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
static void print_bounds(FILE *out, const struct model *m)
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

void report__text(FILE *out, const struct model *m, const struct findings *fs,
		  const struct report_opts *o)
{
	struct model_proc **procs = procs_in_order(m);
	unsigned int i;
	size_t j;

	print_header(out, m);
	if (o && o->nr_notes) {
		fprintf(out, "\nTrace file damage (the report covers the intact parts)\n");
		for (i = 0; i < o->nr_notes; i++)
			fprintf(out, "  %s\n", o->notes[i]);
	}
	print_verdicts(out, m, fs);
	for (j = 0; procs && j < m->nr_procs; j++)
		print_requests(out, m, procs[j], fs);
	print_evidence(out, m, fs);
	print_probes(out, m);
	print_gpu_devices(out, m);
	for (j = 0; procs && j < m->nr_procs; j++)
		print_proc(out, m, procs[j], o);
	if (!m->nr_procs)
		fprintf(out, "\nNo events from the target were seen.\n");
	print_bos(out, m);
	print_lost(out, m);
	print_bounds(out, m);
	fprintf(out, "Events: %llu\n", (unsigned long long)m->events);
	free(procs);
}
