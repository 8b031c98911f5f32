/* SPDX-License-Identifier: GPL-2.0-or-later */
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

/* Allocate what every handler shares (the zero buffer, the helper context
 * of fault_load_range). Start-up only. 0 or -ENOMEM. */
int fault_init(void);

/* A handler thread's private context (its page buffer and fault ring), from
 * prim. cpu: the CPU the thread pins itself to when it starts, or -1 to leave
 * it to the scheduler. Start-up only. NULL on ENOMEM. */
void *fault_ctx_create(int cpu);

/* The body of a handler thread (engine.c creates them, on library-owned
 * stacks, with every signal blocked): serves faults and events forever. */
void *fault_thread(void *ctx);

/* Load back every stored page of [start, end) from the calling (program)
 * thread, as a fault would, and wait until no handler holds a page of it in
 * its buffer (INBUF): on return every page of the range is in place. The
 * caller holds eng.evict_gate for writing, so no eviction is in flight (none
 * can store a page again), and has blocked signals. */
void fault_load_all(uintptr_t start, uintptr_t end);

/* madvise(MADV_WILLNEED): load back the stored pages of [start, end) from
 * the calling thread, as swap-in readahead would, while the memory limit
 * has room for them (pages in flight elsewhere are left to their owner).
 * The caller has blocked signals. */
void fault_prefetch(uintptr_t start, uintptr_t end);

#endif
