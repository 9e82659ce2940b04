/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What a request did to memory: the one rule that the per-request table of
 * both reports and the live view's request panel share. Each level at the
 * request's end (the last event while it is open) less its level at the
 * start; a series with no point yet stands at 0 (GPU API memory before the
 * first allocation). */
#ifndef GMT_REQUESTS_H
#define GMT_REQUESTS_H

#include "model/model.h"

struct req_delta {
	__s64 anon;	      /* host anonymous RSS */
	__s64 gpu;	      /* GPU API memory of every API and kind that holds memory */
	__s64 gpu_in_host;    /* of gpu: a device's that is the host's RAM (in anon
			       * as far as it was touched): not to be added to anon */
	__s64 vram, gtt;      /* the process's kernel buffers by placement */
	bool has_gpu, has_bo; /* whether the process has any */
};

/* the request's end, or the last event's time while it is open */
__u64 requests__end(const struct model *m, const struct model_request *r);
void requests__delta(const struct model *m, const struct model_proc *p,
		     const struct model_request *r, struct req_delta *d);
/* what it did to the process's memory, host and GPU, each byte once */
__s64 requests__memory(const struct req_delta *d);

#endif
