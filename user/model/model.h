/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The state the report reads: a pure function of the event stream (no
 * clock, no /proc, no globals), so live and replayed runs agree. Readers may
 * look inside the structs below but never change them. */
#ifndef GMT_MODEL_H
#define GMT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>
#include "stream/event.h"
#include "common/container.h"

/* The model's own names for what the wire format (bpf/gmt_events.h)
 * numbers. model*.c read each record once and keep these; nothing above
 * the model reads the wire format (tests/layering.sh checks it). Where the
 * numbers agree with the wire's, model.c asserts it at compile time, so a
 * change of the wire format breaks the build here and nowhere else. */
#define MODEL_COMM_LEN 16
#define MODEL_PATH_LEN 256
#define MODEL_DECODE_SEQS 16 /* sequences one decode tells apart */
enum model_api { MODEL_API_NONE, MODEL_API_VK, MODEL_API_CU, MODEL_API_HIP, MODEL_API_NR };
/* what a GPU allocation is */
enum model_kind {
	MODEL_KIND_DEVICE,     /* device memory (Vulkan: a device-local type) */
	MODEL_KIND_HOST,       /* pinned host memory (Vulkan: a host-only type) */
	MODEL_KIND_MANAGED,    /* unified / managed */
	MODEL_KIND_VMM_PHYS,   /* cuMemCreate: physical memory, no address */
	MODEL_KIND_VMM_MAP,    /* cuMemMap: physical memory mapped at an address */
	MODEL_KIND_VA_RESERVE, /* reserved address range: no memory */
	MODEL_KIND_GRAPH_EXEC, /* an instantiated graph: size unknown */
	MODEL_KIND_VK_MEMORY,  /* Vulkan: device or host by the memory type */
	MODEL_KIND_NR,
};
/* the kernel's RSS counters */
enum model_rss { MODEL_RSS_FILE, MODEL_RSS_ANON, MODEL_RSS_SWAP, MODEL_RSS_SHMEM, MODEL_RSS_NR };
/* llama.cpp's own copies of a sequence's state, by its calls: in
 * llama-server whole states are prompt-cache entries, partial ones context
 * checkpoints, and loads the reuse of a cached prompt */
struct model_llama_state {
	__u64 saves, save_bytes, save_min, save_max;
	__u64 ckpts, ckpt_bytes, ckpt_max;
	__u64 loads, load_bytes;
	/* a prompt-cache entry holds its state and the checkpoints its slot
	 * made since the last one (recurrent and SWA models): by sequence */
	__u64 entry_bytes, entry_min, entry_max;
	__u64 pending[16];
};

#define MODEL_NO_LIMIT (1ull << 62)
/* which cgroup file set a memory limit */
enum model_limit_file {
	MODEL_LIMIT_NONE,
	MODEL_LIMIT_V1_HARD, /* memory.limit_in_bytes */
	MODEL_LIMIT_V2_MAX,  /* memory.max */
	MODEL_LIMIT_V2_HIGH, /* memory.high */
};
enum model_fault {
	MODEL_FAULT_ANON,
	MODEL_FAULT_FILE,
	MODEL_FAULT_DEVICE,
	MODEL_FAULT_OTHER,
	MODEL_FAULT_NR
};
/* what a mapping maps */
enum model_fd { MODEL_FD_ANON, MODEL_FD_FILE, MODEL_FD_DEVICE, MODEL_FD_OTHER };
/* /proc/PID/status fields, in KiB */
enum model_status {
	MODEL_ST_VMRSS,
	MODEL_ST_RSSANON,
	MODEL_ST_RSSFILE,
	MODEL_ST_RSSSHMEM,
	MODEL_ST_VMSWAP,
	MODEL_ST_VMSIZE,
	MODEL_ST_VMHWM,
	MODEL_ST_VMDATA,
	MODEL_ST_NR,
};
/* a DRM client's fdinfo counters */
enum model_drm_field {
	MODEL_DRM_VRAM_TOTAL,
	MODEL_DRM_VRAM_RESIDENT,
	MODEL_DRM_GTT_TOTAL,
	MODEL_DRM_GTT_RESIDENT,
	MODEL_DRM_CPU_TOTAL,
	MODEL_DRM_CPU_RESIDENT,
	MODEL_DRM_EVICTED_VRAM,
	MODEL_DRM_NR,
};
/* TTM placements; drivers number their own from 3 */
#define MODEL_PL_NONE (-1)
#define MODEL_PL_SYSTEM 0
#define MODEL_PL_TT 1
#define MODEL_PL_VRAM 2
enum model_probe_status { MODEL_PROBE_ATTACHED = 1, MODEL_PROBE_SKIPPED, MODEL_PROBE_FAILED };
/* how a process came to be traced; 0: not told (an older recording) */
enum model_join {
	MODEL_JOIN_EXEC = 1, /* --watch: it exec'd a name of --comm, traced from there */
	MODEL_JOIN_MAP,	     /* --watch: it mapped a GPU library or device node */
	MODEL_JOIN_SCAN,     /* --watch: already running when tracing began */
	MODEL_JOIN_LATE,     /* --watch: found late, by the /proc scan */
	MODEL_JOIN_PID,	     /* -p */
	MODEL_JOIN_COMMAND,  /* -- CMD: started by the tracer */
	MODEL_JOIN_FORK,     /* a child of a traced process, from its fork */
};
/* why tracing stopped; 0: not told (a trace cut short) */
enum model_end {
	MODEL_END_TARGET_EXIT = 1,
	MODEL_END_SIGNAL,
	MODEL_END_DURATION,
	MODEL_END_ERROR,
};
/* where lost events were lost */
enum model_src {
	MODEL_SRC_PROC,
	MODEL_SRC_RSS,
	MODEL_SRC_FAULT,
	MODEL_SRC_MMAP,
	MODEL_SRC_GPU,
	MODEL_SRC_BO,
	MODEL_SRC_HTTP,
	MODEL_SRC_DECODE,
	MODEL_SRC_NR,
};
/* llama.cpp's work: what a decode record was */
/* how a response ended; 0 while open */
enum model_http_end {
	MODEL_HTTP_END_LENGTH = 1, /* Content-Length bytes sent */
	MODEL_HTTP_END_CHUNKED,	   /* the chunked terminator */
	MODEL_HTTP_END_CLOSE,	   /* the connection closed */
	MODEL_HTTP_END_NEXT,	   /* the next response began */
};
enum model_decode { MODEL_DEC_DECODE = 1, MODEL_DEC_ENCODE, MODEL_DEC_IMAGE, MODEL_DEC_IMAGE_EVAL };

/* one /proc/PID/status sample */
struct model_sample {
	__u64 ts;
	__u64 kb[MODEL_ST_NR];
	__u32 valid; /* bit per field that was present */
	__u32 threads;
};

#define MODEL_MEM_TYPES 32
#define MODEL_MEM_HEAPS 16
/* what kind of device (VkPhysicalDeviceType + 1; 0: not said) */
enum model_gpu_type {
	MODEL_GPU_TYPE_UNSAID,
	MODEL_GPU_TYPE_OTHER,
	MODEL_GPU_TYPE_INTEGRATED,
	MODEL_GPU_TYPE_DISCRETE,
	MODEL_GPU_TYPE_VIRTUAL,
	MODEL_GPU_TYPE_CPU,
	MODEL_GPU_TYPE_NR
};

/* where a device's device-local memory is: its own (VRAM, HBM), or the
 * host's RAM, which the process's RSS and its cgroup already count */
enum model_devmem { MODEL_DEVMEM_SEPARATE, MODEL_DEVMEM_HOST_RAM };

/* what a driver said of a device's memory (Vulkan), or what the target
 * learned of it (CUDA: its integrated attribute only, no name or heaps) */
struct model_device {
	enum model_api api;
	__u32 index; /* physical device index in the driver */
	__u32 vendor_id, device_id;
	enum model_gpu_type type;
	enum model_devmem memory; /* model__device_memory's rule */
	__u32 nr_types, nr_heaps;
	char name[64];
	char driver[64]; /* library file name */
	struct {
		__u32 flags; /* VkMemoryPropertyFlags */
		__u32 heap;
	} types[MODEL_MEM_TYPES];
	struct {
		__u64 size;
		__u32 flags; /* VkMemoryHeapFlags */
	} heaps[MODEL_MEM_HEAPS];
};

#define MODEL_NVML_DEVS 16
#define MODEL_FAIL_GROUPS 8

struct series_point {
	__u64 ts;
	__s64 v;
};

/* a level over time, bounded: at SERIES_MAX points every other one goes and
 * later points come at most one per gap_ns (reported) */
#define SERIES_MAX 65536
/* processes kept in detail: the exited ones past it, the least notable
 * first, become a count */
#define MODEL_PROCS_MAX 4096
/* requests kept in detail a process (model_req.c) */
#define MODEL_REQS_MAX 65536
/* distinct stacks kept (the tracer names at most as many) */
#define MODEL_STACKS_MAX 65536
struct series {
	struct series_point *p;
	size_t n, cap;
	__u64 gap_ns; /* nonzero once thinned */
	__s64 peak;   /* of every value added, 0 at least */
};

/* NVML's account of one GPU, at its last sample; and how fast it ran over
 * time (the SM clock; the reasons it was held down, a bit each) */
struct model_nvml {
	__u64 ts;
	__u32 index; /* NVML device index */
	__u64 total, free;
	char name[64];
	__u32 sm_max_mhz, temp_c, power_mw, util_gpu;
	__u32 clocks_valid; /* MODEL_NVML_* */
	struct series sm_mhz, reasons;
};
#define MODEL_NVML_CLOCK 0x1
#define MODEL_NVML_REASONS 0x2
/* clock reasons that slow a busy GPU: power caps, thermal and hardware slowdowns */
#define MODEL_NVML_SLOWING 0xecull

/* Counters read each interval (model_waits.c): a point per interval,
 * cumulative unless said, every other one dropped at MODEL_TICKS_MAX */
#define MODEL_TICK_VALUES 20
#define MODEL_TICKS_MAX 16384
struct model_tick {
	__u64 ts;
	__u64 v[MODEL_TICK_VALUES];
};
struct model_ticks {
	struct model_tick *p;
	size_t n, cap;
};
/* a process's: what it waited on (gmt_proc_stat) */
enum model_wait {
	MODEL_W_MINFLT,
	MODEL_W_MAJFLT,
	MODEL_W_CPU_NS,
	MODEL_W_RUN_NS,
	MODEL_W_DELAY_NS, /* runnable, waiting for a CPU */
	MODEL_W_PERIODS,
	MODEL_W_THROTTLED,
	MODEL_W_THROTTLED_NS,
	MODEL_W_PSI_MEM_SOME, /* microseconds */
	MODEL_W_PSI_MEM_FULL,
	MODEL_W_PSI_CPU_SOME,
	MODEL_W_PSI_IO_SOME,
	MODEL_W_QUOTA_MILLI,  /* a level: the CPU quota in thousandths of a CPU; 0 none */
	MODEL_W_CPUS,	      /* a level: the CPUs it may run on */
	MODEL_W_READ_BYTES,   /* read from storage */
	MODEL_W_REFAULT_FILE, /* its memory cgroup's pages evicted, then needed again */
	MODEL_W_REFAULT_ANON,
	MODEL_W_NR,
};
/* the host's (gmt_host_stat, and the meminfo before it) */
enum model_host_tick {
	MODEL_H_PSWPIN, /* pages */
	MODEL_H_PSWPOUT,
	MODEL_H_PGMAJFAULT,
	MODEL_H_PSI_MEM_SOME,
	MODEL_H_PSI_MEM_FULL,
	MODEL_H_PSI_CPU_SOME,
	MODEL_H_PSI_IO_SOME,
	MODEL_H_RUNNING,   /* a level: runnable tasks */
	MODEL_H_CPUS,	   /* a level: CPUs online */
	MODEL_H_AVAILABLE, /* a level: MemAvailable, bytes */
	MODEL_H_REFAULT_FILE,
	MODEL_H_REFAULT_ANON,
	MODEL_H_NR,
};
/* the flags of what was read (the wire's) */
#define MODEL_WAITS_SCHED 0x1
#define MODEL_WAITS_CPU_STAT 0x2
#define MODEL_WAITS_PSI 0x4
#define MODEL_WAITS_PSI_CGROUP 0x8
#define MODEL_WAITS_CPU_V2 0x10
#define MODEL_WAITS_IO 0x20
#define MODEL_WAITS_REFAULTS 0x40
#define MODEL_HOST_PSI 0x1

/* a file a process maps (gmt_file_rss), at the last snapshot */
#define MODEL_FILES 8
struct model_file {
	__u64 size, rss, rss_min; /* rss_min: the least resident of any snapshot */
	__u64 dev, ino;
	bool code;
	char name[128]; /* cleaned */
};

struct model_mapping {
	__u64 ts;
	__u64 addr;
	__u64 len;
	__u64 live;		     /* bytes of it still mapped */
	__u64 gone_ts;		     /* when live fell to 0 */
	__u64 resident, resident_ts; /* of it, from the last smaps snapshot; ts 0: never */
	__u32 prot, flags, fd_class, stack_id;
};

/* a sampled first touch of anonymous memory (gmt_touch) */
struct model_touch {
	__u64 ts, bytes; /* bytes: what it stands for */
	__u32 stack_id;
};

#define MODEL_TOUCHES_MAX 65536
#define MODEL_MAPS_MAX 65536 /* then every other one goes, the rest count double */

/* Requests summed, for counters that only go up (the Prometheus export):
 * each request once it has ended, its tokens and rate once it is tied to
 * its work. Those thinned away are folded into the process's;
 * model_req__totals adds the kept ones. */
#define MODEL_REQ_PATHS 16 /* model_req_paths; the last, "other" */
#define MODEL_REQ_CODES 6  /* 1xx to 5xx, then no answer */
#define MODEL_LATENCY_BUCKETS 14
#define MODEL_RATE_BUCKETS 12
struct model_req_totals {
	__u64 requests[MODEL_REQ_PATHS][MODEL_REQ_CODES];
	/* answered ones; a histogram's buckets, each not cumulative, and a last
	 * one past the largest bound */
	__u64 latency[MODEL_LATENCY_BUCKETS + 1], latency_count;
	double latency_sum; /* seconds */
	__u64 rate[MODEL_RATE_BUCKETS + 1], rate_count;
	double rate_sum; /* tokens per second */
	__u64 prompt_tokens, generated_tokens;
	/* of the requests, those a traced process sent: the server itself,
	 * another (a router to its child) */
	__u64 sent_by_self, sent_by_traced;
};
extern const char *const model_req_paths[MODEL_REQ_PATHS];
extern const double model_req_latency_le[MODEL_LATENCY_BUCKETS]; /* seconds */
extern const double model_req_rate_le[MODEL_RATE_BUCKETS];	 /* tokens per second */

/* where its pod's name and namespace came from */
enum model_pod_from {
	MODEL_POD_FROM_NONE = 0,
	MODEL_POD_FROM_NODE = 1, /* the kubelet's log directories */
	MODEL_POD_FROM_ENV = 2,	 /* its own environment: its word only */
};
#define MODEL_POD_NAME_LEN 256
#define MODEL_POD_NS_LEN 64

/* the container its cgroup path names; id "" for none */
struct model_container {
	char id[CONTAINER_ID_LEN];
	const char *runtime; /* "podman", "docker", "containerd", "cri-o" */
	char pod_uid[CONTAINER_UID_LEN];
	char pod[MODEL_POD_NAME_LEN], pod_ns[MODEL_POD_NS_LEN];
	enum model_pod_from pod_from;
};

struct model_proc {
	UT_hash_handle hh; /* in model.by_pid */
	__u32 pid, ppid;
	char comm[MODEL_COMM_LEN];
	char exe[MODEL_PATH_LEN];
	char cgroup[MODEL_PATH_LEN]; /* "" when not told; "/" the root */
	struct model_container container;
	__u32 ns_pid; /* in its own pid namespace; 0: the same, or not told */
	/* the memory limit its cgroups set, at the last interval: of its cgroup
	 * and their ancestors, the one with the least room; mem_limit_ts 0: none */
	__u64 mem_limit_ts, mem_limit, mem_limit_used;
	__u64 mem_limit_swap_room; /* what more it may swap; MODEL_NO_LIMIT: the host's */
	struct model_llama_state lstate;
	struct series lstate_bytes; /* state saved and loaded, cumulative: when */
	struct series lentry_bytes; /* prompt-cache entries made, cumulative: when */
	enum model_limit_file mem_limit_file;
	char mem_limit_cgroup[MODEL_PATH_LEN];
	char *cmdline;
	char *env; /* "NAME=value\0"...: the settings of gmt_proc_env */
	size_t env_len;
	bool followed; /* a child added by -f */
	/* how and when it came to be traced: traced_ts, the time tracing of it
	 * began; start_ts, when it started (0: not known); join_what, the file
	 * whose mapping made it a GPU process (MODEL_JOIN_MAP) */
	enum model_join join;
	__u64 start_ts, traced_ts;
	char join_what[32];
	__u64 first_ts, exec_ts, exit_ts;
	bool exited;
	bool summarize; /* about to become a count (summarize_procs) */
	int exit_code;
	/* the last fatal signal delivered to one of its threads (signal.ts 0:
	 * none): the crash, where the process died of it */
	struct model_signal {
		__u64 ts;
		__u32 tid, sender, stack_id;
		int sig, code;
		__u64 addr;
		char comm[16];
	} signal;
	int threads, threads_peak;
	unsigned int threads_created, children, children_followed;

	struct series rss[MODEL_RSS_NR]; /* from kmem:rss_stat */
	/* anonymous memory resident or swapped out (RssAnon + VmSwap): growth
	 * that swap hides from RSS is still the heap's */
	struct series anon_swap;
	struct series vmrss; /* from /proc samples, bytes */
	struct model_sample first_sample, last_sample;
	unsigned int nr_samples;
	__u64 vmrss_peak;

	__u64 faults[MODEL_FAULT_NR];		/* totals by class */
	double fault_peak_rate[MODEL_FAULT_NR]; /* per second, over one interval */
	__u64 faults_all;			/* every class together */
	double faults_all_peak_rate;
	__u64 faults_ts;

	/* anonymous and file mappings made during the run; those wholly unmapped
	 * are summarized away once MODEL_MAPS_MAX are kept (the process can
	 * have at most vm.max_map_count live), so a run of days stays bounded */
	struct model_mapping *maps;
	size_t nr_maps, maps_cap;
	__u64 maps_made, maps_summarized, maps_summarized_bytes;
	size_t maps_gone; /* of those kept, wholly unmapped */
	__u64 mmap_calls, mmap_failed, munmap_calls, mremap_calls, brk_calls;
	bool brk_seen;
	__u64 brk_first, brk_last, brk_peak;

	struct model_touch *touches; /* in time order */
	size_t nr_touches, touches_cap;
	__u64 touches_thinned; /* times halved at MODEL_TOUCHES_MAX */
	__u64 touched_bytes;   /* all of them together */

	/* live ranges of the mappings above: sorted, disjoint */
	struct live_range *ranges;
	size_t nr_ranges, ranges_cap;

	struct model_gpu *gpu; /* NULL until its first GPU API call */
	struct model_drm *drm; /* NULL until its first DRM fdinfo sample */

	/* what it waited on, each interval (model_waits.c); flags: what was read */
	struct model_ticks waits;
	__u32 waits_flags;
	char cpu_cgroup[MODEL_PATH_LEN]; /* the last cgroup whose quota bound it; "" none */
	/* major faults by class (read from the disk or swap), where the kernel
	 * classes faults (its fexit): totals and over time */
	__u64 faults_major[MODEL_FAULT_NR];
	struct series major_file, major_anon;
	/* the memory limit over time (0: none), and its cgroup's use */
	struct series mem_limit_s, mem_limit_used_s;
	/* the files it maps, largest first, at the last snapshot; and the
	 * resident bytes of the largest that is not code (a model's weights) */
	struct model_file files[MODEL_FILES];
	size_t nr_files;
	__u64 files_ts;
	struct series data_file_rss;

	struct series nvml_used;	      /* NVML: device memory, all GPUs */
	__u64 nvml_dev_used[MODEL_NVML_DEVS]; /* the last of each GPU */

	struct model_request *reqs;	      /* in arrival order */
	struct model_req_totals *reqs_folded; /* of those thinned away; NULL: none yet */
	size_t nr_reqs, reqs_cap;
	size_t *open; /* requests not ended, by index, in arrival order */
	size_t nr_open, open_cap;
	/* ended requests past MODEL_REQS_MAX, every other one, kept as counts */
	__u64 reqs_summarized, reqs_summarized_answered, runs_summarized;
	__u64 reqs_stride; /* once thinned, the ended ones kept are every stride-th */
	__u64 tls_conns, http_conns_closed;
	__u64 decodes, decode_tokens, decode_errors, encodes, images; /* llama.cpp */
	__u64 decodes_before_requests; /* start-up: warm-up, fitting, ... */
	__u64 embd_decodes;	       /* of embeddings (an image's), not tokens */
	size_t first_untied;
	size_t *ended; /* requests ended and not tied yet, by index */
	size_t nr_ended, ended_cap;
	/* llama.cpp sequences (llama-server: slots), and their runs: one task each */
	struct model_seq *seqs;
	size_t nr_seqs, seqs_cap;
	struct model_run *runs;
	size_t nr_runs, runs_cap;
	size_t last_batch[MODEL_DECODE_SEQS],
		nr_last_batch;			 /* runs in the last decode (1 + index) */
	__u8 last_batch_rank[MODEL_DECODE_SEQS]; /* each one's turn to be sampled; NO_RANK: none */
	__u32 syncs_since_decode;
	__u32 last_decode_tid;
	__u64 last_decode_ts;	  /* the end of its last decode or synchronize */
	__u64 last_answer_ts;	  /* the end of the last response written */
	__u64 main_ctx;		  /* the llama_context of its own decodes; 0: not known */
	__u64 other_ctx_calls;	  /* decodes and synchronizes of another (a draft's) */
	bool batch_seqs;	  /* decodes carried their tokens by sequence */
	__u64 merged_seq_decodes; /* more sequences in a batch than were told apart */
};

/* what llama.cpp's decodes did for one task (model_req.c) */
struct model_tally {
	__u64 decodes, decode_ns, decode_errors, prompt_tokens, image_tokens, gen_decodes;
	__u64 gen_first_ts, gen_last_ts; /* starts of the first and the last step */
	__u64 after_ts; /* the start of the process's next decode after the last one here */
	__u64 prompt_sync_ts, gen_sync_ts; /* when the first token, the last one, were sampled */
	bool prompt_done; /* the prompt's last batch (the one asking for logits) went by */
	/* a step checked several tokens (speculative decoding): how many of
	 * them the program kept is not in its decodes */
	bool drafted;
};

struct model_seq {
	__s32 seq;
	__s32 last_pos;	    /* -1 before any */
	__s32 last_pos_min; /* where its last batch began */
	__u32 last_outputs; /* the logits its last batch asked for */
	size_t run;	    /* 1 + index of its current run; 0 none */
	bool after_embd;    /* its last batch was an image's embeddings */
};

struct model_run {
	__s32 seq;
	__u64 start_ts, last_end_ts; /* its first decode's start, its last one's end */
	size_t req;		     /* 1 + index of the request given it; 0 none yet */
	struct model_tally t;
};

/* GPU API memory of one process, by API and kind */
struct model_gpu_stat {
	__s64 live_bytes, peak_bytes;
	__u64 live, peak_live, allocs, frees, failed, alloc_bytes, freed_bytes;
	struct series series; /* live bytes, at most a point per 10 ms */
	struct series counts; /* live allocations, likewise */
};

struct model_gpu_live {
	__u64 handle, size, ts;
	__u64 phys; /* VMM map: the physical handle mapped */
	__u32 stack_id, mem_type, flags;
	__u32 maps; /* VMM physical: mappings of it still live */
	__u16 func;
	__u8 api, kind, cls, used;
	bool released; /* VMM physical: released, live until its last unmap */
};

struct model_gpu_failure {
	__u64 ts, size;
	__u32 tid, mem_type, stack_id, flags;
	__s32 result;
	__u16 func;
	__u8 api, kind;
	__s64 live_bytes[MODEL_API_NR][MODEL_KIND_NR]; /* at that moment */
	/* what was live then, by stack and size class (a power of two),
	 * biggest first: what to shrink */
	struct model_gpu_group {
		__u32 stack_id;
		__u8 api, kind, size_log2, pad;
		__u64 bytes, count, min_size, max_size;
	} groups[MODEL_FAIL_GROUPS];
	size_t nr_groups;
	__u64 other_bytes, other_count; /* live in groups not listed */
};

/* live bytes of one allocating stack over time: who holds growth, even
 * when it was all freed by the end */
struct model_gpu_holder {
	__u32 stack_id;
	__u8 api, kind;
	__s64 bytes;
	__u64 allocs, alloc_bytes; /* made over the run (a profile's alloc_space) */
	struct series live;
};

struct model_gpu {
	struct model_gpu_stat st[MODEL_API_NR][MODEL_KIND_NR];
	struct model_gpu_holder *holders;
	size_t nr_holders, holders_cap;
	struct model_gpu_live *live;	    /* open addressing by class and handle */
	size_t live_cap, nr_live, nr_slots; /* slots: live and freed */
	struct model_gpu_failure *fails;
	size_t nr_fails, fails_cap;
	__u64 calls, unknown_frees, maps, unmaps;
	struct series graphs_made;	     /* graph executables instantiated, cumulative */
	__u64 dedicated, imported, exported; /* Vulkan allocations so marked */
	bool info_seen;			     /* cuMemGetInfo: the device's free and total */
	__u64 info_free, info_total, info_ts, info_min_free;
};

/* kernel GPU buffers (TTM), by the process that made them */
enum { BO_SYSTEM, BO_GTT, BO_VRAM, BO_OTHER, BO_NR };

struct model_bo_owner {
	__u32 pid; /* 0: made before tracing began */
	char comm[MODEL_COMM_LEN];
	__s64 bytes[BO_NR], peak[BO_NR];
	__u64 live, created, freed, moves, evictions, evicted_bytes;
	__u64 created_bytes, last_free_ts;
	struct series vram, gtt;
};

struct model_bo {
	__u64 bo, size, ts, left_vram_ts;
	__s32 place;
	__u32 owner, evictor;
	__u32 prefer, allowed; /* amdgpu domains; 0 when not told */
	__u32 amdgpu_flags;    /* AMDGPU_GEM_CREATE_* */
	char evictor_comm[MODEL_COMM_LEN];
	bool live, left_vram; /* evicted from VRAM and not back yet */
	bool amdgpu;	      /* placements from 3 are amdgpu's */
};

struct model_eviction {
	__u64 ts, bo, size;
	__s32 from, to;
	__u32 owner, evictor, evict_id;
	char evictor_comm[MODEL_COMM_LEN];
	bool amdgpu;
};

#define MODEL_DRM_CLIENTS 16

/* DRM fdinfo: the driver's own counters, summed over the process's clients */
struct model_drm {
	char driver[32];
	struct {
		__u64 client_id;
		__u64 bytes[MODEL_DRM_NR];
		__u32 valid;	      /* bit per field printed */
	} clients[MODEL_DRM_CLIENTS]; /* the last of each */
	size_t nr_clients;
	__u64 samples;
	__u32 valid;
	__u64 bytes[MODEL_DRM_NR], peak[MODEL_DRM_NR];
	struct series vram, gtt; /* resident */
};

/* one task's figures, as the server wrote them in its response */
struct model_srv_task {
	__u32 index, prompt_n, predicted_n, cache_n;
	__u64 prompt_us, predicted_us;
	__u32 have; /* MODEL_SRV_* */
};

#define MODEL_SRV_PROMPT_N 1
#define MODEL_SRV_PREDICTED_N 2
#define MODEL_SRV_CACHE_N 4
#define MODEL_SRV_PROMPT_MS 8
#define MODEL_SRV_PREDICTED_MS 16
#define MODEL_SRV_INDEX 32
#define MODEL_SRV_TASKS 4

/* the server's own figures for a request (llama-server's `timings`): the
 * last object of each task (a stream may send one per token); past
 * MODEL_SRV_TASKS tasks, the rest summed in `more` */
struct model_srv {
	__u32 nr; /* of task[] */
	struct model_srv_task task[MODEL_SRV_TASKS], more;
};

struct model_request {
	__u64 nth; /* 1 for the process's first request: requests can be thinned */
	__u64 conn, start_ts, resp_ts, end_ts, bytes_in, bytes_out;
	/* llama.cpp's work for it: its run's, once tied (model_req.c) */
	struct model_tally t;
	struct model_srv srv; /* what the server said it did */
	__u64 gone_ts;	      /* the client went away before the answer ended; 0 not */
	__u64 image_ns;
	/* the traced process that sent it (its connect made the connection);
	 * 0: a client not traced, or not known */
	__u32 from_pid;
	__s32 seq;	   /* the llama.cpp sequence that served it; -1 none */
	__u16 status, end; /* enum model_http_end; 0 while open */
	bool sse, responded, done;
	bool from_self;	  /* from_pid is the server's own */
	bool tied;	  /* its run was looked for */
	bool prompt_done; /* as t.prompt_done, for requests not tied yet: images */
	char method[8];
	char path[64];
};

struct model_probe {
	__u32 status;
	char name[48];
	char what[64];
	char reason[160];
};

struct model_frame {
	__u64 ip, sym_off;
	char *sym, *module;
};

struct model_stack {
	__u32 id;
	unsigned int nr_frames;
	struct model_frame *frames; /* their names point into names */
	char *names;
	UT_hash_handle hh;
};

/* a code file stacks name (GMT_EV_MODULE): the first record of a name */
struct model_module {
	char name[128];
	char build_id[128]; /* lowercase hex; empty: none */
	__u64 text_off, text_vaddr, text_size;
	UT_hash_handle hh;
};
#define MODEL_MODULES_MAX 4096

struct model {
	bool have_session;
	__u64 start_ts, last_ts, end_ts;
	__u64 start_realtime_ns;
	__u32 interval_ms, flags, target_pid, page_size;
	bool follow, all_bos, watch; /* -f, -a, --watch */
	char tool_version[16], kernel[65], host[65], arch[16];
	char *cmdline;
	__u32 end_reason;

	struct model_probe *probes;
	size_t nr_probes, probes_cap;
	struct model_proc **procs;
	size_t nr_procs, procs_cap;
	struct model_proc *by_pid; /* the same, by pid (uthash): the newest of each */
	__u64 pids_reused;	   /* processes that took the pid of one before */
	/* exited processes past MODEL_PROCS_MAX, as a count and their largest */
	__u64 procs_summarized, procs_summarized_peak;
	struct model_stack **stacks; /* in the order they came */
	size_t nr_stacks, stacks_cap;
	struct model_stack *by_id;    /* the same, by id (uthash) */
	__u64 stacks_dropped;	      /* past MODEL_STACKS_MAX */
	struct model_module *modules; /* by name (uthash) */
	size_t nr_modules;

	struct model_bo *bos; /* every buffer seen, in the order first seen */
	size_t nr_bos, bos_cap;
	struct model_bo_owner *bo_owners;
	size_t nr_bo_owners, bo_owners_cap;
	struct model_eviction *evictions;
	size_t nr_evictions, evictions_cap;
	__u64 bo_events;

	struct model_ticks host_ticks; /* the host's paging, pressure and load */
	__u32 host_flags;
	bool meminfo_seen; /* the host's memory, at the last interval */
	__u64 mem_total, mem_available, swap_free;
	struct model_nvml nvml[MODEL_NVML_DEVS]; /* each GPU's last NVML sample */
	size_t nr_nvml;

	struct model_device *devices; /* what the drivers said of their memory */
	size_t nr_devices, devices_cap;

	__u64 lost[MODEL_SRC_NR];
	__u64 events, events_by_type[EVENT_TYPES], unknown_events;
};

/* a + b, held at the ends of the range: sizes come from a trace file, which
 * may be crafted, and a signed overflow is undefined */
static inline __s64 model__add_sat(__s64 a, __s64 b)
{
	__s64 r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* grow *arr (of `size`-byte elements) to hold at least n+1; -1 when out of memory */
int model__grow(void **arr, size_t *cap, size_t n, size_t size);
struct model *model__new(void);
void model__free(struct model *m);
/* apply one event; a gmt_sink_fn */
void model__add(void *m, const struct gmt_hdr *e);

struct model_proc *model__proc(const struct model *m, __u32 pid);
const struct model_stack *model__stack(const struct model *m, __u32 id);
/* the code file a frame's module names; NULL when the recording lacks it */
const struct model_module *model__module(const struct model *m, const char *name);
/* the value of `s` at time ts (its last point at or before ts); false if none */
void series__add(struct series *s, __u64 ts, __s64 v, __u64 step_ns);

/* where the model's caps bit, for the report: what became counts */
struct model_bounds {
	__u64 maps_summarized, maps_summarized_bytes;
	__u64 series_thinned, series_gap_ns; /* the widest gap */
	__u64 touches_thinned;
	__u64 procs_summarized, procs_summarized_peak;
	__u64 pids_reused;
	__u64 reqs_summarized;
	__u64 stacks_dropped;
};
/* true when any cap bit */
bool model__bounds(const struct model *m, struct model_bounds *b);
/* the index of the first point after ts (n: none) */
size_t series__after(const struct series *s, __u64 ts);
bool series__at(const struct series *s, __u64 ts, __s64 *v);
__s64 series__peak(const struct series *s);
/* the kind a Vulkan memory type means (device-local or host), from the one
 * device the driver reported; MODEL_KIND_VK_MEMORY when it cannot be told */
unsigned int model__vk_kind(const struct model *m, __u32 mem_type);
/* the one Vulkan device the drivers reported; NULL for none or several */
const struct model_device *model__vk_device(const struct model *m);
/* whether the device's device-local memory is the host's RAM: a CPU or an
 * integrated device (recorded without a type: Mesa's CPU drivers by vendor
 * and name); otherwise separate */
enum model_devmem model__device_memory(const struct model_device *d);
/* the API's memory is the host's RAM: every device of it that its driver
 * described (Vulkan) or the target asked about (CUDA) is, and one was.
 * A call does not say which of several devices it went to. */
bool model__host_ram(const struct model *m, enum model_api api);
/* "integrated", "discrete", "cpu", ...; NULL for not said */
const char *model__gpu_type_name(enum model_gpu_type t);
/* GPU calls: model_gpu.c */
void model_gpu__free(struct model_gpu *g);
/* whether live bytes of a kind are memory (not a view, a reservation or a graph) */
bool model_gpu__holds_memory(unsigned int kind);
/* buffer objects: model_bo.c */
void model_bo__free(struct model *m);
/* "vram", "gtt", ...; amdgpu's own placements by name */
const char *model_bo__place_name(__s32 place, bool amdgpu);
/* counters read each interval: model_waits.c */
void model_ticks__free(struct model_ticks *t);
/* how much counter i grew over [from, to]: each interval's growth spread
 * evenly over it (a fall, a thread gone, counts as none); -1 where no
 * point lies at or after `to`'s interval (nothing read then) */
double model_ticks__delta(const struct model_ticks *t, int i, __u64 from, __u64 to);
/* a level's value at ts: its last point at or before ts (else the first) */
bool model_ticks__at(const struct model_ticks *t, int i, __u64 ts, __u64 *v);
/* the file of p that is most likely a model's weights: the largest that is
 * not code; NULL none */
const struct model_file *model__data_file(const struct model_proc *p);
/* HTTP requests: model_req.c */
/* a request's prompt and generated tokens and its decode rate (-1: none):
 * the server's own figures where its response gave them (model_req.c),
 * else counted from llama.cpp's decodes */
__u64 model_req__prompt_tokens(const struct model_request *r);
__u64 model_req__generated(const struct model_request *r);
double model_req__tokens_per_s(const struct model_request *r);
/* its prompt's rate, tokens a second (-1: none) */
double model_req__prompt_per_s(const struct model_request *r);
/* when it decoded its answer: the server's time for it, ending as its
 * answer did, else its decodes'; false when neither says */
bool model_req__decode_window(const struct model_request *r, __u64 *from, __u64 *to);
/* the server's cached prompt tokens (cache_n); -1: not said */
long long model_req__cached_tokens(const struct model_request *r);
/* whether the figures above are the server's own */
bool model_req__from_server(const struct model_request *r);
/* whether its image tokens were counted: from the decodes of its images'
 * embeddings, which llama.cpp's per-token probes see */
bool model_req__image_tokens_known(const struct model_request *r);
/* ties the requests ended by `now` to their runs: at the end of a trace */
void model_req__flush(struct model_proc *p, __u64 now);
/* every request of p counted so far, into t (zeroed first) */
void model_req__totals(const struct model_proc *p, struct model_req_totals *t);
/* ties the requests ended when p has not decoded for a second (model_req.c) */
void model_req__idle(struct model_proc *p, __u64 now);
/* tokens decoded for no request: warm-up, or before tracing began */
__u64 model_req__untied_tokens(const struct model_proc *p);
void model_drm__free(struct model_drm *d);
/* amdgpu domains as "vram|gtt"; "" for none */
const char *model_bo__domains(__u32 d, char *buf, size_t size);
/* seconds since the session started */
double model__secs(const struct model *m, __u64 ts);
__u64 model__duration_ns(const struct model *m);

#endif
