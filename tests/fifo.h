/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* how the test programs wait for the tracer: FIFOs the test script holds */
#ifndef GMT_TESTS_FIFO_H
#define GMT_TESTS_FIFO_H

#include <stdio.h>

/* read one byte from the FIFO at path (nothing when path is NULL) */
static inline void wait_fifo(const char *path)
{
	FILE *f;
	char c;

	if (!path || !(f = fopen(path, "r")))
		return;
	if (fread(&c, 1, 1, f) != 1)
		c = 0;
	fclose(f);
}

/* write a line to the FIFO at path: "I am ready" */
static inline void say_ready(const char *path)
{
	FILE *f;

	if (path && (f = fopen(path, "w"))) {
		fputs("ready\n", f);
		fclose(f);
	}
}

#endif
