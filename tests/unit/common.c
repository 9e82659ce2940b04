// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of common/: byte and text formatting, the one binary search. */
#include "unit.h"
#include "common/fmt.h"
#include "common/search.h"

/* the one binary search: the first key past the one asked, over equal keys
 * too, with the key anywhere in the element */
void test_search_after(void)
{
	struct {
		__u32 tag;
		__u64 key;
	} v[] = { { 0, 1 }, { 1, 3 }, { 2, 3 }, { 3, 5 } };
	const __u64 keys[] = { 0, 1, 2, 3, 4, 5, 99 };
	const size_t want[] = { 0, 1, 1, 3, 3, 4, 4 };
	size_t i, got;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		got = search__after(v, 4, sizeof(v[0]), offsetof(typeof(v[0]), key), keys[i]);
		ASSERT_EQ(got, want[i], "the first element after the key");
	}
	ASSERT_EQ(search__after(v, 0, sizeof(v[0]), 8, 3), 0, "none in an empty array");
}

void test_fmt(void)
{
	char b[32];

	ASSERT_STR(fmt_bytes(b, sizeof(b), 0), "0 B", "zero");
	ASSERT_STR(fmt_bytes(b, sizeof(b), 1023), "1023 B", "bytes");
	ASSERT_STR(fmt_bytes(b, sizeof(b), 4096), "4.0 KiB", "KiB");
	ASSERT_STR(fmt_bytes(b, sizeof(b), 128 << 20), "128.0 MiB", "MiB");
	ASSERT_STR(fmt_bytes(b, sizeof(b), 1.5 * (1 << 30)), "1.50 GiB", "GiB");
	ASSERT_STR(fmt_delta(b, sizeof(b), -(4 << 10)), "-4.0 KiB", "negative");
	ASSERT_STR(fmt_delta(b, sizeof(b), 126 << 20), "+126.0 MiB", "positive");
	ASSERT_STR(fmt_prot(b, sizeof(b), 5), "r-x", "prot");
}

/* what a target names, as printable UTF-8: U+FFFD for each bad byte */
void test_fmt_clean(void)
{
	char b[64], small[7];

	fmt_clean(b, sizeof(b), "/v1/\xc3\xa9t\xc3\xa9", 64);
	ASSERT_STR(b, "/v1/\xc3\xa9t\xc3\xa9", "valid UTF-8 is kept");
	fmt_clean(b, sizeof(b),
		  "a\x1b[2J\x7f\x07"
		  "b",
		  64);
	ASSERT_STR(b,
		   "a\xef\xbf\xbd[2J\xef\xbf\xbd\xef\xbf\xbd"
		   "b",
		   "C0 and DEL");
	fmt_clean(b, sizeof(b),
		  "\xc2\x9b"
		  "1m",
		  64);
	ASSERT_STR(b,
		   "\xef\xbf\xbd\xef\xbf\xbd"
		   "1m",
		   "C1's CSI, each byte");
	fmt_clean(b, sizeof(b), "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xff", 64);
	ASSERT_EQ(strlen(b), 10 * 3, "overlong, surrogate, past U+10FFFF, 0xff: ten bytes, ten");
	fmt_clean(b, sizeof(b), "ab\xe2\x82", 64);
	ASSERT_STR(b, "ab\xef\xbf\xbd\xef\xbf\xbd", "a sequence cut short");
	fmt_clean(b, sizeof(b), "abcdef", 3);
	ASSERT_STR(b, "abc", "at most n bytes");
	fmt_clean(small, sizeof(small), "abcd\xff\xff", 64);
	ASSERT_STR(small, "abcd", "cut at a whole character where dst is small");
	ASSERT_STR(fmt_col(b, sizeof(b),
			   "/\xef\xbf\xbd"
			   "ab",
			   3),
		   "/\xef\xbf\xbd"
		   "a",
		   "a column counts characters");
	ASSERT_STR(fmt_col(b, sizeof(b), "ab", 4), "ab  ", "and pads");
	ASSERT_STR(fmt_col(small, 4, "\xef\xbf\xbd\xef\xbf\xbd", 2), "\xef\xbf\xbd",
		   "whole characters in a small buffer");
}
