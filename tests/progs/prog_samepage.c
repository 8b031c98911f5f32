/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_samepage.c - several threads faulting on the same evicted page at once.
 *
 * Each round evicts 16 pages spread over an 8 MiB mapping; T threads released
 * together by a barrier read those pages in the same order (so they fault on
 * the same page at the same moment), check them, and each writes its own
 * byte into every one. Every thread must read the right data, every write
 * must stick (a page resolved twice would drop some), and the store must load
 * each page exactly once per round (zswpin grows by the pages evicted).
 *
 * usage: prog_samepage [--inactive-ok] [threads, default 8] [rounds, default 40]
 */
#include "prog_common.h"

#include <pthread.h>
#include <stdatomic.h>

#define NPAGES 2048UL
#define LEN (NPAGES * PC_PAGE)
#define HOT 16
#define MAXT 32

static char *area;
static int nthreads = 8, nrounds = 40;
static pthread_barrier_t bar;
static size_t hot[HOT];
static atomic_int bad;

/* The byte thread t writes into a hot page in round r. */
static unsigned char tag(int t, int r)
{
	return (unsigned char)(0x80 | ((t * 7 + r) & 0x7f));
}

static size_t tag_off(int t)
{
	return 64 + (size_t)t * 8;
}

static void *thread_main(void *arg)
{
	int t = (int)(long)arg;
	unsigned char *expect = malloc(PC_PAGE);

	if (!expect)
		pc_fail("malloc");
	for (int r = 0; r < nrounds; r++) {
		pthread_barrier_wait(&bar);	/* main evicted the hot pages */
		for (int k = 0; k < HOT; k++) {
			const char *pg = area + hot[k] * PC_PAGE;
			/* Everything but the tag bytes, which others are writing. */
			pc_fill(expect, PC_TEXT, pc_page_seed(9, hot[k]));
			if (memcmp(pg + tag_off(MAXT), expect + tag_off(MAXT), PC_PAGE - tag_off(MAXT)) != 0 ||
			    memcmp(pg, expect, 64) != 0) {
				atomic_store(&bad, 1);
				pc_fail("thread %d round %d: hot page %zu is wrong: %s", t, r, hot[k],
					pc_describe(pg, PC_TEXT, pc_page_seed(9, hot[k])));
			}
			((volatile unsigned char *)area)[hot[k] * PC_PAGE + tag_off(t)] = tag(t, r);
		}
		pthread_barrier_wait(&bar);	/* main checks */
	}
	free(expect);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[MAXT];

	pc_init("prog_samepage", &argc, argv);
	if (argc > 1)
		nthreads = atoi(argv[1]);
	if (argc > 2)
		nrounds = atoi(argv[2]);
	PC_CHECK(nthreads >= 2 && nthreads <= MAXT && nrounds >= 1, "threads 2..%d, rounds >= 1", MAXT);
	pc_info("mode %s, %d threads, %d rounds", pc_mode_name(), nthreads, nrounds);
	area = pc_map(LEN);
	pc_fill_range(area, NPAGES, PC_TEXT, 9);
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
	for (long t = 0; t < nthreads; t++)
		if (pthread_create(&tid[t], NULL, thread_main, (void *)t) != 0)
			pc_fail("pthread_create");

	uint64_t loads = 0, evicted = 0;
	for (int r = 0; r < nrounds; r++) {
		struct zswap_stats a, b;
		for (int k = 0; k < HOT; k++)
			hot[k] = ((size_t)k * 131 + (size_t)r * 17) % NPAGES;
		for (int k = 0; k < HOT; k++)
			evicted += pc_evict("samepage", area + hot[k] * PC_PAGE, 1, false);
		pc_stats(&a);
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
		pc_stats(&b);
		loads += b.zswpin - a.zswpin;
		/* Every thread's byte is in every hot page. */
		for (int k = 0; k < HOT; k++) {
			char *pg = area + hot[k] * PC_PAGE;
			for (int t = 0; t < nthreads; t++)
				if ((unsigned char)pg[tag_off(t)] != tag(t, r))
					pc_fail("round %d: hot page %zu lost thread %d's write (byte %#x, expected %#x)", r,
						hot[k], t, (unsigned char)pg[tag_off(t)], tag(t, r));
			/* Put the text back for the next round. */
			static unsigned char orig[PC_PAGE];
			pc_fill(orig, PC_TEXT, pc_page_seed(9, hot[k]));
			memcpy(pg + tag_off(0), orig + tag_off(0), tag_off(MAXT) - tag_off(0));
		}
		if (pc_managed())
			PC_CHECK(b.zswpin - a.zswpin == (uint64_t)HOT,
				 "round %d: zswpin grew by %" PRIu64 " for %d evicted pages faulted by %d threads: each must be"
				 " loaded exactly once", r, b.zswpin - a.zswpin, HOT, nthreads);
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	pc_expect_range("samepage: the whole mapping at the end", area, NPAGES, PC_TEXT, 9);
	pc_expect_stored("samepage", 0);
	if (pc_managed())
		pc_info("%" PRIu64 " pages evicted, %" PRIu64 " loads", evicted, loads);
	printf("samepage ok: %d threads, %d rounds\n", nthreads, nrounds);
	return 0;
}
