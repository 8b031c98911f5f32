/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * elfsym.h - symbols of the loaded objects, found without the loader.
 *
 * Read from each object's own dynamic symbol table (GNU or SysV hash),
 * through the debugger's list of loaded objects (_r_debug): no dlsym, which
 * takes the loader lock and may allocate, while the program may hold that
 * lock or be inside malloc. Versions are matched as the loader matches
 * them (elfsym_find_version).
 */
#ifndef ZSWAP_ELFSYM_H
#define ZSWAP_ELFSYM_H

#include <link.h>
#include <stdint.h>

/* The first loaded object (the executable); l_next leads to the others in
 * the global scope's order. */
const struct link_map *elfsym_objects(void);

/* The address of name (a function, an indirect function resolved, or a
 * data object) defined by the object l, or NULL. */
void *elfsym_find(const struct link_map *l, const char *name);

/* The same, for a reference to version ver of name (NULL: an unversioned
 * reference): the definition of that version, or an unversioned one. */
void *elfsym_find_version(const struct link_map *l, const char *name, const char *ver);

/* A pointer of the dynamic section entry d of l, as an address. */
uintptr_t elfsym_dyn_ptr(const struct link_map *l, const ElfW(Dyn) *d);

/* The name of version index ndx among an object's definitions (its
 * DT_VERDEF list vd, names in strtab), or NULL. */
const char *elfsym_verdef_name(const ElfW(Verdef) *vd, const char *strtab, unsigned int ndx);

/* The first definition of name in the link map's order, or NULL. */
void *elfsym_any(const char *name);

#endif
