// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* process lifecycle of the targets: exec, new threads and children, exit */
#include "gmt.bpf.h"
#include "ustack.bpf.h"

/* --watch --comm: the names, as comm holds them (16 bytes, zero-padded) */
#define WATCH_COMMS 16
const volatile __u64 watch_comms[WATCH_COMMS][2] = {};
const volatile __u32 nr_watch_comms = 0;

/* the new program's name (set from the file's name before this
 * tracepoint) is one of --comm's */
static __always_inline bool watched_name(struct task_struct *p)
{
	union {
		char c[16];
		__u64 w[2];
	} n = {};
	bool end = false;
	__u32 i;

	bpf_probe_read_kernel(n.c, sizeof(n.c), p->comm);
	for (i = 0; i < 16; i++) { /* what follows the name's end is not its */
		end = end || !n.c[i];
		if (end)
			n.c[i] = 0;
	}
	for (i = 0; i < WATCH_COMMS && i < nr_watch_comms; i++)
		if (n.w[0] == watch_comms[i][0] && n.w[1] == watch_comms[i][1])
			return true;
	return false;
}

/* Runs before the new image returns to user space: a watched name is
 * traced from its first instruction (--watch), its exec record included. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(tp_sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct gmt_exec *e;

	if (!gmt_is_target(BPF_CORE_READ(p, tgid)) &&
	    (!nr_watch_comms || !watched_name(p) || !gmt_join(p, GMT_JOIN_EXEC, NULL)))
		return 0;
	e = gmt_reserve(sizeof(*e), GMT_EV_EXEC, GMT_SRC_PROC);
	if (!e)
		return 0;
	e->old_pid = old_pid;
	e->pad = 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), BPF_CORE_READ(bprm, filename));
	gmt_submit_now(e);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tp_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 one = 1, followed = 0;
	struct gmt_fork *e;

	if (!gmt_is_target(ptgid))
		return 0;
	if (ctgid != ptgid && follow_forks) {
		bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
		followed = 1;
	}
	e = gmt_reserve(sizeof(*e), GMT_EV_FORK, GMT_SRC_PROC);
	if (!e)
		return 0;
	e->child_pid = ctgid;
	e->child_tid = BPF_CORE_READ(child, pid);
	e->is_thread = ctgid == ptgid;
	e->followed = followed;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), child->comm);
	gmt_submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tp_sched_process_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct gmt_exit *e;
	bool last;

	if (!gmt_is_target(tgid))
		return 0;
	/* signal->live has already been decremented for this task */
	last = BPF_CORE_READ(p, signal, live.counter) == 0;
	e = gmt_reserve(sizeof(*e), GMT_EV_EXIT, GMT_SRC_PROC);
	if (!e)
		return 0;
	e->exit_code = BPF_CORE_READ(p, exit_code);
	e->group_dead = last;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	gmt_submit(e);
	if (last && follow_forks)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/* signals whose default action kills the process with a core: the ones a
 * crash is made of */
#define FATAL_SIGS                                                                \
	((1u << 4) | (1u << 5) | (1u << 6) | (1u << 7) | (1u << 8) | (1u << 11) | \
	 (1u << 31)) /* ILL TRAP ABRT BUS FPE SEGV SYS */

/* A fatal signal delivered to a target's thread, with the default action:
 * the thread that faulted (or called abort) is current, so its stack is
 * the crash's. Its slice goes out first, then the record. */
SEC("tp_btf/signal_deliver")
int BPF_PROG(tp_signal_deliver, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	struct ustack_scratch *s;
	struct gmt_signal *e;
	int code;

	if (sig <= 0 || sig > 31 || !(FATAL_SIGS & (1u << sig)) || !gmt_is_target(tgid) ||
	    BPF_CORE_READ(ka, sa.sa_handler))
		return 0;
	s = bpf_map_lookup_elem(&ustack_scratch, &zero);
	if (s)
		send_redacted((struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()), tgid,
			      s, GMT_SRC_PROC);
	e = gmt_reserve(sizeof(*e), GMT_EV_SIGNAL, GMT_SRC_PROC);
	if (!e)
		return 0;
	code = BPF_CORE_READ(info, si_code);
	e->sig = sig;
	e->code = code;
	e->addr = 0;
	e->sender = 0;
	e->stack_id = 0;
	if (code > 0 && sig != 6 && sig != 5 && sig != 31)
		e->addr = (__u64)BPF_CORE_READ(info, _sifields._sigfault._addr);
	else if (code <= 0)
		e->sender = BPF_CORE_READ(info, _sifields._kill._pid);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	gmt_submit(e);
	return 0;
}
