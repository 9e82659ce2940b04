// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Roles: owns the table of llama.cpp, ggml and CUDA frames that say what
 * memory is for. A caller's frame (create_checkpoint) decides wherever it is
 * in the stack; otherwise the innermost frame that names a role does. */
#include <string.h>
#include "roles.h"

/* frames of llama.cpp's own code (and ggml's, and the CUDA runtime's) that
 * say what an allocation under them is for */
static const struct {
	const char *frame, *role;
} names[] = {
	{ "llama_kv_cache", "KV cache" },
	{ "llama_memory_recurrent", "KV cache" },
	{ "llama_kv_self", "KV cache" },
	{ "load_tensors", "model weights" },
	{ "load_all_data", "model weights" },
	{ "llama_model_load", "model weights" },
	{ "llama_model_loader", "model weights" },
	{ "graph_reserve", "compute buffers" },
	{ "ggml_backend_sched_reserve", "compute buffers" },
	{ "ggml_backend_sched_alloc_graph", "compute buffers" },
	{ "ggml_gallocr", "compute buffers" },
	/* scratch a backend makes while it computes a graph (Vulkan's
	 * preallocated buffers, CUDA's pool) */
	{ "ggml_vk_preallocate_buffers", "compute buffers" },
	{ "ggml_cuda_pool", "compute buffers" },
	{ "ggml_backend_sched_graph_compute", "compute buffers" },
	{ "output_reserve", "output buffers" },
	{ "server_prompt_cache", "prompt cache" },
	/* llama_state_seq_get_data and llama_context::state_seq_get_data: a
	 * slot's state copied out, for the prompt cache */
	{ "state_seq_get_data", "prompt cache" },
	{ "state_get_data", "prompt cache" },
	{ "clip_", "multimodal encoder" },
	{ "mtmd_", "multimodal encoder" },
	/* the driver loading a library's GPU code on first use (cuBLAS at the
	 * first matrix product: host memory, often 100 MiB) */
	{ "cuLibraryLoad", "CUDA kernel code" },
	{ "cuModuleLoad", "CUDA kernel code" },
	/* ggml-vulkan compiling a pipeline the first time a graph needs it
	 * (ggml_vk_load_shaders with the one requested): the driver's shader
	 * compiler and its code (lavapipe's LLVM) under it */
	{ "ggml_vk_load_shaders", "Vulkan shaders" },
	{ "ggml_vk_create_pipeline", "Vulkan shaders" },
	{ "cudaGraphInstantiate", "CUDA graphs" },
	{ "cuGraphInstantiate", "CUDA graphs" },
	{ "ggml_cuda_graph", "CUDA graphs" },
};

/* frames that decide a role wherever they are in the stack: a context
 * checkpoint is a state copy like a prompt-cache entry, made by another
 * caller */
static const struct {
	const char *frame, *role;
} callers[] = {
	{ "create_checkpoint", "context checkpoints" },
};

const char *roles__of(const struct model *m, __u32 stack_id)
{
	const struct model_stack *s = stack_id ? model__stack(m, stack_id) : NULL;
	unsigned int i, k;

	for (i = 0; s && i < s->nr_frames; i++)
		for (k = 0; s->frames[i].sym && k < sizeof(callers) / sizeof(callers[0]); k++)
			if (strstr(s->frames[i].sym, callers[k].frame))
				return callers[k].role;
	for (i = 0; s && i < s->nr_frames; i++) {
		if (!s->frames[i].sym)
			continue;
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (strstr(s->frames[i].sym, names[k].frame))
				return names[k].role;
	}
	return NULL;
}
