// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event.h"
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
