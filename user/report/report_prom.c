// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Prometheus text format (version 0.0.4): each traced process's memory
 * by category and by role, GPU API and kernel buffer figures, requests, tokens and the
 * verdicts, labelled by pid, comm and cgroup. Only processes still running
 * are in it. Labels stay few: paths from a short list, status classes,
 * no request ids. docs/fleet.md lists the metrics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/categories.h"
#include "analysis/findings.h"
#include "stream/gpufuncs.h"
#include "report.h"
#include "report_data.h"

#define EVICTORS_MAX 8

/* a label value: printable ASCII, with \, " and newlines escaped */
static void label(FILE *out, const char *name, const char *v, size_t max)
{
	size_t i;

	fprintf(out, "%s=\"", name);
	for (i = 0; i < max && v[i]; i++) {
		unsigned char c = v[i];

		if (c == '\\' || c == '"')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else
			fputc(c >= 0x20 && c < 0x7f ? c : '?', out);
	}
	fputc('"', out);
}

static void proc_labels(FILE *out, const struct model_proc *p)
{
	fprintf(out, "pid=\"%u\",", p->pid);
	label(out, "comm", p->comm, sizeof(p->comm));
	if (p->cgroup[0] && strcmp(p->cgroup, "/")) {
		fputc(',', out);
		label(out, "cgroup", p->cgroup, sizeof(p->cgroup));
	}
	if (p->container.id[0]) {
		fputc(',', out);
		label(out, "container_id", p->container.id, sizeof(p->container.id));
	}
	if (p->container.pod[0]) {
		fputc(',', out);
		label(out, "pod", p->container.pod, sizeof(p->container.pod));
	}
	if (p->container.pod_ns[0]) {
		fputc(',', out);
		label(out, "namespace", p->container.pod_ns, sizeof(p->container.pod_ns));
	}
}

static void head(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP gpumemtrace_%s %s\n# TYPE gpumemtrace_%s %s\n", name, help, name,
		type);
}

static void value(FILE *out, double v)
{
	if (isnan(v))
		fputs(" NaN\n", out);
	else
		fprintf(out, " %.17g\n", v);
}

/* a sample of a per-process metric: name{pid,comm,cgroup[,extra]} v */
static void sample(FILE *out, const char *name, const struct model_proc *p, const char *extra,
		   double v)
{
	fprintf(out, "gpumemtrace_%s{", name);
	proc_labels(out, p);
	if (extra && *extra)
		fprintf(out, ",%s", extra);
	fputc('}', out);
	value(out, v);
}

static void memory(FILE *out, const struct model *m, struct model_proc **live, size_t n)
{
	struct category cats[CAT_MAX];
	char extra[64];
	size_t i, k, nc;
	double v;

	head(out, "memory_bytes", "gauge",
	     "Memory of a traced process by where it lives (category: host_anon, vulkan_device, "
	     "bo_vram, nvml_device, ...), at the last sample.");
	for (i = 0; i < n; i++) {
		nc = categories__list(m, live[i], cats, CAT_MAX);
		for (k = 0; k < nc; k++) {
			if (cats[k].cls == CAT_COUNT || !category__level(&cats[k], m->last_ts, &v))
				continue;
			/* a device's memory that is the host's RAM: also in host_anon */
			snprintf(extra, sizeof(extra), "category=\"%.31s\"%s", cats[k].name,
				 cats[k].in_host ? ",memory=\"host_ram\"" : "");
			sample(out, "memory_bytes", live[i], extra, v);
		}
	}
}

/* what the memory is for (analysis/roles.c), where the stacks say */
static void roles(FILE *out, const struct model *m, struct model_proc **live, size_t n)
{
	struct role_bytes v[64];
	char extra[128];
	size_t i, k, nv;

	head(out, "role_bytes", "gauge",
	     "Memory of a traced process by what holds it (role: model weights, KV cache, prompt "
	     "cache, compute buffers, ..., other) and category: GPU API memory live, host memory "
	     "first touched (sampled).");
	for (i = 0; i < n; i++) {
		nv = findings__role_bytes(m, live[i], v, sizeof(v) / sizeof(v[0]));
		for (k = 0; k < nv; k++) {
			snprintf(extra, sizeof(extra), "role=\"%s\",category=\"%s\"", v[k].role,
				 v[k].category);
			sample(out, "role_bytes", live[i], extra, v[k].bytes);
		}
	}
}

static void gpu(FILE *out, const struct model *m, struct model_proc **live, size_t n)
{
	static const struct {
		const char *name, *type, *help;
	} metrics[] = {
		{ "gpu_live_bytes", "gauge", "Bytes a GPU API holds allocated, by API and kind." },
		{ "gpu_live_allocations", "gauge",
		  "Allocations a GPU API holds, by API and kind." },
		{ "gpu_allocations_total", "counter", "GPU API allocation calls that succeeded." },
		{ "gpu_allocated_bytes_total", "counter", "Bytes of GPU API allocations." },
		{ "gpu_allocation_failures_total", "counter",
		  "GPU API allocation calls that failed." },
	};
	char extra[128];
	unsigned int a, k;
	size_t i, j;

	for (j = 0; j < sizeof(metrics) / sizeof(metrics[0]); j++) {
		head(out, metrics[j].name, metrics[j].type, metrics[j].help);
		for (i = 0; i < n; i++) {
			const struct model_gpu *g = live[i]->gpu;

			if (!g)
				continue;
			for (a = 0; a < MODEL_API_NR; a++)
				for (k = 0; k < MODEL_KIND_NR; k++) {
					const struct model_gpu_stat *st = &g->st[a][k];
					double v[] = { st->live_bytes, st->live, st->allocs,
						       st->alloc_bytes, st->failed };

					if (!st->allocs && !st->failed)
						continue;
					snprintf(extra, sizeof(extra), "api=\"%s\",kind=\"%s\"%s",
						 gpufuncs__api_name(a), gpufuncs__kind_name(k),
						 model__host_ram(m, a) ? ",memory=\"host_ram\"" :
									 "");
					sample(out, metrics[j].name, live[i], extra, v[j]);
				}
		}
	}
}

static const struct model_bo_owner *bo_owner(const struct model *m, __u32 pid)
{
	size_t i;

	for (i = 0; i < m->nr_bo_owners; i++)
		if (m->bo_owners[i].pid == pid)
			return &m->bo_owners[i];
	return NULL;
}

/* evictions of p's buffers by the evictor's name, the first EVICTORS_MAX
 * names and "other" */
static void evictions(FILE *out, const struct model *m, const struct model_proc *p)
{
	char names[EVICTORS_MAX + 1][MODEL_COMM_LEN] = {}, extra[64 + 4 * MODEL_COMM_LEN];
	__u64 counts[EVICTORS_MAX + 1] = {};
	size_t i, k, nn = 0;

	for (i = 0; i < m->nr_evictions; i++) {
		const struct model_eviction *e = &m->evictions[i];

		if (e->owner != p->pid)
			continue;
		for (k = 0; k < nn && strncmp(names[k], e->evictor_comm, MODEL_COMM_LEN); k++)
			;
		if (k == nn && nn < EVICTORS_MAX)
			memcpy(names[nn++], e->evictor_comm, MODEL_COMM_LEN);
		else if (k == nn)
			k = EVICTORS_MAX;
		counts[k]++;
	}
	for (k = 0; k <= EVICTORS_MAX; k++) {
		FILE *f;

		if (!counts[k])
			continue;
		f = fmemopen(extra, sizeof(extra), "w");
		if (!f)
			continue;
		names[k][MODEL_COMM_LEN - 1] = 0;
		label(f, "evictor", k < EVICTORS_MAX ? names[k] : "other", MODEL_COMM_LEN);
		fclose(f);
		sample(out, "kernel_buffer_evictions_total", p, extra, counts[k]);
	}
}

static void kernel_buffers(FILE *out, const struct model *m, struct model_proc **live, size_t n)
{
	static const char *const places[] = {
		[BO_SYSTEM] = "system", [BO_GTT] = "gtt", [BO_VRAM] = "vram"
	};
	char extra[48];
	size_t i, k;

	head(out, "kernel_buffer_bytes", "gauge",
	     "Bytes of the process's kernel GPU buffers (TTM) by placement: vram, gtt, system.");
	for (i = 0; i < n; i++) {
		const struct model_bo_owner *o = bo_owner(m, live[i]->pid);

		for (k = 0; o && k < BO_OTHER; k++) {
			snprintf(extra, sizeof(extra), "placement=\"%s\"", places[k]);
			sample(out, "kernel_buffer_bytes", live[i], extra, o->bytes[k]);
		}
	}
	head(out, "kernel_buffer_evictions_total", "counter",
	     "Moves of the process's kernel GPU buffers out of VRAM, by the evicting process's "
	     "name.");
	for (i = 0; i < n; i++)
		evictions(out, m, live[i]);
}

static void histogram(FILE *out, const char *name, const struct model_proc *p, const double *le,
		      const __u64 *counts, size_t nb, __u64 count, double sum)
{
	char extra[48];
	__u64 cum = 0;
	size_t b;

	for (b = 0; b < nb; b++) {
		cum += counts[b];
		snprintf(extra, sizeof(extra), "le=\"%g\"", le[b]);
		fprintf(out, "gpumemtrace_%s_bucket{", name);
		proc_labels(out, p);
		fprintf(out, ",%s} %llu\n", extra, (unsigned long long)cum);
	}
	fprintf(out, "gpumemtrace_%s_bucket{", name);
	proc_labels(out, p);
	fprintf(out, ",le=\"+Inf\"} %llu\n", (unsigned long long)count);
	fprintf(out, "gpumemtrace_%s_sum{", name);
	proc_labels(out, p);
	fputc('}', out);
	value(out, sum);
	fprintf(out, "gpumemtrace_%s_count{", name);
	proc_labels(out, p);
	fprintf(out, "} %llu\n", (unsigned long long)count);
}

static void requests(FILE *out, struct model_proc **live, size_t n)
{
	static const char *const codes[MODEL_REQ_CODES] = { "1xx", "2xx", "3xx",
							    "4xx", "5xx", "none" };
	struct model_req_totals *t = calloc(n ? n : 1, sizeof(*t));
	char extra[128];
	size_t i, k, c;

	if (!t)
		return;
	for (i = 0; i < n; i++)
		model_req__totals(live[i], &t[i]);
	head(out, "http_requests_total", "counter",
	     "HTTP requests the process served, by path (a short list, else \"other\") and status "
	     "class (\"none\": closed unanswered).");
	for (i = 0; i < n; i++)
		for (k = 0; k < MODEL_REQ_PATHS; k++)
			for (c = 0; c < MODEL_REQ_CODES; c++) {
				if (!t[i].requests[k][c])
					continue;
				snprintf(extra, sizeof(extra), "path=\"%s\",code=\"%s\"",
					 model_req_paths[k], codes[c]);
				sample(out, "http_requests_total", live[i], extra,
				       t[i].requests[k][c]);
			}
	head(out, "http_requests_sent_by_traced_total", "counter",
	     "Of the requests in http_requests_total, those a traced process sent, not a "
	     "client: the server itself (sender=\"itself\", llama-server's proxy fetching its "
	     "own /models) or another (\"other\": a router to its child servers).");
	for (i = 0; i < n; i++) {
		if (t[i].sent_by_self)
			sample(out, "http_requests_sent_by_traced_total", live[i],
			       "sender=\"itself\"", t[i].sent_by_self);
		if (t[i].sent_by_traced)
			sample(out, "http_requests_sent_by_traced_total", live[i],
			       "sender=\"other\"", t[i].sent_by_traced);
	}
	head(out, "http_request_duration_seconds", "histogram",
	     "Time from the server's first read of a request to its answer's last byte.");
	for (i = 0; i < n; i++)
		if (t[i].latency_count)
			histogram(out, "http_request_duration_seconds", live[i],
				  model_req_latency_le, t[i].latency, MODEL_LATENCY_BUCKETS,
				  t[i].latency_count, t[i].latency_sum);
	head(out, "decode_tokens_per_second", "histogram",
	     "Each request's generation rate, as llama-server's own predicted_per_second.");
	for (i = 0; i < n; i++)
		if (t[i].rate_count)
			histogram(out, "decode_tokens_per_second", live[i], model_req_rate_le,
				  t[i].rate, MODEL_RATE_BUCKETS, t[i].rate_count, t[i].rate_sum);
	head(out, "tokens_total", "counter",
	     "Tokens of the requests served: prompt tokens evaluated, tokens generated.");
	for (i = 0; i < n; i++) {
		if (!live[i]->nr_reqs && !live[i]->reqs_folded)
			continue;
		sample(out, "tokens_total", live[i], "kind=\"prompt\"", t[i].prompt_tokens);
		sample(out, "tokens_total", live[i], "kind=\"generated\"", t[i].generated_tokens);
	}
	free(t);
}

static void verdicts(FILE *out, struct model_proc **live, size_t n, const struct findings *fs)
{
	char extra[320];
	const char *holder;
	size_t i, j, k;
	FILE *x;

	head(out, "verdict", "gauge",
	     "1 for each verdict standing on a category of the process (verdict: leak, "
	     "bounded_cache, growing, alloc_failure, eviction_slowdown, steady, ...; holder: "
	     "what holds a leak, a stack's frame or a role, where known).");
	for (i = 0; fs && i < n; i++)
		for (j = 0; j < fs->n; j++) {
			const struct finding *f = &fs->v[j];

			if (f->pid != live[i]->pid)
				continue;
			/* the same verdict twice on a category is one series */
			for (k = 0; k < j; k++)
				if (fs->v[k].pid == f->pid && fs->v[k].kind == f->kind &&
				    !strcmp(fs->v[k].category, f->category))
					break;
			if (k < j)
				continue;
			holder = finding__str_of(f, "holder");
			x = fmemopen(extra, sizeof(extra), "w");
			if (!x)
				continue;
			fprintf(x, "category=\"%s\",verdict=\"%s\",", f->category,
				findings__kind_name(f->kind));
			label(x, "holder", holder ? holder : "", sizeof(fs->v[j].strs[0]));
			fclose(x);
			sample(out, "verdict", live[i], extra, 1);
		}
}

/* what each process waited on (the kernel's counters), and its requests
 * slower than its own usual rate, by cause */
static void waits(FILE *out, struct model_proc **live, size_t n, const struct findings *fs)
{
	char extra[128];
	size_t i, j, k;

	head(out, "major_faults_total", "counter",
	     "Page faults that read from the disk or swap (/proc/PID/stat majflt): weights or "
	     "memory read back.");
	for (i = 0; i < n; i++)
		if (live[i]->waits.n)
			sample(out, "major_faults_total", live[i], NULL,
			       live[i]->waits.p[live[i]->waits.n - 1].v[MODEL_W_MAJFLT]);
	head(out, "cpu_wait_seconds_total", "counter",
	     "Time its threads were ready to run but waited for a CPU (schedstat run_delay).");
	for (i = 0; i < n; i++)
		if (live[i]->waits.n && (live[i]->waits_flags & MODEL_WAITS_SCHED))
			sample(out, "cpu_wait_seconds_total", live[i], NULL,
			       live[i]->waits.p[live[i]->waits.n - 1].v[MODEL_W_DELAY_NS] / 1e9);
	head(out, "cpu_throttled_seconds_total", "counter",
	     "Time its CPU cgroup's quota held it back (cpu.stat), where a quota binds it.");
	for (i = 0; i < n; i++)
		if (live[i]->waits.n && (live[i]->waits_flags & MODEL_WAITS_CPU_STAT))
			sample(out, "cpu_throttled_seconds_total", live[i], NULL,
			       live[i]->waits.p[live[i]->waits.n - 1].v[MODEL_W_THROTTLED_NS] /
				       1e9);
	head(out, "slow_requests", "gauge",
	     "Requests of the process slower than its own usual rate, by the cause the slowdown "
	     "verdict names (memory, cpu, vram_eviction, cuda_graphs, context_full, none).");
	for (i = 0; fs && i < n; i++)
		for (j = 0; j < fs->n; j++) {
			const struct finding *f = &fs->v[j];
			double count = 0;

			if (f->pid != live[i]->pid || f->kind != F_SLOWDOWN)
				continue;
			for (k = 0; k < j; k++)
				if (fs->v[k].pid == f->pid && fs->v[k].kind == F_SLOWDOWN &&
				    !strcmp(fs->v[k].strs[0], f->strs[0]))
					break;
			if (k < j)
				continue;
			for (k = j; k < fs->n; k++)
				if (fs->v[k].pid == f->pid && fs->v[k].kind == F_SLOWDOWN &&
				    !strcmp(fs->v[k].strs[0], f->strs[0]))
					for (size_t x = 0; x < fs->v[k].nr_nums; x++)
						if (!strcmp(fs->v[k].nums[x].key, "slow_requests"))
							count += fs->v[k].nums[x].v;
			snprintf(extra, sizeof(extra), "cause=\"%s\"", f->strs[0]);
			sample(out, "slow_requests", live[i], extra, count);
		}
}

void report__prometheus(FILE *out, const struct model *m, const struct findings *fs)
{
	struct model_proc **live = calloc(m->nr_procs ? m->nr_procs : 1, sizeof(*live));
	size_t i, n = 0;

	if (!live)
		return;
	for (i = 0; i < m->nr_procs; i++)
		if (!m->procs[i]->exited)
			live[n++] = m->procs[i];
	head(out, "info", "gauge", "The tracer's version and the kernel it runs on.");
	fputs("gpumemtrace_info{", out);
	label(out, "version", m->tool_version, sizeof(m->tool_version));
	fputc(',', out);
	label(out, "kernel", m->kernel, sizeof(m->kernel));
	fputs("} 1\n", out);
	head(out, "traced_seconds", "gauge", "How long the tracer has traced.");
	fprintf(out, "gpumemtrace_traced_seconds %.3f\n", model__duration_ns(m) / 1e9);
	head(out, "processes", "gauge", "Processes traced and still running.");
	fprintf(out, "gpumemtrace_processes %zu\n", n);
	head(out, "lost_events_total", "counter",
	     "Events the kernel could not pass on (its ring buffer was full), by source.");
	for (i = 0; i < MODEL_SRC_NR; i++)
		fprintf(out, "gpumemtrace_lost_events_total{source=\"%s\"} %llu\n", source_names[i],
			(unsigned long long)m->lost[i]);
	memory(out, m, live, n);
	roles(out, m, live, n);
	gpu(out, m, live, n);
	kernel_buffers(out, m, live, n);
	requests(out, live, n);
	head(out, "llama_decode_calls_total", "counter",
	     "llama.cpp's llama_decode calls, as llama-server's llamacpp:n_decode_total counts "
	     "them (and the calls before its first request).");
	for (i = 0; i < n; i++)
		if (live[i]->decodes)
			sample(out, "llama_decode_calls_total", live[i], NULL, live[i]->decodes);
	waits(out, live, n, fs);
	verdicts(out, live, n, fs);
	free(live);
}
