// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Link sets: owns the BPF links held to be destroyed together (libbpf's,
 * and bare uprobe_multi link fds) and their destruction, a thread a link
 * (up to 64), at once: each detach may wait a grace period in the kernel, and
 * waited together those waits overlap instead of adding up. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "linkset.h"

#define DESTROY_THREADS 64

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

int linkset__add(struct linkset *s, struct bpf_link *l)
{
	if (grow((void **)&s->links, &s->links_cap, s->nr_links, sizeof(*s->links))) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	s->links[s->nr_links++] = l;
	return 0;
}

int linkset__add_fd(struct linkset *s, int fd)
{
	if (grow((void **)&s->fds, &s->fds_cap, s->nr_fds, sizeof(*s->fds))) {
		close(fd);
		return -ENOMEM;
	}
	s->fds[s->nr_fds++] = fd;
	return 0;
}

void linkset__drop(struct linkset *s, size_t nr_links, size_t nr_fds)
{
	while (s->nr_links > nr_links)
		bpf_link__destroy(s->links[--s->nr_links]);
	while (s->nr_fds > nr_fds)
		close(s->fds[--s->nr_fds]);
}

struct destroyer {
	struct linkset *const *sets;
	size_t nr_sets;
	size_t total;
	size_t next; /* atomic: the next link, counted over every set */
};

/* the i-th link, bare fds (uprobe_multi links) first: each the detach of
 * many uprobes */
static void destroy_one(struct destroyer *d, size_t i)
{
	size_t k;

	for (k = 0; k < d->nr_sets; k++) {
		struct linkset *s = d->sets[k];

		if (!s)
			continue;
		if (i < s->nr_fds) {
			close(s->fds[i]);
			return;
		}
		i -= s->nr_fds;
		if (i < s->nr_links) {
			bpf_link__destroy(s->links[i]);
			return;
		}
		i -= s->nr_links;
	}
}

static void *destroy_some(void *arg)
{
	struct destroyer *d = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&d->next, 1, __ATOMIC_RELAXED)) < d->total)
		destroy_one(d, i);
	return NULL;
}

void linkset__destroy(struct linkset *const *sets, size_t n)
{
	struct destroyer d = { .sets = sets, .nr_sets = n };
	pthread_t t[DESTROY_THREADS];
	size_t k, started = 0;

	for (k = 0; k < n; k++)
		if (sets[k])
			d.total += sets[k]->nr_links + sets[k]->nr_fds;
	/* a thread a link: each waits in the kernel, most of them in turn
	 * (perf events), the rest (uprobe_multi links) alongside */
	for (k = 0; k + 1 < d.total && k < DESTROY_THREADS; k++)
		if (!pthread_create(&t[started], NULL, destroy_some, &d))
			started++;
	destroy_some(&d);
	for (k = 0; k < started; k++)
		pthread_join(t[k], NULL);
	for (k = 0; k < n; k++) {
		if (!sets[k])
			continue;
		free(sets[k]->links);
		free(sets[k]->fds);
		*sets[k] = (struct linkset){ 0 };
	}
}
