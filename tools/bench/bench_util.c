/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_util.c - timing, percentiles and argument helpers for the benchmarks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "core/parse.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double bench_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_now(void)
{
	return bench_seconds(CLOCK_MONOTONIC);
}

double bench_thread_cpu(void)
{
	return bench_seconds(CLOCK_THREAD_CPUTIME_ID);
}

double bench_process_cpu(void)
{
	return bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t bench_timer_overhead_ns(void)
{
	uint32_t d[1001];

	for (size_t i = 0; i < 1001; i++) {
		uint64_t t0 = bench_now_ns();
		uint64_t t1 = bench_now_ns();
		d[i] = (uint32_t)(t1 - t0);
	}
	qsort(d, 1001, sizeof(d[0]), cmp_u32);
	return d[500];
}

/* Nearest-rank percentile of a sorted array. */
static double pct_of(const uint32_t *sorted, size_t n, double q)
{
	size_t k = (size_t)(q * (double)n);

	if (k >= n)
		k = n - 1;
	return sorted[k] / 1000.0;
}

void bench_percentiles(uint32_t *lat, size_t n, struct bench_pct *out)
{
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		sum += lat[i];
	qsort(lat, n, sizeof(lat[0]), cmp_u32);
	out->p50 = pct_of(lat, n, 0.50);
	out->p90 = pct_of(lat, n, 0.90);
	out->p99 = pct_of(lat, n, 0.99);
	out->p999 = pct_of(lat, n, 0.999);
	out->max = lat[n - 1] / 1000.0;
	out->mean = sum / (double)n / 1000.0;
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A size of at least min bytes, or a message and exit(1). */
static uint64_t bench_size_from(const char *opt, const char *s, uint64_t min)
{
	uint64_t v = 0;
	enum parse_err e = parse_size(s, min, UINT64_MAX, &v);

	if (e == PARSE_BAD_UNIT || e == PARSE_TOO_LARGE)
		bench_die("%s: '%s': %s", opt, s, parse_cause(e));
	if (e != PARSE_OK)
		bench_die("%s: '%s' is not a size (e.g. 4096, 256M, 1G)", opt, s);
	return v;
}

uint64_t bench_parse_size(const char *opt, const char *s)
{
	return bench_size_from(opt, s, 1);
}

long bench_parse_long(const char *opt, const char *s, long min, long max)
{
	uint64_t v = 0;

	if (parse_u64(s, min < 0 ? 0 : (uint64_t)min, max < 0 ? 0 : (uint64_t)max, &v) != PARSE_OK)
		bench_die("%s: '%s': expected an integer in [%ld, %ld]", opt, s, min, max);
	return (long)v;
}

/* v into a variable of width bytes. */
static void bench_store(void *var, size_t width, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;
	uint16_t v16 = (uint16_t)v;
	uint8_t v8 = (uint8_t)v;

	switch (width) {
	case 1: memcpy(var, &v8, 1); break;
	case 2: memcpy(var, &v16, 2); break;
	case 4: memcpy(var, &v32, 4); break;
	default: memcpy(var, &v, sizeof(v)); break;
	}
}

/* The program's usage message: it exits (2), as getopt's callers do. */
static void bench_usage(void (*usage)(void))
{
	usage();
	exit(2);
}

/* One option's value (optarg for a, whose long name is opt). */
static void bench_arg_one(const struct bench_arg *a, const char *opt, const char *arg,
			  void (*usage)(void))
{
	uint64_t i;

	switch (a->kind) {
	case BENCH_ARG_FLAG:
		bench_store(a->var, a->width, 1);
		break;
	case BENCH_ARG_UINT:
		bench_store(a->var, a->width,
			    (uint64_t)bench_parse_long(opt, arg, (long)a->min, (long)a->max));
		break;
	case BENCH_ARG_SIZE:
		bench_store(a->var, a->width, bench_size_from(opt, arg, a->min));
		break;
	case BENCH_ARG_TEXT:
		*(const char **)a->var = arg;
		break;
	case BENCH_ARG_CHOICE:
		for (i = 0; a->choices[i] && strcmp(arg, a->choices[i]); i++)
			;
		if (!a->choices[i])
			bench_usage(usage);
		bench_store(a->var, a->width, i);
		break;
	case BENCH_ARG_CALL:
		a->call(arg, a->var);
		break;
	}
}

int bench_args(int argc, char **argv, int first, const struct bench_arg *args,
	       void (*usage)(void))
{
	struct option lo[64];
	char opt[64];
	size_t n = 0;
	int c, at;

	for (; args[n].name; n++) {
		if (n + 2 > sizeof(lo) / sizeof(lo[0]))
			bench_die("bench_args: too many options");
		lo[n] = (struct option){ args[n].name,
			args[n].kind == BENCH_ARG_FLAG ? no_argument : required_argument, NULL, 0 };
	}
	lo[n] = (struct option){ "help", no_argument, NULL, 0 };
	lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };
	optind = first;
	while ((c = getopt_long(argc, argv, "", lo, &at)) != -1) {
		if (c != 0 || (size_t)at == n)
			bench_usage(usage);
		snprintf(opt, sizeof(opt), "--%s", args[at].name);
		bench_arg_one(&args[at], opt, optarg, usage);
	}
	return optind;
}

void bench_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		bench_die("sched_setaffinity(cpu %d): %s", cpu, strerror(errno));
}

uint64_t bench_hash(const void *p, size_t len)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= c[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t bench_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int bench_zram_pool(const char *dir, long long *pool_bytes, long long *stored_pages)
{
	char path[512], buf[256];
	long long orig, compr, used;

	snprintf(path, sizeof(path), "%s/mm_stat", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%lld %lld %lld", &orig, &compr, &used) != 3)
		return -1;
	*pool_bytes = used;
	*stored_pages = orig / (long long)BENCH_PAGE;
	return 0;
}

long long bench_read_key(const char *path, const char *key)
{
	FILE *f = fopen(path, "re");
	char k[64];
	long long v, r = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", k, &v) == 2)
		if (!strcmp(k, key)) {
			r = v;
			break;
		}
	fclose(f);
	return r;
}

long long bench_read_ll(const char *path)
{
	FILE *f = fopen(path, "re");
	long long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}
