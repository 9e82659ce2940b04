/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The user side of bpf/gpuapi.bpf.c (and of llama.bpf.c's uprobes): the
 * skeleton's programs handed to gpulib, which puts them on the GPU
 * libraries; made before the first target joins, started after it. */
#ifndef GMT_GPUAPI_H
#define GMT_GPUAPI_H

#include <stdbool.h>
#include "stream/event.h"

struct attach;
struct gpulib;

struct gpuapi_opts {
	int tokens;    /* enum gpulib_tokens */
	bool all_pids; /* --follow, --watch: probes for every process */
	bool quiet;
	gmt_sink_fn sink; /* PROBE and GPU_DEVICE records */
	void *ctx;
};

/* before any target joins (joining scans its libraries); NULL when the
 * gpuapi programs did not load or gpulib could not start. The attach owns
 * what it returns (attach__adopt_gpulib). */
struct gpulib *gpuapi__new(struct attach *a, const struct gpuapi_opts *o);
/* after the first target joined: the system's libraries, and a record for
 * each API without one; spawned: the target has not run yet */
void gpuapi__start(struct gpulib *g, bool spawned);

#endif
