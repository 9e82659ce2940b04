// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* HTTP requests from HTTP events: on each connection, responses answer
 * requests in order (HTTP/1.1 pipelining keeps that order).
 *
 * llama.cpp's decodes carry their batch's tokens by sequence; llama-server
 * gives each slot a sequence and decodes the slots' tokens together. Each
 * sequence's work is cut into runs, one per task: a run starts when the
 * sequence jumps in position (a new prompt starts where the prefix it reuses
 * from its cache ends; not a context shift's step back, see shifted) or
 * takes a batch of prompt tokens after generating.
 * A run's tokens are its prompt until the batch that asks for logits (the
 * prompt's last), then one generation step per decode: a token sampled and
 * fed back. The last token sampled is never fed back: generated tokens are
 * the steps plus one. The decode rate is the steps over the time from the
 * prompt's last token sampled to the last token sampled, llama-server's own
 * rate: after a batch it samples its slots in slot order, each beginning
 * with llama_synchronize (a decode may return before the backend ran it),
 * and one more synchronize follows the last, so a sequence's token is done
 * at the synchronize after the one its sampling began with (its entry:
 * the one before has waited for the device); see
 * model_req__tokens_per_s for programs that do not synchronize.
 *
 * A request is tied to its run from the outside, once it has ended: a run
 * that started after the request arrived, is tied to no other request, and
 * had its last decode before the response ended and none after; for an
 * event stream, whose headers go out after its first token, one whose
 * prompt ended before them. Requests are tied in the order they ended, each
 * to the first of those runs to finish (then the first to start): the
 * server answers in the order its runs finish, if a batch or two late.
 * Whether a run went on is known at the next decode (or at the end of the
 * trace): the tie waits for it. An event stream's headers go out as its
 * task starts: a stream whose headers only one of its runs can explain has
 * that run, whoever ended first (the server may take requests out of their
 * arrival order, and two runs can finish in the same batch). It can still
 * be wrong when two requests' last tokens come within a few batches of each
 * other and the server answers them in the other order (a busy HTTP
 * thread), with no stream to tell them apart.
 *
 * Recordings from before sequences were read fall back to the old rule: a
 * call counts for every request in flight. */
#include <math.h>
#include <string.h>
#include "model_int.h"
#include "common/fmt.h"
#include "common/search.h"

/* the oldest request on conn that still wants `what`, of those open: a
 * request left open for good costs a scan of the others open, never of
 * every request after it */
static struct model_request *oldest(struct model_proc *p, __u64 conn, bool want_response)
{
	size_t i;

	for (i = 0; i < p->nr_open; i++) {
		struct model_request *r = &p->reqs[p->open[i]];

		if (r->conn != conn || r->done)
			continue;
		if (want_response ? !r->responded : r->responded)
			return r;
	}
	return NULL;
}

/* the open list without those that ended */
static void prune_open(struct model_proc *p)
{
	size_t i, k = 0;

	for (i = 0; i < p->nr_open; i++)
		if (!p->reqs[p->open[i]].done)
			p->open[k++] = p->open[i];
	p->nr_open = k;
}

static bool decodes_for(const struct model_request *r);
static size_t first_run_from(const struct model_proc *p, __u64 ts);

/* An ended request waits in p->ended until it is tied; one that no run can
 * be given is tied now: no decode started while it was open (a run made
 * later starts after it ended), or it asked for no decoding */
static void finish(struct model_proc *p, struct model_request *r, __u64 ts, __u16 how)
{
	size_t k;

	r->end_ts = ts;
	r->end = how;
	r->done = true;
	k = first_run_from(p, r->start_ts);
	if (!decodes_for(r) || !r->responded || k == p->nr_runs || p->runs[k].start_ts > ts) {
		r->tied = true;
		return;
	}
	if (!model__grow((void **)&p->ended, &p->ended_cap, p->nr_ended, sizeof(*p->ended)))
		p->ended[p->nr_ended++] = r - p->reqs;
}

const char *const model_req_paths[MODEL_REQ_PATHS] = {
	"/completion",
	"/completions",
	"/v1/completions",
	"/chat/completions",
	"/v1/chat/completions",
	"/embedding",
	"/embeddings",
	"/v1/embeddings",
	"/infill",
	"/rerank",
	"/v1/rerank",
	"/tokenize",
	"/detokenize",
	"/health",
	"/metrics",
	"other",
};
const double model_req_latency_le[MODEL_LATENCY_BUCKETS] = { 0.005, 0.01, 0.025, 0.05, 0.1,
							     0.25,  0.5,  1,	 2.5,  5,
							     10,    30,	  60,	 300 };
const double model_req_rate_le[MODEL_RATE_BUCKETS] = { 1,   2,	 5,   10,   20,	  50,
						       100, 200, 500, 1000, 2000, 5000 };

static size_t bucket(const double *le, size_t n, double v)
{
	size_t i = 0;

	while (i < n && !(v <= le[i]))
		i++;
	return i;
}

/* a request ended counts, with its latency; its tokens and rate once tied */
static void total(struct model_req_totals *t, const struct model_request *r)
{
	size_t path = MODEL_REQ_PATHS - 1, code = MODEL_REQ_CODES - 1, i;
	double lat, rate;

	for (i = 0; i + 1 < MODEL_REQ_PATHS; i++)
		if (!strncmp(r->path, model_req_paths[i], sizeof(r->path)))
			path = i;
	if (r->responded && r->status >= 100 && r->status < 600)
		code = r->status / 100 - 1;
	t->requests[path][code]++;
	t->sent_by_self += r->from_self;
	t->sent_by_traced += r->from_pid && !r->from_self;
	if (r->responded && r->end_ts >= r->start_ts) {
		lat = (r->end_ts - r->start_ts) / 1e9;
		t->latency[bucket(model_req_latency_le, MODEL_LATENCY_BUCKETS, lat)]++;
		t->latency_count++;
		t->latency_sum += lat;
	}
	if (!r->tied && !model_req__from_server(r))
		return;
	rate = model_req__tokens_per_s(r);
	if (rate > 0 && isfinite(rate)) {
		t->rate[bucket(model_req_rate_le, MODEL_RATE_BUCKETS, rate)]++;
		t->rate_count++;
		t->rate_sum += rate;
	}
	t->prompt_tokens += model_req__prompt_tokens(r);
	t->generated_tokens += model_req__generated(r);
}

void model_req__totals(const struct model_proc *p, struct model_req_totals *t)
{
	size_t i;

	if (p->reqs_folded)
		*t = *p->reqs_folded;
	else
		memset(t, 0, sizeof(*t));
	for (i = 0; i < p->nr_reqs; i++)
		if (p->reqs[i].done)
			total(t, &p->reqs[i]);
}

/* At MODEL_REQS_MAX requests the stride doubles: of those ended and tied,
 * only every stride-th (by arrival) stays, and the rest go with the runs
 * they were given, counted; open ones, and those whose run a sequence may
 * still go on with, stay. The kept ones are as dense early as late, so the
 * verdicts read levels at requests that span the run evenly. */
static void thin_pass(struct model_proc *p, __u64 stride)
{
	size_t *to = calloc(p->nr_reqs, sizeof(*to)),
	       *runto = calloc(p->nr_runs + 1, sizeof(*runto));
	size_t i, k = 0;
	bool *busy = calloc(p->nr_runs + 1, sizeof(*busy));

	if (!to || !runto || !busy)
		goto out;
	for (i = 0; i < p->nr_seqs; i++)
		busy[p->seqs[i].run] = true;
	for (i = 0; i < p->nr_last_batch; i++)
		busy[p->last_batch[i]] = true;
	for (i = 0; i < p->nr_runs; i++)
		if (p->runs[i].req && busy[i + 1])
			to[p->runs[i].req - 1] = SIZE_MAX; /* marks: keep */
	for (i = 0; i < p->nr_reqs; i++) {
		struct model_request *q = &p->reqs[i];
		bool keep = to[i] == SIZE_MAX && p->reqs[i].tied;

		if (!keep && q->done && q->tied && q->nth % stride) {
			if (!p->reqs_folded)
				p->reqs_folded = calloc(1, sizeof(*p->reqs_folded));
			if (p->reqs_folded)
				total(p->reqs_folded, q);
			p->reqs_summarized++;
			p->reqs_summarized_answered += q->responded;
			to[i] = 0;
			continue;
		}
		to[i] = ++k;
		p->reqs[k - 1] = *q;
	}
	p->nr_reqs = k;
	for (i = k = 0; i < p->nr_runs; i++) {
		struct model_run *r = &p->runs[i];

		if (r->req && !to[r->req - 1]) {
			p->runs_summarized++;
			continue;
		}
		r->req = r->req ? to[r->req - 1] : 0;
		runto[i + 1] = k + 1;
		p->runs[k++] = *r;
	}
	p->nr_runs = k;
	for (i = 0; i < p->nr_seqs; i++)
		p->seqs[i].run = runto[p->seqs[i].run];
	for (i = 0; i < p->nr_last_batch; i++)
		p->last_batch[i] = runto[p->last_batch[i]];
	for (i = 0; i < p->nr_ended; i++)
		p->ended[i] = to[p->ended[i]] - 1; /* never tied: kept */
	for (i = 0; i < p->nr_open; i++)
		p->open[i] = to[p->open[i]] - 1; /* open: kept */
	p->first_untied = 0;
	while (p->first_untied < p->nr_reqs && p->reqs[p->first_untied].tied)
		p->first_untied++;
out:
	free(to);
	free(runto);
	free(busy);
}

/* those that came since at the stride there is; if that is not enough, at
 * twice it: between a quarter and all of MODEL_REQS_MAX stay */
static void thin_requests(struct model_proc *p)
{
	thin_pass(p, p->reqs_stride);
	if (p->nr_reqs > MODEL_REQS_MAX / 2) {
		p->reqs_stride *= 2;
		thin_pass(p, p->reqs_stride);
	}
}

void model_req__add(struct model_proc *p, const struct gmt_http *e)
{
	struct model_request *r;
	size_t i;

	switch (e->kind) {
	case GMT_HTTP_REQUEST:
		/* tried again every 1,024 at most, should open ones fill it */
		if (p->nr_reqs >= MODEL_REQS_MAX && !(p->nr_reqs % 1024))
			thin_requests(p);
		p->reqs_stride += !p->reqs_stride;
		if (model__grow((void **)&p->reqs, &p->reqs_cap, p->nr_reqs, sizeof(*r)))
			return;
		if (model__grow((void **)&p->open, &p->open_cap, p->nr_open, sizeof(*p->open)))
			return;
		p->open[p->nr_open++] = p->nr_reqs;
		r = &p->reqs[p->nr_reqs++];
		memset(r, 0, sizeof(*r));
		r->seq = -1;
		r->nth = p->nr_reqs + p->reqs_summarized;
		r->conn = e->conn;
		r->start_ts = e->hdr.ts_ns;
		r->from_pid = e->from_pid;
		r->from_self = e->from_pid == p->pid;
		/* a client's bytes, as printable UTF-8 */
		fmt_clean(r->method, sizeof(r->method), e->method, sizeof(e->method));
		fmt_clean(r->path, sizeof(r->path), e->path, sizeof(e->path));
		break;
	case GMT_HTTP_RESP_BEGIN:
		r = oldest(p, e->conn, true);
		if (!r)
			return; /* the request came before tracing began */
		r->responded = true;
		r->resp_ts = e->hdr.ts_ns;
		r->status = e->status;
		r->sse = e->sse;
		break;
	case GMT_HTTP_RESP_END:
		r = oldest(p, e->conn, false);
		if (!r)
			return;
		r->bytes_in = e->bytes_in;
		r->bytes_out = e->bytes_out;
		p->last_answer_ts = e->hdr.ts_ns;
		finish(p, r, e->hdr.ts_ns, e->end);
		prune_open(p);
		break;
	case GMT_HTTP_GONE:
		for (i = 0; i < p->nr_open; i++) {
			r = &p->reqs[p->open[i]];
			if (r->conn == e->conn && !r->done && !r->gone_ts)
				r->gone_ts = e->hdr.ts_ns;
		}
		break;
	case GMT_HTTP_TLS:
		p->tls_conns++;
		break;
	case GMT_HTTP_CLOSE:
		p->http_conns_closed++;
		for (i = 0; i < p->nr_open; i++)
			if (p->reqs[p->open[i]].conn == e->conn && !p->reqs[p->open[i]].done)
				finish(p, &p->reqs[p->open[i]], e->hdr.ts_ns, MODEL_HTTP_END_CLOSE);
		prune_open(p);
		break;
	}
}

/* A timings object in the response going out on e->conn: the task's last
 * one replaces the one before (a stream with timings_per_token sends one a
 * token, each the task's figures so far); tasks are told apart by their
 * index. The server's figures are its own: a task is only as true as the
 * server, whose response this is. */
void model_req__timings(struct model_proc *p, const struct gmt_timings *e)
{
	struct model_request *r = oldest(p, e->conn, false);
	struct model_srv *s;
	struct model_srv_task t = {
		.index = e->have & GMT_TM_INDEX ? e->index : 0,
		.prompt_n = e->prompt_n,
		.predicted_n = e->predicted_n,
		.cache_n = e->cache_n,
		.prompt_us = e->prompt_us,
		.predicted_us = e->predicted_us,
		.have = e->have,
	};
	__u32 i;

	if (!r || !r->responded)
		return;
	s = &r->srv;
	for (i = 0; i < s->nr; i++)
		if (s->task[i].index == t.index) {
			s->task[i] = t;
			return;
		}
	if (s->nr < MODEL_SRV_TASKS) {
		s->task[s->nr++] = t;
		return;
	}
	s->more.prompt_n += t.prompt_n;
	s->more.predicted_n += t.predicted_n;
	s->more.cache_n += t.cache_n;
	s->more.prompt_us = s->more.prompt_us > t.prompt_us ? s->more.prompt_us : t.prompt_us;
	s->more.predicted_us =
		s->more.predicted_us > t.predicted_us ? s->more.predicted_us : t.predicted_us;
	s->more.have |= t.have;
}

bool model_req__from_server(const struct model_request *r)
{
	return r->srv.nr > 0;
}

bool model_req__image_tokens_known(const struct model_request *r)
{
	return r->tied && r->t.decodes;
}

/* the sum of a figure over the tasks */
#define SRV_SUM(r, f)                                      \
	({                                                 \
		__u64 n_ = (r)->srv.more.f;                \
		for (__u32 i_ = 0; i_ < (r)->srv.nr; i_++) \
			n_ += (r)->srv.task[i_].f;         \
		n_;                                        \
	})

/* The tasks of one request (n choices) share its prompt: the server
 * evaluates it once and copies the state, and each task's timings then
 * give the same prompt_n and cache_n (not the same prompt_ms), which count
 * once. Tasks of different prompts (an array) count each: two of one
 * length at one cache state would count once, the one case this gets
 * wrong. */
__u64 model_req__prompt_tokens(const struct model_request *r)
{
	__u64 n = r->srv.more.prompt_n;
	__u32 i, k;

	if (!model_req__from_server(r))
		return r->t.prompt_tokens;
	for (i = 0; i < r->srv.nr; i++) {
		const struct model_srv_task *t = &r->srv.task[i];

		for (k = 0; k < i; k++)
			if (r->srv.task[k].prompt_n == t->prompt_n &&
			    r->srv.task[k].cache_n == t->cache_n)
				break;
		n += k == i ? t->prompt_n : 0;
	}
	return n;
}

long long model_req__cached_tokens(const struct model_request *r)
{
	__u32 i;

	for (i = 0; i < r->srv.nr; i++)
		if (!(r->srv.task[i].have & MODEL_SRV_CACHE_N))
			return -1;
	return model_req__from_server(r) ? (long long)SRV_SUM(r, cache_n) : -1;
}

/* llama-server's endpoints that answer without decoding */
static bool decodes_for(const struct model_request *r)
{
	static const char *const quiet[] = { "tokenize", "detokenize", "apply-template",
					     "props",	 "slots",      "lora-adapters",
					     "models",	 "metrics",    "health" };
	const char *last = strrchr(r->path, '/');
	size_t i;

	if (strcmp(r->method, "POST") && strcmp(r->method, "PUT"))
		return false;
	for (i = 0; last && i < sizeof(quiet) / sizeof(quiet[0]); i++)
		if (!strcmp(last + 1, quiet[i]) || strstr(r->path, "/slots"))
			return false;
	return true;
}

/* a decode's tokens into a tally (a run's, or an old recording's request's) */
static void tally(struct model_tally *t, const struct gmt_decode *e, __u32 n_tokens,
		  __u32 n_outputs)
{
	t->decodes++;
	t->decode_ns += e->dur_ns;
	if (e->ret) {
		t->decode_errors++;
		return;
	}
	/* an image's embeddings take prompt positions: llama-server counts
	 * them in its prompt tokens (timings.prompt_n), and so does this */
	if (e->embd) {
		t->image_tokens += n_tokens;
		t->prompt_tokens += n_tokens;
		return;
	}
	if (!t->prompt_done) {
		t->prompt_tokens += n_tokens;
		t->prompt_done = n_outputs > 0;
		return;
	}
	t->gen_decodes++;
	t->drafted |= n_outputs > 1;
	if (!t->gen_first_ts)
		t->gen_first_ts = e->hdr.ts_ns - e->dur_ns;
	t->gen_last_ts = e->hdr.ts_ns - e->dur_ns;
}

static struct model_seq *seq_state(struct model_proc *p, __s32 seq)
{
	struct model_seq *s;
	size_t i;

	for (i = 0; i < p->nr_seqs; i++)
		if (p->seqs[i].seq == seq)
			return &p->seqs[i];
	if (model__grow((void **)&p->seqs, &p->seqs_cap, p->nr_seqs, sizeof(*s)))
		return NULL;
	s = &p->seqs[p->nr_seqs++];
	*s = (struct model_seq){ .seq = seq, .last_pos = -1 };
	return s;
}

/* the run sequence d of a batch continues, or NULL when d starts a new one:
 * a jump in position (a new prompt starts where its cached prefix ends; a
 * step or a prompt's next batch follows on), prompt tokens after
 * generation, or a run whose request has already been given it. After an
 * image's embeddings the text goes on further ahead: with M-RoPE
 * (Qwen-VL) an image takes as many positions as its grid's longer side,
 * not one a token, and its batch gives each token the same first one */
/* a generation step that lands back in position: llama-server's context
 * shift (--context-shift) discards cells of a full slot and goes on. A new
 * prompt comes after an answer was written, and is a batch of prompt
 * tokens unless all but its last were cached */
static bool shifted(const struct model_proc *p, const struct model_seq *s,
		    const struct model_run *r, const struct gmt_decode_seq *d)
{
	return r->t.prompt_done && d->n_tokens == 1 && d->n_outputs == 1 &&
	       d->pos_min < s->last_pos && p->last_answer_ts < r->last_end_ts;
}

/* a step after one that checked a draft (speculative decoding: the target
 * decodes its token and the draft's guesses, each with logits): the guesses
 * it rejected are dropped, so the next step begins past the last one kept,
 * inside the batch before */
static bool after_draft(const struct model_seq *s, const struct model_run *r,
			const struct gmt_decode_seq *d)
{
	return r->t.prompt_done && s->last_outputs > 1 && d->pos_min > s->last_pos_min &&
	       d->pos_min <= s->last_pos + 1;
}

static struct model_run *continued(struct model_proc *p, const struct model_seq *s,
				   const struct gmt_decode_seq *d)
{
	struct model_run *r = s->run ? &p->runs[s->run - 1] : NULL;

	if (!r || r->req)
		return NULL;
	if (s->last_pos >= 0 && d->pos_min >= 0 && d->pos_min != s->last_pos + 1 &&
	    !(s->after_embd && d->pos_min > s->last_pos) && !shifted(p, s, r, d) &&
	    !after_draft(s, r, d))
		return NULL;
	if (r->t.prompt_done && d->n_tokens > 1 && d->n_outputs < d->n_tokens)
		return NULL;
	return r;
}

static void give(struct model_request *q, const struct model_run *r)
{
	q->t = r->t;
	q->seq = r->seq;
	q->prompt_done = r->t.prompt_done;
}

/* ended requests in the order they ended, then arrived */
static int by_end(const void *a, const void *b, void *ctx)
{
	const struct model_request *reqs = ctx, *x = &reqs[*(const size_t *)a],
				   *y = &reqs[*(const size_t *)b];

	if (x->end_ts != y->end_ts)
		return x->end_ts < y->end_ts ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* the first run that started at ts or later: runs are made in the order
 * their first decodes start (one decoding thread) */
static size_t first_run_from(const struct model_proc *p, __u64 ts)
{
	/* started at ts or later: after ts - 1 */
	return ts ? search__after(p->runs, p->nr_runs, sizeof(*p->runs),
				  offsetof(struct model_run, start_ts), ts - 1) :
		    0;
}

/* run k can be q's: it started after q arrived, is no other's, and ended
 * before q did; `active` (the runs going on in the decode starting now) have
 * not ended */
static bool eligible(const struct model_proc *p, const struct model_request *q, size_t k,
		     const size_t *active, size_t nactive)
{
	const struct model_run *r = &p->runs[k];
	size_t a;

	if (r->req || r->start_ts < q->start_ts || r->last_end_ts > q->end_ts)
		return false;
	for (a = 0; a < nactive; a++)
		if (active[a] == k + 1)
			return false;
	return true;
}

/* how far an event stream's headers may lead its run's first decode: the
 * HTTP thread writes them while the decoding thread builds the batch */
#define SSE_LEAD_NS 2000000ull

/* An event stream's headers go out when its slot starts the task, just
 * before the run's first decode (this llama.cpp; older ones after the
 * first token): its run started before them */
static bool sse_fits(const struct model_request *q, const struct model_run *r)
{
	return q->sse && r->start_ts <= q->resp_ts + SSE_LEAD_NS;
}

/* 1 + the one run an event stream q can have by its headers, or 0: the
 * server may start a later request's task first, so when two runs finish in
 * the same batch (or a batch apart, answered in the other order) the one a
 * stream's headers point to is the stream's */
static size_t sse_claim(const struct model_proc *p, const struct model_request *q,
			const size_t *active, size_t nactive)
{
	size_t k, claim = 0;

	if (!q->sse || !q->responded || !decodes_for(q))
		return 0;
	for (k = first_run_from(p, q->start_ts); k < p->nr_runs && p->runs[k].start_ts <= q->end_ts;
	     k++)
		if (eligible(p, q, k, active, nactive) && sse_fits(q, &p->runs[k])) {
			if (claim)
				return 0;
			claim = k + 1;
		}
	return claim;
}

/* run r did what the server says it did for q: the same prompt and
 * generated tokens (a request of one task) */
static bool srv_fits(const struct model_request *q, const struct model_run *r)
{
	const struct model_srv_task *t = &q->srv.task[0];

	return q->srv.nr == 1 && !q->srv.more.have && r->t.prompt_tokens == t->prompt_n &&
	       (r->t.prompt_done ? r->t.gen_decodes + 1 : 0) == t->predicted_n;
}

/* A run whose tokens are those the server's response gives is the better
 * one; then one that fits q's headers; then one no other request's headers
 * claim; then the first to finish, then the first to start. */
static bool better(const struct model_request *q, const struct model_run *r, bool r_claimed,
		   const struct model_run *b, bool b_claimed)
{
	bool rs = srv_fits(q, r), bs = srv_fits(q, b);

	if (rs != bs)
		return rs;
	rs = sse_fits(q, r);
	bs = sse_fits(q, b);
	if (rs != bs)
		return rs;
	if (r_claimed != b_claimed)
		return !r_claimed;
	if (r->last_end_ts != b->last_end_ts)
		return r->last_end_ts < b->last_end_ts;
	return r->start_ts < b->start_ts;
}

/* requests looked ahead to for their streams' claims, at most */
#define CLAIMS_AHEAD 16

/* Ties the requests that have ended by `now` to their runs, in the order
 * they ended, each to the first run to finish among those it can have (the
 * server may answer a batch or two after the last token, but it answers in
 * the order the runs finished); `active`: the runs that go on in the
 * decode that starts at `now` (none at the end), which have not finished. */
static void tie_ended(struct model_proc *p, __u64 now, const size_t *active, size_t nactive)
{
	struct model_request *q;
	size_t i, j, n = 0, k, best, claims[CLAIMS_AHEAD];
	bool best_claimed;

	/* those ended by now to the front, in the order they ended */
	for (i = 0; i < p->nr_ended; i++)
		if (p->reqs[p->ended[i]].end_ts <= now) {
			size_t t = p->ended[n];

			p->ended[n++] = p->ended[i];
			p->ended[i] = t;
		}
	if (n) /* qsort of no pointer at all is undefined */
		qsort_r(p->ended, n, sizeof(*p->ended), by_end, p->reqs);
	for (i = 0; i < n; i++) {
		size_t nclaims = 0;

		q = &p->reqs[p->ended[i]];
		q->tied = true;
		if (!decodes_for(q) || !q->responded)
			continue;
		for (j = i + 1; j < n && nclaims < CLAIMS_AHEAD; j++)
			if ((k = sse_claim(p, &p->reqs[p->ended[j]], active, nactive)))
				claims[nclaims++] = k;
		best = 0;
		best_claimed = false;
		/* its runs started after it arrived and ended before it did */
		for (k = first_run_from(p, q->start_ts);
		     k < p->nr_runs && p->runs[k].start_ts <= q->end_ts; k++) {
			bool claimed = false;

			if (!eligible(p, q, k, active, nactive))
				continue;
			for (j = 0; j < nclaims && !claimed; j++)
				claimed = claims[j] == k + 1;
			if (!best ||
			    better(q, &p->runs[k], claimed, &p->runs[best - 1], best_claimed)) {
				best = k + 1;
				best_claimed = claimed;
			}
		}
		if (best) {
			p->runs[best - 1].req = q - p->reqs + 1;
			give(q, &p->runs[best - 1]);
		}
	}
	if (n)
		memmove(p->ended, p->ended + n, (p->nr_ended - n) * sizeof(*p->ended));
	p->nr_ended -= n;
	while (p->first_untied < p->nr_reqs && p->reqs[p->first_untied].tied)
		p->first_untied++;
}

void model_req__flush(struct model_proc *p, __u64 now)
{
	tie_ended(p, now, NULL, 0);
}

/* llama-server decodes without a pause while it generates: a second with no
 * decode means the last one's runs have ended, and the requests ended since
 * are tied now, not at the next request's first decode (their tokens count
 * in the metrics while the server is idle) */
void model_req__idle(struct model_proc *p, __u64 now)
{
	if (p->nr_ended && p->last_decode_ts && now >= p->last_decode_ts + 1000000000ull)
		tie_ended(p, now, NULL, 0);
}

/* a recording without sequences: the call counts for every request in flight */
static void decode_unsplit(struct model_proc *p, const struct gmt_decode *e)
{
	size_t i;

	for (i = 0; i < p->nr_open; i++) {
		struct model_request *r = &p->reqs[p->open[i]];

		if (r->done || r->start_ts > e->hdr.ts_ns)
			continue;
		/* one token after the prompt: a sampled one fed back */
		r->t.prompt_done = r->t.prompt_tokens && e->n_tokens == 1 && !e->embd;
		tally(&r->t, e, e->n_tokens, 0);
		r->t.prompt_done = r->prompt_done = r->t.prompt_tokens > 0;
		r->tied = true;
	}
}

static size_t nr_seqs(const struct gmt_decode *e)
{
	if (e->hdr.len < sizeof(*e))
		return 0;
	return e->nr_seqs < MODEL_DECODE_SEQS ? e->nr_seqs : MODEL_DECODE_SEQS;
}

#define NO_RANK 0xff

/* seqs[i]'s turn to be sampled: those with outputs go in sequence order
 * (llama-server's slot order) */
static __u8 sample_rank(const struct gmt_decode *e, size_t n, size_t i)
{
	size_t j, rank = 0;

	if (!e->seqs[i].n_outputs)
		return NO_RANK;
	for (j = 0; j < n; j++)
		rank += e->seqs[j].n_outputs && e->seqs[j].seq < e->seqs[i].seq;
	return rank;
}

static void decode_seqs(struct model_proc *p, const struct gmt_decode *e, size_t n)
{
	__u64 start = e->hdr.ts_ns - e->dur_ns;
	size_t active[MODEL_DECODE_SEQS], nactive = 0, i;
	struct model_run *run[MODEL_DECODE_SEQS];
	struct model_seq *s;

	p->batch_seqs = true;
	p->last_decode_tid = e->hdr.tid;
	/* the runs of the last decode: this one starts where their step ended */
	for (i = 0; i < p->nr_last_batch; i++)
		p->runs[p->last_batch[i] - 1].t.after_ts = start;
	p->nr_last_batch = 0;
	p->syncs_since_decode = 0;
	for (i = 0; i < n; i++) {
		s = seq_state(p, e->seqs[i].seq);
		run[i] = s ? continued(p, s, &e->seqs[i]) : NULL;
		if (run[i])
			active[nactive++] = run[i] - p->runs + 1;
	}
	tie_ended(p, start, active, nactive);
	for (i = 0; i < n; i++) {
		const struct gmt_decode_seq *d = &e->seqs[i];

		if (d->flags & GMT_DSEQ_MERGED)
			p->merged_seq_decodes++;
		s = seq_state(p, d->seq);
		if (!s)
			continue;
		if (!run[i]) {
			if (model__grow((void **)&p->runs, &p->runs_cap, p->nr_runs,
					sizeof(*p->runs)))
				continue;
			run[i] = &p->runs[p->nr_runs++];
			memset(run[i], 0, sizeof(*run[i]));
			run[i]->seq = d->seq;
			run[i]->start_ts = start;
			s->run = p->nr_runs;
		}
		s->last_pos = d->pos_max;
		s->last_pos_min = d->pos_min;
		s->last_outputs = d->n_outputs;
		s->after_embd = e->embd;
		run[i]->last_end_ts = e->hdr.ts_ns;
		run[i]->t.after_ts = run[i]->t.gen_sync_ts = 0;
		tally(&run[i]->t, e, d->n_tokens, d->n_outputs);
		p->last_batch_rank[p->nr_last_batch] = sample_rank(e, n, i);
		p->last_batch[p->nr_last_batch++] = run[i] - p->runs + 1;
	}
}

/* llama_synchronize called on the thread of the last decode: the sequence
 * whose turn it was is sampled (see the top). A call stamped at its return
 * (recorded before 2026-12-04) says when the device was done, so with fewer
 * calls than that the last one says when. One stamped at its entry (no
 * duration) says so only as the call after a sequence's own: a program
 * that synchronizes once after each decode (node-llama-cpp) calls it before
 * the device has run the batch, and its rate is taken by its decodes */
static void synced(struct model_proc *p, const struct gmt_decode *e)
{
	size_t i;
	__u32 n, rank;

	if (e->hdr.tid != p->last_decode_tid)
		return;
	n = ++p->syncs_since_decode;
	for (i = 0; i < p->nr_last_batch; i++) {
		struct model_tally *t = &p->runs[p->last_batch[i] - 1].t;

		rank = p->last_batch_rank[i];
		if (rank == NO_RANK || n > rank + 2u || (!e->dur_ns && n != rank + 2u))
			continue;
		if (t->gen_decodes)
			t->gen_sync_ts = e->hdr.ts_ns;
		else if (t->prompt_done)
			t->prompt_sync_ts = e->hdr.ts_ns;
	}
}

/* a call on a context not the program's own: speculative decoding runs a
 * draft model on a second context, its decodes and synchronizes beside the
 * target's. The program's own is the first given a batch of several
 * tokens: llama-server decodes a prompt (or its warm-up) on the target
 * before the draft catches up on it */
static bool other_ctx(struct model_proc *p, const struct gmt_decode *e)
{
	__u64 ctx = event__decode_ctx(e);

	if (!ctx)
		return false;
	if (!p->main_ctx && e->kind == MODEL_DEC_DECODE && e->n_tokens > 1)
		p->main_ctx = ctx;
	if (!p->main_ctx || ctx == p->main_ctx)
		return false;
	p->other_ctx_calls++;
	return true;
}

void model_req__decode(struct model_proc *p, const struct gmt_decode *e)
{
	__u64 start = e->hdr.ts_ns - e->dur_ns;
	size_t i, n = nr_seqs(e);

	if (other_ctx(p, e))
		return;

	if (e->kind != MODEL_DEC_IMAGE)
		p->last_decode_ts = e->hdr.ts_ns;
	if (e->kind == MODEL_DEC_DECODE || e->kind == MODEL_DEC_ENCODE) {
		p->decodes += e->kind == MODEL_DEC_DECODE;
		p->decodes_before_requests += e->kind == MODEL_DEC_DECODE && !p->nr_reqs;
		/* mtmd's own llama_decode of an image's embeddings */
		p->embd_decodes += e->kind == MODEL_DEC_DECODE && e->embd;
		p->encodes += e->kind == MODEL_DEC_ENCODE;
		p->decode_tokens += e->n_tokens;
		p->decode_errors += e->ret != 0;
	} else if (e->kind == MODEL_DEC_IMAGE) {
		p->images++;
	}
	if (e->kind == GMT_DEC_SYNC) {
		synced(p, e);
		return;
	}
	if (e->kind == MODEL_DEC_IMAGE) {
		/* for the requests in flight whose prompt is not done yet */
		for (i = 0; i < p->nr_open; i++) {
			struct model_request *r = &p->reqs[p->open[i]];

			if (!r->done && r->start_ts <= start && !r->prompt_done)
				r->image_ns += e->dur_ns;
		}
		return;
	}
	if (e->kind != MODEL_DEC_DECODE && e->kind != MODEL_DEC_ENCODE)
		return;
	if (n)
		decode_seqs(p, e, n);
	else
		decode_unsplit(p, e);
}

__u64 model_req__generated(const struct model_request *r)
{
	if (model_req__from_server(r))
		return SRV_SUM(r, predicted_n);
	return r->t.prompt_done ? r->t.gen_decodes + 1 : 0;
}

/* the server's rate, as it counts it: generation steps (the first token
 * comes with the prompt's last batch) over the time from that token to the
 * last; of several tasks (side by side), their steps over the longest
 * one's time; -1 when one gave no time */
static double srv_rate(const struct model_request *r)
{
	__u64 n = r->srv.more.predicted_n, us = r->srv.more.predicted_us;
	__u32 i;

	for (i = 0; i < r->srv.nr; i++) {
		const struct model_srv_task *t = &r->srv.task[i];

		if (!(t->have & MODEL_SRV_PREDICTED_MS))
			return -1;
		n += t->predicted_n ? t->predicted_n - 1 : 0;
		if (t->predicted_us > us)
			us = t->predicted_us;
	}
	return n && us ? n / (us / 1e6) : -1;
}

/* The steps over the time from the prompt's last batch done to the last
 * step done, when the program says so (llama_synchronize: llama-server
 * does after each batch that has outputs), as llama-server counts it. Else
 * each step's period runs from its start to the start of the next decode;
 * the last one's ends at the process's next decode, unless that came after
 * a pause (more than twice the other steps' mean), when it counts as the
 * mean. */
double model_req__tokens_per_s(const struct model_request *r)
{
	const struct model_tally *t = &r->t;
	double span = (double)t->gen_last_ts - t->gen_first_ts, last = NAN;

	if (model_req__from_server(r))
		return srv_rate(r);
	if (!t->gen_decodes)
		return -1;
	if (t->prompt_sync_ts && t->gen_sync_ts > t->prompt_sync_ts)
		return t->gen_decodes / ((t->gen_sync_ts - t->prompt_sync_ts) / 1e9);
	if (t->after_ts > t->gen_last_ts)
		last = t->after_ts - t->gen_last_ts;
	if (t->gen_decodes > 1 && (isnan(last) || last > 2 * span / (t->gen_decodes - 1)))
		last = span / (t->gen_decodes - 1);
	if (isnan(last) || span + last <= 0)
		return -1;
	return t->gen_decodes / ((span + last) / 1e9);
}

double model_req__prompt_per_s(const struct model_request *r)
{
	__u64 us = SRV_SUM(r, prompt_us), n = SRV_SUM(r, prompt_n);
	__u32 i;

	for (i = 0; i < r->srv.nr; i++)
		if (!(r->srv.task[i].have & MODEL_SRV_PROMPT_MS))
			return -1;
	if (model_req__from_server(r))
		return n && us ? n / (us / 1e6) : -1;
	if (r->t.prompt_sync_ts > r->start_ts && r->t.prompt_tokens)
		return r->t.prompt_tokens / ((r->t.prompt_sync_ts - r->start_ts) / 1e9);
	return -1;
}

bool model_req__decode_window(const struct model_request *r, __u64 *from, __u64 *to)
{
	__u64 us = 0, end = r->end_ts;
	__u32 i;

	if (!r->done || !end)
		return false;
	if (model_req__from_server(r)) {
		/* the server's own time for it, ending as its answer did */
		for (i = 0; i < r->srv.nr; i++)
			if (r->srv.task[i].predicted_us > us)
				us = r->srv.task[i].predicted_us;
		if (!us)
			return false;
		*to = end;
		*from = end - us * 1000 > r->start_ts && us * 1000 < end ? end - us * 1000 :
									   r->start_ts;
		return true;
	}
	if (r->t.gen_decodes && r->t.gen_last_ts > r->t.gen_first_ts) {
		*from = r->t.gen_first_ts;
		*to = r->t.gen_last_ts;
		return true;
	}
	return false;
}

__u64 model_req__untied_tokens(const struct model_proc *p)
{
	__u64 n = 0;
	size_t i;

	for (i = 0; i < p->nr_runs; i++)
		if (!p->runs[i].req)
			n += p->runs[i].t.prompt_tokens + p->runs[i].t.gen_decodes +
			     p->runs[i].t.image_tokens;
	return n;
}
