// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --watch -o DIR: a trace file per process, rotated; which record starts a
 * process's file, and what happens to records after its exit */
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
#define QUIET_NS 10000000000ull	    /* an exited or unstarted pid, forgotten */
#define RETAIN_NS 1000000000ull	    /* the directory looked at, at most this often */

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
	time_t born;   /* its first file's start: later files of the pid are its */
	bool started;  /* a record said what it runs: it has files */
	__u64 gone_ns; /* exited: late records of it are dropped */
	__u64 seen_ns; /* its last record, for forgetting a quiet pid */
	/* what the process's next file starts with */
	struct gmt_hdr *join, *proc, *cgroup, *env, *rss[GMT_RSS_NR];
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
	struct retain *retain;
	__u64 retained_ns;
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

/* a file of the directory: the one being written, a closed one of a
 * running process (its pid's, written since that process's first file), or
 * one of a process gone */
static enum retain_class class_of(void *ctx, const char *name, __u32 pid, time_t mtime)
{
	struct tracedir *d = ctx;
	struct pfile *f;

	HASH_FIND(hh, d->by_pid, &pid, sizeof(pid), f);
	if (!f || !f->started || f->gone_ns)
		return RETAIN_EXITED;
	if (f->w && !strcmp(f->name, name))
		return RETAIN_CURRENT;
	return mtime >= f->born ? RETAIN_RUNNING : RETAIN_EXITED;
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
	d->o.retain.dirname = o->dir;
	d->o.retain.class_of = class_of;
	d->o.retain.class_ctx = d;
	if (!(d->retain = retain__new(d->dirfd, &d->o.retain))) {
		snprintf(err, len, "out of memory");
		close(d->dirfd);
		goto fail;
	}
	retain__run(d->retain);
	return d;
fail:
	free(d);
	return NULL;
}

__u64 tracedir__budget(const struct tracedir *d)
{
	return retain__budget(d->retain);
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
	if (!f->started)
		f->born = t;
	f->started = true;
	for (i = 0; i < d->preamble.n; i++)
		put(d, f, d->preamble.e[i]);
	if (f->join)
		put(d, f, f->join);
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
	retain__run(d->retain);
	d->retained_ns = now_ns;
	return f->w ? 0 : d->err;
}

/* what a pid keeps past its exit is its number, its time and its name */
static void pfile_clear(struct pfile *f)
{
	size_t i;

	free(f->join);
	free(f->proc);
	free(f->cgroup);
	free(f->env);
	f->join = f->proc = f->cgroup = f->env = NULL;
	for (i = 0; i < GMT_RSS_NR; i++) {
		free(f->rss[i]);
		f->rss[i] = NULL;
	}
	records_free(&f->kept);
	records_free(&f->stacks);
}

static void forget(struct tracedir *d, struct pfile *f)
{
	HASH_DEL(d->by_pid, f);
	pfile_clear(f);
	free(f);
}

static struct pfile *pfile_new(struct tracedir *d, __u32 pid)
{
	struct pfile *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->pid = pid;
	HASH_ADD(hh, d->by_pid, pid, sizeof(f->pid), f);
	return f;
}

/* what a later file of the process must begin with */
static void remember(struct pfile *f, const struct gmt_hdr *e)
{
	const struct gmt_rss *r = (const void *)e;

	switch (e->type) {
	case GMT_EV_JOIN: /* how and when tracing began: before its exec's record */
		replace(&f->join, e);
		break;
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
	case GMT_EV_MODULE:
		keep(&f->stacks, e, ~0ul, STACK_BYTES_MAX);
		break;
	}
}

static bool process_gone(const struct gmt_hdr *e)
{
	return e->type == GMT_EV_EXIT && e->len >= sizeof(struct gmt_exit) &&
	       ((const struct gmt_exit *)e)->group_dead;
}

/* a record that says what a process runs: its EXEC, or its PROC with an
 * executable or a command line (a zombie's, read after its exit, has
 * neither: it starts nothing) */
static bool starts(const struct gmt_hdr *e)
{
	const struct gmt_proc *p = (const void *)e;

	if (e->type == GMT_EV_EXEC)
		return e->len >= sizeof(struct gmt_exec);
	return e->type == GMT_EV_PROC && e->len >= sizeof(*p) && (p->exe[0] || p->cmdline_len);
}

/* the file's name: the comm the start record says, else its executable's */
static void name_from(struct pfile *f, const struct gmt_hdr *e)
{
	const struct gmt_proc *p = (const void *)e;
	const struct gmt_exec *x = (const void *)e;
	char comm[GMT_COMM_LEN + 1];
	const char *path, *base;

	snprintf(comm, sizeof(comm), "%.*s", GMT_COMM_LEN,
		 e->type == GMT_EV_EXEC ? x->comm : p->comm);
	path = e->type == GMT_EV_EXEC ? x->filename : p->exe;
	if (!comm[0] && path[0]) {
		base = strrchr(path, '/');
		snprintf(comm, sizeof(comm), "%.*s", GMT_COMM_LEN, base ? base + 1 : path);
	}
	set_comm(f, comm);
}

/* a followed child: its file starts with its parent's PROC made its own
 * (a fork keeps the executable and the command line), under its name */
static void born(struct tracedir *d, const struct gmt_fork *k)
{
	struct pfile *pf, *cf;
	struct gmt_proc *p;

	if (!k->followed || k->is_thread || k->child_pid == k->hdr.pid)
		return;
	HASH_FIND(hh, d->by_pid, &k->hdr.pid, sizeof(k->hdr.pid), pf);
	if (!pf || !pf->proc || pf->gone_ns)
		return; /* the child's own PROC or EXEC will start it */
	HASH_FIND(hh, d->by_pid, &k->child_pid, sizeof(k->child_pid), cf);
	if (cf && cf->started && !cf->gone_ns)
		return;
	if (cf)
		forget(d, cf);
	if (!(p = (struct gmt_proc *)copy(pf->proc)))
		return;
	if (!(cf = pfile_new(d, k->child_pid))) {
		free(p);
		return;
	}
	p->hdr.pid = k->child_pid;
	p->hdr.tid = k->child_tid;
	p->hdr.ts_ns = k->hdr.ts_ns;
	p->ppid = k->hdr.pid;
	memcpy(p->comm, k->comm, sizeof(p->comm));
	cf->proc = &p->hdr;
	cf->seen_ns = k->hdr.ts_ns;
	name_from(cf, &p->hdr);
	start_file(d, cf, k->hdr.ts_ns);
}

int tracedir__write(struct tracedir *d, const struct gmt_hdr *e)
{
	struct pfile *f, *t;

	/* the host's records: into every file, and the start of later ones. A
	 * GPU device is the host's too, though the process whose driver the
	 * helper read first names it: the driver is read once for all */
	if (!e->pid || e->type == GMT_EV_SESSION || e->type == GMT_EV_GPU_DEVICE) {
		if (e->type == GMT_EV_SESSION || e->type == GMT_EV_PROBE ||
		    e->type == GMT_EV_GPU_DEVICE)
			keep(&d->preamble, e, PREAMBLE_MAX, 1u << 20);
		HASH_ITER(hh, d->by_pid, f, t)
		put(d, f, e);
		return d->err;
	}
	if (e->type == GMT_EV_FORK && e->len >= sizeof(struct gmt_fork))
		born(d, (const struct gmt_fork *)e);
	HASH_FIND(hh, d->by_pid, &e->pid, sizeof(e->pid), f);
	if (f && f->gone_ns && starts(e))
		forget(d, f); /* its number taken by a new process */
	else if (f && !f->started && e->type == GMT_EV_EXEC) {
		/* what was kept before was not this program's, but for the JOIN
		 * its exec sent first */
		struct gmt_hdr *join = f->join;

		f->join = NULL;
		pfile_clear(f);
		f->join = join;
	}
	HASH_FIND(hh, d->by_pid, &e->pid, sizeof(e->pid), f);
	if (!f && !(f = pfile_new(d, e->pid)))
		return d->err ? d->err : -ENOMEM;
	f->seen_ns = e->ts_ns;
	/* after its exit: dropped, never a new file */
	if (f->gone_ns)
		return d->err;
	remember(f, e);
	if (!f->started) {
		if (process_gone(e)) {
			f->gone_ns = e->ts_ns ? e->ts_ns : 1;
			pfile_clear(f);
			return d->err;
		}
		/* no file before a record says what the process runs */
		if (!starts(e))
			return d->err;
		name_from(f, e);
		start_file(d, f, e->ts_ns);
		if (e->type == GMT_EV_PROC)
			return d->err; /* the file began with it */
	}
	put(d, f, e);
	if (process_gone(e)) {
		drop(d, f, 0);
		f->gone_ns = e->ts_ns ? e->ts_ns : 1;
		pfile_clear(f);
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
		/* an exited pid is remembered while its records come, so that
		 * none starts a file; now_ns, read before the last records were
		 * drained, may be older than their stamps */
		if ((f->gone_ns || !f->started) && now_ns >= f->seen_ns + QUIET_NS) {
			forget(d, f);
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
	/* current files grow: the budget is looked at as they do */
	if (now_ns >= d->retained_ns + RETAIN_NS) {
		retain__run(d->retain);
		d->retained_ns = now_ns;
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
	/* the directory left within its limits; the files being written stay */
	retain__run(d->retain);
	HASH_ITER(hh, d->by_pid, f, t)
	{
		err = tracefile__close(f->w);
		if (err && !first)
			first = err;
		forget(d, f);
	}
	records_free(&d->preamble);
	retain__free(d->retain);
	close(d->dirfd);
	free(d);
	return first;
}
