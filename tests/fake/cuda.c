// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A stand-in libcuda.so.1 for machines without an NVIDIA GPU: the driver API
 * allocation calls gpumemtrace probes, with the real signatures and result
 * codes, backed by malloc. Memory is never touched, so sizes cost no RSS.
 * cuMemAllocAsync calls the exported cuMemAllocFromPoolAsync, as a real
 * runtime calling the driver would: the tracer must count it once. */
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef void *CUstream, *CUmemoryPool, *CUgraph, *CUgraphExec, *CUgraphNode;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_INVALID_DEVICE 101
#define LIMIT (1ull << 40)

static unsigned long long live, va_next = 0x7f0000000000ull;
static jmp_buf *escape;

#define ESCAPE_SIZE 12345

/* the tests' own: the next allocation of ESCAPE_SIZE bytes jumps to j, past
 * the driver's return, as an exception unwinding through it would */
void gmt_fake_escape(jmp_buf *j)
{
	escape = j;
}

static CUresult dev_alloc(CUdeviceptr *p, size_t n)
{
	void *m;

	if (escape && n == ESCAPE_SIZE) {
		jmp_buf *j = escape;

		escape = NULL;
		longjmp(*j, 1);
	}
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (n > LIMIT || !(m = malloc(n ? n : 1)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	live += n;
	*p = (uintptr_t)m;
	return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	return dev_alloc(p, n);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e)
{
	(void)e;
	*pitch = (w + 511) & ~(size_t)511;
	return dev_alloc(p, *pitch * h);
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	free((void *)(uintptr_t)p);
	return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void **p, size_t n)
{
	return dev_alloc((CUdeviceptr *)p, n);
}

CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
	(void)flags;
	return dev_alloc((CUdeviceptr *)p, n);
}

CUresult cuMemFreeHost(void *p)
{
	free(p);
	return CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags)
{
	(void)flags;
	return dev_alloc(p, n);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	(void)pool, (void)s;
	return dev_alloc(p, n);
}

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
	return cuMemAllocFromPoolAsync(p, n, NULL, s);
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	(void)s;
	return cuMemFree_v2(p);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const void *prop,
		     unsigned long long flags)
{
	(void)prop, (void)flags;
	return dev_alloc(h, n);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	return cuMemFree_v2(h);
}

CUresult cuMemMap(CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h,
		  unsigned long long flags)
{
	(void)p, (void)n, (void)off, (void)flags;
	return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemUnmap(CUdeviceptr p, size_t n)
{
	(void)p, (void)n;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr,
			     unsigned long long flags)
{
	(void)align, (void)addr, (void)flags;
	*p = va_next;
	va_next += (n + 0xfffff) & ~0xfffffull;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr p, size_t n)
{
	(void)p, (void)n;
	return CUDA_SUCCESS;
}

static CUresult new_exec(CUgraphExec *e, CUgraph g)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	*e = malloc(64);
	return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuGraphInstantiate(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
	(void)err, (void)log, (void)n;
	return new_exec(e, g);
}

CUresult cuGraphInstantiate_v2(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
	(void)err, (void)log, (void)n;
	return new_exec(e, g);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	(void)flags;
	return new_exec(e, g);
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *e, CUgraph g, void *params)
{
	(void)params;
	return new_exec(e, g);
}

CUresult cuGraphExecDestroy(CUgraphExec e)
{
	free(e);
	return CUDA_SUCCESS;
}

/* one device; CU_DEVICE_ATTRIBUTE_INTEGRATED (18) is 1 where the test sets
 * GMT_FAKE_CUDA_INTEGRATED=1 (a Jetson, a GB10), else 0 (a discrete GPU);
 * any other attribute of the 1..140 that exist answers a number of its own */
CUresult cuDeviceGetAttribute(int *pi, int attrib, int dev)
{
	const char *v = getenv("GMT_FAKE_CUDA_INTEGRATED");

	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!pi || attrib < 1 || attrib > 140)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = attrib == 18 ? v && !strcmp(v, "1") : attrib * 7;
	return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	*total = 80ull << 30;
	*free_bytes = *total - (live < *total ? live : *total);
	return CUDA_SUCCESS;
}
