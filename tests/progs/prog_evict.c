/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_evict.c - eviction (src/engine/evict.c) racing writers: no write lost,
 * no stale page.
 *
 * W writer threads own the pages of one mapping, interleaved (page i belongs
 * to writer i % W, so every eviction run crosses every writer). Each page
 * holds a header (magic, owner, page index, version, checksum of the body)
 * and a body generated from (owner, page, version). On each visit a writer
 * checks the page holds exactly the version it last wrote there, then writes
 * version + 1, body first and header last, in several separate stores so an
 * eviction can land between any two of them.
 *
 * Meanwhile an evictor thread pages the whole mapping out with MADV_PAGEOUT
 * (or zswap_pageout with --api) over and over. The run is bounded by passes,
 * not time: after each pass a writer waits until one full eviction that
 * started after its pass has finished, so every pass is followed by an
 * eviction of all its pages while the other writers keep writing.
 *
 * Under the library it asserts that evictions and refaults did happen, then
 * evicts everything once more and checks every page's last version.
 *
 * usage: prog_evict [--api] [--inactive-ok] [writers [pages [passes]]]
 */
#include "prog_common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define RACE_MAGIC 0x7a73776170726163ULL	/* "zswaprac" */

struct page_hdr {
	uint64_t magic;
	uint64_t owner;
	uint64_t index;
	uint64_t version;
	uint64_t body_sum;
};

#define BODY_OFF sizeof(struct page_hdr)
#define BODY_LEN (PC_PAGE - BODY_OFF)

static char *area;
static size_t npages, nwriters, npasses;
static bool use_api;
static atomic_ulong rounds_started, rounds_done;
static atomic_int writers_left;
static atomic_int failed;

/* The body of (owner, page, version): runs of repeated words, so it
 * compresses (it is not same-filled: the header differs). */
static void make_body(unsigned char *body, uint64_t owner, uint64_t index, uint64_t version)
{
	uint64_t base = pc_mix(owner << 48 ^ index << 20 ^ version);

	for (size_t off = 0, run = 0; off + 8 <= BODY_LEN; off += 8, run++) {
		uint64_t w = base + (run / 16) * 0x1000193ULL;
		memcpy(body + off, &w, 8);
	}
}

static void write_page(char *p, uint64_t owner, uint64_t index, uint64_t version)
{
	unsigned char body[BODY_LEN];
	struct page_hdr h = { RACE_MAGIC, owner, index, version, 0 };

	make_body(body, owner, index, version);
	h.body_sum = pc_sum(body, BODY_LEN);
	/* Several separate stores, each a chance for an eviction to come
	 * between: half the body, the other half, then the header. */
	memcpy(p + BODY_OFF, body, BODY_LEN / 2);
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(p + BODY_OFF + BODY_LEN / 2, body + BODY_LEN / 2, BODY_LEN - BODY_LEN / 2);
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(p, &h, sizeof(h));
}

/* Returns NULL if the page holds exactly version of (owner, index), else why not. */
static const char *check_page(const char *p, uint64_t owner, uint64_t index, uint64_t version)
{
	static __thread char why[200];
	unsigned char body[BODY_LEN];
	struct page_hdr h;

	memcpy(&h, p, sizeof(h));
	if (h.magic != RACE_MAGIC) {
		snprintf(why, sizeof(why), "bad magic %016" PRIx64 "%s", h.magic,
			 pc_page_is_zero(p) ? " (page reads all zeros)" : "");
		return why;
	}
	if (h.owner != owner || h.index != index) {
		snprintf(why, sizeof(why), "holds page %" PRIu64 " of writer %" PRIu64 " (another page's data)",
			 h.index, h.owner);
		return why;
	}
	if (h.version != version) {
		snprintf(why, sizeof(why), "version %" PRIu64 ", last written %" PRIu64 " (%s)", h.version, version,
			 h.version < version ? "a write was lost: stale page" : "a version from the future");
		return why;
	}
	make_body(body, owner, index, version);
	if (memcmp(p + BODY_OFF, body, BODY_LEN) != 0) {
		snprintf(why, sizeof(why), "header is version %" PRIu64 " but the body is not (%s)", version,
			 pc_sum(p + BODY_OFF, BODY_LEN) == h.body_sum ? "checksum matches an older body" : "torn or stale body");
		return why;
	}
	return NULL;
}

struct writer {
	pthread_t tid;
	uint64_t id;
	uint64_t *last;		/* last version written, per owned page */
	size_t nown;
	uint64_t visits;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t rng = 0x1234 + w->id;
	size_t *order = malloc(w->nown * sizeof(*order));

	if (!order)
		pc_fail("malloc");
	for (size_t pass = 0; pass < npasses && !atomic_load(&failed); pass++) {
		/* A new random order of the owned pages every pass. */
		for (size_t i = 0; i < w->nown; i++)
			order[i] = i;
		for (size_t i = w->nown - 1; i > 0; i--) {
			size_t j = pc_rand(&rng) % (i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (size_t k = 0; k < w->nown; k++) {
			size_t slot = order[k], index = slot * nwriters + w->id;
			char *p = area + index * PC_PAGE;
			const char *why = check_page(p, w->id, index, w->last[slot]);

			if (why) {
				atomic_store(&failed, 1);
				pc_fail("writer %" PRIu64 " pass %zu: page %zu (%p): %s", w->id, pass, index, (void *)p, why);
			}
			w->last[slot]++;
			write_page(p, w->id, index, w->last[slot]);
			w->visits++;
		}
		/* Wait for one whole eviction that started after this pass. */
		unsigned long target = atomic_load(&rounds_started) + 1;
		while (atomic_load(&rounds_done) < target && !atomic_load(&failed))
			sched_yield();
	}
	free(order);
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

static void *evictor_main(void *arg)
{
	(void)arg;
	while (atomic_load(&writers_left) > 0 && !atomic_load(&failed)) {
		unsigned long r = atomic_fetch_add(&rounds_started, 1) + 1;
		int rc = use_api ? pc_pageout_api(area, npages * PC_PAGE) : pc_pageout(area, npages * PC_PAGE);

		if (rc != 0 && pc_managed())
			pc_fail("evictor: pageout failed: %s", strerror(errno));
		atomic_store(&rounds_done, r);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	size_t args[3] = { 4, 2048, 24 };
	int na = 0;

	pc_init("prog_evict", &argc, argv);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--api") == 0)
			use_api = true;
		else if (na < 3)
			args[na++] = strtoul(argv[i], NULL, 0);
	}
	nwriters = args[0];
	npages = args[1];
	npasses = args[2];
	PC_CHECK(nwriters >= 1 && npages >= nwriters && npages * PC_PAGE >= 2 * PC_MIB,
		 "bad arguments: %zu writers, %zu pages (at least 2 MiB)", nwriters, npages);
	pc_info("mode %s: %zu writers, %zu pages, %zu passes, eviction by %s", pc_mode_name(), nwriters, npages,
		npasses, use_api ? "zswap_pageout" : "madvise");

	area = pc_map(npages * PC_PAGE);
	struct writer *w = calloc(nwriters, sizeof(*w));
	if (!w)
		pc_fail("calloc");
	for (size_t i = 0; i < npages; i++)
		write_page(area + i * PC_PAGE, i % nwriters, i, 0);
	pc_evict("initial eviction", area, npages, use_api);

	struct zswap_stats a, b;
	pc_stats(&a);
	atomic_store(&writers_left, (int)nwriters);
	for (size_t i = 0; i < nwriters; i++) {
		w[i].id = i;
		w[i].nown = npages / nwriters + (i < npages % nwriters);
		w[i].last = calloc(w[i].nown, sizeof(uint64_t));
		if (!w[i].last)
			pc_fail("calloc");
		if (pthread_create(&w[i].tid, NULL, writer_main, &w[i]) != 0)
			pc_fail("pthread_create");
	}
	pthread_t ev;
	if (pthread_create(&ev, NULL, evictor_main, NULL) != 0)
		pc_fail("pthread_create");
	for (size_t i = 0; i < nwriters; i++)
		pthread_join(w[i].tid, NULL);
	pthread_join(ev, NULL);
	pc_stats(&b);

	uint64_t visits = 0;
	for (size_t i = 0; i < nwriters; i++)
		visits += w[i].visits;
	PC_CHECK(visits == npages * npasses, "%" PRIu64 " visits, expected %zu", visits, npages * npasses);

	if (pc_managed()) {
		uint64_t ev_pages = b.evicted_pages - a.evicted_pages, refaults = b.refaults - a.refaults;
		unsigned long rounds = atomic_load(&rounds_done);
		pc_info("%lu eviction rounds, evicted_pages +%" PRIu64 ", refaults +%" PRIu64 ", zswpin +%" PRIu64
			", evict_skipped_pages +%" PRIu64, rounds, ev_pages, refaults, b.zswpin - a.zswpin,
			b.evict_skipped_pages - a.evict_skipped_pages);
		/* Every pass was followed by an eviction of all its pages, so close
		 * to pages x passes are evicted when the machine is quiet (32,768 of
		 * 32,768 seen). Loaded (make -j2 check beside benchmarks, one CPU)
		 * rounds overlap the writers more and half of that was seen. The
		 * floors only prove that eviction and refault went on all along:
		 * an eighth. */
		PC_CHECK(rounds >= npasses, "only %lu eviction rounds for %zu passes", rounds, npasses);
		PC_CHECK(ev_pages >= npages * npasses / 8,
			 "evicted_pages grew by %" PRIu64 " during the run, expected at least %zu (pages x passes / 8)",
			 ev_pages, npages * npasses / 8);
		PC_CHECK(b.zswpin - a.zswpin >= npages * (npasses - 1) / 8,
			 "zswpin grew by %" PRIu64 " during the run: the writers did not fault evicted pages back",
			 b.zswpin - a.zswpin);
	}

	/* Final: evict all, then every page must hold its last version. */
	pc_evict("final eviction", area, npages, use_api);
	for (size_t i = 0; i < npages; i++) {
		size_t owner = i % nwriters, slot = i / nwriters;
		const char *why = check_page(area + i * PC_PAGE, owner, i, w[owner].last[slot]);
		if (why)
			pc_fail("after the run: page %zu: %s", i, why);
	}
	pc_expect_stored("after reading everything back", 0);
	printf("race ok: %zu writers, %zu pages, %zu passes, sum=%016" PRIx64 "\n", nwriters, npages, npasses,
	       pc_sum(area, npages * PC_PAGE));
	return 0;
}
