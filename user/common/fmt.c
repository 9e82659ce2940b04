// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <stdio.h>
#include <time.h>
#include "fmt.h"

char *fmt_bytes(char *buf, size_t size, double bytes)
{
	static const char *units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = fabs(bytes);
	int u = -1;

	if (v < 1024) {
		snprintf(buf, size, "%.0f B", v);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, v < 10 && u >= 2 ? "%.2f %s" : "%.1f %s", v, units[u]);
	return buf;
}

char *fmt_delta(char *buf, size_t size, double bytes)
{
	char tmp[32];

	fmt_bytes(tmp, sizeof(tmp), bytes);
	if (bytes == 0)
		snprintf(buf, size, "%s", tmp);
	else
		snprintf(buf, size, "%c%s", bytes < 0 ? '-' : '+', tmp);
	return buf;
}

char *fmt_prot(char *buf, size_t size, unsigned int prot)
{
	snprintf(buf, size, "%c%c%c", prot & 1 ? 'r' : '-', prot & 2 ? 'w' : '-',
		 prot & 4 ? 'x' : '-');
	return buf;
}

char *fmt_utc(char *buf, size_t size, unsigned long long realtime_ns)
{
	time_t t = realtime_ns / 1000000000ull;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, size, "?");
	return buf;
}

const char *fmt_flags(char *buf, size_t size, unsigned int flags, const char *const *names,
		      size_t n)
{
	size_t i, off = 0;

	buf[0] = 0;
	for (i = 0; i < n; i++)
		if (flags & (1u << i))
			off += snprintf(buf + off, off < size ? size - off : 0, "%s%s",
					off ? "|" : "", names[i]);
	return buf;
}
