// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CFI unwinding: owns a libdwfl session per process (its modules as the
 * symbolizer last read them, so stacks unwind after the process exits) and
 * the callbacks through which libdwfl reads only the slice of stack BPF
 * sent, bounded by offsets from sp. libdwfl gets cfi_check's checked copy of
 * each file's CFI, never the file; a refused module is left to frame
 * pointers. */
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "gmt_events.h"
#include "cfi_check.h"
#include "symbolize.h"
#include "unwind.h"

/* one process: its modules as libdwfl knows them, and the stack being
 * unwound (libdwfl reads it through the callbacks below) */
struct proc_dwfl {
	struct proc_dwfl *next;
	__u32 pid;
	bool stale; /* its code changed: report its modules again */
	Dwfl *dwfl;
	const struct gmt_ustack *s;
	__u32 size; /* of s's slice, bounded by its record */
	__u64 *ips;
	unsigned int n, max;
	struct unwinder *u;
};

/* a file whose CFI was refused, said once */
struct refused {
	struct refused *next;
	char path[];
};

struct unwinder {
	unwinder_modules_fn modules;
	void *src; /* the symbolizer, whose maps and files outlive the process */
	struct proc_dwfl *procs;
	struct refused *refused;
	unsigned int nrefused;
};

/* every module is reported with its file already open */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	(void)mod;
	(void)userdata;
	(void)name;
	(void)base;
	(void)file_name;
	(void)elfp;
	return -1;
}

/* .eh_frame is in the file itself; no separate debug files are looked up */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	(void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct proc_dwfl *p = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return p->pid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* the bytes of s's slice that it holds: no more than its record carries */
static __u32 slice_size(const struct gmt_ustack *s)
{
	__u32 have = s->hdr.len > offsetof(struct gmt_ustack, data) ?
			     s->hdr.len - offsetof(struct gmt_ustack, data) :
			     0;

	if (have > sizeof(s->data))
		have = sizeof(s->data);
	return s->size < have ? s->size : have;
}

/* Only the slice of stack BPF sent can be read. The addresses come from the
 * target's CFI (a rule may say a register was saved at 0xfffffffffffffffa),
 * so the bound is on offsets from sp, which cannot wrap. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct proc_dwfl *p = arg;
	__u64 sp = p->s->regs[GMT_USTACK_SP], off;

	(void)dwfl;
	if (addr < sp)
		return false;
	off = addr - sp;
	if (off > p->size || p->size - off < sizeof(*result))
		return false;
	memcpy(result, p->s->data + off, sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct proc_dwfl *p = arg;
	Dwarf_Word regs[GMT_USTACK_REGS];
	unsigned int i;

	for (i = 0; i < GMT_USTACK_REGS; i++)
		regs[i] = p->s->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, GMT_USTACK_REGS, regs))
		return false;
	/* said apart: on arm64 the return address column is x30, not the pc */
	dwfl_thread_state_register_pc(thread, p->s->regs[GMT_USTACK_PC]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct proc_dwfl *p = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	p->ips[p->n++] = pc;
	return p->n < p->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static void drop_dwfl(struct proc_dwfl *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
}

static void say_refused(struct unwinder *u, const char *path, const char *why)
{
	struct refused *r;

	for (r = u->refused; r; r = r->next)
		if (!strcmp(r->path, path))
			return;
	if (u->nrefused < 1024 && (r = malloc(sizeof(*r) + strlen(path) + 1))) {
		strcpy(r->path, path);
		r->next = u->refused;
		u->refused = r;
		u->nrefused++;
	}
	fprintf(stderr,
		"unwind: the call frame information of %s is refused: %s; its frames are followed by frame pointer\n",
		path, why);
}

/* libdwfl gets a checked copy of the file's CFI, never the file: a module
 * whose CFI is refused is not reported, so that libdwfl follows frame
 * pointers through it, as through code without CFI */
static void report(const char *path, __u64 bias, int fd, void *arg)
{
	struct proc_dwfl *p = arg;
	char why[256];
	int copy = cfi_check__copy(fd, why, sizeof(why));

	close(fd);
	if (copy < 0) {
		say_refused(p->u, path, why);
		return;
	}
	if (!dwfl_report_elf(p->dwfl, path, path, copy, bias, false))
		close(copy);
}

/* p's code files as the symbolizer last read them (they stay readable
 * after p exits: its records are often read after that) */
static bool load(struct unwinder *u, struct proc_dwfl *p)
{
	drop_dwfl(p);
	p->stale = false;
	p->dwfl = dwfl_begin(&callbacks);
	if (!p->dwfl)
		return false;
	dwfl_report_begin(p->dwfl);
	u->modules(u->src, p->pid, report, p);
	if (dwfl_report_end(p->dwfl, NULL, NULL) ||
	    !dwfl_attach_state(p->dwfl, NULL, p->pid, &thread_callbacks, p)) {
		drop_dwfl(p);
		return false;
	}
	return true;
}

static struct proc_dwfl *proc_of(struct unwinder *u, __u32 pid)
{
	struct proc_dwfl *p;

	for (p = u->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->u = u;
	p->next = u->procs;
	u->procs = p;
	return p;
}

static void each_module(void *src, __u32 pid, symbolizer_module_fn fn, void *arg)
{
	symbolizer__each_module(src, pid, fn, arg);
}

struct unwinder *unwinder__new_from(unwinder_modules_fn modules, void *src)
{
	struct unwinder *u = modules ? calloc(1, sizeof(*u)) : NULL;

	if (u) {
		u->modules = modules;
		u->src = src;
	}
	return u;
}

struct unwinder *unwinder__new(struct symbolizer *sym)
{
	return sym ? unwinder__new_from(each_module, sym) : NULL;
}

void unwinder__free(struct unwinder *u)
{
	struct proc_dwfl *p, *next;
	struct refused *r;

	if (!u)
		return;
	while ((r = u->refused)) {
		u->refused = r->next;
		free(r);
	}
	for (p = u->procs; p; p = next) {
		next = p->next;
		drop_dwfl(p);
		free(p);
	}
	free(u);
}

void unwinder__refresh(struct unwinder *u, __u32 pid)
{
	struct proc_dwfl *p;

	for (p = u ? u->procs : NULL; p; p = p->next)
		if (p->pid == pid)
			p->stale = true;
}

void unwinder__forget(struct unwinder *u, __u32 pid)
{
	struct proc_dwfl **pp, *p;

	for (pp = &u->procs; (p = *pp); pp = &p->next)
		if (p->pid == pid) {
			*pp = p->next;
			drop_dwfl(p);
			free(p);
			return;
		}
}

static int read_cfi(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		    void *arg)
{
	Dwarf_Addr bias;

	(void)userdata;
	(void)name;
	(void)start;
	(void)arg;
	dwfl_module_eh_cfi(mod, &bias);
	return DWARF_CB_OK;
}

void unwinder__prepare(struct unwinder *u, __u32 pid)
{
	struct proc_dwfl *p = u ? proc_of(u, pid) : NULL;

	if (p && ((!p->dwfl || p->stale) ? load(u, p) : true))
		dwfl_getmodules(p->dwfl, read_cfi, NULL, 0);
}

unsigned int unwinder__unwind(struct unwinder *u, const struct gmt_ustack *s, __u64 *ips,
			      unsigned int max)
{
	struct proc_dwfl *p = proc_of(u, s->hdr.pid);

	if (!p || !slice_size(s) || !max)
		return 0;
	if ((!p->dwfl || p->stale) && !load(u, p))
		return 0;
	p->s = s;
	p->size = slice_size(s);
	p->ips = ips;
	p->n = 0;
	p->max = max;
	dwfl_getthread_frames(p->dwfl, p->pid, on_frame, p);
	p->s = NULL;
	return p->n;
}
