// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <uthash.h>
#include "collect.h"
#include "drain.h"
#include "procfs.h"
#include "cgroup.h"
#include "gpumemtrace.skel.h"
#include "symbolize.h"
#include "gpulib.h"
#include "nvml.h"
#include "unwind.h"
#include "watch.h"

#define MAX_PIDS 4096
/* distinct stacks named a run: past it, new ones go out without a stack,
 * said once as a probe record */
#define STACKS_MAX 65536
#define SCRATCH_SIZE 65536
#define PENDING_USTACKS 8	      /* threads whose stack slice waits for its record */
#define MAX_UNWIND 64		      /* frames of a stack unwound by CFI */
#define USTACK_MAX_AGE_NS 10000000ull /* a slice is sent within this of its record */
#define MAP_RSS_TICKS 10	      /* smaps is read every this many intervals, and at the end */

struct stack_entry {
	__u32 id;
	__u64 *ips; /* the key: nr of them */
	UT_hash_handle hh;
};

struct pid_state {
	__u32 pid;
	__u64 faults[GMT_FAULT_NR]; /* last sent */
};

struct collect {
	struct attach *a;
	const struct collect_opts *o;
	struct drain *drain; /* the kernel ring buffer, read by its own thread */
	struct symbolizer *sym;
	/* GMT_TEST_USTACK_DUMP: the stack slices as they left the kernel, for
	 * the test that checks what they keep; -1 */
	int ustack_dump;
	struct gpulib *gpu;	    /* NULL when the gpuapi programs did not load */
	struct nvml *nvml;	    /* NULL without an NVIDIA driver */
	struct stack_entry *stacks; /* by their ips (uthash) */
	__u32 next_stack_id;
	__u64 stacks_unnamed;		 /* past STACKS_MAX */
	struct watch *watch;		 /* --watch: which processes to trace */
	struct pid_state pids[MAX_PIDS]; /* the live targets, for samples */
	size_t nr_pids;
	__u64 lost_sent[GMT_SRC_NR];
	int ncpus;
	/* CFI unwinding: the stack slices waiting for the next record of
	 * their thread */
	struct unwinder *unw;
	struct gmt_ustack *pending[PENDING_USTACKS];
	unsigned int next_pending;
	/* 8-byte aligned room to build records in */
	__u64 scratch[SCRATCH_SIZE / 8];
};

static void emit(struct collect *c, const struct gmt_hdr *e)
{
	c->o->sink(c->o->ctx, e);
}

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void add_pid(struct collect *c, __u32 pid)
{
	size_t i;

	for (i = 0; i < c->nr_pids; i++)
		if (c->pids[i].pid == pid)
			return;
	if (c->nr_pids < MAX_PIDS)
		c->pids[c->nr_pids++] = (struct pid_state){ .pid = pid };
}

/* where pid's code lies, for BPF to keep only code and stack addresses of
 * the stacks it sends from faults (gmt_code_ranges) */
/* pid's code, as /proc says it now, to BPF: it sends a stack slice only
 * for a process whose code it knows */
static void push_code(struct collect *c, __u32 pid)
{
	struct gmt_code_ranges r = {};

	if (!attach__redacts(c->a))
		return;
	r.nr = procfs__code_ranges(pid, r.lo, r.hi, GMT_CODE_RANGES);
	if (r.nr)
		bpf_map_update_elem(bpf_map__fd(attach__skel(c->a)->maps.code_ranges), &pid, &r,
				    BPF_ANY);
}

/* On the reader's thread, as new code appears (exec, an executable file
 * mapped, a followed fork): the main loop may come to the record after the
 * process has died (a crash 20 ms after exec had no stack), so /proc is
 * read now, while it lives */
static void code_early(void *ctx, const struct gmt_hdr *e)
{
	const struct gmt_mmap *m = (const void *)e;
	const struct gmt_fork *f = (const void *)e;

	if (e->type == GMT_EV_EXEC || (e->type == GMT_EV_MMAP && e->len >= sizeof(*m) &&
				       (m->prot & 4) && m->fd_class == GMT_FD_FILE))
		push_code(ctx, e->pid);
	else if (e->type == GMT_EV_FORK && e->len >= sizeof(*f) && f->followed)
		push_code(ctx, f->child_pid);
}

static void remove_pid(struct collect *c, __u32 pid)
{
	size_t i;

	for (i = 0; i < c->nr_pids; i++)
		if (c->pids[i].pid == pid) {
			c->pids[i] = c->pids[--c->nr_pids];
			return;
		}
}

/* BPF restarts a process's fault counts at exec */
static void reset_faults_sent(struct collect *c, __u32 pid)
{
	size_t i;

	for (i = 0; i < c->nr_pids; i++)
		if (c->pids[i].pid == pid)
			memset(c->pids[i].faults, 0, sizeof(c->pids[i].faults));
}

static void end_faults(struct collect *c, __u32 pid);

/* a frame-pointer walk that reaches code built without them (Python, most
 * release builds) goes on through stack words: the first address in no code
 * mapping ends the stack (JIT frames end it too); its frames up to there */
static unsigned int fp_frames(struct collect *c, __u32 pid, const __u64 *ips, unsigned int n)
{
	struct sym_result r;
	unsigned int i;

	for (i = 1; i < n; i++)
		if (symbolizer__resolve(c->sym, pid, ips[i], &r) == -ENOENT)
			return i;
	return n;
}

static void emit_stack(struct collect *c, __u32 pid, __u32 id, const __u64 *ips, unsigned int n)
{
	struct gmt_stack *s = (struct gmt_stack *)c->scratch;
	char *names = (char *)s;
	struct sym_result r;
	unsigned int i;
	size_t off;

	n = fp_frames(c, pid, ips, n);
	off = offsetof(struct gmt_stack, frames) + n * sizeof(s->frames[0]);
	for (i = 0; i < n; i++) {
		symbolizer__resolve(c->sym, pid, ips[i], &r);
		s->frames[i].ip = ips[i];
		s->frames[i].sym_off = r.off;
		off += snprintf(names + off, SCRATCH_SIZE - off, "%s", r.name) + 1;
		off += snprintf(names + off, SCRATCH_SIZE - off, "%s", r.module) + 1;
	}
	memset(names + off, 0, round8(off) - off);
	/* event__init would clear the frames: fill the header by hand */
	s->hdr = (struct gmt_hdr){ event__now_ns(), pid,	 pid,
				   GMT_EV_STACK,    round8(off), GMT_USER_CPU };
	s->stack_id = id;
	s->nr_frames = n;
	s->pad = 0;
	emit(c, &s->hdr);
}

static void stacks_full(struct collect *c, __u32 pid)
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
	emit(c, &p.hdr);
}

/* the id of this stack, sending its symbolized record the first time */
static __u32 intern_stack(struct collect *c, __u32 pid, const __u64 *ips, unsigned int n)
{
	struct stack_entry *s;

	HASH_FIND(hh, c->stacks, ips, n * sizeof(*ips), s);
	if (s)
		return s->id;
	if (c->next_stack_id >= STACKS_MAX) {
		if (!c->stacks_unnamed++)
			stacks_full(c, pid);
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
	s->id = ++c->next_stack_id;
	HASH_ADD_KEYPTR(hh, c->stacks, s->ips, n * sizeof(*ips), s);
	emit_stack(c, pid, s->id, ips, n);
	return s->id;
}

/* raw ips from BPF become a stack id: the record goes out without them */
static __u32 stack_of(struct collect *c, __u32 pid, const __u64 *ips, unsigned int nr)
{
	unsigned int n = nr > GMT_MAX_STACK ? GMT_MAX_STACK : nr;

	return n ? intern_stack(c, pid, ips, n) : 0;
}

static void on_mmap(struct collect *c, const struct gmt_mmap *e)
{
	struct gmt_mmap m = *e;

	/* PROT_EXEC from a file: new code to symbolize against (anonymous code,
	 * a JIT's, has no symbols and comes often) */
	if ((e->prot & 4) && e->fd_class == GMT_FD_FILE) {
		symbolizer__refresh(c->sym, e->hdr.pid);
		if (c->unw)
			unwinder__refresh(c->unw, e->hdr.pid);
	}
	m.hdr.len = sizeof(m);
	m.nr_ips = 0;
	if (e->nr_ips)
		m.stack_id = stack_of(c, e->hdr.pid, e->ips, e->nr_ips);
	emit(c, &m.hdr);
}

/* keep a thread's stack slice until its record comes */
static void on_ustack(struct collect *c, const struct gmt_ustack *s)
{
	unsigned int i, k = c->next_pending;

	for (i = 0; i < PENDING_USTACKS; i++)
		if (c->pending[i] && c->pending[i]->hdr.tid == s->hdr.tid) {
			k = i;
			break;
		}
	if (i == PENDING_USTACKS)
		c->next_pending = (k + 1) % PENDING_USTACKS;
	if (!c->pending[k] && !(c->pending[k] = malloc(sizeof(*s))))
		return;
	memcpy(c->pending[k], s, s->hdr.len); /* event__valid: len <= sizeof(*s) */
	if (c->ustack_dump >= 0 && write(c->ustack_dump, s, s->hdr.len) != s->hdr.len) {
		close(c->ustack_dump);
		c->ustack_dump = -1;
	}
}

/* the frames of the record from tid: by CFI from its stack slice when
 * that finds more than the frame pointers did (code built without them
 * stops their walk in its first frame); n: the frame-pointer walk's */
static __u32 unwound_stack_of(struct collect *c, const struct gmt_hdr *e, const __u64 *fp,
			      unsigned int n)
{
	struct gmt_ustack *s = NULL;
	__u64 ips[MAX_UNWIND];
	unsigned int i, k;

	for (i = 0; c->unw && i < PENDING_USTACKS; i++)
		if (c->pending[i] && c->pending[i]->hdr.tid == e->tid &&
		    c->pending[i]->hdr.pid == e->pid) {
			s = c->pending[i];
			s->hdr.tid = 0;
			break;
		}
	/* made just before its record: an older one lost its record (a full
	 * ring buffer) and belongs to no call */
	if (s && s->hdr.ts_ns <= e->ts_ns && e->ts_ns - s->hdr.ts_ns < USTACK_MAX_AGE_NS &&
	    (k = unwinder__unwind(c->unw, s, ips, MAX_UNWIND)) > fp_frames(c, e->pid, fp, n))
		return intern_stack(c, e->pid, ips, k);
	return n ? stack_of(c, e->pid, fp, n) : 0;
}

static void on_gpu_call(struct collect *c, const struct gmt_gpu_call *e)
{
	struct gmt_gpu_call g = *e;

	g.hdr.len = sizeof(g);
	g.nr_ips = 0;
	g.stack_id = unwound_stack_of(c, &e->hdr, e->ips, e->nr_ips);
	emit(c, &g.hdr);
}

/* a sampled first touch: its frames by CFI from the slice sent before it */
static void on_touch(struct collect *c, const struct gmt_touch *e)
{
	struct gmt_touch t = *e;

	t.hdr.len = sizeof(t);
	t.nr_ips = 0;
	t.stack_id = unwound_stack_of(c, &e->hdr, e->ips, e->nr_ips);
	emit(c, &t.hdr);
}

/* a fatal signal: the thread's frames by CFI from the slice sent before it */
static void on_signal(struct collect *c, const struct gmt_signal *e)
{
	struct gmt_signal g = *e;

	g.stack_id = unwound_stack_of(c, &e->hdr, NULL, 0);
	emit(c, &g.hdr);
}

static int on_ring(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;
	const struct gmt_hdr *e = data;

	if (!event__valid(e, size))
		return 0;
	switch (e->type) {
	case GMT_EV_MMAP:
		on_mmap(c, data);
		/* new code: a GPU library dlopen'ed now is probed now */
		if ((((const struct gmt_mmap *)e)->prot & 4) &&
		    ((const struct gmt_mmap *)e)->fd_class == GMT_FD_FILE && c->gpu)
			gpulib__scan(c->gpu, e->pid);
		return 0;
	case GMT_EV_GPU_CALL:
		on_gpu_call(c, data);
		return 0;
	case GMT_EV_TOUCH:
		on_touch(c, data);
		return 0;
	case GMT_EV_USTACK:
		on_ustack(c, data);
		return 0; /* its frames go out with its record */
	case GMT_EV_SIGNAL:
		on_signal(c, data);
		return 0;
	case GMT_EV_EXEC:
		symbolizer__invalidate(c->sym, e->pid);
		symbolizer__refresh(c->sym, e->pid);
		if (c->unw)
			unwinder__refresh(c->unw, e->pid);
		reset_faults_sent(c, e->pid);
		if (c->gpu)
			gpulib__scan(c->gpu, e->pid);
		break;
	case GMT_EV_FORK:
		if (((const struct gmt_fork *)e)->followed) {
			__u32 child = ((const struct gmt_fork *)e)->child_pid;

			/* what was known of an earlier process with this pid
			 * is not this one's */
			symbolizer__invalidate(c->sym, child);
			if (c->unw)
				unwinder__forget(c->unw, child);
			reset_faults_sent(c, child);
			add_pid(c, child);
		}
		break;
	case GMT_EV_EXIT:
		if (((const struct gmt_exit *)e)->group_dead) {
			if (c->watch)
				watch__forget(c->watch, e->pid); /* its pid may come back */
			end_faults(c, e->pid); /* its last counts, before its exit */
			remove_pid(c, e->pid);
			bpf_map_delete_elem(bpf_map__fd(attach__skel(c->a)->maps.code_ranges),
					    &e->pid);
			/* nothing of it is symbolized past its exit */
			symbolizer__invalidate(c->sym, e->pid);
			/* its slot for the last RSS sent: 4,096 children would fill
			 * them, and later ones would send none */
			bpf_map_delete_elem(bpf_map__fd(attach__skel(c->a)->maps.rss_sent),
					    &e->pid);
			if (c->unw)
				unwinder__forget(c->unw, e->pid);
		}
		break;
	}
	emit(c, e);
	return 0;
}

static int read_status(__u32 pid, struct gmt_sample *s)
{
	static const char *keys[GMT_S_NR] = { "VmRSS:",	 "RssAnon:", "RssFile:", "RssShmem:",
					      "VmSwap:", "VmSize:",  "VmHWM:",	 "VmData:" };
	char path[64], line[256];
	unsigned long long v;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	event__init(&s->hdr, GMT_EV_SAMPLE, sizeof(*s), event__now_ns(), pid);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Threads: %llu", &v) == 1)
			s->threads = v;
		for (i = 0; i < GMT_S_NR; i++) {
			size_t k = strlen(keys[i]);

			if (!strncmp(line, keys[i], k) && sscanf(line + k, "%llu", &v) == 1) {
				s->kb[i] = v;
				s->valid |= 1u << i;
			}
		}
	}
	fclose(f);
	/* a zombie has no memory lines left: not a sample */
	return s->valid & (1u << GMT_S_VMRSS) ? 0 : -ESRCH;
}

/* with -p, RSS events only come with changes: start from what /proc says,
 * the same counters rss_stat reads, and send that sample too */
static void emit_rss_baseline(struct collect *c, __u32 pid)
{
	static const struct {
		int member, field;
	} map[] = { { GMT_RSS_FILE, GMT_S_RSSFILE },
		    { GMT_RSS_ANON, GMT_S_RSSANON },
		    { GMT_RSS_SWAP, GMT_S_VMSWAP },
		    { GMT_RSS_SHMEM, GMT_S_RSSSHMEM } };
	struct gmt_sample s;
	struct gmt_rss e;
	size_t i;

	if (read_status(pid, &s))
		return;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (!(s.valid & (1u << map[i].field)))
			continue;
		event__init(&e.hdr, GMT_EV_RSS, sizeof(e), s.hdr.ts_ns, pid);
		e.member = map[i].member;
		e.bytes = s.kb[map[i].field] << 10;
		emit(c, &e.hdr);
	}
	emit(c, &s.hdr);
}

/* the driver's own account, from each DRM client (file) the process holds */
static void emit_drm_fdinfo(struct collect *c, __u32 pid)
{
	char path[300], link[64], name[300], text[4096];
	__u64 seen[16];
	size_t nseen = 0, i;
	struct gmt_drm_fdinfo d;
	struct dirent *de;
	ssize_t n;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/fd/%s", pid, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (strncmp(link, "/dev/dri/", 9))
			continue;
		snprintf(name, sizeof(name), "fdinfo/%s", de->d_name);
		procfs__read(pid, name, text, sizeof(text));
		event__init(&d.hdr, GMT_EV_DRM_FDINFO, sizeof(d), event__now_ns(), pid);
		if (!procfs__parse_drm_fdinfo(text, &d))
			continue;
		/* fds of one client (dup, fork) count once */
		for (i = 0; i < nseen && seen[i] != d.client_id; i++)
			;
		if (i < nseen || nseen == sizeof(seen) / sizeof(seen[0]))
			continue;
		seen[nseen++] = d.client_id;
		d.fd = strtoul(de->d_name, NULL, 10);
		emit(c, &d.hdr);
	}
	if (dir)
		closedir(dir);
}

/* what the host has left, for projections of growth */
static void emit_meminfo(struct collect *c)
{
	static const char *keys[] = { "MemTotal:", "MemAvailable:", "SwapFree:" };
	char line[256];
	struct gmt_meminfo e;
	__u64 *v[] = { &e.total_kb, &e.available_kb, &e.swap_free_kb };
	unsigned long long x;
	size_t i;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return;
	event__init(&e.hdr, GMT_EV_MEMINFO, sizeof(e), event__now_ns(), attach__target(c->a));
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < 3; i++)
			if (!strncmp(line, keys[i], strlen(keys[i])) &&
			    sscanf(line + strlen(keys[i]), "%llu", &x) == 1)
				*v[i] = x;
	fclose(f);
	emit(c, &e.hdr);
}

/* the limit its cgroups set, where one does: growth ends there */
static void emit_mem_limit(struct collect *c, __u32 pid)
{
	struct gmt_mem_limit l;

	event__init(&l.hdr, GMT_EV_MEM_LIMIT, sizeof(l), event__now_ns(), pid);
	if (!cgroup__mem_limit(pid, &l))
		emit(c, &l.hdr);
}

static void emit_samples(struct collect *c)
{
	__u32 pids[MAX_PIDS];
	struct gmt_sample s;
	size_t i;

	for (i = 0; i < c->nr_pids; i++) {
		pids[i] = c->pids[i].pid;
		if (!read_status(c->pids[i].pid, &s))
			emit(c, &s.hdr);
		emit_mem_limit(c, c->pids[i].pid);
		emit_drm_fdinfo(c, c->pids[i].pid);
	}
	emit_meminfo(c);
	if (c->nvml)
		nvml__sample(c->nvml, pids, c->nr_pids, c->o->sink, c->o->ctx);
}

static void start_nvml(struct collect *c)
{
	struct gmt_probe p;

	event__init(&p.hdr, GMT_EV_PROBE, sizeof(p), event__now_ns(), attach__target(c->a));
	snprintf(p.name, sizeof(p.name), "nvml");
	snprintf(p.what, sizeof(p.what), "device memory by process, as the NVIDIA driver counts");
	c->nvml = nvml__start(p.reason, sizeof(p.reason));
	p.status = c->nvml ? GMT_PROBE_ATTACHED : GMT_PROBE_SKIPPED;
	emit(c, &p.hdr);
}

/* page faults are counted in BPF per CPU; send pid's totals if they moved.
 * Each interval only for processes whose fork has been read: a child's
 * counts can be in the map before its fork record is out of the ring buffer */
static void emit_faults_of(struct collect *c, int fd, __u32 key, struct gmt_fault_counts *per_cpu,
			   bool known_only)
{
	struct gmt_faults e;
	__u64 total = 0, classified = 0;
	size_t i;
	int cpu, k;

	if (bpf_map_lookup_elem(fd, &key, per_cpu))
		return;
	event__init(&e.hdr, GMT_EV_FAULTS, sizeof(e), event__now_ns(), key);
	for (cpu = 0; cpu < c->ncpus; cpu++) {
		total += per_cpu[cpu].total;
		for (k = 0; k < GMT_FAULT_OTHER; k++)
			e.count[k] += per_cpu[cpu].cls[k];
	}
	for (k = 0; k < GMT_FAULT_OTHER; k++)
		classified += e.count[k];
	/* faults no VMA resolved; the two counters are read a moment apart */
	e.count[GMT_FAULT_OTHER] = total > classified ? total - classified : 0;
	for (i = 0; i < c->nr_pids && c->pids[i].pid != key; i++)
		;
	if (i == c->nr_pids && known_only)
		return;
	if (i < c->nr_pids && !memcmp(c->pids[i].faults, e.count, sizeof(e.count)))
		return;
	if (i < c->nr_pids)
		memcpy(c->pids[i].faults, e.count, sizeof(e.count));
	emit(c, &e.hdr);
}

static void emit_faults(struct collect *c)
{
	int fd = bpf_map__fd(attach__skel(c->a)->maps.fault_counts);
	struct gmt_fault_counts *per_cpu = calloc(c->ncpus, sizeof(*per_cpu));
	__u32 key, next, *prev = NULL;

	if (!per_cpu)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		emit_faults_of(c, fd, key, per_cpu, true);
	}
	free(per_cpu);
}

/* a process that exited: its last counts go out, and its slot in BPF is
 * freed, so that a day of short-lived children costs nothing per interval */
static void end_faults(struct collect *c, __u32 pid)
{
	int fd = bpf_map__fd(attach__skel(c->a)->maps.fault_counts);
	struct gmt_fault_counts *per_cpu = calloc(c->ncpus, sizeof(*per_cpu));

	if (per_cpu)
		emit_faults_of(c, fd, pid, per_cpu, false);
	free(per_cpu);
	bpf_map_delete_elem(fd, &pid);
}

static void emit_lost(struct collect *c)
{
	int fd = bpf_map__fd(attach__skel(c->a)->maps.drops);
	__u64 *per_cpu = calloc(c->ncpus, sizeof(__u64));
	struct gmt_lost e;
	__u32 src;
	int cpu;

	if (!per_cpu)
		return;
	event__init(&e.hdr, GMT_EV_LOST, sizeof(e), event__now_ns(), attach__target(c->a));
	for (src = 0; src < GMT_SRC_NR; src++)
		if (!bpf_map_lookup_elem(fd, &src, per_cpu))
			for (cpu = 0; cpu < c->ncpus; cpu++)
				e.count[src] += per_cpu[cpu];
	/* and those the queue behind the kernel's buffer had no room for */
	for (src = 0; src < GMT_SRC_NR; src++)
		e.count[src] += drain__dropped(c->drain, src);
	free(per_cpu);
	if (!memcmp(e.count, c->lost_sent, sizeof(e.count)))
		return;
	memcpy(c->lost_sent, e.count, sizeof(e.count));
	emit(c, &e.hdr);
}

static void emit_session(struct collect *c)
{
	const char *cmd = c->o->cmdline ? c->o->cmdline : "";
	size_t n = strnlen(cmd, 4095), len = round8(offsetof(struct gmt_session, cmdline) + n + 1);
	struct gmt_session *s = (struct gmt_session *)c->scratch;
	struct timespec rt;
	struct utsname u;

	event__init(&s->hdr, GMT_EV_SESSION, len, event__now_ns(), attach__target(c->a));
	clock_gettime(CLOCK_REALTIME, &rt);
	s->start_realtime_ns = (__u64)rt.tv_sec * 1000000000ull + rt.tv_nsec;
	s->interval_ms = c->o->interval_s * 1000 + 0.5;
	s->flags = c->o->session_flags;
	s->target_pid = attach__target(c->a);
	s->page_size = sysconf(_SC_PAGESIZE);
	snprintf(s->tool_version, sizeof(s->tool_version), "%s", GMT_VERSION);
	if (!uname(&u)) {
		snprintf(s->kernel, sizeof(s->kernel), "%s", u.release);
		snprintf(s->host, sizeof(s->host), "%s", u.nodename);
		snprintf(s->arch, sizeof(s->arch), "%.15s", u.machine);
	}
	s->cmdline_len = n;
	memcpy(s->cmdline, cmd, n);
	emit(c, &s->hdr);
}

static void emit_proc(struct collect *c, __u32 pid, bool spawned)
{
	struct gmt_proc *p = (struct gmt_proc *)c->scratch;
	char cmdline[4096], status[4096];
	const char *pp;
	ssize_t n;
	size_t len;

	if (spawned) /* main's, redacted */
		snprintf(cmdline, sizeof(cmdline), "%s", c->o->cmdline ? c->o->cmdline : "");
	else
		procfs__redact(cmdline,
			       procfs__read_raw(pid, "cmdline", cmdline, sizeof(cmdline) - 1));
	len = strlen(cmdline);
	event__init(&p->hdr, GMT_EV_PROC, round8(offsetof(struct gmt_proc, cmdline) + len + 1),
		    event__now_ns(), pid);
	p->cmdline_len = len;
	memcpy(p->cmdline, cmdline, len);
	if (spawned) {
		pp = strchr(cmdline, ' ');
		snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(pp ? pp - cmdline : (long)len),
			 cmdline);
		p->ppid = getpid();
		p->uid = getuid();
	} else {
		procfs__read(pid, "comm", p->comm, sizeof(p->comm));
		p->comm[strcspn(p->comm, "\n")] = 0;
		snprintf(status, sizeof(status), "/proc/%u/exe", pid);
		n = readlink(status, p->exe, sizeof(p->exe) - 1);
		if (n > 0)
			p->exe[n] = 0;
		procfs__read(pid, "status", status, sizeof(status));
		pp = strstr(status, "PPid:");
		p->ppid = pp ? strtoul(pp + 5, NULL, 10) : 0;
		pp = strstr(status, "Uid:");
		p->uid = pp ? strtoul(pp + 4, NULL, 10) : 0;
	}
	emit(c, &p->hdr);
}

/* the cgroup v2 line of /proc/PID/cgroup ("0::/path"); a command we start
 * is in ours */
static void emit_cgroup(struct collect *c, __u32 pid)
{
	struct gmt_cgroup *g = (struct gmt_cgroup *)c->scratch;
	char buf[4096], *line;

	procfs__read(pid, "cgroup", buf, sizeof(buf));
	for (line = buf; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (!strncmp(line, "0::", 3))
			break;
	if (!line)
		return;
	event__init(&g->hdr, GMT_EV_CGROUP, sizeof(*g), event__now_ns(), pid);
	snprintf(g->path, sizeof(g->path), "%.*s", (int)strcspn(line + 3, "\n"), line + 3);
	emit(c, &g->hdr);
}

/* the target's memory settings from its environment: ours when we start it */
static void emit_proc_env(struct collect *c, __u32 pid, bool spawned)
{
	struct gmt_proc_env *e = (struct gmt_proc_env *)c->scratch;
	char env[16384], vars[4096];
	size_t n = 0;
	char **v;

	if (spawned) {
		for (v = environ; *v && n < sizeof(env); v++)
			n += snprintf(env + n, sizeof(env) - n, "%s", *v) + 1;
		if (n > sizeof(env))
			n = sizeof(env);
	} else {
		n = procfs__read_raw(pid, "environ", env, sizeof(env));
	}
	n = procfs__settings(env, n, vars, sizeof(vars));
	event__init(&e->hdr, GMT_EV_PROC_ENV, round8(sizeof(*e) + n), event__now_ns(), pid);
	memcpy(e->vars, vars, n);
	e->vars_len = n;
	emit(c, &e->hdr);
}

/* the resident bytes of pid's anonymous areas, from /proc/PID/smaps: what a
 * mapping holds, where its length is only address space (reservations,
 * mappings never touched) */
static void emit_map_rss(struct collect *c, __u32 pid)
{
	struct gmt_map_rss *r = (struct gmt_map_rss *)c->scratch;
	unsigned long long kb;
	__u64 ts = event__now_ns();
	char path[64], line[512];
	struct procfs_map m;
	bool anon = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/smaps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	event__init(&r->hdr, GMT_EV_MAP_RSS, sizeof(*r), ts, pid);
	while (fgets(line, sizeof(line), f)) {
		if (procfs__map_line(line, &m)) {
			/* no inode and no name: anonymous ([heap], [stack] have names) */
			anon = !m.ino && !m.path[0];
			continue;
		}
		if (!anon || sscanf(line, "Rss: %llu kB", &kb) != 1)
			continue;
		r->v[r->nr++] = (struct gmt_map_rss_area){ m.start, m.end, kb << 10 };
		anon = false;
		if (r->nr == GMT_MAP_RSS_MAX) {
			r->hdr.len = sizeof(*r) + r->nr * sizeof(r->v[0]);
			emit(c, &r->hdr);
			event__init(&r->hdr, GMT_EV_MAP_RSS, sizeof(*r), ts, pid);
		}
	}
	fclose(f);
	if (r->nr) {
		r->hdr.len = sizeof(*r) + r->nr * sizeof(r->v[0]);
		emit(c, &r->hdr);
	}
}

static void emit_maps_rss(struct collect *c)
{
	size_t i;

	for (i = 0; i < c->nr_pids; i++)
		emit_map_rss(c, c->pids[i].pid);
}

static void emit_end(struct collect *c, __u32 reason)
{
	struct gmt_end e;

	event__init(&e.hdr, GMT_EV_END, sizeof(e), event__now_ns(), attach__target(c->a));
	e.reason = reason;
	emit(c, &e.hdr);
}

static int make_epoll(struct collect *c, int *sigfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;
	int ep;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	/* blocked and read from a signalfd: no flag races with epoll_wait */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	*sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || *sigfd < 0)
		return -errno;
	ev.data.u32 = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, drain__fd(c->drain), &ev);
	ev.data.u32 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, attach__pidfd(c->a), &ev);
	ev.data.u32 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, *sigfd, &ev);
	if (c->o->ui && c->o->ui_fd >= 0) {
		ev.data.u32 = 3;
		epoll_ctl(ep, EPOLL_CTL_ADD, c->o->ui_fd, &ev);
	}
	if (gpulib__fd(c->gpu) >= 0) {
		ev.data.u32 = 4;
		epoll_ctl(ep, EPOLL_CTL_ADD, gpulib__fd(c->gpu), &ev);
	}
	return ep;
}

/* a fallback for kernels without the mmap tracepoint, and for libraries
 * mapped while the reader was behind */
static void scan_gpu_libs(struct collect *c)
{
	size_t i;

	for (i = 0; c->gpu && i < c->nr_pids; i++)
		gpulib__scan(c->gpu, c->pids[i].pid);
}

/* --watch: a process found to trace joins the targets (BPF's map, which
 * also follows its children), with what -p learns of its target */
static void watch_pid(struct collect *c, __u32 pid)
{
	int fd = bpf_map__fd(attach__skel(c->a)->maps.targets);
	char comm[32];
	__u32 one = 1;

	if (c->nr_pids >= MAX_PIDS ||
	    (bpf_map_update_elem(fd, &pid, &one, BPF_NOEXIST) && errno != EEXIST))
		return;
	add_pid(c, pid);
	emit_rss_baseline(c, pid);
	emit_proc(c, pid, false);
	emit_cgroup(c, pid);
	emit_proc_env(c, pid, false);
	symbolizer__refresh(c->sym, pid);
	push_code(c, pid);
	if (attach__redacts(c->a))
		unwinder__prepare(c->unw, pid);
	if (c->gpu)
		gpulib__scan(c->gpu, pid);
	if (!c->o->quiet) {
		procfs__read(pid, "comm", comm, sizeof(comm));
		comm[strcspn(comm, "\n")] = 0;
		fprintf(stderr, "gpumemtrace: tracing pid %u (%s)\n", pid, comm);
	}
}

static void discover(struct collect *c)
{
	__u32 pids[64];
	size_t i, n;

	if (!c->watch)
		return;
	do {
		n = watch__scan(c->watch, event__now_ns(), pids, 64);
		for (i = 0; i < n; i++)
			watch_pid(c, pids[i]);
	} while (n == 64);
}

static __u64 secs_ns(double s)
{
	return s * 1e9;
}

/* wait for events until the next tick; the END reason once tracing must stop */
static __u32 loop(struct collect *c, int ep, int sigfd)
{
	__u64 now = event__now_ns(), interval = secs_ns(c->o->interval_s);
	__u64 next_tick = now + interval;
	unsigned int ticks = 0;
	__u64 deadline = c->o->duration_s > 0 ? now + secs_ns(c->o->duration_s) : 0;
	struct signalfd_siginfo si;
	struct epoll_event evs[4];
	int i, n, timeout;
	__u64 wake;

	for (;;) {
		/* wake at least every 250 ms so the recorder flushes within a second */
		wake = next_tick < now + 250000000ull ? next_tick : now + 250000000ull;
		if (deadline && deadline < wake)
			wake = deadline;
		timeout = wake > now ? (wake - now + 999999) / 1000000 : 0;
		n = epoll_wait(ep, evs, 4, timeout);
		if (n < 0 && errno != EINTR)
			return GMT_END_ERROR;
		for (i = 0; i < n; i++) {
			if (evs[i].data.u32 == 0)
				drain__run(c->drain);
			else if (evs[i].data.u32 == 1)
				return GMT_END_TARGET_EXIT;
			else if (evs[i].data.u32 == 3)
				continue; /* keys: the view reads them below */
			else if (evs[i].data.u32 == 4)
				gpulib__service(c->gpu);
			else if (read(sigfd, &si, sizeof(si)) == sizeof(si))
				return GMT_END_SIGNAL;
		}
		now = event__now_ns();
		if (deadline && now >= deadline)
			return GMT_END_DURATION;
		if (now >= next_tick) {
			drain__run(c->drain);
			gpulib__service(c->gpu); /* a helper out of time */
			discover(c);
			scan_gpu_libs(c);
			emit_samples(c);
			emit_faults(c);
			emit_lost(c);
			if (!(++ticks % MAP_RSS_TICKS))
				emit_maps_rss(c);
			while (next_tick <= now)
				next_tick += interval;
		}
		if (c->o->tick)
			c->o->tick(c->o->ctx, now);
		if (c->o->ui && c->o->ui(c->o->ctx, now))
			return GMT_END_SIGNAL; /* q in the live view */
	}
}

static void start_gpu(struct collect *c)
{
	struct gpulib_opts go = {
		.pid = attach__target(c->a),
		.tokens = c->o->tokens,
		.all_pids = c->o->session_flags & (GMT_SESSION_FOLLOW | GMT_SESSION_WATCH),
		.quiet = c->o->quiet,
		.enter = attach__skel(c->a)->progs.gpu_enter,
		.ret = attach__skel(c->a)->progs.gpu_return,
		.llama_enter = attach__skel(c->a)->progs.llama_enter,
		.llama_ret = attach__skel(c->a)->progs.llama_return,
		.llama_mark = attach__skel(c->a)->progs.llama_mark,
		.llama_state = attach__skel(c->a)->progs.llama_state,
		.uprobe_multi = attach__uprobe_multi(c->a),
		.sink = c->o->sink,
		.ctx = c->o->ctx,
	};

	c->gpu = gpulib__new(&go);
	if (!c->gpu)
		return;
	attach__adopt_gpulib(c->a, c->gpu);
	/* a started command has not run yet: what it maps comes with its mmaps */
	if (!c->o->spawned) {
		gpulib__scan(c->gpu, go.pid);
		/* its drivers probed before tracing is said to have begun */
		gpulib__drain(c->gpu);
	}
	gpulib__preattach(c->gpu);
	gpulib__summary(c->gpu);
}

static void free_stacks(struct collect *c)
{
	struct stack_entry *s, *t;

	HASH_ITER(hh, c->stacks, s, t)
	{
		HASH_DEL(c->stacks, s);
		free(s->ips);
		free(s);
	}
}

int collect__run(struct attach *a, const struct collect_opts *o, char *err, size_t size)
{
	struct collect *c = calloc(1, sizeof(*c));
	size_t nr_probes, i;
	const struct gmt_probe *probes = attach__probes(a, &nr_probes);
	int ep = -1, sigfd = -1, ret = 0;
	struct gmt_probe p;
	__u32 reason;

	if (!c) {
		snprintf(err, size, "out of memory");
		return -ENOMEM;
	}
	c->a = a;
	c->o = o;
	c->ncpus = libbpf_num_possible_cpus();
	c->sym = symbolizer__new(o->debug_dir);
	c->ustack_dump = -1;
	if (getenv("GMT_TEST_USTACK_DUMP"))
		c->ustack_dump = open(getenv("GMT_TEST_USTACK_DUMP"),
				      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	c->unw = unwinder__new(c->sym);
	c->drain = drain__new(bpf_map__fd(attach__skel(a)->maps.events), on_ring, c);
	if (c->drain)
		drain__set_early(c->drain, code_early, c);
	if (!c->drain || !c->sym || c->ncpus <= 0) {
		snprintf(err, size, "setting up the ring buffer failed: %s", strerror(errno));
		ret = -EIO;
		goto out;
	}
	if (!o->watch) {
		add_pid(c, attach__target(a));
		push_code(c, attach__target(a));
	}
	emit_session(c);
	for (i = 0; i < nr_probes; i++) {
		p = probes[i];
		p.hdr.ts_ns = event__now_ns();
		p.hdr.pid = p.hdr.tid = attach__target(a);
		emit(c, &p.hdr);
	}
	/* the baseline first: the process's timeline starts at its first record;
	 * a started command has nothing to sample before its exec */
	if (!o->watch) {
		if (!o->spawned)
			emit_rss_baseline(c, attach__target(a));
		emit_proc(c, attach__target(a), o->spawned);
		emit_cgroup(c, attach__target(a));
		emit_proc_env(c, attach__target(a), o->spawned);
		if (!o->spawned) {
			symbolizer__refresh(c->sym, attach__target(a));
			if (attach__redacts(a))
				unwinder__prepare(c->unw, attach__target(a));
		}
	} else if (!(c->watch = watch__new(o->comms, o->nr_comms, getpid()))) {
		snprintf(err, size, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	if (attach__gpu_ready(a))
		start_gpu(c);
	discover(c);
	start_nvml(c);
	ep = make_epoll(c, &sigfd);
	if (ep < 0) {
		snprintf(err, size, "epoll: %s", strerror(-ep));
		ret = ep;
		goto out;
	}
	ret = attach__release(a, err, size);
	if (ret) {
		drain__run(c->drain);
		emit_end(c, GMT_END_ERROR);
		goto out;
	}
	if (!o->quiet && !o->watch)
		fprintf(stderr, "gpumemtrace: tracing pid %d; Ctrl-C to stop\n", attach__target(a));
	else if (!o->quiet)
		fprintf(stderr, "gpumemtrace: watching for GPU processes%s; Ctrl-C to stop\n",
			o->nr_comms ? " and those named with --comm" : "");
	ret = drain__start(c->drain);
	if (ret) {
		snprintf(err, size, "starting the ring buffer's reader: %s", strerror(-ret));
		drain__run(c->drain);
		emit_end(c, GMT_END_ERROR);
		goto out;
	}
	reason = loop(c, ep, sigfd);
	attach__stop(a);
	drain__stop(c->drain);
	if (reason == GMT_END_TARGET_EXIT && !o->quiet)
		fprintf(stderr, "gpumemtrace: pid %d exited; finishing the report\n",
			attach__target(a));
	drain__run(c->drain);
	/* the drivers still being asked: their devices and probes go in */
	gpulib__drain(c->gpu);
	drain__run(c->drain);
	if (reason != GMT_END_TARGET_EXIT) {
		emit_samples(c);
		emit_maps_rss(c);
	}
	emit_faults(c);
	emit_lost(c);
	emit_end(c, reason);
out:
	if (ep >= 0)
		close(ep);
	if (sigfd >= 0)
		close(sigfd);
	nvml__stop(c->nvml);
	drain__free(c->drain);
	symbolizer__free(c->sym);
	unwinder__free(c->unw);
	if (c->ustack_dump >= 0)
		close(c->ustack_dump);
	for (i = 0; i < PENDING_USTACKS; i++)
		free(c->pending[i]);
	free_stacks(c);
	watch__free(c->watch);
	free(c);
	return ret;
}
