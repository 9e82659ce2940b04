// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GPU API probes, the user side of bpf/gpuapi.bpf.c and of llama.bpf.c's
 * uprobes: owns which of the skeleton's programs gpulib attaches, and the
 * order of its start. Keeps no state: the gpulib it makes is the attach's,
 * and the session holds the pointer. */
#include "gpuapi.h"
#include "attach.h"
#include "gpulib.h"
#include "gpumemtrace.skel.h"

struct gpulib *gpuapi__new(struct attach *a, const struct gpuapi_opts *o)
{
	struct gmt_bpf *skel = attach__skel(a);
	struct gpulib_opts go;
	struct gpulib *g;

	if (!attach__gpu_ready(a))
		return NULL;
	go = (struct gpulib_opts){
		.pid = attach__target(a),
		.tokens = o->tokens,
		.all_pids = o->all_pids,
		.quiet = o->quiet,
		.enter = skel->progs.gpu_enter,
		.ret = skel->progs.gpu_return,
		.llama_enter = skel->progs.llama_enter,
		.llama_ret = skel->progs.llama_return,
		.llama_mark = skel->progs.llama_mark,
		.llama_state = skel->progs.llama_state,
		.uprobe_multi = attach__uprobe_multi(a),
		.sink = o->sink,
		.ctx = o->ctx,
	};
	g = gpulib__new(&go);
	if (g)
		attach__adopt_gpulib(a, g);
	return g;
}

void gpuapi__start(struct gpulib *g, bool spawned)
{
	if (!g)
		return;
	/* its drivers probed before tracing is said to have begun: those it
	 * has mapped, and those its Vulkan loader would load, which it may
	 * allocate from as soon as it has loaded them (a command started
	 * here starts after this) */
	gpulib__preattach(g, spawned);
	gpulib__drain(g);
	gpulib__summary(g);
}
