/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bindnow.h - every PLT slot of the code the library runs, bound at start.
 *
 * A library thread must never enter the dynamic linker to bind a symbol: the
 * loader's data (the global search list after a dlopen(RTLD_GLOBAL)) may
 * live in the program's heap, which the library manages, and a thread that
 * faults on a page it has moved out itself waits forever. libzswap itself is
 * linked lazily (a program that never starts it resolves only the slots it
 * calls through), and so may be the objects it calls into: all are bound
 * here at the start.
 */
#ifndef ZSWAP_BINDNOW_H
#define ZSWAP_BINDNOW_H

/* Bind every lazily bound jump slot of libzswap's dependency closure (and
 * of the libraries src/base/dynlib.h loaded) as the
 * loader would on first call. Called once at start, before any page is
 * managed and before the library's threads run (it reads the loader's list
 * of objects unlocked and may call indirect-function resolvers). Returns the
 * number of slots bound, or -1 if the library's own object is not found. */
int bindnow_closure(void);

#endif
