/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The Prometheus export while tracing: GET /metrics on an address of its
 * own (libevent's HTTP server, in a thread that only serves the last text
 * made) and a file rewritten atomically for node_exporter's textfile
 * collector. The text is made in the tracing thread, from the model. */
#ifndef GMT_METRICS_H
#define GMT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include "model/model.h"

struct metrics;

/* addr: "PORT", "IP:PORT" or "[IPv6]:PORT" (NULL: no server); file: a path
 * (NULL: none). NULL on failure, with err saying why. */
struct metrics *metrics__new(const char *addr, const char *file, double interval_s, char *err,
			     size_t size);
struct findings;
/* makes the text again when an interval has passed, with verdicts of its
 * own (rebuilt as their cost allows); `final`: the run's last text, from the
 * run's one analysis pass (main's). False the one time the file cannot be
 * written (err says why): the server goes on, the file is not tried again */
bool metrics__update(struct metrics *x, const struct model *m, __u64 now,
		     const struct findings *final, char *err, size_t size);
/* where the server listens ("127.0.0.1:9464"), for messages */
const char *metrics__address(const struct metrics *x);
void metrics__free(struct metrics *x);

#endif
