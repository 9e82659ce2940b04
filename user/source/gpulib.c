// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GPU libraries: owns every file looked at (by device and inode, once),
 * what its exports say it is (Vulkan loader or driver, CUDA, HIP, llama.cpp,
 * mtmd) and the uprobes put on it: a link per program with uprobe_multi,
 * else uprobes per function. Vulkan drivers are asked by the
 * gpumemtrace-vkinfo helper without waiting, so events go on being read;
 * llama.cpp's per-token calls are probed as --token-probes says. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "elfsym.h"
#include "stream/gpufuncs.h"
#include "gpuprobes.h"
#include "gpulib.h"
#include "linkset.h"
#include "procfs.h"
#include "umulti.h"
#include "vkicd.h"

#define HELPER "gpumemtrace-vkinfo"
#define HELPER_TIMEOUT_MS 20000

enum role { R_NONE, R_VK_LOADER, R_VK_ICD, R_CU, R_HIP, R_LLAMA, R_MTMD };

/* llama.cpp's calls, timed by the llama programs; cookie = the kind */
static const struct {
	const char *name;
	unsigned int kind;
	enum role role;
} llama_funcs[] = {
	{ "llama_decode", GMT_DEC_DECODE, R_LLAMA },
	{ "llama_encode", GMT_DEC_ENCODE, R_LLAMA },
	{ "llama_synchronize", GMT_DEC_SYNC, R_LLAMA },
	{ "llama_state_seq_get_data_ext", GMT_DEC_STATE_SAVE, R_LLAMA },
	{ "llama_state_seq_set_data_ext", GMT_DEC_STATE_LOAD, R_LLAMA },
	{ "mtmd_encode_chunk", GMT_DEC_IMAGE, R_MTMD },
	{ "mtmd_helper_eval_chunk_single", GMT_DEC_IMAGE_EVAL, R_MTMD },
	/* llama-server since mtmd's batch API: it encodes an image's chunk with
	 * mtmd_batch_encode, then decodes its embeddings */
	{ "mtmd_batch_encode", GMT_DEC_IMAGE, R_MTMD },
	{ "mtmd_helper_decode_image_chunk", GMT_DEC_IMAGE_EVAL, R_MTMD },
};

#define NR_LLAMA_FUNCS (sizeof(llama_funcs) / sizeof(llama_funcs[0]))

struct lib {
	__u64 dev, ino;
};

struct plan {
	__u64 off[64];
	unsigned int func[64];
	size_t n;
};

/* a driver the helper is asking, while events go on being read: the target
 * runs on, and what it maps is read from /proc while it lives */
struct pending {
	pid_t child;
	int out;	   /* the helper's standard output */
	int lib;	   /* the driver file itself: the probes go on it */
	__u32 pid;	   /* the target that mapped it, or (early) will */
	bool early;	   /* asked before the target mapped it (a manifest's) */
	__u32 mapped_by;   /* early: the target that has mapped it since */
	struct lib file;   /* which the helper's answer must name */
	__u64 deadline_ns; /* CLOCK_MONOTONIC */
	struct plan p;	   /* the exports; the helper adds the driver's entry points */
	char path[PATH_MAX];
	char buf[8192];
	size_t len;
};

/* a driver asked and probed before the target mapped it: what is said of
 * it (the probe record, its devices) waits until the target maps it, so a
 * program that never loads it has none of its devices in its report */
struct early {
	__u64 dev, ino;
	char *answer; /* the helper's, for its devices */
	char path[PATH_MAX];
	struct said {
		__u32 status; /* GMT_PROBE_* */
		char what[64], reason[160];
	} said;
};

struct gpulib {
	struct gpulib_opts o;
	struct pending *pending;
	size_t nr_pending, pending_cap;
	struct early *early; /* each said (and dropped) once mapped */
	size_t nr_early, early_cap;
	int ep;		  /* the helpers' outputs */
	struct lib *libs; /* every file looked at, GPU or not */
	size_t nr_libs, libs_cap;
	struct linkset links;
	unsigned int attached[GMT_API_NR]; /* libraries per API */
	unsigned int llama_attached;
	unsigned int drivers_mapped; /* Vulkan drivers the target had mapped */
	unsigned int loaders_mapped; /* and Vulkan loaders */
	bool vulkan_called;	     /* a Vulkan call seen: early drivers said */
	char helper[PATH_MAX];
};

/* the exports that tell what a library is */
static const char *const markers[] = { "vk_icdGetInstanceProcAddr",
				       "vkAllocateMemory",
				       "cuMemAlloc_v2",
				       "hipMalloc",
				       "llama_decode",
				       "mtmd_encode_chunk",
				       "mtmd_batch_encode" };
#define NR_MARKERS (sizeof(markers) / sizeof(markers[0]))

static const char *const lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu",
	"/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/usr/lib64",
	"/usr/lib",
	"/usr/local/lib",
	"/usr/local/cuda/lib64",
	"/usr/local/nvidia/lib64",
	"/opt/rocm/lib",
};
static const char *const lib_names[] = { "libvulkan.so.1", "libcuda.so.1", "libamdhip64.so.6",
					 "libamdhip64.so.5", "libamdhip64.so" };

struct gpulib *gpulib__new(const struct gpulib_opts *o)
{
	struct gpulib *g = calloc(1, sizeof(*g));
	char self[PATH_MAX - 64];
	ssize_t n;
	char *slash;

	if (!g)
		return NULL;
	g->o = *o;
	g->ep = epoll_create1(EPOLL_CLOEXEC);
	/* the helper lives beside the binary (installed, or the build tree) */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
		snprintf(g->helper, sizeof(g->helper), "%s/" HELPER, self);
		if (access(g->helper, X_OK))
			g->helper[0] = 0;
	}
	return g;
}

static void emit_probe(struct gpulib *g, __u32 status, const char *name, const char *what,
		       const char *reason)
{
	struct gmt_probe p;

	event__init(&p.hdr, GMT_EV_PROBE, sizeof(p), event__now_ns(), g->o.pid);
	p.status = status;
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.what, sizeof(p.what), "%s", what);
	snprintf(p.reason, sizeof(p.reason), "%s", reason);
	g->o.sink(g->o.ctx, &p.hdr);
}

/* true the first time a file is seen */
static bool remember(struct gpulib *g, __u64 dev, __u64 ino)
{
	size_t i;

	for (i = 0; i < g->nr_libs; i++)
		if (g->libs[i].dev == dev && g->libs[i].ino == ino)
			return false;
	if (g->nr_libs == g->libs_cap) {
		size_t cap = g->libs_cap ? g->libs_cap * 2 : 64;
		struct lib *l = realloc(g->libs, cap * sizeof(*l));

		if (!l)
			return false;
		g->libs = l;
		g->libs_cap = cap;
	}
	g->libs[g->nr_libs++] = (struct lib){ dev, ino };
	return true;
}

/* entry and return probes on one function; -errno on failure */
static int attach_pair(struct gpulib *g, struct bpf_program *enter, struct bpf_program *ret,
		       const char *path, __u64 off, __u64 cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	pid_t pid = g->o.all_pids ? -1 : g->o.pid;
	struct bpf_link *l;

	/* the return first: a call entered between the two attaches would
	 * otherwise have an entry and no return */
	uo.retprobe = true;
	l = bpf_program__attach_uprobe_opts(ret, pid, path, off, &uo);
	if (!l || linkset__add(&g->links, l))
		return -errno;
	uo.retprobe = false;
	l = bpf_program__attach_uprobe_opts(enter, pid, path, off, &uo);
	if (!l || linkset__add(&g->links, l))
		return -errno;
	return 0;
}

/* an entry probe alone */
static int attach_entry(struct gpulib *g, struct bpf_program *prog, const char *path, __u64 off,
			__u64 cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	struct bpf_link *l;

	l = bpf_program__attach_uprobe_opts(prog, g->o.all_pids ? -1 : g->o.pid, path, off, &uo);
	if (!l || linkset__add(&g->links, l))
		return -errno;
	return 0;
}

/* llama-server calls llama_synchronize before it samples each slot and once
 * after the last, so the entry of the call after a slot's own says when its
 * token was done: its entry alone is probed, one trap instead of two on a
 * call made twice a token. Other programs (node-llama-cpp) synchronize once
 * after a decode, and only the call's return says when the device was done */
static bool entry_sync(__u32 pid)
{
	char comm[32];

	if (!pid)
		return false;
	procfs__read(pid, "comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = 0;
	return !strcmp(comm, "llama-server");
}

/* which programs a function gets (ret NULL: its entry alone), with what
 * cookie; -EINVAL for a function with no argument shape (a bug here) */
static int route(struct gpulib *g, unsigned int func, bool sync_entry, struct bpf_program **enter,
		 struct bpf_program **ret, __u64 *cookie)
{
	*ret = NULL;
	*cookie = func - 0x8000; /* llama.cpp's: the kind is in the low bits */
	if (func == 0x8000 + GMT_DEC_SYNC && sync_entry) {
		*enter = g->o.llama_mark;
	} else if (func == 0x8000 + GMT_DEC_STATE_SAVE || func == 0x8000 + GMT_DEC_STATE_LOAD) {
		*enter = g->o.llama_state;
	} else if (func >= 0x8000) {
		*enter = g->o.llama_enter;
		*ret = g->o.llama_ret;
	} else {
		*enter = g->o.enter;
		*ret = g->o.ret;
		if (gpuprobes__cookie(func, cookie))
			return -EINVAL;
	}
	return 0;
}

static int attach_func(struct gpulib *g, const char *path, __u64 off, unsigned int func,
		       bool sync_entry)
{
	struct bpf_program *enter, *ret;
	__u64 cookie;

	if (route(g, func, sync_entry, &enter, &ret, &cookie))
		return -EINVAL;
	return ret ? attach_pair(g, enter, ret, path, off, cookie) :
		     attach_entry(g, enter, path, off, cookie);
}

/* the functions that one program pair takes, in one uprobe_multi link each */
struct batch {
	struct bpf_program *enter, *ret;
	__u64 off[64], cookie[64];
	size_t n;
};

static int attach_batch(struct gpulib *g, const char *path, const struct batch *b)
{
	int pid = g->o.all_pids ? 0 : g->o.pid;
	size_t fds = g->links.nr_fds;
	int fd;

	/* the returns first, as attach_pair does */
	if (b->ret) {
		fd = umulti__attach(bpf_program__fd(b->ret), path, b->off, b->cookie, b->n, true,
				    pid);
		if (fd < 0 || linkset__add_fd(&g->links, fd))
			return fd < 0 ? fd : -ENOMEM;
	}
	fd = umulti__attach(bpf_program__fd(b->enter), path, b->off, b->cookie, b->n, false, pid);
	if (fd < 0 || linkset__add_fd(&g->links, fd)) {
		linkset__drop(&g->links, g->links.nr_links, fds);
		return fd < 0 ? fd : -ENOMEM;
	}
	return 0;
}

/* the plan's functions in a link per program (the programs were loaded
 * for uprobe_multi links); how many could not be attached, errno why */
static int attach_multi(struct gpulib *g, const char *path, const struct plan *p, bool sync_entry)
{
	struct batch b[4] = {};
	struct bpf_program *enter, *ret;
	size_t i, k;
	__u64 cookie;
	int failed = 0, err;

	for (i = 0; i < p->n; i++) {
		if (route(g, p->func[i], sync_entry, &enter, &ret, &cookie)) {
			failed++;
			errno = EINVAL;
			continue;
		}
		for (k = 0; k < 4 && b[k].n && b[k].enter != enter; k++)
			;
		if (k == 4) /* four programs take entries: not reached */
			continue;
		b[k].enter = enter;
		b[k].ret = ret;
		b[k].off[b[k].n] = p->off[i];
		b[k].cookie[b[k].n++] = cookie;
	}
	for (k = 0; k < 4 && b[k].n; k++)
		if ((err = attach_batch(g, path, &b[k]))) {
			failed += b[k].n;
			errno = -err;
		}
	return failed;
}

static void plan_add(struct plan *p, __u64 off, unsigned int func)
{
	size_t i;

	if (!off || p->n == 64)
		return;
	for (i = 0; i < p->n; i++)
		if (p->off[i] == off)
			return; /* an alias: probed once */
	p->off[p->n] = off;
	p->func[p->n++] = func;
}

/* a call made on every decode step */
static bool per_token(unsigned int kind)
{
	return kind == GMT_DEC_DECODE || kind == GMT_DEC_ENCODE || kind == GMT_DEC_SYNC;
}

/* whether pid's llama.cpp gets its per-token probes: llama-server writes
 * its own figures (timings) in each response, read from its writes at no
 * trap a token; other programs say nothing of their tokens */
static bool tokens_probed(const struct gpulib *g, __u32 pid)
{
	if (g->o.tokens != GPULIB_TOKENS_AUTO)
		return g->o.tokens == GPULIB_TOKENS_ON;
	return !entry_sync(pid);
}

/* llama.cpp's timed functions that the file exports; *dropped: per-token
 * ones it has that are left out */
static void plan_llama(struct plan *p, int fd, bool tokens, size_t *dropped)
{
	const char *names[NR_LLAMA_FUNCS];
	__u64 offs[NR_LLAMA_FUNCS];
	size_t i;

	*dropped = 0;
	for (i = 0; i < NR_LLAMA_FUNCS; i++)
		names[i] = llama_funcs[i].name;
	if (elfsym__offsets(fd, names, NR_LLAMA_FUNCS, offs) <= 0)
		return;
	for (i = 0; i < NR_LLAMA_FUNCS; i++) {
		if (!tokens && per_token(llama_funcs[i].kind)) {
			*dropped += offs[i] != 0;
			continue;
		}
		plan_add(p, offs[i], 0x8000 + llama_funcs[i].kind);
	}
}

/* the API's functions that the file exports */
static void plan_exports(struct plan *p, int fd, unsigned int api)
{
	const char *names[64];
	unsigned int funcs[64];
	__u64 offs[64];
	size_t i, n = 0;

	for (i = 0; i < gpu_nr_funcs && n < 64; i++)
		if (gpu_funcs[i].api == api) {
			funcs[n] = i;
			names[n++] = gpu_funcs[i].name;
		}
	if (elfsym__offsets(fd, names, n, offs) <= 0)
		return;
	for (i = 0; i < n; i++)
		plan_add(p, offs[i], funcs[i]);
}

static unsigned int func_index(const char *name)
{
	size_t i;

	for (i = 0; i < gpu_nr_funcs; i++)
		if (!strcmp(gpu_funcs[i].name, name))
			return i;
	return ~0u;
}

static void emit_device(struct gpulib *g, struct gmt_gpu_device *d)
{
	if (d->hdr.type == GMT_EV_GPU_DEVICE)
		g->o.sink(g->o.ctx, &d->hdr);
}

/* a path as /proc/PID/maps shows it to us, as the target itself names it:
 * without its root's prefix when it runs in a chroot below ours */
static const char *in_target_root(__u32 pid, const char *path, char *buf, size_t size)
{
	char link[64], root[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/root", pid);
	n = readlink(link, root, sizeof(root) - 1);
	if (n <= 1 || root[0] != '/')
		return path; /* "/", or not readable */
	root[n] = 0;
	if (strncmp(path, root, n) || path[n] != '/')
		return path;
	snprintf(buf, size, "%s", path + n);
	return buf;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* what the helper's first process needs, made before the clone: after it,
 * in a copy of a threaded program, only system calls are safe */
struct launch {
	const char *path;
	char *argv[5];
	int out; /* the answer's pipe */
};

/* The helper's first process, pid 1 of its own pid namespace and alone in
 * its own network, IPC and UTS ones: what the driver may do to a host
 * process, a host listener or the host's shared memory it cannot name
 * there, and whatever it starts ends when the helper does. A session of
 * its own, no environment, no descriptor but the answer's. */
static int launch_helper(void *arg)
{
	const struct launch *l = arg;
	char *no_env[] = { NULL };
	int null = open("/dev/null", O_RDWR);

	if (null < 0 || setsid() < 0 || dup2(l->out, 1) != 1 || dup2(null, 0) != 0 ||
	    dup2(null, 2) != 2 || close_range(3, ~0U, 0))
		_exit(127);
	execve(l->path, l->argv, no_env);
	_exit(127);
}

#define HELPER_NS (CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
#define HELPER_STACK (64 << 10)

/* Starts the helper on a driver the target mapped (or, early, will map),
 * without waiting for it: lavapipe takes a second to start on a busy
 * machine, and a target that fails at once would be gone, with its maps,
 * before the events it left were read. NULL, or why it could not (then
 * the caller keeps lib). */
static const char *start_driver(struct gpulib *g, __u32 pid, bool early, const char *path,
				struct lib file, int lib, const struct plan *p)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char own[PATH_MAX], pidstr[16];
	struct launch l = { .path = g->helper };
	struct pending *d;
	char *stack;
	int out[2];
	pid_t child;

	if (!g->helper[0])
		return "the helper " HELPER " is not installed beside gpumemtrace";
	if (g->ep < 0)
		return strerror(EMFILE);
	if (g->nr_pending == g->pending_cap) {
		size_t cap = g->pending_cap ? g->pending_cap * 2 : 4;
		struct pending *v = realloc(g->pending, cap * sizeof(*v));

		if (!v)
			return strerror(ENOMEM);
		g->pending = v;
		g->pending_cap = cap;
	}
	stack = malloc(HELPER_STACK);
	if (!stack)
		return strerror(ENOMEM);
	if (pipe2(out, O_CLOEXEC | O_NONBLOCK)) {
		free(stack);
		return strerror(errno);
	}
	snprintf(pidstr, sizeof(pidstr), "%u", pid);
	l.argv[0] = g->helper;
	l.argv[1] = "--pid";
	l.argv[2] = pidstr;
	l.argv[3] = (char *)in_target_root(pid, path, own, sizeof(own));
	l.out = out[1];
	child = clone(launch_helper, stack + HELPER_STACK, HELPER_NS | SIGCHLD, &l);
	free(stack);
	close(out[1]);
	if (child < 0) {
		static char why[96];

		close(out[0]);
		snprintf(why, sizeof(why), "not run: no namespaces of its own for %s (%s)", HELPER,
			 strerror(errno));
		return why;
	}
	d = &g->pending[g->nr_pending++];
	*d = (struct pending){ .child = child,
			       .out = out[0],
			       .lib = lib,
			       .pid = pid,
			       .early = early,
			       .file = file,
			       .deadline_ns = mono_ns() + HELPER_TIMEOUT_MS * 1000000ull,
			       .p = *p };
	snprintf(d->path, sizeof(d->path), "%s", path);
	epoll_ctl(g->ep, EPOLL_CTL_ADD, out[0], &ev);
	return NULL;
}

/* the helper's answer about the driver at path (its text, cut up here):
 * its entry points into p (NULL: not wanted), its devices emitted as pid's
 * (0: not yet). NULL, or why there are no entry points. */
static const char *parse_answer(struct gpulib *g, char *answer, const char *path,
				const struct lib *file, struct plan *p, __u32 pid, char *why,
				size_t size)
{
	struct gmt_gpu_device dev = {};
	unsigned long long a, b, c;
	unsigned int i, j, k;
	char line[512], name[128], *save = NULL;
	const char *base = strrchr(path, '/');
	int got = 0, n;

	for (char *s = strtok_r(answer, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		snprintf(line, sizeof(line), "%s", s);
		if (!strncmp(line, "error ", 6)) {
			snprintf(why, size, "the driver says: %.120s", line + 6);
		} else if (sscanf(line, "device %u %u %u %n", &i, &j, &k, &n) == 3) {
			if (pid)
				emit_device(g, &dev);
			memset(&dev, 0, sizeof(dev));
			event__init(&dev.hdr, GMT_EV_GPU_DEVICE, sizeof(dev), event__now_ns(), pid);
			dev.api = GMT_API_VK;
			dev.index = i;
			dev.vendor_id = j;
			dev.device_id = k;
			snprintf(dev.name, sizeof(dev.name), "%s", line + n);
			snprintf(dev.driver, sizeof(dev.driver), "%.*s",
				 (int)sizeof(dev.driver) - 1, base ? base + 1 : path);
		} else if (sscanf(line, "type %u %u %u", &i, &j, &k) == 3 &&
			   i < GMT_MAX_MEM_TYPES && dev.hdr.type) {
			dev.types[i] = (struct gmt_gpu_mem_type){ j, k };
			dev.nr_types = i + 1;
		} else if (sscanf(line, "devtype %u %u", &i, &j) == 2 && i == dev.index &&
			   dev.hdr.type) {
			/* VkPhysicalDeviceType, one up: 0 is "not said" */
			dev.device_type = j <= 4 ? j + 1 : GMT_GPU_TYPE_OTHER; /* 4: CPU */
		} else if (sscanf(line, "heap %u %llu %u", &i, &a, &j) == 3 &&
			   i < GMT_MAX_MEM_HEAPS && dev.hdr.type) {
			dev.heaps[i] = (struct gmt_gpu_mem_heap){ a, j, 0 };
			dev.nr_heaps = i + 1;
		} else if (sscanf(line, "func %127s %llu %llu %llx", name, &a, &b, &c) == 4) {
			/* the helper's copy must be the very file the target mapped */
			if (!p || a != file->dev || b != file->ino || (i = func_index(name)) == ~0u)
				continue;
			plan_add(p, c, i);
			got++;
		}
	}
	if (pid)
		emit_device(g, &dev);
	if (got)
		return NULL;
	if (!why[0])
		snprintf(why, size, "%s gave no entry points", HELPER);
	return why;
}

static const char *role_what(enum role r)
{
	switch (r) {
	case R_VK_LOADER:
		return "Vulkan loader";
	case R_VK_ICD:
		return "Vulkan driver";
	case R_CU:
		return "CUDA driver API";
	case R_HIP:
		return "HIP runtime";
	case R_LLAMA:
		return "llama.cpp decode";
	case R_MTMD:
		return "llama.cpp image encode";
	default:
		return "";
	}
}

static unsigned int role_api(enum role r)
{
	return r == R_CU ? GMT_API_CU : r == R_HIP ? GMT_API_HIP : GMT_API_VK;
}

/* the probes on lib (closed here), and what is to be said of them */
static void put_probes(struct gpulib *g, int lib, const char *path, __u32 pid, enum role role,
		       const struct plan *p, const char *err, struct said *said)
{
	char by_fd[64];
	bool sync_entry = role == R_LLAMA && entry_sync(pid);
	size_t i, attached;
	int failed = 0, e;

	/* the uprobes go on the very file opened, not on what a path names */
	snprintf(by_fd, sizeof(by_fd), "/proc/self/fd/%d", lib);
	if (g->o.uprobe_multi)
		failed = attach_multi(g, by_fd, p, sync_entry);
	else
		for (i = 0; i < p->n; i++)
			if (attach_func(g, by_fd, p->off[i], p->func[i], sync_entry))
				failed++;
	e = errno;
	close(lib);
	attached = p->n - failed;
	if (attached) {
		said->status = GMT_PROBE_ATTACHED;
		snprintf(said->what, sizeof(said->what), "%s: %zu functions", role_what(role),
			 attached);
		snprintf(said->reason, sizeof(said->reason), "%s%s", path,
			 pid ? "" : " (not loaded yet)");
		return;
	}
	/* the loader opens every installed driver; most have no device here */
	said->status = err && strstr(err, "no device") ? GMT_PROBE_SKIPPED : GMT_PROBE_FAILED;
	snprintf(said->what, sizeof(said->what), "%s", role_what(role));
	snprintf(said->reason, sizeof(said->reason), "%s: %s", path,
		 err	? err :
		 failed ? strerror(e) :
			  "no functions to probe");
}

/* the record that says what was attached, or why not, and its line */
static void say(struct gpulib *g, const char *path, enum role role, const struct said *said)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	emit_probe(g, said->status, base, said->what, said->reason);
	if (said->status == GMT_PROBE_ATTACHED) {
		if (role == R_LLAMA || role == R_MTMD)
			g->llama_attached++;
		else
			g->attached[role_api(role)]++;
		if (!g->o.quiet)
			fprintf(stderr, "gpumemtrace: attached %s in %s\n", said->what,
				said->reason);
	} else if (said->status == GMT_PROBE_FAILED && !g->o.quiet) {
		fprintf(stderr, "gpumemtrace: could not attach to %s: %s\n", base, said->reason);
	}
}

static void attach_lib(struct gpulib *g, int lib, const char *path, __u32 pid, enum role role,
		       const struct plan *p, const char *err)
{
	struct said said;

	put_probes(g, lib, path, pid, role, p, err, &said);
	say(g, path, role, &said);
}

/* Look at one file; attach when it is a GPU library. `mapped` is the
 * mapping it is reached by, `path` what the target calls it; pid is 0 before
 * it is mapped. */
static void consider(struct gpulib *g, __u32 pid, const struct procfs_map *mapped, __u32 root,
		     const char *path)
{
	const char *err = NULL;
	__u64 offs[NR_MARKERS];
	struct plan p = {};
	size_t dropped;
	enum role role;
	struct stat st;
	int fd;

	/* map_files reaches the very file mapped, in any mount namespace; else
	 * the file as `root` sees it, never leaving its root, read as it may */
	fd = mapped ? procfs__open_mapped(pid, mapped->start, mapped->end) : -1;
	if (fd < 0)
		fd = procfs__open_in_root(root, path);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !remember(g, st.st_dev, st.st_ino)) {
		close(fd);
		return;
	}
	if (elfsym__offsets(fd, markers, NR_MARKERS, offs) <= 0) {
		close(fd);
		return;
	}
	role = offs[0] ? R_VK_ICD :
	       offs[1] ? R_VK_LOADER :
	       offs[2] ? R_CU :
	       offs[3] ? R_HIP :
	       offs[4] ? R_LLAMA :
	       offs[5] ? R_MTMD :
			 R_NONE;
	if (role == R_NONE) {
		close(fd);
		return;
	}
	g->drivers_mapped += role == R_VK_ICD && pid;
	g->loaders_mapped += role == R_VK_LOADER && pid;
	/* a driver not mapped yet is asked early, for a target that may load
	 * it (root: pid's manifests named it), else once one has loaded it */
	if (role == R_VK_ICD && !pid && !root) {
		close(fd);
		g->nr_libs--;
		return;
	}
	if (role == R_LLAMA || role == R_MTMD) {
		plan_llama(&p, fd, tokens_probed(g, pid), &dropped);
		if (dropped) {
			const char *base = strrchr(path, '/');

			emit_probe(
				g, GMT_PROBE_SKIPPED, base ? base + 1 : path,
				"llama.cpp per-token calls",
				g->o.tokens == GPULIB_TOKENS_OFF ?
					"--token-probes off" :
					"llama-server: tokens and rates from its responses' timings "
					"(--token-probes on: a live decode rate, at a trap a token)");
		}
	} else
		plan_exports(&p, fd, role_api(role));
	/* a driver is attached when the helper answers (gpulib__service); one
	 * that could not be asked early is asked again when mapped */
	if (role == R_VK_ICD) {
		err = start_driver(g, pid ? pid : root, !pid, path,
				   (struct lib){ st.st_dev, st.st_ino }, fd, &p);
		if (!err)
			return;
		if (!pid) {
			close(fd);
			g->nr_libs--;
			return;
		}
	}
	attach_lib(g, fd, path, pid, role, &p, err);
}

/* an early driver mapped by pid: what was said of it, and its devices */
static void say_early(struct gpulib *g, size_t i, __u32 pid)
{
	struct early *e = &g->early[i];
	char why[160];

	say(g, e->path, R_VK_ICD, &e->said);
	if (e->answer)
		parse_answer(g, e->answer, e->path, &(struct lib){ e->dev, e->ino }, NULL, pid, why,
			     sizeof(why));
	free(e->answer);
	*e = g->early[--g->nr_early];
}

/* kept (answer and all) until the target maps it; false when it cannot be */
static bool keep_early(struct gpulib *g, const struct pending *d, char *answer,
		       const struct said *said)
{
	struct early *e;

	if (g->nr_early == g->early_cap) {
		size_t cap = g->early_cap ? g->early_cap * 2 : 4;
		struct early *v = realloc(g->early, cap * sizeof(*v));

		if (!v)
			return false;
		g->early = v;
		g->early_cap = cap;
	}
	e = &g->early[g->nr_early++];
	*e = (struct early){ .dev = d->file.dev, .ino = d->file.ino, .said = *said };
	e->answer = answer;
	snprintf(e->path, sizeof(e->path), "%s", d->path);
	return true;
}

/* one helper done (answered, failed or out of time): its driver attached;
 * an early one's record kept until the target maps it */
static void finish_driver(struct gpulib *g, size_t i, const char *late)
{
	struct pending *d = &g->pending[i];
	char why[160] = "", *answer;
	struct said said;
	const char *err;
	int status;

	epoll_ctl(g->ep, EPOLL_CTL_DEL, d->out, NULL);
	close(d->out);
	if (late)
		snprintf(why, sizeof(why), "%s", late);
	/* its answer is all read: whatever it does now (a driver that closed
	 * its output and sleeps) ends here, with all it started, rather than
	 * the wait below waiting for it */
	kill(d->child, SIGKILL);
	waitpid(d->child, &status, 0);
	d->buf[d->len] = 0;
	answer = d->early ? strdup(d->buf) : NULL;
	err = parse_answer(g, d->buf, d->path, &d->file, &d->p, d->early ? d->mapped_by : d->pid,
			   why, sizeof(why));
	put_probes(g, d->lib, d->path, d->early ? 0 : d->pid, R_VK_ICD, &d->p, err, &said);
	if (d->early && said.status == GMT_PROBE_ATTACHED)
		snprintf(said.reason, sizeof(said.reason), "%.*s (probed before it was loaded)",
			 (int)sizeof(said.reason) - 32, d->path);
	if (d->early && !d->mapped_by && answer && keep_early(g, d, answer, &said))
		answer = NULL; /* the record's now */
	else
		say(g, d->path, R_VK_ICD, &said);
	free(answer);
	*d = g->pending[--g->nr_pending];
}

/* a driver asked early, now mapped by pid: said now, or when answered */
static void mapped_early(struct gpulib *g, const struct lib *file, __u32 pid)
{
	size_t i;

	for (i = 0; i < g->nr_early; i++)
		if (g->early[i].dev == file->dev && g->early[i].ino == file->ino) {
			say_early(g, i, pid);
			return;
		}
	for (i = 0; i < g->nr_pending; i++)
		if (g->pending[i].early && !g->pending[i].mapped_by &&
		    g->pending[i].file.dev == file->dev && g->pending[i].file.ino == file->ino)
			g->pending[i].mapped_by = pid;
}

int gpulib__fd(const struct gpulib *g)
{
	return g ? g->ep : -1;
}

void gpulib__service(struct gpulib *g)
{
	__u64 now = mono_ns();
	size_t i = 0;
	ssize_t n = 1;

	while (g && i < g->nr_pending) {
		struct pending *d = &g->pending[i];

		while (d->len < sizeof(d->buf) - 1 &&
		       (n = read(d->out, d->buf + d->len, sizeof(d->buf) - 1 - d->len)) > 0)
			d->len += n;
		if (d->len == sizeof(d->buf) - 1 || n == 0 || (n < 0 && errno != EAGAIN))
			finish_driver(g, i, NULL); /* its slot now holds the last one */
		else if (now >= d->deadline_ns)
			finish_driver(g, i, HELPER " took too long to answer");
		else
			i++;
	}
}

void gpulib__drain(struct gpulib *g)
{
	struct epoll_event ev;

	while (g && g->nr_pending) {
		epoll_wait(g->ep, &ev, 1, 100);
		gpulib__service(g);
	}
}

/* a library the dynamic linker would find by its name alone, in pid's
 * root: into path, false where none is */
static bool find_lib(__u32 pid, const char *name, char *path, size_t size)
{
	size_t d;
	int fd;

	for (d = 0; d < sizeof(lib_dirs) / sizeof(lib_dirs[0]); d++) {
		if (snprintf(path, size, "%s/%s", lib_dirs[d], name) >= (int)size)
			return false;
		fd = procfs__open_in_root(pid, path);
		if (fd >= 0) {
			close(fd);
			return true;
		}
	}
	return false;
}

void gpulib__preattach(struct gpulib *g, bool spawned)
{
	static char drivers[VKICD_MAX][PATH_MAX];
	char path[PATH_MAX];
	size_t i, n;

	for (i = 0; i < sizeof(lib_names) / sizeof(lib_names[0]); i++)
		if (find_lib(g->o.pid, lib_names[i], path, sizeof(path)))
			consider(g, 0, NULL, g->o.pid, path);
	/* The Vulkan drivers the target's loader would load, asked now: it may
	 * allocate right after loading one, sooner than a helper answers. A
	 * helper makes a device on its driver's GPU for a moment: asked for a
	 * command not started yet, or a target that has the loader and no
	 * driver yet, not for every program attached to (a CUDA server) */
	if (!g->o.pid || g->drivers_mapped || !(spawned || g->loaders_mapped))
		return;
	n = vkicd__drivers(g->o.pid, drivers, VKICD_MAX);
	for (i = 0; i < n; i++)
		if (drivers[i][0] == '/')
			consider(g, 0, NULL, g->o.pid, drivers[i]);
		else if (find_lib(g->o.pid, drivers[i], path, sizeof(path)))
			consider(g, 0, NULL, g->o.pid, path);
}

/* false when pid's maps cannot be read, or show nothing: it is gone (a
 * zombie's maps open, and are empty) */
static bool scan(struct gpulib *g, __u32 pid)
{
	char maps[64], line[4096];
	struct procfs_map m;
	bool any = false;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		size_t i;
		bool known = false;

		any = true;
		if (!procfs__map_line(line, &m) || m.perms[2] != 'x' || m.path[0] != '/')
			continue;
		for (i = 0; i < g->nr_libs && !known; i++)
			known = g->libs[i].ino == m.ino && g->libs[i].dev == makedev(m.maj, m.min);
		if (known && (g->nr_early || g->nr_pending))
			mapped_early(g, &(struct lib){ makedev(m.maj, m.min), m.ino }, pid);
		if (known)
			continue;
		consider(g, pid, &m, pid, m.path);
	}
	fclose(f);
	return any;
}

void gpulib__scan(struct gpulib *g, __u32 pid)
{
	scan(g, pid);
}

void gpulib__vulkan_call(struct gpulib *g, __u32 pid)
{
	size_t i;

	if (!g || g->vulkan_called || (!g->nr_early && !g->nr_pending))
		return;
	g->vulkan_called = true;
	if (scan(g, pid))
		return;
	/* gone already: its loader had loaded the drivers its manifests name */
	while (g->nr_early)
		say_early(g, g->nr_early - 1, pid);
	for (i = 0; i < g->nr_pending; i++)
		if (g->pending[i].early && !g->pending[i].mapped_by)
			g->pending[i].mapped_by = pid;
}

void gpulib__summary(struct gpulib *g)
{
	static const char *const names[GMT_API_NR] = { "", "vulkan", "cuda", "hip" };
	static const char *const libs[GMT_API_NR] = { "", "libvulkan.so.1 or a Vulkan driver",
						      "libcuda.so.1", "libamdhip64.so" };
	char reason[160];
	unsigned int api;

	for (api = GMT_API_VK; api < GMT_API_NR; api++) {
		if (g->attached[api])
			continue;
		snprintf(reason, sizeof(reason),
			 "no %s in the target or on this system; one loaded later is attached "
			 "then",
			 libs[api]);
		emit_probe(g, GMT_PROBE_SKIPPED, names[api], gpufuncs__api_name(api), reason);
	}
}

struct linkset *gpulib__links(struct gpulib *g)
{
	return g ? &g->links : NULL;
}

void gpulib__free(struct gpulib *g)
{
	if (!g)
		return;
	while (g->nr_pending) {
		struct pending *d = &g->pending[--g->nr_pending];

		kill(d->child, SIGKILL);
		waitpid(d->child, NULL, 0);
		close(d->out);
		close(d->lib);
	}
	free(g->pending);
	while (g->nr_early)
		free(g->early[--g->nr_early].answer);
	free(g->early);
	if (g->ep >= 0)
		close(g->ep);
	linkset__destroy((struct linkset *[]){ &g->links }, 1);
	free(g->libs);
	free(g);
}
