// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Requests: owns the one rule for what a request did to memory, which both
 * reports' per-request table and the live view's panel use: each level at
 * its end less its level at its start (anonymous RSS, GPU API memory that
 * holds memory, VRAM and GTT buffers); the two added, a device's memory
 * that is the host's RAM counted once, in the host's. */
#include <stdint.h>
#include <string.h>
#include "requests.h"

static __s64 at(const struct series *s, __u64 ts)
{
	__s64 v;

	return series__at(s, ts, &v) ? v : 0;
}

static __s64 change(const struct series *s, __u64 from, __u64 to)
{
	return at(s, to) - at(s, from);
}

__u64 requests__end(const struct model *m, const struct model_request *r)
{
	return r->done ? r->end_ts : m->last_ts;
}

void requests__delta(const struct model *m, const struct model_proc *p,
		     const struct model_request *r, struct req_delta *d)
{
	__u64 from = r->start_ts, to = requests__end(m, r);
	unsigned int a, k;
	size_t i;

	memset(d, 0, sizeof(*d));
	d->anon = change(&p->rss[MODEL_RSS_ANON], from, to);
	if (p->gpu) {
		d->has_gpu = true;
		for (a = 0; a < MODEL_API_NR; a++)
			for (k = 0; k < MODEL_KIND_NR; k++) {
				__s64 c;

				if (!model_gpu__holds_memory(k))
					continue;
				c = change(&p->gpu->st[a][k].series, from, to);
				d->gpu += c;
				if (model__host_ram(m, a))
					d->gpu_in_host += c;
			}
	}
	for (i = 0; i < m->nr_bo_owners; i++)
		if (m->bo_owners[i].pid == p->pid) {
			d->has_bo = true;
			d->vram = change(&m->bo_owners[i].vram, from, to);
			d->gtt = change(&m->bo_owners[i].gtt, from, to);
		}
}

__s64 requests__memory(const struct req_delta *d)
{
	__s64 apart;

	if (__builtin_sub_overflow(d->gpu, d->gpu_in_host, &apart))
		apart = d->gpu_in_host > 0 ? INT64_MIN : INT64_MAX;
	return model__add_sat(d->anon, apart);
}
