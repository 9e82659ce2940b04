/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the model's own: where each kind of wire record is read (model*.c) */
#ifndef GMT_MODEL_INT_H
#define GMT_MODEL_INT_H

#include "model.h"

void model_gpu__add(struct model *m, struct model_proc *p, const struct gmt_gpu_call *e);
void model_bo__add(struct model *m, const struct gmt_bo *e);
void model_drm__add(struct model_proc *p, const struct gmt_drm_fdinfo *e);
void model_req__add(struct model_proc *p, const struct gmt_http *e);
void model_req__timings(struct model_proc *p, const struct gmt_timings *e);
void model_req__decode(struct model_proc *p, const struct gmt_decode *e);
void model_waits__proc(struct model_proc *p, const struct gmt_proc_stat *e);
void model_waits__host(struct model *m, const struct gmt_host_stat *e);
void model_waits__files(struct model_proc *p, const struct gmt_file_rss *e);

#endif
