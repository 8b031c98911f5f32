/*
 * elfsym.c - symbols of the loaded objects, read from their own tables
 * (see elfsym.h).
 */
#include "config.h"
#include "base/elfsym.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

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

void *elfsym_find(const struct link_map *l, const char *name)
{
	const ElfW(Sym) *symtab = NULL, *sym = NULL;
	const char *strtab = NULL;
	const uint32_t *gnu = NULL, *sysv = NULL;

	if (!l->l_ld)
		return NULL;
	for (const ElfW(Dyn) *d = l->l_ld; d->d_tag != DT_NULL; d++) {
		/* glibc relocates these in place where .dynamic is writable;
		 * elsewhere they are still offsets from the load address. */
		uintptr_t v = d->d_un.d_ptr < l->l_addr ? d->d_un.d_ptr + l->l_addr : d->d_un.d_ptr;
		if (d->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)v;
		else if (d->d_tag == DT_STRTAB)
			strtab = (const char *)v;
		else if (d->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)v;
		else if (d->d_tag == DT_HASH)
			sysv = (const uint32_t *)v;
	}
	if (!symtab || !strtab)
		return NULL;
	if (gnu) {
		uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
		const uint32_t *buckets = gnu + 4 + bloom_size * (sizeof(ElfW(Addr)) / 4);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = elfsym_gnu_hash(name);
		if (!nbuckets)
			return NULL;
		for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
			uint32_t h2 = chain[i - symoffset];
			if ((h | 1) == (h2 | 1) && strcmp(strtab + symtab[i].st_name, name) == 0) {
				sym = &symtab[i];
				break;
			}
			if (h2 & 1)
				break;
		}
	} else if (sysv) {
		uint32_t nbucket = sysv[0];
		const uint32_t *bucket = sysv + 2, *chain = bucket + nbucket;
		if (!nbucket)
			return NULL;
		for (uint32_t i = bucket[elfsym_sysv_hash(name) % nbucket]; i; i = chain[i]) {
			if (strcmp(strtab + symtab[i].st_name, name) == 0) {
				sym = &symtab[i];
				break;
			}
		}
	}
	if (!sym || sym->st_shndx == SHN_UNDEF || !sym->st_value ||
	    (ELFSYM_ST_TYPE(sym->st_info) != STT_FUNC && ELFSYM_ST_TYPE(sym->st_info) != STT_GNU_IFUNC &&
	     ELFSYM_ST_TYPE(sym->st_info) != STT_OBJECT))
		return NULL;
	void *f = (void *)(l->l_addr + sym->st_value);
	if (ELFSYM_ST_TYPE(sym->st_info) == STT_GNU_IFUNC)
		f = ((void *(*)(void))f)();	/* the resolver gives the implementation */
	return f;
}

const struct link_map *elfsym_objects(void)
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
