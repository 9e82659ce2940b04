// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* process lifecycle of the targets: exec, new threads and children, exit */
#include "gmt.bpf.h"

SEC("tp_btf/sched_process_exec")
int BPF_PROG(tp_sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct gmt_exec *e;

	if (!gmt_is_target(BPF_CORE_READ(p, tgid)))
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
