// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Output files: owns how every file the tracer writes (as root, where
 * others may write too) is made: new (O_EXCL), never through a symlink, mode
 * 0600. What is there is replaced only when it is the operator's own regular
 * file of one link, and then unlinked, never truncated, so that whoever
 * holds it open does not read the new run. Also outfile__dir's directories. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "fmt.h"
#include "outfile.h"

/* root's, or the user's who ran sudo (a trace file is given to them) */
static bool operators(uid_t uid)
{
	const char *sudo = getenv("SUDO_UID");

	return uid == geteuid() || (sudo && *sudo && uid == (uid_t)strtoul(sudo, NULL, 10));
}

static int create_new(int dirfd, const char *name)
{
	return openat(dirfd, name,
		      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
}

int outfile__create(int dirfd, const char *name, char *err, size_t size)
{
	struct stat st;
	int fd = create_new(dirfd, name);

	if (fd >= 0 || errno != EEXIST)
		goto out;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		fd = -1;
		goto out;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, size,
			 "cannot create %s: it is a symbolic link, and symbolic links are never "
			 "followed; remove it or choose another name",
			 name);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, size,
			 "cannot create %s: it is %s, not a regular file; remove it or choose "
			 "another name",
			 name, fmt_file_kind(st.st_mode));
		return -1;
	}
	if (!operators(st.st_uid)) {
		snprintf(err, size,
			 "cannot create %s: it is there already, owned by uid %u, not by us; "
			 "remove it or choose another name",
			 name, (unsigned int)st.st_uid);
		return -1;
	}
	if (st.st_nlink != 1) {
		snprintf(err, size,
			 "cannot create %s: it is there already with %lu hard links; remove it "
			 "or choose another name",
			 name, (unsigned long)st.st_nlink);
		return -1;
	}
	/* a new file, not the old one truncated: whoever holds that keeps it */
	if (unlinkat(dirfd, name, 0) && errno != ENOENT) {
		fd = -1;
		goto out;
	}
	fd = create_new(dirfd, name);
out:
	if (fd < 0) {
		snprintf(err, size, "cannot create %s: %s", name, strerror(errno));
		return -1;
	}
	/* writes block as usual; O_NONBLOCK was only for the open */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int outfile__dir(const char *path, char *err, size_t size)
{
	char *p = strdup(path);
	size_t n;
	int fd = -1;

	if (!p) {
		snprintf(err, size, "out of memory");
		return -1;
	}
	for (n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
		p[n - 1] = 0;
	if (mkdir(p, 0700) && errno != EEXIST)
		snprintf(err, size, "cannot create the directory %s: %s", p, strerror(errno));
	else if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		snprintf(err, size, "cannot open the directory %s: %s", p,
			 errno == ELOOP || errno == ENOTDIR ?
				 "it is a symbolic link or not a directory; refused" :
				 strerror(errno));
	free(p);
	return fd;
}
