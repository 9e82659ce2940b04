// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* NVML: owns the gpumemtrace-nvml helper found beside the binary, which
 * reads the host's NVML, and the lines spoken over its stdin and stdout
 * ("s" asks; "dev" and "proc" lines answer until "end"), turned into a
 * GMT_EV_NVML record per device and traced process. A helper that is gone
 * or silent for 3 s is stopped for good. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "nvml.h"

#define HELPER "gpumemtrace-nvml"
#define TIMEOUT_MS 3000
#define MAX_DEVS 16

struct nvml {
	pid_t child;
	int in, out; /* the helper's stdin and stdout; -1 once it is gone */
	unsigned int nr_devs;
	char buf[8192];
	size_t len;
};

static int helper_path(char *buf, size_t size)
{
	char self[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(buf, size, "%s/" HELPER, self);
	return access(buf, X_OK);
}

static void gone(struct nvml *n)
{
	if (n->in >= 0)
		close(n->in); /* the helper ends at the end of its input */
	if (n->out >= 0)
		close(n->out);
	n->in = n->out = -1;
	if (n->child > 0) {
		kill(n->child, SIGKILL);
		waitpid(n->child, NULL, 0);
		n->child = 0;
	}
}

/* a line from the helper, or NULL when it is gone or too slow (then it
 * is stopped for good) */
static char *read_line(struct nvml *n, char *line, size_t size)
{
	struct pollfd pfd = { .fd = n->out, .events = POLLIN };
	char *nl;
	ssize_t r;

	while (!(nl = memchr(n->buf, '\n', n->len))) {
		if (n->out < 0 || n->len == sizeof(n->buf) || poll(&pfd, 1, TIMEOUT_MS) <= 0 ||
		    (r = read(n->out, n->buf + n->len, sizeof(n->buf) - n->len)) <= 0) {
			gone(n);
			return NULL;
		}
		n->len += r;
	}
	*nl = 0;
	size = (size_t)(nl - n->buf) + 1 < size ? (size_t)(nl - n->buf) + 1 : size;
	memcpy(line, n->buf, size - 1);
	line[size - 1] = 0;
	n->len -= nl + 1 - n->buf;
	memmove(n->buf, nl + 1, n->len);
	return line;
}

struct nvml *nvml__start(char *why, size_t size)
{
	char path[PATH_MAX], line[256];
	int in[2], out[2];
	struct nvml *n;

	if (helper_path(path, sizeof(path))) {
		snprintf(why, size, "the helper " HELPER " is not installed beside gpumemtrace");
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		snprintf(why, size, "%s", strerror(errno));
		free(n);
		return NULL;
	}
	n->in = in[1];
	n->out = out[0];
	n->child = fork();
	if (!n->child) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path, HELPER, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (n->child < 0) {
		snprintf(why, size, "starting " HELPER ": %s", strerror(errno));
		nvml__stop(n);
		return NULL;
	}
	if (!read_line(n, line, sizeof(line)) || sscanf(line, "ok %u", &n->nr_devs) != 1) {
		snprintf(why, size, "%s",
			 n->out >= 0 && !strncmp(line, "error ", 6) ? line + 6 :
								      HELPER " did not answer");
		nvml__stop(n);
		return NULL;
	}
	return n;
}

void nvml__sample(struct nvml *n, const __u32 *pids, size_t nr, gmt_sink_fn sink, void *ctx)
{
	struct gmt_nvml devs[MAX_DEVS];
	unsigned long long total, free_b, used, why;
	unsigned int idx, pid, nd = 0, sm, smax, temp, mw, ug, um, valid;
	__u64 *on = calloc(nr * MAX_DEVS + 1, sizeof(*on));
	char line[256];
	size_t i, k;
	int off;

	if (!n || !on || n->in < 0 || write(n->in, "s\n", 2) != 2) {
		free(on);
		return;
	}
	for (i = 0; i < nr * MAX_DEVS; i++)
		on[i] = GMT_NVML_NO_PROC;
	while (read_line(n, line, sizeof(line)) && strcmp(line, "end")) {
		if (sscanf(line, "dev %u %llu %llu %n", &idx, &total, &free_b, &off) == 3 &&
		    nd < MAX_DEVS && idx < MAX_DEVS) {
			event__init(&devs[nd].hdr, GMT_EV_NVML, sizeof(devs[nd]), event__now_ns(),
				    0);
			devs[nd].index = idx;
			devs[nd].total = total;
			devs[nd].free = free_b;
			snprintf(devs[nd].name, sizeof(devs[nd].name), "%s", line + off);
			nd++;
		} else if (sscanf(line, "clk %u %u %u %llu %u %u %u %u %u", &idx, &sm, &smax, &why,
				  &temp, &mw, &ug, &um, &valid) == 9 &&
			   nd && devs[nd - 1].index == idx) {
			/* the line after its device's */
			devs[nd - 1].sm_mhz = sm;
			devs[nd - 1].sm_max_mhz = smax;
			devs[nd - 1].clock_reasons = why;
			devs[nd - 1].temp_c = temp;
			devs[nd - 1].power_mw = mw;
			devs[nd - 1].util_gpu = ug;
			devs[nd - 1].util_memory = um;
			devs[nd - 1].clocks_valid = valid;
		} else if (sscanf(line, "proc %u %u %llu", &idx, &pid, &used) == 3 &&
			   idx < MAX_DEVS) {
			for (i = 0; i < nr; i++)
				if (pids[i] == pid)
					on[i * MAX_DEVS + idx] = used;
		}
	}
	for (k = 0; k < nd; k++)
		for (i = 0; i < nr; i++) {
			devs[k].hdr.pid = devs[k].hdr.tid = pids[i];
			devs[k].used = on[i * MAX_DEVS + devs[k].index];
			sink(ctx, &devs[k].hdr);
		}
	free(on);
}

void nvml__stop(struct nvml *n)
{
	if (!n)
		return;
	if (n->in >= 0)
		close(n->in);
	n->in = -1;
	if (n->child > 0) /* it ends at the end of its input */
		waitpid(n->child, NULL, 0);
	n->child = 0;
	gone(n);
	free(n);
}
