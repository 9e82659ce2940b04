/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the one binary search: over arrays sorted by a 64-bit key (a time, an
 * address) held in each element */
#ifndef GMT_SEARCH_H
#define GMT_SEARCH_H

#include <stddef.h>
#include <linux/types.h>

/* the index of the first of n elements (each `size` bytes, its key at byte
 * offset `off`) whose key is greater than `key`; n when none is */
size_t search__after(const void *base, size_t n, size_t size, size_t off, __u64 key);

#endif
