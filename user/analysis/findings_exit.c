// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* a process that died (a signal, a failing exit status) is a verdict of its
 * own, with when it happened against its requests and its last failure */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "findings.h"

/* the C library's own way to a fatal signal: raise, abort, and the
 * message it prints first (a corrupted heap, a failed check) */
static bool abort_frame(const struct model_frame *fr)
{
	static const char *const names[] = { "__pthread_kill",	"pthread_kill",	  "raise",
					     "gsignal",		"abort",	  "__libc_message",
					     "malloc_printerr", "__fortify_fail", "__assert_fail" };
	const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;
	size_t i;

	mod = mod ? mod + 1 : fr->module ? fr->module : "";
	if (strncmp(mod, "libc.so", 7) && strncmp(mod, "libc-", 5) &&
	    strncmp(mod, "libpthread", 10))
		return false;
	if (!fr->sym || !fr->sym[0])
		return true; /* a static helper of those */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(fr->sym, names[i], strlen(names[i])))
			return true;
	return false;
}

static bool in_libc(const struct model_frame *fr)
{
	const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;

	mod = mod ? mod + 1 : fr->module ? fr->module : "";
	return !strncmp(mod, "libc.so", 7) || !strncmp(mod, "libc-", 5);
}

/* a fault at an address: SIGSEGV, SIGBUS, SIGFPE, SIGILL with the CPU's
 * reason in si_code; SI_KERNEL (x86's general protection fault, or a signal
 * the kernel sent) carries no address */
bool crash__fault(int sig, int code)
{
	return code > 0 && code != SI_KERNEL &&
	       (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

/* the C library's allocator: its checks call __libc_message from inner
 * functions or, inlined (tcache's), from malloc and free themselves */
static bool heap_frame(const struct model_frame *fr)
{
	static const char *const inner[] = { "_int_", "unlink_chunk", "malloc_consolidate",
					     "malloc_arena", "tcache" };
	static const char *const outer[] = { "malloc",	       "free",		 "cfree",
					     "realloc",	       "calloc",	 "__libc_malloc",
					     "__libc_free",    "__libc_realloc", "__libc_calloc",
					     "__libc_memalign" };
	size_t i, n;

	if (!fr->sym || !in_libc(fr))
		return false;
	for (i = 0; i < sizeof(inner) / sizeof(inner[0]); i++)
		if (strstr(fr->sym, inner[i]))
			return true;
	n = strcspn(fr->sym, "@"); /* cfree@GLIBC_2.2.5 */
	for (i = 0; i < sizeof(outer) / sizeof(outer[0]); i++)
		if (strlen(outer[i]) == n && !strncmp(fr->sym, outer[i], n))
			return true;
	return false;
}

static size_t frame_text(const struct model_frame *fr, char *buf, size_t size)
{
	/* a stripped frame: its file and offset; none: its address (the
	 * kernel's uprobe trampoline, right after a probed call returned, is
	 * in no file, and is as far as the unwinder gets) */
	if (fr->sym && fr->sym[0])
		return snprintf(buf, size, "%s", fr->sym);
	if (fr->module && fr->module[0])
		return snprintf(buf, size, "%s+0x%llx", fr->module,
				(unsigned long long)fr->sym_off);
	return snprintf(buf, size, "0x%llx", (unsigned long long)fr->ip);
}

/* where the crashing thread was: its first three frames past the C
 * library's way to the signal, then the first named frame of the program's
 * own (past the C library and stripped drivers) further down, if any;
 * *heap: the C library stopped it on a corrupted heap */
static void crash_label(const struct model *m, __u32 stack_id, char *buf, size_t size, bool *heap)
{
	const struct model_stack *st = stack_id ? model__stack(m, stack_id) : NULL;
	size_t i, from, len = 0, shown = 0;
	bool message = false;

	buf[0] = 0;
	*heap = false;
	if (!st || !st->nr_frames)
		return;
	for (i = 0; i < st->nr_frames && abort_frame(&st->frames[i]); i++)
		message |= st->frames[i].sym && !strncmp(st->frames[i].sym, "__libc_message", 14);
	from = i < st->nr_frames ? i : 0;
	for (i = from; i < st->nr_frames && shown < 3 && len < size; i++) {
		if (shown++)
			len += snprintf(buf + len, size - len, " < ");
		if (len < size)
			len += frame_text(&st->frames[i], buf + len, size - len);
		*heap |= message && heap_frame(&st->frames[i]);
	}
	for (; i < st->nr_frames && len < size; i++)
		if (st->frames[i].sym && st->frames[i].sym[0] && !in_libc(&st->frames[i])) {
			len += snprintf(buf + len, size - len, " < ... < ");
			if (len < size)
				frame_text(&st->frames[i], buf + len, size - len);
			break;
		}
}

/* the requests open when it died: begun, not yet answered in full */
static size_t in_flight(const struct model_proc *p, __u64 at, char *buf, size_t size, double *first)
{
	size_t i, n = 0, len = 0;

	buf[0] = 0;
	*first = 0;
	for (i = 0; i < p->nr_reqs; i++) {
		const struct model_request *r = &p->reqs[i];

		if (r->start_ts > at || (r->done && r->end_ts <= at))
			continue;
		if (!n++)
			*first = r->nth;
		if (n <= 3 && len < size)
			len += snprintf(buf + len, size - len, "%s%llu (%s %s)", n > 1 ? ", " : "",
					(unsigned long long)r->nth, r->method, r->path);
	}
	if (n > 3 && len < size)
		snprintf(buf + len, size - len, " and %zu more", n - 3);
	return n;
}

/* the fatal signal's thread, stack and address, and what was being served */
static void crash(const struct model *m, const struct model_proc *p, int sig, struct finding *f)
{
	const struct model_signal *g = &p->signal;
	char where[sizeof(f->stacks[0].label)], reqs[200];
	double first;
	bool heap;
	size_t n;

	if (g->ts && g->sig == sig && g->ts <= p->exit_ts) {
		crash_label(m, g->stack_id, where, sizeof(where), &heap);
		finding__num(f, "signal_code", g->code);
		finding__num(f, "thread_id", g->tid);
		finding__str(f, "thread", g->comm);
		if (crash__fault(sig, g->code))
			finding__num(f, "fault_address", g->addr);
		if (g->sender)
			finding__num(f, "sender_pid", g->sender);
		if (g->stack_id) {
			f->stacks[0] =
				(struct finding_stack){ .stack_id = g->stack_id, .count = 1 };
			snprintf(f->stacks[0].label, sizeof(f->stacks[0].label), "%s", where);
			f->nr_stacks = 1;
			findings__label_stacks(m, f->stacks, 1);
		}
		SAY(f, M_CRASH_THREAD, .thread = g->comm, .frames = where[0] ? where : NULL,
		    .tid = g->tid, .code = g->code, .addr = (double)g->addr, .sender = g->sender,
		    .self = g->sender == p->pid, .sig = sig);
		if (heap)
			SAY(f, M_CRASH_HEAP);
	}
	n = in_flight(p, g->ts && g->sig == sig ? g->ts : p->exit_ts, reqs, sizeof(reqs), &first);
	finding__num(f, "requests_in_flight", n);
	if (n) {
		finding__num(f, "request_in_flight", first);
		SAY(f, M_CRASH_SERVING, .requests = reqs, .count = n);
	}
}

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
	SAY(f, M_EXIT, .comm = p->comm[0] ? p->comm : "?", .how = how, .killed = sig != 0,
	    .seconds = f->since_s, .requests = p->nr_reqs,
	    .answered = answered + p->reqs_summarized_answered,
	    .total = p->nr_reqs + p->reqs_summarized, .after_failure = after,
	    .failed_size = failed);
	if (sig)
		crash(m, p, sig, f);
	EVIDENCE(f, E_EXITED, .how = how, .seconds = f->since_s, .serving = p->nr_reqs != 0);
}
