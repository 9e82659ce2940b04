// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* host memory of the targets: RSS by member, page faults by class,
 * mmap/munmap/mremap/brk */
#include "gmt.bpf.h"

#define VM_PFNMAP 0x00000400
#define VM_IO 0x00004000
#define S_IFMT 00170000
#define S_IFREG 0100000
#define S_IFCHR 0020000
#define MAP_ANONYMOUS 0x20

/* last RSS value sent per (tgid << 32 | member) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4 * 4096);
	__type(key, __u64);
	__type(value, __s64);
} rss_sent SEC(".maps");

/* page faults per tgid and class; user space reads and emits the totals
 * every interval (one event per fault would cost more than the fault) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gmt_faults);
} fault_counts SEC(".maps");

struct sys_args {
	__u64 nr;
	__u64 args[6];
};

/* syscall arguments between enter and exit, per thread */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct sys_args);
} pending SEC(".maps");

/* The classic tracepoint, not tp_btf: its arguments changed in 6.2
 * (count dropped, mm_struct counters became percpu) but the record keeps
 * mm_id, curr, member and size. curr == 0 means another task changed this
 * mm (reclaim, exit teardown): the owner is unknown here, so it is skipped;
 * the next change by the owner carries the absolute size again. */
SEC("tracepoint/kmem/rss_stat")
int tp_rss_stat(struct trace_event_raw_rss_stat *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__s64 size, *sent, diff;
	struct gmt_rss *e;
	__u64 key;
	int member;

	if (bpf_core_field_exists(ctx->curr) && !ctx->curr)
		return 0;
	if (!gmt_is_target(tgid))
		return 0;
	member = ctx->member;
	if (member < 0 || member >= GMT_RSS_NR)
		return 0;
	size = ctx->size;
	key = (__u64)tgid << 32 | member;
	sent = bpf_map_lookup_elem(&rss_sent, &key);
	if (sent) {
		diff = size - *sent;
		if (diff < 0)
			diff = -diff;
		if (diff < rss_step_bytes)
			return 0;
	}
	e = gmt_reserve(sizeof(*e), GMT_EV_RSS, GMT_SRC_RSS);
	if (!e)
		return 0;
	e->member = member;
	e->pad = 0;
	e->bytes = size;
	bpf_ringbuf_submit(e, 0);
	bpf_map_update_elem(&rss_sent, &key, &size, BPF_ANY);
	return 0;
}

static __always_inline struct gmt_faults *fault_slot(__u32 tgid)
{
	struct gmt_faults *c = bpf_map_lookup_elem(&fault_counts, &tgid);
	struct gmt_faults zero = {};

	if (c)
		return c;
	bpf_map_update_elem(&fault_counts, &tgid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&fault_counts, &tgid);
}

static __always_inline __u32 inode_fd_class(struct inode *inode)
{
	__u16 mode = BPF_CORE_READ(inode, i_mode) & S_IFMT;

	if (mode == S_IFCHR)
		return GMT_FD_DEVICE;
	if (mode == S_IFREG)
		return GMT_FD_FILE;
	return GMT_FD_OTHER;
}

static long fault_class_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	__u32 *cls = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);
	__u64 flags = BPF_CORE_READ(vma, vm_flags);

	if (flags & (VM_IO | VM_PFNMAP))
		*cls = GMT_FAULT_DEVICE;
	else if (!file)
		*cls = GMT_FAULT_ANON;
	else if (inode_fd_class(BPF_CORE_READ(file, f_inode)) == GMT_FD_DEVICE)
		*cls = GMT_FAULT_DEVICE;
	else
		*cls = GMT_FAULT_FILE;
	return 0;
}

static __always_inline void count_fault(__u32 cls)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct gmt_faults *c;

	c = fault_slot(tgid);
	if (c && cls < GMT_FAULT_NR)
		c->count[cls]++;
}

/* x86 only; needs bpf_find_vma (5.17) to tell the class */
SEC("tp_btf/page_fault_user")
int BPF_PROG(tp_page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	__u32 cls = GMT_FAULT_OTHER;

	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	bpf_find_vma(bpf_get_current_task_btf(), address, fault_class_cb, &cls, 0);
	count_fault(cls);
	return 0;
}

/* the same without bpf_find_vma: every fault counts as "other" */
SEC("tp_btf/page_fault_user")
int BPF_PROG(tp_page_fault_user_noclass, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	count_fault(GMT_FAULT_OTHER);
	return 0;
}

static __always_inline int save_args(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct sys_args a = {};

	if (!gmt_is_target(id >> 32))
		return 0;
	a.nr = ctx->id;
	bpf_probe_read_kernel(a.args, sizeof(a.args), ctx->args);
	bpf_map_update_elem(&pending, &tid, &a, BPF_ANY);
	return 0;
}

/* the saved arguments of this thread's syscall, if it was `nr` */
static __always_inline int take_args(struct trace_event_raw_sys_exit *ctx, struct sys_args *a)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sys_args *p = bpf_map_lookup_elem(&pending, &tid);

	if (!p)
		return -1;
	*a = *p;
	bpf_map_delete_elem(&pending, &tid);
	return a->nr == ctx->id ? 0 : -1;
}

static __always_inline __u32 fd_class(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	unsigned int max = BPF_CORE_READ(task, files, fdt, max_fds);
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= max)
		return GMT_FD_OTHER;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	if (!f)
		return GMT_FD_OTHER;
	return inode_fd_class(BPF_CORE_READ(f, f_inode));
}

SEC("tracepoint/syscalls/sys_enter_mmap")
int tp_sys_enter_mmap(struct trace_event_raw_sys_enter *ctx)
{
	return save_args(ctx);
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int tp_sys_exit_mmap(struct trace_event_raw_sys_exit *ctx)
{
	struct sys_args a;
	struct gmt_mmap *e;
	long n;

	if (take_args(ctx, &a))
		return 0;
	e = gmt_reserve(sizeof(*e) + GMT_MAX_STACK * sizeof(__u64), GMT_EV_MMAP, GMT_SRC_MMAP);
	if (!e)
		return 0;
	e->addr = ctx->ret;
	e->len = a.args[1];
	e->prot = a.args[2];
	e->flags = a.args[3];
	e->fd = a.args[4];
	e->off = a.args[5];
	e->fd_class = (e->flags & MAP_ANONYMOUS) ? GMT_FD_ANON : fd_class(e->fd);
	e->stack_id = 0;
	e->pad = 0;
	e->nr_ips = 0;
	if (e->fd_class == GMT_FD_ANON && e->len >= mmap_stack_min) {
		n = bpf_get_stack(ctx, e->ips, GMT_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
		if (n > 0)
			e->nr_ips = n / sizeof(__u64);
	}
	e->hdr.len = sizeof(*e) + e->nr_ips * sizeof(__u64);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_munmap")
int tp_sys_enter_munmap(struct trace_event_raw_sys_enter *ctx)
{
	return save_args(ctx);
}

SEC("tracepoint/syscalls/sys_exit_munmap")
int tp_sys_exit_munmap(struct trace_event_raw_sys_exit *ctx)
{
	struct gmt_munmap *e;
	struct sys_args a;

	if (take_args(ctx, &a))
		return 0;
	e = gmt_reserve(sizeof(*e), GMT_EV_MUNMAP, GMT_SRC_MMAP);
	if (!e)
		return 0;
	e->addr = a.args[0];
	e->len = a.args[1];
	e->ret = ctx->ret;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mremap")
int tp_sys_enter_mremap(struct trace_event_raw_sys_enter *ctx)
{
	return save_args(ctx);
}

SEC("tracepoint/syscalls/sys_exit_mremap")
int tp_sys_exit_mremap(struct trace_event_raw_sys_exit *ctx)
{
	struct gmt_mremap *e;
	struct sys_args a;

	if (take_args(ctx, &a))
		return 0;
	e = gmt_reserve(sizeof(*e), GMT_EV_MREMAP, GMT_SRC_MMAP);
	if (!e)
		return 0;
	e->old_addr = a.args[0];
	e->old_len = a.args[1];
	e->new_len = a.args[2];
	e->flags = a.args[3];
	e->pad = 0;
	e->new_addr = ctx->ret;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_brk")
int tp_sys_enter_brk(struct trace_event_raw_sys_enter *ctx)
{
	return save_args(ctx);
}

SEC("tracepoint/syscalls/sys_exit_brk")
int tp_sys_exit_brk(struct trace_event_raw_sys_exit *ctx)
{
	struct gmt_brk *e;
	struct sys_args a;

	if (take_args(ctx, &a))
		return 0;
	e = gmt_reserve(sizeof(*e), GMT_EV_BRK, GMT_SRC_MMAP);
	if (!e)
		return 0;
	e->req = a.args[0];
	e->ret = ctx->ret;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* a new program starts its counts afresh: what the old image did is not
 * the target's (with -- CMD, it is the tracer's own fork) */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(tp_mm_exec_reset, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u64 key;
	int i;

	if (!gmt_is_target(tgid))
		return 0;
	bpf_map_delete_elem(&fault_counts, &tgid);
	for (i = 0; i < GMT_RSS_NR; i++) {
		key = (__u64)tgid << 32 | i;
		bpf_map_delete_elem(&rss_sent, &key);
	}
	return 0;
}
