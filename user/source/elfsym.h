/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* where named functions start in an ELF file: what a uprobe needs */
#ifndef GMT_ELFSYM_H
#define GMT_ELFSYM_H

#include <stddef.h>
#include <linux/types.h>

/* For each of names[0..n), the file offset of the defined function of that
 * name (.dynsym first, then .symtab), or 0 when absent. Returns how many
 * were found, or -errno when fd is not a readable ELF file. */
int elfsym__offsets(int fd, const char *const *names, size_t n, __u64 *offs);

#endif
