/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* what the BPF side needs to read a GPU API call's arguments: its cookie */
#ifndef GMT_GPUPROBES_H
#define GMT_GPUPROBES_H

#include <linux/types.h>

/* the BPF cookie of function `func` (stream/gpufuncs.h's index): its api,
 * index, argument shape, operation and kind; -1 when it has no shape */
int gpuprobes__cookie(unsigned int func, __u64 *cookie);

#endif
