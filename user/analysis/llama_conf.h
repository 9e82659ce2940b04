/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* llama-server's settings that decide how it uses memory, read from its
 * command line and environment as the stream recorded them, with
 * llama.cpp's defaults where neither sets them. The command line wins over
 * the environment, as in llama.cpp. */
#ifndef GMT_LLAMA_CONF_H
#define GMT_LLAMA_CONF_H

#include <stdbool.h>
#include "model/model.h"

enum conf_from {
	CONF_DEFAULT,
	CONF_ARG, /* the command line */
	CONF_ENV, /* LLAMA_ARG_* */
};

struct conf_val {
	long v;
	enum conf_from from;
};

struct llama_conf {
	bool server;			 /* the process is llama-server */
	struct conf_val cache_ram;	 /* MiB; -1 no limit, 0 off */
	struct conf_val parallel;	 /* slots; -1 auto, which is 4 */
	struct conf_val ctx;		 /* tokens; 0 the model's */
	struct conf_val fit;		 /* 1 on, 0 off */
	struct conf_val ctx_checkpoints; /* a slot's most */
	struct conf_val kv_unified;	 /* 1 one KV buffer for all slots */
	struct conf_val kv_per_slot;	 /* --kv-unified-per-slot; 0 unset */
	struct conf_val threads;	 /* -t; -1 llama.cpp's own count */
	struct conf_val mlock;		 /* 1: the weights locked in RAM */
	struct conf_val mmap;		 /* 1 (default): the weights mapped from their file */
	struct conf_val gpu_layers;	 /* -ngl; -1 auto (--fit) */
	bool cuda_graphs_off;		 /* GGML_CUDA_DISABLE_GRAPHS */
};

/* false when p is not llama-server (c then holds the defaults, and what
 * the environment says) */
bool llama_conf__read(const struct model_proc *p, struct llama_conf *c);
/* the slots a -np value makes */
long llama_conf__slots(const struct llama_conf *c);
/* --fit sized the context as slots x the model's training context: -np
 * N > 1 with no -c and no shared KV buffer (llama.cpp's common/fit.cpp, as
 * the server calls it) */
bool llama_conf__ctx_scaled(const struct llama_conf *c);
/* where a setting came from: "command line", its variable (env), "default" */
const char *llama_conf__from(const struct conf_val *v, const char *env);

#endif
