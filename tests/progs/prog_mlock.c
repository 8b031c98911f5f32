/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_mlock.c - mlock'ed memory is never evicted.
 *
 * Cases:
 *   mlock      half of a mapping locked: eviction requests leave every locked
 *              page in place; the unlocked half can be evicted on its own;
 *              mlock of an evicted range brings it back (mlock populates)
 *              intact; after munlock the range is evictable again;
 *   onfault    mlock2(MLOCK_ONFAULT): pages become locked as they are
 *              touched, and locked pages are never evicted;
 *   mlockall   mlockall(MCL_CURRENT | MCL_FUTURE), bounded by RLIMIT_MEMLOCK
 *              (see bound_locking): it must succeed as it does without the
 *              library; nothing is evicted, a mapping made afterwards
 *              included; after munlockall eviction works again;
 *   mlockall-onfault  the same with MCL_ONFAULT (nothing is populated, so
 *              no bound is needed): pages lock as they are touched.
 *   keylock    under the library with the second tier: its key's page
 *              (VmFlags "dd", writable) is locked, and still is after the
 *              program's munlockall; without the library nothing to see.
 * The answers of madvise(MADV_PAGEOUT) over locked memory are printed: the
 * same with and without the library (the kernel refuses locked ranges).
 *
 * usage: prog_mlock [--inactive-ok] CASE...
 */
#include "prog_common.h"

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

#define NPAGES 2048UL
#define LEN (NPAGES * PC_PAGE)

static void report(const char *what, int rc, int err)
{
	printf("%s: %d %s\n", what, rc, rc ? strerrorname_np(err) : "");
}

/* Ask for eviction over a range that holds locked pages; assert nothing
 * locked left and at most `unlocked` pages were evicted. */
static void pageout_locked(const char *what, char *p, size_t npages, size_t locked_first, size_t nlocked,
			   bool use_api)
{
	struct zswap_stats a, b;

	pc_stats(&a);
	errno = 0;
	int rc = use_api ? pc_pageout_api(p, npages * PC_PAGE) : pc_pageout(p, npages * PC_PAGE);
	int err = errno;
	pc_stats(&b);
	if (!use_api)
		report(what, rc, err);
	else
		pc_info("%s: zswap_pageout returned %d (errno %d)", what, rc, err);
	if (pc_managed()) {
		size_t present = pc_count_present(p + locked_first * PC_PAGE, nlocked);
		PC_CHECK(present == nlocked, "%s: %zu of %zu locked pages were evicted", what, nlocked - present, nlocked);
		PC_CHECK(b.evicted_pages - a.evicted_pages <= npages - nlocked,
			 "%s: evicted_pages grew by %" PRIu64 ", but only %zu pages are unlocked", what,
			 b.evicted_pages - a.evicted_pages, npages - nlocked);
	}
}

static void case_mlock(void)
{
	char *p = pc_map(LEN);
	size_t half = NPAGES / 2;

	pc_fill_range(p, NPAGES, PC_TEXT, 1);
	if (mlock(p + half * PC_PAGE, half * PC_PAGE) != 0)
		pc_fail("mlock: %s", strerror(errno));
	pageout_locked("MADV_PAGEOUT over a half-locked range", p, NPAGES, half, half, false);
	pageout_locked("zswap_pageout over a half-locked range", p, NPAGES, half, half, true);
	pageout_locked("MADV_PAGEOUT over the locked half", p + half * PC_PAGE, half, 0, half, false);
	pc_expect_range("mlock: the whole range", p, NPAGES, PC_TEXT, 1);
	/* The unlocked half alone is ordinary managed memory. */
	size_t ev = pc_evict("mlock: the unlocked half", p, half, false);
	if (pc_managed())
		PC_CHECK(ev == half, "mlock: evicted %zu of the %zu unlocked pages", ev, half);
	pc_expect_range("mlock: the whole range after evicting the unlocked half", p, NPAGES, PC_TEXT, 1);

	/* mlock of evicted memory populates it: back, intact, locked. */
	pc_evict("mlock: the unlocked half again", p, half, false);
	if (mlock(p, half * PC_PAGE) != 0)
		pc_fail("mlock of an evicted range: %s", strerror(errno));
	if (pc_managed())
		PC_CHECK(pc_count_present(p, NPAGES) == NPAGES, "mlock did not bring the evicted pages back");
	pc_expect_stored("mlock of an evicted range", 0);
	pc_expect_range("mlock: after locking evicted pages", p, NPAGES, PC_TEXT, 1);
	pageout_locked("MADV_PAGEOUT over a locked range", p, NPAGES, 0, NPAGES, false);

	/* After munlock: evictable again. */
	if (munlock(p, LEN) != 0)
		pc_fail("munlock: %s", strerror(errno));
	ev = pc_evict("mlock: after munlock", p, NPAGES, false);
	if (pc_managed())
		PC_CHECK(ev == NPAGES, "after munlock only %zu of %zu pages were evicted", ev, NPAGES);
	pc_expect_range("mlock: after munlock", p, NPAGES, PC_TEXT, 1);
	munmap(p, LEN);
}

static void case_onfault(void)
{
	char *p = pc_map(LEN);
	size_t half = NPAGES / 2;

	pc_fill_range(p, half, PC_BINARY, 2);	/* the first half is populated */
	if (syscall(SYS_mlock2, p, LEN, MLOCK_ONFAULT) != 0)
		pc_fail("mlock2(MLOCK_ONFAULT): %s", strerror(errno));
	pageout_locked("MADV_PAGEOUT over an MLOCK_ONFAULT range", p, NPAGES, 0, half, false);
	pc_fill_range(p + half * PC_PAGE, half, PC_BINARY, 3);	/* faults lock the rest */
	pageout_locked("MADV_PAGEOUT over an MLOCK_ONFAULT range, all touched", p, NPAGES, 0, NPAGES, false);
	pc_expect_range("onfault: first half", p, half, PC_BINARY, 2);
	pc_expect_range("onfault: second half", p + half * PC_PAGE, half, PC_BINARY, 3);
	munlock(p, LEN);
	munmap(p, LEN);
}

/*
 * mlockall populates and pins every mapping of the process; a library that
 * reserves large ranges would have them all made resident (this test once
 * had the OOM killer take 24 GiB). So the lock is bounded: RLIMIT_MEMLOCK at
 * most 256 MiB (or lower if the hard limit is lower) and CAP_IPC_LOCK
 * dropped, so the kernel enforces the limit for mlockall (on the whole
 * address space) and for every later mapping. Returns the limit.
 */
static size_t bound_locking(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
		pc_fail("getrlimit: %s", strerror(errno));
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 256 * PC_MIB)
		rl.rlim_max = 256 * PC_MIB;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0)
		pc_fail("setrlimit RLIMIT_MEMLOCK: %s", strerror(errno));
	if (geteuid() == 0) {
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct data[2];
		if (syscall(SYS_capget, &hdr, data) != 0)
			pc_fail("capget: %s", strerror(errno));
		data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
		data[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
		data[CAP_IPC_LOCK / 32].inheritable &= ~(1u << (CAP_IPC_LOCK % 32));
		if (syscall(SYS_capset, &hdr, data) != 0)
			pc_fail("capset (dropping CAP_IPC_LOCK): %s", strerror(errno));
	}
	return rl.rlim_cur;
}

static long vm_size_mb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb / 1024;
}

/* mlockall(MCL_CURRENT | MCL_FUTURE [| MCL_ONFAULT]) over mappings of
 * npages each (small enough for the bounded lock limit). */
static void case_mlockall(bool onfault, size_t npages)
{
	size_t len = npages * PC_PAGE;
	char *p = pc_map(len);
	int flags = MCL_CURRENT | MCL_FUTURE | (onfault ? MCL_ONFAULT : 0);
	char what[160];

	pc_fill_range(p, npages, PC_TEXT, 4);
	if (!onfault) {
		size_t limit = bound_locking();
		pc_info("mlockall: RLIMIT_MEMLOCK %zu KiB, VmSize %ld MiB", limit >> 10, vm_size_mb());
	}
	errno = 0;
	int rc = mlockall(flags);
	report(onfault ? "mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)" : "mlockall(MCL_CURRENT | MCL_FUTURE)", rc, errno);
	if (rc != 0)
		pc_fail("mlockall failed: %s (VmSize of the process: %ld MiB; RLIMIT_MEMLOCK bounds the whole address space"
			" for MCL_CURRENT)", strerror(errno), vm_size_mb());
	snprintf(what, sizeof(what), "MADV_PAGEOUT after mlockall%s", onfault ? " (MCL_ONFAULT)" : "");
	pageout_locked(what, p, npages, 0, npages, false);
	errno = 0;
	/* Half size: with MCL_FUTURE it counts against RLIMIT_MEMLOCK on top of
	 * everything mapped, every shared library included (8 MiB by default). */
	size_t qn = npages / 2, qlen = qn * PC_PAGE;
	char *q = mmap(NULL, qlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	report("mmap after mlockall(MCL_FUTURE)", q == MAP_FAILED ? -1 : 0, errno);
	if (q == MAP_FAILED)
		pc_fail("mmap after mlockall: %s", strerror(errno));
	pc_fill_range(q, qn, PC_TEXT, 5);	/* MCL_FUTURE: locked */
	pageout_locked("MADV_PAGEOUT of a mapping made after mlockall", q, qn, 0, qn, false);
	pageout_locked("zswap_pageout of a mapping made after mlockall", q, qn, 0, qn, true);
	pc_expect_range("mlockall: old mapping", p, npages, PC_TEXT, 4);
	pc_expect_range("mlockall: new mapping", q, qn, PC_TEXT, 5);
	if (munlockall() != 0)
		pc_fail("munlockall: %s", strerror(errno));
	size_t ev = pc_evict("after munlockall: old mapping", p, npages, false);
	if (pc_managed())
		PC_CHECK(ev == npages, "after munlockall %zu of %zu pages were evicted", ev, npages);
	pc_expect_range("after munlockall: old mapping", p, npages, PC_TEXT, 4);
	char *r = pc_map(len);	/* made after munlockall: managed as usual */
	pc_fill_range(r, npages, PC_TEXT, 6);
	ev = pc_evict("after munlockall: a new mapping", r, npages, false);
	if (pc_managed())
		PC_CHECK(ev == npages, "a mapping made after munlockall: %zu of %zu pages evicted", ev, npages);
	pc_expect_range("after munlockall: a new mapping", r, npages, PC_TEXT, 6);
	munmap(p, len);
	munmap(q, qlen);
	munmap(r, len);
}

/* Writable mappings left out of core dumps (the library's secrets), and
 * how many of those are locked. */
static void dontdump_maps(int *all, int *locked)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];

	*all = *locked = 0;
	if (!f)
		pc_fail("/proc/self/smaps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VmFlags:", 8) != 0 || !strstr(line, " dd") || !strstr(line, " wr"))
			continue;
		(*all)++;
		if (strstr(line, " lo"))
			(*locked)++;
	}
	fclose(f);
}

static void case_keylock(void)
{
	int all, locked;

	dontdump_maps(&all, &locked);
	if (!pc_managed())
		return;
	if (!all)
		pc_fail("keylock: no page out of core dumps: is the second tier on (ZSWAP_WRITEBACK=1)?");
	if (locked != all)
		pc_fail("keylock: %d of %d pages out of core dumps are locked", locked, all);
	if (munlockall() != 0)
		pc_fail("munlockall: %s", strerror(errno));
	dontdump_maps(&all, &locked);
	if (locked != all)
		pc_fail("keylock: after munlockall %d of %d pages out of core dumps are locked", locked, all);
}

int main(int argc, char **argv)
{
	struct rlimit rl;

	pc_init("prog_mlock", &argc, argv);
	pc_info("mode %s", pc_mode_name());
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 4 * LEN &&
	    geteuid() != 0)
		pc_skip("RLIMIT_MEMLOCK is %lu bytes and not root (CAP_IPC_LOCK)", (unsigned long)rl.rlim_cur);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "mlock") == 0)
			case_mlock();
		else if (strcmp(argv[i], "onfault") == 0)
			case_onfault();
		else if (strcmp(argv[i], "mlockall") == 0)
			case_mlockall(false, 512);	/* 2 MiB: within an 8 MiB lock limit */
		else if (strcmp(argv[i], "mlockall-onfault") == 0)
			case_mlockall(true, NPAGES);
		else if (strcmp(argv[i], "keylock") == 0)
			case_keylock();
		else
			pc_fail("unknown case %s", argv[i]);
		pc_expect_stored(argv[i], 0);
		printf("%s ok\n", argv[i]);
	}
	return 0;
}
