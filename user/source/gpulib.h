/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* GPU API libraries in the target: find them (loaded at start, dlopen'ed
 * later, or on the system before the target loads them), tell which API each
 * serves, and put the gpuapi uprobes on their allocation functions. Vulkan
 * drivers are asked for their entry points and memory types through the
 * gpumemtrace-vkinfo helper. */
#ifndef GMT_GPULIB_H
#define GMT_GPULIB_H

#include <stdbool.h>
#include <sys/types.h>
#include "stream/event.h"

struct gpulib;
struct bpf_program;

/* llama.cpp's per-token probes (llama_decode, llama_encode,
 * llama_synchronize): a trap on every decode step */
enum gpulib_tokens {
	GPULIB_TOKENS_AUTO = 0, /* off for llama-server (its responses' timings say), else on */
	GPULIB_TOKENS_ON,
	GPULIB_TOKENS_OFF,
};

struct gpulib_opts {
	pid_t pid;
	enum gpulib_tokens tokens;
	bool all_pids;			 /* -f: probes for every process, BPF keeps the targets */
	bool quiet;			 /* no "attached" lines on stderr */
	struct bpf_program *enter, *ret; /* GPU API calls */
	struct bpf_program *llama_enter, *llama_ret; /* llama.cpp's decode calls */
	struct bpf_program *llama_mark;		     /* those timed by their entry */
	struct bpf_program *llama_state;	     /* its state copies: their sizes */
	bool uprobe_multi; /* the programs were loaded for uprobe_multi links */
	gmt_sink_fn sink;  /* PROBE and GPU_DEVICE records go here */
	void *ctx;
};

struct gpulib *gpulib__new(const struct gpulib_opts *o);
/* the system's copies of the usual libraries, before the target maps them:
 * uprobes on a file apply from the moment it is mapped; and the Vulkan
 * drivers its manifests name, for a command not started yet (spawned) or
 * a target with the Vulkan loader and no driver yet */
void gpulib__preattach(struct gpulib *g, bool spawned);
/* attach to GPU libraries newly mapped by pid; cheap when nothing changed */
void gpulib__scan(struct gpulib *g, __u32 pid);
/* pid's first Vulkan call: the drivers asked before it loaded them are
 * said (their devices emitted) before the call is, where its maps show
 * them or, when it is gone, all of them (its loader loaded them) */
void gpulib__vulkan_call(struct gpulib *g, __u32 pid);
/* Vulkan drivers are asked by a helper process while events go on being
 * read: gpulib__fd is readable when one answers, gpulib__service attaches
 * those that answered or ran out of time, gpulib__drain waits for them all */
int gpulib__fd(const struct gpulib *g);
void gpulib__service(struct gpulib *g);
void gpulib__drain(struct gpulib *g);
/* one record for each API that has no library yet */
void gpulib__summary(struct gpulib *g);
void gpulib__free(struct gpulib *g);

struct linkset;
/* the probes' links, to be destroyed with others at once (gpulib__free
 * destroys those left) */
struct linkset *gpulib__links(struct gpulib *g);

#endif
