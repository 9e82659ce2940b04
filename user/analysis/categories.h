/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Memory of one process by where it lives: host anonymous and file RSS,
 * each GPU API's kinds, kernel buffers in VRAM and GTT, and the drivers'
 * own counters (DRM fdinfo, NVML); with its level at any moment. The
 * verdicts, the per-request table and the live view share these. */
#ifndef GMT_CATEGORIES_H
#define GMT_CATEGORIES_H

#include "model/model.h"

#define CAT_MAX 24

enum cat_class {
	CAT_HOST,   /* the process's RAM */
	CAT_API,    /* what GPU API calls allocated */
	CAT_KERNEL, /* kernel buffer objects (TTM) */
	CAT_DRIVER, /* a driver's own count of device memory */
	CAT_COUNT,  /* not bytes: live graph executables */
};

struct category {
	char name[32]; /* "host_anon", "vulkan_device", "bo_vram", "nvml_device" */
	char text[48]; /* "host heap (anonymous RSS)" */
	enum cat_class cls;
	bool device;		/* GPU device memory (API device, managed, VMM; VRAM) */
	bool in_host;		/* device memory that is the host's RAM (lavapipe, an
				 * integrated GPU): the host's RSS holds what is touched */
	bool zero_before;	/* 0 before its first point (allocations), not unknown */
	unsigned int api, kind; /* CAT_API, CAT_COUNT */
	const struct series *s;
};

/* the categories p has data for, in report order; returns their number */
size_t categories__list(const struct model *m, const struct model_proc *p, struct category *out,
			size_t max);
/* the level at ts; false when nothing was known yet */
bool category__level(const struct category *c, __u64 ts, double *v);
/* where the growth of a category would run out, as an absolute level, with
 * what limits it; false when nothing in the stream says */
bool category__limit(const struct model *m, const struct model_proc *p, const struct category *c,
		     double level, double *limit, const char **what);

/* whether its bytes count in the process's total: not a count, not a
 * driver's own figure of bytes counted elsewhere, not a device's memory
 * that is the host's RAM (in the host's RSS already) */
bool category__in_total(const struct category *c);

/* how much more the process's memory may grow: what its cgroups' limit
 * leaves it, or the host's available RAM, whichever is less; what: which
 * (category_cgroup_limit for the first); false when neither is known */
bool category__host_room(const struct model *m, const struct model_proc *p, double *room,
			 const char **what);
extern const char *const category_cgroup_limit;

#endif
