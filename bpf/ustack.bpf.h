/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Stack slices that may leave the kernel at any time (sampled first
 * touches; GPU allocations once a request has been read, or with -p): of
 * the registers and GMT_TOUCH_BYTES of stack, only the words an unwinder
 * reads are kept, addresses in the thread's stack and in the process's
 * code. Everything else, whatever data the program handles, is zeroed here.
 * The maps are defined once, in common.bpf.c. */
#ifndef GMT_USTACK_BPF_H
#define GMT_USTACK_BPF_H

#include "gmt.bpf.h"

/* each target's code, from user space: what a kept stack word may point to */
GMT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gmt_code_ranges);
} code_ranges SEC(".maps");

/* per CPU: the countdown to the next sampled touch and the stack being
 * redacted (BPF programs do not nest on a CPU here: the stack is read
 * without faulting) */
struct ustack_scratch {
	__s64 countdown;
	__u64 w[GMT_TOUCH_BYTES / 8];
	__u64 regs[32]; /* arm64's x0-x30, redacted in a loop */
};

GMT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_scratch);
} ustack_scratch SEC(".maps");

#ifndef GMT_DEFINE_SHARED
struct redact {
	__u64 *w;
	const struct gmt_code_ranges *code;
	__u64 sp, nr; /* nr: words read */
};

/* an address in the stack above sp, or in code: what unwinding reads (saved
 * frame pointers and return addresses). Nothing else is kept. */
static __always_inline bool keep_word(const struct redact *x, __u64 v)
{
	__u32 lo = 0, hi = x->code->nr, mid, k;

	if (v >= x->sp && v < x->sp + GMT_STACK_SPAN)
		return true;
	if (hi > GMT_CODE_RANGES)
		hi = GMT_CODE_RANGES;
	/* most words (counts, zeros, flags) are outside all of the code */
	if (!hi || v < x->code->lo[0] || v >= x->code->hi[(hi - 1) & (GMT_CODE_RANGES - 1)])
		return false;
	for (k = 0; k < 7 && lo < hi; k++) {
		mid = ((lo + hi) / 2) & (GMT_CODE_RANGES - 1);
		if (v < x->code->lo[mid])
			hi = mid;
		else if (v >= x->code->hi[mid])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* four words a call: the call costs as much as a word */
static __attribute__((unused)) long redact_words(__u64 i, void *arg)
{
	struct redact *x = arg;
	__u32 k;

	i *= 4;
	if (i > GMT_TOUCH_BYTES / 8 - 4)
		return 1;
	for (k = 0; k < 4; k++) {
		/* the mask keeps older verifiers sure of the index (exact here) */
		__u32 at = (i + k) & (GMT_TOUCH_BYTES / 8 - 1);

		if (at >= x->nr || !keep_word(x, x->w[at]))
			x->w[at] = 0;
	}
	return 0;
}

#define KEEP(x, v) (keep_word(x, v) ? (v) : 0)

#if defined(__TARGET_ARCH_arm64)
/* arm64's 31 general registers (x30, the link register, like any word) */
static long redact_regs(__u64 i, void *arg)
{
	struct redact *x = arg;
	__u32 at = i & 31;

	if (at < 31 && !keep_word(x, x->w[at]))
		x->w[at] = 0;
	return 0;
}
#endif

/* regs' stack, redacted, as a USTACK record of GMT_TOUCH_BYTES: the record
 * that follows from this thread is the one it belongs to. False when tgid's
 * code is not known yet or the ring buffer is full. */
static __always_inline bool send_redacted(struct pt_regs *regs, __u32 tgid,
					  struct ustack_scratch *s, __u32 src)
{
#if defined(__TARGET_ARCH_x86) || defined(__TARGET_ARCH_arm64)
	const struct gmt_code_ranges *code = bpf_map_lookup_elem(&code_ranges, &tgid);
	struct redact x = { .w = s->w, .code = code };
	struct gmt_ustack *u;
	__u32 n, i;
	bool got;

	if (!code)
		return false;
	x.sp = PT_REGS_SP(regs);
	/* page by page, up to the stack's top: a read past it fails whole.
	 * The pages under sp may not be there yet: a fault on them (a large
	 * frame's first touch, `sub $0x2000, %rsp` then a store) is one
	 * sampled. A failed read leaves zeros, as redacting would, and the
	 * pages above still hold the callers: until a read succeeds, a failed
	 * one is passed over. */
	n = 4096 - (x.sp & 4095);
	if (n > 4096)
		return false;
	got = !bpf_probe_read_user(s->w, n, (void *)x.sp);
	for (i = 0; i < GMT_TOUCH_BYTES / 4096; i++) {
		if (n > GMT_TOUCH_BYTES - 4096)
			break;
		if (!bpf_probe_read_user((void *)s->w + n, 4096, (void *)(x.sp + n)))
			got = true;
		else if (got)
			break;
		n += 4096;
	}
	if (!got)
		n = 0;
	x.nr = n / 8;
	bpf_loop(GMT_TOUCH_BYTES / 32, redact_words, &x, 0);
	u = gmt_reserve(offsetof(struct gmt_ustack, data) + GMT_TOUCH_BYTES, GMT_EV_USTACK, src);
	if (!u)
		return false;
#if defined(__TARGET_ARCH_x86)
	u->regs[0] = KEEP(&x, regs->ax);
	u->regs[1] = KEEP(&x, regs->dx);
	u->regs[2] = KEEP(&x, regs->cx);
	u->regs[3] = KEEP(&x, regs->bx);
	u->regs[4] = KEEP(&x, regs->si);
	u->regs[5] = KEEP(&x, regs->di);
	u->regs[6] = KEEP(&x, regs->bp);
	u->regs[8] = KEEP(&x, regs->r8);
	u->regs[9] = KEEP(&x, regs->r9);
	u->regs[10] = KEEP(&x, regs->r10);
	u->regs[11] = KEEP(&x, regs->r11);
	u->regs[12] = KEEP(&x, regs->r12);
	u->regs[13] = KEEP(&x, regs->r13);
	u->regs[14] = KEEP(&x, regs->r14);
	u->regs[15] = KEEP(&x, regs->r15);
#else
		/* copied whole (a constant offset each), redacted in the scratch */
#pragma clang loop unroll(full)
	for (i = 0; i < 31; i++)
		s->regs[i] = regs->regs[i];
	x.w = s->regs;
	bpf_loop(31, redact_regs, &x, 0);
	bpf_probe_read_kernel(u->regs, 31 * sizeof(__u64), s->regs);
#endif
	u->regs[GMT_USTACK_SP] = x.sp;
	u->regs[GMT_USTACK_PC] = PT_REGS_IP(regs);
	u->size = n;
	u->pad = 0;
	bpf_probe_read_kernel(u->data, GMT_TOUCH_BYTES, s->w);
	gmt_submit(u);
	return true;
#else
	return false;
#endif
}
#endif /* GMT_DEFINE_SHARED */

#endif
