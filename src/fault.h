/*
 * fault.h - the handler threads: userfaultfd events and missing-page faults.
 *
 * Handler threads run on library-owned stacks with every signal blocked, never
 * malloc, never use stdio, never touch evictable memory, and never wait on a
 * program thread: a fault on a page some other thread owns in flight is
 * marked (WAITER) and left for the owner to wake.
 */
#ifndef ZSWAP_FAULT_H
#define ZSWAP_FAULT_H

#include <stdint.h>

/* Create nthreads handler threads. 0 or -errno. */
int fault_start(unsigned int nthreads);

/* Load back every stored page of [start, end) from the calling (program)
 * thread, as a fault would. The caller holds eng.evict_gate for writing, so
 * no eviction is in flight, and has blocked signals. */
void fault_load_range(uintptr_t start, uintptr_t end);

#endif
