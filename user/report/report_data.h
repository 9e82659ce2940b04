/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* figures both report formats show, computed once from the model */
#ifndef GMT_REPORT_DATA_H
#define GMT_REPORT_DATA_H

#include "model/model.h"
#include "report.h"

struct member_stats {
	bool seen;
	__s64 start, end, peak;
	double rate; /* bytes per second over the traced time */
	size_t events;
};

extern const char *const rss_member_names[MODEL_RSS_NR];
extern const char *const fault_class_names[MODEL_FAULT_NR];
extern const char *const source_names[MODEL_SRC_NR];
/* display order of RSS members */
extern const int rss_member_order[MODEL_RSS_NR];

const char *probe_status_name(__u32 status);
const char *end_reason_text(__u32 reason);
const char *end_reason_key(__u32 reason);
const char *fd_class_name(__u32 cls);

void member_stats(const struct model *m, const struct series *s, struct member_stats *st);
/* processes in report order: the target first; caller frees */
struct model_proc **procs_in_order(const struct model *m);
/* indices of p->maps, largest first; caller frees */
size_t *mappings_by_size(const struct model_proc *p);
/* timestamp of timeline row i of n */
__u64 timeline_ts(const struct model *m, const struct model_proc *p, unsigned int i,
		  unsigned int n);
unsigned int timeline_rows(const struct model *m, const struct model_proc *p,
			   const struct report_opts *o);
__u64 lost_total(const struct model *m);
/* whether faults were told apart by class (the fexit probe attached) */
bool faults_classified(const struct model *m);

/* live GPU allocations grouped by stack, API and kind */
struct gpu_stack_row {
	__u32 stack_id;
	__u8 api, kind;
	__u64 bytes, count;
};

/* rows biggest first; caller frees; NULL when there are none */
struct gpu_stack_row *gpu_stacks_by_live(const struct model_gpu *g, size_t *n);
/* the sum of live bytes over every API and kind that holds memory */
__s64 gpu_live_total(const __s64 live[MODEL_API_NR][MODEL_KIND_NR]);

/* the GPU sections, report_gpu.c */
void print_stack(FILE *out, const struct model *m, __u32 id);
void print_gpu(FILE *out, const struct model *m, const struct model_proc *p);
void print_gpu_devices(FILE *out, const struct model *m);
struct json_object;
struct json_object *stack_json(const struct model *m, __u32 id);
struct json_object *gpu_json(const struct model *m, const struct model_proc *p);
struct json_object *gpu_devices_json(const struct model *m);
/* kernel GPU buffers, report_bo.c */
void print_bos(FILE *out, const struct model *m);
struct json_object *bos_json(const struct model *m);
void print_drm(FILE *out, const struct model_proc *p);
/* HTTP requests, report_req.c */
struct findings;
void print_requests(FILE *out, const struct model *m, const struct model_proc *p,
		    const struct findings *fs);
struct json_object *requests_json(const struct model *m, const struct model_proc *p);
/* llama.cpp's calls of the process; NULL when it made none */
struct json_object *llama_json(const struct model_proc *p);
/* llama-server's memory settings; nothing (NULL) when it is not llama-server */
void print_llama_server(FILE *out, const struct model_proc *p);
struct json_object *llama_server_json(const struct model_proc *p);
struct json_object *drm_json(const struct model_proc *p);

/* the verdicts, report_findings.c */
struct findings;
void print_verdicts(FILE *out, const struct model *m, const struct findings *fs);
void print_evidence(FILE *out, const struct model *m, const struct findings *fs);
struct json_object *findings_json(const struct model *m, const struct findings *fs);
struct json_object *memory_by_interval_json(const struct model *m, const struct model_proc *p);
struct json_object *request_memory_json(const struct model *m, const struct model_proc *p,
					const struct model_request *r);

#endif
