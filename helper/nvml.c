// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gpumemtrace-nvml: the NVIDIA driver's own account of device memory, by
 * process, through NVML. Dynamically linked, so it can dlopen
 * libnvidia-ml.so.1 (a static gpumemtrace cannot); nothing of NVIDIA's is
 * needed to build it. Memory the CUDA API calls do not show (graphs,
 * contexts, pools a library keeps) is in these figures.
 *
 * usage: gpumemtrace-nvml
 * prints "ok DEVICES" or "error TEXT" and then, for each line read on
 * stdin, one sample: "dev I TOTAL FREE NAME" per device, "clk I SM_MHZ
 * SM_MAX_MHZ REASONS TEMP_C POWER_MW UTIL_GPU UTIL_MEM VALID" after it
 * (how fast it runs and why not faster; VALID: which of them NVML gave,
 * a bit each from SM_MHZ on), "proc I PID USED" per process on it, then
 * "end". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* the few NVML types used, as nvml.h declares them */
typedef void *nvml_device;
struct nvml_memory {
	unsigned long long total, free, used;
};
struct nvml_utilization {
	unsigned int gpu, memory;
};
struct nvml_process {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};

#define MAX_DEVICES 16
#define MAX_PROCS 256

static int (*init)(void);
static int (*count)(unsigned int *);
static int (*handle)(unsigned int, nvml_device *);
static int (*meminfo)(nvml_device, struct nvml_memory *);
static int (*name)(nvml_device, char *, unsigned int);
static int (*procs)(nvml_device, unsigned int *, struct nvml_process *);
static const char *(*error)(int);
/* optional: how fast it runs (any may be missing in an old driver) */
static int (*clock)(nvml_device, int, unsigned int *);
static int (*max_clock)(nvml_device, int, unsigned int *);
static int (*reasons)(nvml_device, unsigned long long *);
static int (*temperature)(nvml_device, int, unsigned int *);
static int (*power)(nvml_device, unsigned int *);
static int (*utilization)(nvml_device, struct nvml_utilization *);

#define NVML_CLOCK_SM 1
#define NVML_TEMPERATURE_GPU 0

/* "clk" line: its SM clock and why it is held down */
static void clocks(unsigned int i, nvml_device d)
{
	unsigned int sm = 0, smax = 0, t = 0, mw = 0, valid = 0;
	unsigned long long why = 0;
	struct nvml_utilization u = { 0, 0 };

	if (clock && !clock(d, NVML_CLOCK_SM, &sm) && max_clock &&
	    !max_clock(d, NVML_CLOCK_SM, &smax))
		valid |= 1;
	if (reasons && !reasons(d, &why))
		valid |= 2;
	if (temperature && !temperature(d, NVML_TEMPERATURE_GPU, &t))
		valid |= 4;
	if (power && !power(d, &mw))
		valid |= 8;
	if (utilization && !utilization(d, &u))
		valid |= 16;
	printf("clk %u %u %u %llu %u %u %u %u %u\n", i, sm, smax, why, t, mw, u.gpu, u.memory,
	       valid);
}

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);

	return p || !b ? p : dlsym(lib, b);
}

static void sample(unsigned int n)
{
	static struct nvml_process v[MAX_PROCS];
	struct nvml_memory m;
	char nm[96];
	unsigned int i, j, k;
	nvml_device d;

	for (i = 0; i < n; i++) {
		if (handle(i, &d) || meminfo(d, &m))
			continue;
		if (name(d, nm, sizeof(nm)))
			strcpy(nm, "?");
		for (j = 0; nm[j]; j++)
			if (nm[j] == '\n')
				nm[j] = ' ';
		printf("dev %u %llu %llu %s\n", i, m.total, m.free, nm);
		clocks(i, d);
		k = MAX_PROCS;
		if (procs(d, &k, v))
			continue;
		for (j = 0; j < k; j++)
			printf("proc %u %u %llu\n", i, v[j].pid, v[j].used);
	}
	printf("end\n");
	fflush(stdout);
}

int main(void)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	unsigned int n = 0;
	char line[16];
	int r;

	if (!lib) {
		printf("error libnvidia-ml.so.1 not found: no NVIDIA driver here\n");
		return 0;
	}
	init = sym(lib, "nvmlInit_v2", "nvmlInit");
	count = sym(lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	handle = sym(lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	meminfo = sym(lib, "nvmlDeviceGetMemoryInfo", NULL);
	name = sym(lib, "nvmlDeviceGetName", NULL);
	procs = sym(lib, "nvmlDeviceGetComputeRunningProcesses_v3",
		    "nvmlDeviceGetComputeRunningProcesses_v2");
	error = sym(lib, "nvmlErrorString", NULL);
	clock = sym(lib, "nvmlDeviceGetClockInfo", NULL);
	max_clock = sym(lib, "nvmlDeviceGetMaxClockInfo", NULL);
	reasons = sym(lib, "nvmlDeviceGetCurrentClocksEventReasons",
		      "nvmlDeviceGetCurrentClocksThrottleReasons");
	temperature = sym(lib, "nvmlDeviceGetTemperature", NULL);
	power = sym(lib, "nvmlDeviceGetPowerUsage", NULL);
	utilization = sym(lib, "nvmlDeviceGetUtilizationRates", NULL);
	if (!init || !count || !handle || !meminfo || !name || !procs || !error) {
		printf("error libnvidia-ml.so.1 lacks the calls used (too old a driver)\n");
		return 0;
	}
	if ((r = init()) || (r = count(&n))) {
		printf("error NVML: %s\n", error(r));
		return 0;
	}
	printf("ok %u\n", n > MAX_DEVICES ? MAX_DEVICES : n);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		sample(n > MAX_DEVICES ? MAX_DEVICES : n);
	return 0;
}
