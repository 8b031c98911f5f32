/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_spells.c - program threads taking turns at faulting: several at once,
 * then one alone, round after round (the handlers' shared spells,
 * src/engine/fault.c "one handler, or one per CPU").
 *
 * Each round pages the whole mapping out (MADV_PAGEOUT), lets T threads
 * visit every page of their own share (page i belongs to thread i % T) in a
 * random order, pages everything out again, and lets the main thread alone
 * visit every page in a random order. A visit checks that the page holds
 * exactly the version last written there and, every other visit, writes the
 * next version. Under the library every visit after a page-out is a refault,
 * so the faulting thread changes from one fault to the next in the first
 * half of a round and never in the second.
 *
 * stdout: one checksum of the versions per phase, the same with and without
 * the library (each thread's visits depend on its own seed only). Under the
 * library it also asserts that the pages were evicted and refaulted.
 *
 * usage: prog_spells [threads [pages [rounds]]]   (default 4 4096 4)
 */
#include "prog_common.h"

#include <pthread.h>
#include <stdatomic.h>

static unsigned char *area;
static uint32_t *ver;		/* per page: the version it holds */
static size_t npages, nthreads;

/* A page of version v: prog_common's text, seeded by the page and its
 * version (compressible, never same-filled). */
static void page_make(unsigned char *page, size_t i, uint32_t v)
{
	pc_fill(page, PC_TEXT, pc_mix((uint64_t)i << 24 ^ v));
}

/* Visit page i with the buffer want (one page, the caller's own): check it,
 * and rewrite it when write. */
static void page_visit(size_t i, bool write, unsigned char *want)
{
	page_make(want, i, ver[i]);
	if (memcmp(want, area + i * PC_PAGE, PC_PAGE) != 0)
		pc_fail("page %zu does not hold version %u", i, ver[i]);
	if (write) {
		ver[i]++;
		page_make(area + i * PC_PAGE, i, ver[i]);
	}
}

/* Visit every page i with i % step == first, in a random order drawn from
 * seed. */
static void visit_share(size_t first, size_t step, uint64_t seed)
{
	unsigned char *want = malloc(PC_PAGE);
	size_t n = (npages - first + step - 1) / step;
	size_t *order = malloc(n * sizeof(*order));

	PC_CHECK(want && order, "malloc");
	for (size_t k = 0; k < n; k++)
		order[k] = first + k * step;
	for (size_t k = n; k > 1; k--) {
		size_t j = (size_t)(pc_rand(&seed) % k), t = order[k - 1];
		order[k - 1] = order[j];
		order[j] = t;
	}
	for (size_t k = 0; k < n; k++)
		page_visit(order[k], k % 2 == 0, want);
	free(order);
	free(want);
}

struct share {
	size_t first;
	uint64_t seed;
};

static void *share_thread(void *arg)
{
	const struct share *s = arg;

	visit_share(s->first, nthreads, s->seed);
	return NULL;
}

static uint64_t versions_sum(void)
{
	uint64_t h = 0;

	for (size_t i = 0; i < npages; i++)
		h = pc_mix(h ^ ((uint64_t)i << 32 | ver[i]));
	return h;
}

static void page_out_all(void)
{
	if (pc_pageout(area, npages * PC_PAGE) != 0)
		pc_fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
}

int main(int argc, char **argv)
{
	pc_init("prog_spells", &argc, argv);
	nthreads = argc > 1 ? strtoul(argv[1], NULL, 0) : 4;
	npages = argc > 2 ? strtoul(argv[2], NULL, 0) : 4096;
	size_t rounds = argc > 3 ? strtoul(argv[3], NULL, 0) : 4;
	PC_CHECK(nthreads >= 1 && nthreads <= 64 && npages >= nthreads && rounds >= 1, "bad arguments");

	area = pc_map(npages * PC_PAGE);
	ver = calloc(npages, sizeof(*ver));
	PC_CHECK(ver != NULL, "calloc");
	for (size_t i = 0; i < npages; i++)
		page_make(area + i * PC_PAGE, i, 0);

	struct zswap_stats st0, st1;
	if (pc_managed())
		pc_stats(&st0);
	for (size_t r = 0; r < rounds; r++) {
		pthread_t t[64];
		struct share sh[64];

		page_out_all();
		for (size_t k = 0; k < nthreads; k++) {
			sh[k] = (struct share){ .first = k, .seed = pc_mix(r << 8 | k) };
			PC_CHECK(pthread_create(&t[k], NULL, share_thread, &sh[k]) == 0, "pthread_create");
		}
		for (size_t k = 0; k < nthreads; k++)
			pthread_join(t[k], NULL);
		printf("round %zu, %zu threads: versions %016llx\n", r, nthreads,
		       (unsigned long long)versions_sum());

		page_out_all();
		visit_share(0, 1, pc_mix(r << 8 | 0xff));
		printf("round %zu, one thread: versions %016llx\n", r, (unsigned long long)versions_sum());
	}

	unsigned char *want = malloc(PC_PAGE);
	PC_CHECK(want != NULL, "malloc");
	for (size_t i = 0; i < npages; i++)
		page_visit(i, false, want);
	if (pc_managed()) {
		pc_stats(&st1);
		PC_CHECK(st1.evicted_pages > st0.evicted_pages, "nothing was evicted");
		PC_CHECK(st1.refaults - st0.refaults >= npages * rounds,
			 "%llu refaults, expected at least %zu (every page after each page-out)",
			 (unsigned long long)(st1.refaults - st0.refaults), npages * rounds);
	}
	printf("all %zu pages checked\n", npages);
	return 0;
}
