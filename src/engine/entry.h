/*
 * entry.h - the engine's entry points: what the interposed calls
 * (src/shim/interpose.c) do after the real system call succeeded, and the
 * counters' snapshot. Each blocks signals around the library locks it takes.
 */
#ifndef ZSWAP_ENTRY_H
#define ZSWAP_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include "zswap.h"

void entry_mapped(uintptr_t addr, size_t len, int prot, int flags, int fd);
void entry_unmapped(uintptr_t addr, size_t len);
void entry_remapped(uintptr_t old, size_t old_len, uintptr_t new, size_t new_len, int flags);
int entry_pageout(uintptr_t addr, size_t len);
long entry_discard(void *addr, size_t len, int advice);
void entry_cold(uintptr_t addr, size_t len);
void entry_willneed(uintptr_t addr, size_t len);
void entry_locking(uintptr_t addr, size_t len);
/* madvise(MADV_WIPEONFORK) is about to be made: a fork child gets that
 * range empty, while it inherits our table, our store and (the kernel copies
 * it) the range's registration. Served from them it would read the parent's
 * stored pages. So the range leaves management as a locked one does:
 * evicted pages back, unregistered, never evicted again. (MADV_DONTFORK
 * needs none of this: the child has no mapping there and forgets the
 * region.) */
void entry_fork_advice(uintptr_t addr, size_t len);
/* pthread_attr_setstack(addr, size) was made: the top of that stack leaves
 * management for good (interpose.c says why). */
void entry_thread_stack(uintptr_t addr, size_t size);
/* The same for pthread_attr_setstackaddr(top): the size is not known. */
void entry_thread_stack_top(uintptr_t top);
void entry_unlocked(uintptr_t addr, size_t len);
int entry_mlockall(int flags);
int entry_munlockall(void);

/* zswap_stats(): every counter, consistent with the mappings the program
 * has (the event lock's read side). 0, or -1 with errno. */
int entry_stats(struct zswap_stats *st, size_t size);

/* zswapctl reset: the counters since start read 0 from now on (gauges do
 * not change), and mem_used_max is the pool's size now. 0 or -errno. */
int entry_stats_reset(void);

#endif
