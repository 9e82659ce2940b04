// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reuses a pid on purpose: waits (at most 10 s) until PID is free, then
 * starts COMMAND as a child with that very pid (clone3's set_tid, which
 * needs root) and waits for it. The tests make a traced process's pid come
 * back as another process, which a busy host does by chance.
 *
 *   pidat PID COMMAND [ARG...]     exit status: the command's; 125 when the
 *                                  pid never became free or was taken */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t want, child;
	struct clone_args args = { .exit_signal = SIGCHLD };
	struct timespec tick = { 0, 1000000 };
	int i, status;

	if (argc < 3 || (want = atoi(argv[1])) <= 1) {
		fprintf(stderr, "usage: %s PID COMMAND [ARG...]\n", argv[0]);
		return 2;
	}
	args.set_tid = (uintptr_t)&want;
	args.set_tid_size = 1;
	/* the old process may still be a zombie its parent has not reaped */
	for (i = 0; i < 10000 && (kill(want, 0) == 0 || errno != ESRCH); i++)
		nanosleep(&tick, NULL);
	child = syscall(SYS_clone3, &args, sizeof(args));
	if (child < 0) {
		fprintf(stderr, "pidat: clone3 with pid %d: %s\n", want, strerror(errno));
		return 125;
	}
	if (!child) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "pidat: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	if (waitpid(child, &status, 0) < 0)
		return 125;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
