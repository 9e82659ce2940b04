// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Samples: owns the reads of /proc that become records (a process joining,
 * each interval, smaps every few) and the NVML helper's handle. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "samples.h"
#include "cgroup.h"
#include "nvml.h"
#include "procfs.h"
#include "waits.h"
#include "common/container.h"

#define SCRATCH_SIZE 65536

struct samples {
	__u32 target;
	const char *cmdline;
	gmt_sink_fn sink;
	void *ctx;
	struct nvml *nvml; /* NULL without an NVIDIA driver */
	/* 8-byte aligned room to build records in */
	__u64 scratch[SCRATCH_SIZE / 8];
};

struct samples *samples__new(__u32 target, const char *cmdline, gmt_sink_fn sink, void *ctx)
{
	struct samples *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->target = target;
	s->cmdline = cmdline;
	s->sink = sink;
	s->ctx = ctx;
	return s;
}

void samples__free(struct samples *s)
{
	if (!s)
		return;
	nvml__stop(s->nvml);
	free(s);
}

static void emit(struct samples *c, const struct gmt_hdr *e)
{
	c->sink(c->ctx, e);
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
static void emit_rss_baseline(struct samples *c, __u32 pid)
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
static void emit_drm_fdinfo(struct samples *c, __u32 pid)
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
static void emit_meminfo(struct samples *c)
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
	event__init(&e.hdr, GMT_EV_MEMINFO, sizeof(e), event__now_ns(), c->target);
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < 3; i++)
			if (!strncmp(line, keys[i], strlen(keys[i])) &&
			    sscanf(line + strlen(keys[i]), "%llu", &x) == 1)
				*v[i] = x;
	fclose(f);
	emit(c, &e.hdr);
}

/* the limit its cgroups set, where one does: growth ends there; where
 * none does, a record that says so (a limit lifted ends there too) */
static void emit_mem_limit(struct samples *c, __u32 pid)
{
	struct gmt_mem_limit l;
	int err;

	event__init(&l.hdr, GMT_EV_MEM_LIMIT, sizeof(l), event__now_ns(), pid);
	err = cgroup__mem_limit(pid, &l);
	if (err && err != -ENOENT)
		return;
	if (err) {
		l.limit = GMT_MEM_NO_LIMIT;
		l.file = 0;
		l.path[0] = 0;
	}
	emit(c, &l.hdr);
}

/* what it waited on: faults, a CPU, its quota, pressure */
static void emit_proc_stat(struct samples *c, __u32 pid)
{
	struct gmt_proc_stat e;

	event__init(&e.hdr, GMT_EV_PROC_STAT, sizeof(e), event__now_ns(), pid);
	if (!waits__proc(pid, &e))
		emit(c, &e.hdr);
}

static void emit_host_stat(struct samples *c)
{
	struct gmt_host_stat e;

	event__init(&e.hdr, GMT_EV_HOST_STAT, sizeof(e), event__now_ns(), c->target);
	waits__host(&e);
	emit(c, &e.hdr);
}

void samples__tick(struct samples *c, const __u32 *pids, size_t n)
{
	struct gmt_sample s;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!read_status(pids[i], &s))
			emit(c, &s.hdr);
		emit_mem_limit(c, pids[i]);
		emit_proc_stat(c, pids[i]);
		emit_drm_fdinfo(c, pids[i]);
	}
	emit_meminfo(c);
	emit_host_stat(c);
	if (c->nvml)
		nvml__sample(c->nvml, pids, n, c->sink, c->ctx);
}

void samples__start_nvml(struct samples *c)
{
	struct gmt_probe p;

	event__init(&p.hdr, GMT_EV_PROBE, sizeof(p), event__now_ns(), c->target);
	snprintf(p.name, sizeof(p.name), "nvml");
	snprintf(p.what, sizeof(p.what), "device memory by process, as the NVIDIA driver counts");
	c->nvml = nvml__start(p.reason, sizeof(p.reason));
	p.status = c->nvml ? GMT_PROBE_ATTACHED : GMT_PROBE_SKIPPED;
	emit(c, &p.hdr);
}

static void emit_proc(struct samples *c, __u32 pid, bool spawned)
{
	struct gmt_proc *p = (struct gmt_proc *)c->scratch;
	char cmdline[4096], status[4096];
	const char *pp;
	ssize_t n;
	size_t len;

	if (spawned) /* main's, redacted */
		snprintf(cmdline, sizeof(cmdline), "%s", c->cmdline ? c->cmdline : "");
	else
		procfs__redact(cmdline,
			       procfs__read_raw(pid, "cmdline", cmdline, sizeof(cmdline) - 1));
	len = strlen(cmdline);
	event__init(&p->hdr, GMT_EV_PROC,
		    event__round8(offsetof(struct gmt_proc, cmdline) + len + 1), event__now_ns(),
		    pid);
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

/* after an exec: the new program's command line and executable, which a
 * PROC read before (at its fork: its parent's) did not say. None when the
 * process is gone already: a record of nothing would blank what is known */
void samples__exec(struct samples *c, __u32 pid)
{
	char link[32], exe[8];

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	if (readlink(link, exe, sizeof(exe)) > 0)
		emit_proc(c, pid, false);
}

/* the path of /proc/PID/cgroup that names its container (a command we
 * start is in ours), its pid inside, and its pod's names: the node's, else
 * its environment's (its own to say: cleaned, and marked as such) */
static void emit_cgroup(struct samples *c, __u32 pid)
{
	struct gmt_cgroup *g = (struct gmt_cgroup *)c->scratch;
	char buf[4096], env[16384];
	struct container ct;
	const char *v;
	size_t n, vn;

	procfs__read(pid, "cgroup", buf, sizeof(buf));
	event__init(&g->hdr, GMT_EV_CGROUP, sizeof(*g), event__now_ns(), pid);
	if (!cgroup__pick(buf, g->path, sizeof(g->path)))
		return;
	g->ns_pid = procfs__ns_pid(pid);
	if (container__parse(g->path, &ct) && ct.pod_uid[0]) {
		if (cgroup__pod_names(ct.pod_uid, g->pod, sizeof(g->pod), g->pod_ns,
				      sizeof(g->pod_ns))) {
			g->pod_from = GMT_POD_FROM_NODE;
		} else {
			n = procfs__read_raw(pid, "environ", env, sizeof(env));
			v = procfs__env_value(env, n, "POD_NAME", &vn);
			if (!v)
				v = procfs__env_value(env, n, "HOSTNAME", &vn);
			if (v && container__name_ok(v, vn, true))
				snprintf(g->pod, sizeof(g->pod), "%.*s", (int)vn, v);
			v = procfs__env_value(env, n, "POD_NAMESPACE", &vn);
			if (v && container__name_ok(v, vn, false))
				snprintf(g->pod_ns, sizeof(g->pod_ns), "%.*s", (int)vn, v);
			if (g->pod[0] || g->pod_ns[0])
				g->pod_from = GMT_POD_FROM_ENV;
		}
	}
	emit(c, &g->hdr);
}

/* the target's memory settings from its environment: ours when we start it */
static void emit_proc_env(struct samples *c, __u32 pid, bool spawned)
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
	event__init(&e->hdr, GMT_EV_PROC_ENV, event__round8(sizeof(*e) + n), event__now_ns(), pid);
	memcpy(e->vars, vars, n);
	e->vars_len = n;
	emit(c, &e->hdr);
}

/* the files pid maps, by file: their mapped and resident bytes */
struct files {
	struct gmt_file_rss_one v[64];
	size_t n;
};

static struct gmt_file_rss_one *file_of(struct files *fs, const struct procfs_map *m)
{
	__u64 dev = (__u64)m->maj << 32 | m->min;
	size_t i, k;

	for (i = 0; i < fs->n; i++)
		if (fs->v[i].dev == dev && fs->v[i].ino == m->ino)
			return &fs->v[i];
	if (fs->n == sizeof(fs->v) / sizeof(fs->v[0]))
		return NULL; /* past 64 files: the largest are the ones that matter */
	memset(&fs->v[i], 0, sizeof(fs->v[i]));
	fs->v[i].dev = dev;
	fs->v[i].ino = m->ino;
	k = strlen(m->path);
	/* the path's end names it; the kernel's " (deleted)" stays */
	snprintf(fs->v[i].name, sizeof(fs->v[i].name), "%s",
		 m->path + (k >= sizeof(fs->v[i].name) ? k - sizeof(fs->v[i].name) + 1 : 0));
	return &fs->v[fs->n++];
}

static int by_size(const void *a, const void *b)
{
	const struct gmt_file_rss_one *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

static void emit_file_rss(struct samples *c, __u32 pid, __u64 ts, struct files *fs)
{
	struct gmt_file_rss *r = (struct gmt_file_rss *)c->scratch;
	size_t i;

	if (!fs->n)
		return;
	qsort(fs->v, fs->n, sizeof(fs->v[0]), by_size);
	event__init(&r->hdr, GMT_EV_FILE_RSS, sizeof(*r), ts, pid);
	for (i = 0; i < fs->n && i < GMT_FILE_RSS_MAX; i++)
		r->v[r->nr++] = fs->v[i];
	r->hdr.len = sizeof(*r) + r->nr * sizeof(r->v[0]);
	emit(c, &r->hdr);
}

/* the resident bytes of pid's anonymous areas, from /proc/PID/smaps: what a
 * mapping holds, where its length is only address space (reservations,
 * mappings never touched); and of the files it maps, the largest */
static void emit_map_rss(struct samples *c, __u32 pid)
{
	struct gmt_map_rss *r = (struct gmt_map_rss *)c->scratch;
	struct gmt_file_rss_one *file = NULL;
	unsigned long long kb;
	__u64 ts = event__now_ns();
	char path[64], line[512];
	struct procfs_map m;
	struct files *fs = calloc(1, sizeof(*fs));
	bool anon = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/smaps", pid);
	f = fopen(path, "re");
	if (!f || !fs) {
		if (f)
			fclose(f);
		free(fs);
		return;
	}
	event__init(&r->hdr, GMT_EV_MAP_RSS, sizeof(*r), ts, pid);
	while (fgets(line, sizeof(line), f)) {
		if (procfs__map_line(line, &m)) {
			/* no inode and no name: anonymous ([heap], [stack] have names) */
			anon = !m.ino && !m.path[0];
			file = m.ino && m.path[0] == '/' ? file_of(fs, &m) : NULL;
			if (file) {
				file->size += m.end - m.start;
				if (strchr(m.perms, 'x'))
					file->flags |= 1;
			}
			continue;
		}
		if (sscanf(line, "Rss: %llu kB", &kb) != 1)
			continue;
		if (file) {
			file->rss += kb << 10;
			file = NULL;
		}
		if (!anon)
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
	emit_file_rss(c, pid, ts, fs);
	free(fs);
}

void samples__maps_rss(struct samples *c, const __u32 *pids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		emit_map_rss(c, pids[i]);
}

/* how it came to be traced (enum gmt_join_how), and when it started: the
 * report says how long after its start tracing began */
static void emit_join(struct samples *c, __u32 pid, __u32 how)
{
	struct gmt_join j = { .how = how };

	event__init(&j.hdr, GMT_EV_JOIN, sizeof(j), event__now_ns(), pid);
	j.start_ns = procfs__start_ns(pid);
	procfs__read(pid, "comm", j.comm, sizeof(j.comm));
	j.comm[strcspn(j.comm, "\n")] = 0;
	emit(c, &j.hdr);
}

/* the baseline first: the process's timeline starts at its first record;
 * a started command has nothing to sample before its exec. how: the JOIN
 * record to make (0: BPF sent one) */
void samples__join(struct samples *c, __u32 pid, bool spawned, __u32 how)
{
	if (how)
		emit_join(c, pid, how);
	if (!spawned)
		emit_rss_baseline(c, pid);
	emit_proc(c, pid, spawned);
	emit_cgroup(c, pid);
	emit_proc_env(c, pid, spawned);
}
