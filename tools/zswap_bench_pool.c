/*
 * zswap_bench_pool.c - the store against raw LZ4, lock modes side by side,
 * and pool memory per zspage order, all in one run on the same pages.
 *
 *   (a) one thread: zswap_store_page / zswap_load_page per page against
 *       LZ4_compress_fast_extState / LZ4_decompress_safe of the same pages;
 *   (b) store+load throughput with 1, 2, 4, 8 threads with class locks, the
 *       pool lock, and 32 pools;
 *   (c) mem_used_total / compr_data_size for orders 2, 3 and 4.
 *
 * Data: text-like pages from real files on this machine and ELF pages
 * (tools/store_pages.c). A benchmark, not a test: it prints figures, as
 * markdown tables for docs/BENCHMARKS.md, and judges nothing. Each timing is
 * the best of --rounds rounds; every round's ratio is printed too, so the
 * noise shows.
 */
#include "config.h"
#include "store.h"
#include "comp.h"
#include "store_pages.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>
#include <zstd.h>

static unsigned int rounds = 3;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
	printf("Machine: %s, %ld CPUs online, Linux %s; lz4 %s, zstd %s\n\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN), u.release, LZ4_versionString(), ZSTD_versionString());
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
	double best[4] = { 1e9, 1e9, 1e9, 1e9 };
	size_t cbytes = 0;

	if (!cbuf || !clen || !state || !e) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memset(cbuf, 0, CHUNK * bound);
	printf("(a) %s, %zu pages, one thread, lz4, order 2, 1 pool, class locks: time per page\n\n",
	       name, n);
	printf("| round | lz4 compress | lz4 decompress | store | load | store+load / compress+decompress |\n");
	printf("|---|---|---|---|---|---|\n");
	for (unsigned int r = 0; r < rounds; r++) {
		/* One store for the round, as a program keeps one: its pool is
		 * warm after the first chunk, as the compressor's buffer is. */
		struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, 2, ZS_LOCK_CLASS, 1);
		double t[4] = { 0, 0, 0, 0 };

		cbytes = 0;
		for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
			size_t c1 = c0 + CHUNK < n ? c0 + CHUNK : n;

			for (int side = 0; side < 2; side++) {
				double t0;

				if ((side ^ (int)(c0 / CHUNK)) & 1) {
					t0 = now();
					for (size_t i = c0; i < c1; i++) {
						clen[i - c0] = LZ4_compress_fast_extState(state, sp_page(set, i),
							(char *)cbuf + (i - c0) * bound, SP_PAGE, (int)bound, 1);
						cbytes += (size_t)clen[i - c0];
					}
					t[0] += now() - t0;
					t0 = now();
					for (size_t i = c0; i < c1; i++)
						if (LZ4_decompress_safe((char *)cbuf + (i - c0) * bound, (char *)out,
									clen[i - c0], SP_PAGE) != SP_PAGE)
							exit(2);
					t[1] += now() - t0;
				} else {
					t0 = now();
					for (size_t i = c0; i < c1; i++)
						if (zswap_store_page(s, sp_page(set, i), &e[i - c0]))
							exit(3);
					t[2] += now() - t0;
					t0 = now();
					for (size_t i = c0; i < c1; i++)
						if (zswap_load_page(s, &e[i - c0], out))
							exit(4);
					t[3] += now() - t0;
				}
			}
		}
		zswap_store_destroy(s);
		printf("| %u | %.2f us | %.2f us | %.2f us | %.2f us | %.3f |\n", r + 1,
		       t[0] * 1e6 / (double)n, t[1] * 1e6 / (double)n, t[2] * 1e6 / (double)n,
		       t[3] * 1e6 / (double)n, (t[2] + t[3]) / (t[0] + t[1]));
		for (int i = 0; i < 4; i++)
			best[i] = dmin(best[i], t[i]);
	}
	printf("| best | %.2f us | %.2f us | %.2f us | %.2f us | **%.3f** |\n\n",
	       best[0] * 1e6 / (double)n, best[1] * 1e6 / (double)n, best[2] * 1e6 / (double)n,
	       best[3] * 1e6 / (double)n, (best[2] + best[3]) / (best[0] + best[1]));
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
	t->t[0] = now();
	for (size_t i = t->from; i < t->to; i++)
		if (zswap_store_page(t->s, sp_page(t->set, i), &t->e[i]))
			exit(5);
	t->t[1] = now();
	pthread_barrier_wait(t->bar);
	t->t[2] = now();
	for (size_t i = t->from; i < t->to; i++)
		if (zswap_load_page(t->s, &t->e[i], out))
			exit(6);
	t->t[3] = now();
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
		{ "32 pools (pool lock each, seed 001)", ZS_LOCK_POOL, 32 },
		{ "32 pools, class locks", ZS_LOCK_CLASS, 32 },
	};
	static const unsigned int threads[] = { 1, 2, 4, 8 };
	const size_t nm = sizeof(modes) / sizeof(modes[0]);
	double tp[4][4];

	printf("(b) %s, %zu pages, lz4, order 2: thousands of pages stored+loaded per second "
	       "(store / load)\n\n", name, set->npages);
	printf("| threads |");
	for (size_t m = 0; m < nm; m++)
		printf(" %s |", modes[m].name);
	printf(" class / pool lock |\n|---|");
	for (size_t m = 0; m <= nm; m++)
		printf("---|");
	printf("\n");
	for (size_t t = 0; t < 4; t++) {
		printf("| %u |", threads[t]);
		for (size_t m = 0; m < nm; m++) {
			double ss, ls;

			run_threads(set, modes[m].lock, modes[m].pools, threads[t], &ss, &ls);
			tp[t][m] = (double)set->npages / (ss + ls) / 1e3;
			printf(" %.0f (%.0f / %.0f) |", tp[t][m], (double)set->npages / ss / 1e3,
			       (double)set->npages / ls / 1e3);
			fflush(stdout);
		}
		printf(" %.3f |\n", tp[t][0] / tp[t][1]);
	}
	printf("\n");
}

/* (c) what the pool takes for what it holds, per order. */
static void bench_memory(const char *name, const struct sp_set *set, enum zswap_comp comp, int level)
{
	struct zswap_entry *e = calloc(set->npages, sizeof(*e));
	static uint8_t out[SP_PAGE];

	for (unsigned int order = 2; order <= 4; order++) {
		struct zswap_store *s = mk(comp, level, order, ZS_LOCK_CLASS, 1);
		struct zswap_stats st, half;
		unsigned long freed;

		for (size_t i = 0; i < set->npages; i++)
			if (zswap_store_page(s, sp_page(set, i), &e[i]))
				exit(7);
		memset(&st, 0, sizeof(st));
		zswap_store_stats(s, &st);
		/* Fragment it: load every other page back, then compact. */
		for (size_t i = 0; i < set->npages; i += 2)
			zswap_load_page(s, &e[i], out);
		freed = zswap_store_compact(s);
		memset(&half, 0, sizeof(half));
		zswap_store_stats(s, &half);
		printf("| %s | %s%s%.0d | %u | %.2f | %llu | %llu | %llu | %.4f | %.4f | %.4f (%lu pages compacted) |\n",
		       name, comp_name(comp), level ? ":" : "", level, order,
		       (double)st.orig_data_size / (double)st.mem_used_total,
		       (unsigned long long)st.compr_data_size, (unsigned long long)st.pool_total_size,
		       (unsigned long long)st.mem_used_total,
		       (double)st.pool_total_size / (double)st.compr_data_size,
		       (double)st.mem_used_total / (double)st.compr_data_size,
		       (double)half.mem_used_total / (double)half.compr_data_size, freed);
		fflush(stdout);
		zswap_store_destroy(s);
	}
	free(e);
}

static void usage(void)
{
	fprintf(stderr, "usage: zswap_bench_pool [--mb N] [--rounds R]\n"
		"  --mb N      MiB of text pages and of binary pages (default 64)\n"
		"  --rounds R  rounds per measurement, best kept (default 3)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mb", required_argument, NULL, 'm' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long mb = 64;
	struct sp_set text = { 0 }, bin = { 0 };
	int c;

	while ((c = getopt_long(argc, argv, "m:r:h", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'm':
			mb = strtoul(optarg, &end, 10);
			if (*end || mb == 0 || mb > 65536)
				usage();
			break;
		case 'r':
			rounds = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || rounds == 0 || rounds > 100)
				usage();
			break;
		default:
			usage();
		}
	}

	printf("zswap_bench_pool --mb %lu --rounds %u\n\n", mb, rounds);
	machine();
	if (sp_load_text(&text, mb << 20) || sp_load_binary(&bin, mb << 20))
		return 1;
	printf("Data: text %zu pages from %zu files; binary %zu pages from %zu ELF files\n\n",
	       text.npages, text.files, bin.npages, bin.files);
	verify(&text, ZSWAP_COMP_LZ4);
	verify(&bin, ZSWAP_COMP_ZSTD);

	bench_vs_lz4("text", &text);
	bench_vs_lz4("binary", &bin);
	bench_threads("text", &text);

	printf("(c) pool memory, 1 pool, class locks. mem_used_total includes the pool's "
	       "metadata; the last column after loading every other page back and compacting\n\n");
	printf("| data | compressor | order | orig / mem_used | compr_data_size | pool_total_size | "
	       "mem_used_total | pool / compr | **mem_used / compr** | mem_used / compr, half loaded |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	bench_memory("text", &text, ZSWAP_COMP_LZ4, 0);
	bench_memory("binary", &bin, ZSWAP_COMP_LZ4, 0);
	bench_memory("text", &text, ZSWAP_COMP_ZSTD, 3);
	printf("\n");
	sp_free(&text);
	sp_free(&bin);
	return 0;
}
