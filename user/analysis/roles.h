/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What llama.cpp's memory is for, from the frames of the stack that made
 * it: model weights, KV cache, compute buffers, output buffers, prompt
 * cache, multimodal encoder, CUDA graphs, CUDA kernel code. The innermost
 * frame that names one decides. */
#ifndef GMT_ROLES_H
#define GMT_ROLES_H

#include "model/model.h"

/* the role of the memory stack_id made; NULL when its frames name none */
const char *roles__of(const struct model *m, __u32 stack_id);

#endif
