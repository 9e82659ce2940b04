/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* where named functions start in an ELF file: what a uprobe needs */
#ifndef GMT_ELFSYM_H
#define GMT_ELFSYM_H

#include <stddef.h>
#include <libelf.h>
#include <linux/types.h>

/* An ELF file of a target's, read with pread as it is used (ELF_C_READ),
 * never mapped: a target that truncates its file under a mapping would
 * kill the tracer with SIGBUS. NULL, as elf_begin, when fd is not an ELF
 * file, or when a table it would read (symbols, strings, notes) is bigger
 * than ELFSYM_TABLE_MAX, which reading would cost in memory. */
#define ELFSYM_TABLE_MAX (512ull << 20)
Elf *elfsym__begin(int fd);

/* For each of names[0..n), the file offset of the defined function of that
 * name (.dynsym first, then .symtab), or 0 when absent. Returns how many
 * were found, or -errno when fd is not a readable ELF file. */
int elfsym__offsets(int fd, const char *const *names, size_t n, __u64 *offs);

#endif
