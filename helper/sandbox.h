/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef GMT_HELPER_SANDBOX_H
#define GMT_HELPER_SANDBOX_H

/* the seccomp filter a driver runs under (helper/sandbox.c); needs
 * no_new_privs set first */
int sandbox__apply(const char **what);

#endif
