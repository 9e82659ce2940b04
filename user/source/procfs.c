// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc: owns the small reads of /proc/PID (status, cmdline with secrets
 * redacted, the environment's memory settings, DRM fdinfo, code ranges),
 * the one parser of maps lines, and procfs__open_as, the one way a target's
 * files are opened: in its root, with its file credentials, taken by a
 * short-lived thread alone (glibc's setgroups would change every thread's),
 * without blocking, regular files only, each refusal said once. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "stream/event.h"
#include "common/fmt.h"
#include "procfs.h"

void procfs__read(__u32 pid, const char *name, char *buf, size_t size)
{
	char path[64];
	size_t i, n;
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	for (i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
}

bool procfs__read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	buf[0] = 0;
	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	return n > 0;
}

__u64 procfs__start_ns(__u32 pid)
{
	struct timespec boot, mono;
	char stat[1024], *p;
	double start;
	int i;

	procfs__read(pid, "stat", stat, sizeof(stat));
	p = strrchr(stat, ')'); /* the name may hold spaces and parentheses */
	/* starttime is field 22; after the name, field 3 */
	for (i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	if (!p || clock_gettime(CLOCK_BOOTTIME, &boot) || clock_gettime(CLOCK_MONOTONIC, &mono))
		return 0;
	/* since boot, suspended time included; the monotonic clock leaves it out */
	start = strtoull(p + 1, NULL, 10) * (1e9 / sysconf(_SC_CLK_TCK)) -
		((boot.tv_sec - mono.tv_sec) * 1e9 + (boot.tv_nsec - mono.tv_nsec));
	return start > 0 ? (__u64)start : 0;
}

/* "Uid:\tREAL\tEFFECTIVE\tSAVED\tFS": the fourth */
static bool fs_id(const char *status, const char *key, __u32 *id)
{
	const char *p = strstr(status, key);
	unsigned int v[4];

	if (!p || sscanf(p + strlen(key), "%u %u %u %u", &v[0], &v[1], &v[2], &v[3]) != 4)
		return false;
	*id = v[3];
	return true;
}

bool procfs__cred(__u32 pid, struct procfs_cred *c)
{
	char status[8192], *p, *end;
	unsigned long g;

	memset(c, 0, sizeof(*c));
	c->pid = pid;
	procfs__read(pid, "status", status, sizeof(status));
	if (!fs_id(status, "\nUid:", &c->uid) || !fs_id(status, "\nGid:", &c->gid))
		return false;
	p = strstr(status, "\nGroups:");
	if (p)
		/* past our cap the rest are left out: fewer groups, less access */
		for (p += 8; c->nr_groups < PROCFS_MAX_GROUPS; p = end) {
			g = strtoul(p, &end, 10);
			if (end == p)
				break;
			c->groups[c->nr_groups++] = g;
		}
	c->known = true;
	return true;
}

/* each refused file said once: the hashes of those said */
static __u64 said[512];
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;

static void refuse(__u32 pid, const char *path, const char *fmt, ...)
{
	__u64 h = 0xcbf29ce484222325ull;
	const char *s;
	bool seen = false;
	size_t i;
	va_list ap;

	for (s = path; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h ^= pid;
	h += !h;
	pthread_mutex_lock(&said_lock);
	for (i = h % 512; said[i] && !(seen = said[i] == h); i = (i + 1) % 512)
		if (i == (h + 511) % 512)
			break; /* full: say it again rather than never */
	if (!seen && !said[i])
		said[i] = h;
	pthread_mutex_unlock(&said_lock);
	if (seen)
		return;
	fprintf(stderr, "gpumemtrace: not reading %s for pid %u: ", path, pid);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* fd when it is a regular file of a size we read, else closed and -1 */
static int checked(int fd, __u32 pid, const char *path)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		refuse(pid, path, "it is %s, not a regular file", fmt_file_kind(st.st_mode));
	else if ((__u64)st.st_size > PROCFS_MAX_FILE)
		refuse(pid, path,
		       "it is %llu bytes, more than the %llu GiB read of a target's file",
		       (unsigned long long)st.st_size, PROCFS_MAX_FILE >> 30);
	else
		return fd;
	close(fd);
	return -1;
}

struct open_job {
	const struct procfs_cred *c;
	int dir;
	const char *path;
	__u64 flags; /* O_DIRECTORY for a directory, else 0 */
	int fd, err;
};

/* this thread alone takes the target's file credentials (raw syscalls:
 * glibc's setgroups would change every thread's), so the kernel checks
 * every directory on the way and the file as for the target; a non-root
 * fsuid also drops root's file capabilities (capabilities(7)) */
static void *open_as_target(void *arg)
{
	struct open_job *j = arg;
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | j->flags,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	gid_t groups[PROCFS_MAX_GROUPS];
	unsigned int i;

	for (i = 0; i < j->c->nr_groups; i++)
		groups[i] = j->c->groups[i];
	if (syscall(SYS_setgroups, j->c->nr_groups, groups)) {
		j->err = errno;
		return NULL;
	}
	syscall(SYS_setfsgid, j->c->gid);
	syscall(SYS_setfsuid, j->c->uid);
	/* both return the old id: asked again, the one now in force */
	if ((__u32)syscall(SYS_setfsgid, j->c->gid) != j->c->gid ||
	    (__u32)syscall(SYS_setfsuid, j->c->uid) != j->c->uid) {
		j->err = EPERM;
		return NULL;
	}
	j->fd = syscall(SYS_openat2, j->dir, j->path, &how, sizeof(how));
	j->err = j->fd < 0 ? errno : 0;
	return NULL;
}

/* open_as_target's fd for path in root's root; errno set where it is -1 */
static int open_in_root(const struct procfs_cred *c, __u32 root, const char *path, __u64 flags)
{
	struct open_job j = { .c = c, .path = path, .flags = flags, .fd = -1, .err = EPERM };
	char dir[64] = "/";
	pthread_t t;
	int e;

	if (root)
		snprintf(dir, sizeof(dir), "/proc/%u/root", root);
	j.dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (j.dir < 0)
		return -1;
	e = pthread_create(&t, NULL, open_as_target, &j);
	if (!e)
		pthread_join(t, NULL);
	close(j.dir);
	errno = e ? e : j.err;
	return e ? -1 : j.fd;
}

int procfs__open_as(const struct procfs_cred *c, __u32 root, const char *path)
{
	int fd, err;

	if (!c->known) {
		refuse(c->pid, path, "whose credentials it is read with are unknown");
		return -1;
	}
	fd = open_in_root(c, root, path, 0);
	err = errno;
	if (fd < 0 && (err == EACCES || err == EPERM))
		refuse(c->pid, path, "its user (uid %u) may not read it: %s", c->uid,
		       strerror(err));
	else if (fd < 0 && err == ELOOP)
		refuse(c->pid, path, "it goes through a /proc link: %s", strerror(err));
	errno = err;
	return checked(fd, c->pid, path);
}

int procfs__open_in_root(__u32 pid, const char *path)
{
	struct procfs_cred c;

	if (!procfs__cred(pid, &c))
		return -1; /* gone */
	return procfs__open_as(&c, pid, path);
}

int procfs__open_dir_in_root(__u32 pid, const char *path)
{
	struct procfs_cred c;

	if (!procfs__cred(pid, &c))
		return -1;
	return open_in_root(&c, pid, path, O_DIRECTORY);
}

int procfs__open_mapped(__u32 pid, __u64 start, __u64 end)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	return checked(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), pid, path);
}

size_t procfs__read_raw(__u32 pid, const char *name, char *buf, size_t size)
{
	char path[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, size, f);
	fclose(f);
	return n;
}

/* options whose value is a secret: never into a trace file */
static const char *const secret_opts[] = { "--api-key", "--hf-token", "-hft" };

static bool is_secret_opt(const char *w, size_t n, bool *inline_value)
{
	size_t i, k;

	for (i = 0; i < sizeof(secret_opts) / sizeof(secret_opts[0]); i++) {
		k = strlen(secret_opts[i]);
		if (n >= k && !strncmp(w, secret_opts[i], k) && (n == k || w[k] == '=')) {
			*inline_value = n > k;
			return true;
		}
	}
	return false;
}

size_t procfs__redact(char *args, size_t len)
{
	bool next = false, inl;
	char *w, *e, *eq, *end;
	size_t i;

	while (len && !args[len - 1])
		len--;
	end = args + len;
	*end = 0;
	/* argument by argument, before they are joined: a value is all of
	 * its argument, spaces and all ("tok1 SECRET") */
	for (w = args; w < end; w = e + 1) {
		e = memchr(w, 0, end - w);
		if (!e)
			e = end;
		if (next) {
			memset(w, '*', e - w);
			next = false;
			continue;
		}
		next = is_secret_opt(w, e - w, &inl);
		if (next && inl) {
			eq = memchr(w, '=', e - w);
			memset(eq + 1, '*', e - eq - 1);
			next = false;
		}
	}
	for (i = 0; i < len; i++)
		if (!args[i])
			args[i] = ' ';
	return len;
}

/* what changes how llama.cpp and ggml use memory, and nothing else */
static const char *const settings[] = {
	"LLAMA_ARG_CACHE_RAM",
	"LLAMA_ARG_N_PARALLEL",
	"LLAMA_ARG_CTX_SIZE",
	"LLAMA_ARG_FIT",
	"LLAMA_ARG_KV_UNIFIED",
	"LLAMA_ARG_BATCH",
	"LLAMA_ARG_UBATCH",
	"LLAMA_ARG_N_GPU_LAYERS",
	"LLAMA_ARG_CACHE_IDLE_SLOTS",
	"GGML_CUDA_DISABLE_GRAPHS",
	"GGML_VK_VISIBLE_DEVICES",
	"CUDA_VISIBLE_DEVICES",
	/* and what decides how fast it goes */
	"LLAMA_ARG_THREADS",
	"LLAMA_ARG_MLOCK",
	"LLAMA_ARG_MMAP",
	"LLAMA_ARG_NO_MMAP",
};

size_t procfs__settings(const char *env, size_t len, char *out, size_t size)
{
	const char *v = env, *end = env + len, *nul;
	size_t n = 0, i, k, vl;

	for (; v < end; v = nul + 1) {
		nul = memchr(v, 0, end - v);
		if (!nul)
			break;
		for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
			k = strlen(settings[i]);
			vl = nul - v;
			if (vl > k && !strncmp(v, settings[i], k) && v[k] == '=' &&
			    n + vl + 1 <= size) {
				memcpy(out + n, v, vl + 1);
				n += vl + 1;
			}
		}
	}
	return n;
}

const char *procfs__env_value(const char *env, size_t len, const char *name, size_t *n)
{
	const char *v = env, *end = env + len, *nul;
	size_t k = strlen(name);

	for (; v < end; v = nul + 1) {
		nul = memchr(v, 0, end - v);
		if (!nul)
			nul = end;
		if ((size_t)(nul - v) > k && !strncmp(v, name, k) && v[k] == '=') {
			*n = nul - v - k - 1;
			return v + k + 1;
		}
	}
	return NULL;
}

__u32 procfs__ns_pid(__u32 pid)
{
	char status[4096], *l, *end;
	unsigned long v, last = 0;

	procfs__read(pid, "status", status, sizeof(status));
	l = strstr(status, "\nNSpid:");
	if (!l)
		return 0;
	for (l += 7; *l && *l != '\n'; l = end) {
		v = strtoul(l, &end, 10);
		if (end == l)
			break;
		last = v;
	}
	return last == pid ? 0 : (__u32)last;
}

/* "1234 KiB", "5 MiB", "42" (bytes) */
static __u64 parse_size(const char *v)
{
	unsigned long long n = 0;
	char unit[8] = "";

	if (sscanf(v, "%llu %7s", &n, unit) < 1)
		return 0;
	if (!strcmp(unit, "KiB"))
		return n << 10;
	if (!strcmp(unit, "MiB"))
		return n << 20;
	if (!strcmp(unit, "GiB"))
		return n << 30;
	return n;
}

struct drm_key {
	const char *key;
	int field;
};

/* the region names drivers use: amdgpu's vram/gtt/cpu, the generic
 * helpers' "system" and "memory" */
static const struct drm_key drm_keys[] = {
	{ "drm-memory-vram", GMT_DRM_VRAM_RESIDENT }, /* 6.1 amdgpu: resident */
	{ "drm-memory-gtt", GMT_DRM_GTT_RESIDENT },
	{ "drm-memory-cpu", GMT_DRM_CPU_RESIDENT },
	{ "drm-total-vram", GMT_DRM_VRAM_TOTAL },
	{ "drm-resident-vram", GMT_DRM_VRAM_RESIDENT },
	{ "drm-total-gtt", GMT_DRM_GTT_TOTAL },
	{ "drm-resident-gtt", GMT_DRM_GTT_RESIDENT },
	{ "drm-total-cpu", GMT_DRM_CPU_TOTAL },
	{ "drm-resident-cpu", GMT_DRM_CPU_RESIDENT },
	{ "drm-total-system", GMT_DRM_CPU_TOTAL },
	{ "drm-resident-system", GMT_DRM_CPU_RESIDENT },
	{ "drm-total-memory", GMT_DRM_CPU_TOTAL },
	{ "drm-resident-memory", GMT_DRM_CPU_RESIDENT },
	{ "amd-evicted-vram", GMT_DRM_EVICTED_VRAM },
};

bool procfs__map_line(char *line, struct procfs_map *m)
{
	unsigned long long start, end, pgoff, ino;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, m->perms, &pgoff,
		   &m->maj, &m->min, &ino, &pos) < 7 ||
	    !pos)
		return false;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->ino = ino;
	line[strcspn(line, "\n")] = 0;
	m->path = line + pos;
	return true;
}

bool procfs__parse_drm_fdinfo(const char *text, struct gmt_drm_fdinfo *out)
{
	const char *line = text;
	bool drm = false;
	size_t i;

	memset(out->bytes, 0, sizeof(out->bytes));
	out->valid = 0;
	out->client_id = 0;
	memset(out->driver, 0, sizeof(out->driver));
	while (line && *line) {
		const char *colon = strchr(line, ':'), *nl = strchr(line, '\n');
		size_t klen = colon ? (size_t)(colon - line) : 0;
		const char *v = colon ? colon + 1 : NULL;

		if (colon && (!nl || colon < nl)) {
			while (*v == ' ' || *v == '\t')
				v++;
			if (klen == 10 && !strncmp(line, "drm-driver", klen)) {
				drm = true;
				for (i = 0; i < sizeof(out->driver) - 1 && v[i] && v[i] != '\n';
				     i++)
					out->driver[i] = v[i];
			} else if (klen == 13 && !strncmp(line, "drm-client-id", klen)) {
				out->client_id = strtoull(v, NULL, 10);
			}
			for (i = 0; i < sizeof(drm_keys) / sizeof(drm_keys[0]); i++)
				if (strlen(drm_keys[i].key) == klen &&
				    !strncmp(line, drm_keys[i].key, klen)) {
					out->bytes[drm_keys[i].field] = parse_size(v);
					out->valid |= 1u << drm_keys[i].field;
				}
		}
		line = nl ? nl + 1 : NULL;
	}
	return drm;
}

/* [start, end), in ascending start order, into lo/hi (*n of max) */
static void add_range(__u64 *lo, __u64 *hi, size_t *n, size_t max, __u64 start, __u64 end)
{
	size_t k, best;

	if (!max)
		return;
	if (*n && start <= hi[*n - 1]) {
		if (end > hi[*n - 1])
			hi[*n - 1] = end;
		return;
	}
	if (*n == max) {
		for (best = 0, k = 1; k < *n; k++)
			if (lo[k] - hi[k - 1] < lo[best + 1] - hi[best])
				best = k - 1;
		hi[best] = hi[best + 1];
		memmove(lo + best + 1, lo + best + 2, (*n - best - 2) * sizeof(*lo));
		memmove(hi + best + 1, hi + best + 2, (*n - best - 2) * sizeof(*hi));
		(*n)--;
	}
	lo[*n] = start;
	hi[(*n)++] = end;
}

size_t procfs__code_ranges(__u32 pid, __u64 *lo, __u64 *hi, size_t max)
{
	char path[64], line[4096];
	struct procfs_map m;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* /proc lists mappings by address */
	while (fgets(line, sizeof(line), f))
		if (procfs__map_line(line, &m) && m.perms[2] == 'x' && m.path[0] == '/')
			add_range(lo, hi, &n, max, m.start, m.end);
	fclose(f);
	return n;
}
