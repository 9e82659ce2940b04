// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kernel GPU buffers, in both reports: TTM's buffers by owner, their
 * evictions, those evicted and not back, and each process's DRM fdinfo */
#include <json-c/json.h>
#include "common/json_util.h"
#include <stdlib.h>
#include <string.h>
#include "common/fmt.h"
#include "report_data.h"
#include "report_sections.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)
#define MAX_ROWS 20

static const char *owner_name(const struct model *m, __u32 pid, const char *comm, char *buf,
			      size_t size)
{
	const struct model_proc *p = pid ? model__proc(m, pid) : NULL;
	size_t i;

	if (!pid)
		return "made before tracing";
	for (i = 0; !comm[0] && i < m->nr_bo_owners; i++)
		if (m->bo_owners[i].pid == pid)
			comm = m->bo_owners[i].comm;
	snprintf(buf, size, "pid %u (%s)", pid, p && p->comm[0] ? p->comm : comm[0] ? comm : "?");
	return buf;
}

/* a traced owner's VRAM and GTT bytes at the rows of its process timeline */
static void print_bo_timeline(FILE *out, const struct model *m, const struct model_bo_owner *o)
{
	const struct model_proc *p = model__proc(m, o->pid);
	unsigned int i, n;
	char a[32], b[32];
	__s64 v, g;

	if (!p || (!o->vram.n && !o->gtt.n))
		return;
	n = timeline_rows(m, p, NULL);
	fprintf(out, "\n  pid %u's buffers over time\n    %9s %11s %11s\n", o->pid, "time", "vram",
		"gtt");
	for (i = 0; i < n; i++) {
		__u64 ts = timeline_ts(m, p, i, n);

		if (!series__at(&o->vram, ts, &v))
			v = 0;
		if (!series__at(&o->gtt, ts, &g))
			g = 0;
		fprintf(out, "    %7.2f s %11s %11s\n", model__secs(m, ts), B(a, v), B(b, g));
	}
}

void print_bos(FILE *out, const struct model *m)
{
	char a[32], b[32], c[32], d[32], e[32], name[48];
	__u64 left = 0, nleft = 0;
	size_t i;

	if (!m->bo_events)
		return;
	fprintf(out, "\nKernel GPU buffers (TTM)%s\n", m->all_bos ? ", every process (-a)" : "");
	fprintf(out, "  %-28s %6s %11s %11s %11s %11s %6s %9s\n", "owner", "live", "vram", "gtt",
		"system", "peak vram", "moves", "evictions");
	for (i = 0; i < m->nr_bo_owners; i++) {
		const struct model_bo_owner *o = &m->bo_owners[i];

		fprintf(out, "  %-28s %6llu %11s %11s %11s %11s %6llu %9llu\n",
			owner_name(m, o->pid, o->comm, name, sizeof(name)),
			(unsigned long long)o->live, B(a, o->bytes[BO_VRAM]),
			B(b, o->bytes[BO_GTT]), B(c, o->bytes[BO_SYSTEM]), B(d, o->peak[BO_VRAM]),
			(unsigned long long)o->moves, (unsigned long long)o->evictions);
	}
	for (i = 0; i < m->nr_bo_owners; i++)
		if (m->bo_owners[i].pid)
			print_bo_timeline(out, m, &m->bo_owners[i]);
	if (m->nr_evictions) {
		fprintf(out, "\n  Evictions: %zu\n    %9s %11s  %-16s %-28s %s\n", m->nr_evictions,
			"time", "size", "from -> to", "owner", "evicted by");
		for (i = 0; i < m->nr_evictions && i < MAX_ROWS; i++) {
			const struct model_eviction *v = &m->evictions[i];
			char move[32];

			snprintf(move, sizeof(move), "%s -> %s",
				 model_bo__place_name(v->from, v->amdgpu),
				 model_bo__place_name(v->to, v->amdgpu));
			fprintf(out, "    %7.2f s %11s  %-16s %-28s pid %u (%s)\n",
				model__secs(m, v->ts), B(a, v->size), move,
				owner_name(m, v->owner, "", name, sizeof(name)), v->evictor,
				v->evictor_comm);
		}
		if (m->nr_evictions > MAX_ROWS)
			fprintf(out, "    ... and %zu more\n", m->nr_evictions - MAX_ROWS);
	}
	for (i = 0; i < m->nr_bos; i++)
		if (m->bos[i].live && m->bos[i].left_vram) {
			left += m->bos[i].size;
			nleft++;
		}
	if (!nleft)
		return;
	fprintf(out, "\n  Evicted from VRAM and not back: %llu buffers, %s\n",
		(unsigned long long)nleft, B(e, left));
	for (i = 0; i < m->nr_bos; i++) {
		const struct model_bo *bo = &m->bos[i];

		if (!bo->live || !bo->left_vram)
			continue;
		fprintf(out, "    %11s in %-6s since %.2f s, %s, evicted by pid %u (%s)%s%s\n",
			B(a, bo->size), model_bo__place_name(bo->place, bo->amdgpu),
			model__secs(m, bo->left_vram_ts),
			owner_name(m, bo->owner, "", name, sizeof(name)), bo->evictor,
			bo->evictor_comm, bo->prefer ? "; it prefers " : "",
			model_bo__domains(bo->prefer, b, sizeof(b)));
	}
}

static struct json_object *bo_timeline_json(const struct model *m, const struct model_proc *p,
					    const struct model_bo_owner *w)
{
	struct json_object *a = json_object_new_array();
	unsigned int i, n = timeline_rows(m, p, NULL);
	__s64 v;

	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_new_object();
		__u64 ts = timeline_ts(m, p, i, n);

		add(x, "t_s", num(model__secs(m, ts)));
		add(x, "vram_bytes", i64(series__at(&w->vram, ts, &v) ? v : 0));
		add(x, "gtt_bytes", i64(series__at(&w->gtt, ts, &v) ? v : 0));
		json_object_array_add(a, x);
	}
	return a;
}

struct json_object *bos_json(const struct model *m)
{
	struct json_object *o, *owners, *ev, *left;
	char d[64];
	size_t i;

	if (!m->bo_events)
		return NULL;
	o = json_object_new_object();
	owners = json_object_new_array();
	ev = json_object_new_array();
	left = json_object_new_array();
	add(o, "events", u64(m->bo_events));
	for (i = 0; i < m->nr_bo_owners; i++) {
		const struct model_bo_owner *w = &m->bo_owners[i];
		const struct model_proc *p = w->pid ? model__proc(m, w->pid) : NULL;
		struct json_object *x = json_object_new_object();

		add(x, "pid", w->pid ? u64(w->pid) : NULL);
		add(x, "comm", str(p && p->comm[0] ? p->comm : w->comm));
		add(x, "live", u64(w->live));
		add(x, "created", u64(w->created));
		add(x, "freed", u64(w->freed));
		add(x, "vram_bytes", json_object_new_int64(w->bytes[BO_VRAM]));
		add(x, "gtt_bytes", json_object_new_int64(w->bytes[BO_GTT]));
		add(x, "system_bytes", json_object_new_int64(w->bytes[BO_SYSTEM]));
		add(x, "driver_bytes", json_object_new_int64(w->bytes[BO_OTHER]));
		add(x, "peak_vram_bytes", json_object_new_int64(w->peak[BO_VRAM]));
		add(x, "peak_gtt_bytes", json_object_new_int64(w->peak[BO_GTT]));
		add(x, "moves", u64(w->moves));
		add(x, "evictions", u64(w->evictions));
		add(x, "evicted_bytes", u64(w->evicted_bytes));
		add(x, "timeline", p ? bo_timeline_json(m, p, w) : NULL);
		json_object_array_add(owners, x);
	}
	for (i = 0; i < m->nr_evictions; i++) {
		const struct model_eviction *v = &m->evictions[i];
		struct json_object *x = json_object_new_object();

		add(x, "t_s", json_object_new_double(model__secs(m, v->ts)));
		add(x, "bo", u64(v->bo));
		add(x, "size_bytes", u64(v->size));
		add(x, "from", str(model_bo__place_name(v->from, v->amdgpu)));
		add(x, "to", str(model_bo__place_name(v->to, v->amdgpu)));
		add(x, "amdgpu", json_object_new_boolean(v->amdgpu));
		add(x, "owner_pid", v->owner ? u64(v->owner) : NULL);
		add(x, "evictor_pid", u64(v->evictor));
		add(x, "evictor_comm", str(v->evictor_comm));
		json_object_array_add(ev, x);
	}
	for (i = 0; i < m->nr_bos; i++) {
		const struct model_bo *b = &m->bos[i];
		struct json_object *x;

		if (!b->live || !b->left_vram)
			continue;
		x = json_object_new_object();
		add(x, "bo", u64(b->bo));
		add(x, "size_bytes", u64(b->size));
		add(x, "now_in", str(model_bo__place_name(b->place, b->amdgpu)));
		add(x, "amdgpu_flags", b->amdgpu ? u64(b->amdgpu_flags) : NULL);
		add(x, "since_s", json_object_new_double(model__secs(m, b->left_vram_ts)));
		add(x, "owner_pid", b->owner ? u64(b->owner) : NULL);
		add(x, "evictor_pid", u64(b->evictor));
		add(x, "evictor_comm", str(b->evictor_comm));
		add(x, "prefers",
		    b->prefer ? str(model_bo__domains(b->prefer, d, sizeof(d))) : NULL);
		add(x, "allowed",
		    b->allowed ? str(model_bo__domains(b->allowed, d, sizeof(d))) : NULL);
		json_object_array_add(left, x);
	}
	add(o, "owners", owners);
	add(o, "evictions", ev);
	add(o, "evicted_not_back", left);
	return o;
}

static const char *const drm_field_names[MODEL_DRM_NR] = {
	"vram total",	"vram resident",   "gtt total",	   "gtt resident",
	"system total", "system resident", "evicted vram",
};

static const char *const drm_field_keys[MODEL_DRM_NR] = {
	"vram_total_bytes",   "vram_resident_bytes",   "gtt_total_bytes",    "gtt_resident_bytes",
	"system_total_bytes", "system_resident_bytes", "evicted_vram_bytes",
};

void print_drm(FILE *out, const struct model_proc *p)
{
	const struct model_drm *d = p->drm;
	char a[32], b[32];
	int k;

	if (!d)
		return;
	fprintf(out, "  DRM fdinfo (%s, %zu client%s, %llu samples): ", d->driver, d->nr_clients,
		d->nr_clients == 1 ? "" : "s", (unsigned long long)d->samples);
	if (!d->valid) {
		fprintf(out, "the driver prints no memory counters\n");
		return;
	}
	fputc('\n', out);
	for (k = 0; k < MODEL_DRM_NR; k++)
		if (d->valid & (1u << k))
			fprintf(out, "    %-16s %11s (peak %s)\n", drm_field_names[k],
				B(a, d->bytes[k]), B(b, d->peak[k]));
}

struct json_object *drm_json(const struct model_proc *p)
{
	const struct model_drm *d = p->drm;
	struct json_object *o;
	char key[48];
	int k;

	if (!d)
		return NULL;
	o = json_object_new_object();
	add(o, "driver", str(d->driver));
	add(o, "clients", u64(d->nr_clients));
	add(o, "samples", u64(d->samples));
	for (k = 0; k < MODEL_DRM_NR; k++) {
		add(o, drm_field_keys[k], d->valid & (1u << k) ? u64(d->bytes[k]) : NULL);
		snprintf(key, sizeof(key), "peak_%s", drm_field_keys[k]);
		add(o, key, d->valid & (1u << k) ? u64(d->peak[k]) : NULL);
	}
	return o;
}
