// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
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
