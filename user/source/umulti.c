// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* uprobe_multi links: owns the raw bpf(BPF_LINK_CREATE) call that makes
 * one (libbpf 1.1 cannot) and the once-per-run probe of whether this kernel
 * has them with a pid filter that keeps a whole process; where it does not,
 * the programs are loaded for a perf event per uprobe instead. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "umulti.h"

/* bpf_attr's link_create, as Linux 6.6 lays it out for uprobe_multi */
struct umulti_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 link_flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 flags;
	__u32 pid;
};

int umulti__attach(int prog_fd, const char *path, const __u64 *offsets, const __u64 *cookies,
		   size_t cnt, bool ret, int pid)
{
	struct umulti_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr)); /* the padding too: the kernel checks it */
	attr.prog_fd = prog_fd;
	attr.attach_type = UMULTI_ATTACH_TYPE;
	attr.path = (uintptr_t)path;
	attr.offsets = (uintptr_t)offsets; /* unsigned long in the kernel: 64 bits here */
	attr.cookies = (uintptr_t)cookies;
	attr.cnt = cnt;
	attr.flags = ret ? UMULTI_RETURN : 0;
	attr.pid = pid;
	fd = syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/* Two links that must fail, on "/" (not a regular file) with a program of
 * that kind: EBADF says the kernel has uprobe_multi links; EINVAL for pid
 * -1, checked before the path since the pid filter keeps a whole process
 * (before that fix, the pid was looked up, as a thread, after the path) */
static const char *probe(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	const char *why = NULL;
	__u64 off = 0;
	int prog, err;

	if (getenv("GMT_NO_UPROBE_MULTI") && !strcmp(getenv("GMT_NO_UPROBE_MULTI"), "1"))
		return "uprobe_multi links off (GMT_NO_UPROBE_MULTI=1)";
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "gmt_umulti", "GPL", insns, 2, &opts);
	if (prog < 0)
		return "no uprobe_multi links in this kernel (Linux 6.6)";
	err = umulti__attach(prog, "/", &off, NULL, 1, false, 0);
	if (err >= 0)
		close(err);
	if (err != -EBADF) {
		why = "no uprobe_multi links in this kernel (Linux 6.6)";
	} else {
		err = umulti__attach(prog, "/", &off, NULL, 1, false, -1);
		if (err >= 0)
			close(err);
		if (err != -EINVAL)
			why = "this kernel's uprobe_multi links filter a thread, not a process";
	}
	close(prog);
	return why;
}

const char *umulti__missing(void)
{
	static const char *why;
	static bool probed;

	if (!probed) {
		why = probe();
		probed = true;
	}
	return why;
}
