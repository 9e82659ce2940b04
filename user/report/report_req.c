// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* HTTP requests and llama.cpp, in both reports: the per-request table,
 * llama.cpp's calls and state copies, llama-server's memory settings */
#include <json-c/json.h>
#include <string.h>
#include "common/fmt.h"
#include "common/json_util.h"
#include "analysis/findings.h"
#include "analysis/llama_conf.h"
#include "analysis/requests.h"
#include "report_data.h"
#include "report_sections.h"

#define MAX_ROWS 50

static const char *const end_names[] = { "open", "length", "chunked", "close", "next" };

static const char *end_name(__u16 end)
{
	return end < sizeof(end_names) / sizeof(end_names[0]) ? end_names[end] : "?";
}

#define MAX_COLS 3

static bool cites_graphs(const struct findings *fs, __u32 pid)
{
	size_t i, k;

	for (i = 0; fs && i < fs->n; i++)
		for (k = 0; fs->v[i].pid == pid && k < fs->v[i].nr_nums; k++)
			if (!strcmp(fs->v[i].nums[k].key, "graph_execs_live"))
				return true;
	return false;
}

/* the table's memory columns: the categories the verdicts are about (their
 * change over each request), else host heap and GPU API memory */
static size_t columns(const struct model *m, const struct model_proc *p, const struct findings *fs,
		      struct category *col)
{
	struct category cats[CAT_MAX];
	size_t n = categories__list(m, p, cats, CAT_MAX), i, k, c = 0;

	for (i = 0; fs && i < fs->n && c < MAX_COLS; i++) {
		const struct finding *f = &fs->v[i];

		if (f->pid != p->pid || f->kind == F_STEADY || f->kind == F_NOT_JUDGED)
			continue;
		for (k = 0; k < n && strcmp(cats[k].name, f->category); k++)
			;
		if (k == n)
			continue;
		for (k = 0; k < c && strcmp(col[k].name, f->category); k++)
			;
		if (k == c) {
			for (k = 0; strcmp(cats[k].name, f->category); k++)
				;
			col[c++] = cats[k];
		}
	}
	/* graph executables, when a verdict cites them */
	for (k = 0; k < n && cats[k].cls != CAT_COUNT; k++)
		;
	if (c && c < MAX_COLS && k < n && cites_graphs(fs, p->pid))
		col[c++] = cats[k];
	return c;
}

/* llama.cpp's calls in all, and those no request was tied to */
struct json_object *llama_json(const struct model_proc *p)
{
	struct json_object *o;

	if (!p->decodes && !p->encodes && !p->images)
		return NULL;
	o = json_object_new_object();
	add(o, "decodes", u64(p->decodes));
	add(o, "decodes_before_requests", u64(p->decodes_before_requests));
	add(o, "image_decodes", u64(p->embd_decodes));
	add(o, "other_context_calls", u64(p->other_ctx_calls));
	add(o, "encodes", u64(p->encodes));
	add(o, "tokens", u64(p->decode_tokens));
	add(o, "errors", u64(p->decode_errors));
	add(o, "images", u64(p->images));
	add(o, "by_sequence", json_object_new_boolean(p->batch_seqs));
	add(o, "sequences", u64(p->nr_seqs));
	add(o, "untied_tokens", u64(model_req__untied_tokens(p)));
	add(o, "merged_sequence_decodes", u64(p->merged_seq_decodes));
	return o;
}

/* llama.cpp's own state copies: llama-server's prompt-cache entries and
 * context checkpoints, as its calls sized them */
struct json_object *llama_state_json(const struct model_llama_state *s)
{
	struct json_object *o;

	if (!s->saves && !s->ckpts && !s->loads)
		return NULL;
	o = json_object_new_object();
	add(o, "saves", u64(s->saves));
	add(o, "save_bytes", u64(s->save_bytes));
	add(o, "save_min_bytes", s->saves ? u64(s->save_min) : NULL);
	add(o, "save_max_bytes", s->saves ? u64(s->save_max) : NULL);
	add(o, "entry_bytes", u64(s->entry_bytes));
	add(o, "entry_min_bytes", s->saves ? u64(s->entry_min) : NULL);
	add(o, "entry_max_bytes", s->saves ? u64(s->entry_max) : NULL);
	add(o, "checkpoints", u64(s->ckpts));
	add(o, "checkpoint_bytes", u64(s->ckpt_bytes));
	add(o, "checkpoint_max_bytes", s->ckpts ? u64(s->ckpt_max) : NULL);
	add(o, "loads", u64(s->loads));
	add(o, "load_bytes", u64(s->load_bytes));
	return o;
}

/* llama-server's memory settings, and where each came from */
struct json_object *llama_server_json(const struct model_proc *p)
{
	struct llama_conf c;
	struct json_object *o;

	if (!llama_conf__read(p, &c))
		return NULL;
	o = json_object_new_object();
	add(o, "slots", i64(llama_conf__slots(&c)));
	add(o, "slots_from", str(llama_conf__from(&c.parallel, "LLAMA_ARG_N_PARALLEL")));
	add(o, "cache_ram_mib", i64(c.cache_ram.v));
	add(o, "cache_ram_from", str(llama_conf__from(&c.cache_ram, "LLAMA_ARG_CACHE_RAM")));
	add(o, "ctx_size", i64(c.ctx.v));
	add(o, "ctx_size_from", str(llama_conf__from(&c.ctx, "LLAMA_ARG_CTX_SIZE")));
	add(o, "fit", json_object_new_boolean(c.fit.v));
	add(o, "cuda_graphs_disabled", json_object_new_boolean(c.cuda_graphs_off));
	/* and what decides how fast it goes: -1 where llama.cpp chooses */
	add(o, "threads", i64(c.threads.v));
	add(o, "gpu_layers", i64(c.gpu_layers.v));
	add(o, "mmap", json_object_new_boolean(c.mmap.v));
	add(o, "mlock", json_object_new_boolean(c.mlock.v));
	return o;
}

void print_llama_server(FILE *out, const struct model_proc *p)
{
	struct llama_conf c;
	char cache[48], ctx[48];

	if (!llama_conf__read(p, &c))
		return;
	if (c.cache_ram.v < 0)
		snprintf(cache, sizeof(cache), "no limit");
	else if (!c.cache_ram.v)
		snprintf(cache, sizeof(cache), "off");
	else
		snprintf(cache, sizeof(cache), "%ld MiB", c.cache_ram.v);
	if (c.ctx.v)
		snprintf(ctx, sizeof(ctx), "%ld tokens", c.ctx.v);
	else
		snprintf(ctx, sizeof(ctx), "the model's");
	fprintf(out,
		"  llama-server %ld slots (%s), prompt cache %s (%s), context %s (%s), fit %s "
		"(%s)%s\n",
		llama_conf__slots(&c), llama_conf__from(&c.parallel, "LLAMA_ARG_N_PARALLEL"), cache,
		llama_conf__from(&c.cache_ram, "LLAMA_ARG_CACHE_RAM"), ctx,
		llama_conf__from(&c.ctx, "LLAMA_ARG_CTX_SIZE"), c.fit.v ? "on" : "off",
		llama_conf__from(&c.fit, "LLAMA_ARG_FIT"),
		c.cuda_graphs_off ? ", CUDA graphs off (GGML_CUDA_DISABLE_GRAPHS)" : "");
	if (c.threads.v > 0 || c.gpu_layers.v >= 0 || !c.mmap.v || c.mlock.v) {
		fprintf(out, "  started with");
		if (c.threads.v > 0)
			fprintf(out, " -t %ld", c.threads.v);
		if (c.gpu_layers.v >= 0)
			fprintf(out, " -ngl %ld", c.gpu_layers.v);
		fprintf(out, "%s%s\n", c.mmap.v ? "" : " --no-mmap", c.mlock.v ? " --mlock" : "");
	}
}

static void print_llama(FILE *out, const struct model_proc *p)
{
	if (!p->decodes && !p->encodes)
		return;
	fprintf(out, "    llama.cpp: %llu decodes, %llu encodes, %llu tokens, %llu failed",
		(unsigned long long)p->decodes, (unsigned long long)p->encodes,
		(unsigned long long)p->decode_tokens, (unsigned long long)p->decode_errors);
	if (p->batch_seqs)
		fprintf(out, "; %zu sequences, %llu tokens for no request", p->nr_seqs,
			(unsigned long long)model_req__untied_tokens(p));
	if (p->images)
		fprintf(out, "; %llu image encodes, %llu decodes of their embeddings",
			(unsigned long long)p->images, (unsigned long long)p->embd_decodes);
	if (p->other_ctx_calls)
		fprintf(out, "; %llu calls on a second context (a speculative draft's) left out",
			(unsigned long long)p->other_ctx_calls);
	fputc('\n', out);
	if (p->merged_seq_decodes)
		fprintf(out,
			"    %llu decodes had more sequences than are told apart (%d): their "
			"requests' tokens are mixed\n",
			(unsigned long long)p->merged_seq_decodes, MODEL_DECODE_SEQS);
}

/* " (N sent by the server itself, M by traced pid P (comm))": the
 * requests a traced process sent, which no client did */
static void print_senders(FILE *out, const struct model *m, const struct model_proc *p)
{
	struct model_req_totals t;
	const struct model_proc *q;
	__u64 self, other;
	__u32 pids[3];
	size_t i, k, n = 0;

	model_req__totals(p, &t);
	self = t.sent_by_self;
	other = t.sent_by_traced;
	for (i = 0; i < p->nr_reqs; i++) {
		const struct model_request *r = &p->reqs[i];

		if (!r->done) {
			self += r->from_self;
			other += r->from_pid && !r->from_self;
		}
		if (!r->from_pid || r->from_self)
			continue;
		for (k = 0; k < n && pids[k] != r->from_pid; k++)
			;
		if (k == n && n < sizeof(pids) / sizeof(pids[0]))
			pids[n++] = r->from_pid;
	}
	if (!self && !other)
		return;
	fprintf(out, " (");
	if (self)
		fprintf(out, "%llu sent by the server itself", (unsigned long long)self);
	if (other) {
		fprintf(out, "%s%llu by traced ", self ? ", " : "", (unsigned long long)other);
		for (k = 0; k < n; k++) {
			q = model__proc(m, pids[k]);
			fprintf(out, "%spid %u%s%s%s", k ? ", " : "", pids[k],
				q && q->comm[0] ? " (" : "", q && q->comm[0] ? q->comm : "",
				q && q->comm[0] ? ")" : "");
		}
		if (n == sizeof(pids) / sizeof(pids[0]))
			fprintf(out, ", ...");
	}
	fputc(')', out);
}

static const char *sender(char *buf, size_t len, const struct model_request *r)
{
	if (r->from_self)
		return "itself";
	if (!r->from_pid)
		return "-";
	snprintf(buf, len, "pid %u", r->from_pid);
	return buf;
}

void print_requests(FILE *out, const struct model *m, const struct model_proc *p,
		    const struct findings *fs)
{
	char a[32], b[32], c[32], d[32], e[32], meth[32], path[4 * 24 + 1];
	char who[24];
	struct category col[MAX_COLS];
	struct req_delta dl;
	size_t i, k, from, nc;
	bool images, senders;
	double x, y;

	if (!p->nr_reqs && !p->tls_conns)
		return;
	nc = columns(m, p, fs, col);
	fprintf(out, "\nHTTP requests of pid %u (%s): %llu", p->pid, p->comm[0] ? p->comm : "?",
		(unsigned long long)(p->nr_reqs + p->reqs_summarized));
	if (p->reqs_summarized)
		fprintf(out,
			" (%zu kept in detail: past %d, one ended request in %llu is kept, "
			"evenly, and the rest counted)",
			p->nr_reqs, MODEL_REQS_MAX, (unsigned long long)p->reqs_stride);
	if (p->tls_conns)
		fprintf(out, " (and %llu TLS connections, whose requests cannot be read)",
			(unsigned long long)p->tls_conns);
	print_senders(out, m, p);
	fputc('\n', out);
	print_llama(out, p);
	if (!p->nr_reqs)
		return;
	from = p->nr_reqs > MAX_ROWS ? p->nr_reqs - MAX_ROWS : 0;
	if (from)
		fprintf(out, "    (the last %d)\n", MAX_ROWS);
	for (senders = false, i = from; i < p->nr_reqs && !senders; i++)
		senders = p->reqs[i].from_pid;
	fprintf(out, "    %5s %9s %-7s %-24s", "#", "start", "method", "path");
	if (senders)
		fprintf(out, " %-10s", "sent by");
	fprintf(out, " %6s %9s %9s %8s %7s %7s %8s", "status", "latency", "ttfb", "end", "prompt",
		"gen", "tok/s");
	/* image requests: the image's tokens (among the prompt's) and encode */
	for (images = false, i = from; i < p->nr_reqs && !images; i++)
		images = p->reqs[i].t.image_tokens || p->reqs[i].image_ns;
	if (images)
		fprintf(out, " %16s", "image tok, enc");
	if (!nc)
		fprintf(out, " %13s %13s", "host_anon", "gpu_api");
	for (k = 0; k < nc; k++)
		fprintf(out, " %13.13s", col[k].name);
	fputc('\n', out);
	for (i = from; i < p->nr_reqs; i++) {
		const struct model_request *r = &p->reqs[i];
		__u64 end = requests__end(m, r);

		requests__delta(m, p, r, &dl);
		snprintf(c, sizeof(c), "%.1f ms", (end - r->start_ts) / 1e6);
		if (r->responded)
			snprintf(d, sizeof(d), "%.1f ms", (r->resp_ts - r->start_ts) / 1e6);
		else
			snprintf(d, sizeof(d), "-");
		if (model_req__tokens_per_s(r) >= 0)
			snprintf(e, sizeof(e), "%.1f", model_req__tokens_per_s(r));
		else
			snprintf(e, sizeof(e), "-");
		fprintf(out, "    %5zu %7.2f s %s %s", (size_t)r->nth, model__secs(m, r->start_ts),
			fmt_col(meth, sizeof(meth), r->method, 7),
			fmt_col(path, sizeof(path), r->path, 24));
		if (senders)
			fprintf(out, " %-10s", sender(who, sizeof(who), r));
		fprintf(out, " %6u %9s %9s %8s %7llu %7llu %8s", r->status, c, d,
			r->gone_ts ? "gone" :
			r->done	   ? end_name(r->end) :
				     "open",
			(unsigned long long)model_req__prompt_tokens(r),
			(unsigned long long)model_req__generated(r), e);
		if (images && (r->t.image_tokens || r->image_ns) &&
		    model_req__image_tokens_known(r))
			fprintf(out, " %7llu %5.1f ms", (unsigned long long)r->t.image_tokens,
				r->image_ns / 1e6);
		else if (images && r->image_ns)
			fprintf(out, " %7s %5.1f ms", "-", r->image_ns / 1e6);
		else if (images)
			fprintf(out, " %16s", "-");
		if (!nc)
			fprintf(out, " %13s %13s", fmt_delta(a, sizeof(a), dl.anon),
				dl.has_gpu ? fmt_delta(b, sizeof(b), dl.gpu) : "-");
		for (k = 0; k < nc; k++) {
			if (!category__level(&col[k], end, &y) ||
			    !category__level(&col[k], r->start_ts, &x))
				snprintf(a, sizeof(a), "-");
			else if (col[k].cls == CAT_COUNT)
				snprintf(a, sizeof(a), "%+.0f", y - x);
			else
				fmt_delta(a, sizeof(a), y - x);
			fprintf(out, " %13s", a);
		}
		if (findings__slow(fs, p->pid, r->nth))
			fprintf(out, "  slow%s: %.1fx (%s)",
				findings__slow(fs, p->pid, r->nth)->prompt ? " prompt" : "",
				findings__slow(fs, p->pid, r->nth)->ratio,
				findings__slow(fs, p->pid, r->nth)->cause);
		fputc('\n', out);
	}
}

/* the figures counted from llama.cpp's decodes, where the server's own
 * come first: both, to hold one against the other */
static struct json_object *decoded_json(const struct model_request *r)
{
	struct model_request d = *r;
	struct json_object *o;

	if (!r->tied || !r->t.decodes || !model_req__from_server(r))
		return NULL;
	memset(&d.srv, 0, sizeof(d.srv));
	o = json_object_new_object();
	add(o, "prompt_tokens", u64(model_req__prompt_tokens(&d)));
	/* a drafted run's tokens kept are the server's to say */
	add(o, "generated_tokens", r->t.drafted ? NULL : u64(model_req__generated(&d)));
	add(o, "decode_tokens_per_s",
	    !r->t.drafted && model_req__tokens_per_s(&d) >= 0 ? num(model_req__tokens_per_s(&d)) :
								NULL);
	return o;
}

/* a traced process sent it: which, and whether the server itself */
static struct json_object *sent_by_json(const struct model *m, const struct model_request *r)
{
	const struct model_proc *q = r->from_pid ? model__proc(m, r->from_pid) : NULL;
	struct json_object *o;

	if (!r->from_pid)
		return NULL;
	o = json_object_new_object();
	add(o, "pid", u64(r->from_pid));
	add(o, "comm", q && q->comm[0] ? str(q->comm) : NULL);
	add(o, "itself", json_object_new_boolean(r->from_self));
	return o;
}

/* a slowdown's mark on a request: how much slower than its baseline, and why */
static struct json_object *slow_json(const struct findings *fs, const struct model_proc *p,
				     const struct model_request *r)
{
	const struct slow_req *s = findings__slow(fs, p->pid, r->nth);
	struct json_object *o;

	if (!s)
		return NULL;
	o = json_object_new_object();
	add(o, "times_slower", num(s->ratio));
	add(o, "rate", str(s->prompt ? "prompt" : "decode"));
	add(o, "cause", str(s->cause));
	return o;
}

struct json_object *requests_json(const struct model *m, const struct model_proc *p,
				  const struct findings *fs)
{
	struct json_object *a = json_object_new_array();
	struct req_delta dl;
	size_t i;

	for (i = 0; i < p->nr_reqs; i++) {
		const struct model_request *r = &p->reqs[i];
		struct json_object *o = json_object_new_object();

		requests__delta(m, p, r, &dl);
		add(o, "conn", u64(r->conn));
		add(o, "method", str(r->method));
		add(o, "path", str(r->path));
		add(o, "sent_by", sent_by_json(m, r));
		add(o, "status", r->responded ? u64(r->status) : NULL);
		add(o, "start_s", num(model__secs(m, r->start_ts)));
		add(o, "end_s", r->done ? num(model__secs(m, r->end_ts)) : NULL);
		add(o, "latency_s", r->done ? num((r->end_ts - r->start_ts) / 1e9) : NULL);
		add(o, "ttfb_s", r->responded ? num((r->resp_ts - r->start_ts) / 1e9) : NULL);
		add(o, "end", str(r->done ? end_name(r->end) : "open"));
		/* the client left first: the answer, if any, went to no one */
		add(o, "client_gone_s", r->gone_ts ? num(model__secs(m, r->gone_ts)) : NULL);
		add(o, "event_stream", json_object_new_boolean(r->sse));
		add(o, "bytes_in", r->done ? u64(r->bytes_in) : NULL);
		add(o, "bytes_out", r->done ? u64(r->bytes_out) : NULL);
		add(o, "anon_rss_delta_bytes", i64(dl.anon));
		add(o, "gpu_api_delta_bytes", dl.has_gpu ? i64(dl.gpu) : NULL);
		add(o, "bo_vram_delta_bytes", dl.has_bo ? i64(dl.vram) : NULL);
		add(o, "bo_gtt_delta_bytes", dl.has_bo ? i64(dl.gtt) : NULL);
		add(o, "memory", request_memory_json(m, p, r));
		add(o, "sequence", r->seq >= 0 ? i64(r->seq) : NULL);
		add(o, "decodes", u64(r->t.decodes));
		add(o, "prompt_tokens", u64(model_req__prompt_tokens(r)));
		add(o, "generated_tokens", u64(model_req__generated(r)));
		add(o, "cached_tokens",
		    model_req__cached_tokens(r) >= 0 ? i64(model_req__cached_tokens(r)) : NULL);
		/* the server's own timings, or llama.cpp's decodes counted */
		add(o, "tokens_from",
		    model_req__from_server(r) ? str("server") :
		    r->t.decodes	      ? str("decodes") :
						NULL);
		add(o, "decoded", decoded_json(r));
		add(o, "image_tokens",
		    model_req__image_tokens_known(r) ? u64(r->t.image_tokens) : NULL);
		add(o, "decode_errors", u64(r->t.decode_errors));
		add(o, "decode_s", num(r->t.decode_ns / 1e9));
		add(o, "image_encode_s", num(r->image_ns / 1e9));
		add(o, "decode_tokens_per_s",
		    model_req__tokens_per_s(r) >= 0 ? num(model_req__tokens_per_s(r)) : NULL);
		add(o, "prompt_tokens_per_s",
		    model_req__prompt_per_s(r) >= 0 ? num(model_req__prompt_per_s(r)) : NULL);
		add(o, "slow", slow_json(fs, p, r));
		json_object_array_add(a, o);
	}
	return a;
}
