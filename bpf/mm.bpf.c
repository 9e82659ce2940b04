// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* host memory of the targets: RSS by member, page faults by class,
 * mmap/munmap/mremap/brk */
#include "gmt.bpf.h"
#include "core_fixes.bpf.h"
#include "syscalls.bpf.h"
#include "ustack.bpf.h"

#define VM_PFNMAP 0x00000400
#define VM_IO 0x00004000
#define S_IFMT 00170000
#define S_IFREG 0100000
#define S_IFCHR 0020000
#define MAP_ANONYMOUS 0x20
#define PROT_EXEC 0x4

/* the RSS values last sent, per process */
struct rss_sent {
	__s64 bytes[GMT_RSS_NR];
	__u32 valid; /* bit per member */
	__u32 pad;
};

/* the target's, in .bss: a plain load on every RSS change, no map lookup */
static struct rss_sent target_rss_sent;

/* children followed with -f */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct rss_sent);
} rss_sent SEC(".maps");

static __always_inline struct rss_sent *rss_sent_of(__u32 tgid)
{
	struct rss_sent zero = {}, *r;

	if (tgid == targ_tgid)
		return &target_rss_sent;
	r = bpf_map_lookup_elem(&rss_sent, &tgid);
	if (r)
		return r;
	bpf_map_update_elem(&rss_sent, &tgid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&rss_sent, &tgid);
}

/* page faults per tgid; user space reads and emits the totals every
 * interval (one event per fault would cost more than the fault) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gmt_fault_counts);
} fault_counts SEC(".maps");

/* The raw tracepoint: the classic one would have the kernel sum the
 * percpu counter over every CPU for each RSS change (6.2+), and copy a
 * record, before the program runs. Its arguments changed in 6.2 (count
 * dropped); only mm and member are read, on every kernel. Changes made to
 * another process's mm (reclaim, exit teardown) are skipped: the owner's
 * next change carries the absolute size again. */
SEC("tp_btf/rss_stat")
int BPF_PROG(tp_rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct rss_sent *sent;
	struct gmt_rss *e;
	__s64 size, diff;

	if (!gmt_is_target(tgid) || mm != task->mm)
		return 0;
	if (member < 0 || member >= GMT_RSS_NR)
		return 0;
	size = gmt_mm_rss_pages(mm, member);
	if (size < 0)
		size = 0;
	size <<= page_shift;
	sent = rss_sent_of(tgid);
	if (!sent)
		return 0;
	/* the mask keeps the verifier sure of the index */
	member &= GMT_RSS_NR - 1;
	if (sent->valid & (1u << member)) {
		diff = size - sent->bytes[member];
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
	gmt_submit(e);
	sent->bytes[member] = size;
	sent->valid |= 1u << member;
	return 0;
}

static __always_inline struct gmt_fault_counts *fault_slot(__u32 tgid)
{
	struct gmt_fault_counts *c = bpf_map_lookup_elem(&fault_counts, &tgid);
	struct gmt_fault_counts zero = {};

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

/* faults between sampled first touches, on average; 0: none taken */
GMT_SHARED const volatile __u32 touch_period;

/* a fault's VMA, in the class counted and whether a touch there is the
 * heap's (anonymous, not a device's) */
struct fault_vma {
	__u32 cls;
	bool anon;
};

/* read through probes: at fexit with VM_FAULT_COMPLETED the VMA lock is
 * dropped */
static __always_inline void class_of(struct vm_area_struct *vma, struct fault_vma *f)
{
	struct file *file = BPF_CORE_READ(vma, vm_file);
	__u64 vm_flags = BPF_CORE_READ(vma, vm_flags);

	f->anon = !file && !(vm_flags & (VM_IO | VM_PFNMAP));
	if (vm_flags & (VM_IO | VM_PFNMAP))
		f->cls = GMT_FAULT_DEVICE;
	else if (!file)
		f->cls = GMT_FAULT_ANON;
	else if (inode_fd_class(BPF_CORE_READ(file, f_inode)) == GMT_FD_DEVICE)
		f->cls = GMT_FAULT_DEVICE;
	else
		f->cls = GMT_FAULT_FILE;
}

static long vma_class(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	class_of(vma, data);
	return 0;
}

/* the thread's registers and redacted stack, then the touch: user space
 * unwinds the one into the other's stack. The caller knows the address is
 * in anonymous memory. */
static __always_inline void send_anon_touch(void *ctx, __u32 tgid, __u64 address,
					    struct pt_regs *regs, struct ustack_scratch *s)
{
	struct gmt_touch *t;
	long k;

	if (!send_redacted(regs, tgid, s, GMT_SRC_FAULT))
		return;
	t = gmt_reserve(sizeof(*t) + GMT_MAX_STACK * sizeof(__u64), GMT_EV_TOUCH, GMT_SRC_FAULT);
	if (!t)
		return;
	t->addr = address;
	t->bytes = (__u64)touch_period << page_shift;
	t->stack_id = 0;
	k = bpf_get_stack(ctx, t->ips, GMT_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
	t->nr_ips = k > 0 ? k / sizeof(__u64) : 0;
	t->hdr.len = sizeof(*t) + t->nr_ips * sizeof(__u64);
	gmt_submit(t);
}

static __always_inline void send_touch(void *ctx, __u32 tgid, __u64 address, struct pt_regs *regs,
				       struct ustack_scratch *s)
{
	struct fault_vma f = {};

	if (!bpf_find_vma(bpf_get_current_task_btf(), address, vma_class, &f, 0) && f.anon)
		send_anon_touch(ctx, tgid, address, regs, s);
}

/* the scratch when this fault is the one in about touch_period sampled (a
 * random gap: no beat with a loop's), else NULL */
static __always_inline struct ustack_scratch *touch_due(void)
{
	struct ustack_scratch *s;
	__u32 zero = 0;

	if (!touch_period || !(s = bpf_map_lookup_elem(&ustack_scratch, &zero)))
		return NULL;
	if (--s->countdown > 0)
		return NULL;
	s->countdown = 1 + bpf_get_prandom_u32() % (2 * touch_period - 1);
	return s;
}

/* x86 only: every user-mode page fault, counted; about one not-present
 * fault in touch_period sampled */
SEC("tp_btf/page_fault_user")
int BPF_PROG(tp_page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct gmt_fault_counts *c;
	struct ustack_scratch *s;

	if (!gmt_is_target(tgid))
		return 0;
	c = fault_slot(tgid);
	if (c)
		c->total++;
	if (!(error_code & 1) && (s = touch_due()))
		send_touch(ctx, tgid, address, regs, s);
	return 0;
}

/* The kernel writing into a user buffer first (read(2) or recv(2) into
 * fresh memory) touches it too: sampled the same way, with the stack of
 * the system call that did it. Faults on kernel addresses are not the
 * target's memory. */
SEC("tp_btf/page_fault_kernel")
int BPF_PROG(tp_page_fault_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct ustack_scratch *s;

	if ((error_code & 1) || address >= (1ull << 47) || !gmt_is_target(tgid) ||
	    !(s = touch_due()))
		return 0;
	send_touch(ctx, tgid, address,
		   (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()), s);
	return 0;
}

/* Where exceptions:page_fault_user is missing (arm64): the page-fault
 * software event, one on each CPU, every fault (sample_period 1). It counts
 * user-mode faults; their classes come from the fexit below, as on x86.
 * Only a fault due a sample looks its VMA up: bpf_find_vma at every fault
 * cost 3.6 us in the program and as much again outside it (a fault took
 * 1.7 times as long, bench/overhead.sh). It fires before the fault is
 * handled, so a retried fault counts twice, and the event cannot say
 * whether the page was absent: a write after a read of a fresh page, or a
 * copy-on-write, may be sampled as a first touch. Kernel-mode faults on
 * user memory (read(2) into a fresh buffer) are sampled, not counted. */
SEC("perf_event")
int pe_page_fault(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct gmt_fault_counts *c;
	struct ustack_scratch *s;
	bool user;

	if (!gmt_is_target(tgid))
		return 0;
		/* whole words: the context is read 8 bytes at a time */
#if defined(__TARGET_ARCH_arm64)
	user = (*(volatile __u64 *)&ctx->regs.pstate & 0xf) == 0; /* PSR_MODE_EL0t */
#else
	user = (*(volatile __u64 *)&ctx->regs.cs & 3) == 3;
#endif
	if (user && (c = fault_slot(tgid)))
		c->total++;
	if ((s = touch_due()))
		send_touch(ctx, tgid, ctx->addr,
			   (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()), s);
	return 0;
}

/* The class of each user fault, from the VMA the kernel resolved it in.
 * bpf_find_vma at the tracepoint above would take the mmap lock with IRQs
 * off and release it through an irq_work: a self-IPI, ~15 us a fault in a
 * VM. A retried fault is counted once, when it completes. */
SEC("fexit/handle_mm_fault")
int BPF_PROG(fexit_handle_mm_fault, struct vm_area_struct *vma, unsigned long address,
	     unsigned int flags, struct pt_regs *regs, vm_fault_t ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct gmt_fault_counts *c;
	struct fault_vma f;

	if (!(flags & FAULT_FLAG_USER) || (ret & VM_FAULT_RETRY) || !gmt_is_target(tgid))
		return 0;
	class_of(vma, &f);
	c = fault_slot(tgid);
	if (c && f.cls < GMT_FAULT_OTHER) {
		c->cls[f.cls]++;
		if (ret & VM_FAULT_MAJOR)
			c->major[f.cls]++;
	}
	return 0;
}

static __always_inline __u32 fd_class(int fd)
{
	struct file *f = fd_file(fd);

	if (!f)
		return GMT_FD_OTHER;
	return inode_fd_class(BPF_CORE_READ(f, f_inode));
}

/* The stacks of large mmaps the reader was woken for, by process and a hash
 * of the addresses. It symbolizes each stack once (the maps must be read
 * while the process lives) and knows a repeat by its addresses, so a repeat
 * need not wake it: a program mapping from one place a million times wakes
 * it once. LRU: a stack forgotten only wakes it again. */
struct stack_key {
	__u32 tgid, n;
	__u64 hash;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct stack_key);
	__type(value, __u8);
} mmap_stacks_woken SEC(".maps");

static __always_inline bool stack_is_new(__u32 tgid, const __u64 *ips, __u32 n)
{
	struct stack_key k = { .tgid = tgid, .n = n, .hash = 14695981039346656037ull };
	__u8 one = 1;
	__u32 i;

	for (i = 0; i < GMT_MAX_STACK && i < n; i++)
		k.hash = (k.hash ^ ips[i]) * 1099511628211ull; /* FNV-1a, by word */
	if (bpf_map_lookup_elem(&mmap_stacks_woken, &k))
		return false;
	bpf_map_update_elem(&mmap_stacks_woken, &k, &one, BPF_ANY);
	return true;
}

static __always_inline void on_mmap(void *ctx, long ret)
{
	struct gmt_mmap *e;
	__u64 args[6];
	long n;

	syscall_args(args);
	e = gmt_reserve(sizeof(*e) + GMT_MAX_STACK * sizeof(__u64), GMT_EV_MMAP, GMT_SRC_MMAP);
	if (!e)
		return;
	e->addr = ret;
	e->len = args[1];
	e->prot = args[2];
	e->flags = args[3];
	e->fd = args[4];
	e->off = args[5];
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
	if ((e->prot & PROT_EXEC) ||
	    (e->nr_ips && stack_is_new(bpf_get_current_pid_tgid() >> 32, e->ips, e->nr_ips)))
		gmt_submit_now(e);
	else
		gmt_submit(e);
}

static __always_inline void on_munmap(long ret)
{
	struct gmt_munmap *e;
	__u64 args[6];

	syscall_args(args);
	e = gmt_reserve(sizeof(*e), GMT_EV_MUNMAP, GMT_SRC_MMAP);
	if (!e)
		return;
	e->addr = args[0];
	e->len = args[1];
	e->ret = ret;
	gmt_submit(e);
}

static __always_inline void on_mremap(long ret)
{
	struct gmt_mremap *e;
	__u64 args[6];

	syscall_args(args);
	e = gmt_reserve(sizeof(*e), GMT_EV_MREMAP, GMT_SRC_MMAP);
	if (!e)
		return;
	e->old_addr = args[0];
	e->old_len = args[1];
	e->new_len = args[2];
	e->flags = args[3];
	e->pad = 0;
	e->new_addr = ret;
	gmt_submit(e);
}

static __always_inline void on_brk(long ret)
{
	struct gmt_brk *e;
	__u64 args[6];

	syscall_args(args);
	e = gmt_reserve(sizeof(*e), GMT_EV_BRK, GMT_SRC_MMAP);
	if (!e)
		return;
	e->req = args[0];
	e->ret = ret;
	gmt_submit(e);
}

/* --watch: the names of what a GPU process maps (user/source/watch.c's
 * list): API libraries and llama.cpp's GPU backends, GPU device nodes */
static const char gpu_libs[][20] = { "libcuda.so",	"libvulkan.so",	     "libamdhip64.so",
				     "libggml-cuda.so", "libggml-vulkan.so", "libggml-hip.so",
				     "libnvidia-ml.so", "libcudart.so" };
static const char gpu_devs[][8] = { "nvidia", "renderD", "kfd" };

static __always_inline bool name_is(const char *name, const char *pfx, __u32 max)
{
	__u32 j;

	for (j = 0; j < max; j++) {
		if (!pfx[j])
			return true;
		if (name[j] != pfx[j])
			return false;
	}
	return true;
}

/* --watch: a process not traced mapped a file (ret: the mmap's result);
 * one of a GPU library or a GPU device makes it a target from here on */
static __always_inline bool gpu_mapping(long ret)
{
	char name[32] = {};
	struct file *f;
	__u64 args[6];
	__u16 mode;
	__u32 i;
	bool gpu = false;

	if ((unsigned long)ret >= -4095ul)
		return false;
	syscall_args(args);
	if (args[3] & MAP_ANONYMOUS || !(f = fd_file(args[4])))
		return false;
	mode = BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT;
	if (mode != S_IFREG && mode != S_IFCHR)
		return false;
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(f, f_path.dentry, d_name.name));
	if (mode == S_IFREG && name[0] == 'l' && name[1] == 'i' && name[2] == 'b')
		for (i = 0; i < sizeof(gpu_libs) / sizeof(gpu_libs[0]) && !gpu; i++)
			gpu = name_is(name, gpu_libs[i], sizeof(gpu_libs[0]));
	else if (mode == S_IFCHR)
		for (i = 0; i < sizeof(gpu_devs) / sizeof(gpu_devs[0]) && !gpu; i++)
			gpu = name_is(name, gpu_devs[i], sizeof(gpu_devs[0]));
	return gpu && gmt_join(bpf_get_current_task_btf(), GMT_JOIN_MAP, name);
}

/* the bits of mmap, munmap, mremap and brk's numbers, set by user space
 * while their group is on */
const volatile __u64 mm_sys_want[GMT_SYS_WORDS] = {};

/* One raw tracepoint for the four calls: a perf-event tracepoint each would
 * cost a grace period each to detach, one after another, at exit. */
SEC("tp_btf/sys_exit")
int BPF_PROG(tp_mm_sys_exit, struct pt_regs *regs, long ret)
{
	long nr = GMT_SYSCALL_NR(regs);

	if (!syscall_wanted(mm_sys_want, nr))
		return 0;
	/* --watch: a file mapped by any other process is looked at (its name) */
	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32) &&
	    !(watch_on && nr == sys_nr[GMT_SYS_MMAP] && !GMT_SYSCALL_COMPAT(regs) &&
	      gpu_mapping(ret)))
		return 0;
	if (GMT_SYSCALL_COMPAT(regs))
		return 0;
	if (nr == sys_nr[GMT_SYS_MMAP])
		on_mmap(ctx, ret);
	else if (nr == sys_nr[GMT_SYS_MUNMAP])
		on_munmap(ret);
	else if (nr == sys_nr[GMT_SYS_MREMAP])
		on_mremap(ret);
	else if (nr == sys_nr[GMT_SYS_BRK])
		on_brk(ret);
	return 0;
}

/* a new program starts its counts afresh: what the old image did is not
 * the target's (with -- CMD, it is the tracer's own fork) */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(tp_mm_exec_reset, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (!gmt_is_target(tgid))
		return 0;
	bpf_map_delete_elem(&fault_counts, &tgid);
	/* the old image's code: no stack words are kept by it until user
	 * space has read the new one's */
	bpf_map_delete_elem(&code_ranges, &tgid);
	if (tgid == targ_tgid)
		target_rss_sent.valid = 0;
	else
		bpf_map_delete_elem(&rss_sent, &tgid);
	return 0;
}
