/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_store_switch.c - the compressor changed while threads store, load
 * and drop pages (zswap_store_set_comp): lz4, then zstd, lzo and lz4 again.
 *
 * In each round the workers run a fixed number of operations on a shared
 * slot table and the main thread changes the compressor half-way through,
 * while an observer thread reaps the old pools and reads the statistics.
 * Every load is compared byte for byte with the page stored (made again
 * from its seed). After a round the pages still held by the compressor
 * before are loaded; that compressor's pools must still be listed while
 * it holds one, and be freed exactly once when it holds none, with its
 * workspaces. Then a change back while the old compressor still holds
 * pages reuses its pools. At the end every page is loaded: the pools hold
 * nothing, and destroying the store gives back every byte it mapped.
 */
#include "config.h"
#include "core/store.h"
#include "base/prim.h"
#include "test_store_util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#define NWORKERS 4
#define NSLOTS 1024
#define ROUND_OPS 20000		/* per worker and round */
#define TEXT_PAGES 64
#define NWS 6			/* workspaces */

struct slot {
	_Atomic int busy;
	bool stored;
	uint64_t seed;
	struct zswap_entry e;
};

static struct {
	struct zswap_store *s;
	struct slot slots[NSLOTS];
	_Atomic uint64_t ops;
	_Atomic int stop;
} r;

static uint8_t *text;

/* Load the slot's page and compare it with the page its seed makes. */
static void load_check(struct slot *sl, uint8_t *pg, uint8_t *want)
{
	memset(pg, 0xEE, TP_PAGE);
	TP_CHECK_EQ(zswap_load_page(r.s, &sl->e, pg), 0);
	tp_mixed_page(want, sl->seed, text, TEXT_PAGES);
	TP_CHECK(memcmp(pg, want, TP_PAGE) == 0);
	TP_CHECK_EQ(zswap_entry_type(&sl->e), ZE_NONE);
	sl->stored = false;
}

static void *worker(void *arg)
{
	uint64_t st = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ULL + 1;
	static _Thread_local uint8_t pg[TP_PAGE] __attribute__((aligned(64)));
	static _Thread_local uint8_t want[TP_PAGE] __attribute__((aligned(64)));

	for (int op = 0; op < ROUND_OPS; op++) {
		struct slot *sl = &r.slots[tp_rand(&st) % NSLOTS];
		int zero = 0;

		atomic_fetch_add(&r.ops, 1);
		if (!atomic_compare_exchange_strong(&sl->busy, &zero, 1))
			continue;
		if (!sl->stored) {
			sl->seed = tp_rand(&st);
			tp_mixed_page(pg, sl->seed, text, TEXT_PAGES);
			TP_CHECK_EQ(zswap_store_page(r.s, pg, &sl->e), 0);
			sl->stored = true;
		} else if (tp_rand(&st) % 4) {
			load_check(sl, pg, want);
		} else {
			zswap_invalidate(r.s, &sl->e);
			sl->stored = false;
		}
		atomic_store(&sl->busy, 0);
	}
	return NULL;
}

/* The reclaimer's part: reaping and statistics, racing the workers. */
static void *observer(void *arg)
{
	(void)arg;
	while (!atomic_load(&r.stop)) {
		struct zswap_store_comp_stat cs[ZSWAP_COMP_KINDS];
		struct zswap_stats st;
		uint64_t freed;

		zswap_store_reap(r.s);
		memset(&st, 0, sizeof(st));
		zswap_store_stats(r.s, &st);
		TP_CHECK(zswap_store_comp_stats(r.s, cs, &freed) >= 1);
		TP_CHECK(cs[0].current);
		sched_yield();
	}
	return NULL;
}

/* The compressors in use, as the dump lists them; returns how many. */
static unsigned int in_use(enum zswap_comp *first, uint64_t *freed)
{
	struct zswap_store_comp_stat cs[ZSWAP_COMP_KINDS];
	unsigned int n = zswap_store_comp_stats(r.s, cs, freed);

	*first = cs[0].comp;
	return n;
}

/* One round: the workers run while the compressor becomes comp, after
 * left_32nds of their operations are left (much: the old pools empty while
 * they run, and the observer frees them; little: the pages left are loaded
 * here). Then the pages the one before holds are loaded, and its pools
 * must go exactly once. */
static void round_to(enum zswap_comp comp, enum zswap_comp was, uint64_t freed_before, unsigned int left_32nds)
{
	pthread_t t[NWORKERS];
	uint64_t start = atomic_load(&r.ops), freed, held = 0;
	enum zswap_comp first;
	static uint8_t pg[TP_PAGE], want[TP_PAGE];

	for (uintptr_t i = 0; i < NWORKERS; i++)
		TP_CHECK_EQ(pthread_create(&t[i], NULL, worker, (void *)(i + 1 + comp * NWORKERS)), 0);
	while (atomic_load(&r.ops) - start < (uint64_t)NWORKERS * ROUND_OPS / 32 * (32 - left_32nds))
		sched_yield();
	TP_CHECK_EQ(zswap_store_set_comp(r.s, comp, 0), 0);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(t[i], NULL);

	for (int i = 0; i < NSLOTS; i++) {
		const struct zswap_entry *e = &r.slots[i].e;
		enum zswap_entry_type ty = zswap_entry_type(e);
		held += r.slots[i].stored && (ty == ZE_COMPRESSED || ty == ZE_RAW) && zswap_entry_comp(e) == was;
	}
	/* Nothing can empty the old pools now: listed while they hold a page
	 * (once empty, the observer may have freed them or not yet). */
	unsigned int n = in_use(&first, &freed);
	TP_CHECK_EQ(first, comp);
	if (held) {
		TP_CHECK_EQ(n, 2);
		TP_CHECK_EQ(freed, freed_before);
	}
	size_t own = prim_own_bytes();
	for (int i = 0; i < NSLOTS; i++) {
		struct slot *sl = &r.slots[i];
		enum zswap_entry_type ty = zswap_entry_type(&sl->e);

		if (sl->stored && (ty == ZE_COMPRESSED || ty == ZE_RAW) && zswap_entry_comp(&sl->e) == was)
			load_check(sl, pg, want);
	}
	/* Freed here, or by the observer as the last page went: once. */
	TP_CHECK(zswap_store_reap(r.s) <= 1);
	TP_CHECK_EQ(zswap_store_reap(r.s), 0);
	TP_CHECK_EQ(in_use(&first, &freed), 1);
	TP_CHECK_EQ(freed, freed_before + 1);
	/* Its workspaces went with its pools (nothing else is made meanwhile:
	 * the workers are done). */
	if (held)
		TP_CHECK(prim_own_bytes() + NWS * comp_ws_size(was, 0) <= own);
	fprintf(stderr, "%s -> %s: %llu pages of %s loaded after the change\n", comp_name(was), comp_name(comp),
		(unsigned long long)held, comp_name(was));
}

int main(void)
{
	size_t own0 = prim_own_bytes();
	struct zswap_store_config cfg = {
		.comp = ZSWAP_COMP_LZ4, .order = 3, .lock = ZS_LOCK_CLASS, .nr_pools = 4, .nr_workspaces = NWS,
		.recomp = ZSWAP_COMP_ZSTD,
	};
	static const enum zswap_comp seq[] = { ZSWAP_COMP_ZSTD, ZSWAP_COMP_LZO, ZSWAP_COMP_LZ4 };
	pthread_t obs;
	enum zswap_comp first, was = ZSWAP_COMP_LZ4;
	uint64_t freed;
	static uint8_t pg[TP_PAGE], want[TP_PAGE];

	text = tp_pages(TP_TEXT, TEXT_PAGES, 11);
	r.s = zswap_store_create(&cfg);
	TP_CHECK(r.s);
	TP_CHECK_EQ(zswap_store_set_comp(r.s, (enum zswap_comp)7, 0), -EINVAL);
	TP_CHECK_EQ(pthread_create(&obs, NULL, observer, NULL), 0);
	for (unsigned int i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		round_to(seq[i], was, i, i == 1 ? 1 : 16);
		was = seq[i];
	}
	atomic_store(&r.stop, 1);
	pthread_join(obs, NULL);

	/* Back to a compressor that still holds pages: its pools are kept,
	 * and take the new pages too; the one between goes once empty. */
	struct slot *a = &r.slots[0], *b = &r.slots[1];
	for (int i = 0; i < NSLOTS; i++)
		if (r.slots[i].stored)
			load_check(&r.slots[i], pg, want);
	a->seed = 5;	/* text: a pool object */
	tp_mixed_page(pg, a->seed, text, TEXT_PAGES);
	TP_CHECK_EQ(zswap_store_page(r.s, pg, &a->e), 0);
	a->stored = true;
	TP_CHECK_EQ(zswap_store_set_comp(r.s, ZSWAP_COMP_ZSTD, 9), 0);
	b->seed = 5;
	TP_CHECK_EQ(zswap_store_page(r.s, pg, &b->e), 0);
	b->stored = true;
	TP_CHECK_EQ(zswap_entry_comp(&b->e), ZSWAP_COMP_ZSTD);
	TP_CHECK_EQ(zswap_store_set_comp(r.s, ZSWAP_COMP_LZ4, 0), 0);
	TP_CHECK_EQ(in_use(&first, &freed), 2);
	TP_CHECK_EQ(freed, 3);
	load_check(b, pg, want);
	TP_CHECK_EQ(zswap_store_reap(r.s), 1);
	TP_CHECK_EQ(in_use(&first, &freed), 1);
	TP_CHECK_EQ(first, ZSWAP_COMP_LZ4);
	TP_CHECK_EQ(freed, 4);
	load_check(a, pg, want);

	struct zswap_stats st;
	memset(&st, 0, sizeof(st));
	zswap_store_stats(r.s, &st);
	TP_CHECK_EQ(st.stored_pages, 0);
	TP_CHECK_EQ(st.pool_total_size, 0);
	TP_CHECK_EQ(st.compr_data_size, 0);
	TP_CHECK_EQ(st.decompress_fail, 0);
	TP_CHECK_EQ(zswap_store_pool_pages(r.s), 0);
	zswap_store_destroy(r.s);
	TP_CHECK_EQ(prim_own_bytes(), own0);
	free(text);
	fprintf(stderr, "test_store_switch: ok\n");
	return 0;
}
