/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_region.c - the engine's region table (src/engine/region.c), in
 * process: no userfaultfd, no program memory, only addresses.
 *
 * Checked: an insert covers only what no region covers (regions never
 * overlap); a partial UNMAP splits a region, the upper part sharing the
 * slot array at the right index, and frees the entries it drops (a stored
 * page's entry goes back to the store, an in-flight page is marked DROPPED
 * for its owner); REMOVE keeps the regions and marks resident pages ZAP; a
 * REMAP moves the regions with their slots, and the UNMAP that follows it
 * spares a region another REMAP moved into the old range meanwhile; a
 * range made unmanageable loses its slots and keeps its flag against a
 * later insert, and munlock's forget takes it out unless it is kept out
 * for good; lookups, collection and the counts agree with all this.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/prim.h"
#include "core/store.h"
#include "engine/region.h"
#include "test_check.h"

#define P(n) ((uintptr_t)(n) * ZS_PAGE_SIZE)
#define RA ((uintptr_t)0x100000000)	/* addresses only: nothing is mapped there */
#define RB ((uintptr_t)0x200000000)
#define RC ((uintptr_t)0x300000000)

static void expect_counts(const char *what, uint64_t regions, uint64_t bytes)
{
	uint64_t r, b;

	region_counts(&r, &b);
	CHECK(r == regions && b == bytes, "%s: %llu regions of %llu pages, expected %llu of %llu", what,
	      (unsigned long long)r, (unsigned long long)(b / ZS_PAGE_SIZE), (unsigned long long)regions,
	      (unsigned long long)(bytes / ZS_PAGE_SIZE));
}

/* The region at addr spans [start, end) (0, 0: none covers addr). */
static struct region_ref expect_region(const char *what, uintptr_t addr, uintptr_t start, uintptr_t end)
{
	struct region_ref ref;
	bool found = region_lookup(addr, &ref, false);

	if (!start)
		CHECK(!found, "%s: a region [%#lx, %#lx) covers %#lx, expected none", what,
		      (unsigned long)ref.start, (unsigned long)ref.end, (unsigned long)addr);
	else
		CHECK(found && ref.start == start && ref.end == end,
		      "%s: the region at %#lx is [%#lx, %#lx) (found %d), expected [%#lx, %#lx)", what,
		      (unsigned long)addr, (unsigned long)ref.start, (unsigned long)ref.end, found,
		      (unsigned long)start, (unsigned long)end);
	return ref;
}

static uint32_t slot_state(struct slot_array *arr, size_t i)
{
	return atomic_load(&arr->slots[i].state);
}

/* Register the region at addr with a fresh slot array: the array, or NULL
 * when the region is gone or registered already. */
static struct slot_array *register_at(uintptr_t addr)
{
	struct region_ref ref;

	if (!region_lookup(addr, &ref, false))
		return NULL;
	struct slot_array *arr = region_arr_alloc((ref.end - ref.start) / ZS_PAGE_SIZE);
	if (arr && region_set_registered(&ref, arr))
		return arr;	/* the region holds its reference */
	if (arr)
		region_arr_put(arr);
	return NULL;
}

/* Store one page into slot i of arr (STORED with its entry). */
static void store_into(struct zswap_store *s, struct slot_array *arr, size_t i)
{
	static unsigned char page[ZS_PAGE_SIZE];

	for (size_t k = 0; k < sizeof(page); k++)
		page[k] = (unsigned char)(k * 7 + i);
	CHECK(zswap_store_page(s, page, &arr->slots[i].e) == 0, "storing a page for slot %zu failed", i);
	atomic_store(&arr->slots[i].state, SLOT_STORED);
}

static uint64_t stored_pages(struct zswap_store *s)
{
	struct zswap_stats st;

	memset(&st, 0, sizeof(st));
	zswap_store_stats(s, &st);
	return st.stored_pages;
}

static void test_insert_unmap(struct zswap_store *s)
{
	region_insert(RA, RA + P(16), 0);
	expect_counts("insert", 1, P(16));
	struct region_ref ref;
	CHECK(!region_lookup(RA - 1, &ref, false) && ref.end == RA,
	      "a lookup below the table gives the next region's start (%#lx)", (unsigned long)ref.end);

	/* Overlapping: only the gap becomes a region. */
	region_insert(RA + P(8), RA + P(24), 0);
	expect_counts("insert over a region", 2, P(24));
	expect_region("insert over a region", RA + P(10), RA, RA + P(16));
	expect_region("insert over a region", RA + P(20), RA + P(16), RA + P(24));

	struct slot_array *arr = register_at(RA);
	if (!arr) {
		CHECK(arr, "registering the region at RA failed");
		return;
	}
	CHECK(register_at(RA) == NULL, "a registered region is registered again");
	store_into(s, arr, 5);
	atomic_store(&arr->slots[4].state, SLOT_EVICTING);
	CHECK(stored_pages(s) == 1, "the store holds %llu pages, expected 1", (unsigned long long)stored_pages(s));

	/* UNMAP of [4, 6): split, entries dropped, the upper part at slot 6. */
	region_drop_range(s, RA + P(4), RA + P(6), true);
	expect_counts("partial UNMAP", 3, P(22));
	expect_region("partial UNMAP", RA, RA, RA + P(4));
	expect_region("partial UNMAP", RA + P(5), 0, 0);
	ref = expect_region("partial UNMAP", RA + P(6), RA + P(6), RA + P(16));
	CHECK(ref.arr == arr && ref.first == 6, "the upper part has array %p at %zu, expected %p at 6",
	      (void *)ref.arr, ref.first, (void *)arr);
	CHECK(stored_pages(s) == 0, "UNMAP left %llu pages in the store", (unsigned long long)stored_pages(s));
	CHECK(slot_state(arr, 5) == SLOT_RESIDENT, "the stored slot is %#x after UNMAP", slot_state(arr, 5));
	CHECK(slot_state(arr, 4) == (SLOT_EVICTING | SLOT_DROPPED), "the in-flight slot is %#x after UNMAP",
	      slot_state(arr, 4));
	uintptr_t at = 0;
	CHECK(region_addr_of(arr, 10, &at) && at == RA + P(10), "slot 10 is at %#lx", (unsigned long)at);

	/* REMOVE: the regions stay, resident pages are marked ZAP, a stored
	 * one goes back to the store. */
	store_into(s, arr, 7);
	region_drop_range(s, RA + P(6), RA + P(9), false);
	expect_counts("REMOVE", 3, P(22));
	CHECK(stored_pages(s) == 0, "REMOVE left %llu pages in the store", (unsigned long long)stored_pages(s));
	CHECK(slot_state(arr, 6) == (SLOT_RESIDENT | SLOT_ZAP), "a resident slot is %#x after REMOVE",
	      slot_state(arr, 6));
	CHECK(slot_state(arr, 7) == SLOT_RESIDENT, "a stored slot is %#x after REMOVE", slot_state(arr, 7));
	region_clear_zap(RA + P(6), RA + P(9));
	CHECK(slot_state(arr, 6) == SLOT_RESIDENT, "ZAP stays after its zap: %#x", slot_state(arr, 6));

	/* The registered regions are left to their UNMAP event. */
	CHECK(region_forget_unregistered(RA, RA + P(24)), "no region overlapped");
	expect_counts("munmap of unregistered regions", 2, P(14));
	region_drop_range(s, RA, RA + P(24), true);
	expect_counts("UNMAP of the rest", 0, 0);
}

static void test_remap(struct zswap_store *s)
{
	region_insert(RA, RA + P(8), 0);
	struct slot_array *arr = register_at(RA);
	if (!arr) {
		CHECK(arr, "registering the region at RA failed");
		return;
	}
	store_into(s, arr, 3);

	/* mremap moving [RA, RA + 8 pages) to RB: the slots come along. */
	region_relocate(s, RA, P(8), RB);
	expect_counts("REMAP", 1, P(8));
	expect_region("REMAP, the old range", RA, 0, 0);
	struct region_ref ref = expect_region("REMAP", RB + P(3), RB, RB + P(8));
	CHECK(ref.arr == arr && ref.first == 0, "the moved region has array %p at %zu", (void *)ref.arr, ref.first);
	CHECK(slot_state(arr, 3) == SLOT_STORED && stored_pages(s) == 1, "the stored page did not come along");
	uintptr_t at = 0;
	CHECK(region_addr_of(arr, 3, &at) && at == RB + P(3), "slot 3 is at %#lx", (unsigned long)at);

	/* Before the UNMAP of [RA, RA + 8 pages) is read, another mremap moves RC into
	 * the range: that UNMAP must spare it. */
	region_insert(RC, RC + P(4), 0);
	region_relocate(s, RC, P(4), RA + P(2));
	region_drop_range(s, RC, RC + P(4), true);
	region_drop_range(s, RA, RA + P(8), true);
	expect_region("the late UNMAP spares a region moved in", RA + P(2), RA + P(2), RA + P(6));
	expect_region("the late UNMAP", RB, RB, RB + P(8));
	CHECK(stored_pages(s) == 1, "the late UNMAP dropped the moved page's entry");

	/* A REMAP onto memory the table still had replaces it, entries and
	 * all. */
	region_relocate(s, RA + P(2), P(4), RB + P(2));
	expect_region("REMAP over a region", RB + P(2), RB + P(2), RB + P(6));
	expect_region("REMAP over a region", RB, RB, RB + P(2));
	expect_region("REMAP over a region", RB + P(7), RB + P(6), RB + P(8));
	CHECK(stored_pages(s) == 0, "the entry of the page moved over is still stored");
	region_drop_range(s, RA + P(2), RA + P(6), true);
	region_drop_range(s, RB, RB + P(8), true);
	expect_counts("REMAP, then UNMAP", 0, 0);
}

static void test_unmanageable(struct zswap_store *s)
{
	region_insert(RA, RA + P(8), 0);
	struct slot_array *arr = register_at(RA);

	CHECK(arr, "registering the region at RA failed");
	/* mlock of [2, 4) and of the gap [8, 10): split, no slots, gap covered. */
	region_set_unmanageable(RA + P(2), RA + P(4), true, 0);
	region_set_unmanageable(RA + P(8), RA + P(10), true, 0);
	expect_counts("mlock", 4, P(10));
	struct region_ref ref = expect_region("mlock", RA + P(2), RA + P(2), RA + P(4));
	CHECK((ref.flags & REGION_UNMANAGEABLE) && !(ref.flags & REGION_REGISTERED) && !ref.arr,
	      "a locked region has flags %#x and array %p", ref.flags, (void *)ref.arr);
	ref = expect_region("mlock of a gap", RA + P(9), RA + P(8), RA + P(10));
	CHECK(ref.flags & REGION_UNMANAGEABLE, "a locked gap has flags %#x", ref.flags);
	ref = expect_region("mlock", RA + P(5), RA + P(4), RA + P(8));
	CHECK(ref.arr == arr && ref.first == 4 && !(ref.flags & REGION_UNMANAGEABLE),
	      "the unlocked rest has array %p at %zu, flags %#x", (void *)ref.arr, ref.first, ref.flags);

	/* Collection (what eviction walks) skips the locked ranges. */
	struct region_ref got[8];
	uintptr_t cursor = RA;
	size_t n = region_collect(RA, RA + P(10), &cursor, got, 8);
	CHECK(n == 2 && got[0].start == RA && got[1].start == RA + P(4),
	      "eviction's collection found %zu regions, expected [0, 2) and [4, 8)", n);
	for (size_t i = 0; i < n; i++)
		region_arr_put(got[i].arr);

	/* A later insert (an adoption, a new mapping) leaves them locked. */
	region_insert(RA, RA + P(10), 0);
	ref = expect_region("insert over a locked region", RA + P(3), RA + P(2), RA + P(4));
	CHECK(ref.flags & REGION_UNMANAGEABLE, "an insert took a locked region back: flags %#x", ref.flags);

	/* munlock: out of the table, but for a range kept out for good. */
	region_set_unmanageable(RA + P(8), RA + P(9), false, REGION_KEEPOUT);
	region_forget_unmanageable(RA, RA + P(10));
	expect_region("munlock", RA + P(2), 0, 0);
	expect_region("munlock", RA + P(9), 0, 0);
	ref = expect_region("munlock, kept out", RA + P(8), RA + P(8), RA + P(9));
	CHECK((ref.flags & (REGION_UNMANAGEABLE | REGION_KEEPOUT)) == (REGION_UNMANAGEABLE | REGION_KEEPOUT),
	      "a range kept out for good has flags %#x", ref.flags);
	region_forget(s, RA, RA + P(10));
	expect_counts("forget", 0, 0);
}

int main(void)
{
	struct zswap_store_config cfg = { .comp = ZSWAP_COMP_LZ4, .order = 2, .nr_pools = 1 };
	struct zswap_store *s = zswap_store_create(&cfg);

	if (!s || region_init() < 0) {
		fprintf(stderr, "test_region: cannot create the store or the table\n");
		return 99;
	}
	test_insert_unmap(s);
	test_remap(s);
	test_unmanageable(s);
	if (failures) {
		fprintf(stderr, "test_region: %d check(s) failed\n", failures);
		return 1;
	}
	fprintf(stderr, "test_region: ok\n");
	return 0;
}
