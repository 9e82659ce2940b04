// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* HTTP/1.1 requests on the target's sockets, from syscall exits: a read
 * that starts with a request line begins a request; a write that starts
 * with a status line begins its response; the response ends when its
 * Content-Length is written, at the chunked terminator, or at close. The
 * headers of a response are scanned here, in the kernel, for its length and
 * encoding; only method, path, status and byte counts are sent. */
#include "syscalls.bpf.h"

#define HDR_SCAN 512 /* bytes of a response's headers scanned */
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define LEFT_UNKNOWN (~0ull)

struct conn {
	__u64 id;
	__u64 bytes_in, bytes_out;
	__u64 left; /* body bytes still to write, or LEFT_UNKNOWN */
	__u64 tail; /* the last 8 body bytes written, the newest lowest */
	__u16 status;
	__u8 responding, chunked, sse, tls;
	__u8 pad[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* tgid << 32 | fd */
	__type(value, struct conn);
} conns SEC(".maps");

/* per CPU: the start of a response, scanned for its headers */
struct scan {
	char buf[HDR_SCAN + 32];
	__u32 len, hdr_end;
	__u64 clen;
	bool has_clen, chunked, sse;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scan);
} scans SEC(".maps");

static __always_inline bool is_socket(int fd)
{
	struct file *f = fd_file(fd);
	umode_t mode;

	if (!f)
		return false;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	return (mode & S_IFMT) == S_IFSOCK;
}

static __always_inline char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* the header name at `at` is `name` (lower case, with its colon) */
static __always_inline bool header_is(struct scan *s, __u32 at, const char *name, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		__u32 j = at + i;

		if (j >= HDR_SCAN || lower(s->buf[j & (HDR_SCAN - 1)]) != name[i])
			return false;
	}
	return true;
}

struct scan_ctx {
	struct scan *s; /* bpf_loop's context must be on the stack */
};

/* one byte of the scan: a header line starts after each CRLF */
static long scan_byte(__u64 i, struct scan_ctx *ctx)
{
	struct scan *s = ctx->s;
	__u32 at, k;

	if (i + 4 > s->len || i + 4 > HDR_SCAN)
		return 1;
	at = i & (HDR_SCAN - 1);
	if (s->buf[at] != '\r' || s->buf[(at + 1) & (HDR_SCAN - 1)] != '\n')
		return 0;
	if (s->buf[(at + 2) & (HDR_SCAN - 1)] == '\r' &&
	    s->buf[(at + 3) & (HDR_SCAN - 1)] == '\n') {
		s->hdr_end = at + 4;
		return 1;
	}
	at += 2;
	if (header_is(s, at, "content-length:", 15)) {
		s->has_clen = true;
		s->clen = 0;
		/* masked, not compared: older verifiers lose a compared bound */
		for (k = 0; k < 20; k++) {
			char c = s->buf[(at + 15 + k) & (HDR_SCAN - 1)];

			if (at + 15 + k >= s->len)
				break;

			if (c == ' ')
				continue;
			if (c < '0' || c > '9')
				break;
			s->clen = s->clen * 10 + (c - '0');
		}
	} else if (header_is(s, at, "transfer-encoding: chunked", 26) ||
		   header_is(s, at, "transfer-encoding:chunked", 25)) {
		s->chunked = true;
	} else if (header_is(s, at, "content-type: text/event-stream", 31)) {
		s->sse = true;
	}
	return 0;
}

static __always_inline struct gmt_http *http_event(struct conn *c, int fd, __u16 kind)
{
	struct gmt_http *e = gmt_reserve(sizeof(*e), GMT_EV_HTTP, GMT_SRC_HTTP);

	if (!e)
		return NULL;
	e->conn = c->id;
	e->fd = fd;
	e->kind = kind;
	e->status = c->status;
	e->bytes_in = c->bytes_in;
	e->bytes_out = c->bytes_out;
	e->end = 0;
	e->sse = c->sse;
	e->pad = 0;
	__builtin_memset(e->method, 0, sizeof(e->method));
	__builtin_memset(e->path, 0, sizeof(e->path));
	return e;
}

static __always_inline void resp_end(struct conn *c, int fd, __u16 how)
{
	struct gmt_http *e = http_event(c, fd, GMT_HTTP_RESP_END);

	c->responding = 0;
	if (e) {
		e->end = how;
		gmt_submit(e);
	}
	c->bytes_in = c->bytes_out = 0;
}

/* a request line at `off` of the scanned read: METHOD SP /path */
static __always_inline bool request_at(struct scan *s, __u32 off, struct conn *c, int fd)
{
	struct gmt_http *e;
	int i, m = -1;

	for (i = 0; i < 9; i++) {
		char ch = s->buf[(off + i) & (HDR_SCAN - 1)];

		if (off + i >= s->len)
			return false;
		if (ch == ' ') {
			m = i;
			break;
		}
		if (ch < 'A' || ch > 'Z')
			return false;
	}
	if (m < 3 || off + m + 1 >= s->len || s->buf[(off + m + 1) & (HDR_SCAN - 1)] != '/')
		return false;
	if (!c)
		return true;
	serving = 1;
	e = http_event(c, fd, GMT_HTTP_REQUEST);
	if (!e)
		return true;
	for (i = 0; i < 8; i++)
		if (i < m)
			e->method[i] = s->buf[(off + i) & (HDR_SCAN - 1)];
	for (i = 0; i < 63; i++) {
		__u32 j = off + m + 1 + i;
		char ch = s->buf[j & (HDR_SCAN - 1)];

		if (j >= s->len || ch == ' ' || ch == '?' || ch == '\r' || ch == '\n' || !ch)
			break;
		e->path[i] = ch;
	}
	gmt_submit(e);
	return true;
}

struct pipe_ctx {
	struct scan *s;
	struct conn *c;
	int fd;
};

/* requests pipelined in the same read: after each blank line */
static long pipe_byte(__u64 i, struct pipe_ctx *ctx)
{
	struct scan *s = ctx->s;
	__u32 at = i & (HDR_SCAN - 1);

	if (i + 5 > s->len)
		return 1;
	if (s->buf[at] == '\r' && s->buf[(at + 1) & (HDR_SCAN - 1)] == '\n' &&
	    s->buf[(at + 2) & (HDR_SCAN - 1)] == '\r' && s->buf[(at + 3) & (HDR_SCAN - 1)] == '\n')
		request_at(s, at + 4, ctx->c, ctx->fd);
	return 0;
}

/* the first bytes of a read or write, no more than were transferred: a
 * fixed-size read past them could fail at the end of a mapping */
static __always_inline void copy_start(struct scan *s, __u64 buf, __u64 len, __u32 max)
{
	__u64 n = len < max ? len : max;

	/* clamped again right before the read: older verifiers (6.1) lose
	 * the bound of a value the compiler kept from the first clamp */
	asm volatile("" : "+r"(n));
	if (n > HDR_SCAN)
		n = HDR_SCAN;
	s->len = n;
	if (bpf_probe_read_user(s->buf, n, (void *)buf))
		s->len = 0;
}

#define MSG_PEEK 2

/* data read from fd (avail of it readable at buf: a vector's first piece): a
 * request line starts a request. Most reads are not (bodies, files): 16
 * bytes tell, before the rest is copied and scanned. A peek leaves the data
 * to be read again: not counted. */
static __always_inline void on_read(int fd, __u64 buf, __u64 avail, long ret, __u64 flags)
{
	__u64 key = (bpf_get_current_pid_tgid() & ~0xffffffffull) | (__u32)fd;
	struct conn *c = bpf_map_lookup_elem(&conns, &key), n = {};
	struct gmt_http *e;
	struct scan *s;
	__u32 zero = 0;

	if (ret <= 0 || !buf || (c && c->tls) || (flags & MSG_PEEK))
		return;
	if ((__u64)ret < avail)
		avail = ret;
	s = bpf_map_lookup_elem(&scans, &zero);
	if (!s)
		return;
	copy_start(s, buf, avail, 16);
	if (!c && s->len >= 2 && s->buf[0] == 0x16 && s->buf[1] == 0x03 && is_socket(fd)) {
		n.id = bpf_ktime_get_ns();
		n.tls = 1;
		bpf_map_update_elem(&conns, &key, &n, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&conns, &key);
		if (c && (e = http_event(c, fd, GMT_HTTP_TLS)))
			gmt_submit(e);
		return;
	}
	if (!request_at(s, 0, NULL, fd)) {
		if (c)
			c->bytes_in += ret; /* headers or a body */
		return;
	}
	if (!c) {
		/* a connection accepted before tracing, or a new one */
		if (!is_socket(fd))
			return;
		n.id = bpf_ktime_get_ns();
		n.left = LEFT_UNKNOWN;
		bpf_map_update_elem(&conns, &key, &n, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&conns, &key);
		if (!c)
			return;
	}
	c->bytes_in += ret;
	copy_start(s, buf, avail, HDR_SCAN);
	request_at(s, 0, c, fd);
	struct pipe_ctx pc = { s, c, fd };

	bpf_loop(HDR_SCAN, pipe_byte, &pc, 0);
}

static __always_inline bool is_hex(__u8 c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The body so far ends with the last chunk: "0\r\n\r\n" after the CRLF
 * of a chunk's data or at the start of the body, never after a digit of a
 * chunk size ("10\r\n" and data "\r\n"). Only body bytes count, so a
 * header block ending "max=100\r\n\r\n" is not it; and the bytes carry
 * over from write to write, since servers such as cpp-httplib (llama-server)
 * send "0\r\n" and the final "\r\n" in two writes. */
static __always_inline bool chunked_done(__u64 tail)
{
	return (tail & 0xffffffffffull) == 0x300d0a0d0aull && !is_hex(tail >> 40);
}

/* the last body bytes of a write, which end at `end`, into c->tail */
static __always_inline void tail_push(struct conn *c, __u64 end, __u64 body, __u64 avail)
{
	__u8 b[8] = {};
	__u64 n = body;
	int i;

	if (n > avail)
		n = avail; /* writev: the last piece only */
	if (n > 8)
		n = 8;
	if (!n || bpf_probe_read_user(b, n, (void *)(end - n)))
		return;
	for (i = 0; i < 8; i++)
		if (i < n)
			c->tail = c->tail << 8 | b[i];
}

/* data written to fd (avail of it at buf, last_len at last: a vector's first
 * and last pieces): a status line starts a response; its end is found from
 * the length, the chunked terminator, or the close */
static __always_inline void on_write(int fd, __u64 buf, __u64 avail, __u64 last, __u64 last_len,
				     long ret)
{
	__u64 key = (bpf_get_current_pid_tgid() & ~0xffffffffull) | (__u32)fd;
	struct conn *c = bpf_map_lookup_elem(&conns, &key);
	struct gmt_http *e;
	struct scan *s;
	__u32 zero = 0;
	__u64 body;

	if (!c || c->tls || ret <= 0 || !buf)
		return;
	if ((__u64)ret < avail)
		avail = ret;
	s = bpf_map_lookup_elem(&scans, &zero);
	if (!s)
		return;
	copy_start(s, buf, avail, 16);
	if (s->len >= 12 && s->buf[0] == 'H' && s->buf[1] == 'T' && s->buf[2] == 'T' &&
	    s->buf[3] == 'P' && s->buf[4] == '/' && s->buf[8] == ' ') {
		if (c->responding) /* the last one had no known end */
			resp_end(c, fd, GMT_HTTP_END_NEXT);
		copy_start(s, buf, avail, HDR_SCAN);
		s->hdr_end = 0;
		s->has_clen = s->chunked = s->sse = false;
		struct scan_ctx sc = { s };

		bpf_loop(HDR_SCAN, scan_byte, &sc, 0);
		c->status = (s->buf[9] - '0') * 100 + (s->buf[10] - '0') * 10 + (s->buf[11] - '0');
		c->responding = 1;
		c->chunked = s->chunked;
		c->sse = s->sse;
		c->bytes_out = 0;
		c->tail = 0;
		c->left = LEFT_UNKNOWN;
		if (s->has_clen && s->hdr_end)
			c->left = s->clen;
		e = http_event(c, fd, GMT_HTTP_RESP_BEGIN);
		if (e)
			gmt_submit_now(e);
		c->bytes_out += ret;
		body = s->hdr_end && ret > s->hdr_end ? ret - s->hdr_end : 0;
	} else {
		if (!c->responding)
			return;
		c->bytes_out += ret;
		body = ret;
	}
	if (c->left != LEFT_UNKNOWN) {
		c->left = body >= c->left ? 0 : c->left - body;
		if (!c->left)
			resp_end(c, fd, GMT_HTTP_END_LENGTH);
		return;
	}
	if (c->chunked && body) {
		tail_push(c, last + last_len, body, last_len);
		if (chunked_done(c->tail))
			resp_end(c, fd, GMT_HTTP_END_CHUNKED);
	}
}

/* the connection ends: its response, if one was going, then itself */
static __always_inline void close_conn(struct conn *c, int fd)
{
	struct gmt_http *e;

	if (c->responding)
		resp_end(c, fd, GMT_HTTP_END_CLOSE);
	e = http_event(c, fd, GMT_HTTP_CLOSE);
	if (e)
		gmt_submit(e);
}

static __always_inline void on_close(int fd)
{
	__u64 key = (bpf_get_current_pid_tgid() & ~0xffffffffull) | (__u32)fd;
	struct conn *c = bpf_map_lookup_elem(&conns, &key);

	if (!c)
		return;
	close_conn(c, fd);
	bpf_map_delete_elem(&conns, &key);
}

/* the connections of one process with fds in [lo, hi]: closed (with
 * events) or, when the process is gone, just forgotten */
struct ends {
	__u32 tgid, lo, hi, quiet;
};

static long end_conn(struct bpf_map *map, __u64 *key, struct conn *c, struct ends *x)
{
	__u32 fd = (__u32)*key;

	if ((*key >> 32) != x->tgid || fd < x->lo || fd > x->hi)
		return 0;
	if (!x->quiet)
		close_conn(c, fd);
	bpf_map_delete_elem(map, key);
	return 0;
}

static __always_inline void end_conns(__u32 lo, __u32 hi, bool quiet)
{
	struct ends x = { bpf_get_current_pid_tgid() >> 32, lo, hi, quiet };

	bpf_for_each_map_elem(&conns, end_conn, &x, 0);
}

struct iov {
	__u64 base, len;
};

/* the first and the last piece of an iovec array */
static __always_inline void iov_ends(__u64 iov, __u64 cnt, __u64 *first, __u64 *first_len,
				     __u64 *last, __u64 *last_len)
{
	struct iov v = {};

	*first = *first_len = *last = *last_len = 0;
	if (!iov || !cnt || cnt > 1024)
		return;
	bpf_probe_read_user(&v, sizeof(v), (void *)iov);
	*first = v.base;
	*first_len = v.len;
	bpf_probe_read_user(&v, sizeof(v), (void *)(iov + (cnt - 1) * sizeof(v)));
	*last = v.base;
	*last_len = v.len;
}

struct msghdr_user {
	__u64 name;
	__u32 namelen, pad;
	__u64 iov, iovlen;
};

#define TARGET_OR_LEAVE()                                     \
	if (!gmt_is_target(bpf_get_current_pid_tgid() >> 32)) \
	return 0

/* read(fd, buf, ...), recvfrom(fd, buf, len, flags, ...), write(fd, buf, ...),
 * ...: FLAGS is an expression of the arguments a[] */
#define BUF_PROG(name, call, dir, FLAGS)                      \
	SEC("tracepoint/syscalls/sys_exit_" #call)            \
	int name(struct trace_event_raw_sys_exit *ctx)        \
	{                                                     \
		__u64 a[6], n = ctx->ret > 0 ? ctx->ret : 0;  \
                                                              \
		TARGET_OR_LEAVE();                            \
		syscall_args(a);                              \
		dir(a[0], a[1], n, a[1], n, ctx->ret, FLAGS); \
		return 0;                                     \
	}

/* readv(fd, iov, cnt), writev(fd, iov, cnt) */
#define IOV_PROG(name, call, dir)                                           \
	SEC("tracepoint/syscalls/sys_exit_" #call)                          \
	int name(struct trace_event_raw_sys_exit *ctx)                      \
	{                                                                   \
		__u64 a[6], first, first_len, last, last_len;               \
                                                                            \
		TARGET_OR_LEAVE();                                          \
		syscall_args(a);                                            \
		iov_ends(a[1], a[2], &first, &first_len, &last, &last_len); \
		dir(a[0], first, first_len, last, last_len, ctx->ret, 0);   \
		return 0;                                                   \
	}

/* recvmsg(fd, msghdr, flags), sendmsg(fd, msghdr, flags) */
#define MSG_PROG(name, call, dir)                                                \
	SEC("tracepoint/syscalls/sys_exit_" #call)                               \
	int name(struct trace_event_raw_sys_exit *ctx)                           \
	{                                                                        \
		__u64 a[6], first, first_len, last, last_len;                    \
		struct msghdr_user m = {};                                       \
                                                                                 \
		TARGET_OR_LEAVE();                                               \
		syscall_args(a);                                                 \
		bpf_probe_read_user(&m, sizeof(m), (void *)a[1]);                \
		iov_ends(m.iov, m.iovlen, &first, &first_len, &last, &last_len); \
		dir(a[0], first, first_len, last, last_len, ctx->ret, a[2]);     \
		return 0;                                                        \
	}

/* reads look only at the start of the data; writes at its two ends */
#define READ(fd, first, first_len, last, last_len, ret, flags) \
	on_read(fd, first, first_len, ret, flags)
#define WRITE(fd, first, first_len, last, last_len, ret, flags) \
	on_write(fd, first, first_len, last, last_len, ret)

BUF_PROG(tp_req_read, read, READ, 0)
BUF_PROG(tp_req_recvfrom, recvfrom, READ, a[3])
IOV_PROG(tp_req_readv, readv, READ)
MSG_PROG(tp_req_recvmsg, recvmsg, READ)
BUF_PROG(tp_req_write, write, WRITE, 0)
BUF_PROG(tp_req_sendto, sendto, WRITE, 0)
IOV_PROG(tp_req_writev, writev, WRITE)
MSG_PROG(tp_req_sendmsg, sendmsg, WRITE)

/* sendfile: body bytes from a file, counted against the length */
SEC("tracepoint/syscalls/sys_exit_sendfile64")
int tp_req_sendfile(struct trace_event_raw_sys_exit *ctx)
{
	__u64 a[6], key;
	struct conn *c;

	TARGET_OR_LEAVE();
	syscall_args(a);
	key = (bpf_get_current_pid_tgid() & ~0xffffffffull) | (__u32)a[0];
	c = bpf_map_lookup_elem(&conns, &key);
	if (!c || !c->responding || ctx->ret <= 0)
		return 0;
	c->bytes_out += ctx->ret;
	if (c->left != LEFT_UNKNOWN) {
		c->left = (__u64)ctx->ret >= c->left ? 0 : c->left - ctx->ret;
		if (!c->left)
			resp_end(c, a[0], GMT_HTTP_END_LENGTH);
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_close")
int tp_req_close(struct trace_event_raw_sys_exit *ctx)
{
	__u64 a[6];

	TARGET_OR_LEAVE();
	syscall_args(a);
	if (!ctx->ret)
		on_close(a[0]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_shutdown")
int tp_req_shutdown(struct trace_event_raw_sys_exit *ctx)
{
	__u64 a[6];

	TARGET_OR_LEAVE();
	syscall_args(a);
	if (!ctx->ret && a[1] != 0 /* SHUT_RD */)
		on_close(a[0]);
	return 0;
}

/* close_range(first, last, flags): each connection in the range ends */
SEC("tracepoint/syscalls/sys_exit_close_range")
int tp_req_close_range(struct trace_event_raw_sys_exit *ctx)
{
	__u64 a[6];

	TARGET_OR_LEAVE();
	syscall_args(a);
	if (!ctx->ret && !(a[2] & 4 /* CLOSE_RANGE_CLOEXEC: nothing closed yet */))
		end_conns(a[0], a[1] > 0xffffffffull ? 0xffffffffu : a[1], false);
	return 0;
}

/* dup2(old, new) and dup3(old, new, flags) close new first */
SEC("tracepoint/syscalls/sys_exit_dup3")
int tp_req_dup3(struct trace_event_raw_sys_exit *ctx)
{
	__u64 a[6];

	TARGET_OR_LEAVE();
	syscall_args(a);
	if (ctx->ret >= 0)
		on_close(a[1]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_dup2")
int tp_req_dup2(struct trace_event_raw_sys_exit *ctx)
{
	__u64 a[6];

	TARGET_OR_LEAVE();
	syscall_args(a);
	if (ctx->ret >= 0 && a[0] != a[1])
		on_close(a[1]);
	return 0;
}

/* the process is gone (its last thread exits): its connections with it,
 * quietly, since its exit says so */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tp_req_exit, struct task_struct *p)
{
	if (!gmt_is_target(BPF_CORE_READ(p, tgid)) || BPF_CORE_READ(p, signal, live.counter))
		return 0;
	end_conns(0, 0xffffffffu, true);
	return 0;
}
