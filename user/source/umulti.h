/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* uprobe_multi links: one BPF link for many uprobes on one file (Linux
 * 6.6). Each perf-event uprobe waits a grace period of its own when it goes,
 * in turn with every other perf event (seconds at exit for a GPU library's
 * dozens); a uprobe_multi link waits one. A program is loaded for one kind
 * or the other, so the choice is made before load, once per run. */
#ifndef GMT_UMULTI_H
#define GMT_UMULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* BPF_TRACE_UPROBE_MULTI and BPF_F_UPROBE_MULTI_RETURN (Linux 6.6,
 * include/uapi/linux/bpf.h): Debian 12's headers (6.1) and libbpf (1.1)
 * have neither */
#define UMULTI_ATTACH_TYPE 48
#define UMULTI_RETURN (1U << 0)

/* Whether this kernel takes uprobe_multi links whose pid filter keeps a
 * whole process (6.6's kept only one thread: such a kernel is treated as
 * one without them). Probed once; GMT_NO_UPROBE_MULTI=1 (a test knob) says
 * no. NULL when it does, else why not. */
const char *umulti__missing(void);
/* A link of prog_fd on cnt offsets of the file at path, each with its
 * cookie; return probes when ret; pid 0 for every process. The link's fd,
 * or -errno. */
int umulti__attach(int prog_fd, const char *path, const __u64 *offsets, const __u64 *cookies,
		   size_t cnt, bool ret, int pid);

#endif
