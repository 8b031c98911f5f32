/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_pool.c - the store against raw LZ4, lock modes side by side,
 * and pool memory per zspage order, all in one run on the same pages.
 *
 *   (a) one thread: zswap_store_page / zswap_load_page per page against
 *       LZ4_compress_fast_extState / LZ4_decompress_safe of the same pages;
 *   (b) store+load throughput with 1, 2, 4, 8 threads with class locks, the
 *       pool lock, and 32 pools;
 *   (c) mem_used_total / compr_data_size for orders 2, 3 and 4, without and
 *       with the pool's metadata, and which classes lose most to rounding;
 *   (d) the pool alone (zs_malloc/zs_map_object/zs_free, no compression)
 *       in both lock modes, 1 to 8 threads (printed after (b));
 *   (e) the compressors side by side through the store (lz4, lzo, zstd:1,
 *       zstd:3): store and load CPU time per page and the compression
 *       ratio, on text, binary and, with --pages FILE, pages from a file
 *       (e.g. tools/bench/bench_reclaim --dump N: the reclaim benchmark's
 *       pages).
 *
 * --sizes COMP --pages FILE prints each page's compressed length with COMP
 * (comp_compress, no limit) and nothing else, for
 * tools/bench/bench_pool_kernel.sh to compare with the kernel's.
 *
 * Data: text-like pages from real files on this machine and ELF pages
 * (tools/bench/store_pages.c). A benchmark, not a test: it prints figures, as
 * markdown tables for docs/BENCHMARKS.md, and judges nothing. Each timing is
 * the best of --rounds rounds; every round's ratio is printed too, so the
 * noise shows.
 */
#include "config.h"
#include "core/store.h"
#include "core/comp.h"
#include "store_pages.h"
#include "bench_util.h"
#include "core/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>
#include <lzo/lzo1x.h>
#include <zstd.h>

static unsigned int rounds = 3;

/* (a) compares the CPU time of the calling thread (bench_thread_cpu), so
 * that other programs sharing the machine's CPUs do not bias one side. */

static double dmin(double a, double b)
{
	return a < b ? a : b;
}

static struct zswap_store *mk(enum zswap_comp comp, int level, unsigned int order,
			      enum zs_lock_mode lock, unsigned int nr_pools)
{
	struct zswap_store_config cfg = {
		.comp = comp, .level = level, .order = order, .lock = lock, .nr_pools = nr_pools,
	};
	struct zswap_store *s = zswap_store_create(&cfg);

	if (!s) {
		perror("zswap_store_create");
		exit(1);
	}
	return s;
}

static void machine(void)
{
	char model[256] = "?", line[512];
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10)) {
			char *p = strchr(line, ':');
			if (p) {
				snprintf(model, sizeof(model), "%s", p + 2);
				model[strcspn(model, "\n")] = 0;
			}
			break;
		}
	if (f)
		fclose(f);
	uname(&u);
	printf("Machine: %s, %ld CPUs online, Linux %s; lz4 %s, zstd %s, lzo %s\n\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN), u.release, LZ4_versionString(), ZSTD_versionString(),
	       lzo_version_string());
}

/* Every page stored and loaded back intact, outside any timing. */
static void verify(const struct sp_set *set, enum zswap_comp comp)
{
	struct zswap_store *s = mk(comp, 0, 2, ZS_LOCK_CLASS, 1);
	struct zswap_entry e;
	static uint8_t out[SP_PAGE];

	for (size_t i = 0; i < set->npages; i++) {
		if (zswap_store_page(s, sp_page(set, i), &e) ||
		    zswap_load_page(s, &e, out) || memcmp(out, sp_page(set, i), SP_PAGE)) {
			fprintf(stderr, "page %zu did not survive a round trip\n", i);
			exit(1);
		}
	}
	zswap_store_destroy(s);
}

/* (a) one thread: the store's cost over the compressor's. The pages go
 * through in chunks, each chunk through both paths back to back, in
 * alternating order, so a burst of noise from the VM or a cold cache hits
 * both sides alike. */
#define CHUNK 256

static void bench_vs_lz4(const char *name, const struct sp_set *set)
{
	const size_t n = set->npages, bound = (size_t)LZ4_compressBound(SP_PAGE);
	uint8_t *cbuf = malloc(CHUNK * bound);
	int *clen = malloc(CHUNK * sizeof(int));
	void *state = aligned_alloc(64, ((size_t)LZ4_sizeofState() + 63) & ~(size_t)63);
	struct zswap_entry *e = calloc(CHUNK, sizeof(*e));
	static uint8_t out[SP_PAGE] __attribute__((aligned(64)));
	double best[4] = { 1e9, 1e9, 1e9, 1e9 }, best_wall[2] = { 1e9, 1e9 };
	size_t cbytes = 0;

	if (!cbuf || !clen || !state || !e) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memset(cbuf, 0, CHUNK * bound);
	printf("(a) %s, %zu pages, one thread, lz4, order 2, 1 pool, class locks: CPU time per page "
	       "(the thread's own, system time included); last column the same ratio in wall time\n\n",
	       name, n);
	printf("| round | lz4 compress | lz4 decompress | store | load | store+load / compress+decompress | wall-time ratio |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (unsigned int r = 0; r < rounds; r++) {
		/* One store for the round, as a program keeps one: its pool is
		 * warm after the first chunk, as the compressor's buffer is. */
		struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, 2, ZS_LOCK_CLASS, 1);
		double t[4] = { 0, 0, 0, 0 }, w[2] = { 0, 0 };

		cbytes = 0;
		for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
			size_t c1 = c0 + CHUNK < n ? c0 + CHUNK : n;

			for (int side = 0; side < 2; side++) {
				double t0, w0 = bench_now();

				if ((side ^ (int)(c0 / CHUNK)) & 1) {
					t0 = bench_thread_cpu();
					for (size_t i = c0; i < c1; i++) {
						clen[i - c0] = LZ4_compress_fast_extState(state, sp_page(set, i),
							(char *)cbuf + (i - c0) * bound, SP_PAGE, (int)bound, 1);
						cbytes += (size_t)clen[i - c0];
					}
					t[0] += bench_thread_cpu() - t0;
					t0 = bench_thread_cpu();
					for (size_t i = c0; i < c1; i++)
						if (LZ4_decompress_safe((char *)cbuf + (i - c0) * bound, (char *)out,
									clen[i - c0], SP_PAGE) != SP_PAGE)
							exit(2);
					t[1] += bench_thread_cpu() - t0;
					w[0] += bench_now() - w0;
				} else {
					t0 = bench_thread_cpu();
					for (size_t i = c0; i < c1; i++)
						if (zswap_store_page(s, sp_page(set, i), &e[i - c0]))
							exit(3);
					t[2] += bench_thread_cpu() - t0;
					t0 = bench_thread_cpu();
					for (size_t i = c0; i < c1; i++)
						if (zswap_load_page(s, &e[i - c0], out))
							exit(4);
					t[3] += bench_thread_cpu() - t0;
					w[1] += bench_now() - w0;
				}
			}
		}
		zswap_store_destroy(s);
		printf("| %u | %.2f us | %.2f us | %.2f us | %.2f us | %.3f | %.3f |\n", r + 1,
		       t[0] * 1e6 / (double)n, t[1] * 1e6 / (double)n, t[2] * 1e6 / (double)n,
		       t[3] * 1e6 / (double)n, (t[2] + t[3]) / (t[0] + t[1]), w[1] / w[0]);
		best_wall[0] = dmin(best_wall[0], w[0]);
		best_wall[1] = dmin(best_wall[1], w[1]);
		for (int i = 0; i < 4; i++)
			best[i] = dmin(best[i], t[i]);
	}
	printf("| best | %.2f us | %.2f us | %.2f us | %.2f us | **%.3f** | %.3f |\n\n",
	       best[0] * 1e6 / (double)n, best[1] * 1e6 / (double)n, best[2] * 1e6 / (double)n,
	       best[3] * 1e6 / (double)n, (best[2] + best[3]) / (best[0] + best[1]),
	       best_wall[1] / best_wall[0]);
	printf("lz4 ratio on these pages: %.2f\n\n", (double)(n * SP_PAGE) / (double)cbytes);
	free(cbuf);
	free(clen);
	free(state);
	free(e);
}

/* (b) threads over one store: each stores its slice, then loads it back. */
struct tb {
	struct zswap_store *s;
	const struct sp_set *set;
	struct zswap_entry *e;
	pthread_barrier_t *bar;
	size_t from, to;
	double t[4];		/* stores start, end; loads start, end */
};

static void *tb_main(void *arg)
{
	struct tb *t = arg;
	static _Thread_local uint8_t out[SP_PAGE] __attribute__((aligned(64)));

	/* Each thread times itself: with more threads than CPUs the main
	 * thread may run long after a barrier opens. A phase lasts from the
	 * first thread's start to the last thread's end. */
	pthread_barrier_wait(t->bar);
	t->t[0] = bench_now();
	for (size_t i = t->from; i < t->to; i++)
		if (zswap_store_page(t->s, sp_page(t->set, i), &t->e[i]))
			exit(5);
	t->t[1] = bench_now();
	pthread_barrier_wait(t->bar);
	t->t[2] = bench_now();
	for (size_t i = t->from; i < t->to; i++)
		if (zswap_load_page(t->s, &t->e[i], out))
			exit(6);
	t->t[3] = bench_now();
	return NULL;
}

/* Best-of-rounds seconds for storing and for loading every page. */
static void run_threads(const struct sp_set *set, enum zs_lock_mode lock, unsigned int nr_pools,
			unsigned int nthreads, double *store_s, double *load_s)
{
	struct zswap_entry *e = calloc(set->npages, sizeof(*e));
	pthread_t th[64];
	struct tb tb[64];
	pthread_barrier_t bar;

	*store_s = *load_s = 1e9;
	for (unsigned int r = 0; r < rounds; r++) {
		struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, 2, lock, nr_pools);
		double t0 = 1e18, t1 = 0, t2 = 1e18, t3 = 0;

		pthread_barrier_init(&bar, NULL, nthreads);
		for (unsigned int i = 0; i < nthreads; i++) {
			tb[i] = (struct tb){ s, set, e, &bar, set->npages * i / nthreads,
					     set->npages * (i + 1) / nthreads, { 0 } };
			pthread_create(&th[i], NULL, tb_main, &tb[i]);
		}
		for (unsigned int i = 0; i < nthreads; i++) {
			pthread_join(th[i], NULL);
			t0 = dmin(t0, tb[i].t[0]);
			t1 = tb[i].t[1] > t1 ? tb[i].t[1] : t1;
			t2 = dmin(t2, tb[i].t[2]);
			t3 = tb[i].t[3] > t3 ? tb[i].t[3] : t3;
		}
		pthread_barrier_destroy(&bar);
		zswap_store_destroy(s);
		*store_s = dmin(*store_s, t1 - t0);
		*load_s = dmin(*load_s, t3 - t2);
	}
	free(e);
}

static void bench_threads(const char *name, const struct sp_set *set)
{
	static const struct { const char *name; enum zs_lock_mode lock; unsigned int pools; } modes[] = {
		{ "class locks", ZS_LOCK_CLASS, 1 },
		{ "pool lock", ZS_LOCK_POOL, 1 },
		{ "32 pools (pool lock each)", ZS_LOCK_POOL, 32 },
		{ "32 pools, class locks", ZS_LOCK_CLASS, 32 },
	};
	static const unsigned int threads[] = { 1, 2, 4, 8 };
	enum { NM = sizeof(modes) / sizeof(modes[0]), NT = sizeof(threads) / sizeof(threads[0]) };
	double st[NT][NM], lt[NT][NM];
	unsigned int saved = rounds;

	/* Rounds outermost, every configuration once per round: drift in the
	 * machine's speed then touches all columns alike. */
	for (size_t t = 0; t < NT; t++)
		for (size_t m = 0; m < NM; m++)
			st[t][m] = lt[t][m] = 1e9;
	rounds = 1;
	for (unsigned int r = 0; r < saved; r++)
		for (size_t t = 0; t < NT; t++)
			for (size_t m = 0; m < NM; m++) {
				double ss, ls;

				run_threads(set, modes[m].lock, modes[m].pools, threads[t], &ss, &ls);
				st[t][m] = dmin(st[t][m], ss);
				lt[t][m] = dmin(lt[t][m], ls);
			}
	rounds = saved;

	printf("(b) %s, %zu pages, lz4, order 2: thousands of pages per second, "
	       "store+load (store / load), best of %u\n\n", name, set->npages, rounds);
	printf("| threads |");
	for (size_t m = 0; m < NM; m++)
		printf(" %s |", modes[m].name);
	printf(" class / pool lock |\n|---|");
	for (size_t m = 0; m <= NM; m++)
		printf("---|");
	printf("\n");
	for (size_t t = 0; t < NT; t++) {
		double tp[NM];

		printf("| %u |", threads[t]);
		for (size_t m = 0; m < NM; m++) {
			tp[m] = (double)set->npages / (st[t][m] + lt[t][m]) / 1e3;
			printf(" %.0f (%.0f / %.0f) |", tp[m], (double)set->npages / st[t][m] / 1e3,
			       (double)set->npages / lt[t][m] / 1e3);
		}
		printf(" **%.3f** |\n", tp[0] / tp[1]);
	}
	printf("\n");
}

/* (d) the pool alone, both lock modes: what (b) cannot show, because
 * compression takes ~10 us a page and the pool well under 1 us. Each thread
 * fills POOL_SLOTS objects of its own (untimed), then does POOL_OPS
 * replacements: map, read, unmap and free one object, then allocate, map,
 * write and unmap a new one. Sizes are the text set's lz4 lengths. */
#define POOL_SLOTS	2048
#define POOL_OPS	(1UL << 20)	/* split among the threads */

struct pb {
	struct zs_pool *pool;
	const uint32_t *len;
	size_t nlen;
	unsigned long ops;
	unsigned int id;
	pthread_barrier_t *bar;
	double t[2];
};

static void *pb_main(void *arg)
{
	struct pb *b = arg;
	unsigned long *h = calloc(POOL_SLOTS, sizeof(*h));
	uint64_t x = 0x9e3779b97f4a7c15ULL * (b->id + 1);
	unsigned long sum = 0;

	if (!h)
		exit(8);
	for (size_t k = 0; k < POOL_SLOTS; k++)
		if (!(h[k] = zs_malloc(b->pool, b->len[(k * 7 + b->id * 131) % b->nlen])))
			exit(8);
	pthread_barrier_wait(b->bar);
	b->t[0] = bench_now();
	for (unsigned long i = 0; i < b->ops; i++) {
		size_t k, size;
		uint8_t *p;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		k = (size_t)(x % POOL_SLOTS);
		size = b->len[(x >> 16) % b->nlen];
		p = zs_map_object(b->pool, h[k]);
		sum += p[0];
		zs_unmap_object(b->pool, h[k]);
		zs_free(b->pool, h[k]);
		if (!(h[k] = zs_malloc(b->pool, size)))
			exit(8);
		p = zs_map_object(b->pool, h[k]);
		p[0] = (uint8_t)i;
		p[size - 1] = (uint8_t)sum;
		zs_unmap_object(b->pool, h[k]);
	}
	b->t[1] = bench_now();
	for (size_t k = 0; k < POOL_SLOTS; k++)
		zs_free(b->pool, h[k]);
	free(h);
	return NULL;
}

/* Seconds for POOL_OPS replacements spread over nthreads. */
static double run_pool(const uint32_t *len, size_t nlen, enum zs_lock_mode lock,
		       unsigned int nthreads)
{
	pthread_t th[8];
	struct pb pb[8];
	pthread_barrier_t bar;
	double t0 = 1e18, t1 = 0;
	struct zs_pool *pool = zs_create_pool("bench", 2, lock);

	if (!pool) {
		perror("zs_create_pool");
		exit(1);
	}
	pthread_barrier_init(&bar, NULL, nthreads);
	for (unsigned int i = 0; i < nthreads; i++) {
		pb[i] = (struct pb){ pool, len, nlen, POOL_OPS / nthreads, i, &bar, { 0, 0 } };
		pthread_create(&th[i], NULL, pb_main, &pb[i]);
	}
	for (unsigned int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		t0 = dmin(t0, pb[i].t[0]);
		t1 = pb[i].t[1] > t1 ? pb[i].t[1] : t1;
	}
	pthread_barrier_destroy(&bar);
	zs_destroy_pool(pool);
	return t1 - t0;
}

static void bench_pool(const char *name, const struct sp_set *set)
{
	static const unsigned int threads[] = { 1, 2, 4, 8 };
	enum { NT = sizeof(threads) / sizeof(threads[0]) };
	const int bound = LZ4_compressBound(SP_PAGE);
	uint32_t *len = malloc(set->npages * sizeof(*len));
	char *buf = malloc((size_t)bound);
	double best[NT][2];
	size_t nlen = 0;

	if (!len || !buf) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < set->npages; i++) {
		int n = LZ4_compress_default(sp_page(set, i), buf, SP_PAGE, bound);

		/* What the store would hand the pool: raw pages for the huge class. */
		len[nlen++] = n > 0 && n < 3264 ? (uint32_t)n : SP_PAGE;
	}
	for (size_t t = 0; t < NT; t++)
		best[t][0] = best[t][1] = 1e9;
	/* Rounds outermost, both modes once per round, as in (b). */
	for (unsigned int r = 0; r < rounds; r++)
		for (size_t t = 0; t < NT; t++)
			for (int m = 0; m < 2; m++)
				best[t][m] = dmin(best[t][m], run_pool(len, nlen, m ? ZS_LOCK_POOL : ZS_LOCK_CLASS,
									  threads[t]));
	printf("(d) the pool alone, order 2, %s lz4 lengths: millions of replacements per second "
	       "(map+read+unmap+free, then malloc+map+write+unmap), %lu per configuration, best of %u\n\n",
	       name, POOL_OPS, rounds);
	printf("| threads | class locks | pool lock | class / pool lock |\n|---|---|---|---|\n");
	for (size_t t = 0; t < NT; t++)
		printf("| %u | %.2f | %.2f | **%.3f** |\n", threads[t], (double)POOL_OPS / best[t][0] / 1e6,
		       (double)POOL_OPS / best[t][1] / 1e6, best[t][1] / best[t][0]);
	printf("\n");
	free(len);
	free(buf);
}

/* (c) what the pool takes for what it holds, per order, and where the
 * difference goes, from the class table: the handle header and rounding up
 * to the class size; objects allocated in zspages but not in use (each
 * class's last, partly filled zspage); zspage space no object fits in; and
 * the pool's metadata (not in mem_used_total, as in zram; reported as
 * pool_metadata_bytes). Each as a fraction of compr_data_size. */

/* Bytes lost to rounding, per kept class: where header+rounding goes. */
struct class_loss {
	unsigned int size, lo, ppz, objs;	/* class size, smallest request it serves */
	unsigned long n;
	double round, header;			/* bytes */
};

static int loss_cmp(const void *a, const void *b)
{
	const struct class_loss *x = a, *y = b;

	return x->round < y->round ? 1 : x->round > y->round ? -1 : 0;
}

/* The kept classes that lose the most to rounding up, for the entries
 * stored now (each object is its length plus the 8-byte handle header,
 * rounded up to the kept class its size class merged into). */
static void print_losses(FILE *f, const char *name, struct zs_pool *pool,
			 const struct zswap_entry *e, size_t n, double compr, unsigned int order)
{
	static struct class_loss loss[ZS_SIZE_CLASSES];
	unsigned int kept[ZS_SIZE_CLASSES], cur = ZS_SIZE_CLASSES - 1, nk = 0;
	double total = 0, head = 0, merged = 0;

	memset(loss, 0, sizeof(loss));
	/* A merged class belongs to the next kept class above it. */
	for (int i = ZS_SIZE_CLASSES - 1; i >= 0; i--) {
		struct zs_class_stat cs;

		if (zs_class_stat(pool, (unsigned int)i, &cs)) {
			cur = (unsigned int)i;
			loss[cur].size = cs.size;
			loss[cur].ppz = cs.pages_per_zspage;
			loss[cur].objs = cs.objs_per_zspage;
		}
		kept[i] = cur;
		loss[cur].lo = ZS_MIN_ALLOC_SIZE + (unsigned int)i * ZS_SIZE_CLASS_DELTA;
	}
	for (size_t i = 0; i < n; i++) {
		enum zswap_entry_type t = zswap_entry_type(&e[i]);
		size_t req, idx;
		struct class_loss *l;

		if (t != ZE_COMPRESSED && t != ZE_RAW)
			continue;
		req = zswap_entry_length(&e[i]) + (t == ZE_RAW ? 0 : ZS_HANDLE_SIZE);
		idx = req <= ZS_MIN_ALLOC_SIZE ? 0 : (req - ZS_MIN_ALLOC_SIZE + ZS_SIZE_CLASS_DELTA - 1) /
						     ZS_SIZE_CLASS_DELTA;
		if (idx >= ZS_SIZE_CLASSES)
			idx = ZS_SIZE_CLASSES - 1;
		l = &loss[kept[idx]];
		l->n++;
		l->round += (double)l->size - (double)req;
		l->header += t == ZE_RAW ? 0 : ZS_HANDLE_SIZE;
		/* What the unmerged class (every 16 bytes) would have lost. */
		merged += (double)l->size - (double)(ZS_MIN_ALLOC_SIZE + idx * ZS_SIZE_CLASS_DELTA);
	}
	for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++)
		if (loss[i].n) {
			total += loss[i].round;
			head += loss[i].header;
			loss[nk++] = loss[i];
		}
	qsort(loss, nk, sizeof(loss[0]), loss_cmp);
	fprintf(f, "%s, order %u: header %.2f%%, rounding %.2f%% of compr_data_size, of which "
	       "%.2f%% from merged classes (rounding to the kept class rather than the next "
	       "16 bytes); the 6 classes that lose most:\n\n",
	       name, order, 100.0 * head / compr, 100.0 * total / compr, 100.0 * merged / compr);
	fprintf(f, "| class size | requests it serves (header included) | pages / zspage | "
		"objects / zspage | objects | rounding, %% of compr |\n|---|---|---|---|---|---|\n");
	for (unsigned int i = 0; i < nk && i < 6; i++) {
		unsigned int from = loss[i].lo > ZS_MIN_ALLOC_SIZE ?
				    loss[i].lo - (unsigned int)ZS_SIZE_CLASS_DELTA + 1 : 1;

		fprintf(f, "| %u | %u..%u | %u | %u | %lu | %.2f%% |\n", loss[i].size, from,
			loss[i].size, loss[i].ppz, loss[i].objs, loss[i].n,
			100.0 * loss[i].round / compr);
	}
	fprintf(f, "\n");
}

/* One table row per order; with detail, print_losses() for each order into it. */
static void bench_memory(const char *name, const struct sp_set *set, enum zswap_comp comp, int level,
			 FILE *detail)
{
	struct zswap_entry *e = calloc(set->npages, sizeof(*e));
	static uint8_t out[SP_PAGE];

	for (unsigned int order = 2; order <= 4; order++) {
		struct zswap_store *s = mk(comp, level, order, ZS_LOCK_CLASS, 1);
		struct zs_pool *pool = zswap_store_pool(s, 0);
		struct zswap_stats st, half;
		double used = 0, alloc = 0, pages = 0, compr, hcompr;
		unsigned long freed;

		for (size_t i = 0; i < set->npages; i++)
			if (zswap_store_page(s, sp_page(set, i), &e[i]))
				exit(7);
		memset(&st, 0, sizeof(st));
		zswap_store_stats(s, &st);
		for (unsigned int c = 0; c < ZS_SIZE_CLASSES; c++) {
			struct zs_class_stat cs;

			if (!zs_class_stat(pool, c, &cs))
				continue;
			used += (double)cs.obj_used * cs.size;
			alloc += (double)cs.obj_allocated * cs.size;
			pages += (double)cs.pages_used * SP_PAGE;
		}
		compr = (double)st.compr_data_size;
		if (detail)
			print_losses(detail, name, pool, e, set->npages, compr, order);
		/* Fragment it: load every other page back, then compact. */
		for (size_t i = 0; i < set->npages; i += 2)
			zswap_load_page(s, &e[i], out);
		freed = zswap_store_compact(s);
		memset(&half, 0, sizeof(half));
		zswap_store_stats(s, &half);
		hcompr = (double)half.compr_data_size;
		printf("| %s | %s%s%.0d | %u | %.2f | %.1f | %.1f | %.2f | **%.4f** | %.4f | %.2f%% | "
		       "%.2f%% | %.2f%% | %.2f%% | %.4f / %.4f (%lu) |\n",
		       name, comp_name(comp), level ? ":" : "", level, order,
		       (double)st.orig_data_size / (double)st.mem_used_total,
		       compr / 1048576.0, (double)st.mem_used_total / 1048576.0,
		       (double)st.pool_metadata_bytes / 1048576.0,
		       (double)st.mem_used_total / compr,
		       (double)(st.mem_used_total + st.pool_metadata_bytes) / compr,
		       100.0 * (used - compr) / compr, 100.0 * (alloc - used) / compr,
		       100.0 * (pages - alloc) / compr,
		       100.0 * (double)st.pool_metadata_bytes / compr,
		       (double)half.mem_used_total / hcompr,
		       (double)(half.mem_used_total + half.pool_metadata_bytes) / hcompr, freed);
		fflush(stdout);
		zswap_store_destroy(s);
	}
	free(e);
}

/* (e) the compressors through the store, one thread. Each round runs every
 * compressor over all the pages, in an order rotated from round to round,
 * so drifting load on a shared machine does not favour one; median and
 * range over the rounds. */
static const struct { enum zswap_comp comp; int level; } e_comps[] = {
	{ ZSWAP_COMP_LZ4, 0 }, { ZSWAP_COMP_LZO, 0 }, { ZSWAP_COMP_ZSTD, 1 }, { ZSWAP_COMP_ZSTD, 3 },
};
#define E_NCOMP (sizeof(e_comps) / sizeof(e_comps[0]))
#define E_MAX_ROUNDS 100

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* "median (min..max)" of v[0..n), in microseconds per page. */
static void e_cell(double *v, unsigned int n, size_t npages, char *buf, size_t len)
{
	qsort(v, n, sizeof(*v), dcmp);
	double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;

	snprintf(buf, len, "%.2f (%.2f..%.2f)", med * 1e6 / (double)npages,
		 v[0] * 1e6 / (double)npages, v[n - 1] * 1e6 / (double)npages);
}

static void bench_comps(const char *name, const struct sp_set *set)
{
	const size_t n = set->npages;
	struct zswap_entry *e = calloc(n, sizeof(*e));
	static uint8_t out[SP_PAGE] __attribute__((aligned(64)));
	static double ts[E_NCOMP][E_MAX_ROUNDS], tl[E_NCOMP][E_MAX_ROUNDS];
	struct zswap_stats st[E_NCOMP];

	if (!e) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (unsigned int r = 0; r < rounds; r++) {
		for (size_t k = 0; k < E_NCOMP; k++) {
			size_t c = (k + r) % E_NCOMP;
			struct zswap_store *s = mk(e_comps[c].comp, e_comps[c].level, 3, ZS_LOCK_CLASS, 1);
			double t0 = bench_thread_cpu();

			for (size_t i = 0; i < n; i++)
				if (zswap_store_page(s, sp_page(set, i), &e[i]))
					exit(8);
			ts[c][r] = bench_thread_cpu() - t0;
			memset(&st[c], 0, sizeof(st[c]));
			zswap_store_stats(s, &st[c]);
			t0 = bench_thread_cpu();
			for (size_t i = 0; i < n; i++)
				if (zswap_load_page(s, &e[i], out) ||
				    (r == 0 && memcmp(out, sp_page(set, i), SP_PAGE)))
					exit(9);
			tl[c][r] = bench_thread_cpu() - t0;
			zswap_store_destroy(s);
		}
	}
	for (size_t c = 0; c < E_NCOMP; c++) {
		char a[64], b[64];

		e_cell(ts[c], rounds, n, a, sizeof(a));
		e_cell(tl[c], rounds, n, b, sizeof(b));
		printf("| %s | %s%s%.0d | %s | %s | **%.3f** | %.3f | %llu / %llu / %llu |\n", name,
		       comp_name(e_comps[c].comp), e_comps[c].level ? ":" : "", e_comps[c].level, a, b,
		       (double)st[c].orig_data_size / (double)st[c].compr_data_size,
		       (double)st[c].orig_data_size / (double)st[c].mem_used_total,
		       (unsigned long long)st[c].stored_pages, (unsigned long long)st[c].same_filled_pages,
		       (unsigned long long)st[c].stored_incompressible_pages);
	}
	fflush(stdout);
	free(e);
}

/* A file of raw pages (the last one zero-padded), up to max_bytes. */
static int load_pages_file(struct sp_set *set, const char *path, size_t max_bytes)
{
	int fd = open(path, O_RDONLY);
	size_t cap = max_bytes;
	ssize_t got;

	memset(set, 0, sizeof(*set));
	if (fd < 0) {
		perror(path);
		return -1;
	}
	set->data = aligned_alloc(SP_PAGE, cap);
	if (!set->data) {
		close(fd);
		return -1;
	}
	while (set->bytes < cap && (got = read(fd, set->data + set->bytes, cap - set->bytes)) > 0)
		set->bytes += (size_t)got;
	close(fd);
	set->npages = (set->bytes + SP_PAGE - 1) / SP_PAGE;
	memset(set->data + set->bytes, 0, set->npages * SP_PAGE - set->bytes);
	set->files = 1;
	set->cap = cap;
	if (!set->npages) {
		fprintf(stderr, "%s: empty\n", path);
		return -1;
	}
	return 0;
}

/* --sizes: one line per page, its compressed length. */
static int print_sizes(const char *name, const char *path, size_t max_bytes)
{
	enum zswap_comp comp = !strcmp(name, "lzo") ? ZSWAP_COMP_LZO :
			       !strcmp(name, "zstd") ? ZSWAP_COMP_ZSTD : ZSWAP_COMP_LZ4;
	size_t len = comp_ws_size(comp, 0);
	void *mem = aligned_alloc(64, len);
	static uint8_t buf[COMP_BUF_SIZE];
	struct sp_set set;
	struct comp_ws ws;

	if (strcmp(name, comp_name(comp)) || !path) {
		fprintf(stderr, "--sizes takes lz4, lzo or zstd, and --pages FILE\n");
		return 2;
	}
	if (!mem || comp_ws_init(&ws, comp, 0, mem, len) || load_pages_file(&set, path, max_bytes))
		return 1;
	for (size_t i = 0; i < set.npages; i++)
		printf("%d\n", comp_compress(&ws, sp_page(&set, i), buf, sizeof(buf)));
	free(set.data);
	free(mem);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_pool [--mb N] [--rounds R]\n"
		"  --mb N      MiB of text pages and of binary pages (default 64)\n"
		"  --rounds R  rounds per measurement, best kept (default 3)\n"
		"  --sections S  which of a, b, c, d, e to run (default abcde)\n"
		"  --pages FILE  (e) also on the raw pages of FILE, up to --mb MiB\n"
		"  --sizes COMP  with --pages: print each page's compressed length with\n"
		"                COMP (lz4, lzo, zstd) and exit\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mb", required_argument, NULL, 'm' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "sections", required_argument, NULL, 's' },
		{ "pages", required_argument, NULL, 'p' },
		{ "sizes", required_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long mb = 64;
	const char *sections = "abcde", *pages_file = NULL, *sizes = NULL;
	struct sp_set text = { 0 }, bin = { 0 }, file = { 0 };
	char *detail_buf = NULL;
	size_t detail_len = 0;
	FILE *detail;
	int c;

	while ((c = getopt_long(argc, argv, "m:r:s:p:z:h", opts, NULL)) != -1) {
		uint64_t v;

		switch (c) {
		case 'm':
			if (parse_u64(optarg, 1, 65536, &v) != PARSE_OK)
				usage();
			mb = (unsigned long)v;
			break;
		case 'r':
			if (parse_u64(optarg, 1, E_MAX_ROUNDS, &v) != PARSE_OK)
				usage();
			rounds = (unsigned int)v;
			break;
		case 's':
			sections = optarg;
			if (strspn(sections, "abcde") != strlen(sections) || !*sections)
				usage();
			break;
		case 'p':
			pages_file = optarg;
			break;
		case 'z':
			sizes = optarg;
			break;
		default:
			usage();
		}
	}

	if (sizes)
		return print_sizes(sizes, pages_file, mb << 20);
	printf("bench_pool --mb %lu --rounds %u --sections %s\n\n", mb, rounds, sections);
	machine();
	if (sp_load_text(&text, mb << 20) || sp_load_binary(&bin, mb << 20))
		return 1;
	printf("Data: text %zu pages from %zu files; binary %zu pages from %zu ELF files\n\n",
	       text.npages, text.files, bin.npages, bin.files);
	verify(&text, ZSWAP_COMP_LZ4);
	verify(&bin, ZSWAP_COMP_ZSTD);
	verify(&text, ZSWAP_COMP_LZO);
	verify(&bin, ZSWAP_COMP_LZO);
	if (pages_file) {
		if (load_pages_file(&file, pages_file, mb << 20))
			return 1;
		printf("Data: %zu pages from %s\n\n", file.npages, pages_file);
	}

	if (strchr(sections, 'e')) {
		printf("(e) the compressors through the store, one thread, order 3, 1 pool, class locks: "
		       "CPU time per page, median (min..max) of %u rounds; ratio orig / compr_data_size, "
		       "and orig / mem_used_total (the pool's pages)\n\n", rounds);
		printf("| data | compressor | store us | load us | ratio | ratio incl. pool overhead | "
		       "stored / same-filled / incompressible pages |\n");
		printf("|---|---|---|---|---|---|---|\n");
		bench_comps("text", &text);
		bench_comps("binary", &bin);
		if (pages_file)
			bench_comps(pages_file, &file);
		printf("\n");
	}

	if (strchr(sections, 'a')) {
		bench_vs_lz4("text", &text);
		bench_vs_lz4("binary", &bin);
	}
	if (strchr(sections, 'b'))
		bench_threads("text", &text);
	if (strchr(sections, 'd'))
		bench_pool("text", &text);
	if (!strchr(sections, 'c'))
		goto out;

	detail = open_memstream(&detail_buf, &detail_len);
	if (!detail) {
		perror("open_memstream");
		return 1;
	}
	printf("(c) pool memory, 1 pool, class locks. mem_used_total is zram's (pool pages "
	       "only); metadata is pool_metadata_bytes (handle tables, zspage descriptors). "
	       "Overheads as %% of compr_data_size: header+rounding (8-byte handle header, object "
	       "rounded up to its class), unused objects (allocated in zspages, not in use), "
	       "zspage slack (zspage bytes no object fits in), metadata. Last column: after "
	       "loading every other page back and compacting, without / with metadata (pages "
	       "freed)\n\n");
	printf("| data | compressor | order | orig / mem_used | compr MiB | mem_used MiB | metadata MiB | "
	       "mem_used / compr (zram) | (mem_used + metadata) / compr | header+rounding | "
	       "unused objects | zspage slack | metadata | half loaded, compacted |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	bench_memory("text", &text, ZSWAP_COMP_LZ4, 0, detail);
	bench_memory("binary", &bin, ZSWAP_COMP_LZ4, 0, NULL);
	bench_memory("text", &text, ZSWAP_COMP_ZSTD, 3, NULL);
	bench_memory("text", &text, ZSWAP_COMP_LZO, 0, NULL);
	fclose(detail);
	printf("\nWhere header+rounding goes (text, lz4):\n\n%s", detail_buf);
	free(detail_buf);
out:
	sp_free(&text);
	sp_free(&bin);
	free(file.data);
	return 0;
}
