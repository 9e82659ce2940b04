// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record and replay of the event stream */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#include "common/outfile.h"
#include "tracefile.h"

#define FILE_MAGIC "GMTTRACE"
#define BLOCK_MAGIC 0x42544d47u /* "GMTB" */
#define BLOCK_RAW_MAX (256u << 10)
/* a reader refuses blocks larger than this: a corrupt length, not data */
#define BLOCK_LIMIT (64u << 20)
/* nor blocks that say they decompress to more than the writer ever makes */
#define BLOCK_RAW_LIMIT (4 * BLOCK_RAW_MAX)
/* a block is decompressed this much at a time, its records fed as they
 * come: a block whose first record is damaged (zeros) costs one step */
#define INFLATE_STEP (16u << 10)
/* stacks a file may make replay keep: the tracer writes at most 64
 * frames a stack, and the model keeps about twice a record's bytes */
#define STACK_FRAMES_LIMIT 256u
#define STACK_BYTES_LIMIT (64u << 20)
/* with the collector waking every 250 ms, data is on disk within a second */
#define FLUSH_NS 750000000ull

struct file_hdr {
	char magic[8];
	__u32 version;
	__u32 info_len;
};

struct block_hdr {
	__u32 magic;
	__u32 comp_len;
	__u32 raw_len;
	__u32 crc; /* of the compressed bytes */
};

struct tracefile_writer {
	int fd;
	int err;
	__u64 last_flush_ns;
	__u64 bytes; /* on disk */
	size_t used;
	unsigned char raw[BLOCK_RAW_MAX];
	unsigned char *comp;
	size_t comp_cap;
};

static int write_all(int fd, const struct iovec *iov, int n)
{
	struct iovec v[4];
	ssize_t r;
	int i = 0;

	memcpy(v, iov, n * sizeof(*iov));
	while (i < n) {
		r = writev(fd, v + i, n - i);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (i < n && (size_t)r >= v[i].iov_len)
			r -= v[i++].iov_len;
		if (i < n) {
			v[i].iov_base = (char *)v[i].iov_base + r;
			v[i].iov_len -= r;
		}
	}
	return 0;
}

static size_t info_text(const struct tracefile_info *info, char *buf, size_t size)
{
	int n = snprintf(buf, size, "tool=%s\nkernel=%s\nhost=%s\nstart=%s\ncmdline=%s\n",
			 info->tool, info->kernel, info->host, info->start, info->cmdline);

	return n < 0 ? 0 : ((size_t)n >= size ? size - 1 : (size_t)n);
}

/* let the user who ran sudo replay the file without root */
static void give_to_sudo_user(int fd)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");

	if (geteuid() == 0 && uid && gid)
		if (fchown(fd, atoi(uid), atoi(gid)))
			return; /* stays root's: still 0600 */
}

static struct tracefile_writer *create(int fd, const struct tracefile_info *info);

/* a new file, never one there before: what a directory of recordings
 * holds is the tracer's alone */
struct tracefile_writer *tracefile__create_at(int dirfd, const char *name,
					      const struct tracefile_info *info)
{
	return create(
		openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600),
		info);
}

struct tracefile_writer *tracefile__create(const char *path, const struct tracefile_info *info,
					   char *err, size_t size)
{
	/* root writing where others can: a new file, never a planted one */
	int fd = outfile__create(AT_FDCWD, path, err, size);
	struct tracefile_writer *w = create(fd, info);

	if (fd >= 0 && !w)
		snprintf(err, size, "cannot write %s: %s", path, strerror(errno));
	return w;
}

__u64 tracefile__bytes(const struct tracefile_writer *w)
{
	return w->bytes;
}

static struct tracefile_writer *create(int fd, const struct tracefile_info *info)
{
	struct tracefile_writer *w;
	struct file_hdr fh = { .magic = FILE_MAGIC, .version = TRACEFILE_VERSION };
	char text[2048];
	struct iovec iov[3];
	__u32 crc;
	int err;

	if (fd < 0)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return NULL;
	}
	w->fd = fd;
	w->comp_cap = compressBound(BLOCK_RAW_MAX);
	w->comp = malloc(w->comp_cap);
	if (!w->comp)
		goto fail;
	/* an existing file keeps its mode through O_TRUNC */
	if (fchmod(w->fd, 0600))
		goto fail;
	give_to_sudo_user(w->fd);
	fh.info_len = info_text(info, text, sizeof(text));
	crc = crc32(0, (const Bytef *)text, fh.info_len);
	iov[0] = (struct iovec){ &fh, sizeof(fh) };
	iov[1] = (struct iovec){ text, fh.info_len };
	iov[2] = (struct iovec){ &crc, sizeof(crc) };
	err = write_all(w->fd, iov, 3);
	if (err) {
		errno = -err;
		goto fail;
	}
	w->bytes = sizeof(fh) + fh.info_len + sizeof(crc);
	return w;
fail:
	err = errno;
	if (w->fd >= 0)
		close(w->fd);
	free(w->comp);
	free(w);
	errno = err;
	return NULL;
}

static int flush_block(struct tracefile_writer *w)
{
	struct block_hdr bh = { .magic = BLOCK_MAGIC, .raw_len = w->used };
	uLongf clen = w->comp_cap;
	struct iovec iov[2];
	int err;

	if (!w->used || w->err)
		goto out;
	if (compress2(w->comp, &clen, w->raw, w->used, Z_BEST_SPEED) != Z_OK) {
		w->err = -ENOMEM;
		goto out;
	}
	bh.comp_len = clen;
	bh.crc = crc32(0, w->comp, clen);
	iov[0] = (struct iovec){ &bh, sizeof(bh) };
	iov[1] = (struct iovec){ w->comp, clen };
	err = write_all(w->fd, iov, 2);
	if (err)
		w->err = err;
	else
		w->bytes += sizeof(bh) + clen;
out:
	w->used = 0;
	return w->err;
}

int tracefile__write(struct tracefile_writer *w, const struct gmt_hdr *e)
{
	if (w->used + e->len > sizeof(w->raw) && flush_block(w))
		return w->err;
	memcpy(w->raw + w->used, e, e->len);
	w->used += e->len;
	return w->err;
}

int tracefile__tick(struct tracefile_writer *w, __u64 now_ns)
{
	if (now_ns - w->last_flush_ns < FLUSH_NS)
		return w->err;
	w->last_flush_ns = now_ns;
	return flush_block(w);
}

int tracefile__close(struct tracefile_writer *w)
{
	int err;

	if (!w)
		return 0;
	flush_block(w);
	err = w->err;
	if (close(w->fd) && !err)
		err = -errno;
	free(w->comp);
	free(w);
	return err;
}

/* reading */

struct reader {
	const unsigned char *base;
	size_t size;
	struct replay_result *res;
	gmt_sink_fn sink;
	void *ctx;
	unsigned char *raw;
	size_t raw_cap;
	z_stream z;
	bool z_ready;
};

__attribute__((format(printf, 2, 3))) static void note(struct replay_result *res, const char *fmt,
						       ...)
{
	va_list ap;

	if (res->nr_notes >= REPLAY_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(res->notes[res->nr_notes++], sizeof(res->notes[0]), fmt, ap);
	va_end(ap);
}

static void parse_info(const char *text, size_t len, struct tracefile_info *info)
{
	static const struct {
		const char *key;
		size_t off, size;
	} keys[] = {
		{ "tool=", offsetof(struct tracefile_info, tool), sizeof(info->tool) },
		{ "kernel=", offsetof(struct tracefile_info, kernel), sizeof(info->kernel) },
		{ "host=", offsetof(struct tracefile_info, host), sizeof(info->host) },
		{ "start=", offsetof(struct tracefile_info, start), sizeof(info->start) },
		{ "cmdline=", offsetof(struct tracefile_info, cmdline), sizeof(info->cmdline) },
	};
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = (nl ? nl : end) - p, i, k;

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			k = strlen(keys[i].key);
			if (n >= k && !memcmp(p, keys[i].key, k)) {
				size_t v = n - k < keys[i].size - 1 ? n - k : keys[i].size - 1;
				char *dst = (char *)info + keys[i].off;

				memcpy(dst, p + k, v);
				dst[v] = 0;
			}
		}
		p += n + 1;
	}
}

/* the offset of the next block magic at or after `off`, or size */
static size_t next_magic(const struct reader *r, size_t off)
{
	__u32 m = BLOCK_MAGIC;

	for (; off + sizeof(m) <= r->size; off++)
		if (!memcmp(r->base + off, &m, sizeof(m)))
			return off;
	return r->size;
}

/* Whether a stack record may reach the sink: each costs replay memory, so
 * a file's are bounded (a hostile one held 8,192 stacks of 3,274 frames,
 * 2.5 GB in the model); those past the bounds are left out, said once */
static bool stack_allowed(const struct gmt_hdr *e, struct replay_result *res, size_t off)
{
	const struct gmt_stack *st = (const void *)e;

	if (e->type != GMT_EV_STACK)
		return true;
	if (st->nr_frames > STACK_FRAMES_LIMIT) {
		if (!res->stacks_refused++)
			note(res,
			     "block at offset %zu: stack %u has %u frames, more than the %u a "
			     "recording holds: it and any others as long left out",
			     off, st->stack_id, st->nr_frames, STACK_FRAMES_LIMIT);
		return false;
	}
	if (res->stack_bytes + e->len > STACK_BYTES_LIMIT) {
		if (!res->stacks_refused++)
			note(res,
			     "block at offset %zu: stacks past %u MiB of symbol tables left out "
			     "(their records show no frames)",
			     off, STACK_BYTES_LIMIT >> 20);
		return false;
	}
	res->stack_bytes += e->len;
	return true;
}

/* the records of raw[*pos, len), each checked before the sink sees it; the
 * last may be incomplete while more of its block is to come (!final).
 * false: a malformed record, said, and the rest of the block skipped. With
 * no sink, only checked (and nothing said) */
static bool feed_records(const unsigned char *raw, size_t len, bool final, size_t *pos,
			 gmt_sink_fn sink, void *ctx, struct replay_result *res, size_t off)
{
	while (*pos < len) {
		const struct gmt_hdr *e = (const void *)(raw + *pos);
		size_t left = len - *pos;

		if (!final && (left < sizeof(*e) || (e->len >= sizeof(*e) && e->len > left)))
			return true;
		if (!event__valid(e, left)) {
			if (!sink)
				return false;
			note(res,
			     "block at offset %zu: malformed record %zu bytes in: rest skipped",
			     off, *pos);
			res->bad_blocks++;
			return false;
		}
		if (sink && stack_allowed(e, res, off)) {
			sink(ctx, e);
			res->events++;
		}
		*pos += e->len;
	}
	return true;
}

void tracefile__feed_records(const void *raw, size_t len, gmt_sink_fn sink, void *ctx,
			     struct replay_result *res)
{
	size_t pos = 0;

	memset(res, 0, sizeof(*res));
	if (feed_records(raw, len, true, &pos, sink, ctx, res, 0))
		res->blocks++;
}

/* decompressed a step at a time and checked as it comes, so that what a
 * damaged block costs is what it takes to find the damage; its records go
 * to the sink once the whole block is known good (or up to the first
 * malformed one, as before) */
static int feed_block(struct reader *r, const unsigned char *data, const struct block_hdr *bh,
		      size_t off)
{
	size_t pos = 0, out = 0, step;
	int zr = Z_OK;

	if (bh->raw_len > r->raw_cap) {
		unsigned char *p = realloc(r->raw, bh->raw_len);

		if (!p)
			return -ENOMEM;
		r->raw = p;
		r->raw_cap = bh->raw_len;
	}
	if (r->z_ready ? inflateReset(&r->z) != Z_OK : inflateInit(&r->z) != Z_OK)
		return -ENOMEM;
	r->z_ready = true;
	r->z.next_in = (Bytef *)data;
	r->z.avail_in = bh->comp_len;
	while (zr == Z_OK && out < bh->raw_len) {
		step = bh->raw_len - out < INFLATE_STEP ? bh->raw_len - out : INFLATE_STEP;
		r->z.next_out = r->raw + out;
		r->z.avail_out = step;
		zr = inflate(&r->z, Z_NO_FLUSH);
		out += step - r->z.avail_out;
		if (zr != Z_OK && zr != Z_STREAM_END)
			break;
		if (!feed_records(r->raw, out, zr == Z_STREAM_END || out == bh->raw_len, &pos, NULL,
				  NULL, r->res, off)) {
			pos = 0;
			feed_records(r->raw, out, true, &pos, r->sink, r->ctx, r->res, off);
			return 0;
		}
	}
	/* all it said it holds, and no more */
	if (zr == Z_OK && out == bh->raw_len) {
		unsigned char more;

		r->z.next_out = &more;
		r->z.avail_out = 1;
		zr = inflate(&r->z, Z_NO_FLUSH);
		if (!r->z.avail_out)
			zr = Z_DATA_ERROR;
	}
	if (zr != Z_STREAM_END || out != bh->raw_len) {
		note(r->res,
		     "block at offset %zu does not decompress (after %zu of its %u bytes): "
		     "rest skipped",
		     off, out, bh->raw_len);
		r->res->bad_blocks++;
		return 0;
	}
	pos = 0;
	if (feed_records(r->raw, out, true, &pos, r->sink, r->ctx, r->res, off))
		r->res->blocks++;
	return 0;
}

static int read_blocks(struct reader *r, size_t off)
{
	struct block_hdr bh;
	size_t next;
	int err;

	while (off < r->size) {
		if (r->size - off < sizeof(bh)) {
			r->res->missing_bytes = r->size - off;
			note(r->res,
			     "file ends inside a block header at offset %zu: %zu bytes dropped",
			     off, r->size - off);
			return 0;
		}
		memcpy(&bh, r->base + off, sizeof(bh));
		if (bh.magic != BLOCK_MAGIC) {
			next = next_magic(r, off + 1);
			note(r->res, "corrupt data at offset %zu: %zu bytes skipped", off,
			     next - off);
			r->res->bad_blocks++;
			off = next;
			continue;
		}
		if (bh.raw_len > BLOCK_RAW_LIMIT && bh.comp_len <= r->size - off - sizeof(bh)) {
			note(r->res,
			     "block at offset %zu says it holds %u bytes, more than the %u a "
			     "block may: skipped",
			     off, bh.raw_len, BLOCK_RAW_LIMIT);
			r->res->bad_blocks++;
			off += sizeof(bh) + bh.comp_len;
			continue;
		}
		if (bh.comp_len > BLOCK_LIMIT || bh.raw_len > BLOCK_LIMIT ||
		    bh.comp_len > r->size - off - sizeof(bh)) {
			next = next_magic(r, off + 1);
			if (next == r->size && bh.comp_len <= BLOCK_LIMIT) {
				/* the last block was cut short: the writer stopped mid-write */
				r->res->missing_bytes = off + sizeof(bh) + bh.comp_len - r->size;
				note(r->res,
				     "file is truncated: the last block (offset %zu) lacks %llu bytes",
				     off, (unsigned long long)r->res->missing_bytes);
				return 0;
			}
			note(r->res, "block at offset %zu has a bad length: skipped", off);
			r->res->bad_blocks++;
			off = next;
			continue;
		}
		if (crc32(0, r->base + off + sizeof(bh), bh.comp_len) != bh.crc) {
			note(r->res, "block at offset %zu fails its CRC check: skipped", off);
			r->res->bad_blocks++;
			/* the length may be what was damaged: resynchronize on the magic */
			off = next_magic(r, off + 1);
			continue;
		}
		err = feed_block(r, r->base + off + sizeof(bh), &bh, off);
		if (err)
			return err;
		off += sizeof(bh) + bh.comp_len;
	}
	return 0;
}

static int check_header(struct reader *r, size_t *off)
{
	struct file_hdr fh;
	__u32 crc;

	if (r->size < sizeof(fh) || memcmp(r->base, FILE_MAGIC, 8)) {
		snprintf(r->res->error, sizeof(r->res->error), "not a gpumemtrace trace file");
		return -1;
	}
	memcpy(&fh, r->base, sizeof(fh));
	r->res->info.version = fh.version;
	if (fh.version > TRACEFILE_VERSION) {
		snprintf(r->res->error, sizeof(r->res->error),
			 "trace format version %u is newer than this gpumemtrace reads (%u): "
			 "replay it with a newer gpumemtrace",
			 fh.version, TRACEFILE_VERSION);
		return -1;
	}
	/* the size first: for files of 16 to 19 bytes the difference underflows */
	if (r->size < sizeof(fh) + sizeof(crc) ||
	    fh.info_len > r->size - sizeof(fh) - sizeof(crc)) {
		snprintf(r->res->error, sizeof(r->res->error),
			 "trace file header is cut short: no events to replay");
		return -1;
	}
	memcpy(&crc, r->base + sizeof(fh) + fh.info_len, sizeof(crc));
	if (crc32(0, r->base + sizeof(fh), fh.info_len) != crc)
		note(r->res, "file header fails its CRC check: its text may be wrong");
	parse_info((const char *)r->base + sizeof(fh), fh.info_len, &r->res->info);
	*off = sizeof(fh) + fh.info_len + sizeof(crc);
	return 0;
}

static int replay_buffer(struct reader *r, const char *what)
{
	size_t off;
	int err = -1;

	if (!check_header(r, &off)) {
		err = read_blocks(r, off);
		if (err)
			snprintf(r->res->error, sizeof(r->res->error), "replay of %s failed: %s",
				 what, strerror(-err));
	}
	free(r->raw);
	r->raw = NULL;
	if (r->z_ready)
		inflateEnd(&r->z);
	r->z_ready = false;
	return err;
}

int tracefile__replay(const char *path, gmt_sink_fn sink, void *ctx, struct replay_result *res)
{
	struct reader r = { .res = res, .sink = sink, .ctx = ctx };
	struct stat st;
	int fd, err = -1;

	memset(res, 0, sizeof(*res));
	/* O_NONBLOCK: a FIFO named as the file must not hang the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(res->error, sizeof(res->error), "cannot open %s: %s", path,
			 strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(res->error, sizeof(res->error),
			 "refusing to replay %s: it is not a regular file (a FIFO, a device or a "
			 "directory); copy the recording to a file first",
			 path);
		goto out;
	}
	r.size = st.st_size;
	if (r.size) {
		r.base = mmap(NULL, r.size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (r.base == MAP_FAILED) {
			snprintf(res->error, sizeof(res->error), "cannot read %s: %s", path,
				 strerror(errno));
			goto out;
		}
	}
	err = replay_buffer(&r, path);
out:
	if (r.base && r.base != MAP_FAILED)
		munmap((void *)r.base, r.size);
	if (fd >= 0)
		close(fd);
	return err ? -1 : 0;
}

int tracefile__replay_buffer(const void *buf, size_t size, gmt_sink_fn sink, void *ctx,
			     struct replay_result *res)
{
	struct reader r = { .res = res, .sink = sink, .ctx = ctx, .base = buf, .size = size };

	memset(res, 0, sizeof(*res));
	return replay_buffer(&r, "the buffer") ? -1 : 0;
}
