/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Vulkan driver manifests: the drivers (ICDs) a target's Vulkan loader
 * would load, found the loader's way before it loads them, so that the
 * tracer can probe them before the target's first allocation */
#ifndef GMT_VKICD_H
#define GMT_VKICD_H

#include <limits.h>
#include <stddef.h>
#include <linux/types.h>

#define VKICD_MAX 16

/* the drivers' library_path, as pid sees them in its root: an absolute
 * path, or a bare file name for the dynamic linker to find (the caller's
 * job). From VK_DRIVER_FILES or VK_ICD_FILENAMES in pid's environment
 * where set (files or directories), else the system's manifest
 * directories, and VK_ADD_DRIVER_FILES; each manifest read as pid, in its
 * root, bounded. The number found, at most max. */
size_t vkicd__drivers(__u32 pid, char (*paths)[PATH_MAX], size_t max);

#endif
