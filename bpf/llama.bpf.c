// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llama.cpp's own calls, timed by an uprobe pair of their own (apart from
 * the GPU API frames: the GPU calls made inside llama_decode must still be
 * reported). The cookie's func field is the enum gmt_decode_kind. For
 * llama_decode and llama_encode the batch is read by token: which sequence
 * each token belongs to (llama-server: one per slot), its position, and
 * whether its logits were asked for, summed per sequence. */
#include "gmt.bpf.h"

#define LLAMA_DEPTH 4
#define BLOCK 16       /* tokens read from the batch's arrays at a time */
#define MAX_BLOCKS 512 /* 8192 tokens; llama-server's default batch is 2048 */

#if defined(__TARGET_ARCH_x86)
#define BATCH_ON_STACK 1
#else
#define BATCH_ON_STACK 0
#endif

/* struct llama_batch of llama.h: passed by value */
struct llama_batch_user {
	__s32 n_tokens, pad;
	__u64 token, embd, pos, n_seq_id, seq_id, logits;
};

struct llama_frames {
	__u32 depth, pad;
	struct {
		__u64 ts, cookie, sp, lctx;
		struct llama_batch_user b;
	} f[LLAMA_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct llama_frames);
} llama_frames SEC(".maps");

/* per CPU: one block of the batch's arrays, and the sums per sequence */
struct batch_scan {
	struct llama_batch_user b;
	__s32 pos[BLOCK];
	__u64 seq_ptr[BLOCK];
	__s32 n_seq[BLOCK];
	__s8 logits[BLOCK];
	__u32 used; /* bit per acc entry in use */
	struct gmt_decode_seq acc[GMT_DECODE_SEQS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct batch_scan);
} batch_scans SEC(".maps");

static __always_inline bool is_batch_call(__u32 kind)
{
	return kind == GMT_DEC_DECODE || kind == GMT_DEC_ENCODE;
}

/* llama_synchronize: only when it is called matters. llama-server calls it
 * before it samples each slot and once after the last, so the entry of the
 * call after a slot's own is when that slot's token was done (the one
 * before waited for the device); one trap a call instead of two, on a path
 * taken twice or more per generated token */
SEC("uprobe")
int llama_mark(struct pt_regs *ctx)
{
	struct gmt_decode *e;

	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	e = gmt_reserve(sizeof(*e) + 8, GMT_EV_DECODE, GMT_SRC_DECODE);
	if (!e)
		return 0;
	e->dur_ns = 0;
	e->kind = GMT_COOKIE_FUNC(bpf_get_attach_cookie(ctx));
	e->ret = 0;
	e->n_tokens = 0;
	e->embd = 0;
	e->nr_seqs = 0;
	e->scanned = 0;
	*(__u64 *)e->seqs = PT_REGS_PARM1(ctx); /* llama_synchronize(ctx) */
	gmt_submit(e);
	return 0;
}

/* llama_state_seq_{get,set}_data_ext(ctx, buf, size, seq_id, flags): the
 * size of a prompt-cache entry or a context checkpoint, at the call's entry */
SEC("uprobe")
int llama_state(struct pt_regs *ctx)
{
	struct gmt_llama_state *e;

	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	e = gmt_reserve(sizeof(*e), GMT_EV_LLAMA_STATE, GMT_SRC_DECODE);
	if (!e)
		return 0;
	e->size = PT_REGS_PARM3(ctx);
	e->seq = (__s32)PT_REGS_PARM4(ctx);
	e->flags = (__u32)PT_REGS_PARM5(ctx);
	e->kind = GMT_COOKIE_FUNC(bpf_get_attach_cookie(ctx));
	e->pad = 0;
	gmt_submit(e);
	return 0;
}

SEC("uprobe")
int llama_enter(struct pt_regs *ctx)
{
	struct llama_frames *l;
	__u64 cookie, where;
	__u32 d, i;

	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	l = bpf_task_storage_get(&llama_frames, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!l)
		return 0;
	d = l->depth;
	/* frames from below this call's level, or the same function at its
	 * level, ended without their return (an exception, a return lost while
	 * attaching): drop them; a tail call into another function is inside */
	for (i = 0; i < LLAMA_DEPTH; i++) {
		__u32 top = (d - 1) & (LLAMA_DEPTH - 1);

		if (!d || d > LLAMA_DEPTH || PT_REGS_SP(ctx) < l->f[top].sp ||
		    (PT_REGS_SP(ctx) == l->f[top].sp &&
		     bpf_get_attach_cookie(ctx) != l->f[top].cookie))
			break;
		d--;
	}
	if (d >= LLAMA_DEPTH)
		d = 0; /* returns were lost: start over */
	asm volatile("" : "+r"(d));
	d &= LLAMA_DEPTH - 1;
	cookie = bpf_get_attach_cookie(ctx);
	l->f[d].cookie = cookie;
	l->f[d].lctx = 0;
	__builtin_memset(&l->f[d].b, 0, sizeof(l->f[d].b));
	if (is_batch_call(GMT_COOKIE_FUNC(cookie))) {
		/* read at entry, while it is certainly intact: on x86-64 the
		 * batch is on the stack above the return address; on arm64 a
		 * register points to a copy */
		where = BATCH_ON_STACK ? PT_REGS_SP(ctx) + 8 : PT_REGS_PARM2(ctx);
		bpf_probe_read_user(&l->f[d].b, sizeof(l->f[d].b), (void *)where);
		l->f[d].lctx = PT_REGS_PARM1(ctx);
	}
	l->f[d].sp = PT_REGS_SP(ctx);
	l->depth = d + 1;
	l->f[d].ts = bpf_ktime_get_ns();
	return 0;
}

/* A size known to be small, masked where the verifier sees it: the mask
 * changes nothing, but the compiler, knowing that, would drop it, and the
 * verifier loses the bound when the value is reloaded from the stack. */
#define SIZE(v, mask)                         \
	({                                    \
		__u32 __v = (v);              \
		asm volatile("" : "+r"(__v)); \
		__v &(mask);                  \
	})

/* the tokens of one block of the batch into the per-sequence sums */
static long scan_block(__u64 i, void *unused)
{
	__u32 zero = 0, base = i * BLOCK, n, cnt, k;
	struct batch_scan *s = bpf_map_lookup_elem(&batch_scans, &zero);

	if (!s)
		return 1;
	n = s->b.n_tokens;
	if (base >= n)
		return 1;
	cnt = n - base;
	if (cnt > BLOCK)
		cnt = BLOCK;
	if (s->b.pos &&
	    bpf_probe_read_user(s->pos, SIZE(cnt * 4, 0x7f), (void *)(s->b.pos + base * 4)))
		return 1;
	if (s->b.seq_id &&
	    bpf_probe_read_user(s->seq_ptr, SIZE(cnt * 8, 0xff), (void *)(s->b.seq_id + base * 8)))
		return 1;
	if (s->b.n_seq_id &&
	    bpf_probe_read_user(s->n_seq, SIZE(cnt * 4, 0x7f), (void *)(s->b.n_seq_id + base * 4)))
		return 1;
	if (s->b.logits &&
	    bpf_probe_read_user(s->logits, SIZE(cnt, 0x1f), (void *)(s->b.logits + base)))
		return 1;
	for (k = 0; k < BLOCK; k++) {
		struct gmt_decode_seq *a;
		__s32 seq = 0, pos;
		bool out;

		if (k >= cnt)
			break;
		if (s->b.seq_id)
			bpf_probe_read_user(&seq, sizeof(seq), (void *)s->seq_ptr[k]);
		pos = s->b.pos ? s->pos[k] : -1;
		/* no logits array: llama.cpp outputs the last token only */
		out = s->b.logits ? s->logits[k] != 0 : base + k == n - 1;
		a = &s->acc[seq & (GMT_DECODE_SEQS - 1)];
		if (!(s->used & (1u << (seq & (GMT_DECODE_SEQS - 1))))) {
			s->used |= 1u << (seq & (GMT_DECODE_SEQS - 1));
			a->seq = seq;
			a->n_tokens = a->n_outputs = a->flags = 0;
			a->pos_min = a->pos_max = pos;
		} else if (a->seq != seq) {
			a->flags |= GMT_DSEQ_MERGED;
		}
		a->n_tokens++;
		a->n_outputs += out;
		if (pos < a->pos_min)
			a->pos_min = pos;
		if (pos > a->pos_max)
			a->pos_max = pos;
		if (s->b.n_seq_id && s->n_seq[k] > 1)
			a->flags |= GMT_DSEQ_SHARED;
	}
	return 0;
}

/* the batch's tokens by sequence into e */
static __always_inline void scan_batch(struct gmt_decode *e, const struct llama_batch_user *b)
{
	struct batch_scan *s;
	__u32 zero = 0, j, n = 0, blocks;

	if (b->n_tokens <= 0)
		return;
	if (!b->seq_id && !b->pos && !b->logits) {
		/* llama_batch_get_one: one sequence, the last token's logits */
		e->seqs[0] = (struct gmt_decode_seq){ 0, b->n_tokens, 1, -1, -1, 0 };
		e->nr_seqs = 1;
		e->scanned = b->n_tokens;
		return;
	}
	s = bpf_map_lookup_elem(&batch_scans, &zero);
	if (!s)
		return;
	s->b = *b;
	s->used = 0;
	blocks = ((__u32)b->n_tokens + BLOCK - 1) / BLOCK;
	if (blocks > MAX_BLOCKS)
		blocks = MAX_BLOCKS;
	bpf_loop(blocks, scan_block, NULL, 0);
	e->scanned = b->n_tokens < MAX_BLOCKS * BLOCK ? b->n_tokens : MAX_BLOCKS * BLOCK;
	for (j = 0; j < GMT_DECODE_SEQS; j++) {
		if (!(s->used & (1u << j)))
			continue;
		e->seqs[n & (GMT_DECODE_SEQS - 1)] = s->acc[j];
		n++;
	}
	e->nr_seqs = n;
}

/* a mask over the sequences' bytes (GMT_DECODE_SEQS of them), a multiple of 8 */
#define TAIL_MASK 0x1f8
_Static_assert(GMT_DECODE_SEQS * sizeof(struct gmt_decode_seq) <= TAIL_MASK,
	       "the sequences fit under the mask");

SEC("uretprobe")
int llama_return(struct pt_regs *ctx)
{
	/* room for the sequences and the context after them, as far as the
	 * mask below lets the verifier see it (sequences: 384 bytes at most) */
	__u64 size = sizeof(struct gmt_decode) + TAIL_MASK + sizeof(__u64);
	struct llama_frames *l;
	struct gmt_decode *e;
	__u64 ts, cookie;
	__u32 d, n, off;

	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	l = bpf_task_storage_get(&llama_frames, bpf_get_current_task_btf(), 0, 0);
	if (!l)
		return 0;
	d = l->depth;
	if (!d || d > LLAMA_DEPTH)
		return 0;
	l->depth = --d;
	asm volatile("" : "+r"(d)); /* keep the mask: the verifier wants it */
	d &= LLAMA_DEPTH - 1;
	ts = l->f[d].ts;
	cookie = l->f[d].cookie;
	e = gmt_reserve(size, GMT_EV_DECODE, GMT_SRC_DECODE);
	if (!e)
		return 0;
	e->dur_ns = bpf_ktime_get_ns() - ts;
	e->kind = GMT_COOKIE_FUNC(cookie);
	e->ret = (__s32)PT_REGS_RC(ctx);
	e->n_tokens = 0;
	e->embd = 0;
	e->nr_seqs = 0;
	e->scanned = 0;
	if (is_batch_call(e->kind)) {
		e->n_tokens = l->f[d].b.n_tokens;
		e->embd = l->f[d].b.embd != 0;
		scan_batch(e, &l->f[d].b);
	}
	/* the context after the sequences (see gmt_events.h); masked where
	 * the verifier sees it (6.1 loses a bound checked on a copy) */
	n = e->nr_seqs < GMT_DECODE_SEQS ? e->nr_seqs : GMT_DECODE_SEQS;
	off = SIZE(n * sizeof(struct gmt_decode_seq), TAIL_MASK);
	*(__u64 *)((void *)e->seqs + off) = l->f[d].lctx;
	e->hdr.len = sizeof(*e) + off + sizeof(__u64);
	gmt_submit(e);
	return 0;
}
