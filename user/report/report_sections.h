/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The report's sections, one block a file: each file writes its section
 * in both formats, print_X (text) beside X_json (JSON). The frames
 * (report.c, report_json.c) call them in their order; report.h says the
 * rule. A JSON writer that returns NULL gives the key null; one that takes
 * `proc` adds its keys to the process's object itself. */
#ifndef GMT_REPORT_SECTIONS_H
#define GMT_REPORT_SECTIONS_H

#include <stdio.h>
#include "model/model.h"

struct json_object;
struct findings;
struct report_opts;

/* the run as a whole, report_run.c */
void print_header(FILE *out, const struct model *m);
struct json_object *session_json(const struct model *m);
void print_damage(FILE *out, const struct report_opts *o);
struct json_object *damage_json(const struct report_opts *o);
void print_probes(FILE *out, const struct model *m);
struct json_object *probes_json(const struct model *m);
void print_lost(FILE *out, const struct model *m);
struct json_object *lost_json(const struct model *m);
void print_bounds(FILE *out, const struct model *m);
struct json_object *bounds_json(const struct model *m);
void print_events(FILE *out, const struct model *m);
struct json_object *events_json(const struct model *m);
struct json_object *meminfo_json(const struct model *m);
struct json_object *nvml_json(const struct model *m);

/* a process on the host, report_host.c */
void print_host(FILE *out, const struct model *m, const struct model_proc *p,
		const struct report_opts *o);
void host_json(struct json_object *proc, const struct model *m, const struct model_proc *p,
	       const struct report_opts *o);
void print_exit(FILE *out, const struct model *m, const struct model_proc *p);
/* how it came to be traced, how long after its start, and what that left out */
void print_traced(FILE *out, const struct model_proc *p);
void traced_json(struct json_object *proc, const struct model *m, const struct model_proc *p);
void exit_json(struct json_object *proc, const struct model *m, const struct model_proc *p);
struct json_object *mem_limit_json(const struct model_proc *p);
/* its container and pod (null when in none), its pid inside */
void print_container(FILE *out, const struct model_proc *p);
struct json_object *container_json(const struct model_proc *p);

/* what it waited on, and the files it maps, report_waits.c (NULL: no readings) */
void print_waits(FILE *out, const struct model_proc *p);
struct json_object *waits_json(const struct model_proc *p);

/* GPU APIs, report_gpu.c */
void print_gpu_devices(FILE *out, const struct model *m);
struct json_object *gpu_devices_json(const struct model *m);
void print_gpu(FILE *out, const struct model *m, const struct model_proc *p);
struct json_object *gpu_json(const struct model *m, const struct model_proc *p);

/* kernel GPU buffers and DRM fdinfo, report_bo.c */
void print_bos(FILE *out, const struct model *m);
struct json_object *bos_json(const struct model *m);
void print_drm(FILE *out, const struct model_proc *p);
struct json_object *drm_json(const struct model_proc *p);

/* HTTP requests and llama.cpp, report_req.c */
void print_requests(FILE *out, const struct model *m, const struct model_proc *p,
		    const struct findings *fs);
struct json_object *requests_json(const struct model *m, const struct model_proc *p,
				  const struct findings *fs);
/* llama.cpp's calls of the process; NULL when it made none */
struct json_object *llama_json(const struct model_proc *p);
/* its state copies (prompt-cache entries, checkpoints); NULL when none */
struct json_object *llama_state_json(const struct model_llama_state *s);
/* llama-server's memory settings; nothing (NULL) when it is not llama-server */
void print_llama_server(FILE *out, const struct model_proc *p);
struct json_object *llama_server_json(const struct model_proc *p);

/* the verdicts, report_findings.c (their sentences: analysis/words.c) */
void print_verdicts(FILE *out, const struct model *m, const struct findings *fs);
void print_evidence(FILE *out, const struct model *m, const struct findings *fs);
struct json_object *findings_json(const struct model *m, const struct findings *fs);
struct json_object *memory_by_interval_json(const struct model *m, const struct model_proc *p);
struct json_object *request_memory_json(const struct model *m, const struct model_proc *p,
					const struct model_request *r);

#endif
