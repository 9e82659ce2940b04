// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolizer: owns each process's code mappings (kept past its exit) and
 * each ELF file's function symbols, shared by device and inode; resolved at
 * record time so that a replay elsewhere shows the same frames. Symbols come
 * from .symtab, else a separate debug file (build id, .gnu_debuglink), else
 * .dynsym; the files are the very ones mapped, read as the target may. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <uthash.h>
#include "common/search.h"
#include "elfsym.h"
#include "procfs.h"
#include "symbolize.h"

struct elf_sym {
	__u64 addr, size;
	char *name;
};

/* one ELF file, keyed by device and inode so each process shares it */
struct elf_file {
	__u64 dev, ino;	  /* the key: both, side by side */
	GElf_Phdr *loads; /* PT_LOAD headers */
	size_t nr_loads;
	struct elf_sym *syms; /* functions, sorted by address */
	size_t nr_syms;
	char build_id[128]; /* hex; empty: none */
	UT_hash_handle hh;
};

struct mapping {
	__u64 start, end, pgoff, dev, ino;
	char *path;
};

struct proc_maps {
	__u32 pid;
	/* whose files the process may read: kept for when it has gone */
	struct procfs_cred cred;
	struct mapping *maps;
	size_t nr;
	UT_hash_handle hh;
};

struct symbolizer {
	struct proc_maps *procs; /* by pid (uthash) */
	struct elf_file *files;	 /* by device and inode (uthash) */
	char debug_dir[256];	 /* separate debug files, as gdb's debug-file-directory */
};

struct symbolizer *symbolizer__new(const char *debug_dir)
{
	struct symbolizer *s;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	s = calloc(1, sizeof(struct symbolizer));
	if (s)
		snprintf(s->debug_dir, sizeof(s->debug_dir), "%s",
			 debug_dir ? debug_dir : "/usr/lib/debug");
	return s;
}

static void maps_free(struct proc_maps *pm)
{
	size_t i;

	for (i = 0; i < pm->nr; i++)
		free(pm->maps[i].path);
	free(pm->maps);
	free(pm);
}

void symbolizer__invalidate(struct symbolizer *s, __u32 pid)
{
	struct proc_maps *pm;

	HASH_FIND(hh, s->procs, &pid, sizeof(pid), pm);
	if (pm) {
		HASH_DEL(s->procs, pm);
		maps_free(pm);
	}
}

static int parse_line(char *line, struct mapping *m)
{
	struct procfs_map pm;

	if (!procfs__map_line(line, &pm) || pm.perms[2] != 'x' || pm.path[0] != '/')
		return -1; /* only code from files can be symbolized */
	*m = (struct mapping){ .start = pm.start,
			       .end = pm.end,
			       .pgoff = pm.pgoff,
			       .dev = (__u64)pm.maj << 32 | pm.min,
			       .ino = pm.ino,
			       .path = strdup(pm.path) };
	return m->path ? 0 : -1;
}

static struct proc_maps *load_maps(struct symbolizer *s, __u32 pid)
{
	struct proc_maps *pm;
	char path[64], line[4096];
	size_t cap = 0;
	FILE *f;

	HASH_FIND(hh, s->procs, &pid, sizeof(pid), pm);
	if (pm)
		return pm;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		goto out;
	pm->pid = pid;
	procfs__cred(pid, &pm->cred);
	while (fgets(line, sizeof(line), f)) {
		struct mapping m;

		if (parse_line(line, &m))
			continue;
		if (pm->nr == cap) {
			struct mapping *p = realloc(pm->maps, (cap ? cap * 2 : 64) * sizeof(*p));

			if (!p) {
				free(m.path);
				break;
			}
			pm->maps = p;
			cap = cap ? cap * 2 : 64;
		}
		pm->maps[pm->nr++] = m;
	}
	HASH_ADD(hh, s->procs, pid, sizeof(pm->pid), pm);
out:
	fclose(f);
	return pm;
}

static int by_addr(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_symtab(struct elf_file *ef, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	struct elf_sym *v;

	if (!data || !n)
		return;
	v = calloc(n, sizeof(*v));
	if (!v)
		return;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		v[ef->nr_syms++] = (struct elf_sym){ sym.st_value, sym.st_size, strdup(name) };
	}
	qsort(v, ef->nr_syms, sizeof(*v), by_addr);
	ef->syms = v;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, out) || out->sh_type != type)
			continue;
		n = elf_strptr(elf, shstrndx, out->sh_name);
		if (!name || (n && !strcmp(n, name)))
			return scn;
	}
	return NULL;
}

/* the GNU build id as hex, from .note.gnu.build-id; false if none */
static bool build_id(Elf *elf, char *hex, size_t size)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, SHT_NOTE, ".note.gnu.build-id", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t off = 0, name_off, desc_off, i;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_descsz * 2 + 1 > size)
			continue;
		for (i = 0; i < nh.n_descsz; i++)
			sprintf(hex + 2 * i, "%02x", ((unsigned char *)d->d_buf)[desc_off + i]);
		return nh.n_descsz > 1;
	}
	return false;
}

/* .gnu_debuglink: the debug file's name (the CRC after it is not checked:
 * the build id, when there is one, is tried first) */
static bool debuglink(Elf *elf, char *name, size_t size)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, SHT_PROGBITS, ".gnu_debuglink", &sh);
	/* a name and its CRC: read whole, so no bigger than a name */
	Elf_Data *d = scn && sh.sh_size <= 4096 ? elf_getdata(scn, NULL) : NULL;

	if (!d || !d->d_size || !memchr(d->d_buf, 0, d->d_size))
		return false;
	snprintf(name, size, "%s", (const char *)d->d_buf);
	return name[0] && !strchr(name, '/');
}

static void read_best_symtab(struct elf_file *ef, Elf *elf)
{
	Elf_Scn *dyn, *tab;
	GElf_Shdr dyn_sh, tab_sh;

	tab = find_section(elf, SHT_SYMTAB, NULL, &tab_sh);
	dyn = find_section(elf, SHT_DYNSYM, NULL, &dyn_sh);
	if (tab)
		read_symtab(ef, elf, tab, &tab_sh);
	if (!ef->nr_syms && dyn) {
		free(ef->syms);
		ef->syms = NULL;
		read_symtab(ef, elf, dyn, &dyn_sh);
	}
}

/* a separate debug file's .symtab, for a stripped file: by build id under
 * the debug directory, then by .gnu_debuglink beside the file, in .debug/
 * and under the debug directory (as gdb looks), in the root of process
 * `root` (0: our own). */
static bool read_debug_file(struct symbolizer *s, struct elf_file *ef, Elf *elf,
			    const struct procfs_cred *cred, __u32 root, const char *path)
{
	char id[128], name[256], dir[2048], cand[3][6600];
	const char *slash = strrchr(path, '/');
	size_t i, n = 0;

	if (build_id(elf, id, sizeof(id)))
		snprintf(cand[n++], sizeof(cand[0]), "%s/.build-id/%.2s/%s.debug", s->debug_dir, id,
			 id + 2);
	if (slash && debuglink(elf, name, sizeof(name))) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		snprintf(cand[n++], sizeof(cand[0]), "%s/%s", dir, name);
		snprintf(cand[n++], sizeof(cand[0]), "%s/.debug/%s", dir, name);
	}
	for (i = 0; i < n; i++) {
		/* what the process names, read only as it could read it */
		int fd = procfs__open_as(cred, root, cand[i]);
		Elf *d;

		if (fd < 0)
			continue;
		d = elfsym__begin(fd);
		if (d) {
			read_best_symtab(ef, d);
			elf_end(d);
		}
		close(fd);
		if (ef->nr_syms)
			return true;
	}
	return false;
}

/* .symtab when the file has one (not stripped), else a separate debug
 * file's, else .dynsym */
static void load_elf(struct symbolizer *s, struct elf_file *ef, int fd,
		     const struct procfs_cred *cred, __u32 root, const char *path)
{
	GElf_Shdr sh;
	size_t i, n;
	Elf *elf;

	elf = elfsym__begin(fd);
	if (!elf)
		return;
	if (!elf_getphdrnum(elf, &n) && n) {
		ef->loads = calloc(n, sizeof(*ef->loads));
		for (i = 0; ef->loads && i < n; i++)
			if (gelf_getphdr(elf, i, &ef->loads[ef->nr_loads]) &&
			    ef->loads[ef->nr_loads].p_type == PT_LOAD)
				ef->nr_loads++;
	}
	if (!build_id(elf, ef->build_id, sizeof(ef->build_id)))
		ef->build_id[0] = 0;
	if (find_section(elf, SHT_SYMTAB, NULL, &sh) ||
	    !read_debug_file(s, ef, elf, cred, root, path))
		read_best_symtab(ef, elf);
	elf_end(elf);
}

/* m->path in this mount namespace, if it is the very file that was mapped */
static int open_same_file(const struct procfs_cred *cred, const struct mapping *m)
{
	struct stat st;
	int fd = procfs__open_as(cred, 0, m->path);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_ino != m->ino ||
	    ((__u64)major(st.st_dev) << 32 | minor(st.st_dev)) != m->dev) {
		close(fd);
		return -1;
	}
	return fd;
}

/* the very file of m: by map_files (even deleted, or in another mount
 * namespace), in the process's root, or the same file in our own view once
 * the process is gone; -1 when none */
static int open_mapping(const struct procfs_cred *cred, __u32 pid, const struct mapping *m)
{
	int fd = procfs__open_mapped(pid, m->start, m->end);

	if (fd < 0)
		fd = procfs__open_as(cred, pid, m->path);
	if (fd < 0)
		fd = open_same_file(cred, m);
	return fd;
}

/* the credentials pid's files are read with (unknown: none are) */
static const struct procfs_cred *cred_of(struct symbolizer *s, __u32 pid)
{
	static const struct procfs_cred unknown;
	struct proc_maps *pm;

	HASH_FIND(hh, s->procs, &pid, sizeof(pid), pm);
	return pm ? &pm->cred : &unknown;
}

static struct elf_file *get_elf(struct symbolizer *s, __u32 pid, const struct mapping *m)
{
	const struct procfs_cred *cred = cred_of(s, pid);
	struct elf_file *ef;
	char path[4200];
	int fd;

	__u64 key[2] = { m->dev, m->ino };

	HASH_FIND(hh, s->files, key, sizeof(key), ef);
	if (ef)
		return ef;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	ef->dev = m->dev;
	ef->ino = m->ino;
	fd = open_mapping(cred, pid, m);
	if (fd >= 0) {
		snprintf(path, sizeof(path), "/proc/%u/root", pid);
		load_elf(s, ef, fd, cred, access(path, F_OK) ? 0 : pid, m->path);
		close(fd);
	}
	HASH_ADD(hh, s->files, dev, sizeof(key), ef);
	return ef;
}

static bool file_to_vaddr(const struct elf_file *ef, __u64 off, __u64 *vaddr)
{
	size_t i;

	for (i = 0; i < ef->nr_loads; i++) {
		const GElf_Phdr *ph = &ef->loads[i];

		if (off >= ph->p_offset && off < ph->p_offset + ph->p_filesz) {
			*vaddr = off - ph->p_offset + ph->p_vaddr;
			return true;
		}
	}
	return false;
}

static const struct elf_sym *find_sym(const struct elf_file *ef, __u64 addr)
{
	size_t lo = search__after(ef->syms, ef->nr_syms, sizeof(*ef->syms),
				  offsetof(struct elf_sym, addr), addr);
	const struct elf_sym *sym;

	if (!lo)
		return NULL;
	sym = &ef->syms[lo - 1];
	if (sym->size && addr >= sym->addr + sym->size)
		return NULL;
	return sym;
}

static void set_name(struct sym_result *out, const char *mangled)
{
	/* no parameter lists: frames stay readable for templated C++ */
	char *d = cplus_demangle(mangled, DMGL_ANSI);

	snprintf(out->name, sizeof(out->name), "%s", d ? d : mangled);
	free(d);
}

static const struct mapping *find_mapping(const struct proc_maps *pm, __u64 ip)
{
	size_t i;

	for (i = 0; pm && i < pm->nr; i++)
		if (ip >= pm->maps[i].start && ip < pm->maps[i].end)
			return &pm->maps[i];
	return NULL;
}

/* a read of /proc/PID/maps as the process exits can stop part way: what
 * was known before and overlaps nothing read now is kept (exec starts over:
 * symbolizer__invalidate); old is freed */
static void keep_unseen(struct proc_maps *pm, struct proc_maps *old)
{
	size_t i, k, cap = pm->nr;
	struct mapping *v;

	for (i = 0; i < old->nr; i++) {
		const struct mapping *o = &old->maps[i];

		for (k = 0;
		     k < pm->nr && (pm->maps[k].end <= o->start || pm->maps[k].start >= o->end);
		     k++)
			;
		if (k < pm->nr)
			continue;
		if (pm->nr == cap) {
			cap = cap * 2 + 16;
			v = realloc(pm->maps, cap * sizeof(*v));
			if (!v)
				break;
			pm->maps = v;
		}
		pm->maps[pm->nr++] = *o;
		old->maps[i].path = NULL; /* moved */
	}
	maps_free(old);
}

void symbolizer__refresh(struct symbolizer *s, __u32 pid)
{
	struct proc_maps *pm, *old;
	char path[64];
	size_t i;

	/* a process that has exited keeps the maps last read: events are often
	 * read after their process is gone */
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	if (access(path, R_OK))
		return;
	HASH_FIND(hh, s->procs, &pid, sizeof(pid), old);
	if (old)
		HASH_DEL(s->procs, old);
	pm = load_maps(s, pid);
	if (!pm || !pm->nr) {
		if (pm) { /* read as the process exited: keep what we knew */
			HASH_DEL(s->procs, pm);
			maps_free(pm);
		}
		if (old)
			HASH_ADD(hh, s->procs, pid, sizeof(old->pid), old);
		return;
	}
	for (i = 0; i < pm->nr; i++)
		get_elf(s, pid, &pm->maps[i]);
	if (old)
		keep_unseen(pm, old);
}

void symbolizer__each_module(struct symbolizer *s, __u32 pid, symbolizer_module_fn fn, void *arg)
{
	const struct proc_maps *pm = load_maps(s, pid);
	const struct elf_file *ef;
	size_t i, k;
	__u64 vaddr;
	int fd;

	for (i = 0; pm && i < pm->nr; i++) {
		const struct mapping *m = &pm->maps[i];

		/* one report a file: its first code mapping says its bias */
		for (k = 0; k < i && strcmp(pm->maps[k].path, m->path); k++)
			;
		if (k < i || !(ef = get_elf(s, pid, m)) || !file_to_vaddr(ef, m->pgoff, &vaddr))
			continue;
		fd = open_mapping(cred_of(s, pid), pid, m);
		if (fd >= 0)
			fn(m->path, m->start - vaddr, fd, arg);
	}
}

int symbolizer__module(struct symbolizer *s, __u32 pid, __u64 ip, struct sym_module *out)
{
	const struct mapping *m = find_mapping(load_maps(s, pid), ip);
	const struct elf_file *ef;
	const char *base;
	__u64 off;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!m)
		return -ENOENT;
	base = strrchr(m->path, '/');
	snprintf(out->name, sizeof(out->name), "%s", base ? base + 1 : m->path);
	if (!(ef = get_elf(s, pid, m)))
		return 0;
	snprintf(out->build_id, sizeof(out->build_id), "%s", ef->build_id);
	off = ip - m->start + m->pgoff;
	for (i = 0; i < ef->nr_loads; i++) {
		const GElf_Phdr *ph = &ef->loads[i];

		if (off >= ph->p_offset && off < ph->p_offset + ph->p_filesz) {
			out->text_off = ph->p_offset;
			out->text_vaddr = ph->p_vaddr;
			out->text_size = ph->p_filesz;
			break;
		}
	}
	return 0;
}

int symbolizer__resolve(struct symbolizer *s, __u32 pid, __u64 ip, struct sym_result *out)
{
	const struct mapping *m = find_mapping(load_maps(s, pid), ip);
	const struct elf_sym *sym;
	struct elf_file *ef;
	const char *base;
	__u64 off, vaddr;

	/* no re-read on a miss: new code mappings refresh the maps already, and
	 * [vdso] or JIT frames would re-read them for every stack */
	memset(out, 0, sizeof(*out));
	if (!m)
		return -ENOENT;
	base = strrchr(m->path, '/');
	snprintf(out->module, sizeof(out->module), "%s", base ? base + 1 : m->path);
	off = ip - m->start + m->pgoff;
	out->off = off;
	ef = get_elf(s, pid, m);
	if (!ef || !file_to_vaddr(ef, off, &vaddr))
		return 0;
	sym = find_sym(ef, vaddr);
	if (!sym)
		return 0;
	set_name(out, sym->name);
	out->off = vaddr - sym->addr;
	return 0;
}

void symbolizer__free(struct symbolizer *s)
{
	struct elf_file *ef, *et;
	struct proc_maps *pm, *pt;
	size_t i;

	if (!s)
		return;
	HASH_ITER(hh, s->procs, pm, pt)
	{
		HASH_DEL(s->procs, pm);
		maps_free(pm);
	}
	HASH_ITER(hh, s->files, ef, et)
	{
		HASH_DEL(s->files, ef);
		for (i = 0; i < ef->nr_syms; i++)
			free(ef->syms[i].name);
		free(ef->syms);
		free(ef->loads);
		free(ef);
	}
	free(s);
}
