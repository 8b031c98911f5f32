/*
 * bench_util.h - small helpers shared by the benchmark programs
 * (tools/bench/bench_*.c).
 *
 * Benchmarks print one "RESULT key=value ..." line per measurement on stdout
 * (tools/bench/bench_engine.sh collects them); everything else goes to stderr.
 * They never judge a figure: no timed assertion anywhere. They do exit
 * non-zero when data came back wrong, because then no figure means anything.
 */
#ifndef ZSWAP_BENCH_UTIL_H
#define ZSWAP_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21		/* Linux 5.4; older libc headers lack it */
#endif

#define BENCH_PAGE 4096UL

/* Monotonic nanoseconds (vDSO clock_gettime: tens of ns, measured by
 * bench_timer_overhead_ns()). */
uint64_t bench_now_ns(void);

/* Median cost of one back-to-back pair of bench_now_ns() calls. */
uint64_t bench_timer_overhead_ns(void);

/* Percentiles of n latencies (ns). Sorts lat in place. */
struct bench_pct {
	double p50, p90, p99, p999, max, mean;	/* microseconds */
};
void bench_percentiles(uint32_t *lat, size_t n, struct bench_pct *out);

/* Parse "256M", "1G", "4096" (powers of 1024). Exits with a message on error. */
uint64_t bench_parse_size(const char *opt, const char *s);

/* Parse a decimal integer in [min, max]. Exits with a message on error. */
long bench_parse_long(const char *opt, const char *s, long min, long max);

/* Pin the calling thread to one CPU; -1 leaves it alone. Exits on failure. */
void bench_pin(int cpu);

/* Print a message to stderr and exit(1). */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* 64-bit FNV-1a over len bytes. */
uint64_t bench_hash(const void *p, size_t len);

/* A fixed-seed generator (splitmix64), so every side gets the same data. */
uint64_t bench_rand(uint64_t *state);

/* The value of a "key value" line of a file such as /proc/vmstat or a
 * cgroup's memory.stat; -1 if the file or the key is missing. */
long long bench_read_key(const char *path, const char *key);

/* A zram device's pool (its sysfs directory, e.g. /sys/block/zram1): from
 * mm_stat, mem_used_total in bytes and orig_data_size in 4 KiB pages.
 * Returns 0, or -1 if unreadable. No stdio: read every millisecond by
 * tools/bench/bench_reclaim_memcg. */
int bench_zram_pool(const char *dir, long long *pool_bytes, long long *stored_pages);

#endif
