/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* BPF links, held to be destroyed at once: libbpf's, and bare link fds
 * (uprobe_multi links, which libbpf 1.1 cannot make) */
#ifndef GMT_LINKSET_H
#define GMT_LINKSET_H

#include <stddef.h>

struct bpf_link;

struct linkset {
	struct bpf_link **links;
	size_t nr_links, links_cap;
	int *fds;
	size_t nr_fds, fds_cap;
};

/* 0, or -ENOMEM having destroyed l (or closed fd) */
int linkset__add(struct linkset *s, struct bpf_link *l);
int linkset__add_fd(struct linkset *s, int fd);
/* the last ones added, destroyed: a group that failed half way */
void linkset__drop(struct linkset *s, size_t nr_links, size_t nr_fds);
/* Every link of n sets destroyed from several threads at once, the sets
 * left empty. A detach may wait a grace period (a perf event's, in turn
 * with every other; a uprobe_multi link's, alongside others): waited
 * together, they overlap. */
void linkset__destroy(struct linkset *const *sets, size_t n);

#endif
