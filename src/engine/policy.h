/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.h - the aging and limit policy: which pages reclaim takes, and when
 * faults are held at the limit (ZSWAP_MEMORY_LIMIT, ZSWAP_COLD_AGE). Fault
 * and evict consult it; the reclaimer thread (src/reclaim/reclaim.h) acts
 * on it.
 *
 * One reclaimer thread, modelled on kswapd: it reads the charge (the
 * process's resident anonymous memory, which includes the pool, from
 * /proc/self/statm) and, above the high watermark, evicts pages until the
 * charge is below the low one. Handler threads call policy_throttle() before
 * they fill a never-populated page or load a stored one: above the limit the
 * fault is held (direct reclaim's place) until the reclaimer has brought the
 * charge down, or has found nothing left to take.
 *
 * Which pages: a CLOCK hand over the managed memory in address order. Each
 * resident page carries a word (struct slot's aux):
 *
 *   resident: bits 12..31 the second (since start-up, modulo 2^20) it
 *             last came in, bits 10..11 its level (how often it came back
 *             quickly), bits 1..9 protection: clock passes it survives,
 *             bit 0 set
 *   stored:   bits 3..31 the eviction clock (pages evicted so far) when it
 *             left, bits 1..2 its level, bit 0 clear
 *
 * A page that refaults within fewer evictions than half the program's pages
 * resident outside the pool (the kernel's refault distance against its
 * active list, mm/workingset.c) was in the working set: it comes back
 * protected. MADV_COLD pages (SLOT_COLD) go first. A step
 * that has looked at 16 pages per page it wants takes protected pages too:
 * a working set larger than memory, where every page refaults quickly,
 * costs a bounded scan.
 *
 * Reads are not seen, and under a limit neither are writes: the clock goes
 * by refaults alone. Written bits (kernel 6.7+, UFFD_FEATURE_WP_ASYNC;
 * regions registered MISSING|WP) serve the cold-age pass: its scan
 * (PAGEMAP_SCAN with PM_SCAN_WP_MATCHING) reads whether each page was
 * written since the last pass and write-protects it again, and the kernel
 * clears the protection at the next write without telling us. A page
 * written since is not idle (pgactivate): its age starts again. Each write
 * after a scan is a fault; a pass comes every quarter of the cold age, but
 * the limit's clock passes many times a second under pressure, where those
 * faults cost more than the pages the bit kept (docs/DESIGN.md, "Which
 * pages").
 */
#ifndef ZSWAP_POLICY_H
#define ZSWAP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/region.h"
#include "zswap.h"

/* Whether a memory limit is set: then regions are registered with
 * userfaultfd when they are created, so first touches fault and are counted. */
bool policy_limit_set(void);

/* Whether the clock's current sweep reads written bits: a cold-age pass's
 * (the reclaimer's thread alone calls it, from its sweep). */
bool policy_reads_written(void);

/*
 * A handler is about to zero-fill npages pages, or (npages 0) to load a
 * stored page (loads are counted through eng.cnt.refaults, readahead's
 * included). Returns false to go ahead (the pages are counted), true when
 * the charge is at the limit and the fault should be held: the caller lets
 * go of eng.ev_lock, polls policy_wait_fd() with the userfaultfd (calling
 * policy_wait_done() if it was readable) and serves the fault again.
 */
bool policy_throttle(size_t npages);

/* True when npages more pages leave the charge below the line where
 * background reclaim wakes (or no limit is set): room for pages the program
 * asked for ahead (MADV_WILLNEED). No side effect. */
bool policy_room(size_t npages);

/* A handler's fault is held at the limit from now (true), or was held and
 * is served now (false): memory pressure's "some" time, the wall time
 * during which at least one fault was held. */
void policy_held(bool start);

/* A descriptor that becomes readable when the reclaimer has made progress
 * (poll it with the userfaultfd), and what to call once it polled readable. */
int policy_wait_fd(void);
void policy_wait_done(void);

/* Per-page hooks. The caller owns the slot (LOADING or EVICTING). */
static inline uint32_t policy_aux_fresh(uint32_t now_s)
{
	return (now_s << 12) | 1u;
}
uint32_t policy_now(void);			/* seconds since start-up, for aux */
/* fault_load: aux from the refault distance; true for a quick refault
 * (workingset_activate), which the caller notes with policy_note_quick. */
bool policy_refault(struct slot *s);
struct slot_array;
void policy_note_stored(struct slot_array *arr);	/* evict: a page of arr stored */
void policy_note_quick(struct slot_array *arr);		/* fault_load: a quick refault in arr */
/* The share of a mapping's pages the clock chooses that it takes, in
 * 1/POLICY_SHARE_ALL: less than all when the mapping's quick refaults per
 * page stored are above the process's. policy_region_take says yes to
 * that share of the pages it is asked about, in turn. */
#define POLICY_SHARE_ALL 256u
unsigned int policy_region_share(struct slot_array *arr);
bool policy_region_take(struct slot_array *arr, unsigned int share);
uint32_t policy_evict_stamp(void);		/* evict: the eviction clock now */
/* Evictions since a stored page left, from its stored word (writeback's
 * measure of a pool entry's age). */
uint32_t policy_stored_age(uint32_t stored_aux);
/* evict: the stored word of a page evicted at clock (its level kept). */
uint32_t policy_aux_evicted(uint32_t resident_aux, uint32_t clock);

/* The eviction clock against time: a stored page's word holds the clock
 * when it left, not the second, so the reclaimer samples the clock as time
 * goes by (policy_clock_sample, at every turn of its loop) and an age in
 * seconds reads as an age in evictions. policy_idle_min_age: the least
 * policy_stored_age of a page stored at least seconds ago (every page so
 * aged has it); false when no sample is that old (nothing stored is). The
 * reclaimer's thread only. */
void policy_clock_sample(void);
bool policy_idle_min_age(uint32_t seconds, uint32_t *min_age);

/* Eviction's question in reclaim mode: take this resident page now?
 * written: it was written since the last cold-age pass (read in those
 * passes alone). (May lower its protection instead.) A protected page is
 * kept even right after a taken one: taking it along for one MOVE evicted
 * hot pages spread among cold ones (docs/DESIGN.md, "Tried and rejected"). */
bool policy_select(struct slot *s, uint32_t state, bool written);

/* madvise(MADV_COLD) marked [start, end)'s resident pages SLOT_COLD: the
 * clock visits that range first, before going on where its hand was (the
 * kernel puts such pages at the tail of the inactive list). Up to
 * RECLAIM_COLD_HINTS ranges wait; more are marked all the same and taken
 * when the hand reaches them. */
void policy_cold_hint(uintptr_t start, uintptr_t end);

/* Statistics: the fields reclaim owns in struct zswap_stats. */
void policy_stats(struct zswap_stats *st);

#endif
