// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* processes, memory series and mappings built from the event stream */
#include <stdlib.h>
#include <string.h>
#include "model_int.h"
#include "common/fmt.h"
#include "common/search.h"

#define MAX_ERRNO 4095

/* the model's names number what the wire format numbers the same way: the
 * one place that says so (model.h) */
#define SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " is " #b)
SAME(MODEL_GPU_TYPE_INTEGRATED, GMT_GPU_TYPE_INTEGRATED);
SAME(MODEL_GPU_TYPE_CPU, GMT_GPU_TYPE_CPU);
SAME(MODEL_COMM_LEN, GMT_COMM_LEN);
SAME(MODEL_PATH_LEN, GMT_PATH_LEN);
SAME(MODEL_POD_NAME_LEN, GMT_POD_NAME_LEN);
SAME(MODEL_POD_NS_LEN, GMT_POD_NS_LEN);
SAME(MODEL_POD_FROM_NODE, GMT_POD_FROM_NODE);
SAME(MODEL_POD_FROM_ENV, GMT_POD_FROM_ENV);
SAME(MODEL_DECODE_SEQS, GMT_DECODE_SEQS);
SAME(MODEL_NVML_CLOCK, GMT_NVML_CLOCK);
SAME(MODEL_NVML_REASONS, GMT_NVML_REASONS);
SAME(MODEL_NVML_SLOWING, GMT_NVML_SW_POWER_CAP | GMT_NVML_HW_SLOWDOWN | GMT_NVML_SW_THERMAL |
				 GMT_NVML_HW_THERMAL | GMT_NVML_HW_POWER_BRAKE);
SAME(MODEL_API_VK, GMT_API_VK);
SAME(MODEL_API_CU, GMT_API_CU);
SAME(MODEL_API_HIP, GMT_API_HIP);
SAME(MODEL_API_NR, GMT_API_NR);
SAME(MODEL_KIND_DEVICE, GMT_GK_DEVICE);
SAME(MODEL_KIND_HOST, GMT_GK_HOST);
SAME(MODEL_KIND_MANAGED, GMT_GK_MANAGED);
SAME(MODEL_KIND_VMM_PHYS, GMT_GK_VMM_PHYS);
SAME(MODEL_KIND_VMM_MAP, GMT_GK_VMM_MAP);
SAME(MODEL_KIND_VA_RESERVE, GMT_GK_VA_RESERVE);
SAME(MODEL_KIND_GRAPH_EXEC, GMT_GK_GRAPH_EXEC);
SAME(MODEL_KIND_VK_MEMORY, GMT_GK_VK_MEMORY);
SAME(MODEL_KIND_NR, GMT_GK_NR);
SAME(MODEL_RSS_FILE, GMT_RSS_FILE);
SAME(MODEL_RSS_ANON, GMT_RSS_ANON);
SAME(MODEL_RSS_SWAP, GMT_RSS_SWAP);
SAME(MODEL_RSS_SHMEM, GMT_RSS_SHMEM);
SAME(MODEL_RSS_NR, GMT_RSS_NR);
SAME(MODEL_LIMIT_V1_HARD, GMT_MEM_LIMIT_V1_HARD);
SAME(MODEL_LIMIT_V2_MAX, GMT_MEM_LIMIT_V2_MAX);
SAME(MODEL_LIMIT_V2_HIGH, GMT_MEM_LIMIT_V2_HIGH);
SAME(MODEL_NO_LIMIT, GMT_MEM_NO_LIMIT);
SAME(MODEL_FAULT_ANON, GMT_FAULT_ANON);
SAME(MODEL_FAULT_FILE, GMT_FAULT_FILE);
SAME(MODEL_FAULT_DEVICE, GMT_FAULT_DEVICE);
SAME(MODEL_FAULT_OTHER, GMT_FAULT_OTHER);
SAME(MODEL_FAULT_NR, GMT_FAULT_NR);
SAME(MODEL_FD_ANON, GMT_FD_ANON);
SAME(MODEL_FD_FILE, GMT_FD_FILE);
SAME(MODEL_FD_DEVICE, GMT_FD_DEVICE);
SAME(MODEL_FD_OTHER, GMT_FD_OTHER);
SAME(MODEL_ST_VMRSS, GMT_S_VMRSS);
SAME(MODEL_ST_RSSANON, GMT_S_RSSANON);
SAME(MODEL_ST_RSSFILE, GMT_S_RSSFILE);
SAME(MODEL_ST_RSSSHMEM, GMT_S_RSSSHMEM);
SAME(MODEL_ST_VMSWAP, GMT_S_VMSWAP);
SAME(MODEL_ST_VMSIZE, GMT_S_VMSIZE);
SAME(MODEL_ST_VMHWM, GMT_S_VMHWM);
SAME(MODEL_ST_VMDATA, GMT_S_VMDATA);
SAME(MODEL_ST_NR, GMT_S_NR);
SAME(MODEL_DRM_VRAM_TOTAL, GMT_DRM_VRAM_TOTAL);
SAME(MODEL_DRM_VRAM_RESIDENT, GMT_DRM_VRAM_RESIDENT);
SAME(MODEL_DRM_GTT_TOTAL, GMT_DRM_GTT_TOTAL);
SAME(MODEL_DRM_GTT_RESIDENT, GMT_DRM_GTT_RESIDENT);
SAME(MODEL_DRM_CPU_TOTAL, GMT_DRM_CPU_TOTAL);
SAME(MODEL_DRM_CPU_RESIDENT, GMT_DRM_CPU_RESIDENT);
SAME(MODEL_DRM_EVICTED_VRAM, GMT_DRM_EVICTED_VRAM);
SAME(MODEL_DRM_NR, GMT_DRM_NR);
SAME(MODEL_PL_NONE, GMT_PL_NONE);
SAME(MODEL_PL_SYSTEM, GMT_PL_SYSTEM);
SAME(MODEL_PL_TT, GMT_PL_TT);
SAME(MODEL_PL_VRAM, GMT_PL_VRAM);
SAME(MODEL_PROBE_ATTACHED, GMT_PROBE_ATTACHED);
SAME(MODEL_PROBE_SKIPPED, GMT_PROBE_SKIPPED);
SAME(MODEL_PROBE_FAILED, GMT_PROBE_FAILED);
SAME(MODEL_JOIN_EXEC, GMT_JOIN_EXEC);
SAME(MODEL_JOIN_MAP, GMT_JOIN_MAP);
SAME(MODEL_JOIN_SCAN, GMT_JOIN_SCAN);
SAME(MODEL_JOIN_LATE, GMT_JOIN_LATE);
SAME(MODEL_JOIN_PID, GMT_JOIN_PID);
SAME(MODEL_JOIN_COMMAND, GMT_JOIN_COMMAND);
SAME(MODEL_END_TARGET_EXIT, GMT_END_TARGET_EXIT);
SAME(MODEL_END_SIGNAL, GMT_END_SIGNAL);
SAME(MODEL_END_DURATION, GMT_END_DURATION);
SAME(MODEL_END_ERROR, GMT_END_ERROR);
SAME(MODEL_SRC_PROC, GMT_SRC_PROC);
SAME(MODEL_SRC_RSS, GMT_SRC_RSS);
SAME(MODEL_SRC_FAULT, GMT_SRC_FAULT);
SAME(MODEL_SRC_MMAP, GMT_SRC_MMAP);
SAME(MODEL_SRC_GPU, GMT_SRC_GPU);
SAME(MODEL_SRC_BO, GMT_SRC_BO);
SAME(MODEL_SRC_HTTP, GMT_SRC_HTTP);
SAME(MODEL_SRC_DECODE, GMT_SRC_DECODE);
SAME(MODEL_SRC_NR, GMT_SRC_NR);
SAME(MODEL_HTTP_END_LENGTH, GMT_HTTP_END_LENGTH);
SAME(MODEL_HTTP_END_CHUNKED, GMT_HTTP_END_CHUNKED);
SAME(MODEL_HTTP_END_CLOSE, GMT_HTTP_END_CLOSE);
SAME(MODEL_HTTP_END_NEXT, GMT_HTTP_END_NEXT);
SAME(MODEL_SRV_PROMPT_N, GMT_TM_PROMPT_N);
SAME(MODEL_SRV_PREDICTED_N, GMT_TM_PREDICTED_N);
SAME(MODEL_SRV_CACHE_N, GMT_TM_CACHE_N);
SAME(MODEL_SRV_PROMPT_MS, GMT_TM_PROMPT_MS);
SAME(MODEL_SRV_PREDICTED_MS, GMT_TM_PREDICTED_MS);
SAME(MODEL_SRV_INDEX, GMT_TM_INDEX);
SAME(MODEL_DEC_DECODE, GMT_DEC_DECODE);
SAME(MODEL_DEC_ENCODE, GMT_DEC_ENCODE);
SAME(MODEL_DEC_IMAGE, GMT_DEC_IMAGE);
SAME(MODEL_DEC_IMAGE_EVAL, GMT_DEC_IMAGE_EVAL);
SAME(MODEL_MEM_TYPES, GMT_MAX_MEM_TYPES);
SAME(MODEL_MEM_HEAPS, GMT_MAX_MEM_HEAPS);

struct live_range {
	__u64 start, end;
	size_t map; /* index into model_proc.maps */
};

int model__grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* values from a file are untrusted: held where sums and differences of a
 * few dozen of them cannot overflow (64 PiB is more than any machine has) */
#define SERIES_ABS_MAX (1ll << 56)

/* every other point goes, the first and the last stay; later points come at
 * the density that is left */
static void series_thin(struct series *s)
{
	size_t i, k = 1;

	for (i = 2; i < s->n; i += 2)
		s->p[k++] = s->p[i];
	if (!(s->n & 1))
		s->p[k++] = s->p[s->n - 1];
	s->n = k;
	if ((s->p[k - 1].ts - s->p[0].ts) / k > s->gap_ns)
		s->gap_ns = (s->p[k - 1].ts - s->p[0].ts) / k;
}

/* One appender for every series. A point at the last one's time replaces
 * it; with a step, at most two points per step: the last one moves forward,
 * so a level read at any moment never holds a later change. */
void series__add(struct series *s, __u64 ts, __s64 v, __u64 step_ns)
{
	v = v > SERIES_ABS_MAX ? SERIES_ABS_MAX : v < -SERIES_ABS_MAX ? -SERIES_ABS_MAX : v;
	if (v > s->peak)
		s->peak = v;
	if (step_ns < s->gap_ns)
		step_ns = s->gap_ns;
	if (s->n && s->p[s->n - 1].ts == ts) {
		s->p[s->n - 1].v = v;
		return;
	}
	if (s->n >= 2 && ts < s->p[s->n - 2].ts + step_ns) {
		s->p[s->n - 1] = (struct series_point){ ts, v };
		return;
	}
	if (s->n >= SERIES_MAX)
		series_thin(s);
	if (model__grow((void **)&s->p, &s->cap, s->n, sizeof(*s->p)))
		return;
	s->p[s->n++] = (struct series_point){ ts, v };
}

size_t series__after(const struct series *s, __u64 ts)
{
	/* points arrive in stream order; timestamps may step back by a few
	 * microseconds across CPUs, which does not matter at report scale */
	return search__after(s->p, s->n, sizeof(*s->p), offsetof(struct series_point, ts), ts);
}

bool series__at(const struct series *s, __u64 ts, __s64 *v)
{
	size_t lo = series__after(s, ts);

	if (!lo)
		return false;
	*v = s->p[lo - 1].v;
	return true;
}

__s64 series__peak(const struct series *s)
{
	return s->peak;
}

/* copy a fixed-size field that a damaged file may leave unterminated */
/* what a traced process named, as printable UTF-8 (fmt_clean) */
static void copy_str(char *dst, size_t dsize, const char *src, size_t ssize)
{
	fmt_clean(dst, dsize, src, ssize);
}

static char *dup_tail(const char *src, size_t len)
{
	char *s = malloc(len * 3 + 1); /* a byte may become U+FFFD's three */

	if (!s)
		return NULL;
	fmt_clean(s, len * 3 + 1, src, len);
	return s;
}

struct model *model__new(void)
{
	return calloc(1, sizeof(struct model));
}

struct model_proc *model__proc(const struct model *m, __u32 pid)
{
	struct model_proc *p;

	HASH_FIND(hh, m->by_pid, &pid, sizeof(pid), p);
	return p;
}

static struct model_proc *get_proc(struct model *m, __u32 pid, __u64 ts)
{
	struct model_proc *p = model__proc(m, pid);

	if (p)
		return p;
	if (model__grow((void **)&m->procs, &m->procs_cap, m->nr_procs, sizeof(*m->procs)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->first_ts = ts;
	p->threads = p->threads_peak = 1;
	m->procs[m->nr_procs++] = p;
	HASH_ADD(hh, m->by_pid, pid, sizeof(p->pid), p);
	return p;
}

const struct model_stack *model__stack(const struct model *m, __u32 id)
{
	struct model_stack *s;

	HASH_FIND(hh, m->by_id, &id, sizeof(id), s);
	return s;
}

const struct model_module *model__module(const struct model *m, const char *name)
{
	struct model_module *x;

	HASH_FIND_STR(m->modules, name, x);
	return x;
}

/* the first record of a name wins (two files of one name: the first
 * process's); a build id that is not hex is left out */
static void on_module(struct model *m, const struct gmt_module *e)
{
	struct model_module *x;
	size_t i;

	if (model__module(m, e->name) || m->nr_modules >= MODEL_MODULES_MAX ||
	    !(x = calloc(1, sizeof(*x))))
		return;
	memcpy(x->name, e->name, sizeof(x->name));
	memcpy(x->build_id, e->build_id, sizeof(x->build_id));
	for (i = 0; x->build_id[i]; i++)
		if (!strchr("0123456789abcdef", x->build_id[i])) {
			x->build_id[0] = 0;
			break;
		}
	x->text_off = e->text_off;
	x->text_vaddr = e->text_vaddr;
	x->text_size = e->text_size;
	HASH_ADD_STR(m->modules, name, x);
	m->nr_modules++;
}

double model__secs(const struct model *m, __u64 ts)
{
	return ts > m->start_ts ? (ts - m->start_ts) / 1e9 : 0.0;
}

__u64 model__duration_ns(const struct model *m)
{
	__u64 end = m->end_ts ? m->end_ts : m->last_ts;

	return end > m->start_ts ? end - m->start_ts : 0;
}

static void on_session(struct model *m, const struct gmt_session *s)
{
	m->have_session = true;
	m->start_ts = s->hdr.ts_ns;
	m->start_realtime_ns = s->start_realtime_ns;
	m->interval_ms = s->interval_ms;
	m->flags = s->flags;
	m->follow = s->flags & GMT_SESSION_FOLLOW;
	m->all_bos = s->flags & GMT_SESSION_ALL_BOS;
	m->watch = s->flags & GMT_SESSION_WATCH;
	m->target_pid = s->target_pid;
	m->page_size = s->page_size;
	copy_str(m->tool_version, sizeof(m->tool_version), s->tool_version,
		 sizeof(s->tool_version));
	copy_str(m->kernel, sizeof(m->kernel), s->kernel, sizeof(s->kernel));
	copy_str(m->host, sizeof(m->host), s->host, sizeof(s->host));
	copy_str(m->arch, sizeof(m->arch), s->arch, sizeof(s->arch));
	free(m->cmdline);
	m->cmdline = dup_tail(s->cmdline, strnlen(s->cmdline, s->cmdline_len));
}

static void on_probe(struct model *m, const struct gmt_probe *e)
{
	struct model_probe *p;

	if (model__grow((void **)&m->probes, &m->probes_cap, m->nr_probes, sizeof(*m->probes)))
		return;
	p = &m->probes[m->nr_probes++];
	p->status = e->status;
	copy_str(p->name, sizeof(p->name), e->name, sizeof(e->name));
	copy_str(p->what, sizeof(p->what), e->what, sizeof(e->what));
	copy_str(p->reason, sizeof(p->reason), e->reason, sizeof(e->reason));
}

static void on_proc(struct model_proc *p, const struct gmt_proc *e)
{
	p->ppid = e->ppid;
	/* read from /proc after it was found: a process gone by then is named
	 * by its exec or JOIN record */
	if (e->comm[0])
		copy_str(p->comm, sizeof(p->comm), e->comm, sizeof(e->comm));
	if (e->exe[0])
		copy_str(p->exe, sizeof(p->exe), e->exe, sizeof(e->exe));
	free(p->cmdline);
	p->cmdline = dup_tail(e->cmdline, strnlen(e->cmdline, e->cmdline_len));
}

/* the resident bytes of the mappings made while traced, from one record of
 * an smaps snapshot: each area's bytes shared by the mappings in it, by
 * their overlap (adjacent mappings merge into one area) */
static void on_map_rss(struct model_proc *p, const struct gmt_map_rss *e)
{
	__u64 lo, hi, from, to, share;
	size_t i;
	__u32 k;

	if (!e->nr)
		return;
	lo = e->v[0].start;
	hi = e->v[e->nr - 1].end;
	for (i = 0; i < p->nr_maps; i++) {
		struct model_mapping *mp = &p->maps[i];

		if (mp->gone_ts || mp->fd_class != MODEL_FD_ANON || mp->addr >= hi ||
		    mp->addr + mp->len <= lo)
			continue;
		/* a snapshot's records share its time: the first one starts over */
		if (mp->resident_ts != e->hdr.ts_ns)
			mp->resident = 0;
		mp->resident_ts = e->hdr.ts_ns;
		for (k = 0; k < e->nr; k++) {
			const struct gmt_map_rss_area *a = &e->v[k];

			from = a->start > mp->addr ? a->start : mp->addr;
			to = a->end < mp->addr + mp->len ? a->end : mp->addr + mp->len;
			if (to <= from || a->end <= a->start)
				continue;
			share = (__u64)((double)a->rss * (to - from) / (a->end - a->start));
			mp->resident += share;
		}
	}
}

static void on_proc_env(struct model_proc *p, const struct gmt_proc_env *e)
{
	free(p->env);
	p->env = dup_tail(e->vars, e->vars_len);
	p->env_len = p->env ? e->vars_len : 0;
}

/* memory figures restart with the new program; the old image's are gone */
static void reset_memory(struct model_proc *p)
{
	int i;

	for (i = 0; i < MODEL_RSS_NR; i++)
		p->rss[i].n = 0;
	p->anon_swap.n = 0;
	p->vmrss.n = 0;
	p->nr_samples = 0;
	p->vmrss_peak = 0;
	memset(p->faults, 0, sizeof(p->faults));
	memset(p->fault_peak_rate, 0, sizeof(p->fault_peak_rate));
	p->faults_all = 0;
	p->faults_all_peak_rate = 0;
	p->faults_ts = 0;
	p->nr_maps = p->nr_ranges = 0;
	p->maps_made = p->maps_summarized = p->maps_summarized_bytes = p->maps_gone = 0;
	p->mmap_calls = p->mmap_failed = p->munmap_calls = p->mremap_calls = p->brk_calls = 0;
	p->brk_seen = false;
}

static void on_exec(struct model_proc *p, const struct gmt_exec *e)
{
	reset_memory(p);
	p->threads = 1; /* exec leaves one thread */
	copy_str(p->comm, sizeof(p->comm), e->comm, sizeof(e->comm));
	copy_str(p->exe, sizeof(p->exe), e->filename, sizeof(e->filename));
	/* the command line read before (at its fork: its parent's) is not
	 * this program's; a PROC record read after says the new one */
	free(p->cmdline);
	p->cmdline = NULL;
	p->exec_ts = e->hdr.ts_ns;
}

/* how it came to be traced: the first record says (BPF's and the
 * /proc scan's may both come; the earlier is when tracing began). A pid
 * that exited before is a new process now, as at a fork. */
static void on_join(struct model *m, const struct gmt_join *e)
{
	struct model_proc *p = model__proc(m, e->hdr.pid);

	if (p && p->exited && e->hdr.ts_ns > p->exit_ts) {
		HASH_DEL(m->by_pid, p);
		m->pids_reused++;
	}
	p = get_proc(m, e->hdr.pid, e->hdr.ts_ns);
	if (!p || (p->traced_ts && p->traced_ts <= e->hdr.ts_ns))
		return;
	p->join = e->how >= MODEL_JOIN_EXEC && e->how <= MODEL_JOIN_COMMAND ? e->how : 0;
	p->traced_ts = e->hdr.ts_ns;
	p->start_ts = e->start_ns;
	copy_str(p->join_what, sizeof(p->join_what), e->what, sizeof(e->what));
	if (!p->comm[0])
		copy_str(p->comm, sizeof(p->comm), e->comm, sizeof(e->comm));
}

static void on_fork(struct model *m, struct model_proc *p, const struct gmt_fork *e)
{
	struct model_proc *c;

	if (e->is_thread) {
		p->threads_created++;
		if (++p->threads > p->threads_peak)
			p->threads_peak = p->threads;
		return;
	}
	p->children++;
	if (!e->followed)
		return;
	p->children_followed++;
	/* a pid seen before is a new process now (the old one exited, or its
	 * exit was lost): it starts afresh, the old one stays in the report */
	c = model__proc(m, e->child_pid);
	if (c) {
		if (!c->exited) {
			c->exited = true;
			c->exit_ts = e->hdr.ts_ns;
		}
		HASH_DEL(m->by_pid, c);
		m->pids_reused++;
	}
	c = get_proc(m, e->child_pid, e->hdr.ts_ns);
	if (!c)
		return;
	c->ppid = p->pid;
	c->followed = true;
	c->join = MODEL_JOIN_FORK;
	c->start_ts = c->traced_ts = e->hdr.ts_ns;
	copy_str(c->comm, sizeof(c->comm), e->comm, sizeof(e->comm));
	memcpy(c->exe, p->exe, sizeof(c->exe));
	memcpy(c->cgroup, p->cgroup, sizeof(c->cgroup)); /* a child starts in its parent's */
	c->container = p->container;
}

/* its cgroup, the container that names, and what the host told of it */
static void on_cgroup(struct model_proc *p, const struct gmt_cgroup *g)
{
	struct container ct;

	copy_str(p->cgroup, sizeof(p->cgroup), g->path, GMT_PATH_LEN);
	memset(&p->container, 0, sizeof(p->container));
	p->ns_pid = 0;
	if (container__parse(p->cgroup, &ct)) {
		memcpy(p->container.id, ct.id, sizeof(ct.id));
		memcpy(p->container.pod_uid, ct.pod_uid, sizeof(ct.pod_uid));
		p->container.runtime = ct.runtime;
	}
	if (g->hdr.len < sizeof(*g)) /* recorded before these fields */
		return;
	p->ns_pid = g->ns_pid;
	if (!p->container.pod_uid[0] ||
	    (g->pod_from != GMT_POD_FROM_NODE && g->pod_from != GMT_POD_FROM_ENV))
		return;
	p->container.pod_from = g->pod_from;
	copy_str(p->container.pod, sizeof(p->container.pod), g->pod, sizeof(g->pod));
	copy_str(p->container.pod_ns, sizeof(p->container.pod_ns), g->pod_ns, sizeof(g->pod_ns));
}

static void on_proc_exit(struct model_proc *p, const struct gmt_exit *e)
{
	if (p->threads > 0)
		p->threads--;
	if (!e->group_dead)
		return;
	p->exited = true;
	p->exit_ts = e->hdr.ts_ns;
	p->exit_code = e->exit_code;
	model_req__flush(p, e->hdr.ts_ns);
}

static void on_sample(struct model_proc *p, const struct gmt_sample *e)
{
	__u64 rss = e->kb[MODEL_ST_VMRSS] << 10;

	model_req__idle(p, e->hdr.ts_ns);
	struct model_sample x = { .ts = e->hdr.ts_ns, .valid = e->valid, .threads = e->threads };

	memcpy(x.kb, e->kb, sizeof(x.kb));
	if (!p->nr_samples++)
		p->first_sample = x;
	p->last_sample = x;
	if (e->valid & (1u << MODEL_ST_VMRSS)) {
		series__add(&p->vmrss, e->hdr.ts_ns, rss, 0);
		if (rss > p->vmrss_peak)
			p->vmrss_peak = rss;
	}
	/* the sample is the truth for the thread count; forks and exits move it between */
	p->threads = e->threads;
	if (p->threads > p->threads_peak)
		p->threads_peak = p->threads;
}

static void on_faults(struct model_proc *p, const struct gmt_faults *e)
{
	/* counting starts at attach, or afresh at exec */
	__u64 since = p->faults_ts ? p->faults_ts : (p->exec_ts ? p->exec_ts : p->first_ts);
	double secs = e->hdr.ts_ns > since ? (e->hdr.ts_ns - since) / 1e9 : 0;
	__u64 all = 0;
	int i;

	for (i = 0; i < MODEL_FAULT_NR; i++)
		all += e->count[i];
	if (secs > 0 && all >= p->faults_all &&
	    (all - p->faults_all) / secs > p->faults_all_peak_rate)
		p->faults_all_peak_rate = (all - p->faults_all) / secs;
	p->faults_all = all;
	/* major ones by class: in records from the fexit's kernels on */
	if (e->hdr.len >= sizeof(*e)) {
		memcpy(p->faults_major, e->major, sizeof(p->faults_major));
		series__add(&p->major_file, e->hdr.ts_ns,
			    e->major[MODEL_FAULT_FILE] > (1ull << 55) ?
				    1ll << 55 :
				    (__s64)e->major[MODEL_FAULT_FILE],
			    0);
		series__add(&p->major_anon, e->hdr.ts_ns,
			    e->major[MODEL_FAULT_ANON] > (1ull << 55) ?
				    1ll << 55 :
				    (__s64)e->major[MODEL_FAULT_ANON],
			    0);
	}
	for (i = 0; i < MODEL_FAULT_NR; i++) {
		if (secs > 0 && e->count[i] >= p->faults[i]) {
			double rate = (e->count[i] - p->faults[i]) / secs;

			if (rate > p->fault_peak_rate[i])
				p->fault_peak_rate[i] = rate;
		}
		p->faults[i] = e->count[i];
	}
	p->faults_ts = e->hdr.ts_ns;
}

/* live ranges: remove [start, end) from whatever run-made mappings hold it */
static void unmap_range(struct model_proc *p, __u64 start, __u64 end, __u64 ts)
{
	size_t i = 0;

	while (i < p->nr_ranges) {
		struct live_range *r = &p->ranges[i];
		struct model_mapping *mp = &p->maps[r->map];
		__u64 lo = r->start > start ? r->start : start;
		__u64 hi = r->end < end ? r->end : end;

		if (lo >= hi) {
			i++;
			continue;
		}
		mp->live -= hi - lo;
		if (!mp->live) {
			mp->gone_ts = ts;
			p->maps_gone++;
		}
		if (r->start < lo && r->end > hi) {
			/* a hole in the middle: split */
			struct live_range tail = { hi, r->end, r->map };

			r->end = lo;
			if (model__grow((void **)&p->ranges, &p->ranges_cap, p->nr_ranges,
					sizeof(*p->ranges)))
				return;
			memmove(&p->ranges[i + 2], &p->ranges[i + 1],
				(p->nr_ranges - i - 1) * sizeof(*p->ranges));
			p->ranges[i + 1] = tail;
			p->nr_ranges++;
			return;
		}
		if (r->start < lo) {
			r->end = lo;
			i++;
		} else if (r->end > hi) {
			r->start = hi;
			i++;
		} else {
			memmove(r, r + 1, (p->nr_ranges - i - 1) * sizeof(*r));
			p->nr_ranges--;
		}
	}
}

static void map_range(struct model_proc *p, __u64 start, __u64 len, size_t map)
{
	size_t i = 0;

	if (model__grow((void **)&p->ranges, &p->ranges_cap, p->nr_ranges, sizeof(*p->ranges)))
		return;
	while (i < p->nr_ranges && p->ranges[i].start < start)
		i++;
	memmove(&p->ranges[i + 1], &p->ranges[i], (p->nr_ranges - i) * sizeof(*p->ranges));
	p->ranges[i] = (struct live_range){ start, start + len, map };
	p->nr_ranges++;
	p->maps[map].live += len;
}

static __u64 page_up(__u64 len, __u64 page_size)
{
	if (!page_size)
		page_size = 4096;
	return (len + page_size - 1) & ~(page_size - 1);
}

static bool is_err(__u64 ret)
{
	return ret >= (__u64)-MAX_ERRNO;
}

/* drop the mappings wholly unmapped, keeping their count and bytes; the
 * live ranges follow the kept ones to their new places */
static void summarize_maps(struct model_proc *p)
{
	size_t i, n = 0, *to = malloc(p->nr_maps * sizeof(*to));

	if (!to)
		return;
	for (i = 0; i < p->nr_maps; i++) {
		if (!p->maps[i].live && p->maps[i].gone_ts) {
			p->maps_summarized++;
			p->maps_summarized_bytes += p->maps[i].len;
			continue;
		}
		to[i] = n;
		p->maps[n++] = p->maps[i];
	}
	for (i = 0; i < p->nr_ranges; i++)
		p->ranges[i].map = to[p->ranges[i].map];
	p->nr_maps = n;
	p->maps_gone = 0;
	free(to);
}

static void on_mmap(struct model_proc *p, const struct gmt_mmap *e, __u64 page_size)
{
	struct model_mapping *mp;
	__u64 len;

	p->mmap_calls++;
	if (is_err(e->addr)) {
		p->mmap_failed++;
		return;
	}
	len = page_up(e->len, page_size);
	/* a fixed mapping replaces what was there */
	unmap_range(p, e->addr, e->addr + len, e->hdr.ts_ns);
	p->maps_made++;
	/* only when that frees a quarter: else the live ones need the room */
	if (p->nr_maps >= MODEL_MAPS_MAX && p->nr_maps == p->maps_cap &&
	    p->maps_gone >= p->maps_cap / 4)
		summarize_maps(p);
	if (model__grow((void **)&p->maps, &p->maps_cap, p->nr_maps, sizeof(*p->maps)))
		return;
	mp = &p->maps[p->nr_maps];
	*mp = (struct model_mapping){
		.ts = e->hdr.ts_ns,
		.addr = e->addr,
		.len = len,
		.prot = e->prot,
		.flags = e->flags,
		.fd_class = e->fd_class,
		.stack_id = e->stack_id,
	};
	map_range(p, e->addr, len, p->nr_maps++);
}

static void on_munmap(struct model_proc *p, const struct gmt_munmap *e, __u64 page_size)
{
	p->munmap_calls++;
	if (!e->ret)
		unmap_range(p, e->addr, e->addr + page_up(e->len, page_size), e->hdr.ts_ns);
}

static void on_mremap(struct model_proc *p, const struct gmt_mremap *e, __u64 page_size)
{
	__u64 old_len = page_up(e->old_len, page_size), new_len = page_up(e->new_len, page_size);
	size_t i, map = (size_t)-1;

	p->mremap_calls++;
	if (is_err(e->new_addr))
		return;
	for (i = 0; i < p->nr_ranges; i++)
		if (p->ranges[i].start <= e->old_addr && e->old_addr < p->ranges[i].end)
			map = p->ranges[i].map;
	unmap_range(p, e->old_addr, e->old_addr + old_len, e->hdr.ts_ns);
	/* only mappings made during the run are followed to their new place */
	if (map != (size_t)-1) {
		if (p->maps[map].gone_ts && !p->maps[map].live)
			p->maps_gone--;
		p->maps[map].gone_ts = 0;
		if (new_len > p->maps[map].len)
			p->maps[map].len = new_len;
		unmap_range(p, e->new_addr, e->new_addr + new_len, e->hdr.ts_ns);
		map_range(p, e->new_addr, new_len, map);
	}
}

static void on_brk(struct model_proc *p, const struct gmt_brk *e)
{
	p->brk_calls++;
	if (!p->brk_seen) {
		p->brk_seen = true;
		p->brk_first = p->brk_peak = e->ret;
	}
	p->brk_last = e->ret;
	if (e->ret > p->brk_peak)
		p->brk_peak = e->ret;
}

/* bounded for runs of days: when full, every other sample goes and the
 * rest stand for twice as much (samples come at random gaps, so which
 * go is as good as random) */
static void on_touch(struct model_proc *p, const struct gmt_touch *e)
{
	size_t i;

	if (p->nr_touches == MODEL_TOUCHES_MAX) {
		for (i = 0; 2 * i < p->nr_touches; i++) {
			p->touches[i] = p->touches[2 * i];
			p->touches[i].bytes *= 2;
		}
		p->nr_touches = i;
		p->touches_thinned++;
	}
	if (model__grow((void **)&p->touches, &p->touches_cap, p->nr_touches, sizeof(*p->touches)))
		return;
	p->touches[p->nr_touches++] = (struct model_touch){ .ts = e->hdr.ts_ns,
							    .bytes = e->bytes,
							    .stack_id = e->stack_id };
	p->touched_bytes += e->bytes;
}

static void on_stack(struct model *m, const struct gmt_stack *e)
{
	const char *names = event__stack_names(e);
	struct model_stack *s;
	unsigned int i;
	size_t len, o;

	if (model__stack(m, e->stack_id))
		return;
	if (m->nr_stacks >= MODEL_STACKS_MAX) { /* a file can hold any number */
		m->stacks_dropped++;
		return;
	}
	if (model__grow((void **)&m->stacks, &m->stacks_cap, m->nr_stacks, sizeof(*m->stacks)))
		return;
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->id = e->stack_id;
	/* the names in one copy, not two allocations a frame: a trace file's
	 * stacks cost about what they take in it */
	len = (const char *)e + e->hdr.len - names;
	s->frames = calloc(e->nr_frames ? e->nr_frames : 1, sizeof(*s->frames));
	/* as printable UTF-8 (fmt_clean): a name may triple */
	s->names = malloc(len * 3 + 1);
	if (!s->frames || !s->names) {
		free(s->frames);
		free(s->names);
		free(s);
		return;
	}
	s->nr_frames = e->nr_frames;
	for (i = 0, o = 0; i < e->nr_frames; i++) { /* event__valid: two strings a frame */
		s->frames[i].ip = e->frames[i].ip;
		s->frames[i].sym_off = e->frames[i].sym_off;
		s->frames[i].sym = s->names + o;
		o += fmt_clean(s->names + o, len * 3 + 1 - o, names, strlen(names)) + 1;
		names += strlen(names) + 1;
		s->frames[i].module = s->names + o;
		o += fmt_clean(s->names + o, len * 3 + 1 - o, names, strlen(names)) + 1;
		names += strlen(names) + 1;
	}
	m->stacks[m->nr_stacks++] = s;
	HASH_ADD(hh, m->by_id, id, sizeof(s->id), s);
}

static void on_lost(struct model *m, const struct gmt_lost *e)
{
	int i;

	for (i = 0; i < GMT_SRC_NR; i++)
		if (e->count[i] > m->lost[i])
			m->lost[i] = e->count[i];
}

static void on_nvml(struct model *m, struct model_proc *p, const struct gmt_nvml *e)
{
	__s64 sum = 0;
	size_t i;

	for (i = 0; i < m->nr_nvml && m->nvml[i].index != e->index; i++)
		;
	if (i == MODEL_NVML_DEVS || e->index >= MODEL_NVML_DEVS)
		return;
	m->nvml[i].ts = e->hdr.ts_ns;
	m->nvml[i].index = e->index;
	m->nvml[i].total = e->total;
	m->nvml[i].free = e->free;
	copy_str(m->nvml[i].name, sizeof(m->nvml[i].name), e->name, sizeof(e->name));
	if (e->hdr.len >= sizeof(*e)) { /* how fast it ran: a record of its own kind */
		struct model_nvml *x = &m->nvml[i];

		x->clocks_valid = e->clocks_valid;
		x->sm_max_mhz = e->sm_max_mhz;
		x->temp_c = e->temp_c;
		x->power_mw = e->power_mw;
		x->util_gpu = e->util_gpu;
		if (e->clocks_valid & MODEL_NVML_CLOCK)
			series__add(&x->sm_mhz, e->hdr.ts_ns, e->sm_mhz, 0);
		if (e->clocks_valid & MODEL_NVML_REASONS)
			series__add(&x->reasons, e->hdr.ts_ns,
				    (__s64)(e->clock_reasons & 0xffffffffull), 0);
	}
	m->nr_nvml += i == m->nr_nvml;
	p->nvml_dev_used[e->index] = e->used == GMT_NVML_NO_PROC ? 0 : e->used;
	for (i = 0; i < MODEL_NVML_DEVS; i++)
		sum += p->nvml_dev_used[i];
	series__add(&p->nvml_used, e->hdr.ts_ns, sum, 0);
}

static void proc_free(struct model_proc *p);

/* its largest resident memory, from /proc samples or the kernel's counters */
static __u64 proc_peak(const struct model_proc *p)
{
	__u64 a = series__peak(&p->rss[MODEL_RSS_ANON]) + series__peak(&p->rss[MODEL_RSS_FILE]);

	return p->vmrss_peak > a ? p->vmrss_peak : a;
}

/* an exited process with GPU work, requests or a failure is worth its details */
static bool proc_notable(const struct model_proc *p)
{
	return p->gpu || p->drm || p->nr_reqs || p->exit_code || p->mmap_failed;
}

/* least worth keeping first: plain ones before notable ones, smaller first */
static int by_worth(const void *a, const void *b)
{
	const struct model_proc *x = *(const struct model_proc *const *)a;
	const struct model_proc *y = *(const struct model_proc *const *)b;
	__u64 px = proc_peak(x), py = proc_peak(y);

	if (proc_notable(x) != proc_notable(y))
		return proc_notable(x) ? 1 : -1;
	return px < py ? -1 : px > py;
}

/* A run that starts processes for days (a shell loop, a job runner) keeps
 * MODEL_PROCS_MAX of them in detail; past that, exited ones become a count
 * and their largest peak, the least notable first. Live ones, and the
 * target, always stay. */
static void summarize_procs(struct model *m)
{
	struct model_proc **v = malloc(m->nr_procs * sizeof(*v));
	size_t i, n = 0, drop = m->nr_procs - MODEL_PROCS_MAX, k = 0;

	if (!v)
		return;
	for (i = 0; i < m->nr_procs; i++)
		if (m->procs[i]->exited && m->procs[i]->pid != m->target_pid)
			v[n++] = m->procs[i];
	qsort(v, n, sizeof(*v), by_worth);
	for (i = 0; i < n && i < drop; i++) {
		__u64 peak = proc_peak(v[i]);

		v[i]->summarize = true;
		if (model__proc(m, v[i]->pid) == v[i])
			HASH_DEL(m->by_pid, v[i]);
		m->procs_summarized++;
		if (peak > m->procs_summarized_peak)
			m->procs_summarized_peak = peak;
	}
	free(v);
	for (i = 0; i < m->nr_procs; i++)
		if (m->procs[i]->summarize)
			proc_free(m->procs[i]);
		else
			m->procs[k++] = m->procs[i];
	m->nr_procs = k;
}

/* events that belong to one process */
/* devices a target may name by ordinal: past them its calls are not devices */
#define CU_DEVICES 256

/* a CUDA device as the target's own cuDeviceGetAttribute saw it: integrated
 * (Jetson, GB10) or not; every process's calls name the same devices */
static void on_cu_attr(struct model *m, const struct gmt_gpu_call *e)
{
	struct model_device *d = NULL;
	size_t i;

	if (e->api != GMT_API_CU || e->aux2 != GMT_CU_ATTR_INTEGRATED || e->result ||
	    e->handle >= CU_DEVICES)
		return;
	for (i = 0; i < m->nr_devices && !d; i++)
		if (m->devices[i].api == MODEL_API_CU && m->devices[i].index == e->handle)
			d = &m->devices[i];
	if (!d) {
		if (model__grow((void **)&m->devices, &m->devices_cap, m->nr_devices, sizeof(*d)))
			return;
		d = &m->devices[m->nr_devices++];
		*d = (struct model_device){ .api = MODEL_API_CU, .index = e->handle };
	}
	d->type = e->aux ? MODEL_GPU_TYPE_INTEGRATED : MODEL_GPU_TYPE_DISCRETE;
	d->memory = model__device_memory(d);
}

static void add_proc_event(struct model *m, const struct gmt_hdr *e)
{
	struct model_proc *p = get_proc(m, e->pid, e->ts_ns);
	const struct gmt_rss *rss = (const void *)e;

	if (!p)
		return;
	/* after the whole process exited, its pid's exec and memory are another
	 * program's that took the pid before tracing ended (-p: the kernel's
	 * filter is by pid): they must not reset or add to what it held */
	if (p->exited && e->ts_ns > p->exit_ts) {
		switch (e->type) {
		case GMT_EV_EXEC:
		case GMT_EV_RSS:
		case GMT_EV_SAMPLE:
		case GMT_EV_FAULTS:
		case GMT_EV_MMAP:
		case GMT_EV_MUNMAP:
		case GMT_EV_MREMAP:
		case GMT_EV_BRK:
		case GMT_EV_TOUCH:
		case GMT_EV_MAP_RSS:
		case GMT_EV_MEM_LIMIT:
		case GMT_EV_PROC_STAT:
		case GMT_EV_FILE_RSS:
			return;
		}
	}
	switch (e->type) {
	case GMT_EV_PROC:
		on_proc(p, (const void *)e);
		break;
	case GMT_EV_PROC_ENV:
		on_proc_env(p, (const void *)e);
		break;
	case GMT_EV_CGROUP:
		on_cgroup(p, (const void *)e);
		break;
	case GMT_EV_SIGNAL: {
		const struct gmt_signal *g = (const void *)e;

		p->signal = (struct model_signal){ .ts = e->ts_ns,
						   .tid = e->tid,
						   .sender = g->sender,
						   .stack_id = g->stack_id,
						   .sig = g->sig,
						   .code = g->code,
						   .addr = g->addr };
		copy_str(p->signal.comm, sizeof(p->signal.comm), g->comm, sizeof(g->comm));
		break;
	}
	case GMT_EV_LLAMA_STATE: {
		const struct gmt_llama_state *l = (const void *)e;
		struct model_llama_state *s = &p->lstate;

		series__add(&p->lstate_bytes, e->ts_ns,
			    (__s64)(s->save_bytes + s->ckpt_bytes + s->load_bytes + l->size), 0);
		if (l->kind == GMT_DEC_STATE_LOAD) {
			s->loads++;
			s->load_bytes += l->size;
		} else if (l->flags & GMT_LLAMA_STATE_PARTIAL) {
			s->ckpts++;
			s->ckpt_bytes += l->size;
			if (l->size > s->ckpt_max)
				s->ckpt_max = l->size;
			s->pending[l->seq & 15] += l->size;
		} else {
			__u64 entry = l->size + s->pending[l->seq & 15];

			s->pending[l->seq & 15] = 0;
			if (!s->saves || l->size < s->save_min)
				s->save_min = l->size;
			if (l->size > s->save_max)
				s->save_max = l->size;
			if (!s->saves || entry < s->entry_min)
				s->entry_min = entry;
			if (entry > s->entry_max)
				s->entry_max = entry;
			s->saves++;
			s->save_bytes += l->size;
			s->entry_bytes += entry;
			series__add(&p->lentry_bytes, e->ts_ns, (__s64)s->entry_bytes, 0);
		}
		break;
	}
	case GMT_EV_MEM_LIMIT: {
		const struct gmt_mem_limit *l = (const void *)e;

		/* none now: a limit lifted binds no more */
		if (l->file == MODEL_LIMIT_NONE) {
			series__add(&p->mem_limit_s, e->ts_ns, 0, 0);
			p->mem_limit_ts = 0;
			break;
		}
		if (l->file < MODEL_LIMIT_V1_HARD || l->file > MODEL_LIMIT_V2_HIGH || !l->limit)
			break;
		series__add(&p->mem_limit_s, e->ts_ns,
			    l->limit < MODEL_NO_LIMIT ? (__s64)l->limit : 0, 0);
		series__add(&p->mem_limit_used_s, e->ts_ns,
			    l->used < MODEL_NO_LIMIT ? (__s64)l->used : 0, 0);
		p->mem_limit_ts = e->ts_ns;
		p->mem_limit = l->limit;
		p->mem_limit_used = l->used;
		p->mem_limit_swap_room = l->swap_room;
		p->mem_limit_file = l->file;
		copy_str(p->mem_limit_cgroup, sizeof(p->mem_limit_cgroup), l->path, GMT_PATH_LEN);
		break;
	}
	case GMT_EV_MAP_RSS:
		on_map_rss(p, (const void *)e);
		break;
	case GMT_EV_EXEC:
		on_exec(p, (const void *)e);
		break;
	case GMT_EV_FORK:
		on_fork(m, p, (const void *)e);
		break;
	case GMT_EV_EXIT:
		on_proc_exit(p, (const void *)e);
		if (m->nr_procs >= MODEL_PROCS_MAX + MODEL_PROCS_MAX / 4)
			summarize_procs(m); /* p may be gone */
		break;
	case GMT_EV_RSS:
		if (rss->member < MODEL_RSS_NR)
			series__add(&p->rss[rss->member], e->ts_ns, rss->bytes, 0);
		if (rss->member == MODEL_RSS_ANON || rss->member == MODEL_RSS_SWAP) {
			__s64 a = 0, w = 0;

			series__at(&p->rss[MODEL_RSS_ANON], e->ts_ns, &a);
			series__at(&p->rss[MODEL_RSS_SWAP], e->ts_ns, &w);
			series__add(&p->anon_swap, e->ts_ns, a + w, 0);
		}
		break;
	case GMT_EV_SAMPLE:
		on_sample(p, (const void *)e);
		break;
	case GMT_EV_FAULTS:
		on_faults(p, (const void *)e);
		break;
	case GMT_EV_MMAP:
		on_mmap(p, (const void *)e, m->page_size);
		break;
	case GMT_EV_MUNMAP:
		on_munmap(p, (const void *)e, m->page_size);
		break;
	case GMT_EV_MREMAP:
		on_mremap(p, (const void *)e, m->page_size);
		break;
	case GMT_EV_BRK:
		on_brk(p, (const void *)e);
		break;
	case GMT_EV_TOUCH:
		on_touch(p, (const void *)e);
		break;
	case GMT_EV_GPU_CALL:
		if (((const struct gmt_gpu_call *)e)->op == GMT_GOP_ATTR)
			on_cu_attr(m, (const void *)e);
		model_gpu__add(m, p, (const void *)e);
		break;
	case GMT_EV_DRM_FDINFO:
		model_drm__add(p, (const void *)e);
		break;
	case GMT_EV_HTTP:
		model_req__add(p, (const void *)e);
		break;
	case GMT_EV_TIMINGS:
		model_req__timings(p, (const void *)e);
		break;
	case GMT_EV_DECODE:
		model_req__decode(p, (const void *)e);
		break;
	case GMT_EV_NVML:
		on_nvml(m, p, (const void *)e);
		break;
	case GMT_EV_PROC_STAT:
		model_waits__proc(p, (const void *)e);
		break;
	case GMT_EV_FILE_RSS:
		model_waits__files(p, (const void *)e);
		break;
	}
}

static void on_device(struct model *m, const struct gmt_gpu_device *e)
{
	struct model_device *d;
	__u32 i;

	if (model__grow((void **)&m->devices, &m->devices_cap, m->nr_devices, sizeof(*d)))
		return;
	d = &m->devices[m->nr_devices++];
	*d = (struct model_device){
		.api = e->api < MODEL_API_NR ? e->api : MODEL_API_NONE,
		.index = e->index,
		.vendor_id = e->vendor_id,
		.device_id = e->device_id,
		.nr_types = e->nr_types < MODEL_MEM_TYPES ? e->nr_types : MODEL_MEM_TYPES,
		.nr_heaps = e->nr_heaps < MODEL_MEM_HEAPS ? e->nr_heaps : MODEL_MEM_HEAPS,
	};
	copy_str(d->name, sizeof(d->name), e->name, sizeof(e->name));
	copy_str(d->driver, sizeof(d->driver), e->driver, sizeof(e->driver));
	for (i = 0; i < d->nr_types; i++) {
		d->types[i].flags = e->types[i].flags;
		d->types[i].heap = e->types[i].heap;
	}
	for (i = 0; i < d->nr_heaps; i++) {
		d->heaps[i].size = e->heaps[i].size;
		d->heaps[i].flags = e->heaps[i].flags;
	}
	/* recorded before the type was */
	if (e->hdr.len >= offsetof(struct gmt_gpu_device, device_type) + sizeof(e->device_type))
		d->type =
			e->device_type < MODEL_GPU_TYPE_NR ? e->device_type : MODEL_GPU_TYPE_OTHER;
	d->memory = model__device_memory(d);
}

enum model_devmem model__device_memory(const struct model_device *d)
{
	if (d->type == MODEL_GPU_TYPE_CPU || d->type == MODEL_GPU_TYPE_INTEGRATED)
		return MODEL_DEVMEM_HOST_RAM;
	/* Mesa's CPU drivers (lavapipe: vendor 0x10005, llvmpipe) */
	if (d->type == MODEL_GPU_TYPE_UNSAID && d->api == MODEL_API_VK &&
	    (d->vendor_id == 0x10005 || strstr(d->name, "llvmpipe")))
		return MODEL_DEVMEM_HOST_RAM;
	return MODEL_DEVMEM_SEPARATE;
}

bool model__host_ram(const struct model *m, enum model_api api)
{
	size_t i, n = 0;

	for (i = 0; i < m->nr_devices; i++)
		if (m->devices[i].api == api) {
			if (m->devices[i].memory != MODEL_DEVMEM_HOST_RAM)
				return false;
			n++;
		}
	return n > 0;
}

const char *model__gpu_type_name(enum model_gpu_type t)
{
	static const char *const names[MODEL_GPU_TYPE_NR] = { NULL,	  "other",   "integrated",
							      "discrete", "virtual", "cpu" };

	return t < MODEL_GPU_TYPE_NR ? names[t] : NULL;
}

const struct model_device *model__vk_device(const struct model *m)
{
	const struct model_device *d = NULL;
	size_t i, n = 0;

	for (i = 0; i < m->nr_devices; i++)
		if (m->devices[i].api == MODEL_API_VK) {
			d = &m->devices[i];
			n++;
		}
	return n == 1 ? d : NULL;
}

unsigned int model__vk_kind(const struct model *m, __u32 mem_type)
{
	/* with several devices the call does not say which one it was */
	const struct model_device *d = model__vk_device(m);

	if (!d || mem_type >= d->nr_types)
		return MODEL_KIND_VK_MEMORY;
	return d->types[mem_type].flags & 1 ? MODEL_KIND_DEVICE : MODEL_KIND_HOST;
}

void model__add(void *ctx, const struct gmt_hdr *e)
{
	struct model *m = ctx;

	m->events++;
	if (e->type >= GMT_EV_MAX) {
		m->unknown_events++;
		return;
	}
	m->events_by_type[e->type]++;
	if (e->ts_ns > m->last_ts)
		m->last_ts = e->ts_ns;
	switch (e->type) {
	case GMT_EV_SESSION:
		on_session(m, (const void *)e);
		break;
	case GMT_EV_PROBE:
		on_probe(m, (const void *)e);
		break;
	case GMT_EV_STACK:
		on_stack(m, (const void *)e);
		break;
	case GMT_EV_MODULE:
		on_module(m, (const void *)e);
		break;
	case GMT_EV_LOST:
		on_lost(m, (const void *)e);
		break;
	case GMT_EV_GPU_DEVICE:
		on_device(m, (const void *)e);
		break;
	case GMT_EV_BO:
		model_bo__add(m, (const void *)e);
		break;
	case GMT_EV_MEMINFO:
		m->meminfo_seen = true;
		m->mem_total = ((const struct gmt_meminfo *)e)->total_kb << 10;
		m->mem_available = ((const struct gmt_meminfo *)e)->available_kb << 10;
		m->swap_free = ((const struct gmt_meminfo *)e)->swap_free_kb << 10;
		break;
	case GMT_EV_JOIN:
		on_join(m, (const void *)e);
		break;
	case GMT_EV_HOST_STAT:
		model_waits__host(m, (const void *)e);
		break;
	case GMT_EV_END:
		m->end_reason = ((const struct gmt_end *)e)->reason;
		m->end_ts = e->ts_ns;
		for (size_t i = 0; i < m->nr_procs; i++)
			model_req__flush(m->procs[i], e->ts_ns);
		break;
	default:
		add_proc_event(m, e);
	}
}

static void count_thinned(const struct series *s, struct model_bounds *b)
{
	if (!s->gap_ns)
		return;
	b->series_thinned++;
	if (s->gap_ns > b->series_gap_ns)
		b->series_gap_ns = s->gap_ns;
}

bool model__bounds(const struct model *m, struct model_bounds *b)
{
	size_t i;
	int j, k;

	*b = (struct model_bounds){ .procs_summarized = m->procs_summarized,
				    .procs_summarized_peak = m->procs_summarized_peak,
				    .pids_reused = m->pids_reused,
				    .stacks_dropped = m->stacks_dropped };
	for (i = 0; i < m->nr_procs; i++) {
		const struct model_proc *p = m->procs[i];

		b->maps_summarized += p->maps_summarized;
		b->maps_summarized_bytes += p->maps_summarized_bytes;
		b->touches_thinned += p->touches_thinned;
		b->reqs_summarized += p->reqs_summarized;
		for (j = 0; j < MODEL_RSS_NR; j++)
			count_thinned(&p->rss[j], b);
		count_thinned(&p->vmrss, b);
		count_thinned(&p->nvml_used, b);
		for (j = 0; p->gpu && j < MODEL_API_NR; j++)
			for (k = 0; k < MODEL_KIND_NR; k++)
				count_thinned(&p->gpu->st[j][k].series, b);
	}
	return b->maps_summarized || b->series_thinned || b->touches_thinned ||
	       b->procs_summarized || b->pids_reused || b->reqs_summarized || b->stacks_dropped;
}

static void proc_free(struct model_proc *p)
{
	int i;

	for (i = 0; i < MODEL_RSS_NR; i++)
		free(p->rss[i].p);
	free(p->vmrss.p);
	free(p->anon_swap.p);
	free(p->major_file.p);
	free(p->major_anon.p);
	free(p->mem_limit_s.p);
	free(p->mem_limit_used_s.p);
	free(p->data_file_rss.p);
	free(p->lstate_bytes.p);
	free(p->lentry_bytes.p);
	model_ticks__free(&p->waits);
	free(p->nvml_used.p);
	free(p->maps);
	free(p->touches);
	free(p->ranges);
	free(p->cmdline);
	model_gpu__free(p->gpu);
	model_drm__free(p->drm);
	free(p->reqs);
	free(p->reqs_folded);
	free(p->env);
	free(p->seqs);
	free(p->runs);
	free(p->ended);
	free(p->open);
	free(p);
}

void model__free(struct model *m)
{
	size_t i;

	if (!m)
		return;
	HASH_CLEAR(hh, m->by_pid);
	HASH_CLEAR(hh, m->by_id);
	for (i = 0; i < m->nr_procs; i++)
		proc_free(m->procs[i]);
	for (i = 0; i < m->nr_stacks; i++) {
		free(m->stacks[i]->names);
		free(m->stacks[i]->frames);
		free(m->stacks[i]);
	}
	free(m->stacks);
	{
		struct model_module *x, *t;

		HASH_ITER(hh, m->modules, x, t)
		{
			HASH_DEL(m->modules, x);
			free(x);
		}
	}
	free(m->devices);
	model_ticks__free(&m->host_ticks);
	for (i = 0; i < m->nr_nvml; i++) {
		free(m->nvml[i].sm_mhz.p);
		free(m->nvml[i].reasons.p);
	}
	model_bo__free(m);
	free(m->procs);
	free(m->probes);
	free(m->cmdline);
	free(m);
}
