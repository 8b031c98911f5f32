/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progdata.h - the main program's data segment made anonymous memory, so
 * that reclaim can take it (ZSWAP_PROGRAM_DATA).
 *
 * A program's initialised data is a private mapping of its executable: each
 * page the program writes becomes the process's own copy (anonymous memory
 * the charge counts), but userfaultfd registers anonymous, shmem and
 * hugetlbfs mappings only, so those pages can never be evicted. CPython
 * writes nearly all of its 1.2 MiB of data (the static type objects'
 * reference counts): every interpreter of a process tree, busy or idle,
 * kept that much the limit could not touch, where the kernel swaps such
 * copies as any anonymous page.
 *
 * So at start, while the process has a single thread and signals are
 * blocked, the main program's one writable private file mapping of its
 * writable segment is copied into a new anonymous mapping that then
 * replaces it in one mremap: no other thread, nor a signal handler, can
 * write the old pages between the copy and the swap, and nothing else in
 * the process sees a difference but /proc/self/maps (the range shows no
 * file). Reclaim adopts it as other anonymous memory, a run of its own
 * (engine_program_clip): it follows a file mapping (the segment's read-only
 * head), after which reclaim takes nothing else, and the bss behind it,
 * where the C library's copy-relocated variables live (stdout, environ),
 * stays out.
 *
 * A segment smaller than ZSWAP_MIN_REGION is left as it is: reclaim would
 * not take it, and the copy would cost every short program of a shell
 * script its pages; so is one over 16 MiB, whose pages the copy would make
 * the process's own, written or not. With other threads running (a
 * deferred start, a constructor that started threads), memory locked, or a
 * segment split into several writable mappings, nothing is done; a remap
 * that fails (no memory, the map count at its maximum) leaves the data as
 * it was.
 */
#ifndef ZSWAP_PROGDATA_H
#define ZSWAP_PROGDATA_H

#include <stddef.h>

/* Before any library thread and any registration (start_run, after
 * maps_init). Returns the bytes made anonymous, 0 when nothing was done,
 * or -errno when the remap failed (the data is then as it was). */
long progdata_take(void);

#endif
