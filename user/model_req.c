// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* HTTP requests from HTTP events: on each connection, responses answer
 * requests in order (HTTP/1.1 pipelining keeps that order). A llama.cpp
 * call counts for every request in flight when it returns: one request at a
 * time gets exact figures; several share each batch (llama-server decodes
 * their tokens together), and each sees the batch's tokens and time.
 * Generation samples a token after each decode and feeds it back with a
 * one-token decode, except the last one sampled: generated tokens are the
 * one-token decodes after the prompt, plus one. The decode rate is one token
 * per period between the starts of those decodes (sampling included). */
#include <string.h>
#include "model.h"

/* the oldest request on conn that still wants `what` */
static struct model_request *oldest(struct model_proc *p, __u64 conn, bool want_response)
{
	size_t i;

	for (i = p->first_open; i < p->nr_reqs; i++) {
		struct model_request *r = &p->reqs[i];

		if (r->conn != conn || r->done)
			continue;
		if (want_response ? !r->responded : r->responded)
			return r;
	}
	return NULL;
}

static void advance_open(struct model_proc *p)
{
	while (p->first_open < p->nr_reqs && p->reqs[p->first_open].done)
		p->first_open++;
}

static void finish(struct model_request *r, __u64 ts, __u16 how)
{
	r->end_ts = ts;
	r->end = how;
	r->done = true;
}

void model_req__add(struct model_proc *p, const struct gmt_http *e)
{
	struct model_request *r;
	size_t i;

	switch (e->kind) {
	case GMT_HTTP_REQUEST:
		if (model__grow((void **)&p->reqs, &p->reqs_cap, p->nr_reqs, sizeof(*r)))
			return;
		r = &p->reqs[p->nr_reqs++];
		memset(r, 0, sizeof(*r));
		r->conn = e->conn;
		r->start_ts = e->hdr.ts_ns;
		memcpy(r->method, e->method, sizeof(r->method) - 1);
		memcpy(r->path, e->path, sizeof(r->path) - 1);
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
		finish(r, e->hdr.ts_ns, e->end);
		advance_open(p);
		break;
	case GMT_HTTP_TLS:
		p->tls_conns++;
		break;
	case GMT_HTTP_CLOSE:
		p->http_conns_closed++;
		for (i = p->first_open; i < p->nr_reqs; i++)
			if (p->reqs[i].conn == e->conn && !p->reqs[i].done)
				finish(&p->reqs[i], e->hdr.ts_ns, GMT_HTTP_END_CLOSE);
		advance_open(p);
		break;
	}
}

void model_req__decode(struct model_proc *p, const struct gmt_decode *e)
{
	__u64 start = e->hdr.ts_ns - e->dur_ns;
	size_t i;

	if (e->kind == GMT_DEC_DECODE || e->kind == GMT_DEC_ENCODE) {
		p->decodes += e->kind == GMT_DEC_DECODE;
		p->encodes += e->kind == GMT_DEC_ENCODE;
		p->decode_tokens += e->n_tokens;
		p->decode_errors += e->ret != 0;
	} else if (e->kind == GMT_DEC_IMAGE) {
		p->images++;
	}
	for (i = p->first_open; i < p->nr_reqs; i++) {
		struct model_request *r = &p->reqs[i];

		if (r->done || r->start_ts > e->hdr.ts_ns)
			continue;
		if (e->kind == GMT_DEC_IMAGE) {
			r->image_ns += e->dur_ns;
			continue;
		}
		if (e->kind != GMT_DEC_DECODE && e->kind != GMT_DEC_ENCODE)
			continue;
		r->decodes++;
		r->decode_ns += e->dur_ns;
		if (e->ret) {
			r->decode_errors++;
			continue;
		}
		if (e->embd)
			r->image_tokens += e->n_tokens;
		else if (e->n_tokens == 1 && r->prompt_tokens) {
			/* one token after the prompt: a sampled one fed back */
			r->gen_decodes++;
			if (!r->gen_first_ts)
				r->gen_first_ts = start;
			r->gen_last_ts = start;
		} else {
			r->prompt_tokens += e->n_tokens;
		}
	}
}

__u64 model_req__generated(const struct model_request *r)
{
	return r->prompt_tokens ? r->gen_decodes + 1 : 0;
}

double model_req__tokens_per_s(const struct model_request *r)
{
	if (r->gen_decodes < 2 || r->gen_last_ts <= r->gen_first_ts)
		return -1;
	return (r->gen_decodes - 1) / ((r->gen_last_ts - r->gen_first_ts) / 1e9);
}
