// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The live source: owns the main loop (the ring buffer's reader, the
 * pidfd, signals, the view's keys, the GPU helpers' answers, the ticks)
 * and the dispatch of each record from the kernel to the subsystem that
 * completes it. What is made, started and ended around the loop is the
 * session's (session.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "collect.h"
#include "drain.h"
#include "gpulib.h"
#include "session.h"
#include "stacks.h"
#include "targets.h"

struct collect {
	struct attach *a;
	const struct collect_opts *o;
	struct session *s; /* owns the rest */
	struct drain *drain;
	struct stacks *stacks;
	struct targets *targets;
	struct gpulib *gpu; /* NULL when the gpuapi programs did not load */
};

static void emit(struct collect *c, const struct gmt_hdr *e)
{
	c->o->sink(c->o->ctx, e);
}

/* PROT_EXEC from a file: new code (anonymous code, a JIT's, has no symbols
 * and comes often) */
static bool new_code(const struct gmt_hdr *e)
{
	const struct gmt_mmap *m = (const void *)e;

	return e->type == GMT_EV_MMAP && e->len >= sizeof(*m) && (m->prot & 4) &&
	       m->fd_class == GMT_FD_FILE;
}

/* On the reader's thread, as new code appears (exec, an executable file
 * mapped, a followed fork): the main loop may come to the record after the
 * process has died (a crash 20 ms after exec had no stack), so /proc is
 * read now, while it lives */
static void code_early(void *ctx, const struct gmt_hdr *e)
{
	struct collect *c = ctx;
	const struct gmt_fork *f = (const void *)e;

	if (e->type == GMT_EV_EXEC || new_code(e))
		targets__code_early(c->targets, e->pid);
	else if (e->type == GMT_EV_FORK && e->len >= sizeof(*f) && f->followed)
		targets__code_early(c->targets, f->child_pid);
}

static void on_mmap(struct collect *c, const struct gmt_mmap *e)
{
	struct gmt_mmap m = *e;

	if (new_code(&e->hdr))
		targets__mapped(c->targets, e->hdr.pid);
	m.hdr.len = sizeof(m);
	m.nr_ips = 0;
	if (e->nr_ips)
		m.stack_id = stacks__of(c->stacks, e->hdr.pid, e->ips, e->nr_ips);
	emit(c, &m.hdr);
}

static void on_gpu_call(struct collect *c, const struct gmt_gpu_call *e)
{
	struct gmt_gpu_call g = *e;

	/* its driver's devices before the first call they classify */
	if (e->api == GMT_API_VK)
		gpulib__vulkan_call(c->gpu, e->hdr.pid);
	g.hdr.len = sizeof(g);
	g.nr_ips = 0;
	g.stack_id = stacks__unwound(c->stacks, &e->hdr, e->ips, e->nr_ips);
	emit(c, &g.hdr);
}

/* a sampled first touch: its frames by CFI from the slice sent before it */
static void on_touch(struct collect *c, const struct gmt_touch *e)
{
	struct gmt_touch t = *e;

	t.hdr.len = sizeof(t);
	t.nr_ips = 0;
	t.stack_id = stacks__unwound(c->stacks, &e->hdr, e->ips, e->nr_ips);
	emit(c, &t.hdr);
}

/* a fatal signal: the thread's frames by CFI from the slice sent before it */
static void on_signal(struct collect *c, const struct gmt_signal *e)
{
	struct gmt_signal g = *e;

	g.stack_id = stacks__unwound(c->stacks, &e->hdr, NULL, 0);
	emit(c, &g.hdr);
}

static int on_ring(void *ctx, void *data, size_t size)
{
	struct collect *c = ctx;
	const struct gmt_hdr *e = data;
	const struct gmt_fork *f = data;

	if (!event__valid(e, size))
		return 0;
	switch (e->type) {
	case GMT_EV_MMAP:
		on_mmap(c, data);
		return 0;
	case GMT_EV_GPU_CALL:
		on_gpu_call(c, data);
		return 0;
	case GMT_EV_TOUCH:
		on_touch(c, data);
		return 0;
	case GMT_EV_USTACK:
		stacks__slice(c->stacks, data);
		return 0; /* its frames go out with its record */
	case GMT_EV_SIGNAL:
		on_signal(c, data);
		return 0;
	case GMT_EV_JOIN:
		/* BPF found it (--watch): the record, then what joining it sends */
		emit(c, e);
		targets__join(c->targets, e->pid, TARGETS_SEEN);
		return 0;
	case GMT_EV_EXEC:
		/* its record, then the new program's PROC (model: an exec
		 * forgets the command line read before it) */
		emit(c, e);
		targets__exec(c->targets, e->pid);
		return 0;
	case GMT_EV_FORK:
		if (f->followed)
			targets__fork(c->targets, f->child_pid);
		break;
	case GMT_EV_EXIT:
		/* before its record: its last counts go out first */
		if (((const struct gmt_exit *)e)->group_dead)
			targets__exit(c->targets, e->pid);
		break;
	}
	emit(c, e);
	return 0;
}

static int make_epoll(struct collect *c, int *sigfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;
	int ep;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	/* blocked and read from a signalfd: no flag races with epoll_wait */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	*sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || *sigfd < 0)
		return -errno;
	ev.data.u32 = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, drain__fd(c->drain), &ev);
	ev.data.u32 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, attach__pidfd(c->a), &ev);
	ev.data.u32 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, *sigfd, &ev);
	if (c->o->ui && c->o->ui_fd >= 0) {
		ev.data.u32 = 3;
		epoll_ctl(ep, EPOLL_CTL_ADD, c->o->ui_fd, &ev);
	}
	if (gpulib__fd(c->gpu) >= 0) {
		ev.data.u32 = 4;
		epoll_ctl(ep, EPOLL_CTL_ADD, gpulib__fd(c->gpu), &ev);
	}
	return ep;
}

static __u64 secs_ns(double s)
{
	return s * 1e9;
}

/* wait for events until the next tick; the END reason once tracing must stop */
static __u32 loop(struct collect *c, int ep, int sigfd)
{
	__u64 now = event__now_ns(), interval = secs_ns(c->o->interval_s);
	__u64 next_tick = now + interval;
	__u64 deadline = c->o->duration_s > 0 ? now + secs_ns(c->o->duration_s) : 0;
	struct signalfd_siginfo si;
	struct epoll_event evs[4];
	int i, n, timeout;
	__u64 wake;

	for (;;) {
		/* wake at least every 250 ms so the recorder flushes within a second */
		wake = next_tick < now + 250000000ull ? next_tick : now + 250000000ull;
		if (deadline && deadline < wake)
			wake = deadline;
		timeout = wake > now ? (wake - now + 999999) / 1000000 : 0;
		n = epoll_wait(ep, evs, 4, timeout);
		if (n < 0 && errno != EINTR)
			return GMT_END_ERROR;
		for (i = 0; i < n; i++) {
			if (evs[i].data.u32 == 0)
				drain__run(c->drain);
			else if (evs[i].data.u32 == 1)
				return GMT_END_TARGET_EXIT;
			else if (evs[i].data.u32 == 3)
				continue; /* keys: the view reads them below */
			else if (evs[i].data.u32 == 4)
				gpulib__service(c->gpu);
			else if (read(sigfd, &si, sizeof(si)) == sizeof(si))
				return GMT_END_SIGNAL;
		}
		now = event__now_ns();
		if (deadline && now >= deadline)
			return GMT_END_DURATION;
		if (now >= next_tick) {
			session__interval(c->s);
			while (next_tick <= now)
				next_tick += interval;
		}
		if (c->o->tick)
			c->o->tick(c->o->ctx, now);
		if (c->o->ui && c->o->ui(c->o->ctx, now))
			return GMT_END_SIGNAL; /* q in the live view */
	}
}

int collect__run(struct attach *a, const struct collect_opts *o, char *err, size_t size)
{
	struct collect c = { .a = a, .o = o };
	int ep = -1, sigfd = -1, ret;

	c.s = session__new(a, o, on_ring, code_early, &c, err, size);
	if (!c.s)
		return -errno;
	c.drain = session__drain(c.s);
	c.stacks = session__stacks(c.s);
	c.targets = session__targets(c.s);
	c.gpu = session__gpu(c.s);
	session__begin(c.s);
	ep = make_epoll(&c, &sigfd);
	if (ep < 0) {
		snprintf(err, size, "epoll: %s", strerror(-ep));
		ret = ep;
		goto out;
	}
	ret = session__release(c.s, err, size);
	if (!ret)
		session__end(c.s, loop(&c, ep, sigfd));
out:
	if (ep >= 0)
		close(ep);
	if (sigfd >= 0)
		close(sigfd);
	session__free(c.s);
	return ret;
}
