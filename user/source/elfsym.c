// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ELF symbols for uprobes: owns elfsym__begin, the one way a target's ELF
 * files are read (pread, never mapped, tables bounded by ELFSYM_TABLE_MAX),
 * and the lookup of where named functions start (.dynsym first, then
 * .symtab), as the file offsets a uprobe is put at. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include "elfsym.h"

Elf *elfsym__begin(int fd)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return NULL;
	}
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM ||
		     sh.sh_type == SHT_STRTAB || sh.sh_type == SHT_NOTE) &&
		    sh.sh_size > ELFSYM_TABLE_MAX) {
			elf_end(elf);
			return NULL;
		}
	return elf;
}

static __u64 vaddr_to_off(Elf *elf, __u64 vaddr)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	return 0;
}

static int scan(Elf *elf, Elf_Scn *scn, const char *const *names, size_t n, __u64 *offs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, k, nsyms, found = 0;
	GElf_Shdr sh;
	GElf_Sym sym;

	if (!data || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return 0;
	nsyms = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < nsyms; i++) {
		const char *name;
		int type;

		if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		for (k = 0; k < n; k++)
			if (!offs[k] && !strcmp(name, names[k])) {
				offs[k] = vaddr_to_off(elf, sym.st_value);
				found += offs[k] != 0;
			}
	}
	return found;
}

int elfsym__offsets(int fd, const char *const *names, size_t n, __u64 *offs)
{
	Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
	GElf_Shdr sh;
	int found = 0;
	Elf *elf;

	memset(offs, 0, n * sizeof(*offs));
	elf = elfsym__begin(fd);
	if (!elf)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM)
			dyn = scn;
		else if (sh.sh_type == SHT_SYMTAB)
			tab = scn;
	}
	if (dyn)
		found += scan(elf, dyn, names, n, offs);
	if (tab && (size_t)found < n)
		found += scan(elf, tab, names, n, offs);
	elf_end(elf);
	return found;
}
