/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dynlib.h - the libraries libzswap calls only once started (zstd, lzo2,
 * sodium, unwind), loaded with dlopen and called through pointers.
 *
 * Linked, each would be loaded and relocated in every process the library
 * is preloaded into, a shell script's thousands of short programs included,
 * though most never start the library. Loaded here instead, only a process
 * that starts pays for them. Each user keeps its own table of symbols and
 * pointers next to its calls (src/core/comp.c, src/core/backing.c,
 * src/observe/unwind.c) and asks for it before the library's threads run
 * (start-up), or, in a tool, before its first use: never on the fault path
 * nor in a signal handler (dlopen takes the loader lock and allocates).
 */
#ifndef ZSWAP_DYNLIB_H
#define ZSWAP_DYNLIB_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>

/* One function a library must define: its name (what the header's macros
 * expand it to) and the pointer that receives its address. None of these
 * libraries versions its symbols. */
struct dynlib_sym {
	const char *name;
	void **slot;
};

#define DYNLIB_WHY_MAX 200

struct dynlib {
	const char *soname;		/* "libzstd.so.1" */
	const struct dynlib_sym *syms;
	size_t nsyms;
	/* Filled by dynlib_load. */
	int state;			/* 0: not tried; 1: loaded; -1: not usable */
	void *handle;
	char why[DYNLIB_WHY_MAX];	/* why not usable */
};

/* Load lib once, dlopen(RTLD_NOW | RTLD_LOCAL): every symbol bound now,
 * none added to the program's scope. Every pointer is set, or none (the
 * library is then closed again). Later calls answer what the first found.
 * Returns true if the library is usable; else dynlib_why says why. */
bool dynlib_load(struct dynlib *lib);

/* Why lib is not usable ("libzstd.so.1: cannot open shared object file: ..."),
 * or NULL if it is (or was not tried). */
const char *dynlib_why(const struct dynlib *lib);

/* The objects loaded so far, for bindnow (src/base/bindnow.h): up to max
 * link maps into out. Returns how many. */
size_t dynlib_objects(const struct link_map **out, size_t max);

#endif
