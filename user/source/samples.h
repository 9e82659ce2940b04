/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What /proc (and NVML) say of the targets, as records: what a process is
 * when it joins (its RSS baseline, command line, cgroup, memory settings),
 * each interval (status, cgroup limit, DRM fdinfo, the host's meminfo,
 * NVML), and every few intervals (the resident bytes of anonymous maps) */
#ifndef GMT_SAMPLES_H
#define GMT_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include "stream/event.h"

struct samples;

/* target: the session's pid, for host-wide records; cmdline: the command
 * we started (redacted), NULL when attached */
struct samples *samples__new(__u32 target, const char *cmdline, gmt_sink_fn sink, void *ctx);
void samples__free(struct samples *s);
/* NVML, where there is an NVIDIA driver: a probe record says whether */
void samples__start_nvml(struct samples *s);
/* pid joins the targets: spawned, a command we started that has not run
 * yet (nothing to sample, our own environment and command line); how, the
 * JOIN record to make first (enum gmt_join_how; 0: BPF made one) */
void samples__join(struct samples *s, __u32 pid, bool spawned, __u32 how);
/* a traced process exec'd: its new command line (a PROC record) */
void samples__exec(struct samples *s, __u32 pid);
/* one interval's samples of these pids, and of the host */
void samples__tick(struct samples *s, const __u32 *pids, size_t n);
/* the resident bytes of each pid's anonymous areas (smaps: costly) */
void samples__maps_rss(struct samples *s, const __u32 *pids, size_t n);

#endif
