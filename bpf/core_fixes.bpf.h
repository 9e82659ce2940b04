/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel and libbpf differences, in one place (after bcc's core_fixes.bpf.h).
 * Each says which change made it necessary. */
#ifndef GMT_CORE_FIXES_BPF_H
#define GMT_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/* libbpf 1.1 (Debian 12) has PT_REGS_PARMn_CORE_SYSCALL for n <= 5 only */
#if defined(__TARGET_ARCH_x86)
#define GMT_SYSCALL_PARM6(regs) ((regs)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define GMT_SYSCALL_PARM6(regs) BPF_CORE_READ((struct user_pt_regs *)(regs), regs[5])
#else
#define GMT_SYSCALL_PARM6(regs) 0
#endif

/* At sys_exit: the call's number, and whether it was a 32-bit compat call
 * (other numbers; the perf syscall tracepoints skipped them too).
 * x86-64: in_ia32_syscall(), TS_COMPAT in the task's thread_info.status
 * (set for int 0x80 from a 64-bit task as well; x32 calls carry
 * 0x40000000 in the number and fall out of range). arm64:
 * compat_user_mode(), the saved PSTATE's 32-bit mode bit. */
#if defined(__TARGET_ARCH_x86)
#define GMT_SYSCALL_NR(regs) ((long)(regs)->orig_ax)
#define GMT_TS_COMPAT 0x0002
#define GMT_SYSCALL_COMPAT(regs) \
	(!!(bpf_get_current_task_btf()->thread_info.status & GMT_TS_COMPAT))
#elif defined(__TARGET_ARCH_arm64)
#define GMT_SYSCALL_NR(regs) ((long)(regs)->syscallno)
#define GMT_PSR_MODE32_BIT 0x10
#define GMT_SYSCALL_COMPAT(regs) (!!((regs)->pstate & GMT_PSR_MODE32_BIT))
#else
#define GMT_SYSCALL_NR(regs) (-1L)
#define GMT_SYSCALL_COMPAT(regs) 1
#endif

/* 6.2 (f1a7941243c1, "mm: convert mm's rss stats into percpu_counter")
 * turned mm->rss_stat from struct mm_rss_stat { atomic_long_t count[4]; }
 * into struct percpu_counter rss_stat[4]. */
struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

/* pages in one RSS member, as /proc/PID/status reads it (on 6.2+ the
 * percpu counter's folded count, which lags each CPU by under a batch) */
static __always_inline long gmt_mm_rss_pages(struct mm_struct *mm, int member)
{
	struct mm_struct___pre62 *old = (void *)mm;

	if (bpf_core_type_exists(struct mm_rss_stat___pre62)) {
		switch (member) {
		case 0:
			return BPF_CORE_READ(old, rss_stat.count[0].counter);
		case 1:
			return BPF_CORE_READ(old, rss_stat.count[1].counter);
		case 2:
			return BPF_CORE_READ(old, rss_stat.count[2].counter);
		default:
			return BPF_CORE_READ(old, rss_stat.count[3].counter);
		}
	}
	switch (member) {
	case 0:
		return BPF_CORE_READ(mm, rss_stat[0].count);
	case 1:
		return BPF_CORE_READ(mm, rss_stat[1].count);
	case 2:
		return BPF_CORE_READ(mm, rss_stat[2].count);
	default:
		return BPF_CORE_READ(mm, rss_stat[3].count);
	}
}

#endif /* GMT_CORE_FIXES_BPF_H */
