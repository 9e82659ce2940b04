/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* trace files: a header, then independent zlib blocks of stream records,
 * each with its length and CRC32, so a cut or damaged file still replays.
 * Layout in docs/tracefile.md. */
#ifndef GMT_TRACEFILE_H
#define GMT_TRACEFILE_H

#include "event.h"

#define TRACEFILE_VERSION 1

struct tracefile_writer;

struct tracefile_info {
	unsigned int version;
	char tool[32];
	char kernel[80];
	char host[80];
	char start[48]; /* UTC, ISO 8601 */
	char cmdline[1024];
};

/* creates `path` with mode 0600 (owned by the sudo user when run by sudo);
 * NULL and errno on failure */
struct tracefile_writer *tracefile__create(const char *path, const struct tracefile_info *info,
					   char *err, size_t size);
/* the same, `name` in the directory `dirfd`, which must not exist yet */
struct tracefile_writer *tracefile__create_at(int dirfd, const char *name,
					      const struct tracefile_info *info);
/* bytes on disk so far (blocks still in memory not counted) */
__u64 tracefile__bytes(const struct tracefile_writer *w);
/* buffers `e`; a full buffer is compressed and written as one block */
int tracefile__write(struct tracefile_writer *w, const struct gmt_hdr *e);
/* writes the pending block if the last was written a second or more ago */
int tracefile__tick(struct tracefile_writer *w, __u64 now_ns);
/* flushes and closes; returns the first write error seen, as -errno */
int tracefile__close(struct tracefile_writer *w);

#define REPLAY_MAX_NOTES 16

struct replay_result {
	struct tracefile_info info;
	__u64 events;
	__u64 blocks;
	__u64 bad_blocks;
	__u64 missing_bytes;  /* at the end, in an incomplete block */
	__u64 stack_bytes;    /* of the stack records replayed */
	__u64 stacks_refused; /* past the bounds on a file's stacks */
	unsigned int nr_notes;
	char notes[REPLAY_MAX_NOTES][160]; /* damage found, for the user */
	char error[256];		   /* why the file could not be replayed at all */
};

/* feeds every record of every intact block to `sink`, in order. Returns 0
 * (damage is described in res->notes) or -1 with res->error set. */
int tracefile__replay(const char *path, gmt_sink_fn sink, void *ctx, struct replay_result *res);
/* the records of one block, already decompressed, each checked before the
 * sink sees it (the fuzzer's way past the compression) */
void tracefile__feed_records(const void *raw, size_t len, gmt_sink_fn sink, void *ctx,
			     struct replay_result *res);
/* the same for a file already in memory (the fuzzer's way in) */
int tracefile__replay_buffer(const void *buf, size_t size, gmt_sink_fn sink, void *ctx,
			     struct replay_result *res);

#endif
