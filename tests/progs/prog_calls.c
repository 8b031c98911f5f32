/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_calls.c - the engine's side of the interposed calls
 * (src/engine/calls.c) keeps the region table in step with the program's
 * mmap, munmap, mremap, madvise and mlock. The table is read through
 * zswap_stats (regions, managed_bytes); mappings the program never touched
 * raise no userfaultfd event, so only the interposed calls can tell the
 * table about them. Cases:
 *   map       a private anonymous read-write mapping of min_region or more
 *             is one region more; smaller ones, shared, read-only,
 *             executable, locked and grows-down mappings are none;
 *             MAP_FIXED over a managed mapping replaces it (no overlap);
 *   unmap     munmap of the middle splits the region in two, of the rest
 *             takes both out;
 *   remap     mremap moving and growing, shrinking in place, and with
 *             MREMAP_DONTUNMAP: the table follows the mapping, the data
 *             comes along;
 *   madvise   MADV_PAGEOUT stores the pages, MADV_WILLNEED brings them
 *             all back without a fault;
 *   mlock     a locked middle is never evicted while the rest is; after
 *             munlock it leaves the table (to be adopted afresh).
 * stdout: the data's checksums, the same with and without the library.
 * usage: prog_calls [CASE...]   (no CASE: all of them)
 */
#include "prog_common.h"

#define MIB PC_MIB

struct table {
	uint64_t regions, bytes;
};

static struct table table_now(void)
{
	struct zswap_stats st;

	pc_stats(&st);
	return (struct table){ st.regions, st.managed_bytes };
}

/* The table moved by exactly (dregions, dbytes) since before. */
static void expect_table(const char *what, struct table before, int64_t dregions, int64_t dbytes)
{
	if (!pc_managed())
		return;
	struct table now = table_now();
	int64_t r = (int64_t)(now.regions - before.regions), b = (int64_t)(now.bytes - before.bytes);

	PC_CHECK(r == dregions && b == dbytes,
		 "%s: the table moved by %" PRId64 " region(s) and %" PRId64 " KiB, expected %" PRId64 " and %" PRId64
		 " KiB", what, r, b / 1024, dregions, dbytes / 1024);
}

static void *map_kind(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags, -1, 0);

	PC_CHECK(p != MAP_FAILED, "mmap %zu prot %#x flags %#x: %s", len, prot, flags, strerror(errno));
	return p;
}

static void case_map(void)
{
	static const struct {
		const char *what;
		size_t len;
		int prot, flags;
	} none[] = {
		{ "64 KiB (under ZSWAP_MIN_REGION)", 64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS },
		{ "MAP_SHARED", MIB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS },
		{ "PROT_READ", MIB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS },
		{ "PROT_EXEC", MIB, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS },
		{ "MAP_LOCKED", MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED },
		{ "MAP_GROWSDOWN", MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN },
	};
	struct table t = table_now();
	char *p = pc_map(MIB);

	expect_table("map 1 MiB", t, 1, MIB);
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		struct table u = table_now();
		void *q = map_kind(none[i].len, none[i].prot, none[i].flags);
		expect_table(none[i].what, u, 0, 0);
		PC_CHECK(munmap(q, none[i].len) == 0, "munmap: %s", strerror(errno));
		expect_table(none[i].what, u, 0, 0);
	}
	pc_fill_range(p, MIB / PC_PAGE, PC_TEXT, 1);
	struct table u = table_now();
	char *q = mmap(p, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	PC_CHECK(q == p, "mmap MAP_FIXED: %s", strerror(errno));
	expect_table("MAP_FIXED over a managed mapping", u, 0, 0);
	pc_expect_zero("MAP_FIXED over a managed mapping", p, MIB / PC_PAGE);
	PC_CHECK(munmap(p, MIB) == 0, "munmap: %s", strerror(errno));
	expect_table("map, then unmap", t, 0, 0);
	printf("map: ok\n");
}

static void case_unmap(void)
{
	struct table t = table_now();
	char *p = pc_map(4 * MIB);

	pc_fill_range(p, 4 * MIB / PC_PAGE, PC_TEXT, 2);
	PC_CHECK(munmap(p + MIB, MIB) == 0, "munmap: %s", strerror(errno));
	expect_table("munmap of the middle", t, 2, 3 * MIB);
	pc_expect_range("unmap head", p, MIB / PC_PAGE, PC_TEXT, 2);
	printf("unmap: tail %016" PRIx64 "\n", pc_sum(p + 2 * MIB, 2 * MIB));
	PC_CHECK(munmap(p, 4 * MIB) == 0, "munmap: %s", strerror(errno));
	expect_table("munmap of the rest", t, 0, 0);
}

static void case_remap(void)
{
	struct table t = table_now();
	char *p = pc_map(MIB);

	pc_fill_range(p, MIB / PC_PAGE, PC_BINARY, 3);
	char *q = mremap(p, MIB, 2 * MIB, MREMAP_MAYMOVE);
	PC_CHECK(q != MAP_FAILED, "mremap grow: %s", strerror(errno));
	expect_table("mremap growing", t, 1, 2 * MIB);
	pc_expect_range("mremap growing", q, MIB / PC_PAGE, PC_BINARY, 3);
	pc_expect_zero("mremap growing, the new part", q + MIB, MIB / PC_PAGE);

	char *r = mremap(q, 2 * MIB, MIB / 2, 0);
	PC_CHECK(r == q, "mremap shrink: %s", strerror(errno));
	expect_table("mremap shrinking", t, 1, MIB / 2);

	char *s = mremap(r, MIB / 2, MIB / 2, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
	PC_CHECK(s != MAP_FAILED, "mremap MREMAP_DONTUNMAP: %s", strerror(errno));
	/* Both ranges stay mapped; 512 KiB is over the default min_region. */
	expect_table("mremap MREMAP_DONTUNMAP", t, 2, MIB);
	pc_expect_range("mremap MREMAP_DONTUNMAP", s, MIB / 2 / PC_PAGE, PC_BINARY, 3);
	pc_expect_zero("mremap MREMAP_DONTUNMAP, the old range", r, MIB / 2 / PC_PAGE);
	printf("remap: %016" PRIx64 "\n", pc_sum(s, MIB / 2));
	PC_CHECK(munmap(r, MIB / 2) == 0 && munmap(s, MIB / 2) == 0, "munmap: %s", strerror(errno));
	expect_table("mremap, then munmap", t, 0, 0);
}

static void case_madvise(void)
{
	size_t n = 2 * MIB / PC_PAGE;
	char *p = pc_map(2 * MIB);
	struct zswap_stats a, b;

	pc_fill_range(p, n, PC_TEXT, 4);
	size_t out = pc_evict("MADV_PAGEOUT", p, n, false);
	PC_CHECK(!pc_managed() || out == n, "MADV_PAGEOUT: %zu of %zu pages stored", out, n);
	pc_stats(&a);
	PC_CHECK(madvise(p, 2 * MIB, MADV_WILLNEED) == 0, "MADV_WILLNEED: %s", strerror(errno));
	pc_stats(&b);
	if (pc_managed()) {
		PC_CHECK(b.zswpin - a.zswpin == n, "MADV_WILLNEED: %" PRIu64 " of %zu pages loaded",
			 b.zswpin - a.zswpin, n);
		PC_CHECK(pc_count_present(p, n) == n, "MADV_WILLNEED: %zu of %zu pages present",
			 pc_count_present(p, n), n);
		PC_CHECK(b.faults == a.faults, "MADV_WILLNEED: %" PRIu64 " fault(s) taken", b.faults - a.faults);
	}
	pc_expect_range("MADV_WILLNEED", p, n, PC_TEXT, 4);
	printf("madvise: %016" PRIx64 "\n", pc_sum(p, 2 * MIB));
	PC_CHECK(munmap(p, 2 * MIB) == 0, "munmap: %s", strerror(errno));
}

static void case_mlock(void)
{
	size_t n = 3 * MIB / PC_PAGE;
	struct table t = table_now();
	char *p = pc_map(3 * MIB);

	pc_fill_range(p, n, PC_TEXT, 5);
	if (mlock(p + MIB, MIB) != 0) {
		printf("mlock: %s\n", strerror(errno));
		PC_CHECK(munmap(p, 3 * MIB) == 0, "munmap: %s", strerror(errno));
		return;
	}
	expect_table("mlock of the middle", t, 3, 3 * MIB);
	/* The kernel refuses MADV_PAGEOUT over locked memory (EINVAL): the
	 * answer is printed, the same with the library. */
	int rc = pc_pageout(p, 3 * MIB);
	printf("mlock: MADV_PAGEOUT %s\n", rc == 0 ? "ok" : strerror(errno));
	if (pc_managed()) {
		PC_CHECK(pc_count_present(p + MIB, MIB / PC_PAGE) == MIB / PC_PAGE,
			 "the locked middle was evicted (%zu of %zu pages present)",
			 pc_count_present(p + MIB, MIB / PC_PAGE), MIB / PC_PAGE);
		PC_CHECK(pc_count_present(p, MIB / PC_PAGE) == 0 && pc_count_present(p + 2 * MIB, MIB / PC_PAGE) == 0,
			 "the unlocked head and tail were not evicted");
	}
	PC_CHECK(munlock(p + MIB, MIB) == 0, "munlock: %s", strerror(errno));
	expect_table("munlock", t, 2, 2 * MIB);
	pc_expect_range("mlock", p, n, PC_TEXT, 5);
	printf("mlock: %016" PRIx64 "\n", pc_sum(p, 3 * MIB));
	PC_CHECK(munmap(p, 3 * MIB) == 0, "munmap: %s", strerror(errno));
	expect_table("mlock, then munmap", t, 0, 0);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "map", case_map },
	{ "unmap", case_unmap },
	{ "remap", case_remap },
	{ "madvise", case_madvise },
	{ "mlock", case_mlock },
};

int main(int argc, char **argv)
{
	pc_init("prog_calls", &argc, argv);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool run = argc == 1;
		for (int k = 1; k < argc; k++)
			run |= strcmp(argv[k], cases[i].name) == 0;
		if (run) {
			cases[i].fn();
			fflush(stdout);
		}
	}
	return 0;
}
