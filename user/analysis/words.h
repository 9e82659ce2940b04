/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The words of the verdicts: the sentences each say code of a finding
 * stands for, written from its figures. The finders decide what is so and
 * say it in codes (says.h); words.c alone says it in English, for the
 * reports and the live view alike. */
#ifndef GMT_WORDS_H
#define GMT_WORDS_H

#include <stddef.h>
#include "findings.h"

/* the finding's message: its sentences in order, into buf */
const char *words__message(const struct finding *f, char *buf, size_t size);
/* one line of evidence, into buf */
const char *words__evidence(const struct finding *f, const struct finding_say *e, char *buf,
			    size_t size);

/* the finding in a line, as the live view shows it after its tag:
 * "host_anon +1.0 MiB/request, out of memory in ~120 requests" */
const char *words__line(const struct finding *f, char *buf, size_t size);
/* the live view's line when there is no verdict: `steady` categories
 * judged steady, or none yet */
const char *words__none(size_t steady, char *buf, size_t size);

#endif
