/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The call frame information of a traced process's code file, copied and
 * checked before libdw (0.188) reads it. libdw trusts it: a rule naming
 * register 268,420,218 makes it allocate 2 GiB, an expression that jumps
 * back runs to its step limit and leaks its stack, an FDE may be read at
 * any offset .eh_frame_hdr names, and the file may change under its mmap.
 * So libdw is given a copy of only what unwinding reads (the program
 * headers, .eh_frame, .eh_frame_hdr, .debug_frame), checked by a bounded
 * decoder: registers within x86-64's DWARF numbers, expressions short,
 * of the operations libdwfl evaluates, branching forward only, states
 * nested a little. */
#ifndef GMT_CFI_CHECK_H
#define GMT_CFI_CHECK_H

#include <stddef.h>

/* the copy of fd's file (which stays the caller's) as a memfd for
 * dwfl_report_elf, or -1 with why (a sentence's end: "register 268420218
 * in the FDE at 0x40 of .debug_frame is beyond x86-64's") */
int cfi_check__copy(int fd, char *why, size_t len);

/* the same checks on one section's bytes, as .eh_frame (eh) or
 * .debug_frame: 0, or -1 with why (for the unit tests) */
int cfi_check__section(const void *buf, size_t size, int eh, unsigned long long vaddr, char *why,
		       size_t len);

#endif
