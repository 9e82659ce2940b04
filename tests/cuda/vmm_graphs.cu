// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Real CUDA for tests/cuda/run.sh: a known script of driver and runtime
 * allocations, VMM calls and graph executables, made after the tracer has
 * attached; prints what it did in the shape of gpumemtrace's gpu.by_kind.
 *   vmm_graphs READY_FIFO GO_FIFO OUT_FILE HOLD_FIFO */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                   \
	do {                                                                    \
		int r_ = (int)(x);                                              \
		if (r_) {                                                       \
			fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); \
			exit(1);                                                \
		}                                                               \
	} while (0)

struct expect {
	const char *kind;
	unsigned long long allocs, frees, failed, alloc_bytes, live_bytes;
};
static struct expect ex[8];
static int nr_ex;

static struct expect *kind(const char *name)
{
	for (int i = 0; i < nr_ex; i++)
		if (!strcmp(ex[i].kind, name))
			return &ex[i];
	ex[nr_ex].kind = name;
	return &ex[nr_ex++];
}

static void alloc_ok(const char *k, unsigned long long n)
{
	kind(k)->allocs++;
	kind(k)->alloc_bytes += n;
	kind(k)->live_bytes += n;
}

static void free_ok(const char *k, unsigned long long n)
{
	kind(k)->frees++;
	kind(k)->live_bytes -= n;
}

static void fifo(const char *path, const char *mode)
{
	FILE *f = fopen(path, mode);
	char c;

	if (!f)
		exit(1);
	if (*mode == 'w')
		fputs("ready\n", f);
	else if (fread(&c, 1, 1, f) != 1)
		c = 0;
	fclose(f);
}

__global__ void add_one(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

__attribute__((noinline)) void *alloc_weights(size_t n)
{
	void *p;

	CK(cudaMalloc(&p, n));
	alloc_ok("device", n);
	return p;
}

__attribute__((noinline)) cudaError_t alloc_too_much(size_t n)
{
	void *p;

	kind("device")->failed++;
	return cudaMalloc(&p, n);
}

int main(int argc, char **argv)
{
	const size_t MIB = 1 << 20;
	void *p[8], *host, *managed, *async;
	cudaStream_t s;
	size_t gran, fr, total;

	if (argc != 5)
		return 2;
	/* context, stream, module: set up before the tracer counts */
	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	CK(cudaStreamCreate(&s));
	CUmemAllocationProp prop = {};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	fifo(argv[1], "w");
	fifo(argv[2], "r");

	for (int i = 0; i < 8; i++)
		p[i] = alloc_weights((i + 1) * MIB);
	CK(cudaMallocHost(&host, 3 * MIB));
	alloc_ok("host-pinned", 3 * MIB);
	CK(cudaMallocManaged(&managed, 4 * MIB));
	alloc_ok("managed", 4 * MIB);
	CK(cudaMallocAsync(&async, 5 * MIB, s));
	alloc_ok("device", 5 * MIB);
	CK(cudaFreeAsync(async, s));
	free_ok("device", 5 * MIB);
	CK(cudaStreamSynchronize(s));

	/* VMM, as llama.cpp's pool grows: reserve, create, map, then shrink */
	CUdeviceptr va;
	CUmemGenericAllocationHandle h[4];
	size_t chunk = (2 * MIB + gran - 1) / gran * gran;
	CK(cuMemAddressReserve(&va, 4 * chunk, 0, 0, 0));
	alloc_ok("va-reserved", 4 * chunk);
	for (int i = 0; i < 4; i++) {
		CK(cuMemCreate(&h[i], chunk, &prop, 0));
		alloc_ok("vmm-physical", chunk);
		CK(cuMemMap(va + i * chunk, chunk, 0, h[i], 0));
		alloc_ok("vmm-mapped", chunk);
	}
	CUmemAccessDesc acc = {};
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CK(cuMemSetAccess(va, 4 * chunk, &acc, 1));
	CK(cuMemUnmap(va + 3 * chunk, chunk));
	free_ok("vmm-mapped", chunk);
	CK(cuMemRelease(h[3]));
	free_ok("vmm-physical", chunk);

	/* graphs: capture once, instantiate five times, destroy two */
	cudaGraph_t graph;
	cudaGraphExec_t exec[5];
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	add_one<<<1, 64, 0, s>>>((float *)p[0], 64);
	CK(cudaStreamEndCapture(s, &graph));
	for (int i = 0; i < 5; i++) {
		CK(cudaGraphInstantiate(&exec[i], graph, 0));
		alloc_ok("graph-exec", 0);
	}
	CK(cudaGraphLaunch(exec[0], s));
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < 2; i++) {
		CK(cudaGraphExecDestroy(exec[i]));
		free_ok("graph-exec", 0);
	}
	CK(cudaMemGetInfo(&fr, &total));
	for (int i = 0; i < 4; i++) {
		CK(cudaFree(p[i]));
		free_ok("device", (i + 1) * MIB);
	}
	CK(cudaFreeHost(host));
	free_ok("host-pinned", 3 * MIB);
	if (alloc_too_much(1ull << 50) != cudaErrorMemoryAllocation)
		return 1;
	cudaGetLastError();

	FILE *f = fopen(argv[3], "w");
	fprintf(f, "{\"api\": \"CUDA\", \"total_bytes\": %zu, \"by_kind\": [", total);
	for (int i = 0; i < nr_ex; i++)
		fprintf(f,
			"%s{\"kind\": \"%s\", \"allocs\": %llu, \"frees\": %llu, \"failed\": %llu, "
			"\"alloc_bytes\": %llu, \"live_bytes\": %llu}",
			i ? ", " : "", ex[i].kind, ex[i].allocs, ex[i].frees, ex[i].failed,
			ex[i].alloc_bytes, ex[i].live_bytes);
	fprintf(f, "]}\n");
	fclose(f);
	fifo(argv[4], "r"); /* the tracer reports while everything is live */
	return 0;
}
