/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The words of the verdicts: the sentences each say code of a finding
 * stands for, written from its figures. The analysis decides what is so;
 * only this file says it in English. */
#ifndef GMT_REPORT_WORDS_H
#define GMT_REPORT_WORDS_H

#include <stddef.h>
#include "analysis/findings.h"

/* the finding's message: its sentences in order, into buf */
const char *words__message(const struct finding *f, char *buf, size_t size);
/* one line of evidence, into buf */
const char *words__evidence(const struct finding *f, const struct finding_say *e, char *buf,
			    size_t size);

#endif
