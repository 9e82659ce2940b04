// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* HTTP requests from HTTP events: on each connection, responses answer
 * requests in order (HTTP/1.1 pipelining keeps that order) */
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
