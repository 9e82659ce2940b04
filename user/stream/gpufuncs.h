/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the GPU API functions gpumemtrace probes, as the stream names them: their
 * index is gmt_gpu_call.func; append only, so old files keep names. How
 * the probes read their arguments is the source's (source/gpuprobes.h). */
#ifndef GMT_GPUFUNCS_H
#define GMT_GPUFUNCS_H

#include <stddef.h>
#include "event.h"

struct gpu_func {
	const char *name;
	__u8 api, op, kind;
};

extern const struct gpu_func gpu_funcs[];
extern const size_t gpu_nr_funcs;

/* "vkAllocateMemory", or "func#N" for an index this build does not know */
const char *gpufuncs__name(unsigned int func, char *buf, size_t size);
const char *gpufuncs__api_name(unsigned int api);   /* "Vulkan", "CUDA", "HIP" */
const char *gpufuncs__kind_name(unsigned int kind); /* "device", "host-pinned", ... */
/* "VK_ERROR_OUT_OF_DEVICE_MEMORY", "CUDA_ERROR_OUT_OF_MEMORY", ...; NULL if unknown */
const char *gpufuncs__result_name(unsigned int api, int result);

#endif
