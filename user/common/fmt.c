// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Formatting: owns how sizes, deltas, protections, times, flags and
 * columns are written for the reports and the live view, and fmt_clean,
 * which turns what a target names into printable UTF-8 at the model's door,
 * so that it can neither drive a terminal nor break a JSON reader. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

/* the length of the valid UTF-8 character at s (of at most n bytes) that
 * is not a control character; 0 where there is none */
static size_t utf8_char(const unsigned char *s, size_t n)
{
	unsigned int c = s[0], min, len, i;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, c &= 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, c &= 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, c &= 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, past U+10FFFF, C1 controls */
	if (c < min || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff || (c >= 0x80 && c < 0xa0))
		return 0;
	return len;
}

size_t fmt_clean(char *dst, size_t size, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, len;

	if (!size)
		return 0;
	n = strnlen(src, n);
	while (i < n) {
		len = utf8_char(s + i, n - i);
		if (o + (len ? len : 3) >= size)
			break;
		if (len)
			memcpy(dst + o, s + i, len);
		else
			memcpy(dst + o, "\xef\xbf\xbd", 3);
		o += len ? len : 3;
		i += len ? len : 1;
	}
	dst[o] = 0;
	return o;
}

char *fmt_col(char *buf, size_t size, const char *s, int width)
{
	size_t o = 0, len;
	int chars = 0;

	if (!size)
		return buf;
	for (; *s && chars < width; chars++, o += len, s += len) {
		/* a character: its first byte and the continuations after it */
		for (len = 1; (s[len] & 0xc0) == 0x80; len++)
			;
		if (o + len + 1 > size)
			break;
		memcpy(buf + o, s, len);
	}
	for (; chars < width && o + 1 < size; chars++)
		buf[o++] = ' ';
	buf[o] = 0;
	return buf;
}

const char *fmt_file_kind(unsigned int m)
{
	return S_ISFIFO(m) ? "a FIFO" :
	       S_ISLNK(m)  ? "a symbolic link" :
	       S_ISDIR(m)  ? "a directory" :
	       S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m)  ? "a character device" :
	       S_ISBLK(m)  ? "a block device" :
			     "not a regular file";
}
