/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calls.h - the engine's side of the program's calls: what the interposed
 * calls (src/shim/interpose.c) do after the real system call succeeded.
 * Each blocks signals around the library locks it takes.
 */
#ifndef ZSWAP_CALLS_H
#define ZSWAP_CALLS_H

#include <stddef.h>
#include <stdint.h>


void calls_mapped(uintptr_t addr, size_t len, int prot, int flags, int fd);
void calls_unmapped(uintptr_t addr, size_t len);
void calls_remapped(uintptr_t old, size_t old_len, uintptr_t new, size_t new_len, int flags);
int calls_pageout(uintptr_t addr, size_t len);
long calls_discard(void *addr, size_t len, int advice);
void calls_cold(uintptr_t addr, size_t len);
void calls_willneed(uintptr_t addr, size_t len);
void calls_locking(uintptr_t addr, size_t len);
/* madvise(MADV_WIPEONFORK) is about to be made: a fork child gets that
 * range empty, while it inherits our table, our store and (the kernel copies
 * it) the range's registration. Served from them it would read the parent's
 * stored pages. So the range leaves management as a locked one does:
 * evicted pages back, unregistered, never evicted again. (MADV_DONTFORK
 * needs none of this: the child has no mapping there and forgets the
 * region.) */
void calls_fork_advice(uintptr_t addr, size_t len);
/* pthread_attr_setstack(addr, size) was made: the top of that stack leaves
 * management for good (interpose.c says why). */
void calls_thread_stack(uintptr_t addr, size_t size);
/* The same for pthread_attr_setstackaddr(top): the size is not known. */
void calls_thread_stack_top(uintptr_t top);
void calls_unlocked(uintptr_t addr, size_t len);
int calls_mlockall(int flags);
int calls_munlockall(void);

#endif
