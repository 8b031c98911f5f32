/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * region.h - managed mappings and the state of each of their pages.
 *
 * A region is a page-aligned range of private anonymous writable memory the
 * engine manages. Regions need not match kernel VMAs one to one: a mapping may
 * be covered by several adjacent regions (a grown tail adopted later), and
 * regions are split when part of them is unmapped.
 *
 * Page state lives in a slot array, allocated from prim when the region is
 * first registered with userfaultfd (a region that is never evicted has none).
 * Split regions share their array (refcounted): a slot never moves in memory
 * for its whole life, so a thread that owns a slot in flight (EVICTING,
 * LOADING) holds a reference on the array and the slot index, and finds the
 * slot's current address again with region_addr_of() if the mapping was moved
 * meanwhile (mremap: the region is relocated, its slots stay).
 *
 * Slot state word (atomic, lock-free CAS transitions):
 *
 *   RESIDENT --evictor claims--> EVICTING --entry published--> STORED
 *      ^  ^                         |                            |
 *      |  +---- put back / dropped -+                 handler claims (exclusive load)
 *      |                                                         v
 *      +--------------- page installed / dropped ----------- LOADING
 *
 *   RESIDENT --handler claims a never-populated run--> LOADING --zero-filled--> RESIDENT
 *
 * Flags: WAITER (a fault arrived while in flight: the owner must wake the
 * page), COLD (MADV_COLD: first in line for reclaim), DROPPED (an UNMAP or
 * REMOVE event hit the page while in flight: the owner discards its data),
 * ZAP (a REMOVE event covered this resident page: the kernel sends REMOVE
 * before it zaps, and lets UFFDIO_MOVE through again as soon as the event is
 * read, so the page may still be there, doomed; evicting it then would save
 * the old contents from the zap. Never evicted while set; cleared when a
 * fault fills the page (after the zap, or zapped with it) and by the
 * interposed madvise once its own zap is known to be done), INBUF (with
 * LOADING: the exclusive load has taken the page out of the store and it is
 * not in place yet: its only copy is in a handler's buffer, perhaps while
 * the handler waits for events. fork and mlock, which need every page in
 * place, wait until no slot has it), KEPT (with RESIDENT, and with EVICTING
 * while its evictor decides: the page came back from the second tier and
 * its slot there was kept, the swap cache's way; the entry names that slot.
 * Evicted again unchanged, the page goes to that slot with no write; changed,
 * dropped or gone, the slot is freed, by whoever clears the flag).
 * The entry is written only by the slot's owner: the evictor while EVICTING,
 * and read/consumed only by whoever moves the slot out of STORED, or clears
 * KEPT.
 *
 * Locking: the table is a sorted array under a rwlock; lookups are
 * O(log regions). Whoever mutates the table (interposed mmap/munmap, event
 * processing, adoption) takes it for writing and never faults while holding it.
 */
#ifndef ZSWAP_REGION_H
#define ZSWAP_REGION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/store.h"

#define SLOT_RESIDENT	0u
#define SLOT_EVICTING	1u
#define SLOT_STORED	2u
#define SLOT_LOADING	3u
#define SLOT_STATE	3u
#define SLOT_WAITER	(1u << 2)
#define SLOT_COLD	(1u << 3)
#define SLOT_DROPPED	(1u << 4)
#define SLOT_ZAP	(1u << 5)
#define SLOT_INBUF	(1u << 6)
#define SLOT_KEPT	(1u << 7)

struct slot {
	_Atomic uint32_t state;
	/* Reclaim's word (src/engine/policy.h): while the page is resident, when it
	 * last came in and how long it stays protected; while stored, the
	 * eviction clock at its eviction (refault distance). Relaxed: a hint. */
	_Atomic uint32_t aux;
	struct zswap_entry e;
};

/* Paid on every managed page and counted in the memory limit. */
_Static_assert(sizeof(struct slot) == 16, "a slot grew");

struct slot_array {
	_Atomic long refs;
	size_t npages;
	size_t bytes;		/* the prim allocation, for freeing */
	_Atomic uint64_t refaults;	/* statistics (src/observe/attrib.c): pages loaded back, */
	_Atomic uint64_t evicted;	/* and pages stored, since the array was made */
	/* The balance between mappings (policy_region_share): pages stored
	 * and quick refaults, both halved as they add up, and the reclaimer's
	 * credit toward its next page (policy_region_take). */
	_Atomic uint32_t bal_ev, bal_quick;
	uint32_t bal_credit;
	struct slot slots[];
};

/* Region flags. */
#define REGION_REGISTERED	(1u << 0)	/* registered with userfaultfd; has a slot array */
#define REGION_UNMANAGEABLE	(1u << 1)	/* never evict: foreign userfaultfd, mlocked, not anon rw */
#define REGION_ADOPTED		(1u << 2)	/* found in /proc/self/maps, not seen at mmap */
#define REGION_LIBC		(1u << 3)	/* adopted once (stays): the C library's memory, for statistics */
#define REGION_KEEPOUT		(1u << 4)	/* with UNMANAGEABLE: for good (a fork advice, a given stack's top); munlock keeps it */

/* A snapshot of one region, taken under the table lock. */
struct region_ref {
	uintptr_t start, end;
	struct slot_array *arr;	/* NULL when not registered; referenced when asked for */
	size_t first;		/* slot index of start in arr */
	uint32_t flags;
	void *id;		/* identity (with gen) for region_set_registered() */
	uint64_t gen;
};

int region_init(void);

/* The table lock, for callers that must keep a lookup valid across a call
 * (a zero-fill of an address no region covers must not race an adoption). */
void region_rdlock(void);
void region_unlock(void);
/* In a forked child: the table lock afresh (its holders stayed in the parent). */
void region_fork_child(void);

/* Find the region covering addr. With arr_ref, a reference on its slot array
 * is taken (drop it with region_arr_put). Returns false when none covers it;
 * then ref->end is set to the start of the next region (or UINTPTR_MAX). */
bool region_lookup(uintptr_t addr, struct region_ref *ref, bool arr_ref);
/* The same, for callers already holding region_rdlock(). */
bool region_lookup_locked(uintptr_t addr, struct region_ref *ref, bool arr_ref);

void region_arr_get(struct slot_array *arr);
void region_arr_put(struct slot_array *arr);

/* Insert regions covering the parts of [start, end) no region covers yet,
 * with the given flags. Returns 0 or -ENOMEM. */
int region_insert(uintptr_t start, uintptr_t end, uint32_t flags);

/* Remove the regions in [start, end) that are not registered (those hold no
 * entries; registered ones are removed by their UNMAP event). For munmap,
 * MAP_FIXED and mremap, whose kernel side raised no event for them. Returns
 * true if any region overlapped the range. */
bool region_forget_unregistered(uintptr_t start, uintptr_t end);

/* An UNMAP or REMOVE event: drop every entry in [start, end) (in-flight slots
 * are marked DROPPED for their owner). UNMAP (unmap true) takes the range out
 * of the table; REMOVE marks the resident slots ZAP instead. */
void region_drop_range(struct zswap_store *store, uintptr_t start, uintptr_t end, bool unmap);

/* Nothing is mapped in [start, end) any more (a fork child's own address
 * space says so): drop every entry there and take the range out of the
 * table, every region, whatever a REMAP noted about an UNMAP due there. */
void region_forget(struct zswap_store *store, uintptr_t start, uintptr_t end);

/* The kernel's zap of [start, end) is known to be done and no other REMOVE
 * event was processed since: clear ZAP there (caller holds eng.ev_lock read). */
void region_clear_zap(uintptr_t start, uintptr_t end);

/* A REMAP event: the regions in [from, from+len) now live at [to, to+len). */
void region_relocate(struct zswap_store *store, uintptr_t from, size_t len, uintptr_t to);

/* Mark a region (by identity from a ref) registered with its new slot array.
 * Fails (false) if the region changed or left the table meanwhile. */
bool region_set_registered(const struct region_ref *ref, struct slot_array *arr);

/* Mark the regions in [start, end) unmanageable (splitting at the bounds),
 * dropping their slot arrays, plus extra flags (REGION_KEEPOUT); with
 * cover_gaps, the parts no region covers get unmanageable regions too, so
 * adoption leaves them alone. */
void region_set_unmanageable(uintptr_t start, uintptr_t end, bool cover_gaps, uint32_t extra);

/* Remove unmanageable regions in [start, end) (munlock: may be adopted
 * again), except those marked REGION_KEEPOUT. */
void region_forget_unmanageable(uintptr_t start, uintptr_t end);

/* The current address of slot idx of arr, if a region in the table holds it. */
bool region_addr_of(const struct slot_array *arr, size_t idx, uintptr_t *addr);

/* Copy out up to max registered regions overlapping [start, end) that begin
 * at or after *cursor, with array references taken; advances *cursor. */
size_t region_collect(uintptr_t start, uintptr_t end, uintptr_t *cursor,
		      struct region_ref *out, size_t max);

/* fn on every registered region, its array referenced for the call. */
void region_for_each(void (*fn)(const struct region_ref *r, void *arg), void *arg);

/* Like region_collect, but every region, registered or not (arr NULL when
 * not registered, else referenced): the statistics dump's attribution. */
size_t region_collect_all(uintptr_t start, uintptr_t end, uintptr_t *cursor,
			  struct region_ref *out, size_t max);

/* A slot array for npages pages, all RESIDENT, one reference held. */
struct slot_array *region_arr_alloc(size_t npages);

/* Statistics. */
void region_counts(uint64_t *regions, uint64_t *bytes);

/* Drop one slot's entry (the per-page part of region_drop_range). */
void region_drop_slot(struct zswap_store *store, struct slot *s);

/* Free the tier slot a resident page kept (KEPT), if it has one: the page
 * is about to change or leave management. True if one was freed. The
 * range form covers every registered region's slots in [start, end) (an
 * mlock, a fork advice: the arrays go, and with them what the slots name). */
bool region_release_kept(struct zswap_store *store, struct slot *s);
void region_release_kept_range(struct zswap_store *store, uintptr_t start, uintptr_t end);

#endif
