// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* BPF maps: owns what was last sent of BPF's counters (fault counts per
 * target, drops per source) and every write user space makes to BPF's
 * per-process maps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <uthash.h>
#include "bpfmaps.h"
#include "attach.h"
#include "drain.h"
#include "procfs.h"
#include "gpumemtrace.skel.h"

struct pid_faults {
	__u32 pid;
	__u64 sent[GMT_FAULT_NR]; /* the counts last sent */
	UT_hash_handle hh;
};

struct bpfmaps {
	gmt_sink_fn sink;
	void *ctx;
	__u32 target; /* the session's pid, for LOST records */
	bool redacts; /* BPF sends stack slices only within code ranges */
	int ncpus;
	int targets_fd, code_fd, rss_sent_fd, faults_fd, drops_fd;
	struct pid_faults *pids; /* the targets (uthash) */
	__u64 lost_sent[GMT_SRC_NR];
};

struct bpfmaps *bpfmaps__new(struct attach *a, gmt_sink_fn sink, void *ctx)
{
	struct gmt_bpf *skel = attach__skel(a);
	struct bpfmaps *m;
	int ncpus = libbpf_num_possible_cpus();

	if (ncpus <= 0) {
		errno = -ncpus;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->sink = sink;
	m->ctx = ctx;
	m->target = attach__target(a);
	m->redacts = attach__redacts(a);
	m->ncpus = ncpus;
	m->targets_fd = bpf_map__fd(skel->maps.targets);
	m->code_fd = bpf_map__fd(skel->maps.code_ranges);
	m->rss_sent_fd = bpf_map__fd(skel->maps.rss_sent);
	m->faults_fd = bpf_map__fd(skel->maps.fault_counts);
	m->drops_fd = bpf_map__fd(skel->maps.drops);
	return m;
}

void bpfmaps__free(struct bpfmaps *m)
{
	struct pid_faults *p, *t;

	if (!m)
		return;
	HASH_ITER(hh, m->pids, p, t)
	{
		HASH_DEL(m->pids, p);
		free(p);
	}
	free(m);
}

bool bpfmaps__add_target(struct bpfmaps *m, __u32 pid)
{
	__u32 one = 1;

	return !bpf_map_update_elem(m->targets_fd, &pid, &one, BPF_NOEXIST) || errno == EEXIST;
}

void bpfmaps__push_code(struct bpfmaps *m, __u32 pid)
{
	struct gmt_code_ranges r = {};

	if (!m->redacts)
		return;
	r.nr = procfs__code_ranges(pid, r.lo, r.hi, GMT_CODE_RANGES);
	if (r.nr)
		bpf_map_update_elem(m->code_fd, &pid, &r, BPF_ANY);
}

void bpfmaps__restart(struct bpfmaps *m, __u32 pid)
{
	struct pid_faults *p;

	HASH_FIND(hh, m->pids, &pid, sizeof(pid), p);
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return;
		p->pid = pid;
		HASH_ADD(hh, m->pids, pid, sizeof(pid), p);
	}
	memset(p->sent, 0, sizeof(p->sent));
}

static void emit(struct bpfmaps *m, const struct gmt_hdr *e)
{
	m->sink(m->ctx, e);
}

/* page faults are counted in BPF per CPU; send pid's totals if they moved.
 * Each interval only for processes whose fork has been read: a child's
 * counts can be in the map before its fork record is out of the ring buffer */
static void emit_faults_of(struct bpfmaps *m, __u32 key, struct gmt_fault_counts *per_cpu,
			   bool known_only)
{
	struct gmt_faults e;
	__u64 total = 0, classified = 0;
	struct pid_faults *p;
	int cpu, k;

	if (bpf_map_lookup_elem(m->faults_fd, &key, per_cpu))
		return;
	event__init(&e.hdr, GMT_EV_FAULTS, sizeof(e), event__now_ns(), key);
	for (cpu = 0; cpu < m->ncpus; cpu++) {
		total += per_cpu[cpu].total;
		for (k = 0; k < GMT_FAULT_OTHER; k++) {
			e.count[k] += per_cpu[cpu].cls[k];
			e.major[k] += per_cpu[cpu].major[k];
		}
	}
	for (k = 0; k < GMT_FAULT_OTHER; k++)
		classified += e.count[k];
	/* faults no VMA resolved; the two counters are read a moment apart */
	e.count[GMT_FAULT_OTHER] = total > classified ? total - classified : 0;
	HASH_FIND(hh, m->pids, &key, sizeof(key), p);
	if (!p && known_only)
		return;
	if (p && !memcmp(p->sent, e.count, sizeof(e.count)))
		return;
	if (p)
		memcpy(p->sent, e.count, sizeof(e.count));
	emit(m, &e.hdr);
}

void bpfmaps__faults(struct bpfmaps *m)
{
	struct gmt_fault_counts *per_cpu = calloc(m->ncpus, sizeof(*per_cpu));
	__u32 key, next, *prev = NULL;

	if (!per_cpu)
		return;
	while (!bpf_map_get_next_key(m->faults_fd, prev, &next)) {
		key = next;
		prev = &key;
		emit_faults_of(m, key, per_cpu, true);
	}
	free(per_cpu);
}

void bpfmaps__leave(struct bpfmaps *m, __u32 pid)
{
	struct gmt_fault_counts *per_cpu = calloc(m->ncpus, sizeof(*per_cpu));
	struct pid_faults *p;

	/* its last counts, before its exit */
	if (per_cpu)
		emit_faults_of(m, pid, per_cpu, false);
	free(per_cpu);
	bpf_map_delete_elem(m->faults_fd, &pid);
	HASH_FIND(hh, m->pids, &pid, sizeof(pid), p);
	if (p) {
		HASH_DEL(m->pids, p);
		free(p);
	}
	bpf_map_delete_elem(m->code_fd, &pid);
	/* its slot for the last RSS sent: 4,096 children would fill them, and
	 * later ones would send none */
	bpf_map_delete_elem(m->rss_sent_fd, &pid);
}

void bpfmaps__lost(struct bpfmaps *m, const struct drain *d)
{
	__u64 *per_cpu = calloc(m->ncpus, sizeof(__u64));
	struct gmt_lost e;
	__u32 src;
	int cpu;

	if (!per_cpu)
		return;
	event__init(&e.hdr, GMT_EV_LOST, sizeof(e), event__now_ns(), m->target);
	for (src = 0; src < GMT_SRC_NR; src++)
		if (!bpf_map_lookup_elem(m->drops_fd, &src, per_cpu))
			for (cpu = 0; cpu < m->ncpus; cpu++)
				e.count[src] += per_cpu[cpu];
	/* and those the queue behind the kernel's buffer had no room for */
	for (src = 0; src < GMT_SRC_NR; src++)
		e.count[src] += drain__dropped(d, src);
	free(per_cpu);
	if (!memcmp(e.count, m->lost_sent, sizeof(e.count)))
		return;
	memcpy(m->lost_sent, e.count, sizeof(e.count));
	emit(m, &e.hdr);
}
