// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Dump: owns `replay --events`, the stream printed one JSON object per
 * record and line, times from the first event, as perf script prints a
 * perf.data file. Text fields of the wire go through fmt_clean. */
#include <json-c/json.h>
#include "common/json_util.h"
#include <stdlib.h>
#include <string.h>
#include "dump.h"
#include "gpufuncs.h"

/* a fixed field of the wire, as printable UTF-8 (fmt_clean) */
static struct json_object *strn(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *c = malloc(n * 3 + 1);
	struct json_object *o;

	if (!c)
		return json_object_new_string("");
	fmt_clean(c, n * 3 + 1, s, n);
	o = json_object_new_string(c);
	free(c);
	return o;
}

static void gpu_call(struct json_object *o, const struct gmt_gpu_call *e)
{
	const char *rn = gpufuncs__result_name(e->api, e->result);
	char name[32];

	add(o, "call", json_object_new_string(gpufuncs__name(e->func, name, sizeof(name))));
	add(o, "api", json_object_new_string(gpufuncs__api_name(e->api)));
	add(o, "kind", json_object_new_string(gpufuncs__kind_name(e->kind)));
	add(o, "size", u64(e->size));
	add(o, "handle", u64(e->handle));
	add(o, "result", i64(e->result));
	if (rn)
		add(o, "result_name", json_object_new_string(rn));
	if (e->mem_type != ~0u)
		add(o, "memory_type", u64(e->mem_type));
	if (e->flags)
		add(o, "flags", u64(e->flags));
	if (e->aux)
		add(o, "aux", u64(e->aux));
	if (e->aux2)
		add(o, "aux2", u64(e->aux2));
	add(o, "dur_ns", u64(e->dur_ns));
	if (e->stack_id)
		add(o, "stack_id", u64(e->stack_id));
}

static void stack(struct json_object *o, const struct gmt_stack *s)
{
	const char *p = event__stack_names(s);
	struct json_object *a = json_object_new_array();
	unsigned int i;

	add(o, "stack_id", u64(s->stack_id));
	for (i = 0; i < s->nr_frames; i++) {
		struct json_object *f = json_object_new_object();

		add(f, "ip", u64(s->frames[i].ip));
		add(f, "symbol", str(p));
		p += strlen(p) + 1;
		add(f, "module", str(p));
		p += strlen(p) + 1;
		add(f, "offset", u64(s->frames[i].sym_off));
		json_object_array_add(a, f);
	}
	add(o, "frames", a);
}

/* a batch's tokens by sequence */
static struct json_object *decode_seqs(const struct gmt_decode *d)
{
	struct json_object *a = json_object_new_array();
	__u32 i;

	for (i = 0; i < d->nr_seqs && i < GMT_DECODE_SEQS; i++) {
		const struct gmt_decode_seq *q = &d->seqs[i];
		struct json_object *o = json_object_new_object();

		add(o, "seq", i64(q->seq));
		add(o, "n_tokens", u64(q->n_tokens));
		add(o, "n_outputs", u64(q->n_outputs));
		add(o, "pos_min", i64(q->pos_min));
		add(o, "pos_max", i64(q->pos_max));
		add(o, "flags", u64(q->flags));
		json_object_array_add(a, o);
	}
	return a;
}

void dump__event(void *ctx, const struct gmt_hdr *e)
{
	struct dump *d = ctx;
	struct json_object *o = json_object_new_object();

	if (!d->start_ts)
		d->start_ts = e->ts_ns;
	add(o, "t_s", json_object_new_double((double)(e->ts_ns - d->start_ts) / 1e9));
	add(o, "type", json_object_new_string(event__type_name(e->type)));
	add(o, "pid", u64(e->pid));
	add(o, "tid", u64(e->tid));
	switch (e->type) {
	case GMT_EV_GPU_CALL:
		gpu_call(o, (const void *)e);
		break;
	case GMT_EV_STACK:
		stack(o, (const void *)e);
		break;
	case GMT_EV_MODULE: {
		const struct gmt_module *x = (const void *)e;

		add(o, "name", strn(x->name, sizeof(x->name)));
		add(o, "build_id", strn(x->build_id, sizeof(x->build_id)));
		add(o, "text_off", u64(x->text_off));
		add(o, "text_vaddr", u64(x->text_vaddr));
		add(o, "text_size", u64(x->text_size));
		break;
	}
	case GMT_EV_PROBE: {
		const struct gmt_probe *p = (const void *)e;

		add(o, "name", strn(p->name, sizeof(p->name)));
		add(o, "status", u64(p->status));
		add(o, "what", strn(p->what, sizeof(p->what)));
		add(o, "reason", strn(p->reason, sizeof(p->reason)));
		break;
	}
	case GMT_EV_MAP_RSS: {
		const struct gmt_map_rss *r = (const void *)e;
		struct json_object *a = json_object_new_array();
		__u32 i;

		for (i = 0; i < r->nr; i++) {
			struct json_object *v = json_object_new_array();

			json_object_array_add(v, u64(r->v[i].start));
			json_object_array_add(v, u64(r->v[i].end));
			json_object_array_add(v, u64(r->v[i].rss));
			json_object_array_add(a, v);
		}
		add(o, "areas", a);
		break;
	}
	case GMT_EV_CGROUP: {
		const struct gmt_cgroup *g = (const void *)e;

		add(o, "path", strn(g->path, GMT_PATH_LEN));
		if (e->len < sizeof(*g))
			break;
		add(o, "ns_pid", u64(g->ns_pid));
		add(o, "pod_from", u64(g->pod_from));
		add(o, "pod", strn(g->pod, GMT_POD_NAME_LEN));
		add(o, "pod_ns", strn(g->pod_ns, GMT_POD_NS_LEN));
		break;
	}
	case GMT_EV_PROC_ENV: {
		const struct gmt_proc_env *v = (const void *)e;
		struct json_object *a = json_object_new_array();
		const char *s = v->vars, *end = v->vars + v->vars_len;

		for (; s < end; s += strnlen(s, end - s) + 1)
			json_object_array_add(a, strn(s, end - s));
		add(o, "vars", a);
		break;
	}
	case GMT_EV_RSS: {
		const struct gmt_rss *r = (const void *)e;

		add(o, "member", u64(r->member));
		add(o, "bytes", i64(r->bytes));
		break;
	}
	case GMT_EV_MMAP: {
		const struct gmt_mmap *m = (const void *)e;

		add(o, "addr", u64(m->addr));
		add(o, "len", u64(m->len));
		add(o, "prot", u64(m->prot));
		add(o, "flags", u64(m->flags));
		add(o, "fd_class", u64(m->fd_class));
		if (m->stack_id)
			add(o, "stack_id", u64(m->stack_id));
		break;
	}
	case GMT_EV_TOUCH: {
		const struct gmt_touch *t = (const void *)e;

		add(o, "addr", u64(t->addr));
		add(o, "bytes", u64(t->bytes));
		if (t->stack_id)
			add(o, "stack_id", u64(t->stack_id));
		break;
	}
	case GMT_EV_BO: {
		const struct gmt_bo *b = (const void *)e;
		static const char *ops[] = { "?", "create", "move", "free", "domains" };

		add(o, "op", json_object_new_string(ops[b->op < 5 ? b->op : 0]));
		if (b->op == GMT_BO_DOMAINS) {
			add(o, "prefer", u64(b->prefer));
			add(o, "allowed", u64(b->allowed));
			add(o, "amdgpu_flags", u64(b->amdgpu_flags));
		}
		if (b->flags)
			add(o, "flags", u64(b->flags));
		add(o, "bo", u64(b->bo));
		add(o, "size", u64(b->size));
		add(o, "from", i64(b->from));
		add(o, "to", i64(b->to));
		add(o, "evict", u64(b->evict));
		add(o, "owner", u64(b->owner));
		if (b->evict_id)
			add(o, "evict_id", u64(b->evict_id));
		add(o, "comm", strn(b->comm, sizeof(b->comm)));
		break;
	}
	case GMT_EV_JOIN: {
		const struct gmt_join *j = (const void *)e;

		add(o, "how", u64(j->how));
		add(o, "start_ns", u64(j->start_ns));
		add(o, "comm", strn(j->comm, sizeof(j->comm)));
		add(o, "what", strn(j->what, sizeof(j->what)));
		break;
	}
	case GMT_EV_TIMINGS: {
		const struct gmt_timings *t = (const void *)e;

		add(o, "conn", u64(t->conn));
		add(o, "fd", u64(t->fd));
		if (t->have & GMT_TM_INDEX)
			add(o, "index", u64(t->index));
		if (t->have & GMT_TM_PROMPT_N)
			add(o, "prompt_n", u64(t->prompt_n));
		if (t->have & GMT_TM_PREDICTED_N)
			add(o, "predicted_n", u64(t->predicted_n));
		if (t->have & GMT_TM_CACHE_N)
			add(o, "cache_n", u64(t->cache_n));
		if (t->have & GMT_TM_PROMPT_MS)
			add(o, "prompt_ms", json_object_new_double(t->prompt_us / 1e3));
		if (t->have & GMT_TM_PREDICTED_MS)
			add(o, "predicted_ms", json_object_new_double(t->predicted_us / 1e3));
		break;
	}
	case GMT_EV_HTTP: {
		const struct gmt_http *h = (const void *)e;
		static const char *kinds[] = { "?",   "request", "response", "response_end",
					       "tls", "close",	 "gone" };

		add(o, "kind", json_object_new_string(kinds[h->kind < 7 ? h->kind : 0]));
		add(o, "conn", u64(h->conn));
		add(o, "fd", u64(h->fd));
		if (h->kind == GMT_HTTP_REQUEST) {
			add(o, "method", strn(h->method, sizeof(h->method)));
			add(o, "path", strn(h->path, sizeof(h->path)));
		}
		if (h->status)
			add(o, "status", u64(h->status));
		if (h->kind == GMT_HTTP_RESP_END) {
			add(o, "end", u64(h->end));
			add(o, "bytes_in", u64(h->bytes_in));
			add(o, "bytes_out", u64(h->bytes_out));
		}
		break;
	}
	case GMT_EV_DECODE: {
		const struct gmt_decode *d = (const void *)e;

		add(o, "kind", u64(d->kind));
		add(o, "ret", i64(d->ret));
		add(o, "n_tokens", u64(d->n_tokens));
		add(o, "embd", u64(d->embd));
		add(o, "dur_ns", u64(d->dur_ns));
		if (e->len >= sizeof(*d))
			add(o, "seqs", decode_seqs(d));
		break;
	}
	case GMT_EV_MEMINFO: {
		const struct gmt_meminfo *mi = (const void *)e;

		add(o, "total_kb", u64(mi->total_kb));
		add(o, "available_kb", u64(mi->available_kb));
		add(o, "swap_free_kb", u64(mi->swap_free_kb));
		break;
	}
	case GMT_EV_SIGNAL: {
		const struct gmt_signal *g = (const void *)e;

		add(o, "sig", i64(g->sig));
		add(o, "code", i64(g->code));
		add(o, "addr", u64(g->addr));
		add(o, "sender", u64(g->sender));
		add(o, "stack_id", u64(g->stack_id));
		add(o, "comm", strn(g->comm, sizeof(g->comm)));
		break;
	}
	case GMT_EV_LLAMA_STATE: {
		const struct gmt_llama_state *l = (const void *)e;

		add(o, "kind", u64(l->kind));
		add(o, "size", u64(l->size));
		add(o, "seq", i64(l->seq));
		add(o, "flags", u64(l->flags));
		break;
	}
	case GMT_EV_MEM_LIMIT: {
		const struct gmt_mem_limit *l = (const void *)e;

		add(o, "limit", u64(l->limit));
		add(o, "used", u64(l->used));
		add(o, "file", u64(l->file));
		add(o, "path", strn(l->path, sizeof(l->path)));
		break;
	}
	case GMT_EV_PROC_STAT: {
		const struct gmt_proc_stat *x = (const void *)e;

		add(o, "minflt", u64(x->minflt));
		add(o, "majflt", u64(x->majflt));
		add(o, "cpu_ns", u64(x->cpu_ns));
		add(o, "run_ns", u64(x->run_ns));
		add(o, "run_delay_ns", u64(x->run_delay_ns));
		add(o, "threads_read", u64(x->threads_read));
		add(o, "cpus_allowed", u64(x->cpus_allowed));
		add(o, "cpu_quota_us", u64(x->cpu_quota_us));
		add(o, "cpu_period_us", u64(x->cpu_period_us));
		add(o, "nr_periods", u64(x->nr_periods));
		add(o, "nr_throttled", u64(x->nr_throttled));
		add(o, "throttled_ns", u64(x->throttled_ns));
		add(o, "psi_mem_some_us", u64(x->psi_mem_some_us));
		add(o, "psi_mem_full_us", u64(x->psi_mem_full_us));
		add(o, "psi_cpu_some_us", u64(x->psi_cpu_some_us));
		add(o, "psi_io_some_us", u64(x->psi_io_some_us));
		add(o, "read_bytes", u64(x->read_bytes));
		add(o, "refault_file", u64(x->refault_file));
		add(o, "refault_anon", u64(x->refault_anon));
		add(o, "flags", u64(x->flags));
		add(o, "cpu_cgroup", strn(x->cpu_cgroup, sizeof(x->cpu_cgroup)));
		break;
	}
	case GMT_EV_HOST_STAT: {
		const struct gmt_host_stat *x = (const void *)e;

		add(o, "pswpin", u64(x->pswpin));
		add(o, "pswpout", u64(x->pswpout));
		add(o, "pgmajfault", u64(x->pgmajfault));
		add(o, "refault_file", u64(x->refault_file));
		add(o, "refault_anon", u64(x->refault_anon));
		add(o, "psi_mem_some_us", u64(x->psi_mem_some_us));
		add(o, "psi_cpu_some_us", u64(x->psi_cpu_some_us));
		add(o, "psi_io_some_us", u64(x->psi_io_some_us));
		add(o, "procs_running", u64(x->procs_running));
		add(o, "cpus_online", u64(x->cpus_online));
		break;
	}
	case GMT_EV_FILE_RSS: {
		const struct gmt_file_rss *x = (const void *)e;
		struct json_object *a = json_object_new_array();
		__u32 i;

		for (i = 0; i < x->nr; i++) {
			struct json_object *f = json_object_new_object();

			add(f, "name", strn(x->v[i].name, sizeof(x->v[i].name)));
			add(f, "size", u64(x->v[i].size));
			add(f, "rss", u64(x->v[i].rss));
			add(f, "code", json_object_new_boolean(x->v[i].flags & 1));
			json_object_array_add(a, f);
		}
		add(o, "files", a);
		break;
	}
	case GMT_EV_NVML: {
		const struct gmt_nvml *n = (const void *)e;

		add(o, "index", u64(n->index));
		add(o, "used", n->used == GMT_NVML_NO_PROC ? NULL : u64(n->used));
		add(o, "total", u64(n->total));
		add(o, "free", u64(n->free));
		add(o, "name", strn(n->name, sizeof(n->name)));
		if (e->len >= sizeof(*n)) { /* recorded before it was */
			add(o, "sm_mhz", u64(n->sm_mhz));
			add(o, "sm_max_mhz", u64(n->sm_max_mhz));
			add(o, "clock_reasons", u64(n->clock_reasons));
			add(o, "temp_c", u64(n->temp_c));
			add(o, "power_mw", u64(n->power_mw));
			add(o, "util_gpu", u64(n->util_gpu));
			add(o, "clocks_valid", u64(n->clocks_valid));
		}
		break;
	}
	case GMT_EV_GPU_DEVICE: {
		const struct gmt_gpu_device *g = (const void *)e;

		add(o, "name", strn(g->name, sizeof(g->name)));
		add(o, "driver", strn(g->driver, sizeof(g->driver)));
		add(o, "memory_types", u64(g->nr_types));
		add(o, "heaps", u64(g->nr_heaps));
		if (g->hdr.len >= sizeof(*g)) /* recorded before it was */
			add(o, "device_type", u64(g->device_type));
		break;
	}
	}
	fprintf(d->out, "%s\n",
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}
