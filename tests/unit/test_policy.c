/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_policy.c - the engine's page selection (src/engine/policy.c), in
 * process: the clock's question asked of single slots, as the reclaimer
 * asks it, with the policy's state set by hand.
 *
 * Checked: a page with no protection is taken at once, a MADV_COLD one
 * whatever its protection; a page that refaults soon after it left (a
 * refault distance under the working set) comes back protected and
 * survives 15 passes of the hand, then 63 after a second quick refault,
 * while one that refaults late is taken at the first pass; a step past its
 * scan budget, or forced, takes protected pages too; a page written since
 * the last scan is passed over; a cold-age pass takes only pages idle for
 * the cold age; a mapping whose stored pages come back quickly more often
 * than the rest's gives reclaim its share of the pages chosen, in turn.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/policy.h"
#include "engine/policy_reclaim.h"
#include "engine/region.h"
#include "test_check.h"

/* Passes of the hand a resident slot survives before the clock takes it
 * (a non-reclaiming step: the budget is never reached). */
static int passes_survived(struct slot *s)
{
	int n = 0;

	while (n < 1000 && !policy_select(s, SLOT_RESIDENT, false))
		n++;
	return n;
}

/* A page that left at eviction clock `left` (its level kept from its
 * resident word) and refaults when the clock reads `now`. */
static void refault_at(struct slot *s, uint32_t left, uint64_t now)
{
	atomic_store(&s->aux, policy_aux_evicted(atomic_load(&s->aux), left));
	atomic_store(&eng.cnt.evicted_pages, now);
	policy_refault(s);
}

/* A mapping's stores, and the quick refaults among them. */
static void notes(struct slot_array *arr, int stored, int quick)
{
	for (int i = 0; i < stored; i++)
		policy_note_stored(arr);
	for (int i = 0; i < quick; i++)
		policy_note_quick(arr);
}

static void reset_step(void)
{
	pol.looked = 0;
	pol.budget = 1u << 20;
	pol.force = pol.proactive = false;
}

int main(void)
{
	struct slot s;

	memset(&s, 0, sizeof(s));
	atomic_store(&pol.on, true);
	atomic_store(&pol.workingset, 1000);
	reset_step();

	/* Cold: a page that came in and never refaulted is taken. */
	atomic_store(&s.aux, policy_aux_fresh(0));
	CHECK(passes_survived(&s) == 0, "an unprotected page survived the hand");

	/* Hot: a refault 50 evictions after it left (working set 1000). */
	atomic_store(&s.aux, policy_aux_evicted(atomic_load(&s.aux), 100));
	atomic_store(&eng.cnt.evicted_pages, 150);
	CHECK(policy_refault(&s), "a refault 50 evictions after its page left was not quick");
	CHECK(AUX_LEVEL(atomic_load(&s.aux)) == 1, "a quick refault gives level %u, expected 1",
	      AUX_LEVEL(atomic_load(&s.aux)));
	int n = passes_survived(&s);
	CHECK(n == 15, "a page refaulting quickly survived %d passes, expected 15", n);
	uint64_t act = atomic_load(&pol.activate);
	CHECK(act == 1, "workingset_activate is %llu after one quick refault, expected 1", (unsigned long long)act);

	/* Hotter: quick again, the protection grows. */
	refault_at(&s, 2000, 2100);
	n = passes_survived(&s);
	CHECK(n == 63, "a page refaulting quickly twice survived %d passes, expected 63", n);

	/* A late refault (5000 evictions later) starts again unprotected. */
	refault_at(&s, 3000, 8000);
	CHECK(passes_survived(&s) == 0, "a page refaulting late survived the hand");

	/* MADV_COLD: first in line, whatever its protection. */
	refault_at(&s, 9000, 9010);
	CHECK(policy_select(&s, SLOT_RESIDENT | SLOT_COLD, false), "a protected MADV_COLD page was kept");

	/* Past the step's scan budget, and in a forced step, protection gives way. */
	reset_step();
	pol.budget = 0;
	CHECK(policy_select(&s, SLOT_RESIDENT, false), "a protected page was kept past the scan budget");
	reset_step();
	pol.force = true;
	CHECK(policy_select(&s, SLOT_RESIDENT, false), "a protected page was kept in a forced step");

	/* Under a limit the clock goes by refaults alone: a written bit, were
	 * one passed, changes nothing. */
	reset_step();
	atomic_store(&s.aux, policy_aux_fresh(0));
	uint64_t pga = atomic_load(&pol.pgactivate);
	CHECK(policy_select(&s, SLOT_RESIDENT, true), "a written page was kept by the limit's clock");
	CHECK(atomic_load(&pol.pgactivate) == pga, "the limit's clock counted a written page in pgactivate");
	CHECK(!policy_reads_written(), "the limit's clock asks for written bits");

	/* A cold-age pass: idle for the cold age or more is taken, younger not. */
	reset_step();
	pol.proactive = true;
	pol.cold_age = 10;
	pol.now_s = 100;
	atomic_store(&s.aux, policy_aux_fresh(95));
	CHECK(!policy_select(&s, SLOT_RESIDENT, false), "a page idle 5 s was taken with a cold age of 10 s");
	atomic_store(&s.aux, policy_aux_fresh(80));
	CHECK(policy_select(&s, SLOT_RESIDENT, false), "a page idle 20 s was kept with a cold age of 10 s");
	/* ... unless written since the last pass: not idle, its age starts again. */
	CHECK(policy_reads_written(), "a cold-age pass does not ask for written bits");
	atomic_store(&s.aux, policy_aux_fresh(80));
	CHECK(!policy_select(&s, SLOT_RESIDENT, true), "a page written since the last pass was taken as idle");
	CHECK(atomic_load(&pol.pgactivate) == pga + 1, "pgactivate did not count the written page");
	CHECK(!policy_select(&s, SLOT_RESIDENT, false), "a page written at this pass was idle at once");

	/* The balance between mappings: one whose stored pages come back
	 * quickly at 0.9 beside the rest's 0.3 gives reclaim (1 - 0.9) /
	 * (1 - 0.3) of the pages chosen; the other, all of them. */
	reset_step();
	struct slot_array *a = calloc(1, sizeof(*a) + sizeof(struct slot));
	struct slot_array *b = calloc(1, sizeof(*b) + sizeof(struct slot));
	CHECK(a && b, "calloc");
	notes(a, 1000, 900);
	notes(b, 3000, 900);
	unsigned int sa = policy_region_share(a), sb = policy_region_share(b);
	CHECK(sa == 36, "a mapping refaulting quickly at 0.9 against 0.3 has share %u/256, expected 36", sa);
	CHECK(sb == POLICY_SHARE_ALL, "the mapping refaulting less has share %u/256, expected all", sb);
	int took = 0;
	for (int i = 0; i < 256 * 10; i++)
		took += policy_region_take(a, sa);
	CHECK(took == 360, "a share of 36/256 took %d of 2560 pages, expected 360", took);
	for (int i = 0; i < 100; i++)
		CHECK(policy_region_take(b, sb), "a whole share left a page");
	/* Not in a cold-age pass, which goes by age. */
	pol.proactive = true;
	CHECK(policy_region_share(a) == POLICY_SHARE_ALL, "a cold-age pass gave a mapping less than all");
	reset_step();
	/* Every eviction back quickly: the floor, 8/256. */
	memset(a, 0, sizeof(*a));
	notes(a, 1000, 1000);
	CHECK(policy_region_share(a) == 8, "a mapping whose every page came back has share %u, expected 8",
	      policy_region_share(a));
	/* Close to the rest (0.35 against 0.3): whole, a thinning would cost scans. */
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	atomic_store(&pol.bal_ev, 0);
	atomic_store(&pol.bal_quick, 0);
	notes(a, 1000, 350);
	notes(b, 3000, 900);
	CHECK(policy_region_share(a) == POLICY_SHARE_ALL, "0.35 against 0.3 gave share %u, expected all",
	      policy_region_share(a));
	/* Too few stores to judge. */
	memset(a, 0, sizeof(*a));
	notes(a, 100, 100);
	CHECK(policy_region_share(a) == POLICY_SHARE_ALL, "100 stores were judged: share %u", policy_region_share(a));
	free(a);
	free(b);

	if (failures) {
		fprintf(stderr, "test_policy: %d check(s) failed\n", failures);
		return 1;
	}
	fprintf(stderr, "test_policy: ok\n");
	return 0;
}
