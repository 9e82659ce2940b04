// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Drain: owns the reader thread of the kernel's ring buffer, the queue it
 * copies records into (swapped under a lock; past DRAIN_QUEUE_MAX, records
 * are dropped and counted by source) and the eventfd that wakes the main
 * loop. The main loop empties the ring buffer too before each batch, one
 * reader at a time, so what it takes is every record up to then, in order. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "drain.h"

/* the thread's wait on the kernel: the BPF side submits most records
 * without a wakeup and counts on the reader to come by this often */
#define DRAIN_POLL_MS 100
/* queued bytes that wake the main loop even without a kernel wakeup */
#define DRAIN_WAKE_BYTES (4u << 20)
/* a queue buffer bigger than this after a burst is given back */
#define DRAIN_KEEP_BYTES (16u << 20)

struct queue {
	unsigned char *buf;
	size_t len, cap;
};

struct drain {
	struct ring_buffer *rb;
	drain_fn fn;
	void *ctx;
	drain_early_fn early;
	void *early_ctx;
	int efd;
	pthread_t thread;
	bool running;
	atomic_bool stop;
	/* the ring buffer is read by one thread at a time: the reader, or the
	 * main loop, which empties it before each batch so that the records it
	 * takes are all those up to now, in order with what it emits itself */
	pthread_mutex_t consume;
	pthread_mutex_t lock; /* in, dropped */
	struct queue in;      /* filled by the thread */
	struct queue out;     /* taken by drain__run */
	__u64 dropped[GMT_SRC_NR];
};

static unsigned int source_of(__u16 type)
{
	switch (type) {
	case GMT_EV_RSS:
		return GMT_SRC_RSS;
	case GMT_EV_TOUCH:
		return GMT_SRC_FAULT;
	case GMT_EV_MMAP:
	case GMT_EV_MUNMAP:
	case GMT_EV_MREMAP:
	case GMT_EV_BRK:
		return GMT_SRC_MMAP;
	case GMT_EV_GPU_CALL:
	case GMT_EV_USTACK:
		return GMT_SRC_GPU;
	case GMT_EV_BO:
		return GMT_SRC_BO;
	case GMT_EV_HTTP:
	case GMT_EV_TIMINGS:
		return GMT_SRC_HTTP;
	case GMT_EV_DECODE:
		return GMT_SRC_DECODE;
	default:
		return GMT_SRC_PROC;
	}
}

/* the ring buffer's callback, on the thread (or on the caller of drain__run
 * once it has stopped): a copy into the queue */
static int enqueue(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	const struct gmt_hdr *e = data;
	size_t need, cap;
	void *p;

	/* the record's own length, checked again by the reader */
	if (size < sizeof(*e) || e->len < sizeof(*e) || e->len > size || e->len % 8)
		return 0;
	if (d->early)
		d->early(d->early_ctx, e);
	pthread_mutex_lock(&d->lock);
	need = d->in.len + e->len;
	if (need > DRAIN_QUEUE_MAX) {
		d->dropped[source_of(e->type)]++;
		goto out;
	}
	if (need > d->in.cap) {
		cap = d->in.cap ? d->in.cap : 65536;
		while (cap < need)
			cap *= 2;
		p = realloc(d->in.buf, cap);
		if (!p) {
			d->dropped[source_of(e->type)]++;
			goto out;
		}
		d->in.buf = p;
		d->in.cap = cap;
	}
	memcpy(d->in.buf + d->in.len, e, e->len);
	d->in.len = need;
out:
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static void wake(struct drain *d)
{
	__u64 one = 1;

	if (write(d->efd, &one, sizeof(one)) < 0) {
		/* the counter is full: the main loop has a wakeup pending anyway */
	}
}

static void consume(struct drain *d)
{
	pthread_mutex_lock(&d->consume);
	ring_buffer__consume(d->rb);
	pthread_mutex_unlock(&d->consume);
}

static void *thread_main(void *arg)
{
	struct drain *d = arg;
	struct epoll_event ev;
	size_t queued;
	int n;

	while (!atomic_load(&d->stop)) {
		/* > 0: the kernel woke us, so the records want reading now */
		n = epoll_wait(ring_buffer__epoll_fd(d->rb), &ev, 1, DRAIN_POLL_MS);
		consume(d);
		pthread_mutex_lock(&d->lock);
		queued = d->in.len;
		pthread_mutex_unlock(&d->lock);
		if ((n > 0 && queued) || queued >= DRAIN_WAKE_BYTES)
			wake(d);
	}
	return NULL;
}

struct drain *drain__new(int map_fd, drain_fn fn, void *ctx)
{
	struct drain *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->fn = fn;
	d->ctx = ctx;
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->consume, NULL);
	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->rb = ring_buffer__new(map_fd, enqueue, d, NULL);
	if (d->efd < 0 || !d->rb) {
		int err = errno;

		drain__free(d);
		errno = err;
		return NULL;
	}
	return d;
}

void drain__set_early(struct drain *d, drain_early_fn fn, void *ctx)
{
	d->early = fn;
	d->early_ctx = ctx;
}

int drain__start(struct drain *d)
{
	int err;

	atomic_store(&d->stop, false);
	err = pthread_create(&d->thread, NULL, thread_main, d);
	if (err)
		return -err;
	d->running = true;
	return 0;
}

int drain__fd(const struct drain *d)
{
	return d->efd;
}

void drain__run(struct drain *d)
{
	struct queue q;
	__u64 n;
	size_t off;

	if (!d)
		return;
	consume(d);
	if (read(d->efd, &n, sizeof(n)) < 0) {
		/* nothing pending: EAGAIN */
	}
	pthread_mutex_lock(&d->lock);
	q = d->in;
	d->in = d->out;
	d->in.len = 0;
	pthread_mutex_unlock(&d->lock);
	for (off = 0; off < q.len; off += ((struct gmt_hdr *)(q.buf + off))->len)
		d->fn(d->ctx, q.buf + off, q.len - off);
	q.len = 0;
	if (q.cap > DRAIN_KEEP_BYTES) {
		free(q.buf);
		q = (struct queue){};
	}
	d->out = q;
}

void drain__stop(struct drain *d)
{
	if (!d || !d->running)
		return;
	atomic_store(&d->stop, true);
	pthread_join(d->thread, NULL);
	d->running = false;
}

__u64 drain__dropped(const struct drain *d, unsigned int src)
{
	__u64 n;

	if (!d || src >= GMT_SRC_NR)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&d->lock);
	n = d->dropped[src];
	pthread_mutex_unlock((pthread_mutex_t *)&d->lock);
	return n;
}

void drain__free(struct drain *d)
{
	if (!d)
		return;
	drain__stop(d);
	ring_buffer__free(d->rb);
	if (d->efd >= 0)
		close(d->efd);
	free(d->in.buf);
	free(d->out.buf);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->consume);
	free(d);
}
