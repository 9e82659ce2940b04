// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CFI check: owns the bounded decoder that walks every .eh_frame and
 * .debug_frame entry libdw would read, and .eh_frame_hdr's table, and the
 * copy of a file's loaded program headers and those sections into a memfd,
 * which is all libdw is given: libdw (0.188) trusts CFI, and a target's CFI
 * is hostile input (cfi_check.h says what libdw would do with it). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <search.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include "cfi_check.h"

/* x86-64's DWARF register numbers stop below 150 (the psABI's k0-k7 are
 * 118-125), arm64's below 128 (SVE's p0-p15, z0-z31); libdw makes each
 * frame state as long as the largest named */
#define REGS_MAX 256
/* the files this build's unwinder reads: the machine it runs on */
#if defined(__aarch64__)
#define CFI_MACHINE EM_AARCH64
#define CFI_MACHINE_NAME "arm64"
#else
#define CFI_MACHINE EM_X86_64
#define CFI_MACHINE_NAME "x86-64"
#endif
/* compilers' CFI expressions are a few bytes; libdwfl stops at 4,096 steps
 * (and leaks), which forward-only branches in 512 bytes cannot reach */
#define EXPR_MAX 512
/* DW_CFA_remember_state copies the whole state; compilers nest one or two */
#define NEST_MAX 64
/* the most bytes of one section copied (large libraries' .eh_frame is a
 * few MiB) */
#define SECTION_MAX (64u << 20)

struct reader {
	const uint8_t *p, *end;
};

struct check {
	const unsigned char *ident; /* for dwarf_next_cfi */
	Elf_Data data;
	bool eh;
	const char *name;
	Dwarf_Off entry; /* the entry being checked */
	const char *kind;
	void *cies;	 /* tsearch tree of struct cie_seen */
	Dwarf_Off *fdes; /* the FDEs' offsets, ascending */
	size_t nfdes, fdes_cap;
	char *why;
	size_t len;
};

struct cie_seen {
	Dwarf_Off off;
	int ok; /* 0: checked, 1: not a CIE (libdw skips its FDEs) */
	uint8_t enc;
	bool sized;
};

static int fail(struct check *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(c->why, c->len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < c->len)
		snprintf(c->why + n, c->len - n, " in the %s at %#llx of %s", c->kind,
			 (unsigned long long)c->entry, c->name);
	return -1;
}

/* at most 10 bytes, as libdw reads; a value past 64 bits reads as ~0 */
static bool leb(struct reader *r, uint64_t *v)
{
	unsigned int i;

	*v = 0;
	for (i = 0; i < 10 && r->p < r->end; i++) {
		uint8_t b = *r->p++;

		if (i < 9 || !(b & 0x7e))
			*v |= (uint64_t)(b & 0x7f) << (7 * i);
		else
			*v = ~0ull;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool skip(struct reader *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	r->p += n;
	return true;
}

/* the bytes of a value of encoding enc (DW_EH_PE_*) */
static bool skip_encoded(struct reader *r, uint8_t enc)
{
	uint64_t v;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return skip(r, 8);
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return skip(r, 2);
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return skip(r, 4);
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		return leb(r, &v);
	default:
		return false;
	}
}

/* an encoding libdw reads addresses in: no indirection, no alignment */
static bool address_encoding(uint8_t enc)
{
	uint8_t size = enc & 0x0f;

	return !(enc & DW_EH_PE_indirect) && (enc & 0x70) <= DW_EH_PE_funcrel &&
	       (size <= DW_EH_PE_udata8 || (size >= DW_EH_PE_sleb128 && size <= DW_EH_PE_sdata8));
}

/* A DWARF expression of a rule: only the operations libdwfl's expr_eval
 * knows (any other returns without freeing its stack), branches forward
 * only (so it ends within its length, not at the step limit) */
static int expr_check(struct check *c, struct reader *in)
{
	struct reader r;
	uint64_t n, v;

	if (!leb(in, &n) || n > (uint64_t)(in->end - in->p))
		return fail(c, "an expression runs past its entry");
	if (n > EXPR_MAX)
		return fail(c, "an expression of %llu bytes, more than %d", (unsigned long long)n,
			    EXPR_MAX);
	r.p = in->p;
	r.end = in->p + n;
	in->p += n;
	while (r.p < r.end) {
		uint8_t op = *r.p++;
		bool ok = true;

		if ((op >= DW_OP_lit0 && op <= DW_OP_lit31) ||
		    (op >= DW_OP_reg0 && op <= DW_OP_reg31))
			continue;
		if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
			ok = leb(&r, &v);
		} else {
			switch (op) {
			case DW_OP_addr:
			case DW_OP_const8u:
			case DW_OP_const8s:
				ok = skip(&r, 8);
				break;
			case DW_OP_const1u:
			case DW_OP_const1s:
			case DW_OP_pick:
			case DW_OP_deref_size:
				ok = skip(&r, 1);
				break;
			case DW_OP_const2u:
			case DW_OP_const2s:
				ok = skip(&r, 2);
				break;
			case DW_OP_const4u:
			case DW_OP_const4s:
				ok = skip(&r, 4);
				break;
			case DW_OP_constu:
			case DW_OP_consts:
			case DW_OP_plus_uconst:
			case DW_OP_regx:
				ok = leb(&r, &v);
				break;
			case DW_OP_bregx:
				ok = leb(&r, &v) && leb(&r, &v);
				break;
			case DW_OP_skip:
			case DW_OP_bra:
				ok = r.end - r.p >= 2;
				if (ok && (int16_t)(r.p[0] | r.p[1] << 8) < 0)
					return fail(c, "an expression branches back (DW_OP_%s %d)",
						    op == DW_OP_skip ? "skip" : "bra",
						    (int16_t)(r.p[0] | r.p[1] << 8));
				r.p += ok ? 2 : 0;
				break;
			case DW_OP_deref:
			case DW_OP_dup:
			case DW_OP_drop:
			case DW_OP_over:
			case DW_OP_swap:
			case DW_OP_rot:
			case DW_OP_abs:
			case DW_OP_and:
			case DW_OP_div:
			case DW_OP_minus:
			case DW_OP_mod:
			case DW_OP_mul:
			case DW_OP_neg:
			case DW_OP_not:
			case DW_OP_or:
			case DW_OP_plus:
			case DW_OP_shl:
			case DW_OP_shr:
			case DW_OP_shra:
			case DW_OP_xor:
			case DW_OP_eq:
			case DW_OP_ge:
			case DW_OP_gt:
			case DW_OP_le:
			case DW_OP_lt:
			case DW_OP_ne:
			case DW_OP_nop:
				break;
			default:
				return fail(
					c,
					"an expression has operation %#x, which libdwfl does not evaluate",
					op);
			}
		}
		if (!ok)
			return fail(c, "an expression's operation %#x runs past its end", op);
	}
	return 0;
}

static int reg_check(struct check *c, uint64_t reg)
{
	if (reg >= REGS_MAX)
		return fail(c,
			    "register %llu is beyond " CFI_MACHINE_NAME
			    "'s DWARF registers (fewer than %d)",
			    (unsigned long long)reg, REGS_MAX);
	return 0;
}

/* the CFA instructions [p, end) as libdw's execute_cfi reads them */
static int insns_check(struct check *c, const uint8_t *p, const uint8_t *end, uint8_t enc)
{
	struct reader r = { p, end };
	unsigned int depth = 0;

	while (r.p < r.end) {
		uint8_t op = *r.p++;
		uint64_t reg = 0, v;
		bool ok = true;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
		case DW_CFA_restore:
			continue;
		case DW_CFA_offset:
			if (!leb(&r, &v))
				return fail(c, "a rule runs past its entry");
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			ok = skip_encoded(&r, enc);
			break;
		case DW_CFA_advance_loc1:
			ok = skip(&r, 1);
			break;
		case DW_CFA_advance_loc2:
			ok = skip(&r, 2);
			break;
		case DW_CFA_advance_loc4:
			ok = skip(&r, 4);
			break;
		case DW_CFA_MIPS_advance_loc8:
			ok = skip(&r, 8);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_val_offset:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset_sf:
		case DW_CFA_def_cfa:
			ok = leb(&r, &reg) && leb(&r, &v);
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			ok = leb(&r, &reg);
			break;
		case DW_CFA_register:
			ok = leb(&r, &reg) && leb(&r, &v);
			if (ok && reg_check(c, v))
				return -1;
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			ok = leb(&r, &v);
			break;
		case DW_CFA_remember_state:
			if (++depth > NEST_MAX)
				return fail(c, "states are remembered %u deep, more than %d", depth,
					    NEST_MAX);
			break;
		case DW_CFA_restore_state:
			depth -= depth > 0;
			break;
		case DW_CFA_def_cfa_expression:
			if (expr_check(c, &r))
				return -1;
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!leb(&r, &reg))
				return fail(c, "a rule runs past its entry");
			if (reg_check(c, reg) || expr_check(c, &r))
				return -1;
			break;
		default:
			return fail(c, "CFA instruction %#x is unknown", op);
		}
		if (!ok)
			return fail(c, "CFA instruction %#x runs past its entry", op);
		if (reg_check(c, reg))
			return -1;
	}
	return 0;
}

/* a CIE's augmentation as libdw's intern_new_cie reads it (which does not
 * bound its reads by the augmentation's length), its FDE address encoding
 * and its initial instructions */
static int cie_check(struct check *c, const Dwarf_CIE *cie, uint8_t *enc, bool *sized)
{
	const char *a = cie->augmentation;
	struct reader r = { cie->augmentation_data,
			    cie->augmentation_data + cie->augmentation_data_size };

	*enc = DW_EH_PE_absptr;
	*sized = *a == 'z';
	if (*a && *a != 'z')
		return fail(c, "augmentation \"%.16s\" is not read here", a);
	for (a += *sized; *a; a++) {
		uint8_t e;

		if (*a != 'L' && *a != 'R' && *a != 'P')
			continue;
		if (r.p >= r.end)
			return fail(c, "augmentation data is shorter than \"%.16s\" says",
				    cie->augmentation);
		e = *r.p++;
		if (*a == 'R')
			*enc = e;
		if (*a == 'P' && !skip_encoded(&r, e))
			return fail(c, "the personality's encoding %#x is not read here", e);
	}
	if (!address_encoding(*enc))
		return fail(c, "FDE address encoding %#x is not read here", *enc);
	if (reg_check(c, cie->return_address_register))
		return -1;
	return insns_check(c, cie->initial_instructions, cie->initial_instructions_end, *enc);
}

static int by_off(const void *a, const void *b)
{
	const struct cie_seen *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* the CIE at off, checked once */
static const struct cie_seen *cie_at(struct check *c, Dwarf_Off off)
{
	struct cie_seen key = { .off = off }, *s, **found;
	Dwarf_CFI_Entry e;
	Dwarf_Off next = off, entry = c->entry;
	const char *kind = c->kind;
	int rc;

	found = tfind(&key, &c->cies, by_off);
	if (found)
		return (*found)->ok < 0 ? NULL : *found;
	s = calloc(1, sizeof(*s));
	if (s)
		s->off = off;
	if (!s || !tsearch(s, &c->cies, by_off)) {
		free(s);
		snprintf(c->why, c->len, "out of memory");
		return NULL;
	}
	rc = dwarf_next_cfi(c->ident, &c->data, c->eh, off, &next, &e);
	if (rc || !dwarf_cfi_cie_p(&e)) {
		s->ok = 1;
		return s;
	}
	c->entry = off;
	c->kind = "CIE";
	rc = cie_check(c, &e.cie, &s->enc, &s->sized);
	c->entry = entry;
	c->kind = kind;
	if (rc) {
		s->ok = -1;
		return NULL;
	}
	return s;
}

static int fde_check(struct check *c, const Dwarf_FDE *fde)
{
	const struct cie_seen *cie = cie_at(c, fde->CIE_pointer);
	struct reader r = { fde->start, fde->end };
	uint64_t n;

	if (!cie)
		return -1;
	if (cie->ok == 1)
		return 0; /* libdw cannot use it */
	if (!skip_encoded(&r, cie->enc) || !skip_encoded(&r, cie->enc & 0x0f))
		return fail(c, "its addresses run past its end");
	if (cie->sized && (!leb(&r, &n) || !skip(&r, n)))
		return fail(c, "its augmentation data runs past its end");
	if (c->nfdes == c->fdes_cap) {
		size_t cap = c->fdes_cap ? 2 * c->fdes_cap : 256;
		Dwarf_Off *fdes = realloc(c->fdes, cap * sizeof(*fdes));

		if (!fdes)
			return fail(c, "out of memory");
		c->fdes = fdes;
		c->fdes_cap = cap;
	}
	c->fdes[c->nfdes++] = c->entry;
	return insns_check(c, r.p, r.end, cie->enc);
}

/* every entry libdw's linear search reads, and every CIE they name */
static int walk(struct check *c)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int rc;

	for (;;) {
		next = off;
		rc = dwarf_next_cfi(c->ident, &c->data, c->eh, off, &next, &e);
		if (rc > 0 || (rc < 0 && next == off) || next <= off)
			return 0;
		if (rc == 0) {
			c->entry = off;
			if (dwarf_cfi_cie_p(&e)) {
				if (!cie_at(c, off))
					return -1;
			} else {
				c->kind = "FDE";
				if (fde_check(c, &e.fde))
					return -1;
			}
		}
		off = next;
	}
}

static void check_init(struct check *c, const void *buf, size_t size, bool eh, char *why,
		       size_t len)
{
	static const unsigned char ident[EI_NIDENT] = { ELFMAG0,    ELFMAG1,	 ELFMAG2,   ELFMAG3,
							ELFCLASS64, ELFDATA2LSB, EV_CURRENT };

	memset(c, 0, sizeof(*c));
	c->ident = ident;
	c->data.d_buf = (void *)buf;
	c->data.d_size = size;
	c->data.d_type = ELF_T_BYTE;
	c->eh = eh;
	c->name = eh ? ".eh_frame" : ".debug_frame";
	c->kind = "entry";
	c->why = why;
	c->len = len;
}

static void check_done(struct check *c)
{
	tdestroy(c->cies, free);
	free(c->fdes);
}

static int by_fde(const void *a, const void *b)
{
	const Dwarf_Off *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* .eh_frame_hdr's table, which libdw follows to an FDE at any offset: each
 * must be one of those checked */
static int table_check(struct check *c, const uint8_t *hdr, size_t size, uint64_t hdr_vaddr,
		       uint64_t eh_vaddr)
{
	struct reader r = { hdr, hdr + size };
	uint32_t count, i;

	c->name = ".eh_frame_hdr";
	c->kind = "table";
	if (size < 4 || hdr[0] != 1 || hdr[1] == DW_EH_PE_omit)
		return 0; /* libdw reads no .eh_frame then */
	r.p += 4;
	if (!skip_encoded(&r, hdr[1]) || (hdr[1] & 0x0f) == DW_EH_PE_uleb128 ||
	    (hdr[1] & 0x0f) == DW_EH_PE_sleb128)
		return fail(c, "its .eh_frame pointer's encoding %#x is not read here", hdr[1]);
	if (hdr[2] == DW_EH_PE_omit || hdr[3] == DW_EH_PE_omit ||
	    (hdr[3] & ~DW_EH_PE_signed) == DW_EH_PE_uleb128)
		return 0; /* no table */
	if (hdr[2] != DW_EH_PE_udata4 || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return fail(c, "its encodings %#x, %#x are not read here", hdr[2], hdr[3]);
	if (r.end - r.p < 4)
		return 0;
	memcpy(&count, r.p, 4);
	r.p += 4;
	if (!count || count > (size_t)(r.end - r.p) / 8)
		return 0; /* libdw refuses it */
	for (i = 0; i < count; i++, r.p += 8) {
		int32_t fde;
		Dwarf_Off off;

		memcpy(&fde, r.p + 4, 4);
		off = hdr_vaddr + (int64_t)fde - eh_vaddr;
		if (!bsearch(&off, c->fdes, c->nfdes, sizeof(*c->fdes), by_fde)) {
			c->entry = (Dwarf_Off)(r.p - hdr);
			return fail(c, "entry %u names an FDE at %#llx that is not one", i,
				    (unsigned long long)off);
		}
	}
	return 0;
}

int cfi_check__section(const void *buf, size_t size, int eh, unsigned long long vaddr, char *why,
		       size_t len)
{
	struct check c;
	int rc;

	(void)vaddr;
	check_init(&c, buf, size, eh, why, len);
	rc = walk(&c);
	check_done(&c);
	return rc;
}

/* the sections copied, in this order */
static const char *const kept[] = { ".eh_frame", ".eh_frame_hdr", ".debug_frame" };
#define NKEPT (sizeof(kept) / sizeof(kept[0]))

struct image {
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	size_t nph;
	Elf64_Shdr sh[NKEPT];
	void *data[NKEPT];
	size_t size[NKEPT];
};

/* a .debug_frame compressed with zlib, inflated within SECTION_MAX (libdw
 * 0.188 reads no other compression) */
static void *inflated(Elf_Data *raw, size_t *size)
{
	Elf64_Chdr ch;
	uLongf n;
	void *out;

	if (!raw || raw->d_size < sizeof(ch))
		return NULL;
	memcpy(&ch, raw->d_buf, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB || !ch.ch_size || ch.ch_size > SECTION_MAX)
		return NULL;
	n = ch.ch_size;
	out = malloc(n);
	if (out && (uncompress(out, &n, (const Bytef *)raw->d_buf + sizeof(ch),
			       raw->d_size - sizeof(ch)) != Z_OK ||
		    n != ch.ch_size)) {
		free(out);
		return NULL;
	}
	*size = n;
	return out;
}

/* the program headers (the loaded ones) and kept sections of elf, copied */
static int image_read(Elf *elf, struct image *im, char *why, size_t len)
{
	size_t i, k, n, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Phdr ph;
	GElf_Shdr sh;

	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 || !elf64_getehdr(elf) ||
	    elf64_getehdr(elf)->e_machine != CFI_MACHINE ||
	    elf64_getehdr(elf)->e_ident[EI_DATA] != ELFDATA2LSB) {
		snprintf(why, len, "it is not a 64-bit " CFI_MACHINE_NAME " ELF file");
		return -1;
	}
	im->eh = *elf64_getehdr(elf);
	if (elf_getphdrnum(elf, &n) || n > 4096 || !(im->ph = calloc(n + 1, sizeof(*im->ph)))) {
		snprintf(why, len, "its program headers cannot be read");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			memcpy(&im->ph[im->nph++], &ph, sizeof(ph));
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0; /* no sections: libdw gets no CFI, frame pointers are followed */
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *raw;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (k = 0; k < NKEPT && strcmp(name, kept[k]); k++)
			;
		if (k == NKEPT || im->data[k]) /* libdw reads the first */
			continue;
		if (sh.sh_size > SECTION_MAX) {
			snprintf(why, len, "its %s has %llu bytes, more than %u", name,
				 (unsigned long long)sh.sh_size, SECTION_MAX);
			return -1;
		}
		raw = elf_rawdata(scn, NULL);
		if (k == 2 && (sh.sh_flags & SHF_COMPRESSED)) {
			im->data[k] = inflated(raw, &im->size[k]);
			if (!im->data[k])
				continue; /* as libdw, which would not read it */
		} else if (raw && raw->d_size == sh.sh_size) {
			im->data[k] = malloc(sh.sh_size ? sh.sh_size : 1);
			if (!im->data[k])
				continue;
			if (sh.sh_size)
				memcpy(im->data[k], raw->d_buf, sh.sh_size);
			im->size[k] = sh.sh_size;
		} else {
			continue;
		}
		im->sh[k] = (Elf64_Shdr){
			.sh_type = SHT_PROGBITS,
			.sh_flags = sh.sh_flags & ~(GElf_Xword)SHF_COMPRESSED,
			.sh_addr = sh.sh_addr,
			.sh_size = im->size[k],
			.sh_addralign = 1,
		};
	}
	return 0;
}

/* .shstrtab's bytes: "\0" then each kept name, then its own */
static size_t strtab(char *buf, Elf64_Word *names)
{
	size_t k, n = 1;

	buf[0] = 0;
	for (k = 0; k <= NKEPT; k++) {
		const char *s = k < NKEPT ? kept[k] : ".shstrtab";

		names[k] = n;
		strcpy(buf + n, s);
		n += strlen(s) + 1;
	}
	return n;
}

static bool put(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w <= 0)
			return false;
		b += w;
		n -= w;
	}
	return true;
}

/* an ELF file of the loaded program headers and the kept sections */
static int image_write(struct image *im)
{
	Elf64_Shdr sh[NKEPT + 2] = { { 0 } };
	Elf64_Word names[NKEPT + 1];
	char str[64];
	size_t k, n = 1, off = sizeof(im->eh) + im->nph * sizeof(*im->ph),
		  nstr = strtab(str, names);
	int fd = memfd_create("gmt-cfi", MFD_CLOEXEC);
	static const char zeros[8];
	bool ok;

	if (fd < 0)
		return -1;
	for (k = 0; k < NKEPT; k++) {
		if (!im->data[k])
			continue;
		sh[n] = im->sh[k];
		sh[n].sh_name = names[k];
		sh[n].sh_offset = off;
		off += im->size[k];
		n++;
	}
	sh[n] = (Elf64_Shdr){ .sh_name = names[NKEPT],
			      .sh_type = SHT_STRTAB,
			      .sh_offset = off,
			      .sh_size = nstr,
			      .sh_addralign = 1 };
	off += nstr;
	im->eh.e_phoff = im->nph ? sizeof(im->eh) : 0;
	im->eh.e_phnum = im->nph;
	im->eh.e_phentsize = sizeof(*im->ph);
	im->eh.e_shoff = (off + 7) & ~7ul;
	im->eh.e_shnum = n + 1;
	im->eh.e_shentsize = sizeof(*sh);
	im->eh.e_shstrndx = n;
	ok = put(fd, &im->eh, sizeof(im->eh)) && put(fd, im->ph, im->nph * sizeof(*im->ph));
	for (k = 0; ok && k < NKEPT; k++)
		if (im->data[k])
			ok = put(fd, im->data[k], im->size[k]);
	ok = ok && put(fd, str, nstr) && put(fd, zeros, im->eh.e_shoff - off) &&
	     put(fd, sh, (n + 1) * sizeof(*sh));
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

static int image_check(struct image *im, char *why, size_t len)
{
	struct check c;
	int rc = 0;

	if (im->data[0]) {
		check_init(&c, im->data[0], im->size[0], true, why, len);
		rc = walk(&c);
		if (!rc && im->data[1])
			rc = table_check(&c, im->data[1], im->size[1], im->sh[1].sh_addr,
					 im->sh[0].sh_addr);
		check_done(&c);
	}
	if (!rc && im->data[2]) {
		check_init(&c, im->data[2], im->size[2], false, why, len);
		rc = walk(&c);
		check_done(&c);
	}
	return rc;
}

int cfi_check__copy(int fd, char *why, size_t len)
{
	struct image im = { 0 };
	Elf *elf;
	size_t k;
	int out = -1;

	elf_version(EV_CURRENT);
	/* read, not mapped: the file is the target's, which may cut it short */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		snprintf(why, len, "it is not an ELF file: %s", elf_errmsg(-1));
	else if (!image_read(elf, &im, why, len) && !image_check(&im, why, len) &&
		 (out = image_write(&im)) < 0)
		snprintf(why, len, "its copy cannot be made: %m");
	elf_end(elf);
	for (k = 0; k < NKEPT; k++)
		free(im.data[k]);
	free(im.ph);
	return out;
}
