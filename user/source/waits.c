// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What a process waits on, each interval, from the kernel's own counters:
 * its major faults (weights read back from the disk or swap), its threads'
 * time runnable but waiting for a CPU (schedstat), its CPU quota and how
 * often it was throttled, and memory, CPU and I/O pressure (PSI). And the
 * host's swap-ins and run queue. All of it is the kernel's text, read as
 * root from /proc and the cgroup files: nothing the target wrote. */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "waits.h"
#include "cgroup.h"
#include "procfs.h"

/* a process's threads read at most: past that the sum is of the first */
#define THREADS_MAX 1024

/* minflt, majflt, utime and stime of /proc/PID/stat (fields 10, 12, 14, 15) */
static bool read_stat(__u32 pid, struct gmt_proc_stat *e)
{
	unsigned long long v[6];
	char stat[1024], *p;
	double tick = 1e9 / sysconf(_SC_CLK_TCK);

	procfs__read(pid, "stat", stat, sizeof(stat));
	p = strrchr(stat, ')'); /* the name may hold spaces and parentheses */
	/* after the name: state ppid pgrp session tty tpgid flags, then these */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %llu %llu %llu %llu %llu", &v[0],
			 &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return false;
	e->minflt = v[0];
	e->majflt = v[2];
	e->cpu_ns = (__u64)((v[4] + v[5]) * tick);
	return true;
}

/* the sum over its threads of schedstat's time on a CPU and time waiting
 * for one (a thread that exited takes its part with it); each read by
 * openat on the task folder, a few microseconds a thread */
static void read_sched(__u32 pid, struct gmt_proc_stat *e)
{
	unsigned long long run, delay;
	char path[64], name[80], text[128];
	struct dirent *d;
	ssize_t n;
	int fd;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	while (dir && e->threads_read < THREADS_MAX && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(name, sizeof(name), "%.16s/schedstat", d->d_name);
		fd = openat(dirfd(dir), name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		if (n <= 0)
			continue;
		text[n] = 0;
		if (sscanf(text, "%llu %llu", &run, &delay) != 2)
			continue;
		e->run_ns += run;
		e->run_delay_ns += delay;
		e->threads_read++;
	}
	if (dir)
		closedir(dir);
	if (e->threads_read)
		e->flags |= GMT_PSTAT_SCHED;
}

/* read_bytes of /proc/PID/io: what it had read from storage */
static void read_io(__u32 pid, struct gmt_proc_stat *e)
{
	char text[512], *p;

	procfs__read(pid, "io", text, sizeof(text));
	p = strstr(text, "\nread_bytes: ");
	if (!p)
		return;
	e->read_bytes = strtoull(p + 13, NULL, 10);
	e->flags |= GMT_PSTAT_IO;
}

int waits__proc(__u32 pid, struct gmt_proc_stat *e)
{
	cpu_set_t set;

	if (!read_stat(pid, e))
		return -1;
	read_sched(pid, e);
	read_io(pid, e);
	cgroup__mem_stat(pid, e);
	if (!sched_getaffinity(pid, sizeof(set), &set))
		e->cpus_allowed = CPU_COUNT(&set);
	cgroup__cpu(pid, e);
	return 0;
}

/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=N" and the "full" line */
bool waits__psi(const char *text, __u64 *some, __u64 *full)
{
	const char *p;
	bool found = false;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *t = strstr(p, "total=");
		const char *nl = strchr(p, '\n');
		__u64 *v = !strncmp(p, "some ", 5) ? some : !strncmp(p, "full ", 5) ? full : NULL;

		if (!v || !t || (nl && t > nl))
			continue;
		*v = strtoull(t + 6, NULL, 10);
		found = true;
	}
	return found;
}

bool waits__host_psi(__u64 *mem_some, __u64 *mem_full, __u64 *cpu_some, __u64 *io_some,
		     __u64 *io_full)
{
	char text[512];
	__u64 unused = 0;
	bool ok;

	ok = procfs__read_file("/proc/pressure/memory", text, sizeof(text)) &&
	     waits__psi(text, mem_some, mem_full);
	if (procfs__read_file("/proc/pressure/cpu", text, sizeof(text)))
		waits__psi(text, cpu_some, &unused);
	if (procfs__read_file("/proc/pressure/io", text, sizeof(text)))
		waits__psi(text, io_some, io_full);
	return ok;
}

/* "KEY N" of /proc's line, into *v when the line is KEY's */
static bool key_value(const char *line, const char *key, __u64 *v)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) || line[n] != ' ')
		return false;
	*v = strtoull(line + n + 1, NULL, 10);
	return true;
}

void waits__host(struct gmt_host_stat *e)
{
	char line[256];
	__u64 v;
	FILE *f = fopen("/proc/vmstat", "re");

	/* about 180 lines: a prefix test each, not a scan */
	while (f && fgets(line, sizeof(line), f))
		if (line[0] == 'p' ? key_value(line, "pswpin", &e->pswpin) ||
					     key_value(line, "pswpout", &e->pswpout) ||
					     key_value(line, "pgmajfault", &e->pgmajfault) :
		    line[0] == 'w' ? key_value(line, "workingset_refault_file", &e->refault_file) ||
					     key_value(line, "workingset_refault_anon",
						       &e->refault_anon) :
				     false)
			continue;
	if (f)
		fclose(f);
	/* runnable now: the fourth field of /proc/loadavg, "3/456" (the
	 * reader itself is one of them), where /proc/stat is long on a large host */
	f = fopen("/proc/loadavg", "re");
	if (f && fscanf(f, "%*s %*s %*s %llu/", (unsigned long long *)&v) == 1)
		e->procs_running = v > 0 ? v - 1 : 0;
	if (f)
		fclose(f);
	e->cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
	if (waits__host_psi(&e->psi_mem_some_us, &e->psi_mem_full_us, &e->psi_cpu_some_us,
			    &e->psi_io_some_us, &e->psi_io_full_us))
		e->flags |= GMT_HSTAT_PSI;
}
