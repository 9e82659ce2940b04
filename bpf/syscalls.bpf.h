/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* for programs on syscall exit tracepoints */
#ifndef GMT_SYSCALLS_BPF_H
#define GMT_SYSCALLS_BPF_H

#include "gmt.bpf.h"
#include "core_fixes.bpf.h"

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
