/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `replay --perfetto OUT`: the recording as a Perfetto trace (protobuf
 * TracePackets of proto/perfetto.proto, encoded by protobuf-c). Each
 * process gets a track with a counter track per memory category; each HTTP
 * connection a track under it, with a slice per request; each decoding
 * thread its track, with a slice per llama.cpp decode call; evictions,
 * allocation failures and exits are instants on the process's track.
 * Past 65,536 requests a process (MODEL_REQS_MAX) the model keeps an even
 * share of them, and an instant says how many more there were. */
#ifndef GMT_PERFETTO_H
#define GMT_PERFETTO_H

#include <stddef.h>
#include <stdio.h>
#include "model/model.h"

struct perfetto;

/* OUT created (mode 0600, never through a symlink); NULL with err set */
struct perfetto *perfetto__open(const char *path, char *err, size_t size);
/* the same into a stream of the caller's (closed at the finish) */
struct perfetto *perfetto__to(FILE *out);
/* a gmt_sink_fn: feeds the model (ctx's) and writes the decode slices */
void perfetto__event(void *ctx, const struct gmt_hdr *e);
/* the rest, from the model; closes OUT. 0, or -errno; packets written */
int perfetto__finish(struct perfetto *p, size_t *packets);

#endif
