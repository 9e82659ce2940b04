// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gpumemtrace-vkinfo: asks one Vulkan driver (ICD) library what the traced
 * program's copy of it would answer: its devices' memory types and heaps,
 * and where in the file its vkAllocateMemory & co. start. Drivers are
 * stripped, and vkGetDeviceProcAddr hands applications pointers straight
 * into them; those pointers, turned into file offsets, are where gpumemtrace
 * puts its uprobes. A separate, dynamically linked program: a static
 * gpumemtrace cannot dlopen a driver, and a driver taken from the target's
 * file system runs here as the target's user, in its mount namespace.
 *
 * The driver runs under a seccomp filter (sandbox.c): no network, no other
 * process, no namespace, mount, BPF or key.
 *
 * usage: gpumemtrace-vkinfo [--pid PID] ICD_LIBRARY
 * prints lines: device I VENDOR DEVICE NAME / type I FLAGS HEAP /
 * heap I SIZE FLAGS / devtype I VkPhysicalDeviceType / func NAME DEV INO OFFSET / error TEXT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <sched.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vulkan/vulkan.h>
#include "sandbox.h"

typedef VkResult(VKAPI_PTR *negotiate_fn)(uint32_t *);

static const char *const funcs[] = { "vkAllocateMemory", "vkFreeMemory", "vkMapMemory",
				     "vkUnmapMemory" };

static int fail(const char *what)
{
	printf("error %s\n", what);
	return 1;
}

#define NOBODY 65534

/* the target's namespace of a type, opened while we may still see it (in
 * its user namespace we could not: its memory belongs to the host's); -1 on
 * error, -2 where we are in it already */
static int open_ns(const char *pid, const char *name)
{
	char path[64], self[64], a[64] = "", b[64] = "";

	snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, name);
	snprintf(self, sizeof(self), "/proc/self/ns/%s", name);
	if (readlink(path, a, sizeof(a) - 1) < 0 || readlink(self, b, sizeof(b) - 1) < 0)
		return -1;
	if (!strcmp(a, b))
		return -2;
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* 1 entered, 0 there already, -1 failed; closes fd */
static int enter_ns(int fd, int type)
{
	int r;

	if (fd == -2)
		return 0;
	if (fd < 0)
		return -1;
	r = setns(fd, type);
	close(fd);
	return r ? -1 : 1;
}

/* the target's ids and supplementary groups (its access to /dev/dri, say),
 * as the user namespace we are in when this runs sees them */
static int target_ids(const char *pid, uid_t *uid, gid_t *gid, gid_t *g, int max)
{
	char path[64], line[1024], *p, *end;
	int n = 0, ids = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Uid:", 4))
			ids |= (sscanf(line + 4, "%u", uid) == 1) << 0;
		else if (!strncmp(line, "Gid:", 4))
			ids |= (sscanf(line + 4, "%u", gid) == 1) << 1;
		else if (!strncmp(line, "Groups:", 7))
			for (p = line + 7; n < max; p = end) {
				unsigned long v = strtoul(p, &end, 10);

				if (end == p)
					break;
				if (v && v != NOBODY) /* unmapped ones show as nobody */
					g[n++] = v;
			}
	fclose(f);
	return ids == 3 ? n : -1;
}

/* no capabilities after any exec or change of ids: an empty bounding set,
 * and root (in a user namespace of the target's) that gains nothing from its
 * uid; taken while we still may, the ids are changed after */
static int limit_capabilities(void)
{
	int c;

	for (c = 0; c <= 63; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL)
			return -1;
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			  SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0))
		return -1;
	return 0;
}

/* none left now, checked */
static int clear_capabilities(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct cap[2] = {};

	if (syscall(SYS_capset, &hdr, cap) || syscall(SYS_capget, &hdr, cap))
		return -1;
	return cap[0].effective | cap[1].effective | cap[0].permitted | cap[1].permitted |
			       cap[0].inheritable | cap[1].inheritable ?
		       -1 :
		       0;
}

/* As the target, with no more than it has: its user namespace, its mount
 * namespace and root, its ids as that namespace sees them (nobody for root
 * in the host's namespace: a driver from a container's file system never
 * runs as the host's root), its groups, no capabilities, and no way to gain
 * any (no_new_privs). Root in a user namespace of its own stays root there,
 * which is only the host uid it maps to, and loses its capabilities. */
static int become_target(const char *pid)
{
	char path[64];
	gid_t groups[64], gid;
	uid_t uid;
	int n, root, own_ns, mnt;

	/* its root (a chroot, a container's), taken before the namespaces:
	 * the /proc there may not show this pid */
	snprintf(path, sizeof(path), "/proc/%s/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	mnt = open_ns(pid, "mnt");
	own_ns = enter_ns(open_ns(pid, "user"), CLONE_NEWUSER);
	/* the ids as seen from the namespace we are in now; the namespaces and
	 * the root before the ids: they need our privileges */
	n = own_ns < 0 ? -1 : target_ids(pid, &uid, &gid, groups, 64);
	if (n < 0 || enter_ns(mnt, CLONE_NEWNS) < 0 || fchdir(root) || chroot(".") || chdir("/")) {
		close(root);
		return -1;
	}
	close(root);
	if (!own_ns && (!uid || !gid))
		uid = gid = NOBODY;
	if (setgroups(n, groups) && !(own_ns && errno == EPERM)) /* setgroups may be denied there */
		return -1;
	if (limit_capabilities() || setresgid(gid, gid, gid) || setresuid(uid, uid, uid) ||
	    clear_capabilities())
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	/* cleared by the change of ids: set again, so that it ends with us */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		return -1;
	return own_ns || (getuid() && geteuid()) ? 0 : -1;
}

/* a code address, and the loaded object and file offset it falls in */
struct code_at {
	uintptr_t addr;
	const char *file;
	unsigned long long off;
};

static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct code_at *c = arg;
	ElfW(Half) i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && c->addr >= start && c->addr - start < ph->p_memsz) {
			c->file = info->dlpi_name;
			c->off = c->addr - start + ph->p_offset;
			return 1;
		}
	}
	return 0;
}

/* The file offset of code at `p`, from the loaded objects' program
 * headers: not /proc/self/maps, which a target's own /proc (its pid
 * namespace's, where we are not) or a chroot without one does not show. The
 * tracer takes it only where dev and ino are those of the file it opened. */
static void print_func(const char *name, void *p)
{
	struct code_at c = { .addr = (uintptr_t)p };
	struct stat st;

	if (p && dl_iterate_phdr(find_segment, &c) && c.file && c.file[0] == '/' &&
	    !stat(c.file, &st))
		printf("func %s %llu %llu 0x%llx\n", name, (unsigned long long)st.st_dev,
		       (unsigned long long)st.st_ino, c.off);
}

int main(int argc, char **argv)
{
	const char *pid = NULL, *lib, *what;
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkCreateInstance create_instance;
	PFN_vkEnumeratePhysicalDevices enum_devs;
	PFN_vkGetPhysicalDeviceProperties get_props;
	PFN_vkGetPhysicalDeviceMemoryProperties get_mem;
	PFN_vkGetPhysicalDeviceQueueFamilyProperties get_queues;
	PFN_vkCreateDevice create_device;
	PFN_vkGetDeviceProcAddr gdpa;
	PFN_vkDestroyDevice destroy_device;
	PFN_vkDestroyInstance destroy_instance;
	VkPhysicalDevice devs[16];
	uint32_t ndev = 16, version = 5, i, j;
	negotiate_fn negotiate;
	VkInstance inst;
	void *h;

	if (argc == 4 && !strcmp(argv[1], "--pid")) {
		pid = argv[2];
		lib = argv[3];
	} else if (argc == 2 && argv[1][0] != '-') {
		lib = argv[1];
	} else {
		fprintf(stderr, "usage: %s [--pid PID] ICD_LIBRARY\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* nothing of gpumemtrace's for the driver: gpumemtrace starts us with
	 * none of this (user/source/gpulib.c), done again here for a start by
	 * hand */
	if (pid && (clearenv() || close_range(3, ~0U, 0)))
		return fail("cannot empty the environment or close descriptors");
	if (pid && become_target(pid))
		return fail("cannot enter the target's namespace or become its user");
	if (!pid && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return fail("cannot set no_new_privs");
	if (sandbox__apply(&what)) {
		printf("error cannot apply the seccomp filter (%s: %s)\n", what, strerror(errno));
		return 1;
	}
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return fail(dlerror());
	gipa = (PFN_vkGetInstanceProcAddr)dlsym(h, "vk_icdGetInstanceProcAddr");
	negotiate = (negotiate_fn)dlsym(h, "vk_icdNegotiateLoaderICDInterfaceVersion");
	if (!gipa)
		return fail("not a Vulkan driver: no vk_icdGetInstanceProcAddr");
	if (negotiate)
		negotiate(&version);
	create_instance = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
	if (!create_instance)
		return fail("no vkCreateInstance");
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
				  .pApplicationName = "gpumemtrace-vkinfo",
				  .apiVersion = VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
				     .pApplicationInfo = &app };
	if (create_instance(&ici, NULL, &inst) != VK_SUCCESS)
		return fail("vkCreateInstance failed");
	enum_devs = (PFN_vkEnumeratePhysicalDevices)gipa(inst, "vkEnumeratePhysicalDevices");
	get_props = (PFN_vkGetPhysicalDeviceProperties)gipa(inst, "vkGetPhysicalDeviceProperties");
	get_mem = (PFN_vkGetPhysicalDeviceMemoryProperties)gipa(
		inst, "vkGetPhysicalDeviceMemoryProperties");
	get_queues = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)gipa(
		inst, "vkGetPhysicalDeviceQueueFamilyProperties");
	create_device = (PFN_vkCreateDevice)gipa(inst, "vkCreateDevice");
	gdpa = (PFN_vkGetDeviceProcAddr)gipa(inst, "vkGetDeviceProcAddr");
	destroy_instance = (PFN_vkDestroyInstance)gipa(inst, "vkDestroyInstance");
	if (!enum_devs || !get_props || !get_mem || !create_device || !gdpa || !get_queues)
		return fail("the driver lacks core instance functions");
	if (enum_devs(inst, &ndev, devs) < 0 || !ndev)
		return fail("no device on this driver here");
	for (i = 0; i < ndev; i++) {
		VkPhysicalDeviceProperties p;
		VkPhysicalDeviceMemoryProperties m;

		get_props(devs[i], &p);
		get_mem(devs[i], &m);
		printf("device %u %u %u %s\n", i, p.vendorID, p.deviceID, p.deviceName);
		printf("devtype %u %u\n", i, (unsigned int)p.deviceType);
		for (j = 0; j < m.memoryTypeCount; j++)
			printf("type %u %u %u\n", j, m.memoryTypes[j].propertyFlags,
			       m.memoryTypes[j].heapIndex);
		for (j = 0; j < m.memoryHeapCount; j++)
			printf("heap %u %llu %u\n", j, (unsigned long long)m.memoryHeaps[j].size,
			       m.memoryHeaps[j].flags);
	}
	/* device-level entry points: what vkGetDeviceProcAddr gives applications */
	float prio = 1.0f;
	VkDeviceQueueCreateInfo q = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
				      .queueFamilyIndex = 0,
				      .queueCount = 1,
				      .pQueuePriorities = &prio };
	VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
				   .queueCreateInfoCount = 1,
				   .pQueueCreateInfos = &q };
	VkDevice dev;

	if (create_device(devs[0], &dci, NULL, &dev) != VK_SUCCESS)
		return fail("vkCreateDevice failed");
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		void *d = (void *)gdpa(dev, funcs[i]), *g = (void *)gipa(inst, funcs[i]);

		print_func(funcs[i], d);
		if (g && g != d) /* a dispatching trampoline, in some drivers */
			print_func(funcs[i], g);
	}
	destroy_device = (PFN_vkDestroyDevice)gdpa(dev, "vkDestroyDevice");
	if (destroy_device)
		destroy_device(dev, NULL);
	if (destroy_instance)
		destroy_instance(inst, NULL);
	return 0;
}
