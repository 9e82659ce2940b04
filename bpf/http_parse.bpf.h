/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* HTTP/1.1 message framing, one byte at a time: plain C over __u8..__u64,
 * compiled into the BPF program (bpf/req.bpf.c) and into the user-space
 * fuzzer (tests/fuzz/http.c). One struct http_msg per direction of a
 * connection keeps where the stream is (request or status line, headers,
 * a body of known length, chunk sizes and data, trailers): never the bytes,
 * only the request line's method and path, which leave the kernel.
 *
 * A message starts only where the last one ended (or a connection's first
 * byte): body bytes that look like a request line are body bytes. Where the
 * bytes are not HTTP the direction is HP_JUNK: the request side stays so
 * (nothing more on that connection is a request); the response side is
 * tried again at the writer's next write (bpf/req.bpf.c).
 *
 * The caller feeds each byte to http__byte(), or first asks http__skip()
 * how many of the next bytes it may pass without looking (body and chunk
 * data, junk): the two ways give the same result (the fuzzer checks). */
#ifndef GMT_HTTP_PARSE_BPF_H
#define GMT_HTTP_PARSE_BPF_H

enum http_state {
	HP_IDLE = 0,	  /* a message may start at the next byte */
	HP_METHOD,	  /* request line: the method */
	HP_PATH,	  /* request line: the path */
	HP_LINE,	  /* the rest of a request or status line */
	HP_PROTO,	  /* status line: "HTTP/" and the version */
	HP_CODE,	  /* status line: the three digits */
	HP_HDR_START,	  /* a header line or the blank line */
	HP_HDR_CR,	  /* the blank line's CR */
	HP_HDR_NAME,	  /* a header's name */
	HP_HDR_VALUE,	  /* a header's value */
	HP_BODY,	  /* body bytes of a known length: left */
	HP_CHUNK_SIZE,	  /* a chunk's size line: hex digits */
	HP_CHUNK_EXT,	  /* its extensions, to the line's end */
	HP_CHUNK_DATA,	  /* a chunk's data: left */
	HP_CHUNK_END,	  /* the CRLF after a chunk's data */
	HP_TRAILER_START, /* after the last chunk: a trailer line or the end */
	HP_TRAILER_LINE,  /* a trailer line */
	HP_UNTIL_CLOSE,	  /* a response body that ends with the connection */
	HP_JUNK,	  /* not HTTP, or lost: nothing more is parsed */
};

/* what a byte completed (bits) */
#define HP_OUT_REQUEST 1 /* a request line: method and path are set */
#define HP_OUT_BEGIN 2	 /* a response's status line and headers: status, flags */
#define HP_OUT_END 4	 /* the message ended (a request or a response) */
#define HP_OUT_STATUS                                       \
	8 /* a status line's code was read: the caller sets \
	   * HP_F_NOBODY if it answers a HEAD request */

/* flags of the message */
#define HP_F_CLEN 1	 /* Content-Length given */
#define HP_F_CHUNKED 2	 /* Transfer-Encoding ends with chunked */
#define HP_F_SSE 4	 /* Content-Type: text/event-stream */
#define HP_F_BADVAL 8	 /* the header value being read does not match */
#define HP_F_RESPONSE 16 /* this direction writes responses */
#define HP_F_DIGIT 32	 /* a digit of the value or the chunk size was seen */
#define HP_F_NOBODY 64	 /* a response without a body, whatever its headers say */

/* the headers whose values matter (bits while the name is matched) */
#define HP_H_CLEN 1
#define HP_H_TE 2
#define HP_H_CTYPE 4
#define HP_H_ALL 7

#define HP_METHOD_MAX 8
#define HP_PATH_MAX 64		/* with its NUL */
#define HP_NUM_MAX (1ull << 52) /* larger lengths and chunk sizes are not HTTP */

struct http_msg {
	__u8 state;
	__u8 flags;
	__u8 hdr;  /* HP_H_* candidates, then the header being read */
	__u8 pos;  /* in the name, the value, the version, the digits */
	__u8 mlen; /* of method[] */
	__u8 plen; /* of path[] */
	__u16 status;
	__u64 num;  /* Content-Length or a chunk size, as read */
	__u64 left; /* body or chunk bytes still to come */
	char method[HP_METHOD_MAX];
	char path[HP_PATH_MAX];
};

static __always_inline __u8 http__lower(__u8 c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static __always_inline int http__hex(__u8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = http__lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* a fresh direction: HP_F_RESPONSE for the one that writes responses */
static __always_inline void http__init(struct http_msg *m, __u8 response)
{
	__builtin_memset(m, 0, sizeof(*m));
	m->flags = response ? HP_F_RESPONSE : 0;
}

static __always_inline void http__reset(struct http_msg *m)
{
	m->state = HP_IDLE;
	m->flags &= HP_F_RESPONSE;
	m->hdr = m->pos = 0;
	m->num = m->left = 0;
}

/* the lower-case names and the values looked for, by position */
static __always_inline __u8 http__name_at(__u8 h, __u8 i)
{
	/* content-length, transfer-encoding, content-type */
	const char *n = h == HP_H_CLEN ? "content-length" :
			h == HP_H_TE   ? "transfer-encoding" :
					 "content-type";
	__u8 len = h == HP_H_CLEN ? 14 : h == HP_H_TE ? 17 : 12;

	return i < len ? n[i] : 0;
}

static __always_inline __u8 http__name_len(__u8 h)
{
	return h == HP_H_CLEN ? 14 : h == HP_H_TE ? 17 : 12;
}

/* one byte of a header name: the candidates it still fits */
static __always_inline void http__name_byte(struct http_msg *m, __u8 c)
{
	__u8 h, l = http__lower(c);

	for (h = 1; h <= 4; h <<= 1)
		if ((m->hdr & h) && http__name_at(h, m->pos) != l)
			m->hdr &= ~h;
	if (m->pos < 255)
		m->pos++;
}

/* the name ended at ':': the header it is, or none */
static __always_inline void http__name_end(struct http_msg *m)
{
	__u8 h, found = 0;

	for (h = 1; h <= 4; h <<= 1)
		if ((m->hdr & h) && m->pos == http__name_len(h))
			found = h;
	m->hdr = found;
	m->pos = 0;
	m->flags &= ~(HP_F_BADVAL | HP_F_DIGIT);
	if (found == HP_H_CLEN)
		m->num = 0;
}

/* one byte of a value (not CR or LF) */
static __always_inline void http__value_byte(struct http_msg *m, __u8 c)
{
	__u8 l = http__lower(c);

	if (m->hdr == HP_H_CLEN) {
		if (c == ' ' || c == '\t')
			return;
		if (c < '0' || c > '9' || m->num >= HP_NUM_MAX) {
			m->flags |= HP_F_BADVAL;
			return;
		}
		m->num = m->num * 10 + (c - '0');
		m->flags |= HP_F_DIGIT;
	} else if (m->hdr == HP_H_TE) {
		/* the last of the codings, comma separated, is chunked */
		if (c == ' ' || c == '\t')
			return;
		if (c == ',') {
			m->pos = 0;
			m->flags &= ~HP_F_BADVAL;
		} else if (m->pos < 7 && "chunked"[m->pos] == l) {
			m->pos++;
		} else {
			m->flags |= HP_F_BADVAL;
		}
	} else if (m->hdr == HP_H_CTYPE) {
		if (!m->pos && (c == ' ' || c == '\t'))
			return;
		if (m->pos < 17) {
			if ("text/event-stream"[m->pos] == l)
				m->pos++;
			else
				m->flags |= HP_F_BADVAL;
		}
	}
}

/* the value's line ended */
static __always_inline void http__value_end(struct http_msg *m)
{
	__u8 ok = !(m->flags & HP_F_BADVAL);

	if (m->hdr == HP_H_CLEN && ok && (m->flags & HP_F_DIGIT)) {
		m->flags |= HP_F_CLEN;
		m->left = m->num;
	} else if (m->hdr == HP_H_TE) {
		if (ok && m->pos == 7)
			m->flags |= HP_F_CHUNKED;
		else
			m->flags &= ~HP_F_CHUNKED;
	} else if (m->hdr == HP_H_CTYPE && ok && m->pos == 17) {
		m->flags |= HP_F_SSE;
	}
	m->hdr = HP_H_ALL;
	m->pos = 0;
	m->state = HP_HDR_START;
}

/* the blank line after the headers: the body's framing */
static __always_inline int http__headers_end(struct http_msg *m)
{
	int out = 0;

	m->num = 0;
	m->pos = 0;
	m->flags &= ~(HP_F_BADVAL | HP_F_DIGIT);
	if (m->flags & HP_F_RESPONSE) {
		/* 1xx: an interim response, the real one follows */
		if (m->status < 200) {
			http__reset(m);
			return 0;
		}
		out = HP_OUT_BEGIN;
		if (m->status == 204 || m->status == 304 || (m->flags & HP_F_NOBODY)) {
			http__reset(m);
			return out | HP_OUT_END;
		}
	}
	if (m->flags & HP_F_CHUNKED) {
		m->state = HP_CHUNK_SIZE;
		return out;
	}
	if ((m->flags & HP_F_CLEN) && m->left) {
		m->state = HP_BODY;
		return out;
	}
	if ((m->flags & HP_F_RESPONSE) && !(m->flags & HP_F_CLEN)) {
		m->state = HP_UNTIL_CLOSE;
		return out;
	}
	http__reset(m);
	return out | HP_OUT_END;
}

static __always_inline int http__junk(struct http_msg *m)
{
	m->state = HP_JUNK;
	return 0;
}

/* the request line's method and path so far are a request: path ends */
static __always_inline int http__path_end(struct http_msg *m, __u8 c)
{
	m->path[m->plen & (HP_PATH_MAX - 1)] = 0;
	m->state = c == '\n' ? HP_HDR_START : HP_LINE;
	m->hdr = HP_H_ALL;
	m->pos = 0;
	return HP_OUT_REQUEST;
}

/* the next byte of the stream: what it completed (HP_OUT_*) */
static __always_inline int http__byte(struct http_msg *m, __u8 c)
{
	int d;

	switch (m->state) {
	case HP_IDLE:
		if (c == '\r' || c == '\n')
			return 0; /* blank lines between messages */
		if (m->flags & HP_F_RESPONSE) {
			if (c != 'H')
				return http__junk(m);
			m->state = HP_PROTO;
			m->pos = 1;
			m->status = 0;
			return 0;
		}
		if (c < 'A' || c > 'Z')
			return http__junk(m);
		__builtin_memset(m->method, 0, sizeof(m->method));
		__builtin_memset(m->path, 0, sizeof(m->path));
		m->method[0] = c;
		m->mlen = 1;
		m->plen = 0;
		m->state = HP_METHOD;
		return 0;
	case HP_METHOD:
		if (c == ' ' && m->mlen >= 3) {
			m->state = HP_PATH;
			return 0;
		}
		if (c < 'A' || c > 'Z' || m->mlen >= HP_METHOD_MAX)
			return http__junk(m);
		m->method[m->mlen & (HP_METHOD_MAX - 1)] = c;
		m->mlen++;
		return 0;
	case HP_PATH:
		if (!m->plen) {
			if (c != '/')
				return http__junk(m);
		} else if (c == ' ' || c == '?' || c == '\r' || c == '\n' || !c) {
			return http__path_end(m, c);
		}
		m->path[m->plen & (HP_PATH_MAX - 1)] = c;
		m->plen++;
		if (m->plen == HP_PATH_MAX - 1)
			return http__path_end(m, c);
		return 0;
	case HP_LINE:
		if (c == '\n') {
			m->state = HP_HDR_START;
			m->hdr = HP_H_ALL;
			m->pos = 0;
		}
		return 0;
	case HP_PROTO: /* "HTTP/" then the version: digits and a dot */
		if (m->pos < 5) {
			if (c != "HTTP/"[m->pos])
				return http__junk(m);
		} else if (c == ' ' && m->pos > 5) {
			m->state = HP_CODE;
			m->pos = 0;
			return 0;
		} else if (!((c >= '0' && c <= '9') || c == '.') || m->pos >= 12) {
			return http__junk(m);
		}
		m->pos++;
		return 0;
	case HP_CODE: /* three ASCII digits, then the reason or the line's end */
		if (m->pos == 3) {
			if (c != ' ' && c != '\r' && c != '\n')
				return http__junk(m);
			m->state = c == '\n' ? HP_HDR_START : HP_LINE;
			m->hdr = HP_H_ALL;
			m->pos = 0;
			return HP_OUT_STATUS;
		}
		if (c < '0' || c > '9')
			return http__junk(m);
		m->status = m->status * 10 + (c - '0');
		m->pos++;
		return 0;
	case HP_HDR_START:
		if (c == '\r') {
			m->state = HP_HDR_CR;
			return 0;
		}
		if (c == '\n')
			return http__headers_end(m);
		m->state = HP_HDR_NAME;
		m->hdr = HP_H_ALL;
		m->pos = 0;
		if (c == ':') {
			http__name_end(m);
			m->state = HP_HDR_VALUE;
			return 0;
		}
		http__name_byte(m, c);
		return 0;
	case HP_HDR_CR:
		if (c != '\n')
			return http__junk(m);
		return http__headers_end(m);
	case HP_HDR_NAME:
		if (c == ':') {
			http__name_end(m);
			m->state = HP_HDR_VALUE;
		} else if (c == '\n') {
			m->state = HP_HDR_START; /* a line without a colon */
		} else {
			http__name_byte(m, c);
		}
		return 0;
	case HP_HDR_VALUE:
		if (c == '\n')
			http__value_end(m);
		else if (c != '\r')
			http__value_byte(m, c);
		return 0;
	case HP_BODY:
		if (--m->left)
			return 0;
		http__reset(m);
		return HP_OUT_END;
	case HP_CHUNK_SIZE:
		d = http__hex(c);
		if (d >= 0) {
			if (m->num >= HP_NUM_MAX >> 4)
				return http__junk(m);
			m->num = m->num << 4 | d;
			m->flags |= HP_F_DIGIT;
			return 0;
		}
		if (c == ';' || c == ' ' || c == '\t') {
			m->state = HP_CHUNK_EXT;
			return 0;
		}
		if (c == '\r')
			return 0;
		/* fall through: the size line's end */
	case HP_CHUNK_EXT:
		if (c != '\n')
			return m->state == HP_CHUNK_EXT ? 0 : http__junk(m);
		if (!(m->flags & HP_F_DIGIT))
			return http__junk(m);
		m->flags &= ~HP_F_DIGIT;
		if (!m->num) {
			m->state = HP_TRAILER_START;
			return 0;
		}
		m->left = m->num;
		m->num = 0;
		m->state = HP_CHUNK_DATA;
		return 0;
	case HP_CHUNK_DATA:
		if (!--m->left)
			m->state = HP_CHUNK_END;
		return 0;
	case HP_CHUNK_END:
		if (c == '\r')
			return 0;
		if (c != '\n')
			return http__junk(m);
		m->state = HP_CHUNK_SIZE;
		return 0;
	case HP_TRAILER_START:
		if (c == '\r')
			return 0;
		if (c == '\n') {
			http__reset(m);
			return HP_OUT_END;
		}
		m->state = HP_TRAILER_LINE;
		return 0;
	case HP_TRAILER_LINE:
		if (c == '\n')
			m->state = HP_TRAILER_START;
		return 0;
	default: /* HP_UNTIL_CLOSE, HP_JUNK */
		return 0;
	}
}

/* n bytes passed unseen (sendfile's, from a file): body or chunk data,
 * or the direction is lost */
static __always_inline int http__pass(struct http_msg *m, __u64 n)
{
	if (m->state == HP_JUNK || m->state == HP_UNTIL_CLOSE || !n)
		return 0;
	if ((m->state != HP_BODY && m->state != HP_CHUNK_DATA) || n > m->left)
		return http__junk(m);
	m->left -= n;
	if (m->left)
		return 0;
	if (m->state == HP_CHUNK_DATA) {
		m->state = HP_CHUNK_END;
		return 0;
	}
	http__reset(m);
	return HP_OUT_END;
}

/* how many of the next n bytes may be passed without http__byte: body
 * and chunk data short of their last byte, and everything once the
 * direction is junk or reads to the close */
static __always_inline __u64 http__skip(struct http_msg *m, __u64 n)
{
	__u64 k;

	if (m->state == HP_JUNK || m->state == HP_UNTIL_CLOSE)
		return n;
	if (m->state != HP_BODY && m->state != HP_CHUNK_DATA)
		return 0;
	/* the last byte goes through http__byte, which ends the body */
	k = m->left - 1;
	if (k > n)
		k = n;
	m->left -= k;
	return k;
}

#endif
