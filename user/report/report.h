/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the report, as text or JSON (fields in docs/json.md), and the Prometheus
 * text, from the model and the one analysis pass its caller made
 * (findings__build).
 *
 * The rule of report/: a section of the report is one file that writes it
 * in both formats, text beside JSON; a format is one file that holds only
 * its frame, which sections in what order; an export is one file.
 *   sections  report_run (the session, probes, lost events, caps),
 *             report_host (a process's host memory, threads and exit),
 *             report_gpu, report_bo (kernel buffers, DRM fdinfo),
 *             report_req (requests, llama.cpp), report_findings (the
 *             verdicts; their sentences in analysis/words), all listed in
 *             report_sections.h
 *   frames    report.c (text), report_json.c (JSON)
 *   exports   report_prom.c (Prometheus: the processes still running),
 *             perfetto.c (a timeline for ui.perfetto.dev)
 *             html.c (one page: the JSON sections drawn by html_page.html)
 *   shared    report_data (names, figures and stacks every section uses)
 * Sections include report_data.h and report_sections.h, never a frame;
 * nothing here serves, schedules or analyses (the /metrics server: serve/). */
#ifndef GMT_REPORT_H
#define GMT_REPORT_H

#include <stdio.h>
#include "model/model.h"

struct report_opts {
	/* problems found in a damaged trace file, shown with the report */
	const char (*notes)[160];
	unsigned int nr_notes;
	/* mappings listed per process */
	unsigned int max_mappings;
	/* rows of the RSS timeline */
	unsigned int timeline_rows;
};

struct findings;
void report__text(FILE *out, const struct model *m, const struct findings *fs,
		  const struct report_opts *opts);
int report__json(FILE *out, const struct model *m, const struct findings *fs,
		 const struct report_opts *opts);
/* the Prometheus text format: the processes still running (report_prom.c) */
void report__prometheus(FILE *out, const struct model *m, const struct findings *fs);

#endif
