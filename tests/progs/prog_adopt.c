/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_adopt.c - adopting a program mapping the kernel merged with library
 * memory.
 *
 * The library maps all its memory MAP_NORESERVE so that the kernel never
 * merges it with program mappings; glibc maps its arenas MAP_NORESERVE too,
 * and such a mapping placed right beside a library mapping becomes one VMA
 * with it. Eviction of memory no interposed mmap saw adopts the VMA from
 * /proc/self/maps: it must take the program's part and only that (evicting
 * the library's own memory would hang the fault handler), and it must not
 * give up on the program's part either.
 *
 * The program finds library mappings in /proc/self/smaps (anonymous,
 * rw-p, VmFlags "nr", not registered with userfaultfd: in a process that has
 * mapped nothing MAP_NORESERVE itself, they are the library's), maps 64
 * pages MAP_NORESERVE with a raw mmap (as glibc does: the interposer never
 * sees it) right beside one, checks that the kernel merged them, then:
 *   below   the mapping lies below the library mapping ([program][library]):
 *           zswap_pageout() of the program's range evicts all of it;
 *   whole   the same layout, and eviction is asked for the whole merged VMA:
 *           the program's part is evicted, the library's passed over;
 *   above   the mapping lies above it ([library][program]) and eviction is
 *           asked for the whole merged VMA, starting in library memory: the
 *           library part is passed over, the program's part evicted. There
 *           is rarely room right above a library mapping (they are mapped
 *           top-down, one below the other): when there is none the case says
 *           so and is not run.
 * An eviction of a mapping of its own first: the library registers its
 * staging areas at its first one. Each time: the program's pages come back intact, the program's part is now
 * registered with userfaultfd (VmFlags "um") and the library's is not.
 * below and whole must run (there is room below the lowest mapping): if they
 * cannot, the program skips (77) saying why.
 *
 * Run with ZSWAP_MIN_REGION=64K (the gaps beside library mappings are small).
 * usage: prog_adopt below|whole|above...
 */
#include "prog_common.h"

#include <sys/syscall.h>

#define AD_PAGES 64UL
#define AD_LEN (AD_PAGES * PC_PAGE)
#define AD_MAX_VMAS 4096

struct ad_vma {
	uintptr_t start, end;
	bool anon_rw, nr, uffd;
};

static struct ad_vma vmas[AD_MAX_VMAS];
static size_t nvmas;

/* Read /proc/self/smaps into vmas[]. */
static void ad_read_smaps(void)
{
	static char line[1024];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		pc_fail("open /proc/self/smaps: %s", strerror(errno));
	nvmas = 0;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t a, b;
		char perms[8] = "", path[512] = "";
		unsigned long long off;
		char dev[32];
		unsigned long inode;
		int n = sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %31s %lu %511s", &a, &b, perms, &off, dev,
			       &inode, path);
		if (n >= 6) {
			if (nvmas == AD_MAX_VMAS)
				pc_fail("more than %d mappings", AD_MAX_VMAS);
			struct ad_vma *v = &vmas[nvmas++];
			memset(v, 0, sizeof(*v));
			v->start = a;
			v->end = b;
			v->anon_rw = strcmp(perms, "rw-p") == 0 && inode == 0 && n == 6;
			continue;
		}
		if (nvmas && strncmp(line, "VmFlags:", 8) == 0) {
			struct ad_vma *v = &vmas[nvmas - 1];
			v->nr = strstr(line, " nr") != NULL;
			v->uffd = strstr(line, " um") != NULL || strstr(line, " uw") != NULL;
		}
	}
	fclose(f);
}

/* The mapping containing addr (after ad_read_smaps), or NULL. */
static const struct ad_vma *ad_vma_at(uintptr_t addr)
{
	for (size_t i = 0; i < nvmas; i++)
		if (vmas[i].start <= addr && addr < vmas[i].end)
			return &vmas[i];
	return NULL;
}

static char *ad_raw_map(uintptr_t at)
{
	long r = syscall(SYS_mmap, at, AD_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	return r == -1 || (uintptr_t)r != at ? NULL : (char *)r;
}

/*
 * Place AD_LEN bytes right below (above == false) or above a library
 * mapping so that the kernel merges them. Returns the program's mapping and
 * the library mapping's bounds, or NULL.
 */
static char *ad_place(bool above, uintptr_t *lib_start, uintptr_t *lib_end)
{
	static struct ad_vma cand[AD_MAX_VMAS];
	size_t nc = 0;

	ad_read_smaps();
	for (size_t i = 0; i < nvmas; i++)
		if (vmas[i].anon_rw && vmas[i].nr && !vmas[i].uffd)
			cand[nc++] = vmas[i];
	for (size_t i = 0; i < nc; i++) {
		uintptr_t at = above ? cand[i].end : cand[i].start - AD_LEN;
		char *p = ad_raw_map(at);
		if (!p)
			continue;	/* no room there */
		ad_read_smaps();
		const struct ad_vma *v = ad_vma_at(at);
		if (v && v->start <= cand[i].start && v->end >= cand[i].end && v->start <= at && v->end >= at + AD_LEN) {
			*lib_start = cand[i].start;
			*lib_end = cand[i].end;
			pc_info("%s: 64 pages at %p merged with library memory %p-%p into one VMA %p-%p",
				above ? "above" : "below", (void *)p, (void *)cand[i].start, (void *)cand[i].end,
				(void *)v->start, (void *)v->end);
			return p;
		}
		syscall(SYS_munmap, p, AD_LEN);
	}
	return NULL;
}

/* The program's part is registered with userfaultfd, the library's is not. */
static void ad_expect_split(const char *what, const char *p, uintptr_t lib_start, uintptr_t lib_end)
{
	ad_read_smaps();
	for (size_t i = 0; i < nvmas; i++) {
		const struct ad_vma *v = &vmas[i];
		if (v->end <= lib_start || v->start >= lib_end)
			continue;
		PC_CHECK(!v->uffd, "%s: library memory %p-%p was registered with userfaultfd", what, (void *)v->start,
			 (void *)v->end);
	}
	const struct ad_vma *v = ad_vma_at((uintptr_t)p);
	PC_CHECK(v && v->uffd, "%s: the program's mapping %p was not registered with userfaultfd", what, (const void *)p);
	PC_CHECK(v->start >= (uintptr_t)p && v->end <= (uintptr_t)p + AD_LEN,
		 "%s: the registered VMA %p-%p reaches beyond the program's mapping %p-%p", what, (void *)v->start,
		 (void *)v->end, (const void *)p, (const void *)(p + AD_LEN));
}

enum { AD_BELOW, AD_WHOLE, AD_ABOVE };

static bool ad_case(int kind)
{
	static const char *const names[] = { "below", "whole", "above" };
	const char *name = names[kind];
	bool above = kind == AD_ABOVE;
	uintptr_t ls, le;
	struct zswap_stats a, b;
	char *p = ad_place(above, &ls, &le);

	if (!p) {
		pc_info("%s: no room for a mapping %s a library mapping: case not run", name, name);
		return false;
	}
	uint64_t seed = 30 + (uint64_t)kind;
	pc_fill_range(p, AD_PAGES, PC_TEXT, seed);
	pc_stats(&a);
	/* The whole merged VMA (the library part must be passed over, ours
	 * taken), or just the program's mapping. */
	void *from = kind == AD_ABOVE ? (void *)ls : p;
	size_t len = kind == AD_BELOW ? AD_LEN : kind == AD_WHOLE ? le - (uintptr_t)p : (uintptr_t)p + AD_LEN - ls;
	if (pc.pageout(from, len) != 0)
		pc_fail("%s: zswap_pageout: %s", name, strerror(errno));
	pc_stats(&b);
	size_t left = pc_count_resident(p, AD_PAGES);
	PC_CHECK(left == 0, "%s: %zu of %lu pages of the merged mapping still resident: it was not adopted "
		 "(evicted_pages +%" PRIu64 ", evict_skipped_pages +%" PRIu64 ")", name, left, AD_PAGES,
		 b.evicted_pages - a.evicted_pages, b.evict_skipped_pages - a.evict_skipped_pages);
	PC_CHECK(b.evicted_pages - a.evicted_pages == AD_PAGES, "%s: evicted_pages grew by %" PRIu64 ", expected %lu",
		 name, b.evicted_pages - a.evicted_pages, AD_PAGES);
	ad_expect_split(name, p, ls, le);
	pc_expect_range(name, p, AD_PAGES, PC_TEXT, seed);
	/* Managed like any other mapping from now on. */
	pc_evict(name, p, AD_PAGES, true);
	pc_expect_range(name, p, AD_PAGES, PC_TEXT, seed);
	if (syscall(SYS_munmap, p, AD_LEN) != 0)
		pc_fail("munmap: %s", strerror(errno));
	pc_expect_stored(name, 0);
	return true;
}

int main(int argc, char **argv)
{
	int ran = 0, need = 0;

	pc_init("prog_adopt", &argc, argv);
	if (!pc_managed())
		pc_skip("needs the library active (mode %s)", pc_mode_name());
	if (argc < 2)
		pc_fail("usage: prog_adopt below|whole|above...");
	/* The library registers its staging areas (its own memory, beside
	 * which a mapping could be placed) at its first eviction: one first,
	 * so that only memory it never registers is taken for the library's. */
	char *warm = pc_map(AD_LEN);
	pc_fill_range(warm, AD_PAGES, PC_TEXT, 29);
	pc_evict("warm-up", warm, AD_PAGES, true);
	pc_expect_range("warm-up", warm, AD_PAGES, PC_TEXT, 29);
	if (munmap(warm, AD_LEN) != 0)
		pc_fail("munmap: %s", strerror(errno));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "below") == 0) {
			need++;
			ran += ad_case(AD_BELOW);
		} else if (strcmp(argv[i], "whole") == 0) {
			need++;
			ran += ad_case(AD_WHOLE);
		} else if (strcmp(argv[i], "above") == 0) {
			ad_case(AD_ABOVE);
		} else {
			pc_fail("unknown case %s", argv[i]);
		}
	}
	if (ran < need)
		pc_skip("no mapping could be placed right below library memory");
	printf("adopt ok\n");
	return 0;
}
