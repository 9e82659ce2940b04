// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A target that loads a library and holds it: dlopen(LIB), then "ready" into
 * the FIFO READY, then it waits until HOLD is written. Small enough to run in
 * a chroot of its own with nothing but the C library beside it.
 *   dlhold LIB READY HOLD */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char c;
	int fd;

	if (argc != 4 || !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "usage: dlhold LIB READY HOLD (%s)\n", dlerror());
		return 2;
	}
	fd = open(argv[2], O_WRONLY);
	if (fd < 0 || write(fd, "ready\n", 6) != 6)
		return 1;
	close(fd);
	fd = open(argv[3], O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) < 0)
		return 1;
	return 0;
}
