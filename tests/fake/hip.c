// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A stand-in libamdhip64.so: HIP's allocation calls with their real
 * signatures and hipError_t codes, backed by malloc (never touched). */
#include <stdint.h>
#include <stdlib.h>

typedef int hipError_t;
typedef void *hipStream_t, *hipGraph_t, *hipGraphExec_t, *hipGraphNode_t,
	*hipMemGenericAllocationHandle_t;

#define hipSuccess 0
#define hipErrorInvalidValue 1
#define hipErrorOutOfMemory 2
#define LIMIT (1ull << 40)

static hipError_t alloc(void **p, size_t n)
{
	if (!p)
		return hipErrorInvalidValue;
	if (n > LIMIT || !(*p = malloc(n ? n : 1)))
		return hipErrorOutOfMemory;
	return hipSuccess;
}

hipError_t hipMalloc(void **p, size_t n)
{
	return alloc(p, n);
}

hipError_t hipFree(void *p)
{
	free(p);
	return hipSuccess;
}

hipError_t hipMallocManaged(void **p, size_t n, unsigned int flags)
{
	(void)flags;
	return alloc(p, n);
}

hipError_t hipHostMalloc(void **p, size_t n, unsigned int flags)
{
	(void)flags;
	return alloc(p, n);
}

hipError_t hipHostFree(void *p)
{
	free(p);
	return hipSuccess;
}

hipError_t hipMallocAsync(void **p, size_t n, hipStream_t s)
{
	(void)s;
	return alloc(p, n);
}

hipError_t hipFreeAsync(void *p, hipStream_t s)
{
	(void)s;
	free(p);
	return hipSuccess;
}

hipError_t hipMemCreate(hipMemGenericAllocationHandle_t *h, size_t n, const void *prop,
			unsigned long long flags)
{
	(void)prop, (void)flags;
	return alloc(h, n);
}

hipError_t hipMemRelease(hipMemGenericAllocationHandle_t h)
{
	free(h);
	return hipSuccess;
}

hipError_t hipGraphInstantiate(hipGraphExec_t *e, hipGraph_t g, hipGraphNode_t *err, char *log,
			       size_t n)
{
	(void)err, (void)log, (void)n;
	return g ? alloc(e, 64) : hipErrorInvalidValue;
}

hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *e, hipGraph_t g, unsigned long long f)
{
	(void)f;
	return g ? alloc(e, 64) : hipErrorInvalidValue;
}

hipError_t hipGraphExecDestroy(hipGraphExec_t e)
{
	free(e);
	return hipSuccess;
}
