// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Session: owns a live run's subsystems (symbolizer, unwinder, stacks, BPF
 * maps, samples, the ring buffer's reader, the GPU libraries, the targets),
 * which is made when and with what, the SESSION and END records, what each
 * interval samples, and the order of the start and of the end. collect.c
 * runs the loop and dispatches the records between them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "session.h"
#include "attach.h"
#include "bpfmaps.h"
#include "collect.h"
#include "gpuapi.h"
#include "gpulib.h"
#include "gpumemtrace.skel.h"
#include "samples.h"
#include "stacks.h"
#include "symbolize.h"
#include "targets.h"
#include "unwind.h"

#define MAP_RSS_TICKS 10 /* smaps is read every this many intervals, and at the end */

struct session {
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
	unsigned int intervals;
};

static void emit(struct session *s, const struct gmt_hdr *e)
{
	s->o->sink(s->o->ctx, e);
}

/* the subsystems, before any record goes out; 0 or -errno */
static int setup(struct session *s, drain_fn ring, drain_early_fn early, void *ctx)
{
	struct attach *a = s->a;
	const struct collect_opts *o = s->o;
	struct gpuapi_opts go = {
		.tokens = o->tokens,
		.all_pids = o->session_flags & (GMT_SESSION_FOLLOW | GMT_SESSION_WATCH),
		.quiet = o->quiet,
		.sink = o->sink,
		.ctx = o->ctx,
	};
	struct targets_deps d;

	s->sym = symbolizer__new(o->debug_dir);
	if (!s->sym)
		return -EIO;
	s->unw = unwinder__new(s->sym);
	s->stacks = stacks__new(s->sym, s->unw, o->sink, o->ctx);
	s->maps = bpfmaps__new(a, o->sink, o->ctx);
	s->samples = samples__new(attach__target(a), o->cmdline, o->sink, o->ctx);
	s->drain = drain__new(bpf_map__fd(attach__skel(a)->maps.events), ring, ctx);
	if (!s->stacks || !s->maps || !s->samples || !s->drain)
		return -EIO;
	drain__set_early(s->drain, early, ctx);
	s->gpu = gpuapi__new(a, &go);
	d = (struct targets_deps){
		.sym = s->sym,
		.unw = s->unw,
		.unwind_early = attach__redacts(a),
		.maps = s->maps,
		.samples = s->samples,
		.gpu = s->gpu,
		.quiet = o->quiet,
		.watch = o->watch,
		.comms = o->comms,
		.nr_comms = o->nr_comms,
	};
	s->targets = targets__new(&d);
	return s->targets ? 0 : -ENOMEM;
}

struct session *session__new(struct attach *a, const struct collect_opts *o, drain_fn ring,
			     drain_early_fn early, void *ctx, char *err, size_t size)
{
	struct session *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		snprintf(err, size, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->a = a;
	s->o = o;
	ret = setup(s, ring, early, ctx);
	if (!ret)
		return s;
	if (ret == -ENOMEM)
		snprintf(err, size, "out of memory");
	else
		snprintf(err, size, "setting up the ring buffer failed: %s", strerror(errno));
	session__free(s);
	errno = -ret;
	return NULL;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	drain__free(s->drain);
	targets__free(s->targets);
	samples__free(s->samples);
	bpfmaps__free(s->maps);
	stacks__free(s->stacks);
	unwinder__free(s->unw);
	symbolizer__free(s->sym);
	free(s);
}

struct drain *session__drain(const struct session *s)
{
	return s->drain;
}

struct stacks *session__stacks(const struct session *s)
{
	return s->stacks;
}

struct targets *session__targets(const struct session *s)
{
	return s->targets;
}

struct gpulib *session__gpu(const struct session *s)
{
	return s->gpu;
}

static void emit_session(struct session *s)
{
	const char *cmd = s->o->cmdline ? s->o->cmdline : "";
	size_t n = strnlen(cmd, 4095),
	       len = event__round8(offsetof(struct gmt_session, cmdline) + n + 1);
	__u64 buf[(sizeof(struct gmt_session) + 4096) / 8 + 1]; /* aligned */
	struct gmt_session *r = (struct gmt_session *)buf;
	struct timespec rt;
	struct utsname u;

	event__init(&r->hdr, GMT_EV_SESSION, len, event__now_ns(), attach__target(s->a));
	clock_gettime(CLOCK_REALTIME, &rt);
	r->start_realtime_ns = (__u64)rt.tv_sec * 1000000000ull + rt.tv_nsec;
	r->interval_ms = s->o->interval_s * 1000 + 0.5;
	r->flags = s->o->session_flags;
	r->target_pid = attach__target(s->a);
	r->page_size = sysconf(_SC_PAGESIZE);
	snprintf(r->tool_version, sizeof(r->tool_version), "%s", GMT_VERSION);
	if (!uname(&u)) {
		snprintf(r->kernel, sizeof(r->kernel), "%s", u.release);
		snprintf(r->host, sizeof(r->host), "%s", u.nodename);
		snprintf(r->arch, sizeof(r->arch), "%.15s", u.machine);
	}
	r->cmdline_len = n;
	memcpy(r->cmdline, cmd, n);
	emit(s, &r->hdr);
}

static void emit_end(struct session *s, __u32 reason)
{
	struct gmt_end e;

	event__init(&e.hdr, GMT_EV_END, sizeof(e), event__now_ns(), attach__target(s->a));
	e.reason = reason;
	emit(s, &e.hdr);
}

void session__begin(struct session *s)
{
	size_t nr_probes, i;
	const struct gmt_probe *probes = attach__probes(s->a, &nr_probes);
	struct gmt_probe p;

	emit_session(s);
	for (i = 0; i < nr_probes; i++) {
		p = probes[i];
		p.hdr.ts_ns = event__now_ns();
		p.hdr.pid = p.hdr.tid = attach__target(s->a);
		emit(s, &p.hdr);
	}
	if (!s->o->watch)
		targets__join(s->targets, attach__target(s->a),
			      s->o->spawned ? TARGETS_SPAWNED : TARGETS_ATTACHED);
	gpuapi__start(s->gpu, s->o->spawned);
	targets__discover(s->targets);
	samples__start_nvml(s->samples);
}

int session__release(struct session *s, char *err, size_t size)
{
	const struct collect_opts *o = s->o;
	int ret = attach__release(s->a, err, size);

	if (ret) {
		drain__run(s->drain);
		emit_end(s, GMT_END_ERROR);
		return ret;
	}
	if (!o->quiet && !o->watch)
		fprintf(stderr, "gpumemtrace: tracing pid %d; Ctrl-C to stop\n",
			attach__target(s->a));
	else if (!o->quiet)
		fprintf(stderr, "gpumemtrace: watching for GPU processes%s; Ctrl-C to stop\n",
			o->nr_comms ? " and those named with --comm" : "");
	ret = drain__start(s->drain);
	if (ret) {
		snprintf(err, size, "starting the ring buffer's reader: %s", strerror(-ret));
		drain__run(s->drain);
		emit_end(s, GMT_END_ERROR);
	}
	return ret;
}

/* the samples of the targets: each interval's, or their maps' RSS */
static void sample(struct session *s, bool maps_rss)
{
	size_t n;
	const __u32 *pids = targets__pids(s->targets, &n);

	if (maps_rss)
		samples__maps_rss(s->samples, pids, n);
	else
		samples__tick(s->samples, pids, n);
}

void session__interval(struct session *s)
{
	drain__run(s->drain);
	gpulib__service(s->gpu); /* a helper out of time */
	targets__tick(s->targets);
	sample(s, false);
	bpfmaps__faults(s->maps);
	bpfmaps__lost(s->maps, s->drain);
	/* the second interval's too: the files it maps, their sizes, early */
	if (++s->intervals == 2 || !(s->intervals % MAP_RSS_TICKS))
		sample(s, true);
}

void session__end(struct session *s, __u32 reason)
{
	attach__stop(s->a);
	drain__stop(s->drain);
	if (reason == GMT_END_TARGET_EXIT && !s->o->quiet)
		fprintf(stderr, "gpumemtrace: pid %d exited; finishing the report\n",
			attach__target(s->a));
	drain__run(s->drain);
	/* the drivers still being asked: their devices and probes go in */
	gpulib__drain(s->gpu);
	drain__run(s->drain);
	if (reason != GMT_END_TARGET_EXIT) {
		sample(s, false);
		sample(s, true);
	}
	bpfmaps__faults(s->maps);
	bpfmaps__lost(s->maps, s->drain);
	emit_end(s, reason);
}
