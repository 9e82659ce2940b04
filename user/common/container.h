/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which container a cgroup path names: its id, its runtime and, under
 * Kubernetes, its pod's uid. Pure: the path is all it reads. */
#ifndef GMT_CONTAINER_H
#define GMT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#define CONTAINER_ID_LEN 65  /* 64 hex digits */
#define CONTAINER_UID_LEN 37 /* 8-4-4-4-12 */

struct container {
	char id[CONTAINER_ID_LEN];	 /* "" when the path names none */
	const char *runtime;		 /* "podman", "docker", ...; NULL with no id */
	char pod_uid[CONTAINER_UID_LEN]; /* "" when not in a pod */
};

/* fills c from a cgroup path ("/libpod_parent/libpod-<id>"); true when it
 * names a container or a pod */
bool container__parse(const char *path, struct container *c);

/* whether s[0..n) may be a Kubernetes name: a DNS label (dots false: a
 * namespace, up to 63) or subdomain (a pod, up to 253) of [a-z0-9.-] */
bool container__name_ok(const char *s, size_t n, bool dots);

#endif
