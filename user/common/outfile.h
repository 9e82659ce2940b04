/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* files the tracer writes, as root, where others may write too */
#ifndef GMT_OUTFILE_H
#define GMT_OUTFILE_H

#include <stddef.h>

/* NAME in dirfd (AT_FDCWD: a path) as a new regular file (O_EXCL, never
 * through a symlink), for writing, mode 0600. What is there already is
 * replaced only when it is a regular file of one link owned by root or by
 * the sudo user (the operator's own earlier run): unlinked, never truncated,
 * so that no one who holds it open reads what is written now. Anything else
 * (a FIFO, a symlink, a directory, another user's file) is refused. The fd,
 * or -1 with err saying what was refused and why. */
int outfile__create(int dirfd, const char *name, char *err, size_t size);

/* a directory for writing into, never through a symlink (trailing slashes
 * are dropped: they would follow one); created 0700 when missing */
int outfile__dir(const char *path, char *err, size_t size);

#endif
