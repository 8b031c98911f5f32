/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_engine.c - the preload engine against the kernel's own zswap.
 *
 * One program, run twice by tools/bench/bench_engine.sh: once plain, with the
 * kernel's zswap in front of a swapfile (scripts/kernel-zswap.sh), and once
 * under LD_PRELOAD=libzswap.so. It finds out which side it is on by itself:
 * libzswap exports zswap_stats(), found with dlsym; without it the kernel
 * pages. Both sides do exactly the same calls on exactly the same data.
 *
 *   refault     fill SIZE (256M) with text pages, madvise(MADV_PAGEOUT) the
 *               range (timed: microseconds per page), check the pages left
 *               memory (mincore) and went to zswap (the side's counters),
 *               then read the range back page by page, timing the first
 *               touch of each page (p50/p90/p99), and check every byte.
 *   firsttouch  write SIZE (1G) of never-populated memory page by page in a
 *               fresh mapping; with --evict-first, a page of the mapping's
 *               tail is evicted before, so libzswap has registered the
 *               region with userfaultfd (it registers lazily, at the first
 *               eviction) and every first touch is a userfaultfd fault.
 *
 * Output: one "RESULT key=value ..." line on stdout. Figures are never
 * judged here; a page that reads back wrong exits 1.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "zswap.h"
#include "bench_text.h"
#include "bench_util.h"

typedef int (*stats_fn)(struct zswap_stats *, size_t);

struct opts {
	uint64_t size;
	uint64_t seed;
	const char *text_dirs;
	int cpu;
	int random_order;
	int evict_first;
	uint64_t warm;		/* bytes re-warmed before each chunk; 0: never */
};

/* The kernel's view: vmstat, zswap debugfs and parameters. */
struct kstate {
	long long zswpout, zswpin, pswpout, pswpin;
	long long stored_pages;		/* debugfs; -1 when not mounted */
	long long pool_total_size;	/* debugfs; -1 when not mounted */
};

static stats_fn zs_stats;	/* non-NULL when libzswap is preloaded */
static int zs_active;		/* zswap_active() of the preloaded library */

static void read_word(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");

	snprintf(buf, cap, "-");
	if (!f)
		return;
	if (fgets(buf, (int)cap, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* This process's swapped-out memory (VmSwap), in pages: unlike the global
 * counters it cannot include anyone else's pages. */
static long long vmswap_pages(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSwap: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / 4;
}

/* Involuntary context switches so far: a timed loop that was preempted
 * (other work on this 2-CPU machine) shows it here. */
static long nivcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

static void kstate_read(struct kstate *k)
{
	char key[64];
	long long v;
	FILE *f = fopen("/proc/vmstat", "re");

	k->zswpout = k->zswpin = k->pswpout = k->pswpin = -1;
	if (f) {
		while (fscanf(f, "%63s %lld", key, &v) == 2) {
			if (!strcmp(key, "zswpout"))
				k->zswpout = v;
			else if (!strcmp(key, "zswpin"))
				k->zswpin = v;
			else if (!strcmp(key, "pswpout"))
				k->pswpout = v;
			else if (!strcmp(key, "pswpin"))
				k->pswpin = v;
		}
		fclose(f);
	}
	k->stored_pages = bench_read_ll("/sys/kernel/debug/zswap/stored_pages");
	k->pool_total_size = bench_read_ll("/sys/kernel/debug/zswap/pool_total_size");
}

static void lz_stats(struct zswap_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (zs_stats && zs_stats(st, sizeof(*st)) != 0)
		bench_die("zswap_stats: %s", strerror(errno));
}

/* Which side this is, and with what: printed into every RESULT line. */
static void print_side(void)
{
	char comp[64], en[16];
	long long pc = bench_read_ll("/proc/sys/vm/page-cluster");

	if (zs_stats) {
		const char *c = getenv("ZSWAP_COMPRESSOR");
		const char *ra = getenv("ZSWAP_READAHEAD");
		const char *fa = getenv("ZSWAP_FAULT_AROUND");

		printf(" side=libzswap active=%d compressor=%s readahead=%s fault_around=%s",
		       zs_active, c ? c : "default", ra ? ra : "default", fa ? fa : "default");
	} else {
		read_word("/sys/module/zswap/parameters/compressor", comp, sizeof(comp));
		read_word("/sys/module/zswap/parameters/enabled", en, sizeof(en));
		printf(" side=kernel zswap_enabled=%s compressor=%s page_cluster=%lld",
		       en, comp, pc);
	}
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bench_die("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

static size_t resident_pages(void *addr, size_t npages)
{
	unsigned char *vec = malloc(npages);
	size_t n = 0;

	if (!vec)
		bench_die("out of memory");
	if (mincore(addr, npages * BENCH_PAGE, vec) != 0)
		bench_die("mincore: %s", strerror(errno));
	for (size_t i = 0; i < npages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/*
 * This is a VM with free page reporting (virtio-balloon): pages the guest
 * frees go back to the host a couple of seconds later, and the guest's next
 * touch of such a page faults in the host too, several times the cost of the
 * guest's own fault. Without care a timed loop gets a random mix of both,
 * depending on when the last reporting pass ran. So before each chunk of
 * first touches, a scratch area of the chunk's size is written and dropped
 * (untimed): the timed touches then get pages the host still backs, as on
 * bare metal. --warm 0 turns this off.
 */
struct warmer {
	char *scratch;
	size_t len;
};

static void warm_init(struct warmer *w, size_t len)
{
	w->len = len;
	w->scratch = len ? map_anon(len) : NULL;
}

static void warm_chunk(struct warmer *w, size_t page_index)
{
	if (!w->len || (page_index * BENCH_PAGE) % w->len != 0)
		return;
	memset(w->scratch, 0x5a, w->len);
	if (madvise(w->scratch, w->len, MADV_DONTNEED) != 0)
		bench_die("madvise(MADV_DONTNEED): %s", strerror(errno));
}

static void warm_fini(struct warmer *w)
{
	if (w->len)
		munmap(w->scratch, w->len);
}

static uint64_t sum_ns(const uint32_t *lat, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += lat[i];
	return s;
}

static int bench_refault(const struct opts *o)
{
	size_t npages = o->size / BENCH_PAGE;
	struct bench_text text;
	struct kstate k0, k1, k2;
	struct zswap_stats s0, s1, s2;
	struct bench_pct pct;
	struct warmer warm;
	uint64_t *hashes, *order, t0, t1, rs = o->seed ^ 0x5eedull;
	uint32_t *lat;
	size_t resident, bad = 0;
	char *map;
	double ratio = 0;

	bench_text_load(&text, o->text_dirs, BENCH_TEXT_CAP);
	hashes = calloc(npages, sizeof(*hashes));
	order = calloc(npages, sizeof(*order));
	lat = calloc(npages, sizeof(*lat));
	if (!hashes || !order || !lat)
		bench_die("out of memory");
	for (size_t i = 0; i < npages; i++)
		order[i] = i;
	if (o->random_order) {
		for (size_t i = npages - 1; i > 0; i--) {
			size_t j = bench_rand(&rs) % (i + 1);
			uint64_t x = order[i];

			order[i] = order[j];
			order[j] = x;
		}
	}

	map = map_anon(o->size);
	bench_text_fill(&text, map, npages, o->seed);
	for (size_t i = 0; i < npages; i++)
		hashes[i] = bench_hash(map + i * BENCH_PAGE, BENCH_PAGE);
	uint64_t data_hash = bench_hash(hashes, npages * sizeof(*hashes));

	/* Page out: the same call on both sides. The pools of both sides
	 * take fresh pages for the compressed copies: warm about that much. */
	warm_init(&warm, o->warm ? o->size / 2 : 0);
	warm_chunk(&warm, 0);
	warm_fini(&warm);
	kstate_read(&k0);
	lz_stats(&s0);
	t0 = bench_now_ns();
	if (madvise(map, o->size, MADV_PAGEOUT) != 0)
		bench_die("madvise(MADV_PAGEOUT): %s", strerror(errno));
	t1 = bench_now_ns();
	uint64_t pageout_ns = t1 - t0;
	kstate_read(&k1);
	lz_stats(&s1);
	resident = resident_pages(map, npages);
	long long swapped = vmswap_pages();

	/* Read back, timing the first touch of each page. */
	warm_init(&warm, o->warm);
	long cs0 = nivcsw();
	uint64_t r0 = bench_now_ns();
	for (size_t i = 0; i < npages; i++) {
		volatile uint64_t *p = (volatile uint64_t *)(map + order[i] * BENCH_PAGE);

		warm_chunk(&warm, i);
		uint64_t a = bench_now_ns();
		(void)*p;
		lat[i] = (uint32_t)(bench_now_ns() - a);
	}
	uint64_t wall_ns = bench_now_ns() - r0;
	long cs = nivcsw() - cs0;
	uint64_t read_ns = sum_ns(lat, npages);
	warm_fini(&warm);
	kstate_read(&k2);
	lz_stats(&s2);

	for (size_t i = 0; i < npages; i++)
		if (bench_hash(map + i * BENCH_PAGE, BENCH_PAGE) != hashes[i])
			bad++;
	bench_percentiles(lat, npages, &pct);

	size_t out = npages - resident;
	printf("RESULT bench=refault");
	print_side();
	printf(" pages=%zu order=%s text_files=%zu text_hash=%016llx data_hash=%016llx",
	       npages, o->random_order ? "random" : "seq", text.files,
	       (unsigned long long)text.hash, (unsigned long long)data_hash);
	printf(" pageout_ms=%.1f pageout_us_per_page=%.3f paged_out=%zu",
	       pageout_ns / 1e6, out ? pageout_ns / 1e3 / (double)out : 0.0, out);
	if (zs_stats) {
		if (s1.compr_data_size)
			ratio = (double)s1.orig_data_size / (double)s1.compr_data_size;
		printf(" own_stored=%llu stored_pages=%llu evicted=%llu skipped=%llu ratio=%.2f refaults=%llu faults=%llu"
		       " readahead_hits=%llu readahead_misses=%llu",
		       (unsigned long long)s1.stored_pages, (unsigned long long)s1.stored_pages,
		       (unsigned long long)(s1.evicted_pages - s0.evicted_pages),
		       (unsigned long long)(s1.evict_skipped_pages - s0.evict_skipped_pages),
		       ratio,
		       (unsigned long long)(s2.refaults - s1.refaults),
		       (unsigned long long)(s2.faults - s1.faults),
		       (unsigned long long)(s2.readahead_hits - s1.readahead_hits),
		       (unsigned long long)(s2.readahead_misses - s1.readahead_misses));
	} else {
		long long stored = k1.stored_pages >= 0 && k0.stored_pages >= 0 ?
				   k1.stored_pages - k0.stored_pages : -1;
		long long pool = k1.pool_total_size >= 0 && k0.pool_total_size >= 0 ?
				 k1.pool_total_size - k0.pool_total_size : -1;

		if (stored > 0 && pool > 0)
			ratio = (double)stored * BENCH_PAGE / (double)pool;
		printf(" own_stored=%lld stored_pages=%lld zswpout=%lld pswpout=%lld ratio=%.2f"
		       " zswpin=%lld pswpin=%lld",
		       swapped, stored, k1.zswpout - k0.zswpout, k1.pswpout - k0.pswpout, ratio,
		       k2.zswpin - k1.zswpin, k2.pswpin - k1.pswpin);
	}
	printf(" read_ms=%.1f wall_ms=%.1f p50_us=%.2f p90_us=%.2f p99_us=%.2f p999_us=%.2f max_us=%.1f mean_us=%.2f"
	       " nivcsw=%ld timer_ns=%llu bad_pages=%zu\n",
	       read_ns / 1e6, wall_ns / 1e6, pct.p50, pct.p90, pct.p99, pct.p999, pct.max, pct.mean,
	       cs, (unsigned long long)bench_timer_overhead_ns(), bad);
	fflush(stdout);
	munmap(map, o->size);
	if (bad)
		fprintf(stderr, "bench_engine: %zu of %zu pages read back wrong\n", bad, npages);
	return bad ? 1 : 0;
}

/* The tail a --evict-first run evicts a page of, so the engine registers the
 * mapping; part of every mapping so both variants map the same length. */
#define FT_TAIL (2UL << 20)
#define FT_MARK "libzswap bench_engine first-touch trigger page"

static int bench_firsttouch(const struct opts *o)
{
	size_t npages = o->size / BENCH_PAGE;
	struct zswap_stats s0, s1;
	struct bench_pct pct;
	struct warmer warm;
	uint32_t *lat = calloc(npages, sizeof(*lat));
	size_t bad = 0;
	char *map;

	if (!lat)
		bench_die("out of memory");
	map = map_anon(o->size + FT_TAIL);
	if (o->evict_first) {
		char *tail = map + o->size;

		memset(tail, 'x', BENCH_PAGE);
		memcpy(tail, FT_MARK, sizeof(FT_MARK) - 1);
		if (madvise(tail, BENCH_PAGE, MADV_PAGEOUT) != 0)
			bench_die("madvise(MADV_PAGEOUT): %s", strerror(errno));
	}
	lz_stats(&s0);

	warm_init(&warm, o->warm);
	long cs0 = nivcsw();
	for (size_t i = 0; i < npages; i++) {
		warm_chunk(&warm, i);
		uint64_t a = bench_now_ns();
		memset(map + i * BENCH_PAGE, (int)(i & 0xff) | 1, BENCH_PAGE);
		lat[i] = (uint32_t)(bench_now_ns() - a);
	}
	long cs = nivcsw() - cs0;
	uint64_t total_ns = sum_ns(lat, npages);
	warm_fini(&warm);
	lz_stats(&s1);

	for (size_t i = 0; i < npages; i++) {
		const unsigned char *p = (const unsigned char *)map + i * BENCH_PAGE;

		if (p[0] != ((i & 0xff) | 1) || p[BENCH_PAGE - 1] != ((i & 0xff) | 1))
			bad++;
	}
	if (o->evict_first && memcmp(map + o->size, FT_MARK, sizeof(FT_MARK) - 1) != 0)
		bad++;
	bench_percentiles(lat, npages, &pct);

	printf("RESULT bench=firsttouch");
	print_side();
	printf(" variant=%s pages=%zu warm=%llu total_ms=%.1f us_per_page=%.3f"
	       " p50_us=%.2f p90_us=%.2f p99_us=%.2f max_us=%.1f",
	       o->evict_first ? "registered" : "fresh", npages,
	       (unsigned long long)o->warm, total_ns / 1e6,
	       total_ns / 1e3 / (double)npages, pct.p50, pct.p90, pct.p99, pct.max);
	if (zs_stats)
		printf(" regions=%llu evicted=%llu faults=%llu zero_fill_pages=%llu",
		       (unsigned long long)s1.regions,
		       (unsigned long long)s1.evicted_pages,
		       (unsigned long long)(s1.faults - s0.faults),
		       (unsigned long long)(s1.zero_fill_pages - s0.zero_fill_pages));
	printf(" nivcsw=%ld bad_pages=%zu\n", cs, bad);
	fflush(stdout);
	munmap(map, o->size + FT_TAIL);
	if (bad)
		fprintf(stderr, "bench_engine: %zu pages read back wrong\n", bad);
	return bad ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_engine refault [--size 256M] [--seed N] [--text DIRS] [--random]\n"
		"                            [--cpu N] [--warm 16M|0]\n"
		"       bench_engine firsttouch [--size 1G] [--evict-first] [--cpu N] [--warm 16M|0]\n"
		"Run plain (kernel zswap: scripts/kernel-zswap.sh) or under\n"
		"LD_PRELOAD=libzswap.so; tools/bench/bench_engine.sh runs both side by side.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .seed = 1, .text_dirs = BENCH_TEXT_DIRS, .cpu = -1, .warm = 16UL << 20 };
	const struct bench_arg args[] = {
		BENCH_SIZE("size", o.size, 1),
		BENCH_UINT("seed", o.seed, 0, 1L << 62),
		BENCH_TEXT("text", o.text_dirs),
		BENCH_UINT("cpu", o.cpu, 0, 4095),
		BENCH_FLAG("random", o.random_order),
		BENCH_FLAG("evict-first", o.evict_first),
		BENCH_SIZE("warm", o.warm, 0),
		BENCH_ARGS_END,
	};
	const char *mode;

	if (argc < 2)
		usage();
	mode = argv[1];
	if (bench_args(argc, argv, 2, args, usage) != argc)
		usage();
	o.warm &= ~(BENCH_PAGE - 1);
	zs_stats = (stats_fn)dlsym(RTLD_DEFAULT, "zswap_stats");
	if (zs_stats) {
		int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");

		zs_active = active ? active() : 0;
	}
	bench_pin(o.cpu);

	if (!strcmp(mode, "refault")) {
		if (!o.size)
			o.size = 256UL << 20;
		o.size &= ~(BENCH_PAGE - 1);
		return bench_refault(&o);
	}
	if (!strcmp(mode, "firsttouch")) {
		if (!o.size)
			o.size = 1UL << 30;
		o.size &= ~(BENCH_PAGE - 1);
		return bench_firsttouch(&o);
	}
	usage();
}
