// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A deliberate leak with a known owner, injected into the real llama-server
 * by LD_PRELOAD: each call of llama_sampler_chain_init (the server makes a
 * slot's sampler once a request, common_sampler_init) leaks LEAK_KIB KiB,
 * written to, from gmt_leak_keep, a function of its own. With LEAK_VK=1 it
 * leaks Vulkan device memory instead, from gmt_leak_vk_keep: allocated
 * with vkAllocateMemory on the device ggml-vulkan made (seen as it asks
 * vkGetDeviceProcAddr for its functions) and never freed. The ground truth
 * is its own count: after each call LEAK_LOG holds "CALLS BYTES". */
#include <vulkan/vulkan.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct llama_sampler_chain_params {
	bool no_perf;
};

static unsigned long calls, leaked;
static void *kept; /* a list, so that nothing reports it unreachable */

__attribute__((noinline, visibility("default"))) void gmt_leak_keep(size_t bytes)
{
	void **b = malloc(bytes);

	if (!b)
		return;
	memset(b, 0x5a, bytes);
	*b = kept;
	kept = b;
	leaked += bytes;
}

static VkDevice vk_device;
static PFN_vkCreateDevice vk_real_create;
static PFN_vkAllocateMemory vk_alloc;

/* the device ggml-vulkan computes on, as it is made */
static VkResult leak_create_device(VkPhysicalDevice gpu, const VkDeviceCreateInfo *info,
				   const VkAllocationCallbacks *cb, VkDevice *device)
{
	VkResult r = vk_real_create(gpu, info, cb, device);

	if (r == VK_SUCCESS && !vk_device)
		vk_device = *device;
	return r;
}

/* ggml-vulkan looks every function up here (vulkan.hpp's dynamic dispatch,
 * from the instance): the loader's, which its dlopen brought in (so not in
 * the global scope that RTLD_NEXT searches) */
PFN_vkVoidFunction vkGetInstanceProcAddr(VkInstance instance, const char *name)
{
	static PFN_vkGetInstanceProcAddr real;
	void *loader;

	if (!real &&
	    !(real = (PFN_vkGetInstanceProcAddr)dlsym(RTLD_NEXT, "vkGetInstanceProcAddr")) &&
	    (loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD)))
		real = (PFN_vkGetInstanceProcAddr)dlsym(loader, "vkGetInstanceProcAddr");
	if (!real)
		return NULL;
	if (instance && name && !strcmp(name, "vkCreateDevice")) {
		if (!vk_real_create)
			vk_real_create = (PFN_vkCreateDevice)real(instance, name);
		if (!vk_alloc)
			vk_alloc = (PFN_vkAllocateMemory)real(instance, "vkAllocateMemory");
		return vk_real_create ? (PFN_vkVoidFunction)leak_create_device : NULL;
	}
	return real(instance, name);
}

__attribute__((noinline, visibility("default"))) void gmt_leak_vk_keep(size_t bytes)
{
	VkMemoryAllocateInfo info = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				      .allocationSize = bytes,
				      .memoryTypeIndex = 0 };
	VkDeviceMemory mem;

	if (vk_device && vk_alloc && vk_alloc(vk_device, &info, NULL, &mem) == VK_SUCCESS)
		leaked += bytes;
}

static void log_count(void)
{
	const char *path = getenv("LEAK_LOG");
	char line[64];
	int fd, n;

	if (!path || (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%lu %lu\n", calls, leaked);
	if (write(fd, line, n) != n)
		perror("leak.so: LEAK_LOG");
	close(fd);
}

void *llama_sampler_chain_init(struct llama_sampler_chain_params p)
{
	static void *(*real)(struct llama_sampler_chain_params);
	const char *kib = getenv("LEAK_KIB"), *vk = getenv("LEAK_VK");
	size_t bytes = (kib ? strtoul(kib, NULL, 10) : 2048) * 1024;

	if (!real && !(real = (void *(*)(struct llama_sampler_chain_params))dlsym(
			       RTLD_NEXT, "llama_sampler_chain_init")))
		abort();
	calls++;
	if (vk && *vk == '1')
		gmt_leak_vk_keep(bytes);
	else
		gmt_leak_keep(bytes);
	log_count();
	return real(p);
}
