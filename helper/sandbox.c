// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The system calls a driver loaded by gpumemtrace-vkinfo may not make: it
 * needs threads, memory, files and its device, never the network, other
 * processes, namespaces, mounts or the kernel's tracing and keys. Refused
 * with EPERM (a driver that tries goes on, told no), everything else
 * allowed; another architecture's calls (int 0x80) kill it. */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <sys/socket.h>
#include <unistd.h>
#include <seccomp.h>
#include "sandbox.h"

static const char *const refused[] = {
	/* other processes */
	"tkill", "pidfd_open", "pidfd_send_signal", "pidfd_getfd", "ptrace", "process_vm_readv",
	"process_vm_writev", "process_madvise", "kcmp",
	/* namespaces and mounts */
	"unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "open_by_handle_at",
	/* the kernel's own: tracing, keys, modules, the machine */
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct",
	"syslog", "quotactl", "quotactl_fd", "iopl", "ioperm", "settimeofday", "clock_settime",
	"clock_adjtime", "adjtimex", "sethostname", "setdomainname", "vhangup", "lookup_dcookie",
	"fanotify_init", "name_to_handle_at", "uselib", "personality"
};

/* signals: only to itself (its pid, as its pid namespace numbers it) */
static const char *const own_signals[] = { "kill", "tgkill", "rt_sigqueueinfo",
					   "rt_tgsigqueueinfo" };

static const unsigned long long ns_flags[] = { CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
					       CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
					       CLONE_NEWNET, CLONE_NEWTIME };

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* 0, or -1 with errno set and *what naming what could not be set */
int sandbox__apply(const char **what)
{
	const int deny = SCMP_ACT_ERRNO(EPERM);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	unsigned long long self = getpid();
	int r = 0, nr;
	size_t i;

	*what = "seccomp_init";
	if (!ctx) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; !r && i < N(refused); i++) {
		*what = refused[i];
		nr = seccomp_syscall_resolve_name(refused[i]);
		if (nr != __NR_SCMP_ERROR) /* unknown to this libseccomp: none here */
			r = seccomp_rule_add(ctx, deny, nr, 0);
	}
	for (i = 0; !r && i < N(own_signals); i++) {
		*what = own_signals[i];
		r = seccomp_rule_add(ctx, deny, seccomp_syscall_resolve_name(own_signals[i]), 1,
				     SCMP_A0(SCMP_CMP_NE, self));
	}
	/* a thread, yes; a namespace, no. clone3's flags are behind a pointer
	 * seccomp cannot read: ENOSYS, and the C library falls back to clone */
	for (i = 0; !r && i < N(ns_flags); i++) {
		*what = "clone";
		r = seccomp_rule_add(ctx, deny, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
	}
	if (!r) {
		*what = "clone3";
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	}
	/* local sockets only; in a network namespace of its own there is
	 * no other machine, nor the host's loopback, to reach anyway */
	if (!r) {
		*what = "socket";
		r = seccomp_rule_add(ctx, deny, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	}
	if (!r) {
		*what = "seccomp_load";
		r = seccomp_load(ctx);
	}
	seccomp_release(ctx);
	if (r) {
		errno = -r;
		return -1;
	}
	return 0;
}
