/*
 * bench_util.c - timing, percentiles and argument helpers for the benchmarks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

uint64_t bench_parse_size(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		bench_die("%s: '%s' is not a size (e.g. 4096, 256M, 1G)", opt, s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	case '\0': break;
	default:
		bench_die("%s: '%s': unknown unit (K, M or G)", opt, s);
	}
	if (*end != '\0' || v == 0)
		bench_die("%s: '%s' is not a size (e.g. 4096, 256M, 1G)", opt, s);
	return v;
}

long bench_parse_long(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < min || v > max)
		bench_die("%s: '%s': expected an integer in [%ld, %ld]", opt, s, min, max);
	return v;
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
