// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kernel GPU buffers from BO events: where each one is, whose it is, who
 * pushed it out of VRAM */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/fmt.h"
#include "model_int.h"

const char *model_bo__place_name(__s32 place, bool amdgpu)
{
	/* AMDGPU_PL_* from TTM_PL_PRIV (3) on */
	static const char *const amd[] = {
		"gds", "gws", "oa", "preempt", "doorbell", "mmio_remap"
	};

	if (amdgpu && place >= 3 && place < 3 + (int)(sizeof(amd) / sizeof(amd[0])))
		return amd[place - 3];
	switch (place) {
	case MODEL_PL_NONE:
		return "none";
	case MODEL_PL_SYSTEM:
		return "system";
	case MODEL_PL_TT:
		return "gtt";
	case MODEL_PL_VRAM:
		return "vram";
	default:
		return "driver";
	}
}

const char *model_bo__domains(__u32 d, char *buf, size_t size)
{
	static const char *const names[] = { "cpu", "gtt", "vram", "gds", "gws", "oa", "doorbell" };

	return fmt_flags(buf, size, d, names, sizeof(names) / sizeof(names[0]));
}

static int slot(__s32 place)
{
	return place == MODEL_PL_SYSTEM ? BO_SYSTEM :
	       place == MODEL_PL_TT	? BO_GTT :
	       place == MODEL_PL_VRAM	? BO_VRAM :
					  BO_OTHER;
}

static struct model_bo_owner *owner(struct model *m, __u32 pid)
{
	size_t i;

	for (i = 0; i < m->nr_bo_owners; i++)
		if (m->bo_owners[i].pid == pid)
			return &m->bo_owners[i];
	if (model__grow((void **)&m->bo_owners, &m->bo_owners_cap, m->nr_bo_owners,
			sizeof(*m->bo_owners)))
		return NULL;
	m->bo_owners[m->nr_bo_owners] = (struct model_bo_owner){ .pid = pid };
	return &m->bo_owners[m->nr_bo_owners++];
}

/* the newest buffer at that address: addresses are reused after a free */
static struct model_bo *find(struct model *m, __u64 bo)
{
	size_t i;

	for (i = m->nr_bos; i-- > 0;)
		if (m->bos[i].bo == bo)
			return m->bos[i].live ? &m->bos[i] : NULL;
	return NULL;
}

static void place_bytes(struct model_bo_owner *o, __u64 ts, __s32 place, __s64 delta)
{
	int k = slot(place);

	if (place == MODEL_PL_NONE)
		return;
	o->bytes[k] += delta;
	if (o->bytes[k] > o->peak[k])
		o->peak[k] = o->bytes[k];
	if (k == BO_VRAM)
		series__add(&o->vram, ts, o->bytes[k], 0);
	else if (k == BO_GTT)
		series__add(&o->gtt, ts, o->bytes[k], 0);
}

static void on_eviction(struct model *m, const struct gmt_bo *e, struct model_bo *b)
{
	struct model_eviction *v = m->nr_evictions ? &m->evictions[m->nr_evictions - 1] : NULL;

	/* TTM bounced it (VRAM -> GTT -> system): the same eviction goes on */
	if (v && e->evict_id && v->evict_id == e->evict_id && v->bo == e->bo) {
		v->to = e->to;
		return;
	}
	if (model__grow((void **)&m->evictions, &m->evictions_cap, m->nr_evictions,
			sizeof(*m->evictions)))
		return;
	v = &m->evictions[m->nr_evictions++];
	*v = (struct model_eviction){ .ts = e->hdr.ts_ns,
				      .bo = e->bo,
				      .size = b->size,
				      .from = e->from,
				      .to = e->to,
				      .owner = b->owner,
				      .evictor = e->hdr.pid,
				      .evict_id = e->evict_id,
				      .amdgpu = b->amdgpu };
	fmt_clean(v->evictor_comm, sizeof(v->evictor_comm), e->comm, sizeof(e->comm));
	owner(m, b->owner)->evictions++;
	owner(m, b->owner)->evicted_bytes += b->size;
}

void model_bo__add(struct model *m, const struct gmt_bo *e)
{
	struct model_bo *b = find(m, e->bo);
	struct model_bo_owner *o;

	m->bo_events++;
	if (e->op == GMT_BO_DOMAINS) {
		if (b) {
			b->prefer = e->prefer;
			b->allowed = e->allowed;
			b->amdgpu_flags = e->amdgpu_flags;
			b->amdgpu = true;
		}
		return;
	}
	if (e->op == GMT_BO_CREATE || (!b && e->op == GMT_BO_MOVE)) {
		/* a move of a buffer not seen before: made before tracing */
		if (b)
			b->live = false;
		if (model__grow((void **)&m->bos, &m->bos_cap, m->nr_bos, sizeof(*m->bos)))
			return;
		b = &m->bos[m->nr_bos++];
		*b = (struct model_bo){ .bo = e->bo,
					.size = e->size,
					.ts = e->hdr.ts_ns,
					.place = e->op == GMT_BO_CREATE ? e->to : e->from,
					.owner = e->owner,
					.live = true,
					.amdgpu = e->flags & GMT_BOF_AMDGPU };
		o = owner(m, e->owner);
		if (!o)
			return;
		if (e->owner && e->owner == e->hdr.pid)
			fmt_clean(o->comm, sizeof(o->comm), e->comm, sizeof(e->comm));
		o->live++;
		o->created += e->op == GMT_BO_CREATE;
		o->created_bytes += e->op == GMT_BO_CREATE ? e->size : 0;
		place_bytes(o, e->hdr.ts_ns, b->place, b->size);
		if (e->op == GMT_BO_CREATE)
			return;
	}
	if (!b || !(o = owner(m, b->owner)))
		return;
	b->amdgpu |= !!(e->flags & GMT_BOF_AMDGPU);
	switch (e->op) {
	case GMT_BO_MOVE:
		o->moves++;
		place_bytes(o, e->hdr.ts_ns, b->place, -(__s64)b->size);
		place_bytes(o, e->hdr.ts_ns, e->to, b->size);
		if (e->evict)
			on_eviction(m, e, b);
		if (b->place == MODEL_PL_VRAM && e->to != MODEL_PL_VRAM && e->evict &&
		    !b->left_vram) {
			b->left_vram = true;
			b->left_vram_ts = e->hdr.ts_ns;
			b->evictor = e->hdr.pid;
			fmt_clean(b->evictor_comm, sizeof(b->evictor_comm), e->comm,
				  sizeof(e->comm));
		} else if (e->to == MODEL_PL_VRAM) {
			b->left_vram = false;
		}
		b->place = e->to;
		break;
	case GMT_BO_FREE:
		place_bytes(o, e->hdr.ts_ns, b->place, -(__s64)b->size);
		o->live--;
		o->freed++;
		o->last_free_ts = e->hdr.ts_ns;
		b->live = false;
		break;
	}
}

void model_bo__free(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nr_bo_owners; i++) {
		free(m->bo_owners[i].vram.p);
		free(m->bo_owners[i].gtt.p);
	}
	free(m->bo_owners);
	free(m->bos);
	free(m->evictions);
}

void model_drm__add(struct model_proc *p, const struct gmt_drm_fdinfo *e)
{
	struct model_drm *d = p->drm;
	size_t i;
	int k;

	if (!d && !(d = p->drm = calloc(1, sizeof(*d))))
		return;
	d->samples++;
	for (i = 0; i < d->nr_clients && d->clients[i].client_id != e->client_id; i++)
		;
	if (i == d->nr_clients) {
		if (i == MODEL_DRM_CLIENTS)
			return;
		d->nr_clients++;
	}
	d->clients[i].client_id = e->client_id;
	d->clients[i].valid = e->valid;
	memcpy(d->clients[i].bytes, e->bytes, sizeof(d->clients[i].bytes));
	memcpy(d->driver, e->driver, sizeof(d->driver));
	d->driver[sizeof(d->driver) - 1] = 0;
	d->valid = 0;
	memset(d->bytes, 0, sizeof(d->bytes));
	for (i = 0; i < d->nr_clients; i++) {
		d->valid |= d->clients[i].valid;
		for (k = 0; k < MODEL_DRM_NR; k++)
			d->bytes[k] += d->clients[i].bytes[k];
	}
	for (k = 0; k < MODEL_DRM_NR; k++)
		if (d->bytes[k] > d->peak[k])
			d->peak[k] = d->bytes[k];
	if (d->valid & (1u << MODEL_DRM_VRAM_RESIDENT))
		series__add(&d->vram, e->hdr.ts_ns, d->bytes[MODEL_DRM_VRAM_RESIDENT], 0);
	if (d->valid & (1u << MODEL_DRM_GTT_RESIDENT))
		series__add(&d->gtt, e->hdr.ts_ns, d->bytes[MODEL_DRM_GTT_RESIDENT], 0);
}

void model_drm__free(struct model_drm *d)
{
	if (!d)
		return;
	free(d->vram.p);
	free(d->gtt.p);
	free(d);
}
