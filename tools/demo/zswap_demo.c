/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswap_demo.c - the store at work on this machine's own files.
 *
 * Reads files from /usr/share and /usr/lib (plain read(), up to --mb MiB),
 * stores every page in a zswap store as the kernel's zswap would (same-filled
 * pages as one word, the rest compressed into a zsmalloc pool, pages that
 * would not shrink stored as they are), prints what the pool holds in the
 * kernel's terms (zswap's debugfs counters, vmstat, zram's mm_stat), then
 * loads every page back, checks every byte, and prints the timings.
 *
 * The store's settings come from the ZSWAP_* environment variables (the one
 * option table, src/core/options.c); --compressor and --order override them.
 * Exit status: 0 when every page came back intact, 1 on any mismatch or
 * failed load, 2 on a usage error.
 */
#include "config.h"
#include "core/store.h"
#include "core/comp.h"
#include "core/options.h"
#include "store_pages.h"
#include "bench_util.h"
#include "core/parse.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEMO_DEFAULT_MB 256

struct demo {
	struct zswap_store *s;
	struct sp_set set;
	struct zswap_entry *e;
	int *err;			/* per page: store result, 0 = stored */
	unsigned int threads;
	_Atomic size_t bad;		/* pages that came back wrong or not at all */
	_Atomic size_t rejected;	/* pages the store refused (kept, not dropped) */
};

struct slice {
	struct demo *d;
	size_t from, to;
};

static void *store_slice(void *arg)
{
	struct slice *sl = arg;
	struct demo *d = sl->d;

	for (size_t i = sl->from; i < sl->to; i++) {
		d->err[i] = zswap_store_page(d->s, sp_page(&d->set, i), &d->e[i]);
		if (d->err[i])
			atomic_fetch_add(&d->rejected, 1);
	}
	return NULL;
}

static void *load_slice(void *arg)
{
	struct slice *sl = arg;
	struct demo *d = sl->d;
	static _Thread_local uint8_t out[SP_PAGE] __attribute__((aligned(64)));

	for (size_t i = sl->from; i < sl->to; i++) {
		if (d->err[i])
			continue;	/* never stored: the program kept it */
		int r = zswap_load_page(d->s, &d->e[i], out);
		if (r || memcmp(out, sp_page(&d->set, i), SP_PAGE)) {
			if (atomic_fetch_add(&d->bad, 1) < 10)
				fprintf(stderr, "zswap_demo: page %zu %s\n", i,
					r ? "could not be loaded" : "came back different");
		}
	}
	return NULL;
}

/* Run fn over all pages, split among the threads; returns seconds taken
 * and, in *cpu, the CPU seconds the process used meanwhile. */
static double run(struct demo *d, void *(*fn)(void *), double *cpu)
{
	pthread_t th[64];
	struct slice sl[64];
	double t0 = bench_now(), c0 = bench_process_cpu();

	for (unsigned int i = 0; i < d->threads; i++) {
		sl[i] = (struct slice){ d, d->set.npages * i / d->threads,
					d->set.npages * (i + 1) / d->threads };
		if (pthread_create(&th[i], NULL, fn, &sl[i])) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (unsigned int i = 0; i < d->threads; i++)
		pthread_join(th[i], NULL);
	*cpu = bench_process_cpu() - c0;
	return bench_now() - t0;
}

static void print_stats(const struct zswap_stats *st)
{
	printf("zswap (/sys/kernel/debug/zswap):\n");
#define P(f) printf("  %-28s %llu\n", #f, (unsigned long long)st->f)
	P(stored_pages);
	P(pool_total_size);
	P(same_filled_pages);
	P(stored_incompressible_pages);
	P(reject_compress_poor);
	P(reject_compress_fail);
	P(reject_alloc_fail);
	P(pool_limit_hit);
	P(decompress_fail);
	printf("vmstat:\n");
	P(zswpout);
	P(zswpin);
#undef P
	printf("mm_stat (zram's columns; bytes, then pages):\n");
	printf("  %14s %15s %14s %9s %12s %10s %15s %10s %16s\n", "orig_data_size", "compr_data_size",
	       "mem_used_total", "mem_limit", "mem_used_max", "same_pages", "pages_compacted",
	       "huge_pages", "huge_pages_since");
	printf("  %14llu %15llu %14llu %9llu %12llu %10llu %15llu %10llu %16llu\n",
	       (unsigned long long)st->orig_data_size, (unsigned long long)st->compr_data_size,
	       (unsigned long long)st->mem_used_total, (unsigned long long)st->mem_limit,
	       (unsigned long long)st->mem_used_max, (unsigned long long)st->same_pages,
	       (unsigned long long)st->pages_compacted, (unsigned long long)st->huge_pages,
	       (unsigned long long)st->huge_pages_since);
}

static void usage(FILE *f, int code)
{
	fprintf(f,
		"usage: zswap_demo [--compressor lz4|lzo|zstd[:LEVEL]] [--order 2..4] [--mb N] [--threads N]\n"
		"  Stores pages read from files under /usr/share and /usr/lib in a zswap\n"
		"  store, prints the pool's counters, loads every page back and checks it.\n"
		"  --compressor  default ZSWAP_COMPRESSOR, else lz4\n"
		"  --order       zspage order, default ZSWAP_ZSPAGE_ORDER, else 3\n"
		"  --mb N        MiB of file data to use, default ZSWAP_DEMO_MB, else %d\n"
		"  --threads N   threads storing and loading, default 1\n"
		"  Other settings (ZSWAP_POOL_LOCK, ZSWAP_NR_POOLS, ZSWAP_MAX_POOL_SIZE) come\n"
		"  from the environment.\n", DEMO_DEFAULT_MB);
	exit(code);
}

/* ZSWAP_* from the environment, leaving out the demo's own ZSWAP_DEMO_MB,
 * which the library's table does not know and would report as a typo. */
static void load_options(struct opt_values *v)
{
	extern char **environ;
	size_t n = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + 1, sizeof(*envp));
	if (!envp) {
		opt_load(v, NULL);
		return;
	}
	n = 0;
	for (char **p = environ; *p; p++)
		if (strncmp(*p, "ZSWAP_DEMO_MB=", 14))
			envp[n++] = *p;
	opt_load(v, envp);
	free(envp);
}

static unsigned long parse_count(const char *what, const char *s, unsigned long max)
{
	uint64_t v;

	if (parse_u64(s, 1, max, &v) != PARSE_OK) {
		fprintf(stderr, "zswap_demo: %s '%s': expected a number from 1 to %lu\n", what, s, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "compressor", required_argument, NULL, 'c' },
		{ "order", required_argument, NULL, 'o' },
		{ "mb", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const roots[] = { "/usr/share", "/usr/lib", NULL };
	struct opt_values v;
	struct zswap_store_config cfg;
	struct zswap_stats st;
	struct demo d;
	unsigned long mb = DEMO_DEFAULT_MB;
	const char *env_mb = getenv("ZSWAP_DEMO_MB");
	char why[256], comp_text[32];
	double t_read, t_store, t_load, c_store, c_load;
	int c;

	memset(&d, 0, sizeof(d));
	d.threads = 1;
	load_options(&v);
	if (env_mb)
		mb = parse_count("ZSWAP_DEMO_MB", env_mb, 1UL << 20);
	while ((c = getopt_long(argc, argv, "c:o:m:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
		case 'o':
			if (!opt_parse_one(c == 'c' ? OPT_COMPRESSOR : OPT_ZSPAGE_ORDER, optarg, &v,
					   why, sizeof(why))) {
				fprintf(stderr, "zswap_demo: --%s '%s': %s\n",
					c == 'c' ? "compressor" : "order", optarg, why);
				exit(2);
			}
			break;
		case 'm':
			mb = parse_count("--mb", optarg, 1UL << 20);
			break;
		case 't':
			d.threads = (unsigned int)parse_count("--threads", optarg, 64);
			break;
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind < argc)
		usage(stderr, 2);

	opt_store_config(&v, &cfg);
	opt_format(OPT_COMPRESSOR, &v, comp_text, sizeof(comp_text));
	t_read = bench_now();
	if (sp_load_tree(&d.set, roots, mb << 20))
		return 1;
	t_read = bench_now() - t_read;
	printf("zswap_demo: %zu pages (%.1f MiB) from %zu files under /usr/share and /usr/lib, read in %.2f s\n",
	       d.set.npages, (double)d.set.bytes / 1048576.0, d.set.files, t_read);
	printf("store: compressor %s, zspage order %u, %s locks, %u pool%s, mem_limit %llu, %u thread%s\n\n",
	       comp_text, cfg.order, cfg.lock == ZS_LOCK_POOL ? "pool" : "class", cfg.nr_pools,
	       cfg.nr_pools == 1 ? "" : "s", (unsigned long long)cfg.mem_limit, d.threads,
	       d.threads == 1 ? "" : "s");

	d.s = zswap_store_create(&cfg);
	d.e = calloc(d.set.npages, sizeof(*d.e));
	d.err = calloc(d.set.npages, sizeof(*d.err));
	if (!d.s || !d.e || !d.err) {
		perror("zswap_demo: zswap_store_create");
		return 1;
	}

	t_store = run(&d, store_slice, &c_store);
	memset(&st, 0, sizeof(st));
	zswap_store_stats(d.s, &st);
	printf("After storing every page:\n");
	print_stats(&st);
	printf("\ncompression ratio: %.2f (orig_data_size / compr_data_size), %.2f counting the pool's "
	       "overhead (orig_data_size / mem_used_total)\n",
	       st.compr_data_size ? (double)st.orig_data_size / (double)st.compr_data_size : 0.0,
	       st.mem_used_total ? (double)st.orig_data_size / (double)st.mem_used_total : 0.0);
	if (d.rejected)
		printf("%zu pages were refused by the store (kept as they are, as the kernel "
		       "would leave them in memory or swap them out)\n", (size_t)d.rejected);

	t_load = run(&d, load_slice, &c_load);
	memset(&st, 0, sizeof(st));
	zswap_store_stats(d.s, &st);
	printf("\nAfter loading every page back (exclusive loads: the pool keeps no copy):\n");
	printf("  stored_pages %llu, pool_total_size %llu, zswpin %llu, decompress_fail %llu\n",
	       (unsigned long long)st.stored_pages, (unsigned long long)st.pool_total_size,
	       (unsigned long long)st.zswpin, (unsigned long long)st.decompress_fail);
	printf("\ntime: store %.3f s (%.2f us/page, %.0f MB/s; CPU %.3f s), "
	       "load and verify %.3f s (%.2f us/page, %.0f MB/s; CPU %.3f s)\n",
	       t_store, t_store * 1e6 / (double)d.set.npages,
	       (double)d.set.npages * SP_PAGE / t_store / 1e6, c_store,
	       t_load, t_load * 1e6 / (double)d.set.npages,
	       (double)d.set.npages * SP_PAGE / t_load / 1e6, c_load);

	size_t bad = d.bad;
	printf("verify: %zu of %zu pages identical%s\n", d.set.npages - (size_t)d.rejected - bad,
	       d.set.npages - (size_t)d.rejected, bad ? "  *** MISMATCH ***" : "");
	zswap_store_destroy(d.s);
	free(d.e);
	free(d.err);
	sp_free(&d.set);
	return bad || st.stored_pages ? 1 : 0;
}
