// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* a process that died (a signal, a failing exit status) is a verdict of its
 * own, with when it happened against its requests and its last failure */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "findings.h"

void findings__exit(const struct model *m, const struct model_proc *p, struct findings *fs)
{
	int sig = p->exit_code & 0x7f, status = (p->exit_code >> 8) & 0xff;
	const struct model_gpu_failure *x = NULL;
	double after = NAN, failed = 0;
	size_t i, answered = 0;
	char how[48];
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
	finding__str(f, "when", p->nr_reqs ? "serving" : "start-up");
	for (i = 0; i < p->nr_reqs; i++)
		answered += p->reqs[i].done && p->reqs[i].end_ts <= p->exit_ts;
	if (p->gpu && p->gpu->nr_fails)
		x = &p->gpu->fails[p->gpu->nr_fails - 1];
	if (x && x->ts <= p->exit_ts) {
		after = (p->exit_ts - x->ts) / 1e9;
		failed = x->size;
		finding__num(f, "seconds_after_failure", after);
	}
	SAY(f, M_EXIT, SAY_S(p->comm[0] ? p->comm : "?", how), sig != 0, f->since_s, p->nr_reqs,
	    answered + p->reqs_summarized_answered, p->nr_reqs + p->reqs_summarized, after, failed);
	EVIDENCE(f, E_EXITED, SAY_S(how), f->since_s, p->nr_reqs != 0);
}
