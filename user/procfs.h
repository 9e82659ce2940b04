/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* small reads from /proc/PID */
#ifndef GMT_PROCFS_H
#define GMT_PROCFS_H

#include <stddef.h>
#include <linux/types.h>

/* /proc/PID/NAME as one string, NULs between arguments turned into spaces;
 * empty when it cannot be read */
void procfs__read(__u32 pid, const char *name, char *buf, size_t size);

#endif
