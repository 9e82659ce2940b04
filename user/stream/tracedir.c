// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --watch -o DIR: a trace file per process, rotated */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>
#include "common/outfile.h"
#include "tracedir.h"

#define PREAMBLE_MAX 256	    /* session, probes, devices of the host */
#define KEPT_MAX 64		    /* a process's own probes and devices */
#define STACK_BYTES_MAX (16u << 20) /* a process's stacks kept for its next file */
#define GONE_NS 10000000000ull	    /* an exited process's late records, dropped */

/* copies of records */
struct records {
	struct gmt_hdr **e;
	size_t n, bytes;
};

struct pfile {
	__u32 pid;
	char comm[16];
	char name[64];
	struct tracefile_writer *w;
	__u64 opened_ns;
	__u64 gone_ns; /* exited: late records of it are dropped */
	/* what the process's next file starts with */
	struct gmt_hdr *proc, *cgroup, *env, *rss[GMT_RSS_NR];
	struct records kept, stacks;
	UT_hash_handle hh;
};

struct tracedir {
	struct tracedir_opts o;
	struct tracefile_info info;
	int dirfd;
	int err;
	unsigned int files;
	struct records preamble;
	struct pfile *by_pid;
};

bool tracedir__is_dir(const char *path)
{
	struct stat st;
	size_t n = strlen(path);

	return (n && path[n - 1] == '/') || (!stat(path, &st) && S_ISDIR(st.st_mode));
}

static struct gmt_hdr *copy(const struct gmt_hdr *e)
{
	struct gmt_hdr *c = malloc(e->len);

	if (c)
		memcpy(c, e, e->len);
	return c;
}

static void replace(struct gmt_hdr **slot, const struct gmt_hdr *e)
{
	struct gmt_hdr *c = copy(e);

	if (c) {
		free(*slot);
		*slot = c;
	}
}

static void keep(struct records *r, const struct gmt_hdr *e, size_t max_n, size_t max_bytes)
{
	struct gmt_hdr **grown, *c;

	if (r->n >= max_n || r->bytes + e->len > max_bytes)
		return;
	grown = realloc(r->e, (r->n + 1) * sizeof(*r->e));
	if (!grown)
		return;
	r->e = grown;
	if (!(c = copy(e)))
		return;
	r->e[r->n++] = c;
	r->bytes += e->len;
}

static void records_free(struct records *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->e[i]);
	free(r->e);
	memset(r, 0, sizeof(*r));
}

struct tracedir *tracedir__open(const struct tracedir_opts *o, char *err, size_t len)
{
	struct tracedir *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	d->o = *o;
	d->info = *o->info;
	/* never through a planted symlink */
	d->dirfd = outfile__dir(o->dir, err, len);
	if (d->dirfd < 0)
		goto fail;
	return d;
fail:
	free(d);
	return NULL;
}

/* COMM.YYYYmmddTHHMMSS.PID[.N].gmt: is `name` one, of this comm? */
static bool ours(const char *name, const char *comm)
{
	size_t n = strlen(comm), i;
	const char *p = name + n + 1;

	if (strncmp(name, comm, n) || name[n] != '.')
		return false;
	for (i = 0; i < 15; i++)
		if (i == 8 ? p[i] != 'T' : (p[i] < '0' || p[i] > '9'))
			return false;
	p += 15;
	while (*p == '.' && p[1] >= '0' && p[1] <= '9')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	return !strcmp(p, ".gmt");
}

struct aged {
	char *name;
	struct timespec mtime;
};

/* oldest first: by the last write, which a name's second cannot order */
static int by_age(const void *a, const void *b)
{
	const struct aged *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool open_now(const struct tracedir *d, const char *name)
{
	const struct pfile *f, *t;

	HASH_ITER(hh, d->by_pid, f, t)
	if (f->w && !strcmp(f->name, name))
		return true;
	return false;
}

/* the oldest files of a name past --keep go; only the tracer's own: in a
 * directory others may write, files planted under our names (and dated
 * ahead) must not make it remove its recordings, nor be removed by it */
static void prune(struct tracedir *d, const char *comm)
{
	struct aged *files = NULL, *grown;
	size_t n = 0, i, extra;
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int fd = openat(d->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(dir))) {
		if (!ours(de->d_name, comm) ||
		    fstatat(d->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (!(grown = realloc(files, (n + 1) * sizeof(*files))))
			break;
		files = grown;
		if (!(files[n].name = strdup(de->d_name)))
			break;
		files[n++].mtime = st.st_mtim;
	}
	closedir(dir);
	qsort(files, n, sizeof(*files), by_age);
	extra = n > d->o.keep ? n - d->o.keep : 0;
	for (i = 0; i < n; i++) {
		if (i < extra && !open_now(d, files[i].name))
			unlinkat(d->dirfd, files[i].name, 0);
		free(files[i].name);
	}
	free(files);
}

static void set_comm(struct pfile *f, const char *comm)
{
	size_t i;

	for (i = 0; comm[i] && comm[i] != '\n' && i + 1 < sizeof(f->comm); i++)
		f->comm[i] = (comm[i] >= 'a' && comm[i] <= 'z') ||
					     (comm[i] >= 'A' && comm[i] <= 'Z') ||
					     (comm[i] >= '0' && comm[i] <= '9') || comm[i] == '-' ||
					     comm[i] == '_' ?
				     comm[i] :
				     '_';
	f->comm[i] = 0;
	if (!i)
		snprintf(f->comm, sizeof(f->comm), "pid");
}

/* closes f's file; the first error of all is what the caller hears of.
 * A file that failed is lost from there: the others go on */
static void drop(struct tracedir *d, struct pfile *f, int err)
{
	int cerr = tracefile__close(f->w);

	f->w = NULL;
	if (!d->err)
		d->err = err ? err : cerr;
}

static int put(struct tracedir *d, struct pfile *f, const struct gmt_hdr *e)
{
	int err;

	if (!f->w)
		return 0;
	err = tracefile__write(f->w, e);
	if (err)
		drop(d, f, err);
	return err;
}

/* a new file for f, which begins as a -p attach would: the host's records,
 * then what is known of the process */
static int start_file(struct tracedir *d, struct pfile *f, __u64 now_ns)
{
	struct tracefile_info info = d->info;
	char when[20];
	time_t t = time(NULL);
	struct tm tm;
	size_t i;
	int k;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &tm);
	for (k = 1; k < 100 && !f->w; k++) {
		if (k == 1)
			snprintf(f->name, sizeof(f->name), "%s.%s.%u.gmt", f->comm, when, f->pid);
		else
			snprintf(f->name, sizeof(f->name), "%s.%s.%u.%d.gmt", f->comm, when, f->pid,
				 k);
		f->w = tracefile__create_at(d->dirfd, f->name, &info);
		if (!f->w && errno != EEXIST)
			break;
	}
	if (!f->w) {
		if (!d->err)
			d->err = -(errno ? errno : EIO);
		return d->err;
	}
	d->files++;
	f->opened_ns = now_ns;
	for (i = 0; i < d->preamble.n; i++)
		put(d, f, d->preamble.e[i]);
	if (f->proc)
		put(d, f, f->proc);
	if (f->cgroup)
		put(d, f, f->cgroup);
	if (f->env)
		put(d, f, f->env);
	for (i = 0; i < f->kept.n; i++)
		put(d, f, f->kept.e[i]);
	for (i = 0; i < GMT_RSS_NR; i++)
		if (f->rss[i])
			put(d, f, f->rss[i]);
	for (i = 0; i < f->stacks.n; i++)
		put(d, f, f->stacks.e[i]);
	prune(d, f->comm);
	return f->w ? 0 : d->err;
}

static void pfile_free(struct pfile *f)
{
	size_t i;

	free(f->proc);
	free(f->cgroup);
	free(f->env);
	for (i = 0; i < GMT_RSS_NR; i++)
		free(f->rss[i]);
	records_free(&f->kept);
	records_free(&f->stacks);
	free(f);
}

static struct pfile *pfile_of(struct tracedir *d, const struct gmt_hdr *e)
{
	struct pfile *f;
	char comm[32];

	HASH_FIND(hh, d->by_pid, &e->pid, sizeof(e->pid), f);
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->pid = e->pid;
	if (e->type == GMT_EV_PROC && e->len >= sizeof(struct gmt_proc)) {
		snprintf(comm, sizeof(comm), "%.*s", GMT_COMM_LEN,
			 ((const struct gmt_proc *)e)->comm);
	} else if (d->o.comm_of) {
		d->o.comm_of(e->pid, comm, sizeof(comm));
	} else {
		comm[0] = 0;
	}
	set_comm(f, comm);
	HASH_ADD(hh, d->by_pid, pid, sizeof(f->pid), f);
	start_file(d, f, e->ts_ns);
	return f;
}

/* what a later file of the process must begin with */
static void remember(struct pfile *f, const struct gmt_hdr *e)
{
	const struct gmt_rss *r = (const void *)e;

	switch (e->type) {
	case GMT_EV_PROC:
		replace(&f->proc, e);
		break;
	case GMT_EV_CGROUP:
		replace(&f->cgroup, e);
		break;
	case GMT_EV_PROC_ENV:
		replace(&f->env, e);
		break;
	case GMT_EV_PROBE:
	case GMT_EV_GPU_DEVICE:
		keep(&f->kept, e, KEPT_MAX, STACK_BYTES_MAX);
		break;
	case GMT_EV_RSS:
		if (e->len >= sizeof(*r) && r->member < GMT_RSS_NR)
			replace(&f->rss[r->member], e);
		break;
	case GMT_EV_STACK:
		keep(&f->stacks, e, ~0ul, STACK_BYTES_MAX);
		break;
	}
}

static bool process_gone(const struct gmt_hdr *e)
{
	return e->type == GMT_EV_EXIT && e->len >= sizeof(struct gmt_exit) &&
	       ((const struct gmt_exit *)e)->group_dead;
}

int tracedir__write(struct tracedir *d, const struct gmt_hdr *e)
{
	struct pfile *f, *t;

	/* the host's records: into every file, and the start of later ones */
	if (!e->pid || e->type == GMT_EV_SESSION) {
		if (e->type == GMT_EV_SESSION || e->type == GMT_EV_PROBE ||
		    e->type == GMT_EV_GPU_DEVICE)
			keep(&d->preamble, e, PREAMBLE_MAX, 1u << 20);
		HASH_ITER(hh, d->by_pid, f, t)
		put(d, f, e);
		return d->err;
	}
	f = pfile_of(d, e);
	if (!f)
		return d->err ? d->err : -ENOMEM;
	if (f->gone_ns) {
		if (e->type != GMT_EV_PROC)
			return d->err;
		/* its number taken by a new process */
		HASH_DEL(d->by_pid, f);
		pfile_free(f);
		if (!(f = pfile_of(d, e)))
			return d->err ? d->err : -ENOMEM;
	}
	remember(f, e);
	put(d, f, e);
	if (process_gone(e)) {
		drop(d, f, 0);
		f->gone_ns = e->ts_ns ? e->ts_ns : 1;
	} else if (f->w && tracefile__bytes(f->w) >= d->o.max_bytes) {
		drop(d, f, 0);
		start_file(d, f, e->ts_ns);
	}
	return d->err;
}

int tracedir__tick(struct tracedir *d, __u64 now_ns)
{
	struct pfile *f, *t;
	int err;

	HASH_ITER(hh, d->by_pid, f, t)
	{
		/* now_ns, read before the last records were drained, may be
		 * older than their stamps */
		if (f->gone_ns && now_ns >= f->gone_ns + GONE_NS) {
			HASH_DEL(d->by_pid, f);
			pfile_free(f);
			continue;
		}
		if (!f->w)
			continue;
		if (d->o.max_age_ns && now_ns >= f->opened_ns + d->o.max_age_ns) {
			drop(d, f, 0);
			start_file(d, f, now_ns);
			continue;
		}
		err = tracefile__tick(f->w, now_ns);
		if (err)
			drop(d, f, err);
	}
	return d->err;
}

unsigned int tracedir__files(const struct tracedir *d)
{
	return d ? d->files : 0;
}

int tracedir__close(struct tracedir *d)
{
	struct pfile *f, *t;
	int err, first;

	if (!d)
		return 0;
	first = d->err;
	HASH_ITER(hh, d->by_pid, f, t)
	{
		err = tracefile__close(f->w);
		if (err && !first)
			first = err;
		HASH_DEL(d->by_pid, f);
		pfile_free(f);
	}
	records_free(&d->preamble);
	close(d->dirfd);
	free(d);
	return first;
}
