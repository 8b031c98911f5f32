/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * growth.h - memory the C library grows for itself, held under
 * ZSWAP_MEMORY_LIMIT.
 *
 * Under a limit, a program writing fresh memory must be held when the charge
 * reaches the limit (src/reclaim/reclaim.h). Its own mmap() goes through the
 * interposer, which registers the new mapping with userfaultfd at once, so
 * that its first touches fault and can be held. glibc's malloc grows memory
 * without it: the brk heap (sbrk), the heaps of other threads' arenas
 * (mprotect of a reserved 64 MiB range) and chunks of 128 KiB and more (its
 * internal mmap). The interposed malloc, calloc and realloc
 * (src/shim/alloc.c) call growth_malloc, growth_calloc and growth_realloc,
 * which pass each call to the allocator that would have served it; when
 * that is glibc's, they read, after the call and before the program has the
 * pointer, what glibc's chunk header says about where the chunk came from,
 * and if that memory grew since it last looked:
 *   - a small step (the heap's usual 132 KiB) is held right there, on the
 *     allocating thread, by the limit's throttle (policy_throttle), as a
 *     handler holds a first touch;
 *   - a large one (a chunk mapped for itself, a large step) is registered,
 *     as an interposed mmap is, and its first touches fault and are held.
 * The fast path, when nothing grew, is a few loads and compares.
 */
#ifndef ZSWAP_GROWTH_H
#define ZSWAP_GROWTH_H

#include <stddef.h>

/* What the interposed malloc, calloc and realloc do: the call passed to the
 * allocator that would have served the program without libzswap (found at
 * the first call), and, when that is glibc's under a limit, the growth
 * behind the block returned held or registered. */
void *growth_malloc(size_t n);
void *growth_calloc(size_t n, size_t size);
void *growth_realloc(void *old, size_t n);

/* The reclaimer thread, once the engine runs (in the process and in a
 * followed fork child): start following growth if a memory limit is set
 * and glibc's malloc serves the program. */
void growth_start(void);

/* The next definition of the function name after libzswap's own in the link
 * map: what the program would call without us, for an entry point we
 * interpose but cannot make as a system call. Found in the loaded objects'
 * symbol tables, as malloc's is (no dlsym: the loader lock, allocation).
 * NULL if there is none. */
void *growth_next_def(const char *name);

#endif
