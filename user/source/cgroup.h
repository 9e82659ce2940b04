/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The memory limit that binds a process: of its cgroup and each ancestor,
 * the one with the least room left. cgroup v2 (memory.max, memory.high),
 * or v1 where the memory controller is there (memory.limit_in_bytes). And
 * the cgroup that names its container, its pod's names on this node. */
#ifndef GMT_CGROUP_H
#define GMT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "gmt_events.h"

/* fills e's limit, used, file and path (not its header): 0, or -ENOENT
 * where no cgroup of pid's sets a limit, or it cannot be read */
int cgroup__mem_limit(__u32 pid, struct gmt_mem_limit *e);

/* the CPU quota that binds pid (of its cgroup and ancestors, the fewest
 * CPUs) and that cgroup's throttling, and the memory, CPU and I/O pressure
 * of its v2 cgroup (else the host's), into e */
void cgroup__cpu(__u32 pid, struct gmt_proc_stat *e);
/* of pid's memory cgroup (not the root), pages evicted and needed again
 * (memory.stat's workingset_refault_*), into e */
void cgroup__mem_stat(__u32 pid, struct gmt_proc_stat *e);

/* of /proc/PID/cgroup's text (buf, changed), the path that names the
 * process's container: the v2 line's, else a v1 hierarchy's that does
 * (memory's first), else the v2 line's or memory's; false when none */
bool cgroup__pick(char *buf, char *out, size_t size);
/* the name and namespace of the pod of uid, from the kubelet's log
 * directories (/var/log/pods/<namespace>_<name>_<uid>; GMT_PODS_DIR moves
 * it, for tests): false when the node has none */
bool cgroup__pod_names(const char *uid, char *name, size_t name_size, char *ns, size_t ns_size);

#endif
