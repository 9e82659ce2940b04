/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* NVML samples through the gpumemtrace-nvml helper beside the binary: each
 * GPU's total and free memory and each traced process's share, as the
 * driver counts it */
#ifndef GMT_NVML_H
#define GMT_NVML_H

#include "stream/event.h"

struct nvml;

/* NULL, with why in `why`, when there is no helper or no NVIDIA driver */
struct nvml *nvml__start(char *why, size_t size);
/* one sample: a GMT_EV_NVML record per device and process in pids */
void nvml__sample(struct nvml *n, const __u32 *pids, size_t nr, gmt_sink_fn sink, void *ctx);
void nvml__stop(struct nvml *n);

#endif
