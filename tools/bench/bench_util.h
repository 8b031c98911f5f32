/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_util.h - small helpers shared by the benchmark programs
 * (tools/bench/bench_*.c) and the demo programs.
 *
 * Benchmarks print one "RESULT key=value ..." line per measurement on stdout
 * (tools/bench/bench_engine.sh collects them); everything else goes to stderr.
 * They never judge a figure: no timed assertion anywhere. They do exit
 * non-zero when data came back wrong, because then no figure means anything.
 */
#ifndef ZSWAP_BENCH_UTIL_H
#define ZSWAP_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21		/* Linux 5.4; older libc headers lack it */
#endif

#define BENCH_PAGE 4096UL

/* Monotonic nanoseconds (vDSO clock_gettime: tens of ns, measured by
 * bench_timer_overhead_ns()). */
uint64_t bench_now_ns(void);

/* Seconds as a double: wall time (CLOCK_MONOTONIC), and the CPU time of the
 * calling thread or of the whole process. */
double bench_now(void);
double bench_thread_cpu(void);
double bench_process_cpu(void);

/* The first number of a file (a sysfs or debugfs counter, a sysctl), or -1
 * when it cannot be read. */
long long bench_read_ll(const char *path);

/* Median cost of one back-to-back pair of bench_now_ns() calls. */
uint64_t bench_timer_overhead_ns(void);

/* Percentiles of n latencies (ns). Sorts lat in place. */
struct bench_pct {
	double p50, p90, p99, p999, max, mean;	/* microseconds */
};
void bench_percentiles(uint32_t *lat, size_t n, struct bench_pct *out);

/* Parse a size above 0: "4096", "256M", "1GiB" (src/core/parse.h: K, M, G,
 * T, powers of 1024). Exits with a message on error. */
uint64_t bench_parse_size(const char *opt, const char *s);

/* Parse a decimal integer in [min, max] (digits only: no sign; min >= 0).
 * Exits with a message on error. */
long bench_parse_long(const char *opt, const char *s, long min, long max);

/*
 * The benchmarks' options, from a table: each --name VALUE (or
 * --name=VALUE, getopt_long's forms) stores into its variable. Integers are
 * stored at the variable's own width (sizeof), so an int, a size_t or a
 * uint64_t may be given.
 */
enum bench_arg_kind {
	BENCH_ARG_FLAG,		/* --name: 1 */
	BENCH_ARG_UINT,		/* --name N: an integer in [min, max] */
	BENCH_ARG_SIZE,		/* --name SIZE: bytes, at least min (0 or 1) */
	BENCH_ARG_TEXT,		/* --name TEXT: a const char * to the argument */
	BENCH_ARG_CHOICE,	/* --name WORD: WORD's index in choices (NULL-ended) */
	BENCH_ARG_CALL,		/* --name VALUE: call(VALUE, var) */
};

struct bench_arg {
	const char *name;	/* without the dashes: "size" */
	enum bench_arg_kind kind;
	void *var;
	size_t width;		/* sizeof the variable (integer kinds) */
	uint64_t min, max;	/* BENCH_ARG_UINT; min for BENCH_ARG_SIZE */
	const char *const *choices;
	void (*call)(const char *arg, void *var);
};

#define BENCH_FLAG(name, v)		{ name, BENCH_ARG_FLAG, &(v), sizeof(v), 0, 0, NULL, NULL }
#define BENCH_UINT(name, v, lo, hi)	{ name, BENCH_ARG_UINT, &(v), sizeof(v), lo, hi, NULL, NULL }
#define BENCH_SIZE(name, v, lo)		{ name, BENCH_ARG_SIZE, &(v), sizeof(v), lo, 0, NULL, NULL }
#define BENCH_TEXT(name, v)		{ name, BENCH_ARG_TEXT, &(v), sizeof(v), 0, 0, NULL, NULL }
#define BENCH_CHOICE(name, v, words)	{ name, BENCH_ARG_CHOICE, &(v), sizeof(v), 0, 0, words, NULL }
#define BENCH_CALL(name, fn, v)		{ name, BENCH_ARG_CALL, v, 0, 0, 0, NULL, fn }
#define BENCH_ARGS_END			{ NULL, BENCH_ARG_FLAG, NULL, 0, 0, 0, NULL, NULL }

/* Read the options of argv from argv[first] by args (ended by
 * BENCH_ARGS_END). --help, an unknown option, a missing value or a word not
 * among the choices call usage, which must not return; a bad number or size
 * exits through bench_die. Returns the index of the first operand (getopt's
 * optind). */
int bench_args(int argc, char **argv, int first, const struct bench_arg *args,
	       void (*usage)(void));

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
