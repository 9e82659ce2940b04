/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* small reads from /proc/PID */
#ifndef GMT_PROCFS_H
#define GMT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* /proc/PID/NAME as one string, NULs between arguments turned into spaces;
 * empty when it cannot be read */
void procfs__read(__u32 pid, const char *name, char *buf, size_t size);

struct gmt_drm_fdinfo;
/* the DRM counters of one fdinfo text (6.1 amdgpu's drm-memory-*, the
 * drm-total-/drm-resident-* of 6.5 on, amd-evicted-vram); false when it is
 * not a DRM file */
bool procfs__parse_drm_fdinfo(const char *text, struct gmt_drm_fdinfo *out);

#endif
