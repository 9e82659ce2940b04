// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer over the unwinder (user/source/unwind.c with elfutils' libdwfl),
 * fed what a traced process controls: its call frame information (the
 * .eh_frame and .debug_frame of a code file), its registers and the stack
 * slice BPF sent. Each input becomes one small x86-64 ELF file in a memfd,
 * reported as the only module of a process, and one gmt_ustack unwound
 * against it. Layout (little-endian):
 *
 *   u8 flags   bit 0: the CFI bytes go to .debug_frame too; bit 1: only
 *              there; bit 2: rip as given, not inside the module
 *   u8 frames  the most frames asked for (0: 1)
 *   u16 pc     rip's offset in the module (unless bit 2)
 *   u16 stack  bytes of stack slice that follow (its size field says so;
 *              the record carries what the input has)
 *   u16 cfi    bytes of CFI that follow the slice (.eh_frame); the rest
 *              of the input is .debug_frame
 *   u64 regs[GMT_USTACK_REGS], the slice, the CFI
 *
 * Built by `make .output/tests/fuzz-unwind`; corpus from
 * tests/fuzz/unwind_corpus.py; run by test_fuzz_unwind_short. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/types.h>
#include "gmt_events.h"
#include "source/unwind.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define BASE 0x400000ull
#define SPAN 0x10000ull /* the module's loaded size */
#define TEXT_OFF 0x200u
#define TEXT_LEN 0x100u
#define HDR_LEN (8 + 8 * GMT_USTACK_REGS)

struct input {
	const unsigned char *eh, *debug;
	size_t eh_len, debug_len;
};

static void put(int fd, size_t off, const void *p, size_t n)
{
	if (n && pwrite(fd, p, n, off) != (ssize_t)n)
		abort();
}

/* an ELF file with .text, .eh_frame (loaded), .debug_frame, .shstrtab */
static int elf_file(const struct input *in)
{
	static const char names[] = "\0.text\0.eh_frame\0.debug_frame\0.shstrtab";
	size_t eh_off = TEXT_OFF + TEXT_LEN, debug_off = eh_off + in->eh_len;
	size_t names_off = debug_off + in->debug_len;
	size_t sh_off = (names_off + sizeof(names) + 7) & ~7ul;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_DYN,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_shoff = sh_off,
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = 1,
		.e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = 5,
		.e_shstrndx = 4,
	};
	Elf64_Phdr ph = {
		.p_type = PT_LOAD,
		.p_flags = PF_R | PF_X,
		.p_offset = 0,
		.p_vaddr = 0,
		.p_filesz = eh_off + in->eh_len,
		.p_memsz = SPAN,
		.p_align = 0x1000,
	};
	Elf64_Shdr sh[5] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
		  .sh_addr = TEXT_OFF, .sh_offset = TEXT_OFF, .sh_size = TEXT_LEN, .sh_addralign = 16 },
		{ .sh_name = 7, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_addr = eh_off,
		  .sh_offset = eh_off, .sh_size = in->eh_len, .sh_addralign = 1 },
		{ .sh_name = 17, .sh_type = SHT_PROGBITS, .sh_offset = debug_off,
		  .sh_size = in->debug_len, .sh_addralign = 1 },
		{ .sh_name = 30, .sh_type = SHT_STRTAB, .sh_offset = names_off,
		  .sh_size = sizeof(names), .sh_addralign = 1 },
	};
	unsigned char text[TEXT_LEN];
	int fd = memfd_create("fuzz-unwind", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	memset(text, 0xc3, sizeof(text)); /* ret */
	put(fd, 0, &eh, sizeof(eh));
	put(fd, sizeof(eh), &ph, sizeof(ph));
	put(fd, TEXT_OFF, text, sizeof(text));
	put(fd, eh_off, in->eh, in->eh_len);
	put(fd, debug_off, in->debug, in->debug_len);
	put(fd, names_off, names, sizeof(names));
	put(fd, sh_off, sh, sizeof(sh));
	return fd;
}

static void modules(void *src, __u32 pid, symbolizer_module_fn fn, void *arg)
{
	int fd = elf_file(src);

	(void)pid;
	fn("/fuzz/module.so", BASE, fd, arg);
}

/* unwinder__new's; the harness has no symbolizer */
void symbolizer__each_module(struct symbolizer *s, __u32 pid, symbolizer_module_fn fn, void *arg)
{
	(void)s;
	(void)pid;
	(void)fn;
	(void)arg;
	abort();
}

static struct gmt_ustack slice;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct input in = { 0 };
	struct unwinder *u;
	__u64 ips[128];
	size_t stack, cfi, have;
	unsigned int max, n;
	unsigned char flags;
	__u16 pc;

	if (size < HDR_LEN)
		return 0;
	flags = data[0];
	memcpy(&pc, data + 2, 2);
	memcpy(&slice.size, data + 4, 2);
	slice.size &= 0xffff;
	memcpy(&cfi, data + 6, 2);
	cfi &= 0xffff;
	max = data[1] ? data[1] : 1;
	if (max > sizeof(ips) / sizeof(ips[0]))
		max = sizeof(ips) / sizeof(ips[0]);
	memcpy(slice.regs, data + 8, sizeof(slice.regs));
	if (!(flags & 4))
		slice.regs[GMT_USTACK_PC] = BASE + pc % SPAN;
	data += HDR_LEN;
	size -= HDR_LEN;
	stack = slice.size < size ? slice.size : size;
	stack = stack < sizeof(slice.data) ? stack : sizeof(slice.data);
	memcpy(slice.data, data, stack);
	slice.hdr.pid = 1;
	slice.hdr.len = offsetof(struct gmt_ustack, data) + stack;
	data += stack;
	size -= stack;
	have = cfi < size ? cfi : size;
	in.eh = data;
	in.eh_len = flags & 2 ? 0 : have;
	in.debug = flags & 3 ? data : data + have;
	in.debug_len = flags & 3 ? have : size - have;
	u = unwinder__new_from(modules, &in);
	if (!u)
		abort();
	n = unwinder__unwind(u, &slice, ips, max);
	if (n > max)
		abort();
	if (getenv("FUZZ_UNWIND_PRINT"))
		fprintf(stderr, "%u frames, the innermost at %#llx\n", n, n ? (unsigned long long)ips[0] : 0ull);
	unwinder__free(u);
	return 0;
}
