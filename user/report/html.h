/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `replay --html OUT`: the report as one self-contained page for a bug
 * report (docs/html.md): the verdicts, memory by category and by role over
 * time, the requests, evictions and failures on that axis, and a flame
 * graph of what holds the memory; its figures are the JSON report's. */
#ifndef GMT_HTML_H
#define GMT_HTML_H

#include <stddef.h>
#include "model/model.h"

struct findings;

/* the page of m into a new file at path (mode 0600, never through a
 * symlink); name: the recording's, shown in its title. 0, or -1 with err
 * set and no file */
int html__write(const struct model *m, const struct findings *fs, const char *name,
		const char *path, char *err, size_t size);

#endif
