// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* replay --perfetto (perfetto.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>
#include "analysis/categories.h"
#include "analysis/requests.h"
#include "common/fmt.h"
#include "common/outfile.h"
#include "stream/gpufuncs.h"
#include "perfetto.h"
#include "perfetto.pb-c.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent Event;
typedef Perfetto__Protos__TrackDescriptor Track;
typedef Perfetto__Protos__DebugAnnotation Note;

#define NOTES_MAX 6

/* a track whose descriptor went out */
struct known {
	__u64 uuid;
	UT_hash_handle hh;
};

struct perfetto {
	FILE *out;
	struct model *m;
	struct known *known;
	unsigned char *buf;
	size_t cap, packets;
	int err;
};

struct perfetto *perfetto__to(FILE *out)
{
	struct perfetto *p = calloc(1, sizeof(*p));

	if (!p || !(p->m = model__new())) {
		free(p);
		return NULL;
	}
	p->out = out;
	return p;
}

struct perfetto *perfetto__open(const char *path, char *err, size_t size)
{
	struct perfetto *p;
	FILE *f;
	int fd;

	/* a new file, never a planted one (root writes it) */
	fd = outfile__create(AT_FDCWD, path, err, size);
	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "w"))) {
		snprintf(err, size, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!(p = perfetto__to(f))) {
		snprintf(err, size, "out of memory");
		fclose(f);
	}
	return p;
}

/* one TracePacket as a `packet` field of Trace: tag 1, length, bytes */
static void emit(struct perfetto *p, Packet *pkt)
{
	unsigned char head[11];
	size_t len, n = 1;
	__u64 v;

	pkt->has_trusted_packet_sequence_id = true;
	pkt->trusted_packet_sequence_id = 1;
	if (!p->packets) {
		pkt->has_sequence_flags = true;
		pkt->sequence_flags =
			PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	}
	len = perfetto__protos__trace_packet__get_packed_size(pkt);
	if (len > p->cap) {
		unsigned char *b = realloc(p->buf, len);

		if (!b) {
			p->err = -ENOMEM;
			return;
		}
		p->buf = b;
		p->cap = len;
	}
	perfetto__protos__trace_packet__pack(pkt, p->buf);
	head[0] = 0x0a;
	for (v = len; v >= 0x80; v >>= 7)
		head[n++] = (v & 0x7f) | 0x80;
	head[n++] = v;
	if (fwrite(head, 1, n, p->out) != n || fwrite(p->buf, 1, len, p->out) != len)
		p->err = -errno ?: -EIO;
	p->packets++;
}

/* printable ASCII: names come from the recording, which may be crafted */
static char *text(char *dst, size_t size, const char *src, size_t max)
{
	size_t i;

	for (i = 0; i + 1 < size && i < max && src[i]; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[i] = 0;
	return dst;
}

static __u64 mix(__u64 a, __u64 b)
{
	__u64 h = 0xcbf29ce484222325ull ^ a;

	h *= 0x100000001b3ull;
	h ^= b;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* a track's descriptor, the first time it is used */
static void track(struct perfetto *p, Track *t)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	struct known *k;

	HASH_FIND(hh, p->known, &t->uuid, sizeof(t->uuid), k);
	if (k)
		return;
	k = calloc(1, sizeof(*k));
	if (!k) {
		p->err = -ENOMEM;
		return;
	}
	k->uuid = t->uuid;
	HASH_ADD(hh, p->known, uuid, sizeof(k->uuid), k);
	t->has_uuid = true;
	pkt.track_descriptor = t;
	emit(p, &pkt);
}

static void event(struct perfetto *p, __u64 ts, __u64 uuid, Perfetto__Protos__TrackEvent__Type type,
		  const char *name, Note **notes, size_t nr_notes)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Event e = PERFETTO__PROTOS__TRACK_EVENT__INIT;

	pkt.has_timestamp = true;
	pkt.timestamp = ts;
	e.has_type = true;
	e.type = type;
	e.has_track_uuid = true;
	e.track_uuid = uuid;
	e.name = (char *)name;
	e.debug_annotations = notes;
	e.n_debug_annotations = nr_notes;
	pkt.track_event = &e;
	emit(p, &pkt);
}

/* debug annotations: a few named numbers and strings */
struct notes {
	Note v[NOTES_MAX], *ptr[NOTES_MAX];
	size_t n;
};

static void note_u64(struct notes *ns, const char *name, __u64 v)
{
	Note *a = &ns->v[ns->n];

	if (ns->n == NOTES_MAX)
		return;
	perfetto__protos__debug_annotation__init(a);
	a->name = (char *)name;
	a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
	a->uint_value = v;
	ns->ptr[ns->n++] = a;
}

static void note_double(struct notes *ns, const char *name, double v)
{
	Note *a = &ns->v[ns->n];

	if (ns->n == NOTES_MAX)
		return;
	perfetto__protos__debug_annotation__init(a);
	a->name = (char *)name;
	a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
	a->double_value = v;
	ns->ptr[ns->n++] = a;
}

static __u64 thread_uuid(__u32 pid, __u32 tid)
{
	return mix(pid, tid) | 1ull << 62;
}

/* each decode call, as it passes: a slice on its thread's track */
static void decode_slice(struct perfetto *p, const struct gmt_decode *d)
{
	static const char *const names[] = { [GMT_DEC_DECODE] = "llama_decode",
					     [GMT_DEC_ENCODE] = "llama_encode",
					     [GMT_DEC_IMAGE] = "mtmd_encode_chunk",
					     [GMT_DEC_IMAGE_EVAL] =
						     "mtmd_helper_eval_chunk_single" };
	Perfetto__Protos__ThreadDescriptor th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	struct notes ns = {};
	__u64 uuid = thread_uuid(d->hdr.pid, d->hdr.tid);

	if (d->kind < GMT_DEC_DECODE || d->kind > GMT_DEC_IMAGE_EVAL || d->dur_ns > d->hdr.ts_ns)
		return;
	th.has_pid = th.has_tid = true;
	th.pid = d->hdr.pid;
	th.tid = d->hdr.tid;
	t.uuid = uuid;
	t.thread = &th;
	track(p, &t);
	note_u64(&ns, "n_tokens", d->n_tokens);
	if (d->ret)
		note_u64(&ns, "result", (__u64)(__s64)d->ret);
	event(p, d->hdr.ts_ns - d->dur_ns, uuid,
	      PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, names[d->kind], ns.ptr, ns.n);
	event(p, d->hdr.ts_ns, uuid, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL,
	      NULL, 0);
}

void perfetto__event(void *ctx, const struct gmt_hdr *e)
{
	struct perfetto *p = ctx;

	model__add(p->m, e);
	if (e->type == GMT_EV_DECODE)
		decode_slice(p, (const struct gmt_decode *)e);
}

static __u64 proc_uuid(size_t i)
{
	return (__u64)(i + 1) << 20;
}

static void process_track(struct perfetto *p, const struct model_proc *pr, size_t i)
{
	Perfetto__Protos__ProcessDescriptor d = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	char comm[MODEL_COMM_LEN], cmd[512], *cmdv[1] = { cmd };

	d.has_pid = true;
	d.pid = pr->pid;
	d.process_name = text(comm, sizeof(comm), pr->comm, sizeof(pr->comm));
	if (pr->cmdline) {
		text(cmd, sizeof(cmd), pr->cmdline, sizeof(cmd));
		d.cmdline = cmdv;
		d.n_cmdline = 1;
	}
	t.uuid = proc_uuid(i);
	t.process = &d;
	track(p, &t);
}

/* a counter track per memory category, each point of its series */
static void counters(struct perfetto *p, const struct model *m, const struct model_proc *pr,
		     size_t i)
{
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	struct category cats[CAT_MAX];
	size_t k, j, n = categories__list(m, pr, cats, CAT_MAX);
	char *cat[1] = { "memory" };
	Packet pkt;
	Event e;

	for (k = 0; k < n; k++) {
		const struct series *s = cats[k].s;

		if (!s || !s->n)
			continue;
		cd.has_unit = true;
		cd.unit = cats[k].cls == CAT_COUNT ?
				  PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT :
				  PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES;
		cd.categories = cat;
		cd.n_categories = 1;
		t.uuid = proc_uuid(i) + 1 + k;
		t.has_parent_uuid = true;
		t.parent_uuid = proc_uuid(i);
		t.name = cats[k].name;
		t.counter = &cd;
		track(p, &t);
		for (j = 0; j < s->n; j++) {
			perfetto__protos__trace_packet__init(&pkt);
			perfetto__protos__track_event__init(&e);
			pkt.has_timestamp = true;
			pkt.timestamp = s->p[j].ts;
			e.has_type = e.has_track_uuid = e.has_counter_value = true;
			e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
			e.track_uuid = t.uuid;
			e.counter_value = s->p[j].v;
			pkt.track_event = &e;
			emit(p, &pkt);
		}
	}
}

/* a slice per request, on its connection's track */
static void requests(struct perfetto *p, const struct model *m, const struct model_proc *pr,
		     size_t i)
{
	Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	char name[96], path[64], tname[48];
	size_t k;

	for (k = 0; k < pr->nr_reqs; k++) {
		const struct model_request *r = &pr->reqs[k];
		struct notes ns = {};
		double rate = model_req__tokens_per_s(r);
		__u64 end = requests__end(m, r);

		if (end < r->start_ts)
			end = r->start_ts;
		t.uuid = mix(proc_uuid(i), r->conn) | 1ull << 63;
		t.has_parent_uuid = true;
		t.parent_uuid = proc_uuid(i);
		snprintf(tname, sizeof(tname), "HTTP connection %llx", (unsigned long long)r->conn);
		t.name = tname;
		track(p, &t);
		snprintf(name, sizeof(name), "%.7s %s", r->method,
			 text(path, sizeof(path), r->path, sizeof(r->path)));
		if (r->responded)
			note_u64(&ns, "status", r->status);
		note_u64(&ns, "prompt_tokens", model_req__prompt_tokens(r));
		note_u64(&ns, "generated_tokens", model_req__generated(r));
		if (rate > 0)
			note_double(&ns, "decode_tokens_per_s", rate);
		if (r->responded && r->resp_ts >= r->start_ts)
			note_double(&ns, "ttfb_s", (r->resp_ts - r->start_ts) / 1e9);
		note_u64(&ns, "nth", r->nth);
		event(p, r->start_ts, t.uuid, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN,
		      name, ns.ptr, ns.n);
		event(p, end, t.uuid, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL,
		      NULL, 0);
	}
}

/* evictions of its buffers, failed allocations and its exit: instants */
static void instants(struct perfetto *p, const struct model *m, const struct model_proc *pr,
		     size_t i)
{
	char name[96], comm[MODEL_COMM_LEN], size[32];
	size_t k;

	for (k = 0; k < m->nr_evictions; k++) {
		const struct model_eviction *v = &m->evictions[k];
		struct notes ns = {};

		if (v->owner != pr->pid || model__proc(m, pr->pid) != pr)
			continue;
		snprintf(name, sizeof(name), "evicted from VRAM by %s (%u)",
			 text(comm, sizeof(comm), v->evictor_comm, sizeof(v->evictor_comm)),
			 v->evictor);
		note_u64(&ns, "size_bytes", v->size);
		event(p, v->ts, proc_uuid(i), PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT,
		      name, ns.ptr, ns.n);
	}
	for (k = 0; pr->gpu && k < pr->gpu->nr_fails; k++) {
		const struct model_gpu_failure *f = &pr->gpu->fails[k];
		struct notes ns = {};

		snprintf(name, sizeof(name), "%s allocation of %s failed",
			 gpufuncs__api_name(f->api), fmt_bytes(size, sizeof(size), f->size));
		note_u64(&ns, "size_bytes", f->size);
		note_u64(&ns, "result", (__u64)(__s64)f->result);
		event(p, f->ts, proc_uuid(i), PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT,
		      name, ns.ptr, ns.n);
	}
	if (pr->reqs_summarized) {
		struct notes ns = {};

		/* past MODEL_REQS_MAX the model keeps an even share of them */
		snprintf(name, sizeof(name), "%zu requests shown, %llu more kept as counts only",
			 pr->nr_reqs, (unsigned long long)pr->reqs_summarized);
		note_u64(&ns, "requests_not_shown", pr->reqs_summarized);
		event(p, m->last_ts, proc_uuid(i),
		      PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, name, ns.ptr, ns.n);
	}
	if (pr->exited) {
		if (pr->exit_code & 0x7f)
			snprintf(name, sizeof(name), "killed by signal %d", pr->exit_code & 0x7f);
		else
			snprintf(name, sizeof(name), "exited with code %d",
				 (pr->exit_code >> 8) & 0xff);
		event(p, pr->exit_ts, proc_uuid(i),
		      PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, name, NULL, 0);
	}
}

int perfetto__finish(struct perfetto *p, size_t *packets)
{
	struct known *k, *tmp;
	size_t i;
	int err;

	for (i = 0; i < p->m->nr_procs; i++) {
		const struct model_proc *pr = p->m->procs[i];

		model_req__flush(p->m->procs[i], p->m->last_ts);
		process_track(p, pr, i);
		counters(p, p->m, pr, i);
		requests(p, p->m, pr, i);
		instants(p, p->m, pr, i);
	}
	if (fclose(p->out) && !p->err)
		p->err = -errno ?: -EIO;
	err = p->err;
	*packets = p->packets;
	HASH_ITER(hh, p->known, k, tmp)
	{
		HASH_DEL(p->known, k);
		free(k);
	}
	model__free(p->m);
	free(p->buf);
	free(p);
	return err;
}
