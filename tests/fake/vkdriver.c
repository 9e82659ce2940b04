// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A planted "Vulkan driver": it looks like one (it exports the ICD entry
 * point that gpumemtrace looks for) and, when loaded, appends to record.txt
 * beside itself who loaded it: the program, its ids, its capabilities and
 * whether it may gain more, its user namespace; and it makes a file,
 * who.PID, whose owner is its uid as the host sees it. gpumemtrace's helper loads the drivers it
 * finds in a target: the test checks the helper ran with no more than the target may have, and
 * never as the host's root. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void *vk_icdGetInstanceProcAddr(void *instance, const char *name);

void *vk_icdGetInstanceProcAddr(void *instance, const char *name)
{
	(void)instance;
	(void)name;
	return NULL;
}

/* from system calls, not /proc: a chroot may have none */
__attribute__((constructor)) static void record(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct cap[2] = {};
	char dir[4096], path[4200], ns[64] = "";
	Dl_info info;
	FILE *out;

	if (!dladdr((void *)record, &info) || !info.dli_fname)
		return;
	snprintf(dir, sizeof(dir), "%s", info.dli_fname);
	snprintf(path, sizeof(path), "%s/record.txt", dirname(dir));
	out = fopen(path, "a");
	if (!out)
		return;
	syscall(SYS_capget, &hdr, cap);
	if (readlink("/proc/self/ns/user", ns, sizeof(ns) - 1) < 0)
		strcpy(ns, "-");
	fprintf(out,
		"Name:\t%s\nPid:\t%d\nUid:\t%u\t%u\nCapEff:\t%08x%08x\nCapPrm:\t%08x%08x\n"
		"CapBnd:\t%d\nNoNewPrivs:\t%d\nUserNS:\t%s\n--\n",
		program_invocation_short_name, getpid(), getuid(), geteuid(), cap[1].effective,
		cap[0].effective, cap[1].permitted, cap[0].permitted,
		prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0),
		prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), ns);
	fclose(out);
	snprintf(path + strlen(path) - strlen("record.txt"), 32, "who.%d", getpid());
	out = fopen(path, "w");
	if (out)
		fclose(out);
}
