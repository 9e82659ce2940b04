// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --metrics and --metrics-file (metrics.h): the HTTP server, the textfile,
 * and when to make the text again */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
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
#include "report/report.h"
#include "metrics.h"

/* a scraper needs one; the tracer's own files, probes and maps need the rest
 * of its fds (the unit's LimitNOFILE) */
#define MAX_CONNS 64
/* what one request may take, and what an idle connection is kept */
#define REQUEST_TIMEOUT_S 10

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
	/* the connections open now, each held by a reference of ours until
	 * evhttp lets it go: at MAX_CONNS the listener pauses, and further
	 * clients wait in the kernel's backlog, holding none of our fds */
	struct evconnlistener *listener;
	struct bufferevent *conns[MAX_CONNS];
	int nconns;
	struct event *tick;
	bool accept_failed_said;

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

/* evhttp frees a connection's bufferevent with its callbacks cleared; it
 * never clears the event callback otherwise */
static void sweep(struct metrics *x)
{
	bufferevent_event_cb ecb;
	int i = 0;

	while (i < x->nconns) {
		bufferevent_getcb(x->conns[i], NULL, NULL, &ecb, NULL);
		if (ecb) {
			i++;
			continue;
		}
		bufferevent_decref(x->conns[i]);
		x->conns[i] = x->conns[--x->nconns];
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct metrics *x = arg;
	struct timeval tv = { 0, 100000 };

	(void)fd;
	(void)what;
	sweep(x);
	if (x->nconns < MAX_CONNS)
		evconnlistener_enable(x->listener);
	if (x->nconns)
		evtimer_add(x->tick, &tv);
}

static struct bufferevent *new_conn(struct event_base *base, void *arg)
{
	struct metrics *x = arg;
	struct timeval tv = { 0, 100000 };
	struct bufferevent *b;

	sweep(x);
	b = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	/* NULL: evhttp makes its own, uncounted (only when memory is out) */
	if (!b)
		return NULL;
	bufferevent_incref(b);
	x->conns[x->nconns++] = b;
	if (x->nconns >= MAX_CONNS)
		evconnlistener_disable(x->listener);
	evtimer_add(x->tick, &tv);
	return b;
}

/* out of fds (or memory): accept would fail again at once, and the listener
 * is level-triggered, so it rests a second, and says so once */
static struct metrics *serving; /* the one server: the error callback's own
				 * argument is evhttp's, not ours */

static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct metrics *x = serving;
	struct timeval tv = { 1, 0 };
	int e = errno;

	(void)arg;
	evconnlistener_disable(l);
	evtimer_add(x->tick, &tv);
	if (!x->accept_failed_said) {
		x->accept_failed_said = true;
		fprintf(stderr,
			"gpumemtrace: --metrics: cannot accept a connection (%s): "
			"new ones wait while %d are open; said once\n",
			strerror(e), x->nconns);
	}
}

/* libevent's own warnings: a few, never a flood */
static void quiet_log(int severity, const char *msg)
{
	static int said;

	if (severity >= EVENT_LOG_WARN && __atomic_fetch_add(&said, 1, __ATOMIC_RELAXED) < 3)
		fprintf(stderr, "gpumemtrace: --metrics: %s\n", msg);
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
	evhttp_set_timeout(x->http, REQUEST_TIMEOUT_S);
	evhttp_set_cb(x->http, "/metrics", serve, x);
	evhttp_set_gencb(x->http, not_found, x);
	evhttp_set_bevcb(x->http, new_conn, x);
	event_set_log_callback(quiet_log);
	sock = evhttp_bind_socket_with_handle(x->http, host, port);
	if (!sock) {
		snprintf(err, size, "--metrics: cannot listen on %s port %u: %s", host, port,
			 strerror(errno));
		return -EADDRINUSE;
	}
	x->listener = evhttp_bound_socket_get_listener(sock);
	x->tick = evtimer_new(x->base, on_tick, x);
	if (!x->tick) {
		snprintf(err, size, "--metrics: cannot set up the HTTP server");
		return -ENOMEM;
	}
	serving = x;
	evconnlistener_set_error_cb(x->listener, on_accept_error);
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
	/* evhttp has let every connection go: ours are the last references */
	for (int i = 0; i < x->nconns; i++)
		bufferevent_decref(x->conns[i]);
	if (x->tick)
		event_free(x->tick);
	if (x->base)
		event_base_free(x->base);
	findings__free(x->fs);
	free(x->text);
	pthread_mutex_destroy(&x->lock);
	free(x);
}
