// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of common/: byte and text formatting, the one binary search,
 * cgroup paths read as containers'. */
#include <string.h>
#include "unit.h"
#include "common/container.h"
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

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "1a2b3c4d-0000-4abc-8def-0123456789ab"
#define UID_ "1a2b3c4d_0000_4abc_8def_0123456789ab"

/* each runtime's paths, v1 and v2, cgroupfs and systemd; and paths a
 * process can make below its own: long, not hex, "pod" over and over */
void test_container_parse(void)
{
	static const struct {
		const char *path, *id, *runtime, *uid;
	} cases[] = {
		{ "/libpod_parent/libpod-" ID, ID, "podman", "" },
		{ "/machine.slice/libpod-" ID ".scope", ID, "podman", "" },
		{ "/machine.slice/libpod-" ID ".scope/container", ID, "podman", "" },
		{ "/machine.slice/libpod-conmon-" ID ".scope", "", NULL, "" },
		{ "/libpod_parent/conmon", "", NULL, "" },
		{ "/system.slice/docker-" ID ".scope", ID, "docker", "" },
		{ "/docker/" ID, ID, "docker", "" },
		{ "/system.slice/containerd.service", "", NULL, "" },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/cri-containerd-" ID ".scope",
		  ID, "containerd", UID },
		{ "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID ".scope", ID, "cri-o",
		  UID },
		{ "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" ID ".scope", "", NULL,
		  UID },
		{ "/kubepods/burstable/pod" UID "/" ID, ID, "containerd", UID },
		{ "/kubepods/pod" UID "/" ID, ID, "containerd", UID },
		{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
		  "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID ".scope",
		  ID, "containerd", UID },
		{ "/kubepods/besteffort/pod" UID, "", NULL, UID },
		/* hostile */
		{ "/", "", NULL, "" },
		{ "", "", NULL, "" },
		{ "/libpod-" ID "0", "", NULL, "" }, /* 65 digits */
		{ "/libpod-0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", "",
		  NULL, "" }, /* upper case */
		{ "/docker-" ID ".scopex", "", NULL, "" },
		{ "/libpod-x123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "",
		  NULL, "" },
		{ "/user.slice/" ID, "", NULL, "" },			 /* bare, no parent */
		{ "/user.slice/kubepods/pod" UID "/" ID, "", NULL, "" }, /* kubepods deep */
		{ "/kubepods/podpodpod/pod" UID "pod/pod" UID "/" ID, ID, "containerd", UID },
		{ "/kubepods/pod" UID "/pod1a2b3c4d-ffff-4abc-8def-0123456789ab/" ID, ID,
		  "containerd", UID }, /* the first pod */
		{ "/kubepods/pod1a2b3c4d-0000-4abc-8def-0123456789a/" ID, "", NULL, "" },
		{ "/kubepods/pod1a2b3c4d_0000_4abc_8def_0123456789ab/" ID, "", NULL, "" },
		{ "/libpod_parent/libpod-" ID "/libpod-fedcba9876543210fedcba9876543210fedcba9876"
		  "543210fedcba9876543210",
		  ID, "podman", "" }, /* below a container: the container's own */
		{ "/docker-" ID ".scope/kubepods/pod" UID "/" ID, ID, "docker", "" },
	};
	struct container c;
	char long_path[4096];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool any = container__parse(cases[i].path, &c);

		ASSERT_STR(c.id, cases[i].id, cases[i].path);
		ASSERT_STR(c.runtime ? c.runtime : "(null)",
			   cases[i].runtime ? cases[i].runtime : "(null)", cases[i].path);
		ASSERT_STR(c.pod_uid, cases[i].uid, cases[i].path);
		ASSERT_EQ(any, cases[i].id[0] || cases[i].uid[0], cases[i].path);
	}
	/* long: components of "pod" and slashes, then a container */
	memset(long_path, '/', sizeof(long_path));
	for (i = 0; i + 8 < sizeof(long_path) - 80; i += 4)
		memcpy(long_path + i, "/pod", 4);
	snprintf(long_path + i, sizeof(long_path) - i, "/libpod-%s", ID);
	ASSERT_EQ(container__parse(long_path, &c), true, "a long path");
	ASSERT_STR(c.id, ID, "a long path's container");

	ASSERT_EQ(container__name_ok("llama-7f9c.x", 12, true), true, "a pod name");
	ASSERT_EQ(container__name_ok("llama-7f9c.x", 12, false), false, "a namespace has no dot");
	ASSERT_EQ(container__name_ok("Bad_NS", 6, false), false, "upper case, underscore");
	ASSERT_EQ(container__name_ok("a\nb", 3, true), false, "a newline");
	ASSERT_EQ(container__name_ok("", 0, true), false, "empty");
	memset(long_path, 'a', 254);
	ASSERT_EQ(container__name_ok(long_path, 253, true), true, "253");
	ASSERT_EQ(container__name_ok(long_path, 254, true), false, "254");
	ASSERT_EQ(container__name_ok(long_path, 64, false), false, "a label of 64");
}
