/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* for the programs on the sys_exit raw tracepoint: one per family (mm,
 * req), each run at the exit of every system call of every process, so
 * each asks first, in a few instructions, whether the call is one of its */
#ifndef GMT_SYSCALLS_BPF_H
#define GMT_SYSCALLS_BPF_H

#include "gmt.bpf.h"
#include "core_fixes.bpf.h"
#include "gmt_syscalls.h"

/* each call's number on this arch, set by user space; -1: not taken */
GMT_SHARED const volatile __s32 sys_nr[GMT_SYS_NR];

/* nr is in a family's bitmap of wanted calls: the first test, before the
 * target filter, since nearly every call is another's or unwanted */
static __always_inline bool syscall_wanted(const volatile __u64 *want, long nr)
{
	if ((unsigned long)nr >= GMT_SYS_MAX)
		return false;
	return (want[nr >> 6] >> (nr & 63)) & 1;
}

/* The syscall's arguments, read at its exit from the registers saved at
 * entry: no enter program, no map between the two. Needs bpf_task_pt_regs
 * (5.15). */
static __always_inline void syscall_args(__u64 *args)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	args[0] = PT_REGS_PARM1_SYSCALL(regs);
	args[1] = PT_REGS_PARM2_SYSCALL(regs);
	args[2] = PT_REGS_PARM3_SYSCALL(regs);
	args[3] = PT_REGS_PARM4_SYSCALL(regs);
	args[4] = PT_REGS_PARM5_SYSCALL(regs);
	args[5] = GMT_SYSCALL_PARM6(regs);
}

/* the open file behind fd in the current task, or NULL */
static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	unsigned int max = BPF_CORE_READ(task, files, fdt, max_fds);
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= max)
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

#endif
