// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A Vulkan program with known allocations, for the gpuapi tests: on the first
 * device (lavapipe in CI) it allocates through the loader's exported
 * vkAllocateMemory and through pointers from vkGetDeviceProcAddr, which skip
 * the loader; frees half of each through the other path; maps one; asks for
 * an impossible size; then prints what it did as JSON.
 *
 *   vkalloc [--loaded FIFO] [--start FIFO] [--ready FIFO] [--wait FIFO] [--out FILE]
 *           [--loader N] [--direct N] [--unit BYTES] [--dedicated] [--hold FIFO]
 *
 * --loaded FIFO write a line before vkCreateInstance (the loader is mapped,
 *               no driver yet)
 * --start FIFO read one byte before vkCreateInstance
 * --ready FIFO write a line once the device exists (the driver is mapped)
 * --wait FIFO  read one byte before allocating
 * --hold FIFO  read one byte before exiting, with the live half still live */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fifo.h"
#include <vulkan/vulkan.h>

#define MAX_ALLOCS 256

static VkDevice dev;
static PFN_vkAllocateMemory direct_alloc;
static PFN_vkFreeMemory direct_free;

static void die(const char *what, VkResult r)
{
	fprintf(stderr, "vkalloc: %s failed: %d\n", what, r);
	exit(1);
}

static VkMemoryAllocateInfo info(VkDeviceSize size, const void *next)
{
	return (VkMemoryAllocateInfo){ .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				       .pNext = next,
				       .allocationSize = size,
				       .memoryTypeIndex = 0 };
}

/* noinline, with frame pointers: the stacks in the report name these */
__attribute__((noinline)) static VkDeviceMemory alloc_via_loader(VkDeviceSize size)
{
	VkMemoryAllocateInfo ai = info(size, NULL);
	VkDeviceMemory m;
	VkResult r = vkAllocateMemory(dev, &ai, NULL, &m);

	if (r != VK_SUCCESS)
		die("vkAllocateMemory", r);
	return m;
}

__attribute__((noinline)) static VkDeviceMemory alloc_direct(VkDeviceSize size, const void *next)
{
	VkMemoryAllocateInfo ai = info(size, next);
	VkDeviceMemory m;
	VkResult r = direct_alloc(dev, &ai, NULL, &m);

	if (r != VK_SUCCESS)
		die("direct vkAllocateMemory", r);
	return m;
}

__attribute__((noinline)) static VkResult alloc_impossible(VkDeviceSize size)
{
	VkMemoryAllocateInfo ai = info(size, NULL);
	VkDeviceMemory m = VK_NULL_HANDLE;

	return vkAllocateMemory(dev, &ai, NULL, &m);
}

int main(int argc, char **argv)
{
	const char *wait = NULL, *hold = NULL, *out = NULL, *ready = NULL, *start = NULL,
		   *loaded = NULL;
	int loader_n = 4, direct_n = 4, dedicated = 0, i;
	uint64_t unit = 1 << 20, bytes = 0, live_bytes = 0, freed = 0, live_loader = 0,
		 live_direct = 0;
	VkDeviceMemory mem[MAX_ALLOCS];
	uint64_t size[MAX_ALLOCS];
	int n = 0, frees = 0;
	VkInstance inst;
	VkPhysicalDevice pd;
	uint32_t npd = 1;
	VkResult r;
	void *p = NULL;
	FILE *f;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(argv[i], "--wait"))
			wait = v, i++;
		else if (!strcmp(argv[i], "--start"))
			start = v, i++;
		else if (!strcmp(argv[i], "--loaded"))
			loaded = v, i++;
		else if (!strcmp(argv[i], "--ready"))
			ready = v, i++;
		else if (!strcmp(argv[i], "--hold"))
			hold = v, i++;
		else if (!strcmp(argv[i], "--out"))
			out = v, i++;
		else if (!strcmp(argv[i], "--loader"))
			loader_n = atoi(v), i++;
		else if (!strcmp(argv[i], "--direct"))
			direct_n = atoi(v), i++;
		else if (!strcmp(argv[i], "--unit"))
			unit = strtoull(v, NULL, 0), i++;
		else if (!strcmp(argv[i], "--dedicated"))
			dedicated = 1;
		else {
			fprintf(stderr, "vkalloc: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (loader_n + direct_n > MAX_ALLOCS)
		return 2;

	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
				  .apiVersion = VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
				     .pApplicationInfo = &app };
	say_ready(loaded);
	wait_fifo(start);
	if ((r = vkCreateInstance(&ici, NULL, &inst)))
		die("vkCreateInstance", r);
	if ((r = vkEnumeratePhysicalDevices(inst, &npd, &pd)) < 0 || !npd)
		die("vkEnumeratePhysicalDevices", r);
	float prio = 1;
	VkDeviceQueueCreateInfo q = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
				      .queueCount = 1,
				      .pQueuePriorities = &prio };
	VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
				   .queueCreateInfoCount = 1,
				   .pQueueCreateInfos = &q };
	if ((r = vkCreateDevice(pd, &dci, NULL, &dev)))
		die("vkCreateDevice", r);
	direct_alloc = (PFN_vkAllocateMemory)vkGetDeviceProcAddr(dev, "vkAllocateMemory");
	direct_free = (PFN_vkFreeMemory)vkGetDeviceProcAddr(dev, "vkFreeMemory");
	if (!direct_alloc || !direct_free)
		die("vkGetDeviceProcAddr", VK_ERROR_UNKNOWN);
	say_ready(ready);
	wait_fifo(wait);

	for (i = 0; i < loader_n; i++) {
		size[n] = (i + 1) * unit;
		mem[n++] = alloc_via_loader((i + 1) * unit);
	}
	/* a dedicated allocation needs a buffer; the driver checks nothing else */
	VkBuffer buf = VK_NULL_HANDLE;
	VkBufferCreateInfo bci = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
				   .size = unit,
				   .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT };
	if (dedicated && (r = vkCreateBuffer(dev, &bci, NULL, &buf)))
		die("vkCreateBuffer", r);
	VkMemoryDedicatedAllocateInfo ded = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, .buffer = buf
	};
	for (i = 0; i < direct_n; i++) {
		size[n] = (i + 1) * unit * 3;
		mem[n++] = alloc_direct((i + 1) * unit * 3, dedicated && i == 0 ? &ded : NULL);
	}
	for (i = 0; i < n; i++)
		bytes += size[i];
	if (n && (r = vkMapMemory(dev, mem[0], 0, VK_WHOLE_SIZE, 0, &p)))
		die("vkMapMemory", r);
	if (n) {
		memset(p, 1, 4096);
		vkUnmapMemory(dev, mem[0]);
	}
	/* the first half of each group, freed through the other path */
	for (i = 0; i < loader_n / 2; i++, frees++)
		direct_free(dev, mem[i], NULL), freed += size[i];
	for (i = loader_n; i < loader_n + direct_n / 2; i++, frees++)
		vkFreeMemory(dev, mem[i], NULL), freed += size[i];
	live_bytes = bytes - freed;
	for (i = loader_n / 2; i < loader_n; i++)
		live_loader += size[i];
	for (i = loader_n + direct_n / 2; i < n; i++)
		live_direct += size[i];
	/* more than any heap: the driver must refuse */
	uint64_t huge = 1ull << 50;
	r = alloc_impossible(huge);

	f = out ? fopen(out, "w") : stdout;
	if (!f)
		return 1;
	fprintf(f,
		"{\"allocs\": %d, \"bytes\": %llu, \"frees\": %d, \"freed_bytes\": %llu, "
		"\"live\": %d, \"live_bytes\": %llu, \"maps\": %d, \"fail_size\": %llu, "
		"\"fail_result\": %d, \"dedicated\": %d, \"live_loader_bytes\": %llu, "
		"\"live_direct_bytes\": %llu, \"handles\": [",
		n, (unsigned long long)bytes, frees, (unsigned long long)freed, n - frees,
		(unsigned long long)live_bytes, !!n, (unsigned long long)huge, r, dedicated,
		(unsigned long long)live_loader, (unsigned long long)live_direct);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)(uintptr_t)mem[i]);
	fprintf(f, "]}\n");
	if (f != stdout)
		fclose(f);
	wait_fifo(hold);
	return 0;
}
