// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Stacks: owns the table of stacks named so far (their ids), the stack
 * slices waiting for their records, and the choice between a frame-pointer
 * walk and CFI unwinding; each new stack goes out symbolized as a STACK
 * record before the first record that names it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>
#include "stacks.h"
#include "symbolize.h"
#include "unwind.h"

/* distinct stacks named a run: past it, new ones go out without a stack,
 * said once as a probe record */
#define STACKS_MAX 65536
#define SCRATCH_SIZE 65536
#define PENDING_USTACKS 8	      /* threads whose stack slice waits for its record */
#define MAX_UNWIND 64		      /* frames of a stack unwound by CFI */
#define USTACK_MAX_AGE_NS 10000000ull /* a slice is sent within this of its record */

struct stack_entry {
	__u32 id;
	__u64 *ips; /* the key: nr of them */
	UT_hash_handle hh;
};

/* a code file announced by a MODULE record, for one process */
struct module_entry {
	char key[4 + 128 + 128]; /* pid, name, build id */
	UT_hash_handle hh;
};

struct stacks {
	struct symbolizer *sym;
	struct unwinder *unw; /* NULL: frame pointers only */
	gmt_sink_fn sink;
	void *ctx;
	struct stack_entry *table; /* by their ips (uthash) */
	struct module_entry *modules;
	__u32 next_id;
	__u64 unnamed; /* past STACKS_MAX */
	/* the stack slices waiting for the next record of their thread */
	struct gmt_ustack *pending[PENDING_USTACKS];
	unsigned int next_pending;
	/* GMT_TEST_USTACK_DUMP: the stack slices as they left the kernel, for
	 * the test that checks what they keep; -1 */
	int ustack_dump;
	/* 8-byte aligned room to build a STACK record in */
	__u64 scratch[SCRATCH_SIZE / 8];
};

struct stacks *stacks__new(struct symbolizer *sym, struct unwinder *unw, gmt_sink_fn sink,
			   void *ctx)
{
	struct stacks *s = calloc(1, sizeof(*s));
	const char *dump = getenv("GMT_TEST_USTACK_DUMP");

	if (!s)
		return NULL;
	s->sym = sym;
	s->unw = unw;
	s->sink = sink;
	s->ctx = ctx;
	s->ustack_dump = -1;
	if (dump)
		s->ustack_dump =
			open(dump, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return s;
}

void stacks__free(struct stacks *s)
{
	struct stack_entry *e, *t;
	struct module_entry *me, *mt;
	unsigned int i;

	if (!s)
		return;
	HASH_ITER(hh, s->table, e, t)
	{
		HASH_DEL(s->table, e);
		free(e->ips);
		free(e);
	}
	HASH_ITER(hh, s->modules, me, mt)
	{
		HASH_DEL(s->modules, me);
		free(me);
	}
	for (i = 0; i < PENDING_USTACKS; i++)
		free(s->pending[i]);
	if (s->ustack_dump >= 0)
		close(s->ustack_dump);
	free(s);
}

/* a frame-pointer walk that reaches code built without them (Python, most
 * release builds) goes on through stack words: the first address in no code
 * mapping ends the stack (JIT frames end it too); its frames up to there */
static unsigned int fp_frames(struct stacks *st, __u32 pid, const __u64 *ips, unsigned int n)
{
	struct sym_result r;
	unsigned int i;

	for (i = 1; i < n; i++)
		if (symbolizer__resolve(st->sym, pid, ips[i], &r) == -ENOENT)
			return i;
	return n;
}

/* a MODULE record for the file holding ip, the first time pid's stacks
 * name it */
static void announce_module(struct stacks *st, __u32 pid, __u64 ip)
{
	struct module_entry q = { 0 }, *x;
	struct sym_module sm;
	struct gmt_module r;

	if (symbolizer__module(st->sym, pid, ip, &sm) || !sm.name[0])
		return;
	memcpy(q.key, &pid, 4);
	memcpy(q.key + 4, sm.name, sizeof(sm.name));
	memcpy(q.key + 4 + 128, sm.build_id, sizeof(sm.build_id));
	HASH_FIND(hh, st->modules, q.key, sizeof(q.key), x);
	if (x || !(x = malloc(sizeof(*x))))
		return;
	memcpy(x, &q, sizeof(q));
	HASH_ADD(hh, st->modules, key, sizeof(x->key), x);
	event__init(&r.hdr, GMT_EV_MODULE, sizeof(r), event__now_ns(), pid);
	memcpy(r.name, sm.name, sizeof(r.name));
	memcpy(r.build_id, sm.build_id, sizeof(r.build_id));
	r.text_off = sm.text_off;
	r.text_vaddr = sm.text_vaddr;
	r.text_size = sm.text_size;
	st->sink(st->ctx, &r.hdr);
}

static void emit_stack(struct stacks *st, __u32 pid, __u32 id, const __u64 *ips, unsigned int n)
{
	struct gmt_stack *s = (struct gmt_stack *)st->scratch;
	char *names = (char *)s;
	struct sym_result r;
	unsigned int i;
	size_t off;

	n = fp_frames(st, pid, ips, n);
	for (i = 0; i < n; i++)
		announce_module(st, pid, ips[i]);
	off = offsetof(struct gmt_stack, frames) + n * sizeof(s->frames[0]);
	for (i = 0; i < n; i++) {
		symbolizer__resolve(st->sym, pid, ips[i], &r);
		s->frames[i].ip = ips[i];
		s->frames[i].sym_off = r.off;
		off += snprintf(names + off, SCRATCH_SIZE - off, "%s", r.name) + 1;
		off += snprintf(names + off, SCRATCH_SIZE - off, "%s", r.module) + 1;
	}
	memset(names + off, 0, event__round8(off) - off);
	/* event__init would clear the frames: fill the header by hand */
	s->hdr = (struct gmt_hdr){ event__now_ns(),    pid,	    pid, GMT_EV_STACK,
				   event__round8(off), GMT_USER_CPU };
	s->stack_id = id;
	s->nr_frames = n;
	s->pad = 0;
	st->sink(st->ctx, &s->hdr);
}

static void stacks_full(struct stacks *st, __u32 pid)
{
	struct gmt_probe p;

	event__init(&p.hdr, GMT_EV_PROBE, sizeof(p), event__now_ns(), pid);
	snprintf(p.name, sizeof(p.name), "stacks");
	snprintf(p.what, sizeof(p.what), "the code behind allocations and first touches");
	snprintf(p.reason, sizeof(p.reason),
		 "%d distinct stacks were named: the tracer's memory is capped, and later new "
		 "ones go without a stack",
		 STACKS_MAX);
	p.status = GMT_PROBE_SKIPPED;
	st->sink(st->ctx, &p.hdr);
}

/* the id of this stack, sending its symbolized record the first time */
static __u32 intern_stack(struct stacks *st, __u32 pid, const __u64 *ips, unsigned int n)
{
	struct stack_entry *s;

	HASH_FIND(hh, st->table, ips, n * sizeof(*ips), s);
	if (s)
		return s->id;
	if (st->next_id >= STACKS_MAX) {
		if (!st->unnamed++)
			stacks_full(st, pid);
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return 0;
	s->ips = malloc(n * sizeof(*ips));
	if (!s->ips) {
		free(s);
		return 0;
	}
	memcpy(s->ips, ips, n * sizeof(*ips));
	s->id = ++st->next_id;
	HASH_ADD_KEYPTR(hh, st->table, s->ips, n * sizeof(*ips), s);
	emit_stack(st, pid, s->id, ips, n);
	return s->id;
}

/* raw ips from BPF become a stack id: the record goes out without them */
__u32 stacks__of(struct stacks *st, __u32 pid, const __u64 *ips, unsigned int nr)
{
	unsigned int n = nr > GMT_MAX_STACK ? GMT_MAX_STACK : nr;

	return n ? intern_stack(st, pid, ips, n) : 0;
}

/* keep a thread's stack slice until its record comes */
void stacks__slice(struct stacks *st, const struct gmt_ustack *s)
{
	unsigned int i, k = st->next_pending;

	for (i = 0; i < PENDING_USTACKS; i++)
		if (st->pending[i] && st->pending[i]->hdr.tid == s->hdr.tid) {
			k = i;
			break;
		}
	if (i == PENDING_USTACKS)
		st->next_pending = (k + 1) % PENDING_USTACKS;
	if (!st->pending[k] && !(st->pending[k] = malloc(sizeof(*s))))
		return;
	memcpy(st->pending[k], s, s->hdr.len); /* event__valid: len <= sizeof(*s) */
	if (st->ustack_dump >= 0 && write(st->ustack_dump, s, s->hdr.len) != s->hdr.len) {
		close(st->ustack_dump);
		st->ustack_dump = -1;
	}
}

/* the frames of the record from tid: by CFI from its stack slice when
 * that finds more than the frame pointers did (code built without them
 * stops their walk in its first frame); n: the frame-pointer walk's */
__u32 stacks__unwound(struct stacks *st, const struct gmt_hdr *e, const __u64 *fp, unsigned int n)
{
	struct gmt_ustack *s = NULL;
	__u64 ips[MAX_UNWIND];
	unsigned int i, k;

	for (i = 0; st->unw && i < PENDING_USTACKS; i++)
		if (st->pending[i] && st->pending[i]->hdr.tid == e->tid &&
		    st->pending[i]->hdr.pid == e->pid) {
			s = st->pending[i];
			s->hdr.tid = 0;
			break;
		}
	/* made just before its record: an older one lost its record (a full
	 * ring buffer) and belongs to no call */
	if (s && s->hdr.ts_ns <= e->ts_ns && e->ts_ns - s->hdr.ts_ns < USTACK_MAX_AGE_NS &&
	    (k = unwinder__unwind(st->unw, s, ips, MAX_UNWIND)) > fp_frames(st, e->pid, fp, n))
		return intern_stack(st, e->pid, ips, k);
	return n ? stacks__of(st, e->pid, fp, n) : 0;
}
