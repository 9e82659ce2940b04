// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GPU functions: owns the table of probed GPU API functions whose index is
 * the stream's gmt_gpu_call.func (append only, so old files keep their
 * names), with each one's API, operation and kind, and the names of APIs,
 * kinds and result codes for the reports and the dump. */
#include <stdio.h>
#include "gpufuncs.h"

#define VK GMT_API_VK
#define CU GMT_API_CU
#define HIP GMT_API_HIP

/* Frees name the kind of memory they end; the model matches a free to its
 * allocation by handle, so cuMemFree_v2 also ends managed memory. */
const struct gpu_func gpu_funcs[] = {
	{ "vkAllocateMemory", VK, GMT_GOP_ALLOC, GMT_GK_VK_MEMORY },
	{ "vkFreeMemory", VK, GMT_GOP_FREE, GMT_GK_VK_MEMORY },
	{ "vkMapMemory", VK, GMT_GOP_MAP, GMT_GK_VK_MEMORY },
	{ "vkUnmapMemory", VK, GMT_GOP_UNMAP, GMT_GK_VK_MEMORY },

	{ "cuMemAlloc_v2", CU, GMT_GOP_ALLOC, GMT_GK_DEVICE },
	{ "cuMemAllocPitch_v2", CU, GMT_GOP_ALLOC, GMT_GK_DEVICE },
	{ "cuMemFree_v2", CU, GMT_GOP_FREE, GMT_GK_DEVICE },
	{ "cuMemAllocHost_v2", CU, GMT_GOP_ALLOC, GMT_GK_HOST },
	{ "cuMemHostAlloc", CU, GMT_GOP_ALLOC, GMT_GK_HOST },
	{ "cuMemFreeHost", CU, GMT_GOP_FREE, GMT_GK_HOST },
	{ "cuMemAllocManaged", CU, GMT_GOP_ALLOC, GMT_GK_MANAGED },
	{ "cuMemAllocAsync", CU, GMT_GOP_ALLOC, GMT_GK_DEVICE },
	{ "cuMemAllocAsync_ptsz", CU, GMT_GOP_ALLOC, GMT_GK_DEVICE },
	{ "cuMemAllocFromPoolAsync", CU, GMT_GOP_ALLOC, GMT_GK_DEVICE },
	{ "cuMemAllocFromPoolAsync_ptsz", CU, GMT_GOP_ALLOC, GMT_GK_DEVICE },
	{ "cuMemFreeAsync", CU, GMT_GOP_FREE, GMT_GK_DEVICE },
	{ "cuMemFreeAsync_ptsz", CU, GMT_GOP_FREE, GMT_GK_DEVICE },
	{ "cuMemCreate", CU, GMT_GOP_ALLOC, GMT_GK_VMM_PHYS },
	{ "cuMemRelease", CU, GMT_GOP_FREE, GMT_GK_VMM_PHYS },
	{ "cuMemMap", CU, GMT_GOP_ALLOC, GMT_GK_VMM_MAP },
	{ "cuMemUnmap", CU, GMT_GOP_FREE, GMT_GK_VMM_MAP },
	{ "cuMemAddressReserve", CU, GMT_GOP_ALLOC, GMT_GK_VA_RESERVE },
	{ "cuMemAddressFree", CU, GMT_GOP_FREE, GMT_GK_VA_RESERVE },
	{ "cuGraphInstantiate", CU, GMT_GOP_ALLOC, GMT_GK_GRAPH_EXEC },
	{ "cuGraphInstantiate_v2", CU, GMT_GOP_ALLOC, GMT_GK_GRAPH_EXEC },
	{ "cuGraphInstantiateWithFlags", CU, GMT_GOP_ALLOC, GMT_GK_GRAPH_EXEC },
	{ "cuGraphInstantiateWithParams", CU, GMT_GOP_ALLOC, GMT_GK_GRAPH_EXEC },
	{ "cuGraphInstantiateWithParams_ptsz", CU, GMT_GOP_ALLOC, GMT_GK_GRAPH_EXEC },
	{ "cuGraphExecDestroy", CU, GMT_GOP_FREE, GMT_GK_GRAPH_EXEC },
	{ "cuMemGetInfo_v2", CU, GMT_GOP_INFO, GMT_GK_DEVICE },

	{ "hipMalloc", HIP, GMT_GOP_ALLOC, GMT_GK_DEVICE },
	{ "hipFree", HIP, GMT_GOP_FREE, GMT_GK_DEVICE },
	{ "hipMallocManaged", HIP, GMT_GOP_ALLOC, GMT_GK_MANAGED },
	{ "hipHostMalloc", HIP, GMT_GOP_ALLOC, GMT_GK_HOST },
	{ "hipHostFree", HIP, GMT_GOP_FREE, GMT_GK_HOST },
	{ "hipMallocAsync", HIP, GMT_GOP_ALLOC, GMT_GK_DEVICE },
	{ "hipFreeAsync", HIP, GMT_GOP_FREE, GMT_GK_DEVICE },
	{ "hipMemCreate", HIP, GMT_GOP_ALLOC, GMT_GK_VMM_PHYS },
	{ "hipMemRelease", HIP, GMT_GOP_FREE, GMT_GK_VMM_PHYS },
	{ "hipGraphInstantiate", HIP, GMT_GOP_ALLOC, GMT_GK_GRAPH_EXEC },
	{ "hipGraphInstantiateWithFlags", HIP, GMT_GOP_ALLOC, GMT_GK_GRAPH_EXEC },
	{ "hipGraphExecDestroy", HIP, GMT_GOP_FREE, GMT_GK_GRAPH_EXEC },
	{ "hipMemGetInfo", HIP, GMT_GOP_INFO, GMT_GK_DEVICE },

	{ "cuDeviceGetAttribute", CU, GMT_GOP_ATTR, GMT_GK_DEVICE },
};

const size_t gpu_nr_funcs = sizeof(gpu_funcs) / sizeof(gpu_funcs[0]);

const char *gpufuncs__name(unsigned int func, char *buf, size_t size)
{
	if (func < gpu_nr_funcs)
		return gpu_funcs[func].name;
	snprintf(buf, size, "func#%u", func);
	return buf;
}

const char *gpufuncs__api_name(unsigned int api)
{
	static const char *names[GMT_API_NR] = { "?", "Vulkan", "CUDA", "HIP" };

	return api < GMT_API_NR ? names[api] : "?";
}

const char *gpufuncs__kind_name(unsigned int kind)
{
	static const char *names[GMT_GK_NR] = { "device",	"host-pinned", "managed",
						"vmm-physical", "vmm-mapped",  "va-reserved",
						"graph-exec",	"memory" };

	return kind < GMT_GK_NR ? names[kind] : "?";
}

struct result_name {
	int code;
	const char *name;
};

static const struct result_name vk_results[] = {
	{ -1, "VK_ERROR_OUT_OF_HOST_MEMORY" },
	{ -2, "VK_ERROR_OUT_OF_DEVICE_MEMORY" },
	{ -3, "VK_ERROR_INITIALIZATION_FAILED" },
	{ -4, "VK_ERROR_DEVICE_LOST" },
	{ -5, "VK_ERROR_MEMORY_MAP_FAILED" },
	{ -13, "VK_ERROR_UNKNOWN" },
	{ -1000069000, "VK_ERROR_OUT_OF_POOL_MEMORY" },
	{ -1000072003, "VK_ERROR_INVALID_EXTERNAL_HANDLE" },
	{ -1000257000, "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS" },
	{ 0, NULL },
};

static const struct result_name cu_results[] = {
	{ 1, "CUDA_ERROR_INVALID_VALUE" },
	{ 2, "CUDA_ERROR_OUT_OF_MEMORY" },
	{ 3, "CUDA_ERROR_NOT_INITIALIZED" },
	{ 4, "CUDA_ERROR_DEINITIALIZED" },
	{ 101, "CUDA_ERROR_INVALID_DEVICE" },
	{ 201, "CUDA_ERROR_INVALID_CONTEXT" },
	{ 400, "CUDA_ERROR_INVALID_HANDLE" },
	{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS" },
	{ 801, "CUDA_ERROR_NOT_SUPPORTED" },
	{ 999, "CUDA_ERROR_UNKNOWN" },
	{ 0, NULL },
};

static const struct result_name hip_results[] = {
	{ 1, "hipErrorInvalidValue" },	  { 2, "hipErrorOutOfMemory" },
	{ 3, "hipErrorNotInitialized" },  { 101, "hipErrorInvalidDevice" },
	{ 400, "hipErrorInvalidHandle" }, { 801, "hipErrorNotSupported" },
	{ 999, "hipErrorUnknown" },	  { 0, NULL },
};

const char *gpufuncs__result_name(unsigned int api, int result)
{
	const struct result_name *r = api == GMT_API_VK	 ? vk_results :
				      api == GMT_API_CU	 ? cu_results :
				      api == GMT_API_HIP ? hip_results :
							   NULL;

	if (!result)
		return api == GMT_API_VK ? "VK_SUCCESS" :
		       api == GMT_API_CU ? "CUDA_SUCCESS" :
					   "hipSuccess";
	for (; r && r->name; r++)
		if (r->code == result)
			return r->name;
	return NULL;
}
