/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* user addresses of a live process -> symbol and module, with libelf; done at
 * record time so that a replay elsewhere shows the same frames */
#ifndef GMT_SYMBOLIZE_H
#define GMT_SYMBOLIZE_H

#include <stddef.h>
#include <linux/types.h>

struct symbolizer;

struct sym_result {
	char name[256];	  /* demangled; empty when no symbol covers the address */
	char module[128]; /* file name of the mapping; empty when not file-backed */
	__u64 off;	  /* from the symbol's start, or from the module's base */
};

/* debug_dir: where separate debug files live (NULL: /usr/lib/debug) */
struct symbolizer *symbolizer__new(const char *debug_dir);
void symbolizer__free(struct symbolizer *s);
/* forget what is known of pid's mappings: after exec or new code mappings */
void symbolizer__invalidate(struct symbolizer *s, __u32 pid);
/* read pid's code mappings and their symbols now, while the process lives:
 * what is read stays usable after it exits */
void symbolizer__refresh(struct symbolizer *s, __u32 pid);
/* each code file pid had mapped when last read (it may have exited since):
 * its path, its load bias (address minus ELF virtual address), and the
 * file opened, which fn owns */
typedef void (*symbolizer_module_fn)(const char *path, __u64 bias, int fd, void *arg);
void symbolizer__each_module(struct symbolizer *s, __u32 pid, symbolizer_module_fn fn, void *arg);
/* the code file an address is in: its name (as sym_result.module), build
 * id and the PT_LOAD segment holding it */
struct sym_module {
	char name[128];
	char build_id[128]; /* lowercase hex; empty: none */
	__u64 text_off, text_vaddr, text_size;
};
int symbolizer__module(struct symbolizer *s, __u32 pid, __u64 ip, struct sym_module *out);
/* 0, or -errno when the address is in no known mapping */
int symbolizer__resolve(struct symbolizer *s, __u32 pid, __u64 ip, struct sym_result *out);

#endif
