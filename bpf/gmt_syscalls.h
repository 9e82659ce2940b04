/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The system calls whose exits the sys_exit programs take, shared by BPF
 * and user space: user space sets each one's number for the arch it was
 * built for (-1: none there, or its group is off) before load. */
#ifndef GMT_SYSCALLS_H
#define GMT_SYSCALLS_H

enum gmt_sys {
	/* mm.bpf.c */
	GMT_SYS_MMAP,
	GMT_SYS_MUNMAP,
	GMT_SYS_MREMAP,
	GMT_SYS_BRK,
	/* req.bpf.c */
	GMT_SYS_READ,
	GMT_SYS_RECVFROM,
	GMT_SYS_READV,
	GMT_SYS_RECVMSG,
	GMT_SYS_WRITE,
	GMT_SYS_SENDTO,
	GMT_SYS_WRITEV,
	GMT_SYS_SENDMSG,
	GMT_SYS_SENDFILE,
	GMT_SYS_CLOSE,
	GMT_SYS_SHUTDOWN,
	GMT_SYS_CLOSE_RANGE,
	GMT_SYS_DUP3,
	GMT_SYS_DUP2,
	GMT_SYS_CONNECT,
	GMT_SYS_NR
};

/* syscall numbers below this are looked up in a bitmap; higher ones are
 * not taken (x86-64 and arm64 end under 500) */
#define GMT_SYS_MAX 1024
#define GMT_SYS_WORDS (GMT_SYS_MAX / 64)

#endif
