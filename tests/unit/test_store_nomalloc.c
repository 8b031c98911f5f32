/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_store_nomalloc.c - store, load, invalidate and the statistics never
 * call the malloc family after zswap_store_create(), on the first call from
 * a thread as on later ones, with lz4 and zstd, one pool or many, and with
 * more threads than workspaces (the waiting path).
 *
 * This binary defines malloc/calloc/realloc itself (test_store_mcount.c), so
 * calls from the library code, zsmalloc, liblz4 and libzstd are all counted.
 */
#include "config.h"
#include "core/store.h"
#include "test_store_util.h"

#include <pthread.h>
#include <string.h>

#define NPAGES 128
#define NTHREADS 4

static uint8_t *pages[TP__COUNT];
static pthread_barrier_t go, done;

/* Store every page of every kind, load half back, invalidate the rest. */
static void work(struct zswap_store *s)
{
	static _Thread_local struct zswap_entry e[TP__COUNT][NPAGES];
	static _Thread_local uint8_t out[TP_PAGE];
	struct zswap_stats st;

	for (int k = 0; k < TP__COUNT; k++)
		for (size_t p = 0; p < NPAGES; p++)
			TP_CHECK_EQ(zswap_store_page(s, pages[k] + p * TP_PAGE, &e[k][p]), 0);
	zswap_store_stats(s, &st);
	for (int k = 0; k < TP__COUNT; k++)
		for (size_t p = 0; p < NPAGES; p++) {
			if (p & 1) {
				zswap_invalidate(s, &e[k][p]);
				continue;
			}
			TP_CHECK_EQ(zswap_load_page(s, &e[k][p], out), 0);
			TP_CHECK(memcmp(out, pages[k] + p * TP_PAGE, TP_PAGE) == 0);
		}
}

static void *thread_main(void *arg)
{
	struct zswap_store *s = arg;

	pthread_barrier_wait(&go);
	work(s);
	pthread_barrier_wait(&done);
	return NULL;
}

static void run(enum zswap_comp comp, unsigned int nr_pools, unsigned int nr_ws)
{
	struct zswap_store_config cfg = {
		.comp = comp, .level = 3, .order = 2, .lock = ZS_LOCK_CLASS,
		.nr_pools = nr_pools, .nr_workspaces = nr_ws,
	};
	struct zswap_store *s = zswap_store_create(&cfg);
	pthread_t t[NTHREADS];
	struct zswap_stats st;

	TP_CHECK(s);
	for (int i = 0; i < NTHREADS; i++)
		TP_CHECK_EQ(pthread_create(&t[i], NULL, thread_main, s), 0);

	/* Everything between here and the second barrier is counted: thread
	 * creation and exit (which allocate in libc) stay outside. */
	atomic_store(&tp_mcount, 0);
	atomic_store(&tp_mcount_on, 1);
	work(s);				/* the main thread alone first */
	pthread_barrier_wait(&go);
	work(s);
	pthread_barrier_wait(&done);
	atomic_store(&tp_mcount_on, 0);

	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	zswap_store_stats(s, &st);
	TP_CHECK_EQ(st.stored_pages, 0);
	fprintf(stderr, "comp %d nr_pools %u nr_workspaces %u: %lu malloc-family calls\n",
		(int)comp, nr_pools, nr_ws, atomic_load(&tp_mcount));
	TP_CHECK_EQ(atomic_load(&tp_mcount), 0);
	zswap_store_destroy(s);
}

int main(void)
{
	/* Prove the counter sees this binary's calls before trusting a zero. */
	atomic_store(&tp_mcount_on, 1);
	void *volatile probe = malloc(16);
	free(probe);
	atomic_store(&tp_mcount_on, 0);
	TP_CHECK_EQ(atomic_load(&tp_mcount), 1);

	for (int k = 0; k < TP__COUNT; k++)
		pages[k] = tp_pages((enum tp_kind)k, NPAGES, 77 + (uint64_t)k);
	TP_CHECK_EQ(pthread_barrier_init(&go, NULL, NTHREADS + 1), 0);
	TP_CHECK_EQ(pthread_barrier_init(&done, NULL, NTHREADS + 1), 0);

	run(ZSWAP_COMP_LZ4, 1, 0);
	run(ZSWAP_COMP_ZSTD, 1, 0);
	run(ZSWAP_COMP_LZO, 1, 0);
	run(ZSWAP_COMP_LZ4, 32, 0);
	run(ZSWAP_COMP_ZSTD, 8, 2);	/* fewer workspaces than threads: waits */
	for (int k = 0; k < TP__COUNT; k++)
		free(pages[k]);
	return 0;
}
