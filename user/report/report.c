// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the text report's frame: which sections, in what order (report.h) */
#include <stdlib.h>
#include "report.h"
#include "report_data.h"
#include "report_sections.h"

static void print_proc(FILE *out, const struct model *m, const struct model_proc *p,
		       const struct report_opts *o)
{
	fprintf(out, "\nProcess %u (%s)%s\n", p->pid, p->comm[0] ? p->comm : "?",
		p->followed ? ", a followed child" : "");
	if (p->exe[0])
		fprintf(out, "  exe      %s\n", p->exe);
	if (p->cmdline && p->cmdline[0])
		fprintf(out, "  command  %s\n", p->cmdline);
	print_container(out, p);
	print_traced(out, p);
	print_llama_server(out, p);
	print_host(out, m, p, o);
	print_waits(out, p);
	print_gpu(out, m, p);
	print_drm(out, p);
	print_exit(out, m, p);
}

void report__text(FILE *out, const struct model *m, const struct findings *fs,
		  const struct report_opts *o)
{
	struct model_proc **procs = procs_in_order(m);
	size_t j;

	print_header(out, m);
	print_damage(out, o);
	print_verdicts(out, m, fs);
	for (j = 0; procs && j < m->nr_procs; j++)
		print_requests(out, m, procs[j], fs);
	print_evidence(out, m, fs);
	print_probes(out, m);
	print_gpu_devices(out, m);
	for (j = 0; procs && j < m->nr_procs; j++)
		print_proc(out, m, procs[j], o);
	if (!m->nr_procs)
		fprintf(out, "\nNo events from the target were seen.\n");
	print_bos(out, m);
	print_lost(out, m);
	print_bounds(out, m);
	print_events(out, m);
	free(procs);
}
