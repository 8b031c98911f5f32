/* SPDX-License-Identifier: GPL-2.0-or-later */
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

#include <stddef.h>
#include <stdint.h>

/* Allocate and register the staging areas. 0 or -errno. */
int evict_init(void);

/* A fork child that starts a libzswap of its own on a new userfaultfd
 * (fork.h, the restart): the staging areas and every registered region of
 * the table it copied registered again there. A region that is no longer
 * the program's private anonymous memory, or that the kernel refuses,
 * leaves the table: it holds no entry (fork loaded every page back). The
 * caller is the one library thread. 0, or -errno when a staging area
 * cannot be registered (nothing of the program's is then). */
int evict_register_again(void);

/* Evict the present pages of [start, end) (page-aligned) that lie in managed
 * memory, adopting glibc's internal mappings on the way. Returns before the
 * pages are dropped and stored. The caller has blocked signals. */
void evict_range(uintptr_t start, uintptr_t end);

/* MADV_COLD over [start, end): count the pages the library does not manage
 * there by reason (the advice_skip_* counters). evict_range counts its own. */
void evict_count_skipped(uintptr_t start, uintptr_t end);

/* Reclaim (src/reclaim/reclaim.c): evict the pages of [start, end) that
 * policy_select() takes, adopting mappings as evict_range does, until want
 * pages are stored (one batch may overshoot). Returns the pages stored; *stop
 * is where it stopped (end when it went through); *scanned is increased by
 * the present pages looked at. Not counted as an evict_call. */
size_t evict_reclaim(uintptr_t start, uintptr_t end, size_t want, uintptr_t *stop, size_t *scanned);

/* Register the region just inserted at addr with userfaultfd now rather
 * than at its first eviction (a memory limit is set: first touches must
 * fault to be counted and held). Caller holds eng.ev_lock for reading and
 * has blocked signals. */
void evict_register_new(uintptr_t addr);

/* Decommit the stages' copies (evict_copy_out keeps them populated while
 * batches come): for a process whose reclaimer has gone quiet. */
void evict_release_copies(void);

/* Direct reclaim's share, for a handler holding a fault over the limit:
 * compress pages of the batch the evictor has staged rather than sleep.
 * Returns the pages it compressed (0: nothing to help with). */
size_t evict_help(void);

#endif
