/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The memory limit that binds a process: of its cgroup and each ancestor,
 * the one with the least room left. cgroup v2 (memory.max, memory.high),
 * or v1 where the memory controller is there (memory.limit_in_bytes). */
#ifndef GMT_CGROUP_H
#define GMT_CGROUP_H

#include <linux/types.h>
#include "gmt_events.h"

/* fills e's limit, used, file and path (not its header): 0, or -ENOENT
 * where no cgroup of pid's sets a limit, or it cannot be read */
int cgroup__mem_limit(__u32 pid, struct gmt_mem_limit *e);

#endif
