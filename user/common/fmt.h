/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* number formatting shared by the report and the live view */
#ifndef GMT_FMT_H
#define GMT_FMT_H

#include <stddef.h>

/* "0 B", "512 B", "4.0 KiB", "128.0 MiB", "1.50 GiB"; returns buf */
char *fmt_bytes(char *buf, size_t size, double bytes);
/* the same with a sign: "+128.0 MiB", "-4.0 KiB", "0 B" */
char *fmt_delta(char *buf, size_t size, double bytes);
/* "rw-", "r-x", "---" */
char *fmt_prot(char *buf, size_t size, unsigned int prot);
/* "2026-12-02 11:20:03 UTC" */
char *fmt_utc(char *buf, size_t size, unsigned long long realtime_ns);

/* the names of the bits set in flags, joined by '|'; "" when none is */
const char *fmt_flags(char *buf, size_t size, unsigned int flags, const char *const *names,
		      size_t n);

/* src (at most n bytes, or to its NUL) into dst as printable UTF-8: every
 * byte of a control character (C0, DEL, C1) or of an invalid or overlong
 * sequence becomes U+FFFD, so that what a traced process named can neither
 * drive a terminal nor break a JSON reader. Cut at a whole character where
 * dst is too small; always terminated. Returns the length written. */
size_t fmt_clean(char *dst, size_t size, const char *src, size_t n);
/* "a FIFO", "a symbolic link", "a directory", ... for a file that is not
 * the regular file it should be (st_mode) */
const char *fmt_file_kind(unsigned int mode);
/* UTF-8 s as a column of width characters: cut at a whole character, then
 * padded with spaces (printf's "%-24.24s" counts bytes); returns buf */
char *fmt_col(char *buf, size_t size, const char *s, int width);

#endif
