/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_store_stress.c - several threads storing, loading and invalidating
 * pages of a shared slot table at once, each load checked against the
 * checksum of what was stored, while another thread reads the statistics and
 * compacts the pools. Run in each lock mode with 1 and 32 pools, and with
 * fewer workspaces than threads. A bounded number of operations, no timing.
 *
 * A page stored by one thread is often loaded or invalidated by another, as
 * the engine's evicting threads and fault handlers do. The slot table plays
 * the engine's part: a slot's entry is only touched under the slot's flag.
 *
 * Built twice: as tests/unit/test_store_stress, and with -fsanitize=thread as
 * tests/unit/test_store_tsan (STRESS_OPS smaller), run by test_store_tsan.sh.
 */
#include "config.h"
#include "core/store.h"
#include "test_store_util.h"

#include <pthread.h>
#include <string.h>

#ifndef STRESS_OPS
#define STRESS_OPS 25000	/* per worker thread and configuration */
#endif
#define NWORKERS 4
#define NSLOTS 512
#define TEXT_PAGES 64

struct slot {
	_Atomic int busy;
	bool stored;
	uint64_t sum;
	struct zswap_entry e;
};

struct run {
	struct zswap_store *s;
	struct slot slots[NSLOTS];
	_Atomic int stop;
	_Atomic uint64_t invalidated, loaded, stored;
};

static uint8_t *text;

static void *worker(void *arg)
{
	struct run *r = arg;
	uint64_t st = (uint64_t)(uintptr_t)&st ^ 0x9E3779B97F4A7C15ULL;
	uint64_t inval = 0, loaded = 0, stored = 0;
	static _Thread_local uint8_t pg[TP_PAGE] __attribute__((aligned(64)));

	for (int op = 0; op < STRESS_OPS; op++) {
		struct slot *sl = &r->slots[tp_rand(&st) % NSLOTS];
		int zero = 0;

		if (!atomic_compare_exchange_strong(&sl->busy, &zero, 1))
			continue;
		if (!sl->stored) {
			tp_mixed_page(pg, tp_rand(&st), text, TEXT_PAGES);
			TP_CHECK_EQ(zswap_store_page(r->s, pg, &sl->e), 0);
			sl->sum = tp_sum(pg);
			sl->stored = true;
			stored++;
		} else if (tp_rand(&st) % 4) {
			memset(pg, 0xEE, TP_PAGE);
			TP_CHECK_EQ(zswap_load_page(r->s, &sl->e, pg), 0);
			TP_CHECK(tp_sum(pg) == sl->sum);
			TP_CHECK_EQ(zswap_entry_type(&sl->e), ZE_NONE);
			sl->stored = false;
			loaded++;
		} else {
			zswap_invalidate(r->s, &sl->e);
			TP_CHECK_EQ(zswap_entry_type(&sl->e), ZE_NONE);
			sl->stored = false;
			inval++;
		}
		atomic_store(&sl->busy, 0);
	}
	atomic_fetch_add(&r->invalidated, inval);
	atomic_fetch_add(&r->loaded, loaded);
	atomic_fetch_add(&r->stored, stored);
	return NULL;
}

/* Statistics and compaction racing the workers. */
static void *observer(void *arg)
{
	struct run *r = arg;
	unsigned long n = 0;

	while (!atomic_load(&r->stop)) {
		struct zswap_stats st;

		memset(&st, 0, sizeof(st));
		zswap_store_stats(r->s, &st);
		/* a snapshot may be a few operations stale, never wild */
		TP_CHECK(st.stored_pages <= NSLOTS + 64);
		TP_CHECK_EQ(st.decompress_fail, 0);
		if (++n % 16 == 0)
			zswap_store_compact(r->s);
		sched_yield();
	}
	return NULL;
}

static void stress(enum zswap_comp comp, enum zs_lock_mode lock, unsigned int nr_pools,
		   unsigned int nr_ws)
{
	struct zswap_store_config cfg = {
		.comp = comp, .level = 1, .order = 2 + ((unsigned int)lock + nr_pools) % 3, .lock = lock,
		.nr_pools = nr_pools, .nr_workspaces = nr_ws,
	};
	struct run *r = calloc(1, sizeof(*r));
	pthread_t t[NWORKERS], obs;
	struct zswap_stats st;
	uint64_t left = 0;

	TP_CHECK(r);
	r->s = zswap_store_create(&cfg);
	TP_CHECK(r->s);
	for (int i = 0; i < NWORKERS; i++)
		TP_CHECK_EQ(pthread_create(&t[i], NULL, worker, r), 0);
	TP_CHECK_EQ(pthread_create(&obs, NULL, observer, r), 0);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&r->stop, 1);
	pthread_join(obs, NULL);

	/* What is still stored comes back intact too. */
	for (int i = 0; i < NSLOTS; i++) {
		static uint8_t pg[TP_PAGE];

		if (!r->slots[i].stored)
			continue;
		TP_CHECK_EQ(zswap_load_page(r->s, &r->slots[i].e, pg), 0);
		TP_CHECK(tp_sum(pg) == r->slots[i].sum);
		left++;
	}
	memset(&st, 0, sizeof(st));
	zswap_store_stats(r->s, &st);
	fprintf(stderr, "%s lock, %2u pools, %2u workspaces: %llu stored, %llu loaded, "
		"%llu invalidated, mem_used_max %llu\n",
		lock == ZS_LOCK_CLASS ? "class" : "pool ", nr_pools, nr_ws ? nr_ws : 0,
		(unsigned long long)r->stored, (unsigned long long)r->loaded,
		(unsigned long long)r->invalidated,
		(unsigned long long)st.mem_used_max);
	TP_CHECK(r->stored > 0 && r->loaded > 0 && r->invalidated > 0);
	TP_CHECK_EQ(st.zswpout, r->stored);
	TP_CHECK_EQ(st.zswpin, r->loaded + left);
	TP_CHECK_EQ(st.stored_pages, 0);
	TP_CHECK_EQ(st.pool_total_size, 0);
	TP_CHECK_EQ(st.compr_data_size, 0);
	TP_CHECK_EQ(st.same_filled_pages, 0);
	TP_CHECK_EQ(st.huge_pages, 0);
	TP_CHECK_EQ(st.decompress_fail, 0);
	TP_CHECK(st.mem_used_max > 0);
	zswap_store_destroy(r->s);
	free(r);
}

int main(void)
{
	text = tp_pages(TP_TEXT, TEXT_PAGES, 5);
	stress(ZSWAP_COMP_LZ4, ZS_LOCK_CLASS, 1, 0);
	stress(ZSWAP_COMP_LZ4, ZS_LOCK_CLASS, 32, 0);
	stress(ZSWAP_COMP_LZ4, ZS_LOCK_POOL, 1, 0);
	stress(ZSWAP_COMP_LZ4, ZS_LOCK_POOL, 32, 0);
	stress(ZSWAP_COMP_ZSTD, ZS_LOCK_CLASS, 4, 2);	/* 4 workers, 2 workspaces */
	free(text);
	return 0;
}
