/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_smoke.c - the engine's quick end-to-end check, run under
 * LD_PRELOAD=libzswap.so by tests/engine/test_eng_smoke.sh.
 *
 * Maps 64 MiB, fills it with a pattern that compresses (text-like words plus
 * the page index), pages it out with madvise(MADV_PAGEOUT), checks through
 * zswap_stats() (found with dlsym) that the pages were stored and RSS fell,
 * reads everything back and verifies it, and checks that the store is empty
 * again (exclusive load). Exit 77 when the engine is not active here.
 *
 * With an argument it measures instead, and judges nothing (run it with and
 * without LD_PRELOAD to compare):
 *   prog_smoke refault [MiB]     per-page latency reading a just-paged-out range
 *   prog_smoke pageout [MiB]     MADV_PAGEOUT cost per page
 *   prog_smoke firsttouch [MiB]  first write to every page of a fresh mapping
 *                                (under libzswap: registered, one page evicted first)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "zswap.h"

#define SIZE (64UL << 20)
#define PAGE 4096UL

static int (*p_stats)(struct zswap_stats *, size_t);
static int (*p_active)(void);

static long rss_pages(void)
{
	char buf[128];
	long size = 0, rss = 0;
	int fd = open("/proc/self/statm", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	sscanf(buf, "%ld %ld", &size, &rss);
	return rss;
}

static void fill_page(unsigned char *p, size_t idx)
{
	static const char *words[] = { "page ", "zswap ", "compressed ", "store ", "the ",
				       "kernel ", "fault ", "memory ", "pool ", "evict " };
	size_t off = 0, w = idx;

	while (off < PAGE) {
		const char *s = words[w++ % 10];
		size_t l = strlen(s);
		if (off + l > PAGE)
			l = PAGE - off;
		memcpy(p + off, s, l);
		off += l;
	}
	memcpy(p, &idx, sizeof(idx));		/* every page distinct */
	if (idx % 7 == 0)
		memset(p, 0, PAGE);		/* some same-filled (zero) pages */
}

static int check_page(const unsigned char *p, size_t idx)
{
	static unsigned char want[PAGE];

	fill_page(want, idx);
	return memcmp(p, want, PAGE) == 0;
}

#define FAIL(...) do { fprintf(stderr, "prog_smoke: FAIL: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int measure(const char *what, size_t mib)
{
	size_t size = mib << 20, npages = size / PAGE;
	unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const char *lib = p_active && p_active() ? "libzswap" : "kernel";

	if (m == MAP_FAILED)
		FAIL("mmap: %s", strerror(errno));
	if (!strcmp(what, "firsttouch")) {
		/* Under libzswap, one eviction registers the whole mapping. */
		m[0] = 1;
		madvise(m, PAGE, MADV_PAGEOUT);
		double t0 = now_us();
		for (size_t i = 0; i < npages; i++)
			m[i * PAGE] = 1;
		double t1 = now_us();
		printf("firsttouch %s: %zu MiB in %.1f ms (%.3f us/page)\n", lib, mib,
		       (t1 - t0) / 1e3, (t1 - t0) / (double)npages);
		return 0;
	}
	for (size_t i = 0; i < npages; i++)
		fill_page(m + i * PAGE, i);
	double t0 = now_us();
	madvise(m, size, MADV_PAGEOUT);
	double t1 = now_us();
	if (!strcmp(what, "pageout")) {
		printf("pageout %s: %zu pages in %.1f ms (%.2f us/page)\n", lib, npages,
		       (t1 - t0) / 1e3, (t1 - t0) / (double)npages);
		return 0;
	}
	if (strcmp(what, "refault"))
		FAIL("unknown measurement %s", what);
	double *lat = mmap(NULL, npages * sizeof(double), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	volatile unsigned char sink = 0;
	double start = now_us();
	for (size_t i = 0; i < npages; i++) {
		double a = now_us();
		sink ^= m[i * PAGE + 64];
		lat[i] = now_us() - a;
	}
	double total = now_us() - start;
	(void)sink;
	qsort(lat, npages, sizeof(double), cmp_double);
	printf("refault %s: %zu pages, p50 %.1f us, p90 %.1f us, p99 %.1f us, mean %.2f us/page\n",
	       lib, npages, lat[npages / 2], lat[npages * 9 / 10], lat[npages * 99 / 100],
	       total / (double)npages);
	return 0;
}

int main(int argc, char **argv)
{
	struct zswap_stats st, st2;
	size_t npages = SIZE / PAGE;

	if (argc > 1) {
		p_active = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");
		return measure(argv[1], argc > 2 ? strtoul(argv[2], NULL, 0) : 64);
	}

	p_stats = (int (*)(struct zswap_stats *, size_t))dlsym(RTLD_DEFAULT, "zswap_stats");
	p_active = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");
	if (!p_stats || !p_active) {
		fprintf(stderr, "prog_smoke: libzswap is not preloaded\n");
		return 77;
	}
	if (!p_active()) {
		fprintf(stderr, "prog_smoke: libzswap is not active here (no userfaultfd?)\n");
		return 77;
	}

	unsigned char *m = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		FAIL("mmap: %s", strerror(errno));
	for (size_t i = 0; i < npages; i++)
		fill_page(m + i * PAGE, i);
	long rss_before = rss_pages();

	if (madvise(m, SIZE, MADV_PAGEOUT) != 0)
		FAIL("madvise(MADV_PAGEOUT): %s", strerror(errno));
	if (p_stats(&st, sizeof(st)) != 0)
		FAIL("zswap_stats: %s", strerror(errno));
	long rss_after = rss_pages();
	printf("stored_pages %llu evicted %llu skipped %llu same %llu pool %llu bytes\n",
	       (unsigned long long)st.stored_pages, (unsigned long long)st.evicted_pages,
	       (unsigned long long)st.evict_skipped_pages, (unsigned long long)st.same_filled_pages,
	       (unsigned long long)st.pool_total_size);
	printf("rss before %ld pages, after pageout %ld pages\n", rss_before, rss_after);
	if (st.stored_pages < npages * 9 / 10)
		FAIL("only %llu of %zu pages stored", (unsigned long long)st.stored_pages, npages);
	if (st.evicted_pages < npages * 9 / 10)
		FAIL("only %llu pages evicted", (unsigned long long)st.evicted_pages);
	/* RSS falls by the evicted pages; the pool holds them compressed. */
	if (rss_after > rss_before - (long)(npages / 2))
		FAIL("RSS did not fall: %ld -> %ld pages", rss_before, rss_after);

	for (size_t i = 0; i < npages; i++)
		if (!check_page(m + i * PAGE, i))
			FAIL("page %zu differs after refault", i);
	if (p_stats(&st2, sizeof(st2)) != 0)
		FAIL("zswap_stats: %s", strerror(errno));
	printf("after read-back: stored_pages %llu refaults %llu faults %llu\n",
	       (unsigned long long)st2.stored_pages, (unsigned long long)st2.refaults,
	       (unsigned long long)st2.faults);
	if (st2.stored_pages != 0)
		FAIL("%llu pages still stored after every page was read (load not exclusive)",
		     (unsigned long long)st2.stored_pages);
	if (st2.refaults < st.stored_pages)
		FAIL("refaults %llu < stored %llu", (unsigned long long)st2.refaults,
		     (unsigned long long)st.stored_pages);

	/* Once more after writing: the second round must see the new data. */
	for (size_t i = 0; i < npages; i += 3)
		m[i * PAGE + 100] ^= 0x5a;
	madvise(m, SIZE, MADV_PAGEOUT);
	for (size_t i = 0; i < npages; i++) {
		unsigned char *p = m + i * PAGE;
		if (i % 3 == 0)
			p[100] ^= 0x5a;
		if (!check_page(p, i))
			FAIL("page %zu differs after the second round", i);
	}
	if (munmap(m, SIZE) != 0)
		FAIL("munmap: %s", strerror(errno));
	printf("prog_smoke: OK\n");
	return 0;
}
