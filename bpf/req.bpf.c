// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* HTTP/1.1 requests on the target's sockets, from syscall exits (one
 * program on the sys_exit raw tracepoint). Each connection's two
 * directions are parsed as streams (http_parse.bpf.h): every byte read or
 * written goes through a small state machine that knows where a message
 * starts and ends (request and status lines, headers, Content-Length and
 * chunked bodies), so a request line is seen only where a message can
 * start, wherever the reads split it, and every request of a pipelined
 * read is seen. Body bytes are never copied out: a response's are scanned
 * for its `timings` (timings_parse.bpf.h), whose digits alone are sent,
 * beside method, path, status and byte counts. */
#include "syscalls.bpf.h"
#include "http_parse.bpf.h"
#include "timings_parse.bpf.h"
#include <bpf/bpf_endian.h>

#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define FEED_CHUNK 256	     /* bytes copied from the user at a time */
#define FEED_STEPS (1 << 16) /* bpf_loop steps a call may take: then lost */
#define SCAN_MAX (48 << 10)  /* body bytes of a call scanned for timings */

/* one connection of a target */
struct conn {
	__u64 id;
	__u64 bytes_in, bytes_out;
	struct http_msg req, resp;
	struct tm_scan tm; /* the response body's timings */
	__u64 heads;	   /* of the requests not yet answered, oldest lowest: HEAD */
	__u16 status;	   /* of the response going out */
	__u8 responding, sse, tls, seen;
	__u8 waiting; /* requests not yet answered, up to 64 */
	__u8 gone;    /* the client's end said so: once per request */
	__u32 from;   /* the traced process that connected; 0: another */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* tgid << 32 | fd */
	__type(value, struct conn);
} conns SEC(".maps");

/* a new connection's entry is made here, per CPU: off the stack, which
 * the sys_exit program shares with peer_of's */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct conn);
} conn_new SEC(".maps");

/* the bytes of one call on one direction: a buffer, or the pieces of an
 * iovec array after the first. Per CPU, not on the stack: bpf_loop's steps
 * then look alike to the verifier, which checks one and not 65,536. */
struct feed {
	__u8 b[FEED_CHUNK];  /* copied from the user */
	__u64 iov, iov_left; /* the pieces still to come */
	__u64 at, len;	     /* the current piece: its next byte, bytes left */
	__u64 total;	     /* bytes of the call still to parse */
	__u64 done, mark;    /* bytes parsed; where the response going out began */
	__u64 scanned;	     /* body bytes scanned for timings */
	__u32 have, pos;     /* b: bytes copied, the next one */
	int fd;
	__u8 resp, lost;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct feed);
} feeds SEC(".maps");

static __always_inline bool is_socket(int fd)
{
	struct file *f = fd_file(fd);
	umode_t mode;

	if (!f)
		return false;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	return (mode & S_IFMT) == S_IFSOCK;
}

static __always_inline struct sock *fd_sock(int fd)
{
	struct file *f = fd_file(fd);
	struct socket *so;

	if (!f)
		return NULL;
	so = BPF_CORE_READ(f, private_data);
	return so ? BPF_CORE_READ(so, sk) : NULL;
}

#define RCV_SHUTDOWN 1

/* the peer has closed its end (its FIN came): an answer written now goes
 * to no one, unless the client half-closed on purpose (rare in HTTP) */
static __always_inline bool peer_closed(int fd)
{
	struct sock *sk = fd_sock(fd);

	return sk && (BPF_CORE_READ_BITFIELD_PROBED(sk, sk_shutdown) & RCV_SHUTDOWN);
}

#define AF_INET 2
#define AF_INET6 10
#define SOCK_STREAM 1
#define EINPROGRESS 115

/* A TCP connection as its client sees it: its own address and port, then
 * the server's (IPv4 as IPv4-mapped IPv6), in its network namespace. The
 * client's connect() puts it here when a target makes it; a target's
 * server looks its connection up at its first read, to tell a request a
 * traced process sent (llama-server's proxy to itself, a router to its
 * child servers) from a client's. */
struct peer_key {
	__u32 netns;
	__u16 cport, sport; /* host order */
	__u8 caddr[16], saddr[16];
};

struct peer {
	__u32 tgid, pad;
	__u64 sk; /* the client's socket: still this connection when looked up? */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct peer_key);
	__type(value, struct peer);
} peers SEC(".maps");

static __always_inline void mapped4(__u8 *to, __be32 a)
{
	__builtin_memset(to, 0, 10);
	to[10] = to[11] = 0xff;
	__builtin_memcpy(to + 12, &a, 4);
}

/* sk's two ends: local (address, port) and remote, into the key's client
 * or server half as `local_is_client` says; false for all but TCP/IP */
static __always_inline bool tcp_ends(struct sock *sk, bool local_is_client, struct peer_key *k)
{
	__u16 fam = BPF_CORE_READ(sk, __sk_common.skc_family);
	__u8 *local = local_is_client ? k->caddr : k->saddr;
	__u8 *remote = local_is_client ? k->saddr : k->caddr;
	__u16 lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	__u16 rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));

	if (BPF_CORE_READ(sk, sk_socket, type) != SOCK_STREAM)
		return false;
	if (fam == AF_INET) {
		mapped4(local, BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr));
		mapped4(remote, BPF_CORE_READ(sk, __sk_common.skc_daddr));
	} else if (fam == AF_INET6) {
		bpf_core_read(local, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_core_read(remote, 16, &sk->__sk_common.skc_v6_daddr);
	} else {
		return false;
	}
	k->cport = local_is_client ? lport : rport;
	k->sport = local_is_client ? rport : lport;
	k->netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	return k->cport && k->sport;
}

/* connect(fd, ...) returned 0 or EINPROGRESS: the client's ports are set */
static __always_inline void on_connect(int fd, long ret)
{
	struct peer_key k = {};
	struct peer v = { .tgid = bpf_get_current_pid_tgid() >> 32 };
	struct sock *sk;

	if (ret && ret != -EINPROGRESS)
		return;
	sk = fd_sock(fd);
	if (!sk || !tcp_ends(sk, true, &k))
		return;
	v.sk = (__u64)sk;
	bpf_map_update_elem(&peers, &k, &v, BPF_ANY);
}

/* the traced process whose connect made the server's connection on fd:
 * taken from the map once found, and only while the client's socket is
 * still that connection (a port reused later by another client is not) */
/* the two keys peer_of compares: per CPU, off the stack, which the
 * caller's connection fills */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct peer_key[2]);
} peer_keys SEC(".maps");

/* the traced process whose connect made the server's connection on fd:
 * taken from the map once found, and only while the client's socket is
 * still that connection (a port reused later by another client is not) */
static __noinline __u32 peer_of(int fd)
{
	struct sock *sk = fd_sock(fd), *csk;
	struct peer_key *k;
	struct peer *v;
	__u32 tgid, zero = 0;

	k = bpf_map_lookup_elem(&peer_keys, &zero);
	if (!k || !sk)
		return 0;
	__builtin_memset(k, 0, 2 * sizeof(*k));
	if (!tcp_ends(sk, false, &k[0]))
		return 0;
	v = bpf_map_lookup_elem(&peers, &k[0]);
	if (!v)
		return 0;
	tgid = v->tgid;
	csk = (struct sock *)v->sk;
	bpf_map_delete_elem(&peers, &k[0]);
	if (!tcp_ends(csk, true, &k[1]))
		return 0;
#pragma unroll
	for (int i = 0; i < (int)(sizeof(*k) / 4); i++)
		if (((__u32 *)&k[0])[i] != ((__u32 *)&k[1])[i])
			return 0;
	return tgid;
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
	e->from_pid = c->from;
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

static __always_inline void request_event(struct conn *c, int fd)
{
	struct gmt_http *e;

	c->seen = 1;
	c->gone = 0;
	serving = 1;
	e = http_event(c, fd, GMT_HTTP_REQUEST);
	if (!e)
		return;
	__builtin_memcpy(e->method, c->req.method, sizeof(e->method));
	__builtin_memcpy(e->path, c->req.path, sizeof(e->path));
	e->path[sizeof(e->path) - 1] = 0;
	gmt_submit(e);
}

/* the figures of a timings object the response's body just closed */
static __always_inline void timings_event(struct conn *c, int fd)
{
	struct gmt_timings *e = gmt_reserve(sizeof(*e), GMT_EV_TIMINGS, GMT_SRC_HTTP);

	if (!e)
		return;
	e->conn = c->id;
	e->fd = fd;
	e->index = c->tm.index;
	e->prompt_n = c->tm.prompt_n;
	e->predicted_n = c->tm.predicted_n;
	e->cache_n = c->tm.cache_n;
	e->prompt_us = c->tm.prompt_us;
	e->predicted_us = c->tm.predicted_us;
	e->have = c->tm.have;
	gmt_submit(e);
}

struct iov {
	__u64 base, len;
};

struct feed_ctx {
	struct conn *c;
	struct feed *f;
};

static __always_inline void feed_out(struct conn *c, struct feed *f, int out, __u8 was)
{
	struct gmt_http *e;

	if (!f->resp) {
		if (!(out & HP_OUT_REQUEST))
			return;
		if (c->waiting < 64) {
			/* its answer has no body, whatever its headers say */
			if (c->req.mlen == 4 && c->req.method[0] == 'H' &&
			    c->req.method[1] == 'E' && c->req.method[2] == 'A' &&
			    c->req.method[3] == 'D')
				c->heads |= 1ull << (c->waiting & 63);
			c->waiting++;
		}
		request_event(c, f->fd);
		return;
	}
	if ((out & HP_OUT_STATUS) && c->resp.status >= 200 && (c->heads & 1))
		c->resp.flags |= HP_F_NOBODY;
	if (out & HP_OUT_BEGIN) {
		/* the server did not look before it answered */
		if (!c->gone && peer_closed(f->fd)) {
			c->gone = 1;
			if ((e = http_event(c, f->fd, GMT_HTTP_GONE)))
				gmt_submit(e);
		}
		if (c->waiting) {
			c->waiting--;
			c->heads >>= 1;
		}
		c->status = c->resp.status;
		c->sse = !!(c->resp.flags & HP_F_SSE);
		c->responding = 1;
		tm__reset(&c->tm);
		e = http_event(c, f->fd, GMT_HTTP_RESP_BEGIN);
		if (e)
			gmt_submit_now(e);
	}
	if ((out & HP_OUT_END) && c->responding) {
		c->bytes_out += f->done - f->mark;
		f->mark = f->done;
		resp_end(c, f->fd,
			 was == HP_TRAILER_START ? GMT_HTTP_END_CHUNKED : GMT_HTTP_END_LENGTH);
	}
}

/* one step: the next piece, a run of bytes passed over, or one byte */
static long feed_step(__u64 i, struct feed_ctx *x)
{
	struct conn *c = x->c;
	struct feed *f = x->f;
	struct http_msg *m = f->resp ? &c->resp : &c->req;
	struct iov v = {};
	bool scan;
	__u64 n;
	__u8 was, b;
	int out;

	if (!f->total)
		return 1;
	if (!f->len) {
		if (!f->iov_left || bpf_probe_read_user(&v, sizeof(v), (void *)f->iov)) {
			f->lost = 1;
			return 1;
		}
		f->iov += sizeof(v);
		f->iov_left--;
		f->at = v.base;
		f->len = v.len < f->total ? v.len : f->total;
		f->have = f->pos = 0;
		return 0;
	}
	/* a response's body is read for its timings, up to SCAN_MAX a call */
	scan = f->resp && (m->state == HP_BODY || m->state == HP_CHUNK_DATA) &&
	       c->tm.state != TM_OFF;
	if (scan && f->scanned >= SCAN_MAX) {
		c->tm.state = TM_OFF;
		scan = false;
	}
	n = scan ? 0 : http__skip(m, f->len);
	if (n) {
		f->at += n;
		f->len -= n;
		f->total -= n;
		f->done += n;
		f->have = f->pos = 0;
		return 0;
	}
	if (f->pos >= f->have) {
		n = f->len < FEED_CHUNK ? f->len : FEED_CHUNK;
		/* clamped again right before the read: older verifiers (6.1)
		 * lose the bound of a value the compiler kept from the first */
		asm volatile("" : "+r"(n));
		if (n > FEED_CHUNK)
			n = FEED_CHUNK;
		if (!n || bpf_probe_read_user(f->b, n, (void *)f->at)) {
			f->lost = 1;
			return 1;
		}
		f->have = n;
		f->pos = 0;
	}
	was = m->state;
	b = f->b[f->pos & (FEED_CHUNK - 1)];
	out = http__byte(m, b);
	if (scan) {
		f->scanned++;
		if (tm__byte(&c->tm, b))
			timings_event(c, f->fd);
	}
	f->pos++;
	f->at++;
	f->len--;
	f->total--;
	f->done++;
	if (out)
		feed_out(c, f, out, was);
	return 0;
}

/* parse `total` bytes of a call: `first_len` at `first`, then the pieces
 * of the iovec array at `iov` (cnt of them) after the first */
static __always_inline void feed(struct conn *c, int fd, bool resp, __u64 first, __u64 first_len,
				 __u64 iov, __u64 cnt, __u64 total)
{
	struct http_msg *m = resp ? &c->resp : &c->req;
	struct feed_ctx x = { c };
	struct feed *f;
	__u32 zero = 0;

	f = x.f = bpf_map_lookup_elem(&feeds, &zero);
	if (!f)
		return;
	f->iov = iov + sizeof(struct iov);
	f->iov_left = cnt > 1 ? cnt - 1 : 0;
	f->at = first;
	f->len = first_len < total ? first_len : total;
	f->total = total;
	f->done = f->mark = 0;
	f->scanned = 0;
	f->have = f->pos = 0;
	f->fd = fd;
	f->resp = resp;
	f->lost = 0;
	bpf_loop(FEED_STEPS, feed_step, &x, 0);
	if (f->lost || f->total) {
		/* bytes not seen: where the next message starts is not known */
		m->state = HP_JUNK;
	}
	if (resp && c->responding)
		c->bytes_out += f->done - f->mark;
}

#define MSG_PEEK 2

/* data read from fd: at buf (avail of it: a vector's first piece, then
 * cnt - 1 more at iov), ret in all. A connection is taken up at its first
 * read that may be a request; a peek leaves the data to be read again. */
static __always_inline void on_read(int fd, __u64 buf, __u64 avail, __u64 iov, __u64 cnt, long ret,
				    __u64 flags)
{
	__u64 key = (bpf_get_current_pid_tgid() & ~0xffffffffull) | (__u32)fd;
	struct conn *c = bpf_map_lookup_elem(&conns, &key);
	struct gmt_http *e;
	__u8 b[2] = {};

	/* the client closed or reset its end while a request is open: the
	 * server's own check (cpp-httplib peeks a byte) reads it first */
	if (c && !c->tls && (ret == 0 || ret == -104 /* ECONNRESET */) && !c->gone &&
	    (c->waiting || c->responding)) {
		c->gone = 1;
		if ((e = http_event(c, fd, GMT_HTTP_GONE)))
			gmt_submit(e);
	}
	if (ret <= 0 || !buf || (c && c->tls) || (flags & MSG_PEEK))
		return;
	if (!c) {
		if (!avail || bpf_probe_read_user(b, avail >= 2 && ret >= 2 ? 2 : 1, (void *)buf))
			return;
		if (!(b[0] == 0x16 && b[1] == 0x03) && !(b[0] >= 'A' && b[0] <= 'Z'))
			return;
		if (!is_socket(fd))
			return;
		/* a connection accepted before tracing, or a new one */
		__u32 zero = 0;
		struct conn *n = bpf_map_lookup_elem(&conn_new, &zero);

		if (!n)
			return;
		__builtin_memset(n, 0, sizeof(*n));
		n->id = bpf_ktime_get_ns();
		http__init(&n->req, 0);
		http__init(&n->resp, 1);
		n->tls = b[0] == 0x16;
		bpf_map_update_elem(&conns, &key, n, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&conns, &key);
		if (!c)
			return;
		c->from = peer_of(fd);
		if (c->tls) {
			if ((e = http_event(c, fd, GMT_HTTP_TLS)))
				gmt_submit(e);
			return;
		}
	}
	c->bytes_in += ret;
	if (c->req.state != HP_JUNK)
		feed(c, fd, false, buf, avail, iov, cnt, ret);
}

/* data written to fd (the same pieces): a response's status line, headers
 * and body, in turn */
static __always_inline void on_write(int fd, __u64 buf, __u64 avail, __u64 iov, __u64 cnt, long ret)
{
	__u64 key = (bpf_get_current_pid_tgid() & ~0xffffffffull) | (__u32)fd;
	struct conn *c = bpf_map_lookup_elem(&conns, &key);
	char b[5] = {};

	if (!c || c->tls || ret <= 0 || !buf)
		return;
	if (c->resp.state == HP_UNTIL_CLOSE) {
		/* a body without a length ends with the next status line */
		if (avail < 5 || bpf_probe_read_user(b, 5, (void *)buf) || b[0] != 'H' ||
		    b[1] != 'T' || b[2] != 'T' || b[3] != 'P' || b[4] != '/') {
			c->bytes_out += ret;
			return;
		}
		if (c->responding)
			resp_end(c, fd, GMT_HTTP_END_NEXT);
		http__reset(&c->resp);
	} else if (c->resp.state == HP_JUNK) {
		http__reset(&c->resp); /* a write may start a response */
	}
	feed(c, fd, true, buf, avail, iov, cnt, ret);
}

/* the connection ends: its response, if one was going, then itself */
static __always_inline void close_conn(struct conn *c, int fd)
{
	struct gmt_http *e;

	if (c->responding)
		resp_end(c, fd, GMT_HTTP_END_CLOSE);
	if (!c->seen && !c->tls)
		return; /* no request came: not an HTTP connection to us */
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

/* an iovec array's first piece */
static __always_inline void iov_first(__u64 iov, __u64 cnt, __u64 *first, __u64 *first_len)
{
	struct iov v = {};

	*first = *first_len = 0;
	if (!iov || !cnt || cnt > 1024)
		return;
	bpf_probe_read_user(&v, sizeof(v), (void *)iov);
	*first = v.base;
	*first_len = v.len;
}

struct msghdr_user {
	__u64 name;
	__u32 namelen, pad;
	__u64 iov, iovlen;
};

/* sendfile: body bytes from a file, counted against the length */
static __always_inline void on_sendfile(int fd, long ret)
{
	__u64 key = (bpf_get_current_pid_tgid() & ~0xffffffffull) | (__u32)fd;
	struct conn *c = bpf_map_lookup_elem(&conns, &key);

	if (!c || c->tls || ret <= 0)
		return;
	if (c->responding)
		c->bytes_out += ret;
	if (http__pass(&c->resp, ret) & HP_OUT_END && c->responding)
		resp_end(c, fd, GMT_HTTP_END_LENGTH);
}

/* the calls that end connections: close, shutdown, close_range(first,
 * last, flags) and dup2(old, new), dup3(old, new, flags), which close new
 * first */
static __always_inline void on_ends(long nr, const __u64 *a, long ret)
{
	if (nr == sys_nr[GMT_SYS_CLOSE]) {
		if (!ret)
			on_close(a[0]);
	} else if (nr == sys_nr[GMT_SYS_SHUTDOWN]) {
		if (!ret && a[1] != 0 /* SHUT_RD */)
			on_close(a[0]);
	} else if (nr == sys_nr[GMT_SYS_CLOSE_RANGE]) {
		if (!ret && !(a[2] & 4 /* CLOSE_RANGE_CLOEXEC: nothing closed yet */))
			end_conns(a[0], a[1] > 0xffffffffull ? 0xffffffffu : a[1], false);
	} else if (nr == sys_nr[GMT_SYS_DUP3]) {
		if (ret >= 0)
			on_close(a[1]);
	} else if (nr == sys_nr[GMT_SYS_DUP2]) {
		if (ret >= 0 && a[0] != a[1])
			on_close(a[1]);
	}
}

/* the bits of the calls above, set by user space while their groups
 * (syscalls:http, http-ends, dup2) are on */
const volatile __u64 req_sys_want[GMT_SYS_WORDS] = {};

/* One raw tracepoint for every call: a perf-event tracepoint each would
 * cost a grace period each to detach, one after another, at exit. Each
 * call's bytes go to on_read or on_write as one piece (read, recvfrom,
 * write, sendto) or as an iovec array's (readv, writev; recvmsg, sendmsg
 * through their msghdr); every byte of a call is parsed, piece after
 * piece. */
SEC("tp_btf/sys_exit")
int BPF_PROG(tp_req_sys_exit, struct pt_regs *regs, long ret)
{
	long nr = GMT_SYSCALL_NR(regs);
	__u64 a[6], first, first_len, iov = 0, cnt = 0, flags = 0;
	struct msghdr_user m = {};
	bool out;

	if (!syscall_wanted(req_sys_want, nr) || !gmt_is_target(bpf_get_current_pid_tgid() >> 32) ||
	    GMT_SYSCALL_COMPAT(regs))
		return 0;
	syscall_args(a);
	if (nr == sys_nr[GMT_SYS_READ] || nr == sys_nr[GMT_SYS_RECVFROM] ||
	    nr == sys_nr[GMT_SYS_WRITE] || nr == sys_nr[GMT_SYS_SENDTO]) {
		/* read(fd, buf, ...), recvfrom(fd, buf, len, flags, ...) */
		first = a[1];
		first_len = ret > 0 ? ret : 0;
		if (nr == sys_nr[GMT_SYS_RECVFROM])
			flags = a[3];
		out = nr == sys_nr[GMT_SYS_WRITE] || nr == sys_nr[GMT_SYS_SENDTO];
	} else if (nr == sys_nr[GMT_SYS_READV] || nr == sys_nr[GMT_SYS_WRITEV]) {
		/* readv(fd, iov, cnt) */
		iov = a[1];
		cnt = a[2];
		iov_first(iov, cnt, &first, &first_len);
		out = nr == sys_nr[GMT_SYS_WRITEV];
	} else if (nr == sys_nr[GMT_SYS_RECVMSG] || nr == sys_nr[GMT_SYS_SENDMSG]) {
		/* recvmsg(fd, msghdr, flags) */
		bpf_probe_read_user(&m, sizeof(m), (void *)a[1]);
		iov = m.iov;
		cnt = m.iovlen;
		iov_first(iov, cnt, &first, &first_len);
		out = nr == sys_nr[GMT_SYS_SENDMSG];
		if (!out)
			flags = a[2];
	} else if (nr == sys_nr[GMT_SYS_SENDFILE]) {
		on_sendfile(a[0], ret);
		return 0;
	} else if (nr == sys_nr[GMT_SYS_CONNECT]) {
		on_connect(a[0], ret);
		return 0;
	} else {
		on_ends(nr, a, ret);
		return 0;
	}
	if (out)
		on_write(a[0], first, first_len, iov, cnt, ret);
	else
		on_read(a[0], first, first_len, iov, cnt, ret, flags);
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
