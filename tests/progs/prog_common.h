/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_common.h - helpers shared by the engine test programs (tests/progs/prog_*.c).
 *
 * The programs are linked normally, never with libzswap: the test scripts
 * run them with and without LD_PRELOAD=libzswap.so. The public API is reached
 * through dlsym(RTLD_DEFAULT) so one binary serves both runs. Three modes:
 *
 *   PC_MANAGED   the library is loaded and active: eviction is asserted
 *                (pagemap present bit, zswap_stats counters, RSS);
 *   PC_PLAIN     no library: the same program logic runs, MADV_PAGEOUT is the
 *                kernel's (no swap here, so nothing moves); used as reference;
 *   PC_INACTIVE  the library is loaded but inactive (no userfaultfd,
 *                ZSWAP_ENABLED=0): only allowed with --inactive-ok, otherwise
 *                the program skips (exit 77) with the reason on stderr.
 *
 * Everything a program prints on stdout must be the same in every mode (the
 * scripts compare runs); diagnostics go to stderr prefixed by the program's
 * name, never "libzswap:" (the scripts count those lines).
 *
 * Include this file first: it includes config.h (_GNU_SOURCE).
 */
#ifndef PROG_COMMON_H
#define PROG_COMMON_H

#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "zswap.h"
#include <sys/ioctl.h>
#include "base/compat.h"	/* PAGEMAP_SCAN, newer than the installed uapi headers */

#define PC_PAGE 4096UL
#define PC_MIB (1024UL * 1024UL)
#define PC_UNUSED __attribute__((unused))

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

enum pc_mode { PC_PLAIN, PC_MANAGED, PC_INACTIVE };

/* One instance per program (this header is included by one .c per binary). */
static struct {
	const char *name;
	enum pc_mode mode;
	int (*stats)(struct zswap_stats *, size_t);
	int (*pageout)(void *, size_t);
	int (*active)(void);
	int pagemap_fd;
} pc = { .name = "prog", .pagemap_fd = -1 };

/* ---- diagnostics ------------------------------------------------------ */

static PC_UNUSED __attribute__((noreturn, format(printf, 1, 2)))
void pc_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: FAIL: ", pc.name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static PC_UNUSED __attribute__((noreturn, format(printf, 1, 2)))
void pc_skip(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: SKIP: ", pc.name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(77);
}

static PC_UNUSED __attribute__((format(printf, 1, 2)))
void pc_info(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", pc.name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define PC_CHECK(cond, ...) \
	do { if (!(cond)) pc_fail(__VA_ARGS__); } while (0)

/* Async-signal-safe output, for signal handlers, destructors and children. */
static PC_UNUSED void pc_write_str(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* ---- the library's API, found at run time ----------------------------- */

static PC_UNUSED bool pc_managed(void)
{
	return pc.mode == PC_MANAGED;
}

static PC_UNUSED const char *pc_mode_name(void)
{
	return pc.mode == PC_MANAGED ? "managed" : pc.mode == PC_PLAIN ? "plain" : "inactive";
}

/* Snapshot of the counters; all zero when the library is absent. */
static PC_UNUSED void pc_stats(struct zswap_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!pc.stats)
		return;
	if (pc.stats(st, sizeof(*st)) != 0) {
		/* An inactive library may answer ENOSYS (zswap.h: "every call"). */
		if (pc.mode == PC_INACTIVE && errno == ENOSYS) {
			memset(st, 0, sizeof(*st));
			return;
		}
		pc_fail("zswap_stats: %s", strerror(errno));
	}
}

/*
 * Find the API, decide the mode and strip the common flags from argv:
 *   --inactive-ok      run (instead of skipping) when the library is
 *                      inactive, and then check that the API says so (ENOSYS);
 *   --expect-inactive  the library must be loaded and inactive (pass-through
 *                      tests: ZSWAP_ENABLED=0, no userfaultfd).
 */
static PC_UNUSED void pc_init(const char *name, int *argc, char **argv)
{
	bool inactive_ok = false, expect_inactive = false;
	int out = 1;

	pc.name = name;
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--inactive-ok") == 0)
			inactive_ok = true;
		else if (strcmp(argv[i], "--expect-inactive") == 0)
			inactive_ok = expect_inactive = true;
		else
			argv[out++] = argv[i];
	}
	argv[out] = NULL;
	*argc = out;

	if (sysconf(_SC_PAGESIZE) != (long)PC_PAGE)
		pc_skip("page size is %ld, the tests assume 4096", sysconf(_SC_PAGESIZE));

	pc.stats = (int (*)(struct zswap_stats *, size_t))dlsym(RTLD_DEFAULT, "zswap_stats");
	pc.pageout = (int (*)(void *, size_t))dlsym(RTLD_DEFAULT, "zswap_pageout");
	pc.active = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");

	if (!pc.stats && !pc.active) {
		if (expect_inactive)
			pc_fail("--expect-inactive: libzswap is not loaded (its API is not found)");
		pc.mode = PC_PLAIN;
		return;
	}
	if (!pc.stats || !pc.active || !pc.pageout)
		pc_fail("libzswap loaded but its API is incomplete (zswap_stats %s, zswap_active %s, zswap_pageout %s)",
			pc.stats ? "found" : "missing", pc.active ? "found" : "missing",
			pc.pageout ? "found" : "missing");
	if (pc.active()) {
		if (expect_inactive)
			pc_fail("--expect-inactive: zswap_active() is 1, the library should be a pure pass-through here");
		pc.mode = PC_MANAGED;
		return;
	}
	pc.mode = PC_INACTIVE;
	if (!inactive_ok)
		pc_skip("libzswap is inactive in this process (zswap_active() == 0): userfaultfd unavailable (not root?) or ZSWAP_ENABLED=0");

	/* Inactive: every call must fail with ENOSYS and change nothing. */
	char probe[64];
	errno = 0;
	int rc = pc.pageout(probe, sizeof(probe));
	PC_CHECK(rc == -1 && errno == ENOSYS,
		 "inactive library: zswap_pageout returned %d errno %d, expected -1 ENOSYS", rc, errno);
}

/* ---- memory ----------------------------------------------------------- */

static PC_UNUSED void *pc_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		pc_fail("mmap %zu: %s", len, strerror(errno));
	return p;
}

/* madvise(MADV_PAGEOUT): what a program does to ask for eviction. */
static PC_UNUSED int pc_pageout(void *addr, size_t len)
{
	return madvise(addr, len, MADV_PAGEOUT);
}

/* zswap_pageout() when the library is there, madvise otherwise. */
static PC_UNUSED int pc_pageout_api(void *addr, size_t len)
{
	if (pc.pageout && pc.mode == PC_MANAGED)
		return pc.pageout(addr, len);
	return pc_pageout(addr, len);
}

/* A field of /proc/self/status in KiB ("RssAnon", "VmHWM"). */
static PC_UNUSED long pc_status_kb(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		pc_fail("open /proc/self/status: %s", strerror(errno));
	while (kb < 0 && fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	if (kb < 0)
		pc_fail("no %s in /proc/self/status", key);
	return kb;
}

/* Resident anonymous memory of the process, in KiB (RssAnon). */
static PC_UNUSED long pc_rss_anon_kb(void)
{
	return pc_status_kb("RssAnon");
}

/* ---- /proc/self/pagemap: bit 63 present, bit 62 swapped ----------------- */

/* After fork the inherited descriptor still reads the parent's table. */
static PC_UNUSED void pc_pagemap_reopen(void)
{
	if (pc.pagemap_fd >= 0)
		close(pc.pagemap_fd);
	pc.pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pc.pagemap_fd < 0)
		pc_fail("open /proc/self/pagemap: %s", strerror(errno));
}

static PC_UNUSED uint64_t pc_pagemap_entry(const void *addr)
{
	uint64_t e;
	off_t off = (off_t)((uintptr_t)addr / PC_PAGE * sizeof(e));

	if (pc.pagemap_fd < 0)
		pc_pagemap_reopen();
	if (pread(pc.pagemap_fd, &e, sizeof(e), off) != (ssize_t)sizeof(e))
		pc_fail("pread pagemap at %p: %s", addr, strerror(errno));
	return e;
}

static PC_UNUSED bool pc_present(const void *addr)
{
	return (pc_pagemap_entry(addr) >> 63) & 1;
}

/* Number of present pages in [addr, addr + npages pages). */
static PC_UNUSED size_t pc_count_present(const void *addr, size_t npages)
{
	uint64_t buf[512];
	size_t present = 0;

	if (pc.pagemap_fd < 0)
		pc_pagemap_reopen();
	for (size_t done = 0; done < npages;) {
		size_t n = npages - done < 512 ? npages - done : 512;
		off_t off = (off_t)(((uintptr_t)addr / PC_PAGE + done) * sizeof(uint64_t));
		ssize_t r = pread(pc.pagemap_fd, buf, n * sizeof(uint64_t), off);

		if (r != (ssize_t)(n * sizeof(uint64_t)))
			pc_fail("pread pagemap: %s", r < 0 ? strerror(errno) : "short read");
		for (size_t i = 0; i < n; i++)
			present += (buf[i] >> 63) & 1;
		done += n;
	}
	return present;
}

/*
 * Pages holding memory of their own: present and not the shared zero page.
 * A page the library brought back as zeros may be the zero page (present,
 * costing nothing): eviction rightly leaves it. PAGEMAP_SCAN (Linux 6.7)
 * tells them apart; without it, every present page counts.
 */
static PC_UNUSED size_t pc_count_resident(const void *addr, size_t npages)
{
	static struct page_region vec[256];
	size_t total = 0;
	uintptr_t start = (uintptr_t)addr, end = start + npages * PC_PAGE;

	if (pc.pagemap_fd < 0)
		pc_pagemap_reopen();
	while (start < end) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg),
			.start = start,
			.end = end,
			.vec = (uintptr_t)vec,
			.vec_len = 256,
			.category_inverted = PAGE_IS_PFNZERO,
			.category_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO,
			.return_mask = PAGE_IS_PRESENT,
		};
		long n = ioctl(pc.pagemap_fd, PAGEMAP_SCAN, &arg);
		if (n < 0) {
			if (errno == ENOTTY || errno == EINVAL)
				return pc_count_present(addr, npages);
			pc_fail("PAGEMAP_SCAN: %s", strerror(errno));
		}
		for (long i = 0; i < n; i++)
			total += (vec[i].end - vec[i].start) / PC_PAGE;
		if (arg.walk_end <= start)
			pc_fail("PAGEMAP_SCAN made no progress");
		start = arg.walk_end;
	}
	return total;
}

/* ---- deterministic contents -------------------------------------------- */

static PC_UNUSED uint64_t pc_mix(uint64_t x)
{
	/* splitmix64's finaliser: a good 64-bit hash of one word */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static PC_UNUSED uint64_t pc_rand(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	uint64_t z = *state;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A checksum of a byte range (FNV-1a over 8-byte words, then mixed). */
static PC_UNUSED uint64_t pc_sum(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return pc_mix(h ^ len);
}

enum pc_kind { PC_ZERO, PC_SAME, PC_TEXT, PC_BINARY, PC_RANDOM, PC__KINDS };

static PC_UNUSED const char *pc_kind_name(enum pc_kind k)
{
	static const char *const names[] = { "zero", "same", "text", "binary", "random" };
	return k < PC__KINDS ? names[k] : "?";
}

/*
 * Fill one page with deterministic contents of a kind, from a seed:
 *  zero    all zero bytes (written, so the page is a real page);
 *  same    one non-zero 8-byte word repeated (same-filled);
 *  text    English-like words (compresses about 2:1 with LZ4);
 *  binary  fixed-size records with small integers (compresses well);
 *  random  random bytes (does not compress: stored whole).
 */
static PC_UNUSED void pc_fill(void *page, enum pc_kind kind, uint64_t seed)
{
	static const char *const words[] = {
		"the", "page", "of", "memory", "is", "compressed", "into", "a", "pool",
		"and", "dropped", "when", "program", "touches", "it", "again", "fault",
		"handler", "loads", "back", "zswap", "kernel", "swap", "slot", "entry",
		"size", "class", "zspage", "handle", "object", "thread", "lock", "with",
		"which", "from", "there", "every", "little", "while", "before", "after",
	};
	const size_t nwords = sizeof(words) / sizeof(words[0]);
	unsigned char *b = page;
	uint64_t st = pc_mix(seed ^ ((uint64_t)kind << 56));

	switch (kind) {
	case PC_ZERO:
		memset(b, 0, PC_PAGE);
		break;
	case PC_SAME: {
		/* A 4-byte pattern (what the store keeps), never zero. */
		uint64_t w = (pc_mix(seed) | 1) & 0xffffffffu;
		w |= w << 32;
		for (size_t i = 0; i < PC_PAGE; i += 8)
			memcpy(b + i, &w, 8);
		break;
	}
	case PC_TEXT: {
		size_t i = 0, col = 0;
		while (i < PC_PAGE) {
			const char *w = words[pc_rand(&st) % nwords];
			size_t n = strlen(w);
			for (size_t j = 0; j < n && i < PC_PAGE; j++, col++)
				b[i++] = (unsigned char)w[j];
			if (i < PC_PAGE) {
				b[i++] = col > 60 ? '\n' : ' ';
				col = col > 60 ? 0 : col + 1;
			}
		}
		break;
	}
	case PC_BINARY:
		for (size_t i = 0; i < PC_PAGE; i += 16) {
			uint32_t rec[4];
			uint64_t r = pc_rand(&st);
			rec[0] = (uint32_t)(seed * 256 + i / 16);	/* id */
			rec[1] = (uint32_t)(r & 7);			/* type */
			rec[2] = (uint32_t)((r >> 8) & 0xff) * 100;	/* amount */
			rec[3] = 0xfeed0000u | (uint32_t)((r >> 16) & 3);
			memcpy(b + i, rec, sizeof(rec));
		}
		break;
	case PC_RANDOM:
		for (size_t i = 0; i < PC_PAGE; i += 8) {
			uint64_t r = pc_rand(&st);
			memcpy(b + i, &r, 8);
		}
		break;
	default:
		pc_fail("pc_fill: bad kind %d", (int)kind);
	}
}

/* The seed of page i of a range filled with pc_fill_range(.., seed). */
static PC_UNUSED uint64_t pc_page_seed(uint64_t seed, size_t i)
{
	return seed * 1000003ULL + i;
}

static PC_UNUSED void pc_fill_range(void *addr, size_t npages, enum pc_kind kind, uint64_t seed)
{
	for (size_t i = 0; i < npages; i++)
		pc_fill((char *)addr + i * PC_PAGE, kind, pc_page_seed(seed, i));
}

/* Index of the first page of the range that differs from what pc_fill_range
 * wrote, or -1. Reading is what brings evicted pages back. */
static PC_UNUSED long pc_verify_range(const void *addr, size_t npages, enum pc_kind kind, uint64_t seed)
{
	static unsigned char expect[PC_PAGE];

	for (size_t i = 0; i < npages; i++) {
		pc_fill(expect, kind, pc_page_seed(seed, i));
		if (memcmp((const char *)addr + i * PC_PAGE, expect, PC_PAGE) != 0)
			return (long)i;
	}
	return -1;
}

/* True if the page reads as all zero bytes. */
static PC_UNUSED bool pc_page_is_zero(const void *page)
{
	const uint64_t *w = page;

	for (size_t i = 0; i < PC_PAGE / 8; i++)
		if (w[i])
			return false;
	return true;
}

/* Describe what a page holds, for failure messages. */
static PC_UNUSED const char *pc_describe(const void *page, enum pc_kind kind, uint64_t seed)
{
	static unsigned char expect[PC_PAGE];
	static char buf[160];
	size_t first = PC_PAGE, ndiff = 0;

	pc_fill(expect, kind, seed);
	for (size_t i = 0; i < PC_PAGE; i++)
		if (((const unsigned char *)page)[i] != expect[i]) {
			if (first == PC_PAGE)
				first = i;
			ndiff++;
		}
	snprintf(buf, sizeof(buf), "%zu bytes differ, first at offset %zu%s", ndiff, first,
		 pc_page_is_zero(page) ? " (the page reads all zeros)" : "");
	return buf;
}

/* Fail with a precise message unless the range holds what pc_fill_range wrote. */
static PC_UNUSED void pc_expect_range(const char *what, const void *addr, size_t npages,
				      enum pc_kind kind, uint64_t seed)
{
	long bad = pc_verify_range(addr, npages, kind, seed);

	if (bad >= 0)
		pc_fail("%s: page %ld (%p) of %zu (%s pages) is wrong: %s", what, bad,
			(const void *)((const char *)addr + bad * PC_PAGE), npages, pc_kind_name(kind),
			pc_describe((const char *)addr + bad * PC_PAGE, kind, pc_page_seed(seed, (size_t)bad)));
}

/* The same for pages [first, first + n) of a range pc_fill_range filled
 * whole (page i holds page i's contents, i counted from base). */
static PC_UNUSED void pc_expect_sub(const char *what, const char *base, size_t first, size_t n,
				    enum pc_kind kind, uint64_t seed)
{
	static unsigned char expect[PC_PAGE];

	for (size_t i = first; i < first + n; i++) {
		pc_fill(expect, kind, pc_page_seed(seed, i));
		if (memcmp(base + i * PC_PAGE, expect, PC_PAGE) != 0)
			pc_fail("%s: page %zu (%p) is wrong: %s", what, i, (const void *)(base + i * PC_PAGE),
				pc_describe(base + i * PC_PAGE, kind, pc_page_seed(seed, i)));
	}
}

static PC_UNUSED void pc_expect_zero(const char *what, const void *addr, size_t npages)
{
	for (size_t i = 0; i < npages; i++)
		if (!pc_page_is_zero((const char *)addr + i * PC_PAGE))
			pc_fail("%s: page %zu (%p) of %zu should read zeros but holds data",
				what, i, (const void *)((const char *)addr + i * PC_PAGE), npages);
}

/* ---- eviction, asserted ------------------------------------------------- */

static PC_UNUSED void pc_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Evict [addr, npages) with MADV_PAGEOUT (or zswap_pageout when use_api) and,
 * when managed, assert that it happened: every page of the range that held
 * memory of its own (pc_count_resident) is gone from the page table and the
 * counters grew by as many. Returns the number of pages evicted (0 when not
 * managed).
 */
static PC_UNUSED size_t pc_evict(const char *what, void *addr, size_t npages, bool use_api)
{
	struct zswap_stats a, b;
	size_t resident = 0;
	int rc;

	if (pc_managed()) {
		resident = pc_count_resident(addr, npages);
		pc_stats(&a);
	}
	rc = use_api ? pc_pageout_api(addr, npages * PC_PAGE) : pc_pageout(addr, npages * PC_PAGE);
	if (rc != 0 && pc_managed())
		pc_fail("%s: %s(%p, %zu pages) failed: %s", what, use_api ? "zswap_pageout" : "madvise(MADV_PAGEOUT)",
			addr, npages, strerror(errno));
	if (!pc_managed())
		return 0;
	pc_stats(&b);
	size_t left = pc_count_resident(addr, npages);
	uint64_t ev = b.evicted_pages - a.evicted_pages;
	if (left) {
		size_t first = 0;
		while (first < npages && !pc_count_resident((char *)addr + first * PC_PAGE, 1))
			first++;
		pc_fail("%s: %zu of %zu pages still present after eviction, the first at page %zu (%zu were present,"
			" evicted_pages +%" PRIu64 ", evict_skipped_pages +%" PRIu64 ")", what, left, npages, first,
			resident, ev, b.evict_skipped_pages - a.evict_skipped_pages);
	}
	PC_CHECK(ev == resident, "%s: evicted_pages grew by %" PRIu64 ", %zu pages were present", what, ev, resident);
	PC_CHECK(b.zswpout - a.zswpout == resident, "%s: zswpout grew by %" PRIu64 ", expected %zu",
		 what, b.zswpout - a.zswpout, resident);
	/* Another thread's refault meanwhile (a fault's readahead, a waiter
	 * woken) takes entries out: each load is one zswpin. */
	PC_CHECK(b.stored_pages - a.stored_pages == resident - (b.zswpin - a.zswpin),
		 "%s: stored_pages grew by %" PRId64 ", expected %zu less %" PRIu64 " loaded meanwhile",
		 what, (int64_t)(b.stored_pages - a.stored_pages), resident, b.zswpin - a.zswpin);
	PC_CHECK(b.evict_calls > a.evict_calls, "%s: evict_calls did not grow", what);
	return resident;
}

/* ---- phases a test starts with files --------------------------------------- */

/* Whether DIR/NAME exists. */
static PC_UNUSED bool pc_file_exists(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* Wait for DIR/NAME, up to max_ms (a hang detector, not a timing). */
static PC_UNUSED void pc_wait_file(const char *dir, const char *name, int max_ms)
{
	for (int waited = 0; !pc_file_exists(dir, name); waited += 10) {
		if (waited >= max_ms)
			pc_fail("%s/%s did not appear", dir, name);
		pc_sleep_ms(10);
	}
}

/* Create DIR/NAME, empty: a phase done, for the test. */
static PC_UNUSED void pc_make_file(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		pc_fail("%s: %s", path, strerror(errno));
	close(fd);
}

/*
 * Wait (bounded: up to 10 s, it is a hang detector, not a timing assertion)
 * for stored_pages to reach want: entries of unmapped or discarded memory may
 * be dropped by the handler thread just after the call returns.
 */
static PC_UNUSED void pc_expect_stored(const char *what, uint64_t want)
{
	struct zswap_stats st;

	if (!pc_managed())
		return;
	for (int i = 0; i < 10000; i++) {
		pc_stats(&st);
		if (st.stored_pages == want)
			return;
		if (i == 0 && st.stored_pages < want)
			break;
		pc_sleep_ms(1);
	}
	pc_fail("%s: stored_pages is %" PRIu64 ", expected %" PRIu64, what, st.stored_pages, want);
}

/* The same for an upper bound: entries of memory that is gone must be
 * dropped; the library may also have brought pages back early. */
static PC_UNUSED void pc_expect_stored_max(const char *what, uint64_t max)
{
	struct zswap_stats st;

	if (!pc_managed())
		return;
	for (int i = 0; i < 10000; i++) {
		pc_stats(&st);
		if (st.stored_pages <= max)
			return;
		pc_sleep_ms(1);
	}
	pc_fail("%s: stored_pages is %" PRIu64 ", expected at most %" PRIu64 " (entries of discarded memory kept)",
		what, st.stored_pages, max);
}

#endif
