/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_reclaim.c - a working set larger than its memory limit.
 *
 * One program, run by tools/bench/bench_reclaim.sh on both sides with the same
 * arguments: under LD_PRELOAD=libzswap.so with ZSWAP_MEMORY_LIMIT=L, and
 * plain inside a memory cgroup limited to L with the kernel's zswap in front
 * of a swapfile (scripts/kernel-zswap.sh --memcg L). It finds out which side
 * it is on by itself (libzswap exports zswap_stats(), found with dlsym).
 *
 *   fill    map SIZE (W) bytes and write every page: text-like contents
 *           (words from a fixed vocabulary, Zipf-like, ~2-3x with LZ4/LZO),
 *           a function of the page index, with an 8-byte header (index,
 *           version). Timed (fill_ms): over the limit, this is reclaim too.
 *   ops     THREADS threads, each on its own part of the range, do OPS
 *           page accesses in all. The parts are interleaved chunks of
 *           CHUNK pages (default 64: chunk c belongs to thread c mod
 *           THREADS), so each part spans the whole mapping and every thread
 *           starts with the same share of it resident; --chunk 0 gives
 *           contiguous halves instead (before 2026-11-30 12:00: the thread
 *           whose half the fill left resident finished early, and the
 *           other then had the whole limit for a part that fits in it).
 *           A write, WRITE_PCT% of the accesses, bumps the
 *           page's version in its header and in a shadow array; a read
 *           checks the header and sums a line of the page). Timed: wall_ms,
 *           the figure compared between the sides.
 *             uniform  every page of the part equally likely;
 *             hotcold  HOT_OPS% of the accesses on the hot pages (every
 *                      (100/HOT_PCT)th page: scattered, so neither side can
 *                      win by locality), the rest uniform over all;
 *             seq      passes over the part in order (OPS pages in all).
 *   verify  every byte of every page against its generator and version.
 *
 * Output: one "RESULT key=value ..." line: times, refaults (libzswap:
 * zswap_stats refaults; kernel: this process's major faults, with its memory
 * cgroup's pgmajfault and the global /proc/vmstat zswpin, pswpin deltas
 * beside: the global ones count whoever else swaps meanwhile), peak RSS
 * (VmHWM, the fill included) and, inside a memory cgroup (v1), its
 * memory.max_usage_in_bytes and the kernel's zswap pool size; ws_resident_mb,
 * the mean of the working set found resident (mincore, every 50 ms) during
 * the accesses: the share the refaults follow, measured alike on both sides.
 * Never judges a figure; exits 1 if any byte read back wrong.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "zswap.h"
#include "bench_util.h"

typedef int (*stats_fn)(struct zswap_stats *, size_t);

enum pattern { PAT_UNIFORM, PAT_HOTCOLD, PAT_SEQ };
static const char *const pattern_names[] = { "uniform", "hotcold", "seq", NULL };

struct opts {
	uint64_t size;
	enum pattern pattern;
	int threads;
	uint64_t ops;		/* 0: the pattern's default */
	int write_pct;
	int hot_pct, hot_ops_pct;
	int resident_ms;	/* mincore sampling period during the accesses, 0: none */
	uint64_t seed;
	size_t chunk;		/* pages per interleaved chunk of a thread's part; 0: halves */
	const char *limit;	/* for the RESULT line only: what the side was given */
};

static struct opts o = {
	.size = 512ULL << 20, .pattern = PAT_UNIFORM, .threads = 1, .write_pct = 50,
	.hot_pct = 10, .hot_ops_pct = 90, .seed = 1, .chunk = 64, .limit = "-", .resident_ms = 50,
};

static char *map;
static size_t npages;
static uint32_t *shadow;	/* each page's version, as the program knows it */
static stats_fn zs_stats;

/* ---- page contents ---------------------------------------------------- */

/* A vocabulary of common English words, drawn with a skewed distribution:
 * text that LZ4 and LZO compress 2-3x a page, like prose. */
static const char *const words[] = {
	"the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "was",
	"with", "be", "by", "on", "not", "he", "this", "are", "or", "his", "from",
	"at", "which", "but", "have", "an", "had", "they", "you", "were", "their",
	"one", "all", "we", "can", "her", "has", "there", "been", "if", "more",
	"when", "will", "would", "who", "so", "no", "memory", "page", "system",
	"program", "kernel", "process", "between", "through", "because", "under",
	"compressed", "working", "set", "limit", "thread", "before", "after",
	"every", "should", "could", "people", "between", "number", "water",
	"history", "government", "example", "question", "important", "different",
	"following", "without", "another", "children", "against", "something",
	"understand", "information", "development", "experience", "particular",
	"Monday", "London", "September", "Einstein", "Mississippi", "1927", "42",
	"however,", "therefore,", "(see", "below)", "etc.", "i.e.", "--", ";",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

/* A well-mixed 64-bit hash of x: one splitmix64 step from state x. */
static uint64_t mix(uint64_t x)
{
	return bench_rand(&x);
}

/* The text every page is cut from, generated once at start-up (seeded):
 * words drawn with a skewed distribution (the product of three uniforms, so
 * common words dominate), lines of about 70 columns. */
#define CORPUS_LEN (4UL << 20)
static unsigned char *corpus;

#define NPHRASES 96
#define PHRASE_MAX 120

/* A word drawn with a skewed distribution (common words likelier). */
static const char *pick_word(uint64_t r)
{
	return words[(size_t)((r & 0xff) * ((r >> 8) & 0xff) * NWORDS >> 16)];
}

static void corpus_init(void)
{
	static char phrases[NPHRASES][PHRASE_MAX];
	uint64_t st = mix(o.seed);
	size_t n = 0, col = 0;

	/* Phrases of 3 to 10 words, then the text: phrases drawn with a skew
	 * (text repeats itself in phrases, not only in words), separated by
	 * a space or a full stop, lines of about 70 columns. */
	for (int k = 0; k < NPHRASES; k++) {
		size_t len = 0, nw = 3 + bench_rand(&st) % 8;
		for (size_t j = 0; j < nw; j++) {
			const char *w = pick_word(bench_rand(&st));
			if (len + strlen(w) + 2 >= PHRASE_MAX)
				break;
			len += (size_t)snprintf(phrases[k] + len, PHRASE_MAX - len, "%s%s", j ? " " : "", w);
		}
	}
	corpus = malloc(CORPUS_LEN);
	if (!corpus)
		bench_die("out of memory");
	while (n < CORPUS_LEN) {
		uint64_t r = bench_rand(&st);
		const char *s = phrases[(size_t)((r & 0xfff) * ((r >> 12) & 0xfff) * NPHRASES >> 24)];
		for (size_t j = 0; s[j] && n < CORPUS_LEN; j++, col++)
			corpus[n++] = (unsigned char)s[j];
		if (n < CORPUS_LEN) {
			corpus[n++] = col > 68 ? '\n' : ((r >> 44) & 3) == 0 ? '.' : ' ';
			col = col > 68 ? 0 : col + 1;
		}
	}
}

/* Page i's text (the whole page; the caller puts the header on top): a
 * slice of the corpus at a seeded offset. */
static void gen_page(size_t i, unsigned char *b)
{
	memcpy(b, corpus + mix(o.seed * 0x100000001b3ULL + i) % (CORPUS_LEN - BENCH_PAGE), BENCH_PAGE);
}

static uint64_t header_of(size_t i, uint32_t version)
{
	return ((uint64_t)i << 32) | version;
}

/* ---- the process and the system --------------------------------------- */

static long long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t kl = strlen(key);
	long long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			kb = atoll(line + kl + 1);
			break;
		}
	fclose(f);
	return kb;
}

static long long vmstat(const char *key)
{
	return bench_read_key("/proc/vmstat", key);
}

/* This process's memory cgroup (v1), "" for the root or none. */
static void memcg_dir(char *dir, size_t cap)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[512];

	dir[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || strncmp(c1 + 1, "memory:", 7) != 0)
			continue;
		c2[strcspn(c2, "\n")] = '\0';
		if (strcmp(c2 + 1, "/") != 0)
			snprintf(dir, cap, "/sys/fs/cgroup/memory%s", c2 + 1);
		break;
	}
	fclose(f);
}

static long long memcg_ll(const char *dir, const char *file)
{
	char path[640];

	if (!dir[0])
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return bench_read_ll(path);
}

/* A "key value" line of this process's memory cgroup's memory.stat (v1);
 * -1 outside a group. */
static char cg[512];

static long long memcg_stat(const char *key)
{
	char path[640];

	if (!cg[0])
		return -1;
	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	return bench_read_key(path, key);
}

struct snap {
	struct zswap_stats zs;
	long long zswpin, pswpin, zswpout, pswpout;	/* global */
	long long majflt;				/* this process's major faults */
	long long cg_majflt, cg_refault;		/* its memory cgroup's (v1) */
};

static void snap(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	if (zs_stats && zs_stats(&s->zs, sizeof(s->zs)) != 0)
		memset(&s->zs, 0, sizeof(s->zs));
	s->zswpin = vmstat("zswpin");
	s->pswpin = vmstat("pswpin");
	s->zswpout = vmstat("zswpout");
	s->pswpout = vmstat("pswpout");
	struct rusage ru;
	s->majflt = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_majflt : -1;
	s->cg_majflt = memcg_stat("pgmajfault");
	s->cg_refault = memcg_stat("workingset_refault_anon");
}

/* ---- the workload ----------------------------------------------------- */

struct worker {
	pthread_t tid;
	int id;
	size_t first, n;	/* its part of the range, in pages (--chunk 0) */
	uint64_t ops;
	uint64_t bad, sum;
	uint64_t done_ns;	/* when it finished its accesses */
};

/* The page of the whole mapping that is page j of worker w's part. */
static size_t part_page(const struct worker *w, size_t j)
{
	if (!o.chunk)
		return w->first + j;
	return (j / o.chunk * (size_t)o.threads + (size_t)w->id) * o.chunk + j % o.chunk;
}

static void access_page(struct worker *w, size_t p, bool write)
{
	volatile uint64_t *hdr = (volatile uint64_t *)(map + p * BENCH_PAGE);

	if (write) {
		uint32_t v = ++shadow[p];
		*hdr = header_of(p, v);
	} else {
		const uint64_t *line = (const uint64_t *)(map + p * BENCH_PAGE + ((p * 64) & (BENCH_PAGE - 64)));
		if (*hdr != header_of(p, shadow[p]))
			w->bad++;
		for (int k = 0; k < 8; k++)
			w->sum += line[k];
	}
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	uint64_t st = mix(o.seed ^ (0x5eed0000ULL + (uint64_t)w->id));
	size_t stride = (size_t)(100 / o.hot_pct), nhot = (w->n + stride - 1) / stride;

	for (uint64_t k = 0; k < w->ops; k++) {
		uint64_t r = bench_rand(&st);
		bool write = (r % 100) < (uint64_t)o.write_pct;
		size_t p;

		r >>= 8;
		switch (o.pattern) {
		case PAT_UNIFORM:
			p = r % w->n;
			break;
		case PAT_HOTCOLD:
			if ((r & 127) * 100 / 128 < (uint64_t)o.hot_ops_pct)
				p = ((r >> 8) % nhot) * stride;
			else
				p = (r >> 8) % w->n;
			break;
		default:
			p = k % w->n;
			break;
		}
		access_page(w, part_page(w, p), write);
	}
	w->done_ns = bench_now_ns();
	return NULL;
}

/* The resident share: mincore over the working set every --resident-ms while the
 * workers run (a page evicted, stored, or in libzswap's staging area is
 * absent). A table walk of a few hundred microseconds, on its own thread. */
static struct {
	pthread_t tid;
	unsigned char *vec;
	_Atomic bool stop;
	double sum_pages;
	unsigned long n;
} res;

static void *resident_run(void *arg)
{
	(void)arg;
	while (!atomic_load(&res.stop)) {
		if (mincore(map, npages * BENCH_PAGE, res.vec) == 0) {
			size_t r = 0;
			for (size_t i = 0; i < npages; i++)
				r += res.vec[i] & 1;
			res.sum_pages += (double)r;
			res.n++;
		}
		struct timespec ts = { o.resident_ms / 1000, (long)(o.resident_ms % 1000) * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Every byte of every page. */
static uint64_t verify_all(void)
{
	unsigned char *want = malloc(BENCH_PAGE);
	uint64_t bad = 0;

	if (!want)
		bench_die("out of memory");
	for (size_t i = 0; i < npages; i++) {
		uint64_t h = header_of(i, shadow[i]);
		gen_page(i, want);
		memcpy(want, &h, sizeof(h));
		if (memcmp(map + i * BENCH_PAGE, want, BENCH_PAGE) != 0) {
			if (bad < 5)
				fprintf(stderr, "bench_reclaim: page %zu reads back wrong\n", i);
			bad++;
		}
	}
	free(want);
	return bad;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_reclaim [--size W] [--pattern uniform|hotcold|seq] [--threads N]\n"
		"                     [--ops N] [--write-pct P] [--hot-pct P] [--hot-ops-pct P]\n"
		"                     [--seed S] [--limit-label TEXT] [--dump PAGES] [--chunk PAGES]\n"
		"                     [--resident-ms MS]\n"
		"  defaults: --size 512M --pattern uniform --threads 1 --write-pct 50\n"
		"  --hot-pct 10 --hot-ops-pct 90; --ops: 2 x the pages for uniform and\n"
		"  hotcold, 2 passes for seq; --chunk 64 (threads' parts interleaved in\n"
		"  chunks of that many pages; 0: contiguous parts); --resident-ms 50\n"
		"  (mincore of the working set that often during the accesses; 0: never)\n");
	exit(2);
}

/* --dump N: the first N pages' contents to stdout (to check how they
 * compress), then exit. */
static void dump_pages(const char *arg, void *unused)
{
	long nd = bench_parse_long("--dump", arg, 1, 1L << 30);
	unsigned char pg[BENCH_PAGE];

	(void)unused;
	corpus_init();
	for (long i = 0; i < nd; i++) {
		gen_page((size_t)i, pg);
		if (fwrite(pg, 1, BENCH_PAGE, stdout) != BENCH_PAGE)
			bench_die("--dump: write failed");
	}
	exit(0);
}

int main(int argc, char **argv)
{
	const struct bench_arg args[] = {
		BENCH_SIZE("size", o.size, 1),
		BENCH_CHOICE("pattern", o.pattern, pattern_names),
		BENCH_UINT("threads", o.threads, 1, 64),
		BENCH_UINT("ops", o.ops, 1, 1L << 40),
		BENCH_UINT("write-pct", o.write_pct, 0, 100),
		BENCH_UINT("hot-pct", o.hot_pct, 1, 100),
		BENCH_UINT("hot-ops-pct", o.hot_ops_pct, 0, 100),
		BENCH_UINT("seed", o.seed, 0, 1L << 62),
		BENCH_TEXT("limit-label", o.limit),
		BENCH_CALL("dump", dump_pages, NULL),
		BENCH_UINT("chunk", o.chunk, 0, 1L << 30),
		BENCH_UINT("resident-ms", o.resident_ms, 0, 10000),
		BENCH_ARGS_END,
	};

	bench_args(argc, argv, 1, args, usage);
	npages = o.size / BENCH_PAGE;
	if (npages < (size_t)o.threads * 64)
		bench_die("--size too small for %d threads", o.threads);
	if (!o.ops)
		o.ops = 2 * npages;

	zs_stats = (stats_fn)dlsym(RTLD_DEFAULT, "zswap_stats");
	int (*zs_active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");
	memcg_dir(cg, sizeof(cg));

	corpus_init();
	shadow = calloc(npages, sizeof(*shadow));
	struct worker *ws = calloc((size_t)o.threads, sizeof(*ws));
	unsigned char *page = malloc(BENCH_PAGE);
	res.vec = calloc(npages, 1);
	if (!shadow || !ws || !page || !res.vec)
		bench_die("out of memory");
	map = mmap(NULL, o.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		bench_die("mmap %llu bytes: %s", (unsigned long long)o.size, strerror(errno));

	struct snap s0, s1, s2, s3;
	snap(&s0);
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < npages; i++) {
		uint64_t h = header_of(i, 0);
		gen_page(i, page);
		memcpy(page, &h, sizeof(h));
		memcpy(map + i * BENCH_PAGE, page, BENCH_PAGE);
	}
	uint64_t t1 = bench_now_ns();
	long long hwm_fill = status_kb("VmHWM");
	snap(&s1);

	size_t part = npages / (size_t)o.threads;
	if (o.chunk && npages % (o.chunk * (size_t)o.threads))
		bench_die("--size must be a multiple of --chunk pages x --threads");
	for (int t = 0; t < o.threads; t++) {
		ws[t].id = t;
		ws[t].first = (size_t)t * part;
		ws[t].n = t == o.threads - 1 && !o.chunk ? npages - ws[t].first : part;
		ws[t].ops = o.ops / (uint64_t)o.threads;
	}
	uint64_t t2 = bench_now_ns();
	if (o.resident_ms && pthread_create(&res.tid, NULL, resident_run, NULL) != 0)
		bench_die("pthread_create failed");
	for (int t = 1; t < o.threads; t++)
		if (pthread_create(&ws[t].tid, NULL, worker_run, &ws[t]) != 0)
			bench_die("pthread_create failed");
	worker_run(&ws[0]);
	for (int t = 1; t < o.threads; t++)
		pthread_join(ws[t].tid, NULL);
	uint64_t t3 = bench_now_ns();
	atomic_store(&res.stop, true);
	if (o.resident_ms)
		pthread_join(res.tid, NULL);
	snap(&s2);
	uint64_t bad_reads = 0, sum = 0, first_done = t3;
	for (int t = 0; t < o.threads; t++) {
		bad_reads += ws[t].bad;
		sum += ws[t].sum;
		if (ws[t].done_ns < first_done)
			first_done = ws[t].done_ns;
	}
	uint64_t bad = verify_all();
	uint64_t t4 = bench_now_ns();
	snap(&s3);

	printf("RESULT bench=reclaim side=%s pattern=%s threads=%d size_mb=%llu limit=%s ops=%llu write_pct=%d",
	       zs_stats ? "libzswap" : "kernel", pattern_names[o.pattern], o.threads,
	       (unsigned long long)(o.size >> 20), o.limit, (unsigned long long)o.ops, o.write_pct);
	if (o.pattern == PAT_HOTCOLD)
		printf(" hot_pct=%d hot_ops_pct=%d", o.hot_pct, o.hot_ops_pct);
	printf(" chunk=%zu fill_ms=%.0f wall_ms=%.0f first_done_ms=%.0f verify_ms=%.0f total_ms=%.0f",
	       o.chunk, (t1 - t0) / 1e6, (t3 - t2) / 1e6, (first_done - t2) / 1e6, (t4 - t3) / 1e6, (t4 - t0) / 1e6);
	if (zs_stats) {
		const struct zswap_stats *a = &s1.zs, *b = &s2.zs;
		printf(" active=%d refaults=%llu zswpin=%llu zswpout=%llu fill_zswpout=%llu"
		       " refaults_total=%llu stored_pages=%llu pool_mb=%.1f ratio=%.2f"
		       " readahead_hits=%llu readahead_misses=%llu",
		       zs_active ? zs_active() : 0,
		       (unsigned long long)(b->refaults - a->refaults),
		       (unsigned long long)(b->zswpin - a->zswpin),
		       (unsigned long long)(b->zswpout - a->zswpout),
		       (unsigned long long)(s1.zs.zswpout - s0.zs.zswpout),
		       (unsigned long long)(s3.zs.refaults - s0.zs.refaults),
		       (unsigned long long)b->stored_pages, b->mem_used_total / 1048576.0,
		       b->compr_data_size ? (double)b->orig_data_size / (double)b->compr_data_size : 0.0,
		       (unsigned long long)(b->readahead_hits - a->readahead_hits),
		       (unsigned long long)(b->readahead_misses - a->readahead_misses));
	} else {
		long long stored = bench_read_ll("/sys/kernel/debug/zswap/stored_pages");
		long long pool = bench_read_ll("/sys/kernel/debug/zswap/pool_total_size");
		/* The kernel's zram as the swap device instead (kernel-zswap.sh
		 * --backend zram): its mm_stat's orig_data_size and
		 * mem_used_total. */
		const char *zram = getenv("BENCH_ZRAM");
		if (zram && *zram && bench_zram_pool(zram, &pool, &stored) != 0)
			pool = stored = -1;
		/* Refaults: this process's major faults (a swap-in from zswap is
		 * one; with page-cluster 0 each brings one page). The vmstat
		 * counters are global: another process swapping meanwhile would
		 * count there too. */
		printf(" refaults=%lld zswpin=%lld pswpin=%lld zswpout=%lld pswpout=%lld fill_zswpout=%lld"
		       " refaults_total=%lld stored_pages=%lld pool_mb=%.1f ratio=%.2f",
		       s2.majflt - s1.majflt,
		       s2.zswpin - s1.zswpin, s2.pswpin - s1.pswpin,
		       s2.zswpout - s1.zswpout, s2.pswpout - s1.pswpout, s1.zswpout - s0.zswpout,
		       s3.majflt - s0.majflt, stored,
		       pool >= 0 ? pool / 1048576.0 : -1.0,
		       stored > 0 && pool > 0 ? (double)stored * BENCH_PAGE / (double)pool : 0.0);
		printf(" kernel_pool=%s", zram && *zram ? "zram" : "zswap");
		printf(" memcg_pgmajfault=%lld memcg_refault_anon=%lld", s2.cg_majflt - s1.cg_majflt,
		       s2.cg_refault - s1.cg_refault);
		printf(" memcg_peak_mb=%.1f memcg_limit_mb=%.1f",
		       cg[0] ? memcg_ll(cg, "memory.max_usage_in_bytes") / 1048576.0 : -1.0,
		       cg[0] ? memcg_ll(cg, "memory.limit_in_bytes") / 1048576.0 : -1.0);
	}
	printf(" ws_resident_mb=%.1f ws_resident_samples=%lu", res.n ? res.sum_pages / (double)res.n / 256.0 : -1.0,
	       res.n);
	printf(" majflt=%lld vmhwm_mb=%.1f vmhwm_fill_mb=%.1f rss_end_mb=%.1f bad_reads=%llu bad_pages=%llu sum=%llx\n",
	       s2.majflt - s1.majflt, status_kb("VmHWM") / 1024.0, hwm_fill / 1024.0, status_kb("VmRSS") / 1024.0,
	       (unsigned long long)bad_reads, (unsigned long long)bad, (unsigned long long)(sum & 0xffff));
	fflush(stdout);
	if (bad || bad_reads)
		fprintf(stderr, "bench_reclaim: %llu pages and %llu reads came back wrong\n",
			(unsigned long long)bad, (unsigned long long)bad_reads);
	return bad || bad_reads ? 1 : 0;
}
