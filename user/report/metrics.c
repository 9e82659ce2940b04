// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --metrics and --metrics-file (metrics.h) */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "analysis/findings.h"
#include "metrics.h"
#include "report.h"

struct metrics {
	/* the server's thread reads text under lock; the tracing thread swaps it */
	pthread_mutex_t lock;
	char *text;
	size_t len;
	struct event_base *base;
	struct evhttp *http;
	pthread_t thread;
	bool running;
	char address[64];

	const char *file;
	bool file_failed;
	__u64 interval_ns, last_ns;
	/* the verdicts cost more as a run grows: rebuilt at most once per
	 * twenty times what the last build took, as in the live view */
	struct findings *fs;
	__u64 fs_ns, fs_cost;
};

static void serve(struct evhttp_request *req, void *arg)
{
	struct metrics *x = arg;
	struct evbuffer *b = evbuffer_new();

	if (!b) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	pthread_mutex_lock(&x->lock);
	if (x->text)
		evbuffer_add(b, x->text, x->len);
	pthread_mutex_unlock(&x->lock);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
}

static void not_found(struct evhttp_request *req, void *arg)
{
	(void)arg;
	evhttp_send_error(req, HTTP_NOTFOUND, "only /metrics is served here");
}

static void *loop(void *arg)
{
	struct metrics *x = arg;

	event_base_dispatch(x->base);
	return NULL;
}

/* "PORT", "IP:PORT", "[IPv6]:PORT": numbers only, so no resolver runs */
static int parse_addr(const char *addr, char *host, size_t hsize, unsigned short *port)
{
	const char *colon = strrchr(addr, ':'), *p;
	unsigned char buf[16];
	char *end;
	long v;

	if (!colon) {
		snprintf(host, hsize, "127.0.0.1");
		p = addr;
	} else if (addr[0] == '[') {
		if (colon < addr + 2 || colon[-1] != ']')
			return -1;
		snprintf(host, hsize, "%.*s", (int)(colon - addr - 2), addr + 1);
		p = colon + 1;
	} else {
		snprintf(host, hsize, "%.*s", (int)(colon - addr), addr);
		p = colon + 1;
	}
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || end == p || *end || v < 0 || v > 65535)
		return -1;
	*port = v;
	return inet_pton(strchr(host, ':') ? AF_INET6 : AF_INET, host, buf) == 1 ? 0 : -1;
}

static int start_server(struct metrics *x, const char *addr, char *err, size_t size)
{
	struct evhttp_bound_socket *sock;
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	sigset_t all, old;
	char host[48];
	unsigned short port;
	int e;

	if (parse_addr(addr, host, sizeof(host), &port)) {
		snprintf(err, size,
			 "--metrics '%s': expected PORT, IP:PORT or [IPv6]:PORT, as 9464 or "
			 "127.0.0.1:9464",
			 addr);
		return -EINVAL;
	}
	if (evthread_use_pthreads() || !(x->base = event_base_new()) ||
	    !(x->http = evhttp_new(x->base))) {
		snprintf(err, size, "--metrics: cannot set up the HTTP server");
		return -ENOMEM;
	}
	evhttp_set_allowed_methods(x->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(x->http, 16384);
	evhttp_set_max_body_size(x->http, 0);
	evhttp_set_timeout(x->http, 30);
	evhttp_set_cb(x->http, "/metrics", serve, x);
	evhttp_set_gencb(x->http, not_found, x);
	sock = evhttp_bind_socket_with_handle(x->http, host, port);
	if (!sock) {
		snprintf(err, size, "--metrics: cannot listen on %s port %u: %s", host, port,
			 strerror(errno));
		return -EADDRINUSE;
	}
	/* port 0: the one the kernel chose */
	if (!getsockname(evhttp_bound_socket_get_fd(sock), (struct sockaddr *)&sa, &salen))
		port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port :
							((struct sockaddr_in *)&sa)->sin_port);
	snprintf(x->address, sizeof(x->address), strchr(host, ':') ? "[%s]:%u" : "%s:%u", host,
		 port);
	/* signals are the tracing thread's (its signalfd): the server's thread
	 * starts with every one blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&x->thread, NULL, loop, x);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		snprintf(err, size, "--metrics: cannot start its thread");
		return -EAGAIN;
	}
	x->running = true;
	return 0;
}

struct metrics *metrics__new(const char *addr, const char *file, double interval_s, char *err,
			     size_t size)
{
	struct metrics *x = calloc(1, sizeof(*x));

	if (!x) {
		snprintf(err, size, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&x->lock, NULL);
	x->file = file;
	x->interval_ns = interval_s * 1e9;
	if (addr && start_server(x, addr, err, size)) {
		metrics__free(x);
		return NULL;
	}
	return x;
}

const char *metrics__address(const struct metrics *x)
{
	return x->address;
}

/* beside it, then renamed over it: a reader sees the old text or the new */
static int write_file(const char *path, const char *text, size_t len)
{
	char tmp[4096];
	ssize_t n;
	size_t off = 0;
	int fd, e;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	/* node_exporter reads it as a user of its own */
	fchmod(fd, 0644);
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n <= 0) {
			e = n < 0 ? -errno : -EIO;
			close(fd);
			unlink(tmp);
			return e;
		}
		off += n;
	}
	if (close(fd) || rename(tmp, path)) {
		e = -errno;
		unlink(tmp);
		return e;
	}
	return 0;
}

bool metrics__update(struct metrics *x, const struct model *m, __u64 now,
		     const struct findings *final, char *err, size_t size)
{
	const struct findings *fs;
	char *text = NULL, *old;
	size_t len = 0;
	FILE *f;
	int e;

	if (!x || (!final && x->last_ns && now - x->last_ns < x->interval_ns))
		return true;
	x->last_ns = now;
	if (!final && (!x->fs || now - x->fs_ns >= x->fs_cost * 20)) {
		findings__free(x->fs);
		x->fs = findings__build(m);
		x->fs_cost = event__now_ns() - now;
		x->fs_ns = now;
	}
	f = open_memstream(&text, &len);
	if (!f)
		return true;
	fs = final ? final : x->fs;
	report__prometheus(f, m, fs);
	if (fclose(f)) {
		free(text);
		return true;
	}
	pthread_mutex_lock(&x->lock);
	old = x->text;
	x->text = text;
	x->len = len;
	pthread_mutex_unlock(&x->lock);
	free(old);
	if (x->file && !x->file_failed && (e = write_file(x->file, text, len))) {
		x->file_failed = true;
		snprintf(err, size, "writing %s failed (%s): it is written no more", x->file,
			 strerror(-e));
		return false;
	}
	return true;
}

void metrics__free(struct metrics *x)
{
	if (!x)
		return;
	if (x->running) {
		event_base_loopbreak(x->base);
		pthread_join(x->thread, NULL);
	}
	if (x->http)
		evhttp_free(x->http);
	if (x->base)
		event_base_free(x->base);
	findings__free(x->fs);
	free(x->text);
	pthread_mutex_destroy(&x->lock);
	free(x);
}
