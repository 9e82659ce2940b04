/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What a process waits on (faults, a CPU, its quota, pressure) and the
 * host's paging and run queue: the kernel's counters, each interval */
#ifndef GMT_WAITS_H
#define GMT_WAITS_H

#include <stdbool.h>
#include <linux/types.h>
#include "gmt_events.h"

/* fills e (not its header) for pid: 0, -1 when its stat is gone */
int waits__proc(__u32 pid, struct gmt_proc_stat *e);
/* fills e (not its header) */
void waits__host(struct gmt_host_stat *e);
/* the host's PSI totals (microseconds); false where /proc/pressure is not */
bool waits__host_psi(__u64 *mem_some, __u64 *mem_full, __u64 *cpu_some, __u64 *io_some,
		     __u64 *io_full);
/* a PSI file's "some" and "full" totals; false when it has neither */
bool waits__psi(const char *text, __u64 *some, __u64 *full);

#endif
