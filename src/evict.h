/*
 * evict.h - moving pages out of the program and into the store, race-free.
 *
 * Pages leave the program's range atomically with UFFDIO_MOVE into a
 * library-owned staging area, and are compressed from there: a concurrent
 * writer either wrote before the move (its write is in the moved page) or
 * faults after it and waits until the page is stored, then loads it back.
 */
#ifndef ZSWAP_EVICT_H
#define ZSWAP_EVICT_H

#include <stdint.h>

/* Allocate and register the staging areas. 0 or -errno. */
int evict_init(void);

/* Evict the present pages of [start, end) (page-aligned) that lie in managed
 * memory, adopting glibc's internal mappings on the way. Returns before the
 * pages are dropped and stored. The caller has blocked signals. */
void evict_range(uintptr_t start, uintptr_t end);

#endif
