// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llama-server's memory settings (see llama_conf.h); the names and
 * defaults are those of llama.cpp's common/arg.cpp */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "llama_conf.h"

enum opt_type {
	OPT_NUM,
	OPT_BOOL,
	OPT_FLAG_ON,  /* no value: on; its variable takes a boolean */
	OPT_FLAG_OFF, /* no value: off */
};

struct opt {
	const char *shrt, *lng, *env;
	size_t off; /* of its conf_val in struct llama_conf */
	enum opt_type type;
};

static const struct opt opts[] = {
	{ "-cram", "--cache-ram", "LLAMA_ARG_CACHE_RAM", offsetof(struct llama_conf, cache_ram),
	  OPT_NUM },
	{ "-np", "--parallel", "LLAMA_ARG_N_PARALLEL", offsetof(struct llama_conf, parallel),
	  OPT_NUM },
	{ "-c", "--ctx-size", "LLAMA_ARG_CTX_SIZE", offsetof(struct llama_conf, ctx), OPT_NUM },
	{ "-fit", "--fit", "LLAMA_ARG_FIT", offsetof(struct llama_conf, fit), OPT_BOOL },
	{ "-ctxcp", "--ctx-checkpoints", "LLAMA_ARG_CTX_CHECKPOINTS",
	  offsetof(struct llama_conf, ctx_checkpoints), OPT_NUM },
	{ "-ctxcp", "--swa-checkpoints", "LLAMA_ARG_CTX_CHECKPOINTS",
	  offsetof(struct llama_conf, ctx_checkpoints), OPT_NUM },
	{ "-kvu", "--kv-unified", "LLAMA_ARG_KV_UNIFIED", offsetof(struct llama_conf, kv_unified),
	  OPT_FLAG_ON },
	{ "-no-kvu", "--no-kv-unified", "LLAMA_ARG_KV_UNIFIED",
	  offsetof(struct llama_conf, kv_unified), OPT_FLAG_OFF },
	{ "--kv-unified-per-slot", "--kv-unified-per-slot", "LLAMA_ARG_KV_UNIFIED_PER_SLOT",
	  offsetof(struct llama_conf, kv_per_slot), OPT_NUM },
	{ "-t", "--threads", "LLAMA_ARG_THREADS", offsetof(struct llama_conf, threads), OPT_NUM },
	{ "--mlock", "--mlock", "LLAMA_ARG_MLOCK", offsetof(struct llama_conf, mlock),
	  OPT_FLAG_ON },
	{ "--mmap", "--mmap", "LLAMA_ARG_MMAP", offsetof(struct llama_conf, mmap), OPT_FLAG_ON },
	{ "--no-mmap", "--no-mmap", "LLAMA_ARG_NO_MMAP", offsetof(struct llama_conf, mmap),
	  OPT_FLAG_OFF },
	{ "-ngl", "--gpu-layers", "LLAMA_ARG_N_GPU_LAYERS", offsetof(struct llama_conf, gpu_layers),
	  OPT_NUM },
	{ "-ngl", "--n-gpu-layers", "LLAMA_ARG_N_GPU_LAYERS",
	  offsetof(struct llama_conf, gpu_layers), OPT_NUM },
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static bool parse(const struct opt *o, const char *s, size_t n, long *v)
{
	char buf[32], *end;

	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (o->type != OPT_NUM) {
		if (!strcmp(buf, "on") || !strcmp(buf, "enabled") || !strcmp(buf, "true") ||
		    !strcmp(buf, "1"))
			*v = 1;
		else if (!strcmp(buf, "off") || !strcmp(buf, "disabled") || !strcmp(buf, "false") ||
			 !strcmp(buf, "0"))
			*v = 0;
		else
			return false;
		return true;
	}
	*v = strtol(buf, &end, 10);
	return *end == 0;
}

static void set(struct llama_conf *c, const struct opt *o, long v, enum conf_from from)
{
	struct conf_val *cv = (struct conf_val *)((char *)c + o->off);

	cv->v = v;
	cv->from = from;
}

/* NAME=value in the recorded environment */
static void from_env(const struct model_proc *p, struct llama_conf *c)
{
	const char *v = p->env, *end;
	size_t i, k;
	long x;

	if (!v)
		return;
	for (end = v + p->env_len; v < end; v += strnlen(v, end - v) + 1) {
		if (!strncmp(v, "GGML_CUDA_DISABLE_GRAPHS=", 25) && v[25])
			c->cuda_graphs_off = true;
		for (i = 0; i < NOPTS; i++) {
			k = strlen(opts[i].env);
			if (!strncmp(v, opts[i].env, k) && v[k] == '=' &&
			    parse(&opts[i], v + k + 1, strnlen(v + k + 1, end - v - k - 1), &x))
				set(c, &opts[i], x, CONF_ENV);
		}
	}
}

/* "--opt value" or "--opt=value" in the command line (arguments joined by
 * spaces) */
static void from_args(const char *cmd, struct llama_conf *c)
{
	const char *w = cmd, *e, *eq, *val;
	size_t i, n, vn;
	long x;

	while (w && *w) {
		e = w + strcspn(w, " ");
		n = e - w;
		eq = memchr(w, '=', n);
		for (i = 0; i < NOPTS; i++) {
			size_t k = eq ? (size_t)(eq - w) : n;

			if ((strlen(opts[i].shrt) != k || strncmp(w, opts[i].shrt, k)) &&
			    (strlen(opts[i].lng) != k || strncmp(w, opts[i].lng, k)))
				continue;
			if (opts[i].type == OPT_FLAG_ON || opts[i].type == OPT_FLAG_OFF) {
				if (!eq)
					set(c, &opts[i], opts[i].type == OPT_FLAG_ON, CONF_ARG);
				continue;
			}
			val = eq ? eq + 1 : (*e ? e + 1 : e);
			vn = eq ? (size_t)(e - val) : strcspn(val, " ");
			if (parse(&opts[i], val, vn, &x))
				set(c, &opts[i], x, CONF_ARG);
		}
		w = *e ? e + 1 : e;
	}
}

static bool is_server(const struct model_proc *p)
{
	const char *exe = strrchr(p->exe, '/');
	size_t n = p->cmdline ? strcspn(p->cmdline, " ") : 0;

	if (!strcmp(p->comm, "llama-server") || (exe && !strcmp(exe + 1, "llama-server")))
		return true;
	return n >= 12 && !strncmp(p->cmdline + n - 12, "llama-server", 12);
}

bool llama_conf__read(const struct model_proc *p, struct llama_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->cache_ram.v = 8192;
	c->parallel.v = -1;
	c->fit.v = 1;
	c->ctx_checkpoints.v = 32;
	c->threads.v = -1;
	c->mmap.v = 1;
	c->gpu_layers.v = -1;
	c->server = is_server(p);
	from_env(p, c);
	if (c->server)
		from_args(p->cmdline, c);
	return c->server;
}

long llama_conf__slots(const struct llama_conf *c)
{
	return c->parallel.v > 0 ? c->parallel.v : 4;
}

bool llama_conf__ctx_scaled(const struct llama_conf *c)
{
	/* an automatic -np is 4 slots sharing one buffer: not scaled */
	return c->server && c->fit.v && !c->ctx.v && c->parallel.v > 1 && !c->kv_unified.v &&
	       !(c->kv_per_slot.v > 0 && c->ctx.from == CONF_DEFAULT);
}

const char *llama_conf__from(const struct conf_val *v, const char *env)
{
	return v->from == CONF_ARG ? "command line" : v->from == CONF_ENV ? env : "default";
}
