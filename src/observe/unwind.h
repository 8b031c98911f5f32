/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind.h - libunwind, loaded at start, for crash backtraces and the names
 * of call sites (crash, attrib).
 *
 * Not linked: loaded by unwind_load at the library's start, before its
 * threads run, so that a process that never starts the library never loads
 * it (nor its liblzma). Without it there are no backtraces, and call sites
 * are named from their object files only.
 */
#ifndef ZSWAP_UNWIND_H
#define ZSWAP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Load libunwind if not yet tried; says once why not. Start-up only (dlopen
 * takes the loader lock and allocates). Returns true if it is usable. */
bool unwind_load(void);

/* The function holding the code address pc, as an unwinder finds it for a
 * frame there: its name into name and pc's offset in it into *off. 0, or -1
 * (no libunwind, or not found). */
int unwind_proc_name(uintptr_t pc, char *name, size_t len, uintptr_t *off);

/* The return addresses of the stack a signal interrupted (uc, the handler's
 * ucontext), the interrupted instruction's first: up to max into ips.
 * Returns how many, or -1 if libunwind is missing or could not start.
 * Async-signal-safe once loaded. */
int unwind_frames(void *uc, uintptr_t *ips, int max);

#endif
