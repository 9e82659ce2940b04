/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The event stream, shared by BPF and user space and stored as-is in trace
 * files: fixed-width types only (the includer provides __u8..__s64), little
 * endian, no pointers. Add fields at the end of a record; readers accept
 * records longer than they know. */
#ifndef GMT_EVENTS_H
#define GMT_EVENTS_H

#define GMT_COMM_LEN 16
#define GMT_MAX_STACK 32
#define GMT_PATH_LEN 256

enum gmt_type {
	GMT_EV_SESSION = 1, /* user: tool, kernel, host, options, target */
	GMT_EV_PROBE = 2,   /* user: one source attached or skipped, and why */
	GMT_EV_PROC = 3,    /* user: process metadata at attach */
	GMT_EV_EXEC = 4,
	GMT_EV_FORK = 5, /* new thread or child process of a target */
	GMT_EV_EXIT = 6,
	GMT_EV_RSS = 7,	   /* kmem:rss_stat, one member */
	GMT_EV_SAMPLE = 8, /* user: /proc/PID/status truth counters */
	GMT_EV_FAULTS = 9, /* user: cumulative page faults aggregated in BPF */
	GMT_EV_MMAP = 10,
	GMT_EV_MUNMAP = 11,
	GMT_EV_MREMAP = 12,
	GMT_EV_BRK = 13,
	GMT_EV_LOST = 14,	 /* user: cumulative failed ring-buffer reserves */
	GMT_EV_STACK = 15,	 /* user: stack id -> symbolized frames */
	GMT_EV_END = 16,	 /* user: why tracing stopped */
	GMT_EV_GPU_CALL = 17,	 /* a GPU API allocation call, free, map or query */
	GMT_EV_GPU_DEVICE = 18,	 /* user: a device's memory types and heaps */
	GMT_EV_BO = 19,		 /* a kernel GPU buffer object created, moved or freed */
	GMT_EV_DRM_FDINFO = 20,	 /* user: one DRM client's fdinfo memory counters */
	GMT_EV_HTTP = 21,	 /* a request line or a response's start or end */
	GMT_EV_DECODE = 22,	 /* llama_decode/llama_encode or an image encode returned */
	GMT_EV_MEMINFO = 23,	 /* user: the host's memory (/proc/meminfo), each interval */
	GMT_EV_NVML = 24,	 /* user: NVML's account of one GPU and the process on it */
	GMT_EV_PROC_ENV = 25,	 /* user: the target's settings from its environment */
	GMT_EV_MAP_RSS = 26,	 /* user: resident bytes of anonymous mappings (smaps) */
	GMT_EV_USTACK = 27,	 /* registers and a slice of the user stack, to unwind */
	GMT_EV_TOUCH = 28,	 /* a sampled first touch of anonymous memory */
	GMT_EV_CGROUP = 29,	 /* user: the process's cgroup (v2), at attach */
	GMT_EV_MEM_LIMIT = 30,	 /* user: its cgroup's memory limit and use, each interval */
	GMT_EV_LLAMA_STATE = 31, /* llama.cpp copied a sequence's state out or in */
	GMT_EV_SIGNAL = 32,	 /* a fatal signal delivered to a target's thread */
	GMT_EV_TIMINGS = 33,	 /* a response's own figures: llama-server's timings */
	GMT_EV_JOIN = 34,	 /* a process joined the traced set: how, and when it started */
	GMT_EV_MODULE = 35,	 /* user: a code file stacks name: its build id */
	GMT_EV_PROC_STAT = 36,	 /* user: what the process waited on, each interval */
	GMT_EV_HOST_STAT = 37, /* user: the host's paging, pressure and run queue, each interval */
	GMT_EV_FILE_RSS = 38,  /* user: the largest files it maps, and what of each is resident */
	GMT_EV_MAX,
};

/* event sources, for drop accounting */
enum gmt_source {
	GMT_SRC_PROC = 0,
	GMT_SRC_RSS = 1,
	GMT_SRC_FAULT = 2,
	GMT_SRC_MMAP = 3,
	GMT_SRC_GPU = 4,
	GMT_SRC_BO = 5,
	GMT_SRC_HTTP = 6,
	GMT_SRC_DECODE = 7,
	GMT_SRC_NR = 8,
};

struct gmt_hdr {
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	__u32 pid;   /* tgid */
	__u32 tid;
	__u16 type;
	__u16 len; /* whole record, header included */
	__u32 cpu; /* ~0 for events made in user space */
};

#define GMT_SESSION_FOLLOW 0x1
#define GMT_SESSION_ALL_BOS 0x2 /* -a */
#define GMT_SESSION_WATCH 0x4	/* --watch: every GPU process, found as they come */

struct gmt_session {
	struct gmt_hdr hdr;
	__u64 start_realtime_ns;
	__u32 interval_ms;
	__u32 flags;
	__u32 target_pid;
	__u32 page_size;
	char tool_version[16];
	char kernel[65];
	char host[65];
	char arch[16];
	__u16 cmdline_len;
	char cmdline[]; /* target command line, arguments separated by spaces */
};

enum gmt_probe_status {
	GMT_PROBE_ATTACHED = 1,
	GMT_PROBE_SKIPPED = 2, /* not available here: reason says why */
	GMT_PROBE_FAILED = 3,  /* available but attach failed */
};

struct gmt_probe {
	struct gmt_hdr hdr;
	__u32 status;
	__u32 pad;
	char name[48]; /* kmem:rss_stat, syscalls:mmap, ... */
	char what[64]; /* what it gives the report */
	char reason[160];
};

struct gmt_proc {
	struct gmt_hdr hdr;
	__u32 ppid;
	__u32 uid;
	char comm[GMT_COMM_LEN];
	char exe[GMT_PATH_LEN];
	__u16 cmdline_len;
	char cmdline[];
};

/* The process's cgroup v2 path ("/system.slice/llama.service"), as
 * /proc/PID/cgroup gives it at attach: where a container's processes are
 * told apart (the path names the container: a v1 hierarchy's where only it
 * does). "/" for none. Then what only the host can tell at trace time:
 * its pid in its own pid namespace, and its pod's name and namespace. */
enum gmt_pod_from {
	GMT_POD_FROM_NONE = 0,
	GMT_POD_FROM_NODE = 1, /* the kubelet's /var/log/pods/<ns>_<name>_<uid> */
	GMT_POD_FROM_ENV = 2,  /* its environment: POD_NAME, POD_NAMESPACE, HOSTNAME */
};

#define GMT_POD_NAME_LEN 256 /* a DNS subdomain: 253 */
#define GMT_POD_NS_LEN 64    /* a DNS label: 63 */

struct gmt_cgroup {
	struct gmt_hdr hdr;
	char path[GMT_PATH_LEN];
	/* from here on, absent in records of before (hdr.len says) */
	__u32 ns_pid;	/* innermost NSpid; 0: the same as the host's, or unknown */
	__u32 pod_from; /* enum gmt_pod_from, of pod and pod_ns */
	char pod[GMT_POD_NAME_LEN];
	char pod_ns[GMT_POD_NS_LEN];
};

/* The variables of the target's environment that set how llama.cpp uses
 * memory (LLAMA_ARG_CACHE_RAM, GGML_CUDA_DISABLE_GRAPHS, ...: a fixed list,
 * nothing else, since an environment holds secrets), as "NAME=value\0"... */
struct gmt_proc_env {
	struct gmt_hdr hdr;
	__u32 vars_len;
	__u32 pad;
	char vars[];
};

/* Release builds keep no frame pointers, but every binary keeps its call
 * frame information (.eh_frame). At a GPU allocation in a process the
 * tracer started, until its first HTTP request, the registers and up to
 * GMT_USTACK_BYTES of the user stack from its pointer go out just before
 * the record they belong to (the next one from the same thread); user space
 * unwinds them with libdw when the frame-pointer walk stops short, and the
 * record carries the frames found. Never recorded to a file, and never
 * taken once a request (whose bytes a stack could hold) has been read. */
#define GMT_USTACK_BYTES 61440 /* the most a record holds; see bench/results.md */
/* The registers in the architecture's DWARF numbering, so their count is
 * the architecture's: a USTACK record never goes to files (it is unwound as
 * it arrives), so the tracer and its BPF agree and no file format changes. */
#if defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
#define GMT_USTACK_REGS 33 /* x0-x30 (x29 frame pointer, x30 link register), sp, pc */
#define GMT_USTACK_SP 31
#define GMT_USTACK_PC 32
#else
#define GMT_USTACK_REGS 17 /* x86-64: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
#define GMT_USTACK_SP 7
#define GMT_USTACK_PC 16
#endif
struct gmt_ustack {
	struct gmt_hdr hdr;
	__u64 regs[GMT_USTACK_REGS];
	__u32 size; /* bytes of data read: 0 when the read failed */
	__u32 pad;
	__u8 data[GMT_USTACK_BYTES];
};

/* At a sampled fault the slice is shorter, and taken at any time: every
 * word that is neither an address in the thread's stack nor one in the
 * process's code (GMT_CODE_RANGES, from user space) is zeroed before it
 * leaves the kernel, so no data the program handles goes out. The record
 * is then offsetof(data) + GMT_TOUCH_BYTES long. */
#define GMT_TOUCH_BYTES 16384
#define GMT_STACK_SPAN (16ull << 20) /* above sp: addresses of the same stack */
#define GMT_CODE_RANGES 64
struct gmt_code_ranges {
	__u32 nr; /* sorted, disjoint [lo, hi) */
	__u32 pad;
	__u64 lo[GMT_CODE_RANGES], hi[GMT_CODE_RANGES];
};

/* One not-present user fault on anonymous memory in about every `period`
 * (random gaps): first touches, which make resident memory grow. `bytes`
 * is what the sample stands for (period x page). Like gmt_mmap, BPF's
 * frame-pointer ips become a stack_id before the stream. */
struct gmt_touch {
	struct gmt_hdr hdr;
	__u64 addr;
	__u64 bytes;
	__u32 stack_id; /* 0: none */
	__u32 nr_ips;
	__u64 ips[];
};

/* A mapping's length is address space: only what was touched is memory.
 * Every tenth interval, and at the end, /proc/PID/smaps's anonymous areas,
 * in address order, up to GMT_MAP_RSS_MAX a record; one snapshot's records
 * share a timestamp. */
#define GMT_MAP_RSS_MAX 256
struct gmt_map_rss_area {
	__u64 start, end, rss;
};

struct gmt_map_rss {
	struct gmt_hdr hdr;
	__u32 nr;
	__u32 pad;
	struct gmt_map_rss_area v[];
};

struct gmt_exec {
	struct gmt_hdr hdr;
	__u32 old_pid;
	__u32 pad;
	char comm[GMT_COMM_LEN];
	char filename[GMT_PATH_LEN];
};

/* how a process came to be traced */
enum gmt_join_how {
	GMT_JOIN_EXEC = 1,    /* BPF, --watch: it exec'd a name of --comm */
	GMT_JOIN_MAP = 2,     /* BPF, --watch: it mapped a GPU library or device node */
	GMT_JOIN_SCAN = 3,    /* --watch's /proc scan: running when tracing began */
	GMT_JOIN_LATE = 4,    /* --watch's /proc scan later, a safety net: found late */
	GMT_JOIN_PID = 5,     /* -p */
	GMT_JOIN_COMMAND = 6, /* -- CMD: started by the tracer */
};

/* hdr.ts_ns: when tracing of the process began. From BPF (EXEC, MAP) at
 * the exec or the mapping itself, before the process runs on; from user
 * space (the others) when it joined. */
struct gmt_join {
	struct gmt_hdr hdr;
	__u64 start_ns; /* the process's start (CLOCK_MONOTONIC); 0: not known */
	__u32 how;	/* enum gmt_join_how */
	__u32 pad;
	char comm[GMT_COMM_LEN];
	char what[32]; /* MAP: the file's name ("libvulkan.so.1", "renderD128") */
};

struct gmt_fork {
	struct gmt_hdr hdr; /* pid/tid: the parent */
	__u32 child_pid;
	__u32 child_tid;
	__u32 is_thread;
	__u32 followed; /* child process added to the targets (-f) */
	char comm[GMT_COMM_LEN];
};

struct gmt_exit {
	struct gmt_hdr hdr;
	__s32 exit_code;  /* as wait(2) reports it */
	__u32 group_dead; /* last thread: the process is gone */
	char comm[GMT_COMM_LEN];
};

/* signal:signal_deliver of a signal whose action is the default and
 * kills (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS), in the
 * thread it is delivered to: for a fault, the faulting thread. A USTACK
 * record of that thread comes just before it; stack_id is set in user
 * space (0: none). addr: the faulting address of SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE (siginfo's si_addr), else 0. */
struct gmt_signal {
	struct gmt_hdr hdr;
	__s32 sig;
	__s32 code; /* si_code: SEGV_MAPERR, SI_TKILL, ... */
	__u64 addr;
	__u32 stack_id;
	__u32 sender; /* the sending process for a signal sent (SI_USER, SI_TKILL), else 0 */
	char comm[GMT_COMM_LEN]; /* the thread's name */
};

/* kmem:rss_stat members */
enum gmt_rss_member {
	GMT_RSS_FILE = 0,
	GMT_RSS_ANON = 1,
	GMT_RSS_SWAP = 2,
	GMT_RSS_SHMEM = 3,
	GMT_RSS_NR = 4,
};

struct gmt_rss {
	struct gmt_hdr hdr;
	__u32 member;
	__u32 pad;
	__s64 bytes;
};

/* bits of gmt_sample.valid */
enum gmt_sample_field {
	GMT_S_VMRSS,
	GMT_S_RSSANON,
	GMT_S_RSSFILE,
	GMT_S_RSSSHMEM,
	GMT_S_VMSWAP,
	GMT_S_VMSIZE,
	GMT_S_VMHWM,
	GMT_S_VMDATA,
	GMT_S_NR,
};

struct gmt_sample {
	struct gmt_hdr hdr;
	__u64 kb[GMT_S_NR]; /* /proc/PID/status values, KiB */
	__u32 valid;	    /* bit per field that was present */
	__u32 threads;
};

enum gmt_fault_class {
	GMT_FAULT_ANON = 0,
	GMT_FAULT_FILE = 1,
	GMT_FAULT_DEVICE = 2, /* VM_IO/VM_PFNMAP or a character device: GPU mappings */
	GMT_FAULT_OTHER = 3,  /* no VMA, or the class could not be told */
	GMT_FAULT_NR = 4,
};

/* not a record: the per-CPU map value the fault programs count into */
struct gmt_fault_counts {
	__u64 total;		      /* every user fault */
	__u64 cls[GMT_FAULT_OTHER];   /* those handle_mm_fault resolved, by class */
	__u64 major[GMT_FAULT_OTHER]; /* of those, VM_FAULT_MAJOR: read from disk or swap */
};

struct gmt_faults {
	struct gmt_hdr hdr;
	__u64 count[GMT_FAULT_NR]; /* cumulative since attach */
	/* from here on, absent in records of before (hdr.len says): of those
	 * handle_mm_fault resolved, the major ones (read from the disk or
	 * swap), by class; all 0 where the fexit is refused */
	__u64 major[GMT_FAULT_NR];
};

enum gmt_fd_class {
	GMT_FD_ANON = 0,
	GMT_FD_FILE = 1,
	GMT_FD_DEVICE = 2,
	GMT_FD_OTHER = 3,
};

/* From BPF, large anonymous mappings carry raw user stack addresses
 * (nr_ips > 0); user space turns them into a stack_id and a GMT_EV_STACK
 * record before the event enters the stream, so recorded events have
 * nr_ips == 0. */
struct gmt_mmap {
	struct gmt_hdr hdr;
	__u64 addr; /* result: the mapping, or -errno */
	__u64 len;
	__u64 off;
	__u32 prot;
	__u32 flags;
	__s32 fd;
	__u16 fd_class;
	__u16 nr_ips;
	__u32 stack_id; /* 0: none */
	__u32 pad;
	__u64 ips[];
};

struct gmt_munmap {
	struct gmt_hdr hdr;
	__u64 addr;
	__u64 len;
	__s64 ret;
};

struct gmt_mremap {
	struct gmt_hdr hdr;
	__u64 old_addr;
	__u64 old_len;
	__u64 new_len;
	__u64 new_addr; /* result, or -errno */
	__u32 flags;
	__u32 pad;
};

struct gmt_brk {
	struct gmt_hdr hdr;
	__u64 req;
	__u64 ret; /* the program break after the call */
};

struct gmt_lost {
	struct gmt_hdr hdr;
	__u64 count[GMT_SRC_NR]; /* cumulative since attach */
};

/* A code file that STACK records name (by its file name, as their frames
 * do), sent once before the first stack that names it: its GNU build id and
 * its executable segment, so a frame with no symbol (module + file offset)
 * can be symbolized again elsewhere (pprof, addr2line) from the right
 * build. */
struct gmt_module {
	struct gmt_hdr hdr;
	char name[128];	    /* as a frame's module: the file name */
	char build_id[128]; /* lowercase hex; empty: the file has none */
	__u64 text_off;	    /* the executable PT_LOAD: its file offset, */
	__u64 text_vaddr;   /* virtual address */
	__u64 text_size;    /* and file size; 0: not known */
};

/* frames[] then, for each frame, "symbol\0module\0" */
struct gmt_stack_frame {
	__u64 ip;
	__u64 sym_off; /* ip - symbol start; ip - module base when no symbol */
};

struct gmt_stack {
	struct gmt_hdr hdr;
	__u32 stack_id;
	__u16 nr_frames;
	__u16 pad;
	struct gmt_stack_frame frames[];
};

enum gmt_end_reason {
	GMT_END_TARGET_EXIT = 1,
	GMT_END_SIGNAL = 2,
	GMT_END_DURATION = 3,
	GMT_END_ERROR = 4,
};

struct gmt_end {
	struct gmt_hdr hdr;
	__u32 reason;
	__u32 pad;
};

enum gmt_gpu_api {
	GMT_API_VK = 1,
	GMT_API_CU = 2,
	GMT_API_HIP = 3,
	GMT_API_NR = 4,
};

enum gmt_gpu_op {
	GMT_GOP_ALLOC = 1, /* makes `handle` live with `size` bytes */
	GMT_GOP_FREE = 2,  /* ends `handle` */
	GMT_GOP_MAP = 3,   /* vkMapMemory: handle mapped at aux */
	GMT_GOP_UNMAP = 4,
	GMT_GOP_INFO = 5, /* cuMemGetInfo: aux free, aux2 total */
	GMT_GOP_ATTR = 6, /* cuDeviceGetAttribute: handle device, aux2 attribute, aux value */
};

/* CU_DEVICE_ATTRIBUTE_INTEGRATED: the one attribute recorded (1: the GPU's
 * memory is the host's RAM, Jetson, GB10; 0: its own) */
#define GMT_CU_ATTR_INTEGRATED 18

enum gmt_gpu_kind {
	GMT_GK_DEVICE = 0,     /* device memory (Vulkan: a device-local type) */
	GMT_GK_HOST = 1,       /* pinned host memory (Vulkan: a host-only type) */
	GMT_GK_MANAGED = 2,    /* unified / managed */
	GMT_GK_VMM_PHYS = 3,   /* cuMemCreate: physical memory, no address */
	GMT_GK_VMM_MAP = 4,    /* cuMemMap: physical memory mapped at an address */
	GMT_GK_VA_RESERVE = 5, /* reserved address range: no memory */
	GMT_GK_GRAPH_EXEC = 6, /* an instantiated graph: size unknown */
	GMT_GK_VK_MEMORY = 7,  /* Vulkan: device or host by the memory type */
	GMT_GK_NR = 8,
};

/* How the BPF return program reads a call's arguments (x86-64 registers
 * saved at entry, a0..a5). Travels in the uprobe cookie with the rest. */
enum gmt_gpu_shape {
	GMT_SH_OUT_SIZE = 1, /* *a0 = handle, a1 = size: cuMemAlloc, hipMalloc, ... */
	GMT_SH_PITCH = 2,    /* *a0 = handle, *a1 = pitch, a3 = height: cuMemAllocPitch */
	GMT_SH_HANDLE = 3,   /* a0 = handle: frees, releases, graph exec destroy */
	GMT_SH_PTR_SIZE = 4, /* a0 = address, a1 = size: cuMemUnmap, cuMemAddressFree */
	GMT_SH_MEMMAP = 5,   /* a0 = address, a1 = size, a3 = physical handle: cuMemMap */
	GMT_SH_MEMINFO = 6,  /* *a0 = free, *a1 = total: cuMemGetInfo */
	GMT_SH_VK_ALLOC = 7, /* a0 = device, a1 = VkMemoryAllocateInfo *, *a3 = handle */
	GMT_SH_VK_FREE = 8,  /* a0 = device, a1 = memory (void) */
	GMT_SH_VK_MAP = 9,   /* a1 = memory, a2 = offset, a3 = size, *a5 = pointer */
	GMT_SH_OUT = 10,     /* *a0 = handle: graph instantiation */
	GMT_SH_DEV_ATTR =
		11, /* *a0 = int value, a1 = attribute, a2 = device: cuDeviceGetAttribute */
};

/* cookie = func | shape << 16 | op << 24 | kind << 32 | api << 40 */
#define GMT_COOKIE(api, func, shape, op, kind)                                            \
	((__u64)(func) | (__u64)(shape) << 16 | (__u64)(op) << 24 | (__u64)(kind) << 32 | \
	 (__u64)(api) << 40)
#define GMT_COOKIE_FUNC(c) ((__u32)((c)&0xffff))
#define GMT_COOKIE_SHAPE(c) ((__u32)((c) >> 16 & 0xff))
#define GMT_COOKIE_OP(c) ((__u32)((c) >> 24 & 0xff))
#define GMT_COOKIE_KIND(c) ((__u32)((c) >> 32 & 0xff))
#define GMT_COOKIE_API(c) ((__u32)((c) >> 40 & 0xff))

/* bits of gmt_gpu_call.flags, from vkAllocateMemory's pNext chain */
#define GMT_GF_DEDICATED_IMAGE 0x1
#define GMT_GF_DEDICATED_BUFFER 0x2
#define GMT_GF_IMPORT_FD 0x4
#define GMT_GF_IMPORT_HOST 0x8
#define GMT_GF_EXPORT 0x10
#define GMT_GF_DEVICE_ADDRESS 0x20
#define GMT_GF_IMPORT_OTHER 0x40

/* One call, made at its return (the outermost one when calls nest: the
 * Vulkan loader calling the driver, a runtime calling libcuda). Like
 * gmt_mmap, raw ips from BPF become a stack_id before the stream. */
struct gmt_gpu_call {
	struct gmt_hdr hdr;
	__u8 api;  /* enum gmt_gpu_api */
	__u8 op;   /* enum gmt_gpu_op */
	__u8 kind; /* enum gmt_gpu_kind */
	__u8 pad0;
	__u16 func; /* index into the tool's function table (gpulib.c) */
	__u16 nr_ips;
	__s32 result;	/* VkResult, CUresult or hipError_t; 0 for void calls */
	__u32 mem_type; /* Vulkan memoryTypeIndex; ~0 elsewhere */
	__u32 flags;	/* GMT_GF_* */
	__u32 stack_id;
	__u64 size;
	__u64 handle; /* pointer, VkDeviceMemory, generic handle or graph exec */
	__u64 aux;    /* mapped pointer, cuMemMap's physical handle, free bytes */
	__u64 aux2;   /* VkDevice, total bytes */
	__u64 dur_ns; /* entry to return */
	__u64 ips[];
};

#define GMT_MAX_MEM_TYPES 32
#define GMT_MAX_MEM_HEAPS 16

struct gmt_gpu_mem_type {
	__u32 flags; /* VkMemoryPropertyFlags */
	__u32 heap;
};

struct gmt_gpu_mem_heap {
	__u64 size;
	__u32 flags; /* VkMemoryHeapFlags */
	__u32 pad;
};

/* what the tracer learned by asking the same driver the target uses */
struct gmt_gpu_device {
	struct gmt_hdr hdr;
	__u32 api;
	__u32 index; /* physical device index in the driver */
	__u32 vendor_id, device_id;
	__u32 nr_types, nr_heaps;
	char name[64];
	char driver[64]; /* library file name */
	struct gmt_gpu_mem_type types[GMT_MAX_MEM_TYPES];
	struct gmt_gpu_mem_heap heaps[GMT_MAX_MEM_HEAPS];
	/* from here on, absent in records of before (hdr.len says) */
	__u32 device_type; /* enum gmt_gpu_type */
	__u32 pad;
};

/* what kind of device: VkPhysicalDeviceType + 1, so that 0 is "not said" */
enum gmt_gpu_type {
	GMT_GPU_TYPE_UNSAID = 0,
	GMT_GPU_TYPE_OTHER = 1,
	GMT_GPU_TYPE_INTEGRATED = 2, /* shares the host's RAM: Apple, APUs, iGPUs, Jetson */
	GMT_GPU_TYPE_DISCRETE = 3,
	GMT_GPU_TYPE_VIRTUAL = 4,
	GMT_GPU_TYPE_CPU = 5, /* a driver on the CPU: lavapipe, llvmpipe */
};

enum gmt_bo_op {
	GMT_BO_CREATE = 1,
	GMT_BO_MOVE = 2,
	GMT_BO_FREE = 3,
	GMT_BO_DOMAINS = 4, /* amdgpu's placement wishes for a buffer just made */
};

/* amdgpu GEM domains (AMDGPU_GEM_DOMAIN_*) */
#define GMT_AMDGPU_DOMAIN_CPU 0x1
#define GMT_AMDGPU_DOMAIN_GTT 0x2
#define GMT_AMDGPU_DOMAIN_VRAM 0x4

/* TTM placements (ttm_resource.mem_type); drivers number theirs from 3 */
#define GMT_PL_NONE (-1) /* no resource: before the first placement */
#define GMT_PL_SYSTEM 0
#define GMT_PL_TT 1 /* GTT: system memory the GPU reaches */
#define GMT_PL_VRAM 2

/* hdr.pid/tid: the task current at the event: for a move, the evictor */
struct gmt_bo {
	struct gmt_hdr hdr;
	__u64 bo; /* kernel address of the ttm_buffer_object: an id */
	__u64 size;
	__u32 op;
	__s32 from, to;		 /* GMT_PL_*, or a driver's own */
	__u32 evict;		 /* TTM moved it to make room */
	__u32 owner;		 /* tgid that created it; 0 when made before tracing */
	__u32 evict_id;		 /* moves of one eviction (TTM may bounce through TT) */
	char comm[GMT_COMM_LEN]; /* the current task's */
	__u32 prefer, allowed;	 /* GMT_BO_DOMAINS: amdgpu domains */
	__u32 flags;		 /* GMT_BOF_* */
	__u32 amdgpu_flags;	 /* GMT_BO_DOMAINS: AMDGPU_GEM_CREATE_* */
};

#define GMT_BOF_AMDGPU 0x1 /* an amdgpu buffer: placements from 3 are amdgpu's */

/* bits of gmt_drm_fdinfo.valid: which counters the driver printed */
enum gmt_drm_field {
	GMT_DRM_VRAM_TOTAL,
	GMT_DRM_VRAM_RESIDENT,
	GMT_DRM_GTT_TOTAL,
	GMT_DRM_GTT_RESIDENT,
	GMT_DRM_CPU_TOTAL, /* system memory: amdgpu's "cpu", others' "system"/"memory" */
	GMT_DRM_CPU_RESIDENT,
	GMT_DRM_EVICTED_VRAM, /* amd-evicted-vram */
	GMT_DRM_NR,
};

/* /proc/PID/fdinfo of a DRM file: the driver's own account of the memory
 * of one client (a DRM file; several fds may share it) */
struct gmt_drm_fdinfo {
	struct gmt_hdr hdr;
	__u64 client_id;
	__u64 bytes[GMT_DRM_NR];
	__u32 valid; /* bit per field printed */
	__u32 fd;
	char driver[32];
};

enum gmt_http_kind {
	GMT_HTTP_REQUEST = 1,	 /* a request line arrived: method, path */
	GMT_HTTP_RESP_BEGIN = 2, /* the status line went out: status */
	GMT_HTTP_RESP_END = 3,	 /* the response is complete (how: end) */
	GMT_HTTP_TLS = 4,	 /* the connection speaks TLS: nothing to read */
	GMT_HTTP_CLOSE = 5,	 /* the connection closed */
	GMT_HTTP_GONE = 6,	 /* the client went away (end of file or reset on
				  * a read) with a request not answered in full */
};

enum gmt_http_end {
	GMT_HTTP_END_LENGTH = 1,  /* Content-Length bytes sent */
	GMT_HTTP_END_CHUNKED = 2, /* the chunked terminator */
	GMT_HTTP_END_CLOSE = 3,	  /* the connection closed */
	GMT_HTTP_END_NEXT = 4,	  /* the next response began */
};

/* Only the request line's method and path (up to '?': no query) and the
 * status code leave the kernel: never a header or body byte. */
struct gmt_http {
	struct gmt_hdr hdr;
	__u64 conn;	 /* connection id: unique while the tracer runs */
	__u64 bytes_in;	 /* RESP_END: request bytes read on the connection */
	__u64 bytes_out; /* RESP_END: response bytes written */
	__u32 fd;
	__u16 kind;
	__u16 status; /* RESP_*: the status code */
	__u16 end;    /* RESP_END: enum gmt_http_end */
	__u16 sse;    /* the response is an event stream */
	/* the traced process whose connect() made the connection (a server's
	 * proxy to itself, a router to its child); 0: another, or unknown */
	__u32 from_pid;
	char method[8];
	char path[64];
};

/* the bits of gmt_timings.have */
enum gmt_timings_have {
	GMT_TM_PROMPT_N = 1,
	GMT_TM_PREDICTED_N = 2,
	GMT_TM_CACHE_N = 4,
	GMT_TM_PROMPT_MS = 8,
	GMT_TM_PREDICTED_MS = 16,
	GMT_TM_INDEX = 32,
};

/* A response's `timings` object, as llama-server wrote it in the body (a
 * stream's: in an event; several tasks: one each): the digits of these
 * keys, and of the task's "index" before it, are the only body bytes read
 * (bpf/timings_parse.bpf.h), and only their values leave the kernel. */
struct gmt_timings {
	struct gmt_hdr hdr;
	__u64 conn;	    /* the connection, as gmt_http's */
	__u64 prompt_us;    /* prompt_ms, to the microsecond */
	__u64 predicted_us; /* predicted_ms, likewise */
	__u32 fd;
	__u32 index; /* the task's, when GMT_TM_INDEX */
	__u32 prompt_n, predicted_n, cache_n;
	__u32 have; /* enum gmt_timings_have */
};

enum gmt_decode_kind {
	GMT_DEC_DECODE = 1, /* llama_decode */
	GMT_DEC_ENCODE = 2, /* llama_encode */
	GMT_DEC_IMAGE = 3,  /* mtmd_encode_chunk or mtmd_batch_encode: an image or audio chunk */
	GMT_DEC_IMAGE_EVAL = 4, /* mtmd_helper_eval_chunk_single or _decode_image_chunk */
	GMT_DEC_SYNC = 5,	/* llama_synchronize, at its return; in
				 * llama-server at its entry (dur_ns 0) */
	GMT_DEC_STATE_SAVE = 6, /* llama_state_seq_get_data_ext (GMT_EV_LLAMA_STATE) */
	GMT_DEC_STATE_LOAD = 7, /* llama_state_seq_set_data_ext (GMT_EV_LLAMA_STATE) */
};

/* llama_state_seq_get_data_ext(ctx, dst, size, seq_id, flags), and its
 * set_data_ext, at their entry. llama-server copies a slot's state out
 * once for each prompt-cache entry it keeps (flags 0) and for each context
 * checkpoint (GMT_LLAMA_STATE_PARTIAL): size is what that entry holds, by
 * the server's own count; it copies one back in when a cached prompt is
 * reused. Only the sizes leave the kernel, never the state. */
#define GMT_LLAMA_STATE_PARTIAL 1 /* LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY */
struct gmt_llama_state {
	struct gmt_hdr hdr;
	__u64 size;
	__s32 seq;
	__u32 flags; /* LLAMA_STATE_SEQ_FLAGS_* */
	__u32 kind;  /* GMT_DEC_STATE_SAVE or _LOAD */
	__u32 pad;
};

#define GMT_DECODE_SEQS 16 /* sequences told apart in one batch */

#define GMT_DSEQ_SHARED 0x1 /* some tokens were in several sequences: counted in the first */
#define GMT_DSEQ_MERGED 0x2 /* several sequence ids fell on this entry: seq is the first */

/* the tokens of one sequence in a batch (llama-server: one slot) */
struct gmt_decode_seq {
	__s32 seq; /* llama_seq_id */
	__u32 n_tokens;
	__u32 n_outputs;	/* tokens whose logits were asked for */
	__s32 pos_min, pos_max; /* -1: the batch gave no positions */
	__u32 flags;		/* GMT_DSEQ_* */
};

/* one llama.cpp call, at its return; decodes and encodes carry their
 * batch's tokens by sequence (recordings before 0.2 end at nr_seqs), then,
 * where len has room, a __u64: the llama_context it ran on (speculative
 * decoding runs a draft model's on a second one; 0: no batch call) */
struct gmt_decode {
	struct gmt_hdr hdr;
	__u64 dur_ns;
	__u32 kind;
	__s32 ret;	/* 0 ok; 1 no KV slot; 2 aborted; < 0 error */
	__u32 n_tokens; /* tokens in the batch (decode, encode) */
	__u32 embd;	/* the batch carries embeddings (an image) */
	__u32 nr_seqs;
	__u32 scanned; /* tokens read by sequence: fewer than n_tokens when cut */
	struct gmt_decode_seq seqs[];
};

/* The memory limit the process's cgroups set, each interval: of the
 * cgroup and its ancestors, the one with the least room left (a pod's limit
 * binds a container that has none of its own). limit is the lower of its
 * hard limit and, on cgroup v2, memory.high (past which the kernel
 * throttles and reclaims); used is that cgroup's usage. */
#define GMT_MEM_LIMIT_V1_HARD 1 /* memory.limit_in_bytes */
#define GMT_MEM_LIMIT_V2_MAX 2	/* memory.max */
#define GMT_MEM_LIMIT_V2_HIGH 3 /* memory.high */
#define GMT_MEM_NO_LIMIT (1ull << 62)
struct gmt_mem_limit {
	struct gmt_hdr hdr;
	__u64 limit;
	__u64 used;
	/* what more the cgroups let it put in swap, past the limit on RAM (v2
	 * memory.swap.max, v1 memory.memsw.*); GMT_MEM_NO_LIMIT: the host's swap */
	__u64 swap_room;
	__u32 file; /* GMT_MEM_LIMIT_* */
	__u32 pad;
	char path[GMT_PATH_LEN]; /* the binding cgroup, as /proc/PID/cgroup names it */
};

/* what the host has left: projections of growth end here */
struct gmt_meminfo {
	struct gmt_hdr hdr;
	__u64 total_kb;
	__u64 available_kb; /* MemAvailable */
	__u64 swap_free_kb;
};

#define GMT_NVML_NO_PROC (~0ull) /* the process is not on this device */

/* nvmlDeviceGetMemoryInfo and the process's usedGpuMemory, from the
 * driver: memory the CUDA API calls do not show (graphs, contexts, pools)
 * is in `used` */
struct gmt_nvml {
	struct gmt_hdr hdr; /* pid: the process sampled */
	__u32 index;	    /* NVML device index */
	__u32 pad;
	__u64 used;  /* the process's device memory; GMT_NVML_NO_PROC */
	__u64 total; /* the device */
	__u64 free;
	char name[64];
	/* from here on, absent in records of before (hdr.len says): how fast
	 * it ran, and why not faster (0 where NVML did not say) */
	__u32 sm_mhz, sm_max_mhz;    /* its SM clock, and the most it may reach */
	__u64 clock_reasons;	     /* nvmlClocksEventReason* bits: why the clock is held down */
	__u32 temp_c, power_mw;	     /* the GPU's temperature, its power draw */
	__u32 util_gpu, util_memory; /* percent of the last sample period busy */
	__u32 clocks_valid;	     /* GMT_NVML_* bits: which of these it gave */
	__u32 pad2;
};
#define GMT_NVML_CLOCK 0x1
#define GMT_NVML_REASONS 0x2
#define GMT_NVML_TEMP 0x4
#define GMT_NVML_POWER 0x8
#define GMT_NVML_UTIL 0x10
/* nvmlClocksEventReason bits that slow a busy GPU down */
#define GMT_NVML_SW_POWER_CAP 0x4
#define GMT_NVML_HW_SLOWDOWN 0x8
#define GMT_NVML_SW_THERMAL 0x20
#define GMT_NVML_HW_THERMAL 0x40
#define GMT_NVML_HW_POWER_BRAKE 0x80

/* What the process waited on, each interval, from the kernel's own
 * counters (all cumulative but the quota): why a request was slow. */
#define GMT_PSTAT_SCHED 0x1	 /* run_ns, run_delay_ns: /proc/PID/task/TID/schedstat */
#define GMT_PSTAT_CPU_STAT 0x2	 /* its CPU cgroup's cpu.stat: periods, throttling */
#define GMT_PSTAT_PSI 0x4	 /* psi_*: its cgroup's *.pressure (v2), else the host's */
#define GMT_PSTAT_PSI_CGROUP 0x8 /* psi_* are its cgroup's, not the host's */
#define GMT_PSTAT_CPU_V2 0x10	 /* the CPU cgroup is v2's (cpu.max), not v1's */
#define GMT_PSTAT_IO 0x20	 /* read_bytes: /proc/PID/io */
#define GMT_PSTAT_REFAULTS 0x40	 /* refault_*: its memory cgroup's memory.stat */
struct gmt_proc_stat {
	struct gmt_hdr hdr;
	__u64 minflt, majflt;	    /* /proc/PID/stat: its threads' together */
	__u64 cpu_ns;		    /* utime + stime, the same */
	__u64 run_ns, run_delay_ns; /* on a CPU, and runnable waiting for one: its live threads' */
	/* the CPU quota that binds it (of its cgroup and ancestors, the least
	 * CPUs): quota_us 0 for none; and that cgroup's cpu.stat */
	__u64 cpu_quota_us, cpu_period_us;
	__u64 nr_periods, nr_throttled, throttled_ns;
	/* stall time, "some" and "full" (PSI), microseconds */
	__u64 psi_mem_some_us, psi_mem_full_us, psi_cpu_some_us, psi_io_some_us, psi_io_full_us;
	/* what it had read from storage (its page faults' readahead too): a
	 * mapped file's pages evicted and read back count here, where a
	 * fault that finds them read ahead is no major one */
	__u64 read_bytes;
	/* of its memory cgroup (memory.stat): pages evicted, then needed again */
	__u64 refault_file, refault_anon;
	__u32 flags;	    /* GMT_PSTAT_* */
	__u32 threads_read; /* threads whose schedstat was read */
	__u32 cpus_allowed; /* CPUs its main thread may run on (affinity, cpuset) */
	__u32 pad;
	char cpu_cgroup[GMT_PATH_LEN]; /* the cgroup of the quota; "" none */
};

/* the host's paging and load, each interval (cumulative but the last two) */
#define GMT_HSTAT_PSI 0x1 /* /proc/pressure was read */
struct gmt_host_stat {
	struct gmt_hdr hdr;
	__u64 pswpin, pswpout, pgmajfault; /* /proc/vmstat: pages */
	__u64 refault_file, refault_anon;  /* /proc/vmstat workingset_refault_* */
	__u64 psi_mem_some_us, psi_mem_full_us, psi_cpu_some_us, psi_io_some_us, psi_io_full_us;
	__u32 procs_running; /* /proc/loadavg: runnable now, the host's (less the reader) */
	__u32 cpus_online;
	__u32 flags; /* GMT_HSTAT_* */
	__u32 pad;
};

/* The files a process maps, largest first (at most GMT_FILE_RSS_MAX), and
 * how much of each is resident, from /proc/PID/smaps: a model's weights
 * mapped from their file are read back from the disk at each token once
 * the page cache lost them. Sent with the anonymous areas' snapshot. */
#define GMT_FILE_RSS_MAX 8
#define GMT_FILE_NAME_LEN 120
struct gmt_file_rss_one {
	__u64 size; /* mapped, of all its mappings */
	__u64 rss;  /* resident of that */
	__u64 dev;  /* major << 32 | minor */
	__u64 ino;
	__u32 flags; /* 1: a mapping of it is executable (code) */
	__u32 pad;
	char name[GMT_FILE_NAME_LEN]; /* its path's last GMT_FILE_NAME_LEN - 1 bytes */
};

struct gmt_file_rss {
	struct gmt_hdr hdr;
	__u32 nr;
	__u32 pad;
	struct gmt_file_rss_one v[];
};

#endif /* GMT_EVENTS_H */
