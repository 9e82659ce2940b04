// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* names, sizes and validation of stream records */
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "event.h"

struct type_info {
	const char *name;
	size_t min_len;
};

static const struct type_info types[GMT_EV_MAX] = {
	[GMT_EV_SESSION] = { "session", sizeof(struct gmt_session) },
	[GMT_EV_PROBE] = { "probe", sizeof(struct gmt_probe) },
	[GMT_EV_PROC] = { "proc", sizeof(struct gmt_proc) },
	[GMT_EV_EXEC] = { "exec", sizeof(struct gmt_exec) },
	[GMT_EV_FORK] = { "fork", sizeof(struct gmt_fork) },
	[GMT_EV_EXIT] = { "exit", sizeof(struct gmt_exit) },
	[GMT_EV_RSS] = { "rss", sizeof(struct gmt_rss) },
	[GMT_EV_SAMPLE] = { "sample", sizeof(struct gmt_sample) },
	[GMT_EV_FAULTS] = { "faults", offsetof(struct gmt_faults, major) }, /* older: no major */
	[GMT_EV_MMAP] = { "mmap", sizeof(struct gmt_mmap) },
	[GMT_EV_MUNMAP] = { "munmap", sizeof(struct gmt_munmap) },
	[GMT_EV_MREMAP] = { "mremap", sizeof(struct gmt_mremap) },
	[GMT_EV_BRK] = { "brk", sizeof(struct gmt_brk) },
	[GMT_EV_LOST] = { "lost", sizeof(struct gmt_lost) },
	[GMT_EV_STACK] = { "stack", sizeof(struct gmt_stack) },
	[GMT_EV_END] = { "end", sizeof(struct gmt_end) },
	[GMT_EV_GPU_CALL] = { "gpu_call", sizeof(struct gmt_gpu_call) },
	[GMT_EV_GPU_DEVICE] = { "gpu_device",
				offsetof(struct gmt_gpu_device, device_type) }, /* older: no type */
	[GMT_EV_BO] = { "bo", sizeof(struct gmt_bo) },
	[GMT_EV_DRM_FDINFO] = { "drm_fdinfo", sizeof(struct gmt_drm_fdinfo) },
	[GMT_EV_HTTP] = { "http", sizeof(struct gmt_http) },
	[GMT_EV_DECODE] = { "decode", offsetof(struct gmt_decode, nr_seqs) },
	[GMT_EV_MEMINFO] = { "meminfo", sizeof(struct gmt_meminfo) },
	[GMT_EV_NVML] = { "nvml", offsetof(struct gmt_nvml, sm_mhz) }, /* older: no clocks */
	[GMT_EV_PROC_ENV] = { "proc_env", sizeof(struct gmt_proc_env) },
	[GMT_EV_MAP_RSS] = { "map_rss", sizeof(struct gmt_map_rss) },
	[GMT_EV_USTACK] = { "ustack", offsetof(struct gmt_ustack, data) },
	[GMT_EV_TOUCH] = { "touch", sizeof(struct gmt_touch) },
	[GMT_EV_CGROUP] = { "cgroup", offsetof(struct gmt_cgroup, ns_pid) }, /* older: path only */
	[GMT_EV_MEM_LIMIT] = { "mem_limit", sizeof(struct gmt_mem_limit) },
	[GMT_EV_LLAMA_STATE] = { "llama_state", sizeof(struct gmt_llama_state) },
	[GMT_EV_SIGNAL] = { "signal", sizeof(struct gmt_signal) },
	[GMT_EV_TIMINGS] = { "timings", sizeof(struct gmt_timings) },
	[GMT_EV_JOIN] = { "join", sizeof(struct gmt_join) },
	[GMT_EV_MODULE] = { "module", sizeof(struct gmt_module) },
	[GMT_EV_PROC_STAT] = { "proc_stat", sizeof(struct gmt_proc_stat) },
	[GMT_EV_HOST_STAT] = { "host_stat", sizeof(struct gmt_host_stat) },
	[GMT_EV_FILE_RSS] = { "file_rss", sizeof(struct gmt_file_rss) },
};

const char *event__type_name(unsigned int type)
{
	if (type < GMT_EV_MAX && types[type].name)
		return types[type].name;
	return "unknown";
}

/* the names after the frames must be nr_frames pairs of strings */
static bool stack_valid(const struct gmt_stack *s)
{
	size_t names = offsetof(struct gmt_stack, frames) + s->nr_frames * sizeof(s->frames[0]);
	const char *p = (const char *)s + names, *end = (const char *)s + s->hdr.len;
	unsigned int i;

	if (names > s->hdr.len)
		return false;
	for (i = 0; i < 2u * s->nr_frames; i++) {
		const char *nul = memchr(p, 0, end - p);

		if (!nul)
			return false;
		p = nul + 1;
	}
	return true;
}

bool event__valid(const struct gmt_hdr *e, size_t avail)
{
	/* records are 8-byte multiples so that every record in a buffer is aligned */
	if (avail < sizeof(*e) || e->len < sizeof(*e) || e->len > avail || e->len % 8)
		return false;
	/* unknown types from a newer writer are skipped, not rejected */
	if (e->type >= GMT_EV_MAX || !types[e->type].name)
		return true;
	if (e->len < types[e->type].min_len)
		return false;
	switch (e->type) {
	case GMT_EV_SESSION:
		return offsetof(struct gmt_session, cmdline) +
			       ((const struct gmt_session *)e)->cmdline_len <=
		       e->len;
	case GMT_EV_PROC:
		return offsetof(struct gmt_proc, cmdline) +
			       ((const struct gmt_proc *)e)->cmdline_len <=
		       e->len;
	case GMT_EV_MMAP:
		return offsetof(struct gmt_mmap, ips) + ((const struct gmt_mmap *)e)->nr_ips * 8u <=
		       e->len;
	case GMT_EV_STACK:
		return stack_valid((const struct gmt_stack *)e);
	case GMT_EV_MODULE: {
		const struct gmt_module *x = (const void *)e;

		return memchr(x->name, 0, sizeof(x->name)) &&
		       memchr(x->build_id, 0, sizeof(x->build_id));
	}
	case GMT_EV_GPU_CALL:
		return offsetof(struct gmt_gpu_call, ips) +
			       ((const struct gmt_gpu_call *)e)->nr_ips * 8u <=
		       e->len;
	case GMT_EV_TOUCH:
		return offsetof(struct gmt_touch, ips) +
			       ((const struct gmt_touch *)e)->nr_ips * 8ull <=
		       e->len;
	case GMT_EV_USTACK:
		/* a fault's slice is shorter than a GPU call's */
		return offsetof(struct gmt_ustack, data) +
				       (__u64)((const struct gmt_ustack *)e)->size <=
			       e->len &&
		       e->len <= sizeof(struct gmt_ustack);
	case GMT_EV_PROC_ENV:
		return sizeof(struct gmt_proc_env) + ((const struct gmt_proc_env *)e)->vars_len <=
		       e->len;
	case GMT_EV_FILE_RSS:
		return ((const struct gmt_file_rss *)e)->nr <= GMT_FILE_RSS_MAX &&
		       sizeof(struct gmt_file_rss) +
				       ((const struct gmt_file_rss *)e)->nr *
					       (__u64)sizeof(struct gmt_file_rss_one) <=
			       e->len;
	case GMT_EV_MAP_RSS:
		return ((const struct gmt_map_rss *)e)->nr <= GMT_MAP_RSS_MAX &&
		       sizeof(struct gmt_map_rss) +
				       ((const struct gmt_map_rss *)e)->nr *
					       (__u64)sizeof(struct gmt_map_rss_area) <=
			       e->len;
	case GMT_EV_DECODE:
		/* recordings from before sequences end at nr_seqs */
		return e->len < sizeof(struct gmt_decode) ||
		       sizeof(struct gmt_decode) + ((const struct gmt_decode *)e)->nr_seqs *
							   (__u64)sizeof(struct gmt_decode_seq) <=
			       e->len;
	}
	return true;
}

__u64 event__decode_ctx(const struct gmt_decode *e)
{
	size_t at = sizeof(*e) + (size_t)e->nr_seqs * sizeof(struct gmt_decode_seq);
	__u64 ctx;

	if (e->hdr.len < sizeof(*e) || e->hdr.len < at + sizeof(ctx))
		return 0;
	memcpy(&ctx, (const char *)e + at, sizeof(ctx));
	return ctx;
}

void event__init(struct gmt_hdr *h, unsigned int type, size_t len, __u64 ts_ns, __u32 pid)
{
	memset(h, 0, len);
	h->ts_ns = ts_ns;
	h->pid = pid;
	h->tid = pid;
	h->type = type;
	h->len = len;
	h->cpu = GMT_USER_CPU;
}

__u64 event__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

const char *event__stack_names(const struct gmt_stack *s)
{
	return (const char *)&s->frames[s->nr_frames];
}
