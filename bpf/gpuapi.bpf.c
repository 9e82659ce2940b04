// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GPU API calls (Vulkan, CUDA driver, HIP): one entry and one return
 * program for every function; the uprobe cookie says which function it is
 * and how to read its arguments (enum gmt_gpu_shape). The entry saves the
 * argument registers; the return reads results and emits one record. */
#include "gmt.bpf.h"
#include "ustack.bpf.h"

#define MAX_DEPTH 16
#define PNEXT_MAX 8

/* Vulkan structure types met in vkAllocateMemory's pNext chain */
#define VK_ST_EXPORT_MEMORY_ALLOCATE_INFO 1000072002
#define VK_ST_IMPORT_MEMORY_WIN32_HANDLE_INFO 1000073000
#define VK_ST_IMPORT_MEMORY_FD_INFO 1000074000
#define VK_ST_MEMORY_ALLOCATE_FLAGS_INFO 1000060000
#define VK_ST_MEMORY_DEDICATED_ALLOCATE_INFO 1000127001
#define VK_ST_IMPORT_ANDROID_HARDWARE_BUFFER 1000129003
#define VK_ST_IMPORT_MEMORY_HOST_POINTER_INFO 1000178000
#define VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT 0x2

/* the outermost GPU call in flight on a thread; inner ones only count depth */
struct gpu_frame {
	__u64 cookie;
	__u64 args[6];
	__u64 ts;
	__u64 sp; /* at entry: a later entry above it means the return was lost */
	__u32 depth;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gpu_frame);
} gpu_frames SEC(".maps");

static __always_inline struct gpu_frame *frame(bool create)
{
	return bpf_task_storage_get(&gpu_frames, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* A call entered while another is in flight is inside it when made from
 * below its level, or from its level as a tail call into another function
 * (the loader jumping to the driver, cuMemRelease to an internal free).
 * The same function again from the same level means the call in flight
 * ended without its return probe (longjmp, an exception, a return lost
 * while attaching): this call starts over. */
static __always_inline bool inside(const struct gpu_frame *f, __u64 sp, __u64 cookie)
{
	return sp < f->sp || (sp == f->sp && cookie != f->cookie);
}

SEC("uprobe")
int gpu_enter(struct pt_regs *ctx)
{
	__u64 sp = PT_REGS_SP(ctx), cookie = bpf_get_attach_cookie(ctx);
	struct gpu_frame *f;

	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	f = frame(true);
	if (!f)
		return 0;
	if (f->depth && !inside(f, sp, cookie))
		f->depth = 0;
	if (f->depth++)
		return 0; /* a nested call: the loader calling the driver, say */
	f->cookie = cookie;
	f->args[0] = PT_REGS_PARM1(ctx);
	f->args[1] = PT_REGS_PARM2(ctx);
	f->args[2] = PT_REGS_PARM3(ctx);
	f->args[3] = PT_REGS_PARM4(ctx);
	f->args[4] = PT_REGS_PARM5(ctx);
	/* libbpf 1.1 has no PT_REGS_PARM6 */
#if defined(__TARGET_ARCH_x86)
	f->args[5] = ctx->r9;
#elif defined(__TARGET_ARCH_arm64)
	f->args[5] = ctx->regs[5];
#else
#error "the sixth argument's register on this architecture"
#endif
	f->sp = sp;
	f->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline __u64 read_u64(__u64 uaddr)
{
	__u64 v = 0;

	if (uaddr)
		bpf_probe_read_user(&v, sizeof(v), (void *)uaddr);
	return v;
}

/* VkMemoryAllocateInfo: sType, pNext, allocationSize, memoryTypeIndex */
static __always_inline void vk_alloc_info(struct gmt_gpu_call *e, __u64 info)
{
	struct {
		__u32 stype, pad;
		__u64 next, size;
		__u32 type_index, pad2;
	} ai = {};
	struct {
		__u32 stype, pad;
		__u64 next, a, b;
	} s;
	__u64 p;
	int i;

	if (bpf_probe_read_user(&ai, sizeof(ai), (void *)info))
		return;
	e->size = ai.size;
	e->mem_type = ai.type_index;
	p = ai.next;
	for (i = 0; i < PNEXT_MAX && p; i++) {
		if (bpf_probe_read_user(&s, sizeof(s), (void *)p))
			break;
		switch (s.stype) {
		case VK_ST_MEMORY_DEDICATED_ALLOCATE_INFO: /* image, buffer */
			if (s.a)
				e->flags |= GMT_GF_DEDICATED_IMAGE;
			if (s.b)
				e->flags |= GMT_GF_DEDICATED_BUFFER;
			break;
		case VK_ST_IMPORT_MEMORY_FD_INFO:
			e->flags |= GMT_GF_IMPORT_FD;
			break;
		case VK_ST_IMPORT_MEMORY_HOST_POINTER_INFO:
			e->flags |= GMT_GF_IMPORT_HOST;
			break;
		case VK_ST_IMPORT_MEMORY_WIN32_HANDLE_INFO:
		case VK_ST_IMPORT_ANDROID_HARDWARE_BUFFER:
			e->flags |= GMT_GF_IMPORT_OTHER;
			break;
		case VK_ST_EXPORT_MEMORY_ALLOCATE_INFO:
			e->flags |= GMT_GF_EXPORT;
			break;
		case VK_ST_MEMORY_ALLOCATE_FLAGS_INFO: /* flags, deviceMask */
			if ((__u32)s.a & VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT)
				e->flags |= GMT_GF_DEVICE_ADDRESS;
			break;
		}
		p = s.next;
	}
}

/* everything but the stack, from the saved arguments and the result */
static __always_inline void fill(struct gmt_gpu_call *e, struct gpu_frame *f, __u64 ret)
{
	__u32 shape = GMT_COOKIE_SHAPE(f->cookie), ok;
	__u64 *a = f->args;

	e->api = GMT_COOKIE_API(f->cookie);
	e->op = GMT_COOKIE_OP(f->cookie);
	e->kind = GMT_COOKIE_KIND(f->cookie);
	e->pad0 = 0;
	e->func = GMT_COOKIE_FUNC(f->cookie);
	e->nr_ips = 0;
	e->result = (shape == GMT_SH_VK_FREE) ? 0 : (__s32)ret;
	e->mem_type = ~0u;
	e->flags = 0;
	e->stack_id = 0;
	e->size = 0;
	e->handle = 0;
	e->aux = 0;
	e->aux2 = 0;
	e->dur_ns = bpf_ktime_get_ns() - f->ts;
	ok = e->result == 0;
	switch (shape) {
	case GMT_SH_OUT_SIZE:
		e->size = a[1];
		if (ok)
			e->handle = read_u64(a[0]);
		break;
	case GMT_SH_OUT:
		if (ok)
			e->handle = read_u64(a[0]);
		break;
	case GMT_SH_PITCH:
		e->size = a[2] * a[3]; /* width in bytes x height, or pitch x height */
		if (ok) {
			e->handle = read_u64(a[0]);
			e->size = read_u64(a[1]) * a[3];
		}
		break;
	case GMT_SH_HANDLE:
		e->handle = a[0];
		break;
	case GMT_SH_PTR_SIZE:
		e->handle = a[0];
		e->size = a[1];
		break;
	case GMT_SH_MEMMAP:
		e->handle = a[0];
		e->size = a[1];
		e->aux = a[3];
		break;
	case GMT_SH_MEMINFO:
		if (ok) {
			e->aux = read_u64(a[0]);
			e->aux2 = read_u64(a[1]);
		}
		break;
	case GMT_SH_DEV_ATTR:
		e->handle = (__u32)a[2];
		e->aux2 = (__u32)a[1];
		if (ok) {
			__s32 v = 0;

			bpf_probe_read_user(&v, sizeof(v), (void *)a[0]);
			e->aux = (__u32)v;
		}
		break;
	case GMT_SH_VK_ALLOC:
		e->aux2 = a[0];
		vk_alloc_info(e, a[1]);
		if (ok)
			e->handle = read_u64(a[3]);
		break;
	case GMT_SH_VK_FREE:
		e->aux2 = a[0];
		e->handle = a[1];
		break;
	case GMT_SH_VK_MAP:
		e->aux2 = a[0];
		e->handle = a[1];
		e->size = a[3]; /* VK_WHOLE_SIZE is ~0 */
		if (ok)
			e->aux = read_u64(a[5]);
		break;
	}
}

/* the registers and the stack above them, for user space to unwind by the
 * call frame information where frame pointers stop short */
static __always_inline void send_ustack(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86) || defined(__TARGET_ARCH_arm64)
	struct gmt_ustack *u;
	__u64 sp = PT_REGS_SP(ctx);
	__u32 n, i;

	u = gmt_reserve(sizeof(*u), GMT_EV_USTACK, GMT_SRC_GPU);
	if (!u)
		return;
#if defined(__TARGET_ARCH_x86)
	u->regs[0] = ctx->ax;
	u->regs[1] = ctx->dx;
	u->regs[2] = ctx->cx;
	u->regs[3] = ctx->bx;
	u->regs[4] = ctx->si;
	u->regs[5] = ctx->di;
	u->regs[6] = ctx->bp;
	u->regs[8] = ctx->r8;
	u->regs[9] = ctx->r9;
	u->regs[10] = ctx->r10;
	u->regs[11] = ctx->r11;
	u->regs[12] = ctx->r12;
	u->regs[13] = ctx->r13;
	u->regs[14] = ctx->r14;
	u->regs[15] = ctx->r15;
#else
		/* x0-x30: a constant offset each, as context reads must be */
#pragma clang loop unroll(full)
	for (i = 0; i < 31; i++)
		u->regs[i] = ctx->regs[i];
#endif
	u->regs[GMT_USTACK_SP] = sp;
	u->regs[GMT_USTACK_PC] = PT_REGS_IP(ctx);
	u->pad = 0;
	/* page by page, up to the stack's top: a read past it fails whole */
	n = 4096 - (sp & 4095);
	if (n > 4096 || bpf_probe_read_user(u->data, n, (void *)sp))
		n = 0;
	for (i = 0; n && i < GMT_USTACK_BYTES / 4096; i++) {
		if (n > GMT_USTACK_BYTES - 4096 ||
		    bpf_probe_read_user(u->data + n, 4096, (void *)(sp + n)))
			break;
		n += 4096;
	}
	u->size = n;
	gmt_submit(u);
#endif
}

/* once requests may be on the stack, or in a process attached with -p */
static __always_inline void send_gpu_redacted(struct pt_regs *ctx)
{
	struct ustack_scratch *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&ustack_scratch, &zero);
	if (s)
		send_redacted(ctx, bpf_get_current_pid_tgid() >> 32, s, GMT_SRC_GPU);
}

SEC("uretprobe")
int gpu_return(struct pt_regs *ctx)
{
	struct gmt_gpu_call *e;
	struct gpu_frame *f;
	long n;

	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	f = frame(false);
	if (!f || !f->depth)
		return 0;
	if (--f->depth)
		return 0;
	/* cudaGetDeviceProperties asks a hundred attributes: one is kept */
	if (GMT_COOKIE_SHAPE(f->cookie) == GMT_SH_DEV_ATTR &&
	    (__u32)f->args[1] != GMT_CU_ATTR_INTEGRATED)
		return 0;
	if (GMT_COOKIE_OP(f->cookie) != GMT_GOP_ALLOC) {
		/* frees, maps, queries: no stack, a small record */
		e = gmt_reserve(sizeof(*e), GMT_EV_GPU_CALL, GMT_SRC_GPU);
		if (!e)
			return 0;
		fill(e, f, PT_REGS_RC(ctx));
		gmt_submit(e);
		return 0;
	}
	if (unwind_cfi && !serving)
		send_ustack(ctx);
	else if (redact_gpu)
		send_gpu_redacted(ctx);
	e = gmt_reserve(sizeof(*e) + GMT_MAX_STACK * sizeof(__u64), GMT_EV_GPU_CALL, GMT_SRC_GPU);
	if (!e)
		return 0;
	fill(e, f, PT_REGS_RC(ctx));
	/* at the return the caller's frame is live: the stack starts in the
	 * caller, which an entry probe would skip in a frameless wrapper */
	n = bpf_get_stack(ctx, e->ips, GMT_MAX_STACK * sizeof(__u64), BPF_F_USER_STACK);
	if (n > 0)
		e->nr_ips = n / sizeof(__u64);
	e->hdr.len = sizeof(*e) + e->nr_ips * sizeof(__u64);
	gmt_submit(e);
	return 0;
}
