// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the one definition of what gmt.bpf.h shares */
#define GMT_DEFINE_SHARED
#include "gmt.bpf.h"
#include "ustack.bpf.h"
#include "syscalls.bpf.h"

const volatile __u32 targ_tgid = 0;
const volatile __u32 follow_forks = 0;
const volatile __u64 rss_step_bytes = 256 << 10;
const volatile __u64 mmap_stack_min = 128 << 10;
const volatile __u64 wakeup_bytes = 1 << 20;
const volatile __u32 page_shift = 12;
const volatile __u32 all_bos = 0;
const volatile __u32 unwind_cfi = 0;
const volatile __u32 touch_period = 0;
const volatile __u32 redact_gpu = 0;
const volatile __u32 watch_on = 0;
const volatile __u32 self_tgid = 0;
__u32 serving = 0;
const volatile __s32 sys_nr[GMT_SYS_NR] = { [0 ... GMT_SYS_NR - 1] = -1 };

char LICENSE[] SEC("license") = "Dual BSD/GPL";
