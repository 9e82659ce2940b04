// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the floor for bench/gpuapi.sh: uprobe and uretprobe programs that do
 * nothing, on the same functions gpumemtrace probes */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("uprobe")
int floor_enter(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int floor_return(void *ctx)
{
	return 0;
}

/* for the syscall tracepoints: the pid test every program makes, no more */
const volatile __u32 floor_pid;

SEC("tracepoint")
int floor_tp(void *ctx)
{
	return (bpf_get_current_pid_tgid() >> 32) == floor_pid;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
