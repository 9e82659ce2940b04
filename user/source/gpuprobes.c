// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GPU probe cookies: owns the table of how bpf/gpuapi.bpf.c reads each GPU
 * API function's arguments (its shape), by name, packed with the function's
 * api, index, operation and kind into its BPF cookie. The names the stream
 * keeps are stream/gpufuncs.c's; this is the source's side. */
#include <string.h>
#include "gpuprobes.h"
#include "stream/gpufuncs.h"

/* how each function's arguments are read (bpf/gpuapi.bpf.c), by name */
static const struct {
	const char *name;
	__u8 shape;
} shapes[] = {
	{ "vkAllocateMemory", GMT_SH_VK_ALLOC },
	{ "vkFreeMemory", GMT_SH_VK_FREE },
	{ "vkMapMemory", GMT_SH_VK_MAP },
	{ "vkUnmapMemory", GMT_SH_VK_FREE },
	{ "cuMemAlloc_v2", GMT_SH_OUT_SIZE },
	{ "cuMemAllocPitch_v2", GMT_SH_PITCH },
	{ "cuMemFree_v2", GMT_SH_HANDLE },
	{ "cuMemAllocHost_v2", GMT_SH_OUT_SIZE },
	{ "cuMemHostAlloc", GMT_SH_OUT_SIZE },
	{ "cuMemFreeHost", GMT_SH_HANDLE },
	{ "cuMemAllocManaged", GMT_SH_OUT_SIZE },
	{ "cuMemAllocAsync", GMT_SH_OUT_SIZE },
	{ "cuMemAllocAsync_ptsz", GMT_SH_OUT_SIZE },
	{ "cuMemAllocFromPoolAsync", GMT_SH_OUT_SIZE },
	{ "cuMemAllocFromPoolAsync_ptsz", GMT_SH_OUT_SIZE },
	{ "cuMemFreeAsync", GMT_SH_HANDLE },
	{ "cuMemFreeAsync_ptsz", GMT_SH_HANDLE },
	{ "cuMemCreate", GMT_SH_OUT_SIZE },
	{ "cuMemRelease", GMT_SH_HANDLE },
	{ "cuMemMap", GMT_SH_MEMMAP },
	{ "cuMemUnmap", GMT_SH_PTR_SIZE },
	{ "cuMemAddressReserve", GMT_SH_OUT_SIZE },
	{ "cuMemAddressFree", GMT_SH_PTR_SIZE },
	{ "cuGraphInstantiate", GMT_SH_OUT },
	{ "cuGraphInstantiate_v2", GMT_SH_OUT },
	{ "cuGraphInstantiateWithFlags", GMT_SH_OUT },
	{ "cuGraphInstantiateWithParams", GMT_SH_OUT },
	{ "cuGraphInstantiateWithParams_ptsz", GMT_SH_OUT },
	{ "cuGraphExecDestroy", GMT_SH_HANDLE },
	{ "cuMemGetInfo_v2", GMT_SH_MEMINFO },
	{ "hipMalloc", GMT_SH_OUT_SIZE },
	{ "hipFree", GMT_SH_HANDLE },
	{ "hipMallocManaged", GMT_SH_OUT_SIZE },
	{ "hipHostMalloc", GMT_SH_OUT_SIZE },
	{ "hipHostFree", GMT_SH_HANDLE },
	{ "hipMallocAsync", GMT_SH_OUT_SIZE },
	{ "hipFreeAsync", GMT_SH_HANDLE },
	{ "hipMemCreate", GMT_SH_OUT_SIZE },
	{ "hipMemRelease", GMT_SH_HANDLE },
	{ "hipGraphInstantiate", GMT_SH_OUT },
	{ "hipGraphInstantiateWithFlags", GMT_SH_OUT },
	{ "hipGraphExecDestroy", GMT_SH_HANDLE },
	{ "hipMemGetInfo", GMT_SH_MEMINFO },
	{ "cuDeviceGetAttribute", GMT_SH_DEV_ATTR },
};

int gpuprobes__cookie(unsigned int func, __u64 *cookie)
{
	const struct gpu_func *f;
	size_t i;

	if (func >= gpu_nr_funcs)
		return -1;
	f = &gpu_funcs[func];
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (!strcmp(shapes[i].name, f->name)) {
			*cookie = GMT_COOKIE(f->api, func, shapes[i].shape, f->op, f->kind);
			return 0;
		}
	return -1;
}
