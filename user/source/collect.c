// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The live source: owns the run's set-up and tear-down (the session and END
 * records, which subsystem is made when), the main loop (the ring buffer's
 * reader, the pidfd, signals, the view's keys, the ticks) and the dispatch
 * of each record from the kernel to the subsystem that completes it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "collect.h"
#include "bpfmaps.h"
#include "drain.h"
#include "gpulib.h"
#include "gpumemtrace.skel.h"
#include "samples.h"
#include "stacks.h"
#include "symbolize.h"
#include "targets.h"
#include "unwind.h"

#define MAP_RSS_TICKS 10 /* smaps is read every this many intervals, and at the end */

struct collect {
	struct attach *a;
	const struct collect_opts *o;
	struct drain *drain; /* the kernel ring buffer, read by its own thread */
	struct symbolizer *sym;
	struct unwinder *unw; /* CFI unwinding; NULL when it could not start */
	struct stacks *stacks;
	struct bpfmaps *maps;
	struct samples *samples;
	struct gpulib *gpu; /* NULL when the gpuapi programs did not load */
	struct targets *targets;
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
	case GMT_EV_EXEC:
		targets__exec(c->targets, e->pid);
		break;
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

static void emit_session(struct collect *c)
{
	const char *cmd = c->o->cmdline ? c->o->cmdline : "";
	size_t n = strnlen(cmd, 4095),
	       len = event__round8(offsetof(struct gmt_session, cmdline) + n + 1);
	__u64 buf[(sizeof(struct gmt_session) + 4096) / 8 + 1]; /* aligned */
	struct gmt_session *s = (struct gmt_session *)buf;
	struct timespec rt;
	struct utsname u;

	event__init(&s->hdr, GMT_EV_SESSION, len, event__now_ns(), attach__target(c->a));
	clock_gettime(CLOCK_REALTIME, &rt);
	s->start_realtime_ns = (__u64)rt.tv_sec * 1000000000ull + rt.tv_nsec;
	s->interval_ms = c->o->interval_s * 1000 + 0.5;
	s->flags = c->o->session_flags;
	s->target_pid = attach__target(c->a);
	s->page_size = sysconf(_SC_PAGESIZE);
	snprintf(s->tool_version, sizeof(s->tool_version), "%s", GMT_VERSION);
	if (!uname(&u)) {
		snprintf(s->kernel, sizeof(s->kernel), "%s", u.release);
		snprintf(s->host, sizeof(s->host), "%s", u.nodename);
		snprintf(s->arch, sizeof(s->arch), "%.15s", u.machine);
	}
	s->cmdline_len = n;
	memcpy(s->cmdline, cmd, n);
	emit(c, &s->hdr);
}

static void emit_end(struct collect *c, __u32 reason)
{
	struct gmt_end e;

	event__init(&e.hdr, GMT_EV_END, sizeof(e), event__now_ns(), attach__target(c->a));
	e.reason = reason;
	emit(c, &e.hdr);
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

/* the samples of the targets: each interval's, or their maps' RSS */
static void sample(struct collect *c, bool maps_rss)
{
	size_t n;
	const __u32 *pids = targets__pids(c->targets, &n);

	if (maps_rss)
		samples__maps_rss(c->samples, pids, n);
	else
		samples__tick(c->samples, pids, n);
}

/* wait for events until the next tick; the END reason once tracing must stop */
static __u32 loop(struct collect *c, int ep, int sigfd)
{
	__u64 now = event__now_ns(), interval = secs_ns(c->o->interval_s);
	__u64 next_tick = now + interval;
	unsigned int ticks = 0;
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
			drain__run(c->drain);
			gpulib__service(c->gpu); /* a helper out of time */
			targets__tick(c->targets);
			sample(c, false);
			bpfmaps__faults(c->maps);
			bpfmaps__lost(c->maps, c->drain);
			if (!(++ticks % MAP_RSS_TICKS))
				sample(c, true);
			while (next_tick <= now)
				next_tick += interval;
		}
		if (c->o->tick)
			c->o->tick(c->o->ctx, now);
		if (c->o->ui && c->o->ui(c->o->ctx, now))
			return GMT_END_SIGNAL; /* q in the live view */
	}
}

/* the probes on GPU libraries: made before the first target joins, which
 * scans its libraries */
static void new_gpu(struct collect *c)
{
	struct gmt_bpf *skel = attach__skel(c->a);
	struct gpulib_opts go = {
		.pid = attach__target(c->a),
		.tokens = c->o->tokens,
		.all_pids = c->o->session_flags & (GMT_SESSION_FOLLOW | GMT_SESSION_WATCH),
		.quiet = c->o->quiet,
		.enter = skel->progs.gpu_enter,
		.ret = skel->progs.gpu_return,
		.llama_enter = skel->progs.llama_enter,
		.llama_ret = skel->progs.llama_return,
		.llama_mark = skel->progs.llama_mark,
		.llama_state = skel->progs.llama_state,
		.uprobe_multi = attach__uprobe_multi(c->a),
		.sink = c->o->sink,
		.ctx = c->o->ctx,
	};

	c->gpu = gpulib__new(&go);
	if (c->gpu)
		attach__adopt_gpulib(c->a, c->gpu);
}

/* after the first target joined: the system's libraries, and a record for
 * each API without one */
static void start_gpu(struct collect *c)
{
	if (!c->gpu)
		return;
	/* its drivers probed before tracing is said to have begun */
	if (!c->o->spawned)
		gpulib__drain(c->gpu);
	gpulib__preattach(c->gpu);
	gpulib__summary(c->gpu);
}

/* the subsystems, before any record goes out; 0 or -errno */
static int setup(struct collect *c)
{
	struct attach *a = c->a;
	const struct collect_opts *o = c->o;
	struct targets_deps d;

	c->sym = symbolizer__new(o->debug_dir);
	if (!c->sym)
		return -EIO;
	c->unw = unwinder__new(c->sym);
	c->stacks = stacks__new(c->sym, c->unw, o->sink, o->ctx);
	c->maps = bpfmaps__new(a, o->sink, o->ctx);
	c->samples = samples__new(attach__target(a), o->cmdline, o->sink, o->ctx);
	c->drain = drain__new(bpf_map__fd(attach__skel(a)->maps.events), on_ring, c);
	if (!c->stacks || !c->maps || !c->samples || !c->drain)
		return -EIO;
	drain__set_early(c->drain, code_early, c);
	if (attach__gpu_ready(a))
		new_gpu(c);
	d = (struct targets_deps){
		.sym = c->sym,
		.unw = c->unw,
		.unwind_early = attach__redacts(a),
		.maps = c->maps,
		.samples = c->samples,
		.gpu = c->gpu,
		.quiet = o->quiet,
		.watch = o->watch,
		.comms = o->comms,
		.nr_comms = o->nr_comms,
	};
	c->targets = targets__new(&d);
	return c->targets ? 0 : -ENOMEM;
}

int collect__run(struct attach *a, const struct collect_opts *o, char *err, size_t size)
{
	struct collect *c = calloc(1, sizeof(*c));
	size_t nr_probes, i;
	const struct gmt_probe *probes = attach__probes(a, &nr_probes);
	int ep = -1, sigfd = -1, ret = 0;
	struct gmt_probe p;
	__u32 reason;

	if (!c) {
		snprintf(err, size, "out of memory");
		return -ENOMEM;
	}
	c->a = a;
	c->o = o;
	ret = setup(c);
	if (ret == -ENOMEM) {
		snprintf(err, size, "out of memory");
		goto out;
	} else if (ret) {
		snprintf(err, size, "setting up the ring buffer failed: %s", strerror(errno));
		goto out;
	}
	emit_session(c);
	for (i = 0; i < nr_probes; i++) {
		p = probes[i];
		p.hdr.ts_ns = event__now_ns();
		p.hdr.pid = p.hdr.tid = attach__target(a);
		emit(c, &p.hdr);
	}
	if (!o->watch)
		targets__join(c->targets, attach__target(a),
			      o->spawned ? TARGETS_SPAWNED : TARGETS_ATTACHED);
	start_gpu(c);
	targets__discover(c->targets);
	samples__start_nvml(c->samples);
	ep = make_epoll(c, &sigfd);
	if (ep < 0) {
		snprintf(err, size, "epoll: %s", strerror(-ep));
		ret = ep;
		goto out;
	}
	ret = attach__release(a, err, size);
	if (ret) {
		drain__run(c->drain);
		emit_end(c, GMT_END_ERROR);
		goto out;
	}
	if (!o->quiet && !o->watch)
		fprintf(stderr, "gpumemtrace: tracing pid %d; Ctrl-C to stop\n", attach__target(a));
	else if (!o->quiet)
		fprintf(stderr, "gpumemtrace: watching for GPU processes%s; Ctrl-C to stop\n",
			o->nr_comms ? " and those named with --comm" : "");
	ret = drain__start(c->drain);
	if (ret) {
		snprintf(err, size, "starting the ring buffer's reader: %s", strerror(-ret));
		drain__run(c->drain);
		emit_end(c, GMT_END_ERROR);
		goto out;
	}
	reason = loop(c, ep, sigfd);
	attach__stop(a);
	drain__stop(c->drain);
	if (reason == GMT_END_TARGET_EXIT && !o->quiet)
		fprintf(stderr, "gpumemtrace: pid %d exited; finishing the report\n",
			attach__target(a));
	drain__run(c->drain);
	/* the drivers still being asked: their devices and probes go in */
	gpulib__drain(c->gpu);
	drain__run(c->drain);
	if (reason != GMT_END_TARGET_EXIT) {
		sample(c, false);
		sample(c, true);
	}
	bpfmaps__faults(c->maps);
	bpfmaps__lost(c->maps, c->drain);
	emit_end(c, reason);
out:
	if (ep >= 0)
		close(ep);
	if (sigfd >= 0)
		close(sigfd);
	drain__free(c->drain);
	targets__free(c->targets);
	samples__free(c->samples);
	bpfmaps__free(c->maps);
	stacks__free(c->stacks);
	unwinder__free(c->unw);
	symbolizer__free(c->sym);
	free(c);
	return ret;
}
