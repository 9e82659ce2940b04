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

#endif
