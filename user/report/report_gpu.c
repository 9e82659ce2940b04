// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GPU APIs, in both reports: the devices as their drivers describe them,
 * each process's allocations by API and kind, by stack, and the failed ones */
#include <json-c/json.h>
#include "common/json_util.h"
#include <stdlib.h>
#include <string.h>
#include "common/fmt.h"
#include "stream/gpufuncs.h"
#include "report_data.h"
#include "report_sections.h"
#include "analysis/roles.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)

static const char *const type_flag_names[] = {
	"device-local", "host-visible",	   "host-coherent",   "host-cached", "lazily-allocated",
	"protected",	"device-coherent", "device-uncached", "rdma-capable"
};

/* live GPU allocations grouped by stack, API and kind */
struct gpu_stack_row {
	__u32 stack_id;
	__u8 api, kind;
	__u64 bytes, count;
};

static const char *type_flags(char *buf, size_t size, __u32 flags)
{
	fmt_flags(buf, size, flags, type_flag_names,
		  sizeof(type_flag_names) / sizeof(type_flag_names[0]));
	return buf[0] ? buf : "none";
}

/* the sum of live bytes over every API and kind that holds memory */
static __s64 gpu_live_total(const __s64 live[MODEL_API_NR][MODEL_KIND_NR])
{
	__s64 t = 0;

	for (unsigned int a = 0; a < MODEL_API_NR; a++)
		for (unsigned int k = 0; k < MODEL_KIND_NR; k++)
			if (model_gpu__holds_memory(k))
				t = model__add_sat(t, live[a][k]);
	return t;
}

static int by_bytes(const void *a, const void *b)
{
	const struct gpu_stack_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

/* rows biggest first; caller frees; NULL when there are none */
static struct gpu_stack_row *gpu_stacks_by_live(const struct model_gpu *g, size_t *n)
{
	struct gpu_stack_row *rows = NULL, *r;
	size_t i, j, nr = 0;

	*n = 0;
	if (!g || !g->nr_live)
		return NULL;
	rows = calloc(g->nr_live, sizeof(*rows));
	if (!rows)
		return NULL;
	for (i = 0; i < g->live_cap; i++) {
		const struct model_gpu_live *l = &g->live[i];

		if (l->used != 1)
			continue;
		for (j = 0, r = NULL; j < nr && !r; j++)
			if (rows[j].stack_id == l->stack_id && rows[j].api == l->api &&
			    rows[j].kind == l->kind)
				r = &rows[j];
		if (!r) {
			r = &rows[nr++];
			*r = (struct gpu_stack_row){ l->stack_id, l->api, l->kind, 0, 0 };
		}
		r->bytes += l->size;
		r->count++;
	}
	qsort(rows, nr, sizeof(*rows), by_bytes);
	*n = nr;
	return rows;
}

static bool stat_seen(const struct model_gpu_stat *st)
{
	return st->allocs || st->frees || st->failed || st->live;
}

static const char *result_text(char *buf, size_t size, unsigned int api, int result)
{
	const char *name = gpufuncs__result_name(api, result);

	snprintf(buf, size, "%s (%d)", name ? name : "error", result);
	return buf;
}

/* why a device's memory is the host's */
static const char *devmem_why(const struct model_device *d)
{
	switch (d->type) {
	case MODEL_GPU_TYPE_INTEGRATED:
		return "an integrated GPU";
	case MODEL_GPU_TYPE_CPU:
		return "a device on the CPU";
	default:
		return "Mesa's CPU driver";
	}
}

void print_gpu_devices(FILE *out, const struct model *m)
{
	char a[32], f[160];
	size_t i;
	__u32 j;

	if (!m->nr_devices)
		return;
	fprintf(out, "\nGPU devices (as their drivers describe them)\n");
	for (i = 0; i < m->nr_devices; i++) {
		const struct model_device *d = &m->devices[i];

		if (d->api == MODEL_API_CU) /* its attribute only, as the target asked */
			fprintf(out, "  CUDA device %u: %s (cuDeviceGetAttribute)\n", d->index,
				model__gpu_type_name(d->type));
		else
			fprintf(out, "  %s device %u: %s (driver %s)\n", gpufuncs__api_name(d->api),
				d->index, d->name, d->driver);
		if (d->memory == MODEL_DEVMEM_HOST_RAM)
			fprintf(out,
				"    device memory is the host's RAM (%s): counted once, in the "
				"host's RSS (anonymous) and its cgroup\n",
				devmem_why(d));
		else if (d->api == MODEL_API_CU)
			fprintf(out,
				"    device memory is its own, separate from the host's RAM\n");
		for (j = 0; j < d->nr_heaps; j++)
			fprintf(out, "    heap %u: %s%s\n", j, B(a, d->heaps[j].size),
				d->heaps[j].flags & 1 ? ", device-local" : "");
		for (j = 0; j < d->nr_types; j++)
			fprintf(out, "    memory type %u: heap %u, %s\n", j, d->types[j].heap,
				type_flags(f, sizeof(f), d->types[j].flags));
	}
}

static void print_failure(FILE *out, const struct model *m, const struct model_gpu_failure *f)
{
	char a[32], b[32], r[64], name[32];
	bool first = true;

	const struct model_device *d = f->api == MODEL_API_VK ? model__vk_device(m) : NULL;

	fprintf(out, "    %7.2f s  %s(%s", model__secs(m, f->ts),
		gpufuncs__name(f->func, name, sizeof(name)), B(a, f->size));
	if (f->mem_type != ~0u)
		fprintf(out, ", memory type %u", f->mem_type);
	if (d && f->mem_type < d->nr_types && d->types[f->mem_type].heap < d->nr_heaps)
		fprintf(out, ", heap %u of %s%s", d->types[f->mem_type].heap,
			B(b, d->heaps[d->types[f->mem_type].heap].size),
			d->heaps[d->types[f->mem_type].heap].flags & 1 ? " device-local" : "");
	fprintf(out, ") -> %s\n", result_text(r, sizeof(r), f->api, f->result));
	fprintf(out, "               live then: %s", B(b, gpu_live_total(f->live_bytes)));
	for (unsigned int i = 0; i < MODEL_API_NR; i++)
		for (unsigned int k = 0; k < MODEL_KIND_NR; k++)
			if (f->live_bytes[i][k] && model_gpu__holds_memory(k)) {
				fprintf(out, "%s%s %s %s", first ? " (" : ", ",
					gpufuncs__api_name(i), gpufuncs__kind_name(k),
					B(a, f->live_bytes[i][k]));
				first = false;
			}
	fprintf(out, "%s\n", first ? "" : ")");
	print_stack(out, m, f->stack_id);
}

static void print_gpu_timeline(FILE *out, const struct model *m, const struct model_proc *p)
{
	const struct model_gpu *g = p->gpu;
	unsigned int n = timeline_rows(m, p, NULL), i, a, k;
	char col[32], v[32];
	__s64 x;

	fprintf(out, "\n  GPU API live bytes over time\n    %9s", "time");
	for (a = 0; a < MODEL_API_NR; a++)
		for (k = 0; k < MODEL_KIND_NR; k++)
			if (g->st[a][k].allocs && model_gpu__holds_memory(k)) {
				snprintf(col, sizeof(col), "%s %s", gpufuncs__api_name(a),
					 gpufuncs__kind_name(k));
				fprintf(out, " %16s", col);
			}
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		__u64 ts = timeline_ts(m, p, i, n);

		fprintf(out, "    %7.2f s", model__secs(m, ts));
		for (a = 0; a < MODEL_API_NR; a++)
			for (k = 0; k < MODEL_KIND_NR; k++)
				if (g->st[a][k].allocs && model_gpu__holds_memory(k))
					fprintf(out, " %16s",
						series__at(&g->st[a][k].series, ts, &x) ? B(v, x) :
											  "-");
		fputc('\n', out);
	}
}

void print_gpu(FILE *out, const struct model *m, const struct model_proc *p)
{
	const struct model_gpu *g = p->gpu;
	struct gpu_stack_row *rows;
	char a[32], b[32], c[32];
	size_t i, n;

	if (!g)
		return;
	fprintf(out, "\n  GPU API calls: %llu\n", (unsigned long long)g->calls);
	fprintf(out, "    %-7s %-12s %11s %11s %8s %8s %7s %11s\n", "API", "kind", "live", "peak",
		"allocs", "frees", "failed", "allocated");
	for (unsigned int api = 0; api < MODEL_API_NR; api++)
		for (unsigned int k = 0; k < MODEL_KIND_NR; k++) {
			const struct model_gpu_stat *st = &g->st[api][k];

			if (!stat_seen(st))
				continue;
			if (k == MODEL_KIND_GRAPH_EXEC)
				fprintf(out,
					"    %-7s %-12s %11llu %11llu %8llu %8llu %7llu %11s\n",
					gpufuncs__api_name(api), gpufuncs__kind_name(k),
					(unsigned long long)st->live,
					(unsigned long long)st->peak_live,
					(unsigned long long)st->allocs,
					(unsigned long long)st->frees,
					(unsigned long long)st->failed, "-");
			else
				fprintf(out, "    %-7s %-12s %11s %11s %8llu %8llu %7llu %11s\n",
					gpufuncs__api_name(api), gpufuncs__kind_name(k),
					B(a, st->live_bytes), B(b, st->peak_bytes),
					(unsigned long long)st->allocs,
					(unsigned long long)st->frees,
					(unsigned long long)st->failed, B(c, st->alloc_bytes));
		}
	if (g->unknown_frees)
		fprintf(out, "    %llu frees of memory allocated before tracing began\n",
			(unsigned long long)g->unknown_frees);
	if (g->dedicated || g->imported || g->exported)
		fprintf(out,
			"    Vulkan allocations: %llu dedicated, %llu imported, %llu exportable\n",
			(unsigned long long)g->dedicated, (unsigned long long)g->imported,
			(unsigned long long)g->exported);
	if (g->maps || g->unmaps)
		fprintf(out, "    %llu maps, %llu unmaps (vkMapMemory)\n",
			(unsigned long long)g->maps, (unsigned long long)g->unmaps);
	if (g->info_seen)
		fprintf(out, "    device memory (cuMemGetInfo): %s free of %s, lowest free %s\n",
			B(a, g->info_free), B(b, g->info_total), B(c, g->info_min_free));
	print_gpu_timeline(out, m, p);
	rows = gpu_stacks_by_live(g, &n);
	if (n) {
		fprintf(out, "\n  Live GPU allocations by stack, biggest first\n");
		for (i = 0; i < n && i < 10; i++) {
			const char *role = roles__of(m, rows[i].stack_id);

			if (rows[i].kind == MODEL_KIND_GRAPH_EXEC)
				fprintf(out, "    %llu live graph executables (%s)\n",
					(unsigned long long)rows[i].count,
					gpufuncs__api_name(rows[i].api));
			else
				fprintf(out, "    %s in %llu (%s %s)%s%s\n", B(a, rows[i].bytes),
					(unsigned long long)rows[i].count,
					gpufuncs__api_name(rows[i].api),
					gpufuncs__kind_name(rows[i].kind), role ? ": " : "",
					role ? role : "");
			print_stack(out, m, rows[i].stack_id);
		}
	}
	free(rows);
	if (g->nr_fails) {
		fprintf(out, "\n  Failed GPU allocations: %zu\n", g->nr_fails);
		for (i = 0; i < g->nr_fails; i++)
			print_failure(out, m, &g->fails[i]);
	}
}

/* --json */

struct json_object *gpu_devices_json(const struct model *m)
{
	struct json_object *a = json_object_new_array();
	char f[160];
	size_t i;
	__u32 j;

	for (i = 0; i < m->nr_devices; i++) {
		const struct model_device *d = &m->devices[i];
		struct json_object *o = json_object_new_object(), *t = json_object_new_array(),
				   *h = json_object_new_array();

		add(o, "api", str(gpufuncs__api_name(d->api)));
		add(o, "index", u64(d->index));
		add(o, "name", str(d->name));
		add(o, "driver", str(d->driver));
		add(o, "vendor_id", u64(d->vendor_id));
		add(o, "device_id", u64(d->device_id));
		add(o, "device_type",
		    model__gpu_type_name(d->type) ? str(model__gpu_type_name(d->type)) : NULL);
		add(o, "memory", str(d->memory == MODEL_DEVMEM_HOST_RAM ? "host_ram" : "separate"));
		for (j = 0; j < d->nr_types; j++) {
			struct json_object *x = json_object_new_object();

			add(x, "index", u64(j));
			add(x, "heap", u64(d->types[j].heap));
			add(x, "flags", str(type_flags(f, sizeof(f), d->types[j].flags)));
			json_object_array_add(t, x);
		}
		for (j = 0; j < d->nr_heaps; j++) {
			struct json_object *x = json_object_new_object();

			add(x, "index", u64(j));
			add(x, "size_bytes", u64(d->heaps[j].size));
			add(x, "device_local", json_object_new_boolean(d->heaps[j].flags & 1));
			json_object_array_add(h, x);
		}
		add(o, "memory_types", t);
		add(o, "heaps", h);
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *stat_json(const struct model *m, const struct model_proc *p,
				     const struct model_gpu_stat *st, unsigned int api,
				     unsigned int k)
{
	struct json_object *o = json_object_new_object(), *tl = json_object_new_array();
	unsigned int i, n = timeline_rows(m, p, NULL);
	__s64 v;

	add(o, "api", str(gpufuncs__api_name(api)));
	add(o, "kind", str(gpufuncs__kind_name(k)));
	add(o, "live_bytes", i64(st->live_bytes));
	add(o, "peak_bytes", i64(st->peak_bytes));
	add(o, "live", u64(st->live));
	add(o, "peak_live", u64(st->peak_live));
	add(o, "allocs", u64(st->allocs));
	add(o, "frees", u64(st->frees));
	add(o, "failed", u64(st->failed));
	add(o, "alloc_bytes", u64(st->alloc_bytes));
	add(o, "freed_bytes", u64(st->freed_bytes));
	for (i = 0; i < n; i++) {
		__u64 ts = timeline_ts(m, p, i, n);
		struct json_object *x = json_object_new_object();

		add(x, "t_s", num(model__secs(m, ts)));
		add(x, "live_bytes", series__at(&st->series, ts, &v) ? i64(v) : NULL);
		json_object_array_add(tl, x);
	}
	add(o, "timeline", tl);
	return o;
}

static struct json_object *failure_json(const struct model *m, const struct model_gpu_failure *f)
{
	struct json_object *o = json_object_new_object(), *live = json_object_new_array();
	const char *rn = gpufuncs__result_name(f->api, f->result);
	char name[32];

	add(o, "t_s", num(model__secs(m, f->ts)));
	add(o, "call", str(gpufuncs__name(f->func, name, sizeof(name))));
	add(o, "api", str(gpufuncs__api_name(f->api)));
	add(o, "kind", str(gpufuncs__kind_name(f->kind)));
	add(o, "size_bytes", u64(f->size));
	const struct model_device *d = f->api == MODEL_API_VK ? model__vk_device(m) : NULL;
	bool heap = d && f->mem_type < d->nr_types && d->types[f->mem_type].heap < d->nr_heaps;

	add(o, "memory_type", f->mem_type != ~0u ? u64(f->mem_type) : NULL);
	add(o, "heap", heap ? u64(d->types[f->mem_type].heap) : NULL);
	add(o, "heap_size_bytes", heap ? u64(d->heaps[d->types[f->mem_type].heap].size) : NULL);
	add(o, "result", i64(f->result));
	add(o, "result_name", rn ? str(rn) : NULL);
	add(o, "tid", u64(f->tid));
	add(o, "live_total_bytes", i64(gpu_live_total(f->live_bytes)));
	for (unsigned int a = 0; a < MODEL_API_NR; a++)
		for (unsigned int k = 0; k < MODEL_KIND_NR; k++)
			if (f->live_bytes[a][k]) {
				struct json_object *x = json_object_new_object();

				add(x, "api", str(gpufuncs__api_name(a)));
				add(x, "kind", str(gpufuncs__kind_name(k)));
				add(x, "bytes", i64(f->live_bytes[a][k]));
				json_object_array_add(live, x);
			}
	add(o, "live_then", live);
	add(o, "stack", stack_json(m, f->stack_id));
	return o;
}

struct json_object *gpu_json(const struct model *m, const struct model_proc *p)
{
	const struct model_gpu *g = p->gpu;
	struct json_object *o, *a, *s, *f;
	struct gpu_stack_row *rows;
	const char *role;
	size_t i, n;

	if (!g)
		return NULL;
	o = json_object_new_object();
	a = json_object_new_array();
	add(o, "calls", u64(g->calls));
	for (unsigned int api = 0; api < MODEL_API_NR; api++)
		for (unsigned int k = 0; k < MODEL_KIND_NR; k++)
			if (stat_seen(&g->st[api][k]))
				json_object_array_add(a, stat_json(m, p, &g->st[api][k], api, k));
	add(o, "by_kind", a);
	{
		__s64 live[MODEL_API_NR][MODEL_KIND_NR];

		for (unsigned int api = 0; api < MODEL_API_NR; api++)
			for (unsigned int k = 0; k < MODEL_KIND_NR; k++)
				live[api][k] = g->st[api][k].live_bytes;
		add(o, "live_total_bytes", i64(gpu_live_total(live)));
	}
	add(o, "unknown_frees", u64(g->unknown_frees));
	add(o, "dedicated_allocs", u64(g->dedicated));
	add(o, "imported_allocs", u64(g->imported));
	add(o, "exported_allocs", u64(g->exported));
	add(o, "maps", u64(g->maps));
	add(o, "unmaps", u64(g->unmaps));
	if (g->info_seen) {
		struct json_object *x = json_object_new_object();

		add(x, "free_bytes", u64(g->info_free));
		add(x, "total_bytes", u64(g->info_total));
		add(x, "lowest_free_bytes", u64(g->info_min_free));
		add(x, "t_s", num(model__secs(m, g->info_ts)));
		add(o, "device_memory", x);
	} else {
		add(o, "device_memory", NULL);
	}
	s = json_object_new_array();
	rows = gpu_stacks_by_live(g, &n);
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_new_object();

		add(x, "api", str(gpufuncs__api_name(rows[i].api)));
		add(x, "kind", str(gpufuncs__kind_name(rows[i].kind)));
		add(x, "bytes", u64(rows[i].bytes));
		add(x, "count", u64(rows[i].count));
		if ((role = roles__of(m, rows[i].stack_id)))
			add(x, "role", str(role));
		add(x, "stack", stack_json(m, rows[i].stack_id));
		json_object_array_add(s, x);
	}
	free(rows);
	add(o, "live_by_stack", s);
	f = json_object_new_array();
	for (i = 0; i < g->nr_fails; i++)
		json_object_array_add(f, failure_json(m, &g->fails[i]));
	add(o, "failures", f);
	return o;
}
