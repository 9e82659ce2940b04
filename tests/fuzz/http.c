// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer over the HTTP framing the BPF program runs on every byte a
 * traced server reads and writes (bpf/http_parse.bpf.h), which a client
 * controls. The input's first byte picks the direction and how it is split
 * into calls; the rest is the stream. Each input is parsed three ways: a
 * byte at a time, passing over what http__skip allows in one call, and in
 * calls of the picked sizes; the three must agree on every message event
 * and its offset. And every request line must start where a message can
 * (the stream's start, or blank lines after the last message's end), be
 * the bytes it names, and a status be three digits. Built by
 * `make .output/tests/fuzz-http`; see bench/results.md for a run. */
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "http_parse.bpf.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define MAX_EVENTS 4096

struct run {
	size_t n;
	struct {
		size_t at;
		int out;
		__u16 status;
		char method[HP_METHOD_MAX], path[HP_PATH_MAX];
	} ev[MAX_EVENTS];
	struct http_msg end;
};

static struct run runs[3];

#define CHECK(cond)                                                                             \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			fprintf(stderr, "http fuzz: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
			abort();                                                                \
		}                                                                               \
	} while (0)

/* what byte i completed, checked against the stream */
static void note(struct run *r, struct http_msg *m, const __u8 *s, size_t i, int out,
		 size_t *last_end)
{
	size_t mlen, plen, len, start, k;

	if (out & HP_OUT_REQUEST) {
		mlen = strnlen(m->method, HP_METHOD_MAX);
		plen = strnlen(m->path, HP_PATH_MAX);
		CHECK(!(m->flags & HP_F_RESPONSE));
		CHECK(mlen >= 3 && mlen == m->mlen && plen >= 1 && plen < HP_PATH_MAX);
		for (k = 0; k < mlen; k++)
			CHECK(m->method[k] >= 'A' && m->method[k] <= 'Z');
		CHECK(m->path[0] == '/' && !strpbrk(m->path, " ?\r\n"));
		/* the line ends at byte i: its terminator, or the path's last
		 * byte when the path was cut at its size */
		len = mlen + 1 + plen + (plen < HP_PATH_MAX - 1);
		CHECK(i + 1 >= len);
		start = i + 1 - len;
		CHECK(!memcmp(s + start, m->method, mlen) && s[start + mlen] == ' ' &&
		      !memcmp(s + start + mlen + 1, m->path, plen));
		for (k = *last_end; k < start; k++)
			CHECK(s[k] == '\r' || s[k] == '\n');
	}
	if (out & HP_OUT_BEGIN)
		CHECK((m->flags & HP_F_RESPONSE) && m->status >= 200 && m->status <= 999);
	if (out & HP_OUT_END)
		*last_end = i + 1;
	if (r->n < MAX_EVENTS) {
		r->ev[r->n].at = i;
		r->ev[r->n].out = out;
		r->ev[r->n].status = m->status;
		memcpy(r->ev[r->n].method, m->method, HP_METHOD_MAX);
		memcpy(r->ev[r->n].path, m->path, HP_PATH_MAX);
		r->n++;
	}
}

/* the stream in calls of the given sizes (0: one call), passing over what
 * may be passed when skip */
static void parse(struct run *r, const __u8 *s, size_t len, int response, int head,
		  const __u8 *split, size_t nsplit, int skip)
{
	struct http_msg m;
	size_t i = 0, call_end, c = 0, last_end = 0;
	__u64 k;
	int out;

	http__init(&m, response);
	r->n = 0;
	while (i < len) {
		call_end = nsplit ? i + 1 + split[c++ % nsplit] % 64 : len;
		if (call_end > len)
			call_end = len;
		while (i < call_end) {
			if (skip && (k = http__skip(&m, call_end - i))) {
				CHECK(k <= call_end - i);
				i += k;
				continue;
			}
			out = http__byte(&m, s[i]);
			if ((out & HP_OUT_STATUS) && head)
				m.flags |= HP_F_NOBODY; /* as the answer to a HEAD */
			out &= ~HP_OUT_STATUS;
			if (out)
				note(r, &m, s, i, out, &last_end);
			i++;
		}
	}
	r->end = m;
}

static void same(const struct run *a, const struct run *b)
{
	size_t i;

	CHECK(a->n == b->n);
	for (i = 0; i < a->n; i++) {
		CHECK(a->ev[i].at == b->ev[i].at && a->ev[i].out == b->ev[i].out);
		CHECK(a->ev[i].status == b->ev[i].status);
		CHECK(!memcmp(a->ev[i].method, b->ev[i].method, HP_METHOD_MAX));
		CHECK(!memcmp(a->ev[i].path, b->ev[i].path, HP_PATH_MAX));
	}
	CHECK(a->end.state == b->end.state);
	/* a body or chunk passed over counts down its length the same */
	if (a->end.state == HP_BODY || a->end.state == HP_CHUNK_DATA)
		CHECK(a->end.left == b->end.left);
}

/* The reference: the same framing written the other way, over the whole
 * stream at once (requests only): where each request line ends (its
 * REQUEST) and each request ends (its END), into r. */
static int is_term(__u8 c)
{
	return c == ' ' || c == '?' || c == '\r' || c == '\n' || !c;
}

/* the next '\n' at or after p, or len */
static size_t line_end(const __u8 *s, size_t len, size_t p)
{
	const __u8 *e = memchr(s + p, '\n', len - p);

	return e ? (size_t)(e - s) : len;
}

static void ref_event(struct run *r, size_t at, int out, const __u8 *m, size_t mlen,
		      const __u8 *path, size_t plen)
{
	if (r->n >= MAX_EVENTS)
		return;
	memset(&r->ev[r->n], 0, sizeof(r->ev[r->n]));
	r->ev[r->n].at = at;
	r->ev[r->n].out = out;
	if (mlen)
		memcpy(r->ev[r->n].method, m, mlen);
	if (plen)
		memcpy(r->ev[r->n].path, path, plen);
	r->n++;
}

/* one header line [p, e): Content-Length and Transfer-Encoding */
static void ref_header(const __u8 *s, size_t p, size_t e, int *clen, __u64 *cl, int *chunked)
{
	const __u8 *colon = memchr(s + p, ':', e - p);
	size_t n, i, k;
	char v[8];
	__u64 num = 0;
	int digits = 0, bad = 0;

	if (!colon)
		return;
	n = colon - (s + p);
	if (n == 14 && !strncasecmp((const char *)s + p, "content-length", 14)) {
		for (i = n + 1 + p; i < e; i++) {
			if (s[i] == '\r' || s[i] == ' ' || s[i] == '\t')
				continue;
			if (s[i] < '0' || s[i] > '9' || num >= HP_NUM_MAX) {
				bad = 1;
				continue;
			}
			num = num * 10 + (s[i] - '0');
			digits = 1;
		}
		if (!bad && digits) {
			*clen = 1;
			*cl = num;
		}
	} else if (n == 17 && !strncasecmp((const char *)s + p, "transfer-encoding", 17)) {
		/* the last comma-separated part, spaces and CRs dropped */
		k = 0;
		bad = 0;
		for (i = n + 1 + p; i < e; i++) {
			if (s[i] == '\r' || s[i] == ' ' || s[i] == '\t')
				continue;
			if (s[i] == ',') {
				k = 0;
				bad = 0;
			} else if (k < 7) {
				v[k++] = s[i];
			} else {
				bad = 1;
			}
		}
		*chunked = !bad && k == 7 && !strncasecmp(v, "chunked", 7);
	}
}

static void ref_requests(struct run *r, const __u8 *s, size_t len)
{
	size_t p = 0, m, q, k, e, at;
	int clen, chunked;
	__u64 cl, size;

	r->n = 0;
	for (;;) {
		while (p < len && (s[p] == '\r' || s[p] == '\n'))
			p++;
		for (m = 0; p + m < len && m < HP_METHOD_MAX && s[p + m] >= 'A' && s[p + m] <= 'Z';
		     m++)
			;
		if (p + m + 1 >= len || s[p + m] != ' ' || m < 3 || s[p + m + 1] != '/')
			return;
		q = p + m + 1;
		for (k = 1; q + k < len && k < HP_PATH_MAX - 1 && !is_term(s[q + k]); k++)
			;
		if (k == HP_PATH_MAX - 1)
			at = q + k - 1;
		else if (q + k < len)
			at = q + k;
		else
			return;
		ref_event(r, at, HP_OUT_REQUEST, s + p, m, s + q, k);
		/* the rest of the line, then the headers */
		p = s[at] == '\n' && k < HP_PATH_MAX - 1 ? at + 1 : line_end(s, len, at + 1) + 1;
		clen = chunked = 0;
		cl = 0;
		for (;;) {
			if (p >= len)
				return;
			if (s[p] == '\n')
				break;
			if (s[p] == '\r') {
				if (p + 1 >= len || s[p + 1] != '\n')
					return;
				p++;
				break;
			}
			e = line_end(s, len, p);
			if (e >= len)
				return;
			ref_header(s, p, e, &clen, &cl, &chunked);
			p = e + 1;
		}
		/* p: the blank line's '\n' */
		if (chunked) {
			for (p++;;) {
				size = 0;
				k = 0;
				while (p < len && (http__hex(s[p]) >= 0 || s[p] == '\r')) {
					if (s[p] != '\r') {
						if (size >= HP_NUM_MAX >> 4)
							return;
						size = size << 4 | http__hex(s[p]);
						k++;
					}
					p++;
				}
				if (p >= len)
					return;
				if (s[p] == ';' || s[p] == ' ' || s[p] == '\t')
					p = line_end(s, len, p);
				if (p >= len || s[p] != '\n' || !k)
					return;
				p++;
				if (!size)
					break;
				if (size > len - p)
					return;
				p += size;
				while (p < len && s[p] == '\r')
					p++;
				if (p >= len || s[p] != '\n')
					return;
				p++;
			}
			/* trailers, to a line that is empty but for CRs */
			for (;;) {
				while (p < len && s[p] == '\r')
					p++;
				if (p >= len)
					return;
				if (s[p] == '\n')
					break;
				p = line_end(s, len, p);
				if (p >= len)
					return;
				p++;
			}
		} else if (clen && cl) {
			if (cl > len - p - 1)
				return;
			p += cl;
		}
		ref_event(r, p, HP_OUT_END, NULL, 0, NULL, 0);
		p++;
	}
}

/* the parser's request events against the reference's */
static void same_as_reference(const struct run *a, const struct run *ref)
{
	size_t i, j = 0;

	for (i = 0; i < a->n && a->n < MAX_EVENTS; i++) {
		CHECK(j < ref->n);
		CHECK(a->ev[i].at == ref->ev[j].at && a->ev[i].out == ref->ev[j].out);
		if (a->ev[i].out & HP_OUT_REQUEST) {
			CHECK(!memcmp(a->ev[i].method, ref->ev[j].method, HP_METHOD_MAX));
			CHECK(!memcmp(a->ev[i].path, ref->ev[j].path, HP_PATH_MAX));
		}
		j++;
	}
	CHECK(a->n >= MAX_EVENTS || j == ref->n);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const __u8 *s, *split;
	size_t len, nsplit;
	int response, head;

	if (size < 1)
		return 0;
	/* byte 0: the direction, how many of the next bytes give sizes, and
	 * whether responses answer HEAD requests */
	response = data[0] & 1;
	head = data[0] & 16;
	nsplit = (data[0] >> 1) & 7;
	if (size < 1 + nsplit)
		return 0;
	split = data + 1;
	s = data + 1 + nsplit;
	len = size - 1 - nsplit;
	parse(&runs[0], s, len, response, head, NULL, 0, 0);
	parse(&runs[1], s, len, response, head, NULL, 0, 1);
	parse(&runs[2], s, len, response, head, split, nsplit, 1);
	same(&runs[0], &runs[1]);
	same(&runs[0], &runs[2]);
	if (!response) {
		ref_requests(&runs[1], s, len);
		same_as_reference(&runs[0], &runs[1]);
	}
	return 0;
}
