/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elfsym.c - symbols of the loaded objects, read from their own tables
 * (see elfsym.h).
 */
#include "config.h"
#include "base/elfsym.h"

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/layout.h"

#define ELFSYM_ST_TYPE(info)	((info) & 0xf)	/* ELF32_ST_TYPE and ELF64_ST_TYPE alike */

static uint32_t elfsym_gnu_hash(const char *name)
{
	uint32_t h = 5381;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

static uint32_t elfsym_sysv_hash(const char *name)
{
	uint32_t h = 0;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		h = (h << 4) + *c;
		h ^= (h >> 24) & 0xf0;
	}
	return h & 0x0fffffff;
}

/* The object's tables, from its dynamic section. */
struct elfsym_tables {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu, *sysv;
	const ElfW(Half) *versym;
	const ElfW(Verdef) *verdef;
};

static bool elfsym_tables(const struct link_map *l, struct elfsym_tables *t)
{
	memset(t, 0, sizeof(*t));
	if (!l->l_ld)
		return false;
	for (const ElfW(Dyn) *d = l->l_ld; d->d_tag != DT_NULL; d++) {
		uintptr_t v = elfsym_dyn_ptr(l, d);
		switch (d->d_tag) {
		case DT_SYMTAB: t->symtab = (const ElfW(Sym) *)v; break;
		case DT_STRTAB: t->strtab = (const char *)v; break;
		case DT_GNU_HASH: t->gnu = (const uint32_t *)v; break;
		case DT_HASH: t->sysv = (const uint32_t *)v; break;
		case DT_VERSYM: t->versym = (const ElfW(Half) *)v; break;
		case DT_VERDEF: t->verdef = (const ElfW(Verdef) *)v; break;
		}
	}
	return t->symtab && t->strtab;
}

uintptr_t elfsym_dyn_ptr(const struct link_map *l, const ElfW(Dyn) *d)
{
	/* glibc relocates some of these in place where .dynamic is writable;
	 * the others are still offsets from the load address. */
	return d->d_un.d_ptr < l->l_addr ? d->d_un.d_ptr + l->l_addr : d->d_un.d_ptr;
}

const char *elfsym_verdef_name(const ElfW(Verdef) *vd, const char *strtab, unsigned int ndx)
{
	while (vd) {
		if (vd->vd_ndx == ndx) {
			const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)vd + vd->vd_aux);
			return strtab + a->vda_name;
		}
		vd = vd->vd_next ? (const ElfW(Verdef) *)((const char *)vd + vd->vd_next) : NULL;
	}
	return NULL;
}

/* Whether symbol i answers a reference to version ver (NULL: unversioned),
 * by the loader's rule: a versioned reference takes that version or an
 * unversioned definition; an unversioned one any definition not hidden. */
ZSWAP_STARTUP static bool elfsym_version_matches(const struct elfsym_tables *t, uint32_t i, const char *ver)
{
	if (!t->versym)
		return true;
	unsigned int ndx = t->versym[i] & 0x7fff;
	bool hidden = t->versym[i] & 0x8000;
	if (!ver)
		return !hidden;
	if (ndx <= 1)
		return !hidden;
	const char *name = elfsym_verdef_name(t->verdef, t->strtab, ndx);
	return name && strcmp(name, ver) == 0;
}

static bool elfsym_defines(const ElfW(Sym) *sym)
{
	return sym->st_shndx != SHN_UNDEF && sym->st_value &&
	       (ELFSYM_ST_TYPE(sym->st_info) == STT_FUNC || ELFSYM_ST_TYPE(sym->st_info) == STT_GNU_IFUNC ||
		ELFSYM_ST_TYPE(sym->st_info) == STT_OBJECT);
}

ZSWAP_STARTUP void *elfsym_find_version(const struct link_map *l, const char *name, const char *ver)
{
	struct elfsym_tables t;
	const ElfW(Sym) *sym = NULL;

	if (!elfsym_tables(l, &t))
		return NULL;
	if (t.gnu) {
		uint32_t nbuckets = t.gnu[0], symoffset = t.gnu[1], bloom_size = t.gnu[2];
		const uint32_t *buckets = t.gnu + 4 + bloom_size * (sizeof(ElfW(Addr)) / 4);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = elfsym_gnu_hash(name);
		if (!nbuckets)
			return NULL;
		for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
			uint32_t h2 = chain[i - symoffset];
			if ((h | 1) == (h2 | 1) && strcmp(t.strtab + t.symtab[i].st_name, name) == 0 &&
			    elfsym_defines(&t.symtab[i]) && elfsym_version_matches(&t, i, ver)) {
				sym = &t.symtab[i];
				break;
			}
			if (h2 & 1)
				break;
		}
	} else if (t.sysv) {
		uint32_t nbucket = t.sysv[0];
		const uint32_t *bucket = t.sysv + 2, *chain = bucket + nbucket;
		if (!nbucket)
			return NULL;
		for (uint32_t i = bucket[elfsym_sysv_hash(name) % nbucket]; i; i = chain[i]) {
			if (strcmp(t.strtab + t.symtab[i].st_name, name) == 0 && elfsym_defines(&t.symtab[i]) &&
			    elfsym_version_matches(&t, i, ver)) {
				sym = &t.symtab[i];
				break;
			}
		}
	}
	if (!sym)
		return NULL;
	void *f = (void *)(l->l_addr + sym->st_value);
	if (ELFSYM_ST_TYPE(sym->st_info) == STT_GNU_IFUNC)
		f = ((void *(*)(void))f)();	/* the resolver gives the implementation */
	return f;
}

ZSWAP_STARTUP void *elfsym_find(const struct link_map *l, const char *name)
{
	return elfsym_find_version(l, name, NULL);
}

ZSWAP_STARTUP const struct link_map *elfsym_objects(void)
{
	return _r_debug.r_map;
}

void *elfsym_any(const char *name)
{
	for (const struct link_map *m = elfsym_objects(); m; m = m->l_next) {
		void *p = elfsym_find(m, name);
		if (p)
			return p;
	}
	return NULL;
}
