/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bindnow.c - every PLT slot of the code the library runs, bound at start
 * (see bindnow.h).
 *
 * libzswap itself is linked -z now, but the objects it calls into need not
 * be: Debian's liblz4 and libc bind their PLT slots lazily, liblz4 even for
 * calls to its own exports (LZ4_compress_fast_extState calls LZ4_initStream
 * through its PLT). The first call through such a slot enters the dynamic
 * linker, which walks the global search list; after any dlopen(RTLD_GLOBAL)
 * that list is a malloc'ed array in the program's heap, which the library
 * manages. A handler or the evictor binding a slot there faults on a page
 * that may be out, possibly moved out by itself, and the process hangs (a
 * Python program opening ctypes libraries RTLD_GLOBAL did, at its first
 * compression).
 *
 * So at start, before any page is managed, each lazily bound object of the
 * library's dependency closure, and of the libraries it loaded then
 * (src/base/dynlib.h), has its jump slots filled the way the loader
 * would fill them on first call: the first definition in the global scope's
 * order, of the version the object asks for. A slot whose symbol has no
 * definition yet stays lazy (a later dlopen could define it).
 */
#include "config.h"
#include "base/bindnow.h"
#include "base/dynlib.h"
#include "base/elfsym.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#define BINDNOW_JUMP_SLOT R_X86_64_JUMP_SLOT
#elif defined(__aarch64__)
#define BINDNOW_JUMP_SLOT R_AARCH64_JUMP_SLOT
#endif

#define BINDNOW_OBJS 64

/* What one loaded object's dynamic section says. */
struct bindnow_obj {
	const struct link_map *l;
	const char *strtab, *soname;
	const ElfW(Sym) *symtab;
	const ElfW(Rela) *jmprel;
	size_t jmprel_size;
	const ElfW(Half) *versym;
	const ElfW(Verneed) *verneed;
	const ElfW(Verdef) *verdef;
	uintptr_t relro_start, relro_end;	/* read-only after relocation */
	bool now, in_closure;
};

static void bindnow_read(const struct link_map *l, struct bindnow_obj *o)
{
	ElfW(Xword) soname = 0;
	bool rela = true;

	memset(o, 0, sizeof(*o));
	o->l = l;
	if (!l->l_ld)
		return;
	for (const ElfW(Dyn) *d = l->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_STRTAB: o->strtab = (const char *)elfsym_dyn_ptr(l, d); break;
		case DT_SYMTAB: o->symtab = (const ElfW(Sym) *)elfsym_dyn_ptr(l, d); break;
		case DT_JMPREL: o->jmprel = (const ElfW(Rela) *)elfsym_dyn_ptr(l, d); break;
		case DT_PLTRELSZ: o->jmprel_size = d->d_un.d_val; break;
		case DT_PLTREL: rela = d->d_un.d_val == DT_RELA; break;
		case DT_VERSYM: o->versym = (const ElfW(Half) *)elfsym_dyn_ptr(l, d); break;
		case DT_VERNEED: o->verneed = (const ElfW(Verneed) *)elfsym_dyn_ptr(l, d); break;
		case DT_VERDEF: o->verdef = (const ElfW(Verdef) *)elfsym_dyn_ptr(l, d); break;
		case DT_SONAME: soname = d->d_un.d_val; break;
		case DT_FLAGS: o->now |= (d->d_un.d_val & DF_BIND_NOW) != 0; break;
		case DT_FLAGS_1: o->now |= (d->d_un.d_val & DF_1_NOW) != 0; break;
		case DT_BIND_NOW: o->now = true; break;
		}
	}
	if (!rela)
		o->jmprel = NULL;	/* REL jump slots: not on the targets built for */
	if (o->strtab && soname)
		o->soname = o->strtab + soname;
}

static const char *bindnow_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Mark the object that DT_NEEDED entry `name` names, and return it. */
static struct bindnow_obj *bindnow_needed(struct bindnow_obj *objs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		const char *l_name = objs[i].l->l_name;
		if ((objs[i].soname && strcmp(objs[i].soname, name) == 0) ||
		    (l_name && *l_name && strcmp(bindnow_basename(l_name), name) == 0))
			return &objs[i];
	}
	return NULL;
}

/* Mark o and everything it needs, transitively. */
static void bindnow_close(struct bindnow_obj *objs, size_t n, struct bindnow_obj *o)
{
	if (o->in_closure)
		return;
	o->in_closure = true;
	if (!o->l->l_ld || !o->strtab)
		return;
	for (const ElfW(Dyn) *d = o->l->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag != DT_NEEDED)
			continue;
		struct bindnow_obj *dep = bindnow_needed(objs, n, o->strtab + d->d_un.d_val);
		if (dep)
			bindnow_close(objs, n, dep);
	}
}

/* The version object o's reference to symbol index sym asks for, or NULL. */
static const char *bindnow_version(const struct bindnow_obj *o, uint32_t sym)
{
	if (!o->versym || !o->verneed)
		return NULL;
	unsigned int ndx = o->versym[sym] & 0x7fff;
	if (ndx <= 1)
		return NULL;
	if (o->symtab[sym].st_shndx != SHN_UNDEF) {
		/* A call to a version the object defines itself (libc's calls
		 * to its own realloc@@GLIBC_2.2.5). */
		return elfsym_verdef_name(o->verdef, o->strtab, ndx);
	}
	const ElfW(Verneed) *vn = o->verneed;
	while (vn) {
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
		for (unsigned int k = 0; k < vn->vn_cnt; k++) {
			if (a->vna_other == ndx)
				return o->strtab + a->vna_name;
			a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
		}
		vn = vn->vn_next ? (const ElfW(Verneed) *)((const char *)vn + vn->vn_next) : NULL;
	}
	return NULL;
}

/* The first definition in the global scope, as the loader's lazy binding
 * finds it for an object loaded at start-up. */
static void *bindnow_lookup(const char *name, const char *ver)
{
	for (const struct link_map *m = elfsym_objects(); m; m = m->l_next) {
		void *p = elfsym_find_version(m, name, ver);
		if (p)
			return p;
	}
	return NULL;
}

static unsigned int bindnow_object(const struct bindnow_obj *o)
{
	unsigned int bound = 0;

#ifdef BINDNOW_JUMP_SLOT
	if (o->now || !o->jmprel || !o->symtab)
		return 0;
	for (size_t k = 0; k < o->jmprel_size / sizeof(ElfW(Rela)); k++) {
		const ElfW(Rela) *r = &o->jmprel[k];
		if (ELF64_R_TYPE(r->r_info) != BINDNOW_JUMP_SLOT)
			continue;
		uintptr_t slot = o->l->l_addr + r->r_offset;
		if (slot >= o->relro_start && slot < o->relro_end)
			continue;	/* bound already, and read-only now */
		uint32_t si = (uint32_t)ELF64_R_SYM(r->r_info);
		const ElfW(Sym) *s = &o->symtab[si];
		void *target = bindnow_lookup(o->strtab + s->st_name, bindnow_version(o, si));
		if (!target)
			continue;
		/* The value the loader would store; a program thread binding
		 * the same slot at the same moment stores the same one. */
		__atomic_store_n((uintptr_t *)slot, (uintptr_t)target + r->r_addend,
				 __ATOMIC_RELAXED);
		bound++;
	}
#else
	(void)o;
#endif
	return bound;
}

/* Each object's PT_GNU_RELRO range, found by its load address. */
static int bindnow_relro(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct { struct bindnow_obj *objs; size_t n; } *a = arg;

	(void)size;
	for (size_t i = 0; i < a->n; i++) {
		struct bindnow_obj *o = &a->objs[i];
		if (o->l->l_addr != info->dlpi_addr || !o->in_closure)
			continue;
		for (int k = 0; k < info->dlpi_phnum; k++)
			if (info->dlpi_phdr[k].p_type == PT_GNU_RELRO) {
				o->relro_start = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr;
				o->relro_end = o->relro_start + info->dlpi_phdr[k].p_memsz;
			}
	}
	return 0;
}

int bindnow_closure(void)
{
	static struct bindnow_obj objs[BINDNOW_OBJS];
	Dl_info info;
	struct link_map *self = NULL;
	size_t n = 0;
	int bound = 0;

	if (!dladdr1((void *)bindnow_closure, &info, (void **)&self, RTLD_DL_LINKMAP) || !self)
		return -1;
	for (const struct link_map *m = elfsym_objects(); m && n < BINDNOW_OBJS; m = m->l_next)
		bindnow_read(m, &objs[n++]);
	/* The library's own closure, and the libraries it loaded at start
	 * (src/base/dynlib.h): those dlopen bound already, unless the
	 * program had loaded them first, lazily. */
	const struct link_map *roots[BINDNOW_OBJS];
	size_t nroots = dynlib_objects(roots + 1, BINDNOW_OBJS - 1) + 1;
	roots[0] = self;
	for (size_t i = 0; i < n; i++)
		for (size_t r = 0; r < nroots; r++)
			if (objs[i].l == roots[r])
				bindnow_close(objs, n, &objs[i]);
	struct { struct bindnow_obj *objs; size_t n; } arg = { objs, n };
	dl_iterate_phdr(bindnow_relro, &arg);
	for (size_t i = 0; i < n; i++)
		if (objs[i].in_closure)
			bound += (int)bindnow_object(&objs[i]);
	return bound;
}
