/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shared by every BPF source: the one ring buffer, the target filter, drop
 * accounting and settings. Defined once in common.bpf.c, extern elsewhere, so
 * `bpftool gen object` links them into one set of maps. */
#ifndef GMT_BPF_H
#define GMT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gmt_events.h"

#ifdef GMT_DEFINE_SHARED
#define GMT_SHARED
#else
#define GMT_SHARED extern
#endif

GMT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* tgids being traced besides targ_tgid: children added on fork (-f) */
GMT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} targets SEC(".maps");

/* failed ring-buffer reserves per enum gmt_source */
GMT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GMT_SRC_NR);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

GMT_SHARED const volatile __u32 targ_tgid;
GMT_SHARED const volatile __u32 follow_forks;
GMT_SHARED const volatile __u64 rss_step_bytes;
GMT_SHARED const volatile __u64 mmap_stack_min;
GMT_SHARED const volatile __u64 wakeup_bytes;
GMT_SHARED const volatile __u32 page_shift;
GMT_SHARED const volatile __u32 unwind_cfi; /* send stack slices to unwind by CFI */
GMT_SHARED __u32 serving; /* a target has read an HTTP request: no more stack slices */
GMT_SHARED const volatile __u32 redact_gpu; /* else, redacted ones (ustack.bpf.h) */
GMT_SHARED const volatile __u32 watch_on;   /* --watch: processes are found from events */
GMT_SHARED const volatile __u32 self_tgid;  /* the tracer: it and its helpers are never found */

/* every program asks this first, mostly of other processes: the one target
 * is a compare; only with -f does it take a map lookup */
static __always_inline bool gmt_is_target(__u32 tgid)
{
	if (tgid == targ_tgid)
		return true;
	if (!follow_forks)
		return false;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline void gmt_count_drop(__u32 src)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &src);

	if (n)
		*n += 1;
}

/* reserve a record of `size` bytes and fill its header; NULL (and a counted
 * drop) when the ring buffer is full */
static __always_inline void *gmt_reserve(__u64 size, __u16 type, __u32 src)
{
	struct gmt_hdr *h = bpf_ringbuf_reserve(&events, size, 0);
	__u64 id;

	if (!h) {
		gmt_count_drop(src);
		return NULL;
	}
	id = bpf_get_current_pid_tgid();
	h->ts_ns = bpf_ktime_get_ns();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->type = type;
	h->len = size;
	h->cpu = bpf_get_smp_processor_id();
	return h;
}

/* Submit without waking the reader, which drains the buffer on its own
 * every 250 ms, unless the buffer is filling: a wakeup per event would cost
 * two context switches per mmap. */
static __always_inline void gmt_submit(void *e)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/* for the few events the reader must see while the process still lives:
 * new code and stacks are symbolized from /proc/PID/maps */
static __always_inline void gmt_submit_now(void *e)
{
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* --watch found task's process (it exec'd a watched name, or mapped a GPU
 * file: `what`, 32 bytes, or NULL): traced from here on, before it runs
 * on, and the record says so. False for the tracer and its helpers (they
 * load GPU drivers too) and when the set is full. */
static __always_inline bool gmt_join(struct task_struct *task, __u32 how, const char *what)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), one = 1;
	struct gmt_join *e;

	if (tgid == self_tgid || BPF_CORE_READ(task, real_parent, tgid) == self_tgid)
		return false;
	if (bpf_map_update_elem(&targets, &tgid, &one, BPF_NOEXIST))
		return false;
	e = gmt_reserve(sizeof(*e), GMT_EV_JOIN, GMT_SRC_PROC);
	if (!e)
		return true; /* counted as lost; the slow /proc scan may still join it */
	e->start_ns = BPF_CORE_READ(task, group_leader, start_time);
	e->how = how;
	e->pad = 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	__builtin_memset(e->what, 0, sizeof(e->what));
	if (what)
		__builtin_memcpy(e->what, what, sizeof(e->what));
	/* user space joins it now: its GPU libraries get their probes */
	gmt_submit_now(e);
	return true;
}

#endif /* GMT_BPF_H */
