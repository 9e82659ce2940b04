// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the --json report's frame: which sections, under what keys, in what
 * order (report.h); every field is described in docs/json.md */
#include <json-c/json.h>
#include "common/json_util.h"
#include <stdlib.h>
#include "report.h"
#include "report_data.h"
#include "report_sections.h"

static struct json_object *proc_json(const struct model *m, const struct model_proc *p,
				     const struct findings *fs, const struct report_opts *opts)
{
	struct json_object *o = json_object_new_object();

	add(o, "pid", u64(p->pid));
	add(o, "ppid", u64(p->ppid));
	add(o, "comm", str(p->comm));
	add(o, "exe", str(p->exe));
	add(o, "cgroup", p->cgroup[0] ? str(p->cgroup) : NULL);
	add(o, "ns_pid", p->ns_pid ? u64(p->ns_pid) : NULL);
	add(o, "container", container_json(p));
	add(o, "memory_limit", mem_limit_json(p));
	add(o, "llama_state", llama_state_json(&p->lstate));
	add(o, "cmdline", str(p->cmdline));
	add(o, "followed", json_object_new_boolean(p->followed));
	traced_json(o, m, p);
	exit_json(o, m, p);
	host_json(o, m, p, opts);
	add(o, "waits", waits_json(p));
	add(o, "gpu", gpu_json(m, p));
	add(o, "drm_fdinfo", drm_json(p));
	add(o, "tls_connections", u64(p->tls_conns));
	add(o, "requests", requests_json(m, p, fs));
	add(o, "requests_summarized", u64(p->reqs_summarized));
	add(o, "llama", llama_json(p));
	add(o, "llama_server", llama_server_json(p));
	add(o, "memory_by_interval", memory_by_interval_json(m, p));
	return o;
}

int report__json(FILE *out, const struct model *m, const struct findings *fs,
		 const struct report_opts *opts)
{
	struct json_object *root = json_object_new_object(), *a;
	struct model_proc **procs = procs_in_order(m);
	size_t j;

	json_c_set_serialization_double_format("%.6g", JSON_C_OPTION_THREAD);
	add(root, "tool", str("gpumemtrace"));
	add(root, "version", str(m->tool_version));
	add(root, "session", session_json(m));
	add(root, "findings", findings_json(m, fs));
	add(root, "trace_file_damage", damage_json(opts));
	add(root, "probes", probes_json(m));
	add(root, "gpu_devices", gpu_devices_json(m));
	a = json_object_new_array();
	for (j = 0; procs && j < m->nr_procs; j++)
		json_object_array_add(a, proc_json(m, procs[j], fs, opts));
	add(root, "processes", a);
	add(root, "kernel_buffers", bos_json(m));
	add(root, "host_memory", meminfo_json(m));
	add(root, "nvml", nvml_json(m));
	add(root, "lost_events", lost_json(m));
	add(root, "bounded", bounds_json(m));
	add(root, "events", events_json(m));
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	free(procs);
	return 0;
}
