// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* a process that died (a signal, a failing exit status) is a verdict of its
 * own, with when it happened against its requests and its last failure */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "findings.h"
#include "common/fmt.h"

/* ", before it served any request", or how many it had answered */
static size_t when(const struct model_proc *p, char *buf, size_t size)
{
	size_t i, answered = 0;

	for (i = 0; i < p->nr_reqs; i++)
		answered += p->reqs[i].done && p->reqs[i].end_ts <= p->exit_ts;
	if (!p->nr_reqs)
		return snprintf(buf, size, ", before it served any request");
	return snprintf(buf, size, ", after answering %llu of %llu requests",
			(unsigned long long)(answered + p->reqs_summarized_answered),
			(unsigned long long)(p->nr_reqs + p->reqs_summarized));
}

void findings__exit(const struct model *m, const struct model_proc *p, struct findings *fs)
{
	int sig = p->exit_code & 0x7f, status = (p->exit_code >> 8) & 0xff;
	const struct model_gpu_failure *x = NULL;
	char how[48], at[96], after[160] = "";
	struct finding *f;

	if (!p->exited || (!sig && !status))
		return;
	f = findings__add(fs, F_EXIT, p->pid);
	if (!f)
		return;
	snprintf(f->category, sizeof(f->category), "process");
	snprintf(f->where, sizeof(f->where), "the process");
	f->confidence = 1;
	f->since_s = model__secs(m, p->exit_ts);
	if (sig) {
		snprintf(how, sizeof(how), "SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
		finding__num(f, "signal", sig);
	} else {
		snprintf(how, sizeof(how), "exit status %d", status);
		finding__num(f, "exit_status", status);
	}
	finding__str(f, "how", how);
	when(p, at, sizeof(at));
	finding__str(f, "when", p->nr_reqs ? "serving" : "start-up");
	if (p->gpu && p->gpu->nr_fails)
		x = &p->gpu->fails[p->gpu->nr_fails - 1];
	if (x && x->ts <= p->exit_ts) {
		char a[32];

		snprintf(after, sizeof(after),
			 ", %.2f s after a GPU allocation of %s failed (above)",
			 (p->exit_ts - x->ts) / 1e9, fmt_bytes(a, sizeof(a), x->size));
		finding__num(f, "seconds_after_failure", (p->exit_ts - x->ts) / 1e9);
	}
	snprintf(f->message, sizeof(f->message), "The process (%s) %s %s at %.2f s%s%s.",
		 p->comm[0] ? p->comm : "?", sig ? "was killed by" : "ended with", how, f->since_s,
		 at, after);
	finding__evidence(f, "%s at %.2f s (%s)", how, f->since_s,
			  p->nr_reqs ? "while serving" : "during start-up");
}
