// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Search: owns the one binary search (series, runs, symbols), over arrays
 * sorted by a 64-bit key at an offset in each element; the key is copied
 * out, since it need not be aligned. */
#include <string.h>
#include "search.h"

size_t search__after(const void *base, size_t n, size_t size, size_t off, __u64 key)
{
	const unsigned char *p = base;
	size_t lo = 0, hi = n;
	__u64 k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		/* memcpy: an element's key need not be aligned for the reader */
		memcpy(&k, p + mid * size + off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
