// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the verdicts, their evidence, and each request's memory by category */
#include <json-c/json.h>
#include <ctype.h>
#include <math.h>
#include <string.h>
#include "analysis/findings.h"
#include "analysis/requests.h"
#include "analysis/words.h"
#include "common/fmt.h"
#include "common/json_util.h"
#include "report_data.h"
#include "report_sections.h"

#define WIDTH 96

/* a paragraph, wrapped at WIDTH with an indent */
static void wrap(FILE *out, const char *s, int indent)
{
	int col = indent;

	fprintf(out, "%*s", indent, "");
	while (*s) {
		size_t w = strcspn(s, " ");

		if (col > indent && col + 1 + (int)w > WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)w, s);
		col += w;
		s += w;
		while (*s == ' ')
			s++;
	}
	fputc('\n', out);
}

static const char *comm_of(const struct model *m, __u32 pid)
{
	const struct model_proc *p = model__proc(m, pid);

	return p && p->comm[0] ? p->comm : "?";
}

/* a sentence starts with a capital, unless it starts with a name (a call) */
static void capital(char *dst, size_t size, const char *s)
{
	size_t w = strcspn(s, " (");
	size_t i;

	snprintf(dst, size, "%s", s);
	for (i = 0; i < w; i++)
		if (isupper((unsigned char)s[i]) || s[w] == '(')
			return;
	dst[0] = toupper((unsigned char)dst[0]);
}

void print_verdicts(FILE *out, const struct model *m, const struct findings *fs)
{
	char msg[1600], said[1600], line[2048], d[32];
	size_t i, k, n = 0, steady = 0, len;
	__u32 pid;

	fprintf(out, "\nVerdicts\n");
	for (i = 0; fs && i < fs->n; i++) {
		const struct finding *f = &fs->v[i];

		if (f->kind == F_STEADY || f->kind == F_NOT_JUDGED) {
			steady += f->kind == F_STEADY;
			continue;
		}
		fprintf(out, "  %s: %s, pid %u (%s)", findings__kind_title(f->kind), f->where,
			f->pid, comm_of(m, f->pid));
		if (f->kind != F_ALLOC_FAILURE && f->kind != F_EXIT)
			fprintf(out, ", confidence %.2f", f->confidence);
		fputc('\n', out);
		capital(msg, sizeof(msg), words__message(f, said, sizeof(said)));
		wrap(out, msg, 4);
		n++;
	}
	/* the steady ones, one paragraph per process */
	for (i = 0; fs && i < fs->n; i = k) {
		pid = fs->v[i].pid;
		len = snprintf(line, sizeof(line), "Steady (pid %u):", pid);
		for (k = i; k < fs->n && fs->v[k].pid == pid; k++) {
			const struct finding *f = &fs->v[k];

			if (f->kind != F_STEADY || len >= sizeof(line))
				continue;
			len += snprintf(line + len, sizeof(line) - len, "%s %s",
					len > 20 ? "," : "", f->where);
			/* a step too small to matter is said in passing */
			if (f->shape.step_size && len < sizeof(line))
				len += snprintf(line + len, sizeof(line) - len, " (one step of %s)",
						fmt_delta(d, sizeof(d), f->shape.step_size));
		}
		if (line[len - 1] != ':')
			wrap(out, line, 2);
	}
	/* series too short for a shape, each with what would give it one */
	for (i = 0; fs && i < fs->n; i++)
		if (fs->v[i].kind == F_NOT_JUDGED) {
			snprintf(line, sizeof(line), "Not judged (pid %u): %s", fs->v[i].pid,
				 words__message(&fs->v[i], said, sizeof(said)));
			wrap(out, line, 2);
		}
	if (!n && !steady)
		fprintf(out, "  nothing to judge: too few requests or samples of any memory\n");
	else if (!n)
		fprintf(out, "  no leak, cache, step, eviction or failure found\n");
}

static void print_holders(FILE *out, const struct model *m, const struct finding *f)
{
	char a[32], b[32], c[48];
	size_t i;

	for (i = 0; i < f->nr_stacks; i++) {
		const struct finding_stack *s = &f->stacks[i];

		/* a crash's stack holds no memory: its frames alone */
		if (f->kind == F_EXIT) {
			print_stack(out, m, s->stack_id);
			continue;
		}
		if (!s->count)
			c[0] = 0;
		else if (s->sampled)
			snprintf(c, sizeof(c), "%llu sampled touches",
				 (unsigned long long)s->count);
		else if (s->min_size == s->max_size)
			snprintf(c, sizeof(c), "%llu x %s", (unsigned long long)s->count,
				 fmt_bytes(b, sizeof(b), s->min_size));
		else
			snprintf(c, sizeof(c), "%llu of %s..", (unsigned long long)s->count,
				 fmt_bytes(b, sizeof(b), s->min_size));
		fprintf(out, "      %11s  %-22s %s%s%s\n", fmt_bytes(a, sizeof(a), s->bytes), c,
			s->role, s->role[0] ? ": " : "", s->label);
		if (i == 0 || f->kind == F_ALLOC_FAILURE)
			print_stack(out, m, s->stack_id);
	}
}

void print_evidence(FILE *out, const struct model *m, const struct findings *fs)
{
	size_t i, j, n = 0;
	char line[512];

	for (i = 0; fs && i < fs->n; i++) {
		const struct finding *f = &fs->v[i];

		if (f->kind == F_STEADY || f->kind == F_NOT_JUDGED)
			continue;
		if (!n++)
			fprintf(out, "\nEvidence for the verdicts\n");
		fprintf(out, "  %s, %s (pid %u)\n", findings__kind_title(f->kind), f->where,
			f->pid);
		for (j = 0; j < f->nr_evidence; j++)
			fprintf(out, "    - %s\n",
				words__evidence(f, &f->evidence[j], line, sizeof(line)));
		if (f->nr_stacks) {
			fprintf(out, "    %s%s:\n",
				f->kind == F_EXIT    ? "the stack of the thread the signal killed" :
				f->stacks[0].sampled ? "first touched by" :
						       "held by",
				f->kind == F_ALLOC_FAILURE ? " (live at the failure)" : "");
			print_holders(out, m, f);
		}
	}
}

/* null when unknown; whole numbers (bytes, counts) exactly */
static struct json_object *numq(double v)
{
	if (!isfinite(v))
		return NULL;
	if (v == floor(v) && fabs(v) < 9e15)
		return i64((__s64)v);
	return num(v);
}

/* bytes are whole */
static struct json_object *bytesq(double v)
{
	return isfinite(v) ? i64(llround(v)) : NULL;
}

static struct json_object *finding_json(const struct model *m, const struct finding *f)
{
	struct json_object *o = json_object_new_object(), *a, *s;
	char said[1600];
	size_t i;

	add(o, "kind", str(findings__kind_name(f->kind)));
	add(o, "pid", u64(f->pid));
	add(o, "category", str(f->category));
	add(o, "where", str(f->where));
	add(o, "reason", str(findings__say_name(finding__reason(f))));
	a = json_object_new_array();
	for (i = 0; i < f->nr_says; i++)
		json_object_array_add(a, str(findings__say_name(f->says[i].code)));
	add(o, "reasons", a);
	add(o, "message", str(words__message(f, said, sizeof(said))));
	add(o, "confidence", numq(f->confidence));
	add(o, "per_request", json_object_new_boolean(f->per_request));
	add(o, "points", u64(f->points));
	/* a count's figures are things, not bytes, and say so in their keys */
	add(o, "unit", str(f->counts ? "count" : "bytes"));
	add(o, f->counts ? "count_per_request" : "bytes_per_request",
	    (f->counts ? numq : bytesq)(f->bytes_per_request));
	add(o, f->counts ? "count_per_second" : "bytes_per_second",
	    (f->counts ? numq : bytesq)(f->bytes_per_second));
	add(o, f->counts ? "ceiling_count" : "ceiling_bytes",
	    (f->counts ? numq : bytesq)(f->ceiling));
	add(o, "requests_to_exhaustion", numq(f->requests_to_exhaustion));
	add(o, "seconds_to_exhaustion", numq(f->seconds_to_exhaustion));
	add(o, "limit_bytes", bytesq(f->limit));
	add(o, f->counts ? "first_count" : "first_bytes", (f->counts ? numq : bytesq)(f->first));
	add(o, f->counts ? "last_count" : "last_bytes", (f->counts ? numq : bytesq)(f->last));
	add(o, "since_s", numq(f->since_s));
	add(o, "since_request", f->since_request ? u64(f->since_request) : NULL);
	if (f->points) {
		s = json_object_new_object();
		add(s, "shape", str(analyze__shape_name(f->shape.shape)));
		add(s, "slope", num(f->shape.slope));
		add(s, "slope_lo", num(f->shape.slope_lo));
		add(s, "slope_hi", num(f->shape.slope_hi));
		add(s, "noise", num(f->shape.noise));
		add(s, "step_mean", num(f->shape.step_mean));
		add(o, "shape", s);
	}
	for (i = 0; i < f->nr_nums; i++)
		add(o, f->nums[i].key, numq(f->nums[i].v));
	for (i = 0; i < FINDING_STRS && f->strs_key[i]; i++)
		add(o, f->strs_key[i], str(f->strs[i]));
	a = json_object_new_array();
	for (i = 0; i < f->nr_evidence; i++)
		json_object_array_add(a,
				      str(words__evidence(f, &f->evidence[i], said, sizeof(said))));
	add(o, "evidence", a);
	a = json_object_new_array();
	for (i = 0; i < f->nr_evidence; i++)
		json_object_array_add(a, str(findings__say_name(f->evidence[i].code)));
	add(o, "evidence_codes", a);
	a = json_object_new_array();
	for (i = 0; i < f->nr_stacks; i++) {
		s = json_object_new_object();
		add(s, "label", str(f->stacks[i].label));
		if (f->stacks[i].role[0])
			add(s, "role", str(f->stacks[i].role));
		add(s, "bytes", u64(f->stacks[i].bytes));
		add(s, "count", u64(f->stacks[i].count));
		if (f->stacks[i].sampled)
			add(s, "sampled", json_object_new_boolean(1));
		add(s, "min_size", u64(f->stacks[i].min_size));
		add(s, "max_size", u64(f->stacks[i].max_size));
		add(s, "stack",
		    f->stacks[i].stack_id ? stack_json(m, f->stacks[i].stack_id) : NULL);
		json_object_array_add(a, s);
	}
	add(o, "stacks", a);
	a = json_object_new_array();
	for (i = 0; i < f->nr_roles; i++) {
		s = json_object_new_object();
		add(s, "role", str(f->role_v[i].role));
		add(s, "bytes", bytesq(f->role_v[i].bytes));
		add(s, "held_bytes", bytesq(f->role_v[i].held));
		add(s, "count", u64(f->role_v[i].count));
		add(s, "bound", str(findings__bound_name(f->role_v[i].bound)));
		add(s, "bound_bytes", bytesq(f->role_v[i].bound_bytes));
		json_object_array_add(a, s);
	}
	add(o, "roles", a);
	return o;
}

struct json_object *findings_json(const struct model *m, const struct findings *fs)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; fs && i < fs->n; i++)
		json_object_array_add(a, finding_json(m, &fs->v[i]));
	return a;
}

/* each category's level at a request's end and its change over the request */
struct json_object *request_memory_json(const struct model *m, const struct model_proc *p,
					const struct model_request *r)
{
	struct category cats[CAT_MAX];
	size_t n = categories__list(m, p, cats, CAT_MAX), i;
	struct json_object *o = json_object_new_object();
	__u64 end = requests__end(m, r);
	double a, b;

	for (i = 0; i < n; i++) {
		struct json_object *c;

		if (!category__level(&cats[i], end, &b))
			continue;
		c = json_object_new_object();
		add(c, "level", numq(b));
		add(c, "delta", category__level(&cats[i], r->start_ts, &a) ? numq(b - a) : NULL);
		add(o, cats[i].name, c);
	}
	return o;
}

#define MAX_INTERVALS 1000

/* every category's level at each sampling interval (evenly spread over the
 * run when it had more than MAX_INTERVALS), and their total, each byte once */
struct json_object *memory_by_interval_json(const struct model *m, const struct model_proc *p)
{
	struct category cats[CAT_MAX];
	size_t n = categories__list(m, p, cats, CAT_MAX), i, k, rows;
	struct json_object *a = json_object_new_array();
	__u64 from = p->first_ts, to = p->exited ? p->exit_ts : m->last_ts, step;
	double v;

	if (to <= from || !m->interval_ms)
		return a;
	step = m->interval_ms * 1000000ull;
	rows = (to - from) / step + 1;
	if (rows > MAX_INTERVALS) {
		rows = MAX_INTERVALS;
		step = (to - from) / (rows - 1);
	}
	for (i = 0; i < rows; i++) {
		__u64 ts = from + i * step < to ? from + i * step : to;
		struct json_object *o = json_object_new_object();

		double total = 0;

		add(o, "t_s", num(model__secs(m, ts)));
		for (k = 0; k < n; k++) {
			bool known = category__level(&cats[k], ts, &v);

			add(o, cats[k].name, known ? numq(v) : NULL);
			if (known && category__in_total(&cats[k]))
				total += v;
		}
		add(o, "total_bytes", numq(total));
		json_object_array_add(a, o);
	}
	return a;
}
