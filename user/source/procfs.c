// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include "stream/event.h"
#include "procfs.h"

void procfs__read(__u32 pid, const char *name, char *buf, size_t size)
{
	char path[64];
	size_t i, n;
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	for (i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
}

int procfs__open_in_root(__u32 pid, const char *path)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char root[64];
	int dir, fd;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	fd = syscall(SYS_openat2, dir, path, &how, sizeof(how));
	close(dir);
	return fd;
}

size_t procfs__read_raw(__u32 pid, const char *name, char *buf, size_t size)
{
	char path[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, size, f);
	fclose(f);
	return n;
}

/* options whose value is a secret: never into a trace file */
static const char *const secret_opts[] = { "--api-key", "--hf-token", "-hft" };

static bool is_secret_opt(const char *w, size_t n, bool *inline_value)
{
	size_t i, k;

	for (i = 0; i < sizeof(secret_opts) / sizeof(secret_opts[0]); i++) {
		k = strlen(secret_opts[i]);
		if (n >= k && !strncmp(w, secret_opts[i], k) && (n == k || w[k] == '=')) {
			*inline_value = n > k;
			return true;
		}
	}
	return false;
}

size_t procfs__redact(char *args, size_t len)
{
	bool next = false, inl;
	char *w, *e, *eq, *end;
	size_t i;

	while (len && !args[len - 1])
		len--;
	end = args + len;
	*end = 0;
	/* argument by argument, before they are joined: a value is all of
	 * its argument, spaces and all ("tok1 SECRET") */
	for (w = args; w < end; w = e + 1) {
		e = memchr(w, 0, end - w);
		if (!e)
			e = end;
		if (next) {
			memset(w, '*', e - w);
			next = false;
			continue;
		}
		next = is_secret_opt(w, e - w, &inl);
		if (next && inl) {
			eq = memchr(w, '=', e - w);
			memset(eq + 1, '*', e - eq - 1);
			next = false;
		}
	}
	for (i = 0; i < len; i++)
		if (!args[i])
			args[i] = ' ';
	return len;
}

/* what changes how llama.cpp and ggml use memory, and nothing else */
static const char *const settings[] = {
	"LLAMA_ARG_CACHE_RAM",	      "LLAMA_ARG_N_PARALLEL",
	"LLAMA_ARG_CTX_SIZE",	      "LLAMA_ARG_FIT",
	"LLAMA_ARG_KV_UNIFIED",	      "LLAMA_ARG_BATCH",
	"LLAMA_ARG_UBATCH",	      "LLAMA_ARG_N_GPU_LAYERS",
	"LLAMA_ARG_CACHE_IDLE_SLOTS", "GGML_CUDA_DISABLE_GRAPHS",
	"GGML_VK_VISIBLE_DEVICES",    "CUDA_VISIBLE_DEVICES",
};

size_t procfs__settings(const char *env, size_t len, char *out, size_t size)
{
	const char *v = env, *end = env + len, *nul;
	size_t n = 0, i, k, vl;

	for (; v < end; v = nul + 1) {
		nul = memchr(v, 0, end - v);
		if (!nul)
			break;
		for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
			k = strlen(settings[i]);
			vl = nul - v;
			if (vl > k && !strncmp(v, settings[i], k) && v[k] == '=' &&
			    n + vl + 1 <= size) {
				memcpy(out + n, v, vl + 1);
				n += vl + 1;
			}
		}
	}
	return n;
}

/* "1234 KiB", "5 MiB", "42" (bytes) */
static __u64 parse_size(const char *v)
{
	unsigned long long n = 0;
	char unit[8] = "";

	if (sscanf(v, "%llu %7s", &n, unit) < 1)
		return 0;
	if (!strcmp(unit, "KiB"))
		return n << 10;
	if (!strcmp(unit, "MiB"))
		return n << 20;
	if (!strcmp(unit, "GiB"))
		return n << 30;
	return n;
}

struct drm_key {
	const char *key;
	int field;
};

/* the region names drivers use: amdgpu's vram/gtt/cpu, the generic
 * helpers' "system" and "memory" */
static const struct drm_key drm_keys[] = {
	{ "drm-memory-vram", GMT_DRM_VRAM_RESIDENT }, /* 6.1 amdgpu: resident */
	{ "drm-memory-gtt", GMT_DRM_GTT_RESIDENT },
	{ "drm-memory-cpu", GMT_DRM_CPU_RESIDENT },
	{ "drm-total-vram", GMT_DRM_VRAM_TOTAL },
	{ "drm-resident-vram", GMT_DRM_VRAM_RESIDENT },
	{ "drm-total-gtt", GMT_DRM_GTT_TOTAL },
	{ "drm-resident-gtt", GMT_DRM_GTT_RESIDENT },
	{ "drm-total-cpu", GMT_DRM_CPU_TOTAL },
	{ "drm-resident-cpu", GMT_DRM_CPU_RESIDENT },
	{ "drm-total-system", GMT_DRM_CPU_TOTAL },
	{ "drm-resident-system", GMT_DRM_CPU_RESIDENT },
	{ "drm-total-memory", GMT_DRM_CPU_TOTAL },
	{ "drm-resident-memory", GMT_DRM_CPU_RESIDENT },
	{ "amd-evicted-vram", GMT_DRM_EVICTED_VRAM },
};

bool procfs__map_line(char *line, struct procfs_map *m)
{
	unsigned long long start, end, pgoff, ino;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, m->perms, &pgoff,
		   &m->maj, &m->min, &ino, &pos) < 7 ||
	    !pos)
		return false;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->ino = ino;
	line[strcspn(line, "\n")] = 0;
	m->path = line + pos;
	return true;
}

bool procfs__parse_drm_fdinfo(const char *text, struct gmt_drm_fdinfo *out)
{
	const char *line = text;
	bool drm = false;
	size_t i;

	memset(out->bytes, 0, sizeof(out->bytes));
	out->valid = 0;
	out->client_id = 0;
	memset(out->driver, 0, sizeof(out->driver));
	while (line && *line) {
		const char *colon = strchr(line, ':'), *nl = strchr(line, '\n');
		size_t klen = colon ? (size_t)(colon - line) : 0;
		const char *v = colon ? colon + 1 : NULL;

		if (colon && (!nl || colon < nl)) {
			while (*v == ' ' || *v == '\t')
				v++;
			if (klen == 10 && !strncmp(line, "drm-driver", klen)) {
				drm = true;
				for (i = 0; i < sizeof(out->driver) - 1 && v[i] && v[i] != '\n';
				     i++)
					out->driver[i] = v[i];
			} else if (klen == 13 && !strncmp(line, "drm-client-id", klen)) {
				out->client_id = strtoull(v, NULL, 10);
			}
			for (i = 0; i < sizeof(drm_keys) / sizeof(drm_keys[0]); i++)
				if (strlen(drm_keys[i].key) == klen &&
				    !strncmp(line, drm_keys[i].key, klen)) {
					out->bytes[drm_keys[i].field] = parse_size(v);
					out->valid |= 1u << drm_keys[i].field;
				}
		}
		line = nl ? nl + 1 : NULL;
	}
	return drm;
}
