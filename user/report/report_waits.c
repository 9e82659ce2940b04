// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* what the process waited on over the run, as the kernel counted it: page
 * faults and reads from storage, a CPU and its quota, pressure; and the
 * files it maps, with what of each is resident (the slowdown verdict says
 * when, against its requests) */
#include <json-c/json.h>
#include <stdio.h>
#include "common/fmt.h"
#include "common/json_util.h"
#include "report_data.h"
#include "report_sections.h"

#define B(buf, v) fmt_bytes(buf, sizeof(buf), v)

/* counter i's growth from the first reading to the last (a fall, a thread
 * gone, counts as none) */
static double grown(const struct model_ticks *t, int i)
{
	return t->n ? model_ticks__delta(t, i, t->p[0].ts, t->p[t->n - 1].ts) : 0;
}

static double secs_of(const struct model_ticks *t)
{
	return t->n > 1 ? (t->p[t->n - 1].ts - t->p[0].ts) / 1e9 : 0;
}

void print_waits(FILE *out, const struct model_proc *p)
{
	const struct model_ticks *t = &p->waits;
	double secs = secs_of(t), run = grown(t, MODEL_W_RUN_NS),
	       delay = grown(t, MODEL_W_DELAY_NS);
	char a[32], b[32], c[32];
	__u64 quota = 0;
	size_t i;

	if (t->n < 2)
		return;
	fprintf(out, "\n  What it waited on (the kernel's counters, over %.1f s)\n", secs);
	fprintf(out, "    page faults %.0f (%.0f major)",
		grown(t, MODEL_W_MINFLT) + grown(t, MODEL_W_MAJFLT), grown(t, MODEL_W_MAJFLT));
	if (p->waits_flags & MODEL_WAITS_IO)
		fprintf(out, ", %s read from storage", B(a, grown(t, MODEL_W_READ_BYTES)));
	if (p->waits_flags & MODEL_WAITS_REFAULTS)
		fprintf(out, ", %.0f of its cgroup's pages evicted and needed again",
			grown(t, MODEL_W_REFAULT_FILE) + grown(t, MODEL_W_REFAULT_ANON));
	fputc('\n', out);
	if (p->waits_flags & MODEL_WAITS_SCHED)
		fprintf(out, "    CPU: %.1f s on one, %.1f s waiting for one (%.0f%%)", run / 1e9,
			delay / 1e9, run + delay > 0 ? 100 * delay / (run + delay) : 0);
	model_ticks__at(t, MODEL_W_QUOTA_MILLI, t->p[t->n - 1].ts, &quota);
	if (p->waits_flags & MODEL_WAITS_CPU_STAT)
		fprintf(out, "; quota %.2f CPUs (%s): %.0f of %.0f periods throttled",
			quota / 1000.0, p->cpu_cgroup, grown(t, MODEL_W_THROTTLED),
			grown(t, MODEL_W_PERIODS));
	fputc('\n', out);
	if ((p->waits_flags & MODEL_WAITS_PSI) && secs > 0)
		fprintf(out,
			"    pressure (%s PSI): memory %.0f%% some, %.0f%% full; CPU %.0f%%; I/O "
			"%.0f%% of the time\n",
			p->waits_flags & MODEL_WAITS_PSI_CGROUP ? "its cgroup's" : "the host's",
			grown(t, MODEL_W_PSI_MEM_SOME) / 1e4 / secs,
			grown(t, MODEL_W_PSI_MEM_FULL) / 1e4 / secs,
			grown(t, MODEL_W_PSI_CPU_SOME) / 1e4 / secs,
			grown(t, MODEL_W_PSI_IO_SOME) / 1e4 / secs);
	for (i = 0; i < p->nr_files && i < 3; i++)
		fprintf(out, "    %s %s: %s, %s resident (%s at least)\n", i ? "      " : "maps",
			p->files[i].name, B(a, p->files[i].size), B(b, p->files[i].rss),
			B(c, p->files[i].rss_min));
}

struct json_object *waits_json(const struct model_proc *p)
{
	const struct model_ticks *t = &p->waits;
	struct json_object *o, *f;
	__u64 quota = 0, cpus = 0;
	size_t i;

	if (t->n < 2)
		return NULL;
	o = json_object_new_object();
	add(o, "seconds", num(secs_of(t)));
	add(o, "page_faults", num(grown(t, MODEL_W_MINFLT) + grown(t, MODEL_W_MAJFLT)));
	add(o, "major_faults", num(grown(t, MODEL_W_MAJFLT)));
	add(o, "read_bytes",
	    p->waits_flags & MODEL_WAITS_IO ? num(grown(t, MODEL_W_READ_BYTES)) : NULL);
	add(o, "refaults",
	    p->waits_flags & MODEL_WAITS_REFAULTS ?
		    num(grown(t, MODEL_W_REFAULT_FILE) + grown(t, MODEL_W_REFAULT_ANON)) :
		    NULL);
	add(o, "cpu_s",
	    p->waits_flags & MODEL_WAITS_SCHED ? num(grown(t, MODEL_W_RUN_NS) / 1e9) : NULL);
	add(o, "cpu_wait_s",
	    p->waits_flags & MODEL_WAITS_SCHED ? num(grown(t, MODEL_W_DELAY_NS) / 1e9) : NULL);
	model_ticks__at(t, MODEL_W_QUOTA_MILLI, t->p[t->n - 1].ts, &quota);
	model_ticks__at(t, MODEL_W_CPUS, t->p[t->n - 1].ts, &cpus);
	add(o, "cpus_allowed", u64(cpus));
	add(o, "cpu_quota", quota ? num(quota / 1000.0) : NULL);
	add(o, "cpu_quota_cgroup", p->cpu_cgroup[0] ? str(p->cpu_cgroup) : NULL);
	add(o, "throttled_periods",
	    p->waits_flags & MODEL_WAITS_CPU_STAT ? num(grown(t, MODEL_W_THROTTLED)) : NULL);
	add(o, "periods",
	    p->waits_flags & MODEL_WAITS_CPU_STAT ? num(grown(t, MODEL_W_PERIODS)) : NULL);
	add(o, "pressure_from",
	    !(p->waits_flags & MODEL_WAITS_PSI)	    ? NULL :
	    p->waits_flags & MODEL_WAITS_PSI_CGROUP ? str("cgroup") :
						      str("host"));
	if (p->waits_flags & MODEL_WAITS_PSI) {
		add(o, "memory_some_s", num(grown(t, MODEL_W_PSI_MEM_SOME) / 1e6));
		add(o, "memory_full_s", num(grown(t, MODEL_W_PSI_MEM_FULL) / 1e6));
		add(o, "cpu_some_s", num(grown(t, MODEL_W_PSI_CPU_SOME) / 1e6));
		add(o, "io_some_s", num(grown(t, MODEL_W_PSI_IO_SOME) / 1e6));
	}
	f = json_object_new_array();
	for (i = 0; i < p->nr_files; i++) {
		struct json_object *x = json_object_new_object();

		add(x, "name", str(p->files[i].name));
		add(x, "size_bytes", u64(p->files[i].size));
		add(x, "resident_bytes", u64(p->files[i].rss));
		add(x, "resident_min_bytes", u64(p->files[i].rss_min));
		add(x, "code", json_object_new_boolean(p->files[i].code));
		json_object_array_add(f, x);
	}
	add(o, "mapped_files", f);
	return o;
}
