/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layout.h - where the code and data every process touches are placed.
 *
 * Each page of the library a process touches first costs it a page fault,
 * and a shell pays them for each command: the program it execs loads the
 * library, reads its options and defers its start; a fork child runs the
 * library's fork handlers and the calls a shell makes between fork and
 * exec. A fork child faults again on every page of text it runs (the
 * kernel copies no page table entries of a file mapping) and copies every
 * page of data it writes, and after the fork the parent copies or takes
 * back each page it writes as well. Where faults are dear (a guest whose
 * page tables are shadowed: docs/DESIGN.md, "Start-up"), a dozen pages is
 * a tenth of a millisecond a command.
 *
 * ZSWAP_STARTUP puts a function in .text.startup, which the linker places
 * at the head of .text next to _init: the kernel maps up to 64 KiB of a
 * file around a fault, so the start, exit and fork paths cost one fault
 * instead of one for every 64 KiB of text they would cross.
 *
 * ZSWAP_STARTUP_DATA puts a small variable those paths write in .data, a
 * page or two the loader has already copied to relocate the engine's
 * state, instead of on a .bss page of its own. Only for small variables
 * (a kilobyte at most): .data is read from the file at each start.
 *
 * A fork child reads .data and .bss pages without a fault (their entries
 * are copied at the fork) but faults on every page of .rodata it reads (a
 * file mapping's are not): the lock initialisers the child's handlers copy
 * are built on the stack when zero, in .data otherwise, never constants.
 */
#ifndef ZSWAP_LAYOUT_H
#define ZSWAP_LAYOUT_H

#define ZSWAP_STARTUP __attribute__((section(".text.startup")))
#define ZSWAP_STARTUP_DATA __attribute__((section(".data")))

#endif
