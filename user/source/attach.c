// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Attach: owns the target's start (a command forked and held before exec
 * until the probes are in) and the BPF programs, in groups: each group's
 * kernel feature probed, loaded (again without a group the kernel refuses,
 * then listed as skipped with why), attached, and told as a probe record.
 * At the end the tracepoints' links go from a thread of their own
 * (attach__stop); the GPU uprobes go in attach__free, all at once. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdarg.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "gmt_syscalls.h"
#include "gpumemtrace.skel.h"
#include "gpulib.h"
#include "linkset.h"
#include "umulti.h"

#define TRACEFS "/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"
#define MAX_PROGS 12
#define MAX_GROUPS 20

struct attach {
	struct gmt_bpf *skel;
	struct btf *vmlinux;
	const char *tracefs;
	pid_t pid;
	bool spawned;
	int gate;     /* write end: one byte lets the child exec */
	int exec_err; /* read end: errno from a failed exec, EOF on success */
	int pidfd;
	struct linkset links;
	pthread_t stopper; /* destroying links, from attach__stop */
	bool stopping;
	const char *no_umulti; /* why the uprobes are perf events; NULL: uprobe_multi links */
	struct gmt_probe probes[MAX_GROUPS + 4];
	char touch_refused[160];  /* why first-touch stacks were dropped */
	char redact_refused[160]; /* why GPU stacks stop at frame pointers once serving */
	bool manual_ready;
	struct gpulib *gpu;
	size_t nr_probes;
};

struct group {
	const char *name, *what;
	/* NULL when it can run here, else why not */
	const char *(*missing)(struct attach *a);
	const char *progs[MAX_PROGS];
	bool manual; /* loaded here, attached elsewhere (gpulib: per library) */
	/* a fallback: loaded (so the verifier checks it), attached only when
	 * the group named here did not attach */
	const char *fallback_for;
	/* the system calls whose exits it takes (bits of enum gmt_sys): their
	 * numbers are set in the sys_exit programs' rodata while it is on */
	__u32 calls;
	/* the earlier group whose sys_exit program takes its calls: it is on
	 * and attached only with that one */
	const char *rides_on;
	/* its one program goes on a software perf event of each CPU */
	__u64 perf_sw;
};

/* each call's number on the arch built for, from its headers; -1 where
 * the arch has none (arm64: dup2) */
static const long sys_numbers[GMT_SYS_NR] = {
	[GMT_SYS_MMAP] = SYS_mmap,
	[GMT_SYS_MUNMAP] = SYS_munmap,
	[GMT_SYS_MREMAP] = SYS_mremap,
	[GMT_SYS_BRK] = SYS_brk,
	[GMT_SYS_READ] = SYS_read,
	[GMT_SYS_RECVFROM] = SYS_recvfrom,
	[GMT_SYS_READV] = SYS_readv,
	[GMT_SYS_RECVMSG] = SYS_recvmsg,
	[GMT_SYS_WRITE] = SYS_write,
	[GMT_SYS_SENDTO] = SYS_sendto,
	[GMT_SYS_WRITEV] = SYS_writev,
	[GMT_SYS_SENDMSG] = SYS_sendmsg,
	[GMT_SYS_SENDFILE] = SYS_sendfile, /* sendfile64 on 64-bit arches */
	[GMT_SYS_CLOSE] = SYS_close,
	[GMT_SYS_SHUTDOWN] = SYS_shutdown,
#ifdef SYS_close_range
	[GMT_SYS_CLOSE_RANGE] = SYS_close_range,
#else
	[GMT_SYS_CLOSE_RANGE] = -1,
#endif
	[GMT_SYS_DUP3] = SYS_dup3,
#ifdef SYS_dup2
	[GMT_SYS_DUP2] = SYS_dup2,
#else
	[GMT_SYS_DUP2] = -1,
#endif
	[GMT_SYS_CONNECT] = SYS_connect,
};

#define CALL(c) (1u << GMT_SYS_##c)

static bool has_btf_type(struct attach *a, const char *name, __u32 kind)
{
	return a->vmlinux && btf__find_by_name_kind(a->vmlinux, name, kind) >= 0;
}

static bool has_tracepoint(struct attach *a, const char *cat, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/events/%s/%s", a->tracefs, cat, name);
	return !access(path, F_OK);
}

static const char *sched_missing(struct attach *a)
{
	if (!has_btf_type(a, "btf_trace_sched_process_exec", BTF_KIND_TYPEDEF))
		return "sched tracepoints are not in the kernel BTF (kernel older than 5.5)";
	return NULL;
}

static const char *signal_missing(struct attach *a)
{
	if (!has_btf_type(a, "btf_trace_signal_deliver", BTF_KIND_TYPEDEF))
		return "signal:signal_deliver is not in the kernel BTF: a crash is told without "
		       "its stack";
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_task_pt_regs, NULL) <= 0)
		return "needs bpf_task_pt_regs (kernel 5.15): a crash is told without its stack";
	return NULL;
}

static const char *rss_missing(struct attach *a)
{
	if (!has_btf_type(a, "btf_trace_rss_stat", BTF_KIND_TYPEDEF))
		return "kmem:rss_stat is not in this kernel (added in 5.5): RSS comes only from "
		       "the /proc samples";
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_current_task_btf,
				    NULL) <= 0)
		return "needs bpf_get_current_task_btf (kernel 5.11): RSS comes only from the "
		       "/proc samples";
	return NULL;
}

static const char *fault_missing(struct attach *a)
{
	const char *hook = getenv("GMT_TEST_FAULT_HOOK");

	if (hook && !strcmp(hook, "perf"))
		return "GMT_TEST_FAULT_HOOK=perf: page faults are taken by perf:page-faults";
	if (!has_btf_type(a, "btf_trace_page_fault_user", BTF_KIND_TYPEDEF))
		return "exceptions:page_fault_user is not in this kernel (it exists on x86 only)";
	return NULL;
}

/* the page-fault software event, where the x86 tracepoints are missing */
static const char *perf_fault_missing(struct attach *a)
{
	static char why[200];
	const char *tp = fault_missing(a);

	if (!tp)
		return "exceptions:page_fault_user takes page faults on this kernel";
	if (access("/proc/sys/kernel/perf_event_paranoid", F_OK)) {
		snprintf(why, sizeof(why), "%s, and this kernel has no perf events", tp);
		return why;
	}
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) <= 0) {
		snprintf(why, sizeof(why), "%s, and perf event programs lack bpf_find_vma (5.17)",
			 tp);
		return why;
	}
	return NULL;
}

/* load (not attach) an empty fexit program on func: kernels locked down or
 * without BPF trampolines refuse it, and would fail the whole object */
static int try_fexit(struct attach *a, const char *func)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT);
	int fd, id = a->vmlinux ? btf__find_by_name_kind(a->vmlinux, func, BTF_KIND_FUNC) : -1;

	if (id < 0)
		return -ENOENT;
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "gmt_probe", "GPL", insns, 2, &opts);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static const char *fault_class_missing(struct attach *a)
{
	static char why[160];
	int err;

	if (fault_missing(a) && perf_fault_missing(a))
		return "needs a page-fault hook (exceptions:page_fault_user or perf:page-faults)";
	err = try_fexit(a, "handle_mm_fault");
	if (!err)
		return NULL;
	if (err == -ENOENT)
		return "handle_mm_fault is not in the kernel BTF: faults are not classified";
	snprintf(why, sizeof(why),
		 "this kernel refuses fexit programs (%s; lockdown or no BPF trampolines): "
		 "faults are not classified",
		 strerror(-err));
	return why;
}

static const char *syscalls_missing(struct attach *a)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	return "system calls are told apart by number on x86-64 and arm64 only";
#endif
	if (!has_btf_type(a, "btf_trace_sys_exit", BTF_KIND_TYPEDEF))
		return "the sys_exit raw tracepoint is not in the kernel BTF (kernel older than "
		       "5.5, or without syscall tracepoints)";
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_task_pt_regs, NULL) <= 0)
		return "reading syscall arguments at exit needs bpf_task_pt_regs (kernel 5.15)";
	return NULL;
}

static const char *gpu_missing(struct attach *a)
{
	(void)a;
	if (access("/sys/bus/event_source/devices/uprobe/type", F_OK))
		return "this kernel has no uprobes (CONFIG_UPROBE_EVENTS)";
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) <= 0)
		return "uprobe programs need bpf_get_attach_cookie (kernel 5.15)";
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_storage_get, NULL) <= 0)
		return "uprobe programs need task storage (kernel 5.11)";
	return NULL;
}

/* a function of the ttm module, from its BTF; NULL when it is there */
static const char *ttm_func_missing(struct attach *a, const char *func)
{
	static char why[160];
	struct btf *btf;
	int err, id;

	if (access("/sys/kernel/btf/ttm", F_OK))
		return "the ttm module is not loaded: no GPU driver here uses TTM (amdgpu, radeon, "
		       "nouveau, bochs, qxl, vmwgfx)";
	btf = btf__load_module_btf("ttm", a->vmlinux);
	id = btf ? btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) : -1;
	btf__free(btf);
	if (id < 0) {
		snprintf(why, sizeof(why), "%s is not in this kernel's ttm module", func);
		return why;
	}
	err = try_fexit(a, "handle_mm_fault");
	if (err && err != -ENOENT) {
		snprintf(why, sizeof(why),
			 "this kernel refuses fentry programs (%s; lockdown or no BPF "
			 "trampolines)",
			 strerror(-err));
		return why;
	}
	return NULL;
}

static const char *ttm_missing(struct attach *a)
{
	const char *why = ttm_func_missing(a, "ttm_bo_handle_move_mem");

	if (!why)
		why = ttm_func_missing(a, "ttm_resource_alloc");
	if (!why)
		why = ttm_func_missing(a, "ttm_bo_release");
	return why;
}

static const char *evict_first_missing(struct attach *a)
{
	return ttm_func_missing(a, "ttm_mem_evict_first");
}

static const char *bo_evict_missing(struct attach *a)
{
	return ttm_func_missing(a, "ttm_bo_evict");
}

static const char *amdgpu_missing(struct attach *a)
{
	if (!has_tracepoint(a, "amdgpu", "amdgpu_bo_create"))
		return "the amdgpu module is not loaded: no AMD GPU buffers to describe";
	if (access("/sys/kernel/btf/amdgpu", F_OK))
		return "the amdgpu module has no BTF";
	return NULL;
}

/* amdgpu's buffer destructors, so BPF can tell its buffers from others */
static void find_amdgpu_destroy(__u64 addr[2])
{
	char line[512], name[256], type;
	unsigned long long v;
	FILE *f = fopen("/proc/kallsyms", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &v, &type, name) == 3) {
			if (!strcmp(name, "amdgpu_bo_destroy"))
				addr[0] = v;
			else if (!strcmp(name, "amdgpu_bo_user_destroy"))
				addr[1] = v;
		}
	if (f)
		fclose(f);
}

static const char *http_missing(struct attach *a)
{
	const char *why = syscalls_missing(a);

	if (why)
		return why;
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_loop, NULL) <= 0)
		return "scanning response headers needs bpf_loop (kernel 5.17)";
	return NULL;
}

static const char *http_ends_missing(struct attach *a)
{
	const char *why = http_missing(a);

	if (why)
		return why;
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_for_each_map_elem, NULL) <=
	    0)
		return "ending a range of connections needs bpf_for_each_map_elem (5.13)";
	return NULL;
}

static const char *dup2_missing(struct attach *a)
{
	const char *why = http_ends_missing(a);

	if (why)
		return why;
	if (sys_numbers[GMT_SYS_DUP2] < 0)
		return "this architecture has no dup2 (dup3 stands in)";
	return NULL;
}

static const struct group groups[] = {
	{ .name = "sched:process_exec/fork/exit",
	  .what = "exec, threads, children, exit",
	  .missing = sched_missing,
	  .progs = { "tp_sched_process_exec", "tp_sched_process_fork", "tp_sched_process_exit",
		     "tp_mm_exec_reset" } },
	{ .name = "signal:signal_deliver",
	  .what = "fatal signals: the crashing thread's stack",
	  .missing = signal_missing,
	  .progs = { "tp_signal_deliver" } },
	{ .name = "kmem:rss_stat",
	  .what = "RSS by member (anon, file, shmem, swap)",
	  .missing = rss_missing,
	  .progs = { "tp_rss_stat" } },
	{ .name = "exceptions:page_fault_user",
	  .what = "page faults; the stacks of sampled first touches of anonymous memory",
	  .missing = fault_missing,
	  .progs = { "tp_page_fault_user", "tp_page_fault_kernel" } },
	{ .name = "perf:page-faults",
	  .what = "page faults; the stacks of sampled first touches of anonymous memory (a "
		  "page-fault software event on each CPU)",
	  .missing = perf_fault_missing,
	  .progs = { "pe_page_fault" },
	  .perf_sw = PERF_COUNT_SW_PAGE_FAULTS },
	{ .name = "fexit:handle_mm_fault",
	  .what = "page fault classes (anon, file, device)",
	  .missing = fault_class_missing,
	  .progs = { "fexit_handle_mm_fault" } },
	{ .name = "syscalls:mmap/munmap/mremap/brk",
	  .what = "mappings, brk heap, stacks of large anonymous mmaps",
	  .missing = syscalls_missing,
	  .progs = { "tp_mm_sys_exit" },
	  .calls = CALL(MMAP) | CALL(MUNMAP) | CALL(MREMAP) | CALL(BRK) },
	{ .name = "uprobes:gpu",
	  .what = "GPU API allocations, llama.cpp decode calls",
	  .missing = gpu_missing,
	  .progs = { "gpu_enter", "gpu_return", "llama_enter", "llama_return", "llama_mark",
		     "llama_state" },
	  .manual = true },
	{ .name = "syscalls:http",
	  .what = "HTTP/1.1 requests: method, path, status, timing",
	  .missing = http_missing,
	  .progs = { "tp_req_sys_exit" },
	  .calls = CALL(READ) | CALL(RECVFROM) | CALL(READV) | CALL(RECVMSG) | CALL(WRITE) |
		   CALL(SENDTO) | CALL(WRITEV) | CALL(SENDMSG) | CALL(SENDFILE) | CALL(CLOSE) |
		   CALL(SHUTDOWN) },
	{ .name = "syscalls:http-ends",
	  .what = "HTTP connections ended by close_range, dup3 or the process's exit",
	  .missing = http_ends_missing,
	  .progs = { "tp_req_exit" },
	  .calls = CALL(CLOSE_RANGE) | CALL(DUP3),
	  .rides_on = "syscalls:http" },
	{ .name = "syscalls:dup2",
	  .what = "HTTP connections ended by dup2",
	  .missing = dup2_missing,
	  .calls = CALL(DUP2),
	  .rides_on = "syscalls:http" },
	{ .name = "syscalls:http-peers",
	  .what = "which traced process sent a request (itself, a router)",
	  .missing = http_missing,
	  .calls = CALL(CONNECT),
	  .rides_on = "syscalls:http" },
	{ .name = "fentry:ttm",
	  .what = "kernel GPU buffers: create, move (VRAM, GTT, system), free",
	  .missing = ttm_missing,
	  .progs = { "ttm_create", "ttm_move_enter", "ttm_move_exit", "ttm_release" } },
	{ .name = "fentry:ttm_mem_evict_first",
	  .what = "evictions, hops through GTT as one (up to 6.8)",
	  .missing = evict_first_missing,
	  .progs = { "ttm_evict_first_enter", "ttm_evict_first_exit" } },
	{ .name = "fentry:ttm_bo_evict",
	  .what = "evictions, hops through GTT as one (6.9 and later)",
	  .missing = bo_evict_missing,
	  .progs = { "ttm_bo_evict_enter", "ttm_bo_evict_exit" } },
	{ .name = "amdgpu:amdgpu_bo_create",
	  .what = "amdgpu buffers' preferred and allowed domains",
	  .missing = amdgpu_missing,
	  .progs = { "tp_amdgpu_bo_create" } },
	{ .name = "amdgpu:amdgpu_bo_move",
	  .what = "amdgpu buffer moves, without the evict flag (fentry refused)",
	  .missing = amdgpu_missing,
	  .progs = { "tp_amdgpu_bo_move" },
	  .fallback_for = "fentry:ttm" },
};

#define NR_GROUPS (sizeof(groups) / sizeof(groups[0]))

static void add_probe(struct attach *a, __u32 status, const char *name, const char *what,
		      const char *reason)
{
	struct gmt_probe *p = &a->probes[a->nr_probes++];

	event__init(&p->hdr, GMT_EV_PROBE, sizeof(*p), 0, 0);
	p->status = status;
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->what, sizeof(p->what), "%s", what);
	snprintf(p->reason, sizeof(p->reason), "%s", reason ? reason : "");
}

int attach__check_privileges(char *msg, size_t size)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};
	__u64 eff;

	bool admin;

	/* root's capabilities, not its uid: a root held to a bounding set (a
	 * systemd unit, a container) may lack them; CAP_SYS_ADMIN holds both */
	if (syscall(SYS_capget, &hdr, data))
		return geteuid() ? -EPERM : 0;
	eff = (__u64)data[1].effective << 32 | data[0].effective;
	admin = eff >> CAP_SYS_ADMIN & 1;
	if ((admin || (eff >> CAP_BPF & 1)) && (admin || (eff >> CAP_PERFMON & 1)))
		return 0;
	snprintf(msg, size,
		 "tracing needs the CAP_BPF and CAP_PERFMON capabilities (or CAP_SYS_ADMIN), "
		 "which root has: run it with sudo (replaying a trace file needs none)");
	return -EPERM;
}

/* classic tracepoints are found through tracefs: mount it if nobody has */
static int find_tracefs(struct attach *a, char *err, size_t size)
{
	if (!access(TRACEFS "/events", F_OK)) {
		a->tracefs = TRACEFS;
		return 0;
	}
	if (!access(DEBUGFS_TRACING "/events", F_OK)) {
		a->tracefs = DEBUGFS_TRACING;
		return 0;
	}
	if (!mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		a->tracefs = TRACEFS;
		return 0;
	}
	snprintf(err, size,
		 "tracefs is not mounted and mounting it failed (%s): run "
		 "'mount -t tracefs nodev " TRACEFS "' and try again",
		 strerror(errno));
	return -ENOENT;
}

/* fork now, exec later: the child waits on `gate` until the probes are in */
static int spawn(struct attach *a, char **argv, char *err, size_t size)
{
	int gate[2], exec_err[2];
	sigset_t none;
	char c;

	if (pipe2(gate, O_CLOEXEC) || pipe2(exec_err, O_CLOEXEC)) {
		snprintf(err, size, "pipe: %s", strerror(errno));
		return -errno;
	}
	a->pid = fork();
	if (a->pid < 0) {
		snprintf(err, size, "fork: %s", strerror(errno));
		return -errno;
	}
	if (!a->pid) {
		close(gate[1]);
		close(exec_err[0]);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* an ignored signal stays ignored across exec: ours must not */
		signal(SIGPIPE, SIG_DFL);
		if (read(gate[0], &c, 1) != 1)
			_exit(127); /* the tracer gave up */
		execvp(argv[0], argv);
		c = errno;
		if (write(exec_err[1], &c, 1) != 1)
			_exit(127);
		_exit(127);
	}
	close(gate[0]);
	close(exec_err[1]);
	a->gate = gate[1];
	a->exec_err = exec_err[0];
	a->spawned = true;
	return 0;
}

int attach__release(struct attach *a, char *err, size_t size)
{
	char c = 1;
	ssize_t n;

	if (!a->spawned)
		return 0;
	if (write(a->gate, &c, 1) != 1) {
		snprintf(err, size, "could not start the command: %s", strerror(errno));
		return -EIO;
	}
	close(a->gate);
	a->gate = -1;
	do
		n = read(a->exec_err, &c, 1);
	while (n < 0 && errno == EINTR);
	close(a->exec_err);
	a->exec_err = -1;
	if (n == 1) {
		snprintf(err, size, "cannot run the command: %s", strerror(c));
		return -c;
	}
	return 0;
}

/* the program the kernel refused in the last load, from libbpf's words */
static char refused_prog[64], refused_why[96];
static bool verbose_log;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char line[512];
	const char *q;
	va_list copy;

	if (level == LIBBPF_DEBUG && !verbose_log)
		return 0;
	va_copy(copy, args);
	vsnprintf(line, sizeof(line), fmt, copy);
	va_end(copy);
	/* "prog 'NAME': BPF program load failed: REASON" */
	q = strstr(line, "prog '");
	if (q && strstr(q, "': BPF program load failed")) {
		snprintf(refused_prog, sizeof(refused_prog), "%.*s", (int)strcspn(q + 6, "'"),
			 q + 6);
		q = strstr(q, "load failed: ");
		snprintf(refused_why, sizeof(refused_why), "%.*s",
			 q ? (int)strcspn(q + 13, "\n") : 0, q ? q + 13 : "");
	}
	/* a refused program's group is listed as skipped with the reason; its
	 * verifier log is for -v */
	if (!verbose_log && (q || strstr(line, "failed to load object") ||
			     strstr(line, "failed to load BPF skeleton") ||
			     strstr(line, "permission error while running as root")))
		return 0;
	return vfprintf(stderr, fmt, args);
}

static struct bpf_program *prog(struct attach *a, const char *name)
{
	return bpf_object__find_program_by_name(a->skel->obj, name);
}

/* GMT_FORCE_GROUPS: names of groups to load whatever the feature probes
 * say, so that what the kernel itself then says can be seen (and tested) */
static bool forced(const char *name)
{
	const char *f = getenv("GMT_FORCE_GROUPS"), *at;
	size_t n = strlen(name);

	for (at = f ? strstr(f, name) : NULL; at; at = strstr(at + 1, name))
		if ((at == f || at[-1] == ',') && (at[n] == ',' || !at[n]))
			return true;
	return false;
}

static size_t group_named(const char *name)
{
	size_t g;

	for (g = 0; g < NR_GROUPS; g++)
		if (!strcmp(groups[g].name, name))
			return g;
	return NR_GROUPS;
}

/* decide what loads: a group whose kernel feature is missing, or that the
 * kernel refused (`refused`, its reason), does not; nor one that rides on
 * a group that does not. The sys_exit programs take the calls of the
 * groups that are on, by number. */
static void plan_groups(struct attach *a, const char **why, char (*refused)[240])
{
	volatile __u64 *want;
	struct bpf_program *p;
	size_t g, i, r;
	long nr;

	for (g = 0; g < NR_GROUPS; g++) {
		why[g] = refused[g][0]		? refused[g] :
			 forced(groups[g].name) ? NULL :
						  groups[g].missing(a);
		r = groups[g].rides_on ? group_named(groups[g].rides_on) : NR_GROUPS;
		if (!why[g] && r < g && why[r])
			why[g] = why[r];
		for (i = 0; i < MAX_PROGS && groups[g].progs[i]; i++)
			if ((p = prog(a, groups[g].progs[i])))
				bpf_program__set_autoload(p, !why[g]);
		for (i = 0; i < GMT_SYS_NR; i++) {
			nr = sys_numbers[i];
			if (why[g] || !(groups[g].calls >> i & 1) || nr < 0 || nr >= GMT_SYS_MAX)
				continue;
			a->skel->rodata->sys_nr[i] = nr;
			want = i < GMT_SYS_READ ? a->skel->rodata->mm_sys_want :
						  a->skel->rodata->req_sys_want;
			want[nr / 64] |= 1ull << (nr % 64);
		}
	}
}

static struct gmt_probe *find_probe(struct attach *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nr_probes; i++)
		if (!strcmp(a->probes[i].name, name))
			return &a->probes[i];
	return NULL;
}

/* p on the software event `config` of each online CPU, every occurrence
 * (sample_period 1), kernel mode too; reason: what it took, or why not */
static int attach_perf_sw(struct attach *a, struct bpf_program *p, __u64 config, char *reason,
			  size_t size)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE,
					.size = sizeof(attr),
					.config = config,
					.sample_period = 1 };
	int cpu, cpus = libbpf_num_possible_cpus(), fd, n = 0;
	struct bpf_link *l;

	for (cpu = 0; cpu < cpus; cpu++) {
		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV)
			continue; /* offline */
		if (fd < 0) {
			snprintf(reason, size, "perf_event_open on CPU %d failed: %s", cpu,
				 strerror(errno));
			return -1;
		}
		l = bpf_program__attach_perf_event(p, fd);
		if (!l) {
			snprintf(reason, size, "attaching to CPU %d's event failed: %s", cpu,
				 strerror(errno));
			close(fd);
			return -1;
		}
		if (linkset__add(&a->links, l)) {
			snprintf(reason, size, "out of memory");
			return -1;
		}
		n++;
	}
	snprintf(reason, size,
		 "in place of exceptions:page_fault_user (x86 only), on the %d online CPUs; a "
		 "CPU brought online later is not watched",
		 n);
	return 0;
}

static void attach_group(struct attach *a, size_t g, const char *why)
{
	const char *const *names = groups[g].progs;
	size_t i, first = a->links.nr_links;
	struct bpf_link *l;
	char reason[160];

	if (why) {
		add_probe(a, GMT_PROBE_SKIPPED, groups[g].name, groups[g].what, why);
		return;
	}
	if (groups[g].fallback_for) {
		const struct gmt_probe *p = find_probe(a, groups[g].fallback_for);

		if (p && p->status == GMT_PROBE_ATTACHED)
			return;
	}
	if (groups[g].rides_on) {
		const struct gmt_probe *p = find_probe(a, groups[g].rides_on);

		if (!p || p->status != GMT_PROBE_ATTACHED) {
			snprintf(reason, sizeof(reason),
				 "its calls are taken by the program of %s, which did not attach",
				 groups[g].rides_on);
			add_probe(a, GMT_PROBE_FAILED, groups[g].name, groups[g].what, reason);
			return;
		}
	}
	if (groups[g].manual) {
		a->manual_ready = true;
		snprintf(reason, sizeof(reason),
			 "loaded; put on each GPU library's functions as it is found (%s%s)",
			 a->no_umulti ? "a perf event each: " : "uprobe_multi links",
			 a->no_umulti ? a->no_umulti : "");
		add_probe(a, GMT_PROBE_ATTACHED, groups[g].name, groups[g].what, reason);
		return;
	}
	if (groups[g].perf_sw) {
		if (attach_perf_sw(a, prog(a, names[0]), groups[g].perf_sw, reason,
				   sizeof(reason))) {
			linkset__drop(&a->links, first, 0);
			add_probe(a, GMT_PROBE_FAILED, groups[g].name, groups[g].what, reason);
		} else {
			add_probe(a, GMT_PROBE_ATTACHED, groups[g].name, groups[g].what, reason);
		}
		return;
	}
	for (i = 0; i < MAX_PROGS && names[i]; i++) {
		l = bpf_program__attach(prog(a, names[i]));
		if (!l || linkset__add(&a->links, l)) {
			int err = l ? ENOMEM : errno;

			/* the kernel's own ENOTSUPP, which libc has no words for
			 * (Debian's arm64 6.1 answers an fexit's attach so) */
			snprintf(reason, sizeof(reason), "attaching %s failed: %s", names[i],
				 err == 524 ? "not supported by this kernel (ENOTSUPP)" :
					      strerror(err));
			linkset__drop(&a->links, first, 0);
			add_probe(a, GMT_PROBE_FAILED, groups[g].name, groups[g].what, reason);
			return;
		}
	}
	add_probe(a, GMT_PROBE_ATTACHED, groups[g].name, groups[g].what, NULL);
}

static void drop_probe(struct attach *a, const char *name)
{
	struct gmt_probe *p = find_probe(a, name);

	if (p && p->status == GMT_PROBE_SKIPPED) {
		memmove(p, p + 1, (a->probes + a->nr_probes - (p + 1)) * sizeof(*p));
		a->nr_probes--;
	}
}

/* one line for what is not here: without ttm there is no eviction to hook
 * nor amdgpu (which needs ttm); only one eviction hook fits a kernel */
static void prune_probes(struct attach *a)
{
	struct gmt_probe *ttm = find_probe(a, "fentry:ttm"), *p;

	/* one page-fault hook is told: the one that took faults (the fexit
	 * that classes them is told either way) */
	p = find_probe(a, "perf:page-faults");
	if (p && p->status == GMT_PROBE_ATTACHED) {
		drop_probe(a, "exceptions:page_fault_user");
	} else if (p && strstr(p->reason, "takes page faults")) {
		drop_probe(a, "perf:page-faults");
	}
	if (ttm && ttm->status == GMT_PROBE_SKIPPED) {
		drop_probe(a, "fentry:ttm_mem_evict_first");
		drop_probe(a, "fentry:ttm_bo_evict");
		p = find_probe(a, "amdgpu:amdgpu_bo_create");
		if (p && strstr(p->reason, "not loaded"))
			drop_probe(a, "amdgpu:amdgpu_bo_create");
		p = find_probe(a, "amdgpu:amdgpu_bo_move");
		if (p && strstr(p->reason, "not loaded"))
			drop_probe(a, "amdgpu:amdgpu_bo_move");
		return;
	}
	p = find_probe(a, "fentry:ttm_mem_evict_first");
	if (p && p->status == GMT_PROBE_ATTACHED)
		drop_probe(a, "fentry:ttm_bo_evict");
	p = find_probe(a, "fentry:ttm_bo_evict");
	if (p && p->status == GMT_PROBE_ATTACHED)
		drop_probe(a, "fentry:ttm_mem_evict_first");
}

/* the group a program belongs to; NR_GROUPS for none */
static size_t group_of(const char *name)
{
	size_t g, i;

	for (g = 0; name[0] && g < NR_GROUPS; g++)
		for (i = 0; i < MAX_PROGS && groups[g].progs[i]; i++)
			if (!strcmp(groups[g].progs[i], name))
				return g;
	return NR_GROUPS;
}

static int open_and_load(struct attach *a, const struct attach_opts *o, const char **why,
			 char (*refused)[240]);

/* Load what this kernel has. A group the kernel refuses anyway (its
 * verifier, a hook it will not take) is listed as skipped with the reason,
 * and the rest is loaded again without it. */
static int load(struct attach *a, const struct attach_opts *o, char *err, size_t size)
{
	char refused[NR_GROUPS][240] = { 0 };
	const char *why[NR_GROUPS];
	size_t g;
	int e;

	for (;;) {
		e = open_and_load(a, o, why, refused);
		if (!e)
			break;
		g = group_of(refused_prog);
		gmt_bpf__destroy(a->skel);
		a->skel = NULL;
		/* first-touch stacks are the newest code in the fault program:
		 * without them it still counts faults */
		if ((!strncmp(refused_prog, "tp_page_fault_", 14) ||
		     !strcmp(refused_prog, "pe_page_fault")) &&
		    !a->touch_refused[0] && o->touch_bytes) {
			snprintf(a->touch_refused, sizeof(a->touch_refused),
				 "the kernel refused them: %s (-v shows why)",
				 refused_why[0] ? refused_why : strerror(-e));
			refused_prog[0] = 0;
			continue;
		}
		/* the uprobes' programs as perf events' instead */
		if (!a->no_umulti && g == group_of("gpu_enter")) {
			a->no_umulti = "the kernel refused them for uprobe_multi links";
			refused_prog[0] = 0;
			continue;
		}
		if (!strcmp(refused_prog, "gpu_return") && !a->redact_refused[0]) {
			snprintf(a->redact_refused, sizeof(a->redact_refused),
				 "the kernel refused them: %s (-v shows why)",
				 refused_why[0] ? refused_why : strerror(-e));
			refused_prog[0] = 0;
			continue;
		}
		if (g == NR_GROUPS || refused[g][0]) {
			snprintf(
				err, size,
				"loading the BPF programs failed: %s (run with -v for the verifier "
				"log)",
				strerror(-e));
			return e;
		}
		/* that group is listed as skipped, and the rest loads without it */
		snprintf(refused[g], sizeof(refused[g]), "the kernel refused %s: %s (-v shows why)",
			 refused_prog, refused_why[0] ? refused_why : strerror(-e));
		refused_prog[0] = 0;
	}
	for (g = 0; g < NR_GROUPS; g++)
		attach_group(a, g, why[g]);
	prune_probes(a);
	add_probe(a, GMT_PROBE_ATTACHED, "/proc/PID/status", "truth counters every interval", NULL);
	if (a->touch_refused[0])
		add_probe(a, GMT_PROBE_SKIPPED, "first-touch stacks",
			  "who touched the host heap first", a->touch_refused);
	if (a->redact_refused[0])
		add_probe(
			a, GMT_PROBE_SKIPPED, "serving GPU stacks",
			"GPU allocation stacks by call frame information while serving, and with -p",
			a->redact_refused);
	return 0;
}

/* --watch: BPF finds processes at their exec (a name of --comm) and at
 * their first GPU mapping, not the tracer's own or its helpers' */
static void watch_names(struct attach *a, const struct attach_opts *o)
{
	struct gmt_bpf__rodata *r = a->skel->rodata;
	size_t i, max = sizeof(r->watch_comms) / sizeof(r->watch_comms[0]);

	r->watch_on = o->watch;
	r->self_tgid = getpid();
	for (i = 0; o->watch && i < o->nr_comms && i < max; i++)
		strncpy((char *)r->watch_comms[i], o->comms[i], sizeof(r->watch_comms[i]) - 1);
	r->nr_watch_comms = i;
}

static int open_and_load(struct attach *a, const struct attach_opts *o, const char **why,
			 char (*refused)[240])
{
	__u32 ringbuf = (o->ringbuf_mb ? o->ringbuf_mb : 8) << 20;
	size_t g;
	bool loop;

	a->skel = gmt_bpf__open();
	if (!a->skel)
		return -errno;
	a->skel->rodata->targ_tgid = a->pid;
	a->skel->rodata->page_shift = __builtin_ctzl(sysconf(_SC_PAGESIZE));
	/* --watch: the targets are the map's, which also takes their children */
	a->skel->rodata->follow_forks = o->follow_forks || o->watch;
	watch_names(a, o);
	a->skel->rodata->all_bos = o->all_bos;
	/* stack slices for unwinding by CFI, where frame pointers stop short:
	 * whole in a process started here, until its first request; after
	 * that, and with -p, redacted (bpf/ustack.bpf.h), since a serving
	 * thread's stack could hold a request's bytes */
	a->skel->rodata->unwind_cfi = a->spawned;
	/* redacting needs bpf_loop, sampled first touches bpf_find_vma too
	 * (5.17); where they are missing, the verifier never sees the code
	 * that calls them */
	loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) > 0;
	a->skel->rodata->redact_gpu = loop && !a->redact_refused[0];
	if (o->touch_bytes && !a->touch_refused[0] && loop &&
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_find_vma, NULL) > 0) {
		__u64 period = o->touch_bytes / sysconf(_SC_PAGESIZE);

		a->skel->rodata->touch_period = period < 1	  ? 1 :
						period > 1u << 30 ? 1u << 30 :
								    period;
	}
	if (!access("/sys/kernel/btf/amdgpu", F_OK))
		find_amdgpu_destroy((__u64 *)a->skel->rodata->amdgpu_destroy);
	a->skel->rodata->wakeup_bytes = ringbuf / 4;
	bpf_map__set_max_entries(a->skel->maps.events, ringbuf);
	plan_groups(a, why, refused);
	/* decided before load: a program loaded for one kind of uprobe link
	 * cannot be put in the other */
	g = group_of("gpu_enter");
	for (size_t i = 0; !a->no_umulti && i < MAX_PROGS && groups[g].progs[i]; i++)
		bpf_program__set_expected_attach_type(prog(a, groups[g].progs[i]),
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	return gmt_bpf__load(a->skel);
}

struct attach *attach__new(const struct attach_opts *o, char *err, size_t size)
{
	struct attach *a = calloc(1, sizeof(*a));

	if (!a) {
		snprintf(err, size, "out of memory");
		return NULL;
	}
	a->gate = a->exec_err = a->pidfd = -1;
	verbose_log = o->verbose;
	libbpf_set_print(libbpf_print);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, size,
			 "this kernel has no BTF (/sys/kernel/btf/vmlinux): gpumemtrace needs a "
			 "kernel built with CONFIG_DEBUG_INFO_BTF, 5.8 or newer");
		goto fail;
	}
	a->vmlinux = btf__load_vmlinux_btf();
	if (find_tracefs(a, err, size))
		goto fail;
	if (o->argv) {
		if (spawn(a, o->argv, err, size))
			goto fail;
	} else {
		a->pid = o->pid;
	}
	if (!o->watch && (a->pidfd = syscall(SYS_pidfd_open, a->pid, 0)) < 0) {
		snprintf(err, size, "no process with pid %d", a->pid);
		goto fail;
	}
	a->no_umulti = umulti__missing();
	if (load(a, o, err, size))
		goto fail;
	return a;
fail:
	attach__free(a);
	return NULL;
}

bool attach__gpu_ready(const struct attach *a)
{
	return a->manual_ready;
}

void attach__adopt_gpulib(struct attach *a, struct gpulib *g)
{
	a->gpu = g;
}

bool attach__uprobe_multi(const struct attach *a)
{
	return !a->no_umulti;
}

bool attach__redacts(const struct attach *a)
{
	return a->skel->rodata->touch_period || a->skel->rodata->redact_gpu;
}

pid_t attach__target(const struct attach *a)
{
	return a->pid;
}

int attach__pidfd(const struct attach *a)
{
	return a->pidfd;
}

struct gmt_bpf *attach__skel(const struct attach *a)
{
	return a->skel;
}

const struct gmt_probe *attach__probes(const struct attach *a, size_t *n)
{
	*n = a->nr_probes;
	return a->probes;
}

static void *stop_links(void *arg)
{
	struct attach *a = arg;

	linkset__destroy((struct linkset *[]){ &a->links }, 1);
	return NULL;
}

void attach__stop(struct attach *a)
{
	if (!a->stopping && !pthread_create(&a->stopper, NULL, stop_links, a))
		a->stopping = true;
}

void attach__free(struct attach *a)
{
	if (!a)
		return;
	/* all at once: the uprobes' detach overlaps the tracepoints' */
	linkset__destroy(
		(struct linkset *[]){ gpulib__links(a->gpu), a->stopping ? NULL : &a->links }, 2);
	if (a->stopping)
		pthread_join(a->stopper, NULL);
	gpulib__free(a->gpu);
	gmt_bpf__destroy(a->skel);
	btf__free(a->vmlinux);
	if (a->exec_err >= 0)
		close(a->exec_err);
	if (a->gate >= 0) {
		close(a->gate); /* an unreleased child sees EOF and exits at once */
		waitpid(a->pid, NULL, 0);
	} else if (a->spawned) {
		/* reap it if it is done; one still running is left to run */
		waitpid(a->pid, NULL, WNOHANG);
	}
	if (a->pidfd >= 0)
		close(a->pidfd);
	free(a);
}
