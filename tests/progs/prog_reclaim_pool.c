/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_reclaim_pool - the pool limit's hysteresis (zswap's
 * accept_threshold_percent), in process, on the store alone
 * (tests/engine/test_eng_reclaim_pool.sh runs it):
 *  - stores are refused (-ENOSPC, pool_limit_hit) once the pool is full;
 *  - after freeing a little, still refused: the pool is above the accept
 *    threshold;
 *  - accepted again once it is below the threshold, and then until the
 *    limit is reached again;
 *  - with no threshold (accept_limit 0: ZSWAP_ACCEPT_THRESHOLD_PERCENT=100)
 *    a store is accepted as soon as there is room;
 *  - zswap_store_accepting() answers as a store would.
 */
#include "config.h"
#include "core/store.h"
#include "../unit/test_store_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MAXPAGES 4096

static struct zswap_entry e[MAXPAGES];
static uint8_t *pages;

static uint64_t charged(struct zswap_store *s)
{
	struct zswap_stats st;

	memset(&st, 0, sizeof(st));
	zswap_store_stats(s, &st);
	return st.mem_used_total + st.pool_metadata_bytes;
}

static uint64_t limit_hits(struct zswap_store *s)
{
	struct zswap_stats st;

	memset(&st, 0, sizeof(st));
	zswap_store_stats(s, &st);
	return st.pool_limit_hit;
}

/* Fill until refused; returns how many were stored (e[0..n)). */
static size_t fill(struct zswap_store *s, size_t from)
{
	size_t i = from;

	while (i < MAXPAGES && zswap_store_page(s, pages + (i % 256) * TP_PAGE, &e[i]) == 0)
		i++;
	TP_CHECK(i < MAXPAGES);
	return i;
}

static void test_hysteresis(void)
{
	const uint64_t limit = 2 << 20, accept = limit / 100 * 90;
	struct zswap_store_config cfg = {
		.comp = ZSWAP_COMP_LZ4, .order = 2, .lock = ZS_LOCK_CLASS, .nr_pools = 1,
		.mem_limit = limit, .accept_limit = accept,
	};
	struct zswap_store *s = zswap_store_create(&cfg);
	struct zswap_entry x;

	TP_CHECK(s);
	size_t n = fill(s, 0);
	uint64_t hits = limit_hits(s);
	TP_CHECK(hits >= 1);
	TP_CHECK(!zswap_store_accepting(s));

	/* Free a few pages: room again below the limit, but above the
	 * threshold: still refused, and counted. */
	size_t k = n;
	while (k > 0 && charged(s) >= limit - 8 * TP_PAGE)
		zswap_invalidate(s, &e[--k]);
	TP_CHECK(charged(s) > accept);
	TP_CHECK_EQ(zswap_store_page(s, pages, &x), -ENOSPC);
	TP_CHECK(limit_hits(s) > hits);
	TP_CHECK(!zswap_store_accepting(s));

	/* Below the threshold: accepted, and again until full. */
	while (k > 0 && charged(s) >= accept)
		zswap_invalidate(s, &e[--k]);
	TP_CHECK(zswap_store_accepting(s));
	size_t m = fill(s, k);
	TP_CHECK(m > k + 8);
	for (size_t i = 0; i < m; i++)
		zswap_invalidate(s, &e[i]);
	zswap_store_destroy(s);
}

static void test_no_threshold(void)
{
	struct zswap_store_config cfg = {
		.comp = ZSWAP_COMP_LZ4, .order = 2, .lock = ZS_LOCK_CLASS, .nr_pools = 1,
		.mem_limit = 2 << 20, .accept_limit = 0,
	};
	struct zswap_store *s = zswap_store_create(&cfg);

	TP_CHECK(s);
	size_t n = fill(s, 0);
	/* Free pages until there is room for a page and its metadata. */
	size_t k = n;
	while (k > 0 && charged(s) + 3 * TP_PAGE > cfg.mem_limit)
		zswap_invalidate(s, &e[--k]);
	TP_CHECK(zswap_store_accepting(s));
	TP_CHECK_EQ(zswap_store_page(s, pages, &e[k]), 0);
	for (size_t i = 0; i <= k; i++)
		zswap_invalidate(s, &e[i]);
	zswap_store_destroy(s);
}

int main(void)
{
	pages = tp_pages(TP_RANDOM, 256, 7);	/* incompressible: a page each */
	test_hysteresis();
	test_no_threshold();
	printf("prog_reclaim_pool: ok\n");
	return 0;
}
