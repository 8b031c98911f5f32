/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * demo_pager.c - the main job's demo program: an ordinary in-memory log
 * store with more data than its memory limit.
 *
 * It knows nothing about libzswap and never asks for anything to be paged
 * out. It maps one arena (as allocators do) and ingests --mb MiB of service
 * logs into it: timestamped request lines with request ids, paths, statuses,
 * sizes and latencies. Then it answers queries the way such a program does:
 * a full scan (errors per endpoint), lookups of requests (most of them in
 * the newest twentieth of the data, the rest anywhere), and finally it
 * checks every byte of the store against what it ingested.
 *
 * Run as `ZSWAP_MEMORY_LIMIT=128M LD_PRELOAD=libzswap.so demo_pager --mb
 * 384` (scripts/demo.sh), the library holds its resident anonymous memory
 * plus the compressed pool under the limit by itself: cold pages are
 * compressed, touched ones come back. Without the library the same program
 * simply needs all of its memory.
 *
 * The library's counters, when it is loaded, are found with dlsym and
 * printed in the kernel's terms (memory.max, memory.current, memory.stat's
 * zswap/zswapped/zswpout/zswpin/pgsteal/workingset_*, zswap's debugfs).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "zswap.h"
#include "bench_util.h"
#include "core/parse.h"

#define PAGE 4096UL
#define LOOKUPS 400000UL

static const char *const level[] = { "INFO", "INFO", "INFO", "INFO", "INFO", "INFO", "DEBUG", "WARN" };
static const char *const service[] = { "api", "api", "auth", "search", "cart", "api", "billing", "api" };
static const char *const method[] = { "GET", "GET", "GET", "POST", "GET", "PUT", "GET", "DELETE" };
static const char *const path[] = {
	"/v1/items", "/v1/items/{id}", "/v1/users/{id}", "/v1/search", "/v1/cart", "/v1/orders",
	"/v1/orders/{id}", "/v1/login", "/v1/items", "/v1/items/{id}", "/healthz", "/v1/recommendations",
	"/v1/items/{id}/reviews", "/v1/users/{id}/orders", "/v1/checkout", "/v1/items",
};
#define NPATH (sizeof(path) / sizeof(path[0]))

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static char *put(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *put_dec(char *p, unsigned int v, int width)
{
	char b[12];
	int n = 0;

	do {
		b[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n < width)
		b[n++] = '0';
	while (n)
		*p++ = b[--n];
	return p;
}

static char *put_hex(char *p, uint64_t v, int digits)
{
	for (int i = digits - 1; i >= 0; i--)
		*p++ = "0123456789abcdef"[(v >> (4 * i)) & 15];
	return p;
}

/* Page i of the store: the log lines of one moment of the service, cut at
 * the page boundary like a ring of fixed pages. Deterministic from i, so the
 * final check needs no second copy. */
static void make_page(char *dst, size_t i)
{
	char line[256], *end = dst + PAGE, *p = dst;
	uint64_t r = mix(i);
	unsigned int ms = (unsigned int)(i * 40 % 86400000);

	while (p < end) {
		char *q = line;
		r = mix(r);
		ms += (unsigned int)(r & 15);
		q = put(q, "2026-11-30T");
		q = put_dec(q, ms / 3600000 % 24, 2);
		*q++ = ':';
		q = put_dec(q, ms / 60000 % 60, 2);
		*q++ = ':';
		q = put_dec(q, ms / 1000 % 60, 2);
		*q++ = '.';
		q = put_dec(q, ms % 1000, 3);
		q = put(q, "Z ");
		q = put(q, level[(r >> 4) & 7]);
		*q++ = ' ';
		q = put(q, service[(r >> 7) & 7]);
		q = put(q, "[");
		q = put_dec(q, 4100 + (unsigned int)((r >> 10) & 3), 0);
		q = put(q, "]: req=");
		q = put_hex(q, ((uint64_t)i << 8) + (uint64_t)(p - dst) / 64, 10);	/* sequential ids */
		*q++ = ' ';
		q = put(q, method[(r >> 12) & 7]);
		*q++ = ' ';
		q = put(q, path[(r >> 20) % NPATH]);
		q = put(q, " -> ");
		unsigned int status = (r >> 24) % 50 == 0 ? 500 : (r >> 30) % 12 == 0 ? 404 : 200;
		q = put_dec(q, status, 0);
		*q++ = ' ';
		q = put_dec(q, status == 200 ? 200u * (unsigned int)(1 + ((r >> 36) & 15)) : 0u, 0);
		q = put(q, "B ");
		q = put_dec(q, 1 + (unsigned int)((r >> 40) % 40), 0);
		q = put(q, "ms\n");
		size_t n = (size_t)(q - line);
		if (n > (size_t)(end - p))
			n = (size_t)(end - p);
		memcpy(p, line, n);
		p += n;
	}
}

static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = atol(line + strlen(key) + 1);
	fclose(f);
	return v;
}

static int (*stats_fn)(struct zswap_stats *, size_t);

static void show(const char *when)
{
	struct zswap_stats st = { 0 };

	printf("  %-16s RSS %5ld MiB, peak %5ld MiB", when, status_kb("VmRSS:") / 1024,
	       status_kb("VmHWM:") / 1024);
	if (stats_fn && stats_fn(&st, sizeof(st)) == 0 && st.size >= sizeof(st))
		printf("; zswapped %5llu MiB in a %4llu MiB pool",
		       (unsigned long long)(st.orig_data_size >> 20),
		       (unsigned long long)((st.mem_used_total + st.pool_metadata_bytes) >> 20));
	printf("\n");
	fflush(stdout);
}

#define MIB(x) ((unsigned long long)(x) >> 20)

static void report(size_t mb)
{
	struct zswap_stats st = { 0 };

	if (!stats_fn || stats_fn(&st, sizeof(st)) != 0 || st.size < sizeof(st)) {
		printf("(libzswap not loaded: no statistics)\n");
		return;
	}
	long peak = status_kb("VmHWM:") / 1024;
	uint64_t pool = st.mem_used_total + st.pool_metadata_bytes;
	printf("\nmemory, as memcg would show it for this process:\n");
	printf("  memory.max            %6llu MiB   (ZSWAP_MEMORY_LIMIT)\n", MIB(st.memory_max));
	printf("  memory.current        %6llu MiB   (anonymous memory, pool and page tables; not libzswap's"
	       " bookkeeping)\n", MIB(st.memory_current));
	printf("  peak RSS (VmHWM)      %6ld MiB   for %zu MiB of data: %zu MiB saved at the peak\n",
	       peak, mb, mb > (size_t)peak ? mb - (size_t)peak : 0);
	printf("memory.stat:\n");
	printf("  zswap                 %6llu MiB   (the pool: zsmalloc pages + metadata)\n", MIB(pool));
	printf("  zswapped              %6llu MiB   (what it holds, uncompressed: ratio %.2f)\n",
	       MIB(st.orig_data_size), pool ? (double)st.orig_data_size / (double)pool : 0.0);
	printf("  zswpout               %8llu pages\n", (unsigned long long)st.zswpout);
	printf("  zswpin                %8llu pages  (refaults)\n", (unsigned long long)st.zswpin);
	printf("  pgscan                %8llu pages\n", (unsigned long long)st.pgscan);
	printf("  pgsteal               %8llu pages  (%llu of them proactive)\n",
	       (unsigned long long)st.pgsteal, (unsigned long long)st.pgsteal_proactive);
	printf("  workingset_activate   %8llu pages  (refaulted soon after eviction: kept longer)\n",
	       (unsigned long long)st.workingset_activate);
	printf("  allocstall            %8llu        (faults held at the limit while reclaim made room)\n",
	       (unsigned long long)st.allocstall);
	printf("memory.events max       %8llu        (faults let through over the limit)\n",
	       (unsigned long long)st.memory_events_max);
	printf("memory.pressure some total=%llu us  (time with a fault held at the limit)\n",
	       (unsigned long long)st.memory_pressure_some_us);
	printf("zswap debugfs: stored_pages %llu, same_filled_pages %llu, pool_total_size %llu MiB, "
	       "pool_limit_hit %llu, reject_compress_poor %llu\n",
	       (unsigned long long)st.stored_pages, (unsigned long long)st.same_filled_pages,
	       MIB(st.pool_total_size), (unsigned long long)st.pool_limit_hit,
	       (unsigned long long)st.reject_compress_poor);
}

int main(int argc, char **argv)
{
	size_t mb = 384;

	for (int i = 1; i < argc; i++) {
		uint64_t v;
		enum parse_err e;

		if (strcmp(argv[i], "--mb") || i + 1 >= argc) {
			fprintf(stderr, "usage: %s [--mb N]\n", argv[0]);
			return 2;
		}
		e = parse_u64(argv[++i], 1, SIZE_MAX >> 20, &v);
		if (e != PARSE_OK) {
			fprintf(stderr, "demo_pager: --mb '%s': %s (a number of MiB, at least 1)\n",
				argv[i], parse_cause(e));
			return 2;
		}
		mb = (size_t)v;
	}
	stats_fn = (int (*)(struct zswap_stats *, size_t))dlsym(RTLD_DEFAULT, "zswap_stats");
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");
	printf("log store: %zu MiB of service logs in memory; libzswap %s\n", mb,
	       active && active() ? "active" : "NOT active (every page stays resident)");

	size_t len = mb << 20, pages = len / PAGE;
	char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	double t0 = bench_now();
	for (size_t p = 0; p < pages; p++)
		make_page(mem + p * PAGE, p);
	double t1 = bench_now();
	printf("ingest: %zu pages of log lines written in %.1f s\n", pages, t1 - t0);
	show("after ingest:");

	/* Query 1: errors per endpoint, a full scan. */
	unsigned long errors[NPATH] = { 0 }, lines = 0;
	for (size_t p = 0; p < pages; p++) {
		const char *s = mem + p * PAGE, *e = s + PAGE;
		while (s < e) {
			const char *nl = memchr(s, '\n', (size_t)(e - s));
			if (!nl)
				break;
			const char *arrow = memmem(s, (size_t)(nl - s), " -> 5", 5);
			if (arrow) {
				for (size_t k = 0; k < NPATH; k++) {
					size_t pl = strlen(path[k]);
					if (arrow - s >= (long)pl && memcmp(arrow - pl, path[k], pl) == 0 &&
					    arrow[-(long)pl - 1] == ' ') {
						errors[k]++;
						break;
					}
				}
			}
			lines++;
			s = nl + 1;
		}
	}
	double t2 = bench_now();
	unsigned long total = 0;
	for (size_t k = 0; k < NPATH; k++)
		total += errors[k];
	printf("query 1: scanned %lu lines, %lu server errors; %.1f s\n", lines, total, t2 - t1);

	/* Query 2: request lookups, 80% in the newest twentieth of the logs. */
	uint64_t r = 42, found = 0;
	size_t recent = pages / 20 ? pages / 20 : 1;
	for (unsigned long k = 0; k < LOOKUPS; k++) {
		r = mix(r);
		size_t p = (r & 0xff) < 205 ? pages - 1 - (size_t)((r >> 8) % recent) : (size_t)((r >> 8) % pages);
		const char *s = memmem(mem + p * PAGE, PAGE, "req=", 4);
		if (s && s[4] >= '0')
			found++;
	}
	double t3 = bench_now();
	printf("query 2: %lu request lookups (80%% in the newest twentieth), %llu found; %.1f s\n", LOOKUPS,
	       (unsigned long long)found, t3 - t2);
	show("after queries:");

	/* Every byte, against what was ingested. */
	char expect[PAGE];
	size_t bad = 0;
	for (size_t p = 0; p < pages; p++) {
		make_page(expect, p);
		if (memcmp(mem + p * PAGE, expect, PAGE) != 0 && bad++ < 5)
			fprintf(stderr, "demo_pager: page %zu differs\n", p);
	}
	double t4 = bench_now();
	printf("check: %zu pages (%zu MiB) compared byte for byte, %zu wrong; %.1f s\n", pages, mb, bad,
	       t4 - t3);
	show("at the end:");
	report(mb);
	if (bad) {
		printf("FAILED: %zu pages differ\n", bad);
		return 1;
	}
	printf("\nOK: %zu MiB held, queried and verified in %.1f s with a peak RSS of %ld MiB\n", mb, t4 - t0,
	       status_kb("VmHWM:") / 1024);
	return 0;
}
