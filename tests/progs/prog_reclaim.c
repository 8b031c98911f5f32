/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_reclaim - a program with more data than its memory limit
 * (tests/engine/test_eng_reclaim*.sh run it under ZSWAP_MEMORY_LIMIT).
 *
 *   prog_reclaim fill MB          write MB of text-like pages in one pass, as
 *                                 fast as it can, then read them all back
 *   prog_reclaim random MB OPS    fill, then OPS uniformly random page
 *                                 accesses (half reads, half rewrites)
 *   prog_reclaim random-for MB SECS
 *                                 the same for SECS seconds (stdout then
 *                                 differs from run to run)
 *   prog_reclaim cycle MB SECS    fill, then pass after pass over every page
 *                                 in order (checked, then rewritten) for
 *                                 SECS seconds; reports the passes, refaults
 *                                 and activations ("cycle_...")
 *   prog_reclaim hotcold MB OPS   fill, then OPS accesses, 90% of them on a
 *                                 hot tenth of the pages (spread out);
 *                                 reports late_hot_misses: in the second
 *                                 half of the accesses, hot pages found
 *                                 absent (mincore) just before their access
 *   prog_reclaim idle MB SECS     fill, then sit idle until the library has
 *                                 stored half the pages (ZSWAP_COLD_AGE) or
 *                                 SECS seconds went by
 *   prog_reclaim idlehot MB SECS  fill, then rewrite the first quarter of
 *                                 the pages every 100 ms while the rest sits
 *                                 idle, until the library has stored half of
 *                                 the idle pages (ZSWAP_COLD_AGE) and SECS/4
 *                                 seconds went by, or SECS seconds did;
 *                                 reports hot_misses: hot pages found absent
 *                                 (mincore) just before their rewrite
 *   prog_reclaim hotstream MB PASSES
 *                                 a hot set (the first 64th of the pages)
 *                                 rewritten all the time, one random hot page
 *                                 after each cold page, while PASSES passes
 *                                 read the cold pages in order (the first
 *                                 writes them); reports hot_misses: hot
 *                                 pages found absent (mincore) just before
 *                                 their access, each a refault
 *   prog_reclaim cold MB CMB      MADV_COLD: write half A then half B of MB
 *                                 (B last: an LRU keeps B), madvise(B,
 *                                 MADV_COLD), then write CMB of fresh pages
 *                                 C; reports how many of B's pages and of
 *                                 A's (those resident before C) are still
 *                                 resident (mincore) after C, and fails
 *                                 unless B went before A (cold_case); MB
 *                                 must be well under the limit
 *   prog_reclaim cold-over MB CMB the same with MB over the limit
 *   prog_reclaim account MB       fill, wait 500 ms, then report the
 *                                 library's memory_current beside RssAnon,
 *                                 RssFile + RssShmem and VmPTE
 *                                 (/proc/self/status), its pool
 *                                 metadata and the slot arrays' size
 *   prog_reclaim shared MB SMB    write SMB of shared anonymous memory
 *                                 (MAP_SHARED, which the library never
 *                                 evicts), then fill, then 8 passes over
 *                                 every page in order as cycle's; reports
 *                                 shared_refaults: with SMB over the limit,
 *                                 evicting the pages the passes use makes
 *                                 no room, and each would come back
 *   prog_reclaim boost MB         fill while a thread samples the library's
 *                                 watermark_boost every millisecond, then
 *                                 wait (at most 3 s) for it to be 0 again;
 *                                 reports boost_peak, boost_end and the
 *                                 fill's allocstall
 *
 * Every access checks the page's bytes; at the end every page is checked
 * again. stdout is the same with and without the library (a checksum per
 * phase); stderr gets "prog_reclaim: vmhwm_kb=N" (peak RSS), for the limit
 * tests, and the library's counters as "prog_reclaim: stat NAME=VALUE";
 * the run's wall time as "prog_reclaim: run_us=N";
 * random, random-for and hotcold add the refaults, activations and pages scanned and
 * stolen during the accesses alone ("access_...").
 *
 * With PROG_DENY_VM_READV=1 in the environment the program first installs a
 * seccomp filter, on all its threads (the library's too), under which
 * process_vm_readv fails with EPERM, as a sandboxed program's does.
 */
#include "prog_common.h"

#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>

static size_t npages;
static unsigned char *mem;
static uint64_t run_t0;		/* CLOCK_MONOTONIC ns at the start of main */

static uint64_t pc_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static uint32_t *ver;		/* per page: how many times it was rewritten */
#define VER_FREED	UINT32_MAX	/* given back with MADV_DONTNEED: reads as zeros */

static uint64_t page_seed(size_t i)
{
	return pc_mix(((uint64_t)i << 20) ^ ver[i]);
}

/* A page of a service's log: timestamped lines with a few varying fields,
 * what a program keeps in memory as text (LZ4 stores it at about 4:1). */
static void page_fill(unsigned char *page, uint64_t seed)
{
	static const char *const lvl[] = { "INFO ", "INFO ", "INFO ", "INFO ", "INFO ", "INFO ", "DEBUG", "WARN " };
	static const char *const path[] = { "items", "users", "orders", "search", "cart", "login", "items", "items" };
	static const unsigned int size[] = { 512, 1024, 2048, 4096, 310, 87, 1536, 12288 };
	uint64_t rs = seed;
	unsigned int t = (unsigned int)(seed % 3600000);
	size_t off = 0;
	char line[160];

	while (off < PC_PAGE) {
		uint64_t r = pc_rand(&rs);
		t += (unsigned int)(r % 8);
		int n = snprintf(line, sizeof(line),
				 "2026-11-30 09:%02u:%02u.%03u %s worker-%u GET /api/v1/%s/%u status=%u bytes=%u\n",
				 t / 60000 % 60, t / 1000 % 60, t % 1000, lvl[(r >> 8) % 8],
				 (unsigned)((r >> 12) % 4), path[(r >> 16) % 8], (unsigned)((r >> 20) % 64),
				 (r >> 28) % 16 ? 200u : 404u, size[(r >> 32) % 8]);
		size_t k = (size_t)n < PC_PAGE - off ? (size_t)n : PC_PAGE - off;
		memcpy(page + off, line, k);
		off += k;
	}
}

static void page_write(size_t i)
{
	page_fill(mem + i * PC_PAGE, page_seed(i));
}

static void page_check(size_t i)
{
	static unsigned char want[PC_PAGE];

	if (ver[i] == VER_FREED)
		memset(want, 0, PC_PAGE);
	else
		page_fill(want, page_seed(i));
	if (memcmp(want, mem + i * PC_PAGE, PC_PAGE) != 0)
		pc_fail("page %zu (version %u) has the wrong contents", i, ver[i]);
}

static uint64_t check_all(void)
{
	uint64_t h = 0;

	for (size_t i = 0; i < npages; i++) {
		page_check(i);
		h = pc_mix(h ^ pc_sum(mem + i * PC_PAGE, PC_PAGE));
	}
	return h;
}

/* A "Name:  N kB" line of /proc/self/status, in kB, or -1. */
static long status_kb(const char *name)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strstr(buf, name);
	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

static long vmhwm_kb(void)
{
	return status_kb("VmHWM:");
}

/* The kernel's count of pages loaded from its zswap (for runs without the
 * library in a memory cgroup: the comparison in docs/DESIGN.md). */
static unsigned long long vmstat_zswpin(void)
{
	static char buf[16384];
	int fd = open("/proc/vmstat", O_RDONLY);
	long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strstr(buf, "\nzswpin ");
	return p ? strtoull(p + 8, NULL, 10) : 0;
}

/* Major faults of this process: swap-ins, zswap's loads included. */
static unsigned long long majflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (unsigned long long)ru.ru_majflt;
}

static unsigned long long lib_refaults(void)
{
	struct zswap_stats st;

	pc_stats(&st);
	return st.refaults;
}

static unsigned long long lib_activations(void)
{
	struct zswap_stats st;

	pc_stats(&st);
	return st.workingset_activate;
}

/* Pages reclaim looked at and took (pgscan, pgsteal) so far. */
static void lib_scan(unsigned long long *scan, unsigned long long *steal)
{
	struct zswap_stats st;

	pc_stats(&st);
	*scan = st.pgscan;
	*steal = st.pgsteal;
}

static void print_stats(void)
{
	struct zswap_stats st;

	pc_stats(&st);
	fprintf(stderr, "%s: vmhwm_kb=%ld\n", pc.name, vmhwm_kb());
	if (!pc_managed())
		return;
#define S(f) fprintf(stderr, "%s: stat " #f "=%llu\n", pc.name, (unsigned long long)st.f)
	S(memory_max); S(memory_current); S(pgscan); S(pgsteal); S(pgsteal_proactive);
	S(workingset_activate); S(allocstall); S(memory_events_max); S(reclaim_backoff);
	S(refaults); S(zero_fill_pages); S(stored_pages); S(pool_limit_hit); S(mem_used_total);
	S(evict_skipped_pages); S(pgactivate); S(pages_compacted); S(watermark_boost);
	S(memory_pressure_some_us); S(thrashing_windows);
#undef S
	fprintf(stderr, "%s: run_us=%llu\n", pc.name, (unsigned long long)((pc_now_ns() - run_t0) / 1000));
}

static bool page_resident(size_t i);
static unsigned long long late_hot, late_hot_misses;

/* Accesses stop at this time (pc_now_ns), if set: mode random-for. */
static uint64_t access_until;

/* Returns how many accesses were made. */
static unsigned long accesses(unsigned long ops, bool hotcold)
{
	uint64_t rs = 12345;
	size_t nhot = npages / 10 ? npages / 10 : 1;
	/* PROG_RECLAIM_HOT: share of accesses (in tenths) on the hot pages. */
	const char *e = getenv("PROG_RECLAIM_HOT");
	unsigned int hot = e ? (unsigned int)atoi(e) : 9;

	for (unsigned long k = 0; k < ops; k++) {
		if (access_until && !(k & 1023) && pc_now_ns() >= access_until)
			return k;
		uint64_t r = pc_rand(&rs);
		size_t i;
		if (hotcold && (r >> 32) % 10 < hot) {
			i = (size_t)((r % nhot) * 10 % npages);	/* hot: every tenth page */
			/* The fill evicted most hot pages; by the second half
			 * the policy has seen each refault and must keep them. */
			if (k >= ops / 2) {
				late_hot++;
				late_hot_misses += !page_resident(i);
			}
		} else
			i = (size_t)(r % npages);
		if ((r >> 20) & 1) {
			ver[i]++;
			page_write(i);
		} else {
			page_check(i);
		}
	}
	return ops;
}

/* Whether the kernel offers UFFD_FEATURE_WP_ASYNC (6.7): what written bits
 * need. Asked on a descriptor of our own; -1 if userfaultfd cannot open. */
static int kernel_wp_async(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	int r = ioctl(fd, UFFDIO_API, &api);
	close(fd);
	return r < 0 ? -1 : !!(api.features & UFFD_FEATURE_WP_ASYNC);
}

/* Whether page i is in memory (mincore: an evicted page is absent). */
static bool page_resident(size_t i)
{
	unsigned char v = 0;

	if (mincore(mem + i * PC_PAGE, PC_PAGE, &v) != 0)
		pc_fail("mincore: %s", strerror(errno));
	return v & 1;
}

/* hotstream: the hot set, written before the stream starts, then one random
 * hot page rewritten after each cold page the stream touches. A hot page is
 * rewritten every nhot cold pages on average: far more often than the clock
 * hand comes round (the stream evicts about one page per cold page, over a
 * resident set several times nhot). */
static void hotstream(unsigned long passes)
{
	size_t nhot = npages / 64 ? npages / 64 : 1;
	unsigned long long misses = 0, accesses = 0, r0 = lib_refaults(), sc0, st0, sc1, st1;
	uint64_t rs = 4242;
	struct zswap_stats a, b;

	pc_stats(&a);
	lib_scan(&sc0, &st0);
	for (unsigned long pass = 0; pass < passes; pass++) {
		for (size_t i = nhot; i < npages; i++) {
			if (pass == 0)
				page_write(i);
			else
				page_check(i);
			size_t h = (size_t)(pc_rand(&rs) % nhot);
			if (!page_resident(h))
				misses++;
			accesses++;
			ver[h]++;
			page_write(h);
		}
	}
	lib_scan(&sc1, &st1);
	pc_stats(&b);
	fprintf(stderr, "%s: kernel_wp_async=%d\n", pc.name, kernel_wp_async());
	fprintf(stderr, "%s: hot_pages=%zu hot_accesses=%llu hot_misses=%llu stream_refaults=%llu "
		"stream_pgscan=%llu stream_pgsteal=%llu stream_pgactivate=%llu\n", pc.name, nhot, accesses, misses,
		lib_refaults() - r0, sc1 - sc0, st1 - st0, (unsigned long long)(b.pgactivate - a.pgactivate));
}

/* idlehot: a hot quarter rewritten every 100 ms beside idle pages. The
 * cold-age pass takes pages not written since its last look; a hot page is
 * written between any two looks, so none should be found absent. */
static void idlehot(unsigned long secs)
{
	size_t nhot = npages / 4, idle = npages - nhot;
	unsigned long long misses = 0, rounds = 0;
	uint64_t t0 = pc_now_ns(), el;
	struct zswap_stats a, b;

	pc_stats(&a);
	b = a;
	do {
		for (size_t i = 0; i < nhot; i++) {
			if (!page_resident(i))
				misses++;
			ver[i]++;
			page_write(i);
		}
		rounds++;
		pc_sleep_ms(100);
		pc_stats(&b);
		el = (pc_now_ns() - t0) / 1000000000u;
	} while (pc_managed() && el < secs && (b.stored_pages < idle / 2 || el < secs / 4));
	fprintf(stderr, "%s: kernel_wp_async=%d\n", pc.name, kernel_wp_async());
	fprintf(stderr, "%s: hot_pages=%zu rounds=%llu hot_misses=%llu idle_stored=%llu of %zu pgactivate=%llu\n",
		pc.name, nhot, rounds, misses, (unsigned long long)b.stored_pages, idle,
		(unsigned long long)(b.pgactivate - a.pgactivate));
}

/* Resident pages among [from, from + n), and (mark) which they are. */
static size_t count_resident(size_t from, size_t n, bool *mark)
{
	size_t k = 0;

	for (size_t i = from; i < from + n; i++) {
		bool r = page_resident(i);
		if (mark)
			mark[i - from] = r;
		k += r;
	}
	return k;
}

/* Until the reclaimer is done (pgsteal still for 100 ms; at most 2 s): it
 * goes on down to its low watermark after the last held fault is let go. */
static void settle(void)
{
	struct zswap_stats st;
	uint64_t last;
	int still = 0;

	pc_stats(&st);
	last = st.pgsteal;
	for (int k = 0; k < 100 && still < 5; k++) {
		usleep(20000);
		pc_stats(&st);
		still = st.pgsteal == last ? still + 1 : 0;
		last = st.pgsteal;
	}
}

/*
 * cold, cold-over: MADV_COLD ("deactivate: a more probable reclaim target").
 * Pages are laid out A, B, C (C the last CMB MiB). A is written first, then
 * B, so an LRU would keep B; B is advised MADV_COLD; then C's first touches
 * push the charge over the limit. B must pay for C before what is resident
 * of A. cold: A + B fit under the limit (nothing reclaimed before C);
 * cold-over: A + B are over it (the fill's reclaim took A's first pages and
 * left the clock hand inside the working set).
 */
static struct cold_result {
	bool over;
	size_t na, nb, a0, b0, a1, b1;	/* pages of A, B; resident before C, after C */
} cold;

static void cold_case(bool over, size_t cpages)
{
	size_t ab = npages - cpages, na = ab / 2, nb = ab - na;
	bool *a_was = calloc(na, sizeof(*a_was));
	struct zswap_stats st;

	if (!a_was)
		pc_fail("calloc");
	pc_stats(&st);
	if (pc_managed())
		PC_CHECK(over ? ab * PC_PAGE > st.memory_max : ab * PC_PAGE < st.memory_max * 7 / 8,
			 "%s: A + B (%zu MiB) must be %s the limit (%" PRIu64 " MiB)", over ? "cold-over" : "cold",
			 ab * PC_PAGE >> 20, over ? "over" : "well under", st.memory_max >> 20);
	for (size_t i = 0; i < ab; i++)
		page_write(i);
	settle();
	size_t a0 = count_resident(0, na, a_was), b0 = count_resident(na, nb, NULL);
	if (madvise(mem + na * PC_PAGE, nb * PC_PAGE, MADV_COLD) != 0)
		pc_fail("madvise(MADV_COLD): %s", strerror(errno));
	for (size_t i = ab; i < npages; i++)
		page_write(i);
	settle();
	size_t a1 = 0, b1 = count_resident(na, nb, NULL);
	for (size_t i = 0; i < na; i++)
		a1 += a_was[i] && page_resident(i);
	free(a_was);
	printf("%s: wrote %zu + %zu pages, advised %zu cold, then %zu fresh\n", over ? "cold-over" : "cold", na, nb,
	       nb, cpages);
	if (!pc_managed())
		return;
	fprintf(stderr, "%s: cold_a=%zu cold_b=%zu cold_c=%zu before_c: a_resident=%zu b_resident=%zu after_c: "
		"a_resident=%zu (of those before) b_resident=%zu\n", pc.name, na, nb, cpages, a0, b0, a1, b1);
	cold = (struct cold_result){ over, na, nb, a0, b0, a1, b1 };
}

/* After every byte was checked: B must have gone before A. */
static void cold_judge(void)
{
	const char *what = cold.over ? "cold-over" : "cold";
	size_t na = cold.na, nb = cold.nb, a0 = cold.a0, b0 = cold.b0, a1 = cold.a1, b1 = cold.b1;

	if (!pc_managed())
		return;
	/*
	 * Measured under ZSWAP_MEMORY_LIMIT=64M (tests/engine/test_eng_reclaim_hotcold.sh):
	 * cold 48 28 (A, B 6144 pages each, C 7168): before C all of A and B
	 * resident; after it B 0-512 resident, A 6144 of 6144. The same
	 * without the madvise call: B 5120-5632, A 1200-1376 (the hand in
	 * address order takes A first). Bounds: B at most 40% of its pages,
	 * A at least 80% of those it had (and B mostly resident before C,
	 * A not empty: else the comparison says nothing).
	 * cold-over 80 24 (A, B 10240 pages each, C 6144): before C, A
	 * 3096-3810 resident, B 9269-9728; after it A all of those, B
	 * 331-1536. Before the clock visited the advised ranges first
	 * (src/reclaim/reclaim.c policy_cold_hint), A 0 and B 4542-5370: the hand
	 * took the unprotected pages it met in address order, A's first,
	 * and a cold page only when it reached it; and cold passed only
	 * because A's pages were written (the clock's referenced bit,
	 * UFFD_FEATURE_WP_ASYNC), failing the same way without it.
	 */
	PC_CHECK(b0 >= nb * 3 / 4 && a0 >= 256, "%s: before C, %zu of %zu B pages and %zu of %zu A pages resident: "
		 "the test needs B mostly resident and some of A", what, b0, nb, a0, na);
	PC_CHECK(b1 <= nb * 2 / 5 && a1 >= a0 * 4 / 5,
		 "%s: MADV_COLD pages were not reclaimed first: after C, %zu of %zu B (cold) pages resident "
		 "(at most %zu), %zu of the %zu A pages resident before (at least %zu)", what, b1, nb, nb * 2 / 5,
		 a1, a0, a0 * 4 / 5);
}

/*
 * frag: after the fill (most pages stored under the limit), give back a
 * pseudo-random half with MADV_DONTNEED, one page at a time: their objects
 * leave holes all over the pool's zspages. Check the freed pages read as
 * zeros, then write them again: the charge climbs back over the limit, and
 * reclaim should compact the pool (pages_compacted) before evicting more.
 * Every page is checked at the end, the moved objects' included.
 */
static void frag(void)
{
	size_t freed = 0;

	for (size_t i = 0; i < npages; i++) {
		if (!(pc_mix(i * 0x9e3779b97f4a7c15ull) & 1))
			continue;
		if (madvise(mem + i * PC_PAGE, PC_PAGE, MADV_DONTNEED) != 0)
			pc_fail("madvise(MADV_DONTNEED): %s", strerror(errno));
		ver[i] = VER_FREED;
		freed++;
	}
	for (size_t i = 0; i < npages; i++)
		if (ver[i] == VER_FREED)
			page_check(i);	/* zeros; the others stay where they are */
	struct zswap_stats st;
	pc_stats(&st);
	fprintf(stderr, "%s: frag_freed=%zu stored_pages=%llu mem_used_total=%llu compr_data_size=%llu\n", pc.name,
		freed, (unsigned long long)st.stored_pages, (unsigned long long)st.mem_used_total,
		(unsigned long long)st.compr_data_size);
	for (size_t i = 0; i < npages; i++)
		if (ver[i] == VER_FREED) {
			ver[i] = 1;
			page_write(i);
		}
	printf("freed and rewrote %zu pages\n", freed);
}

/* boost mode: the largest watermark_boost seen while the fill runs. */
static _Atomic bool boost_stop;
static _Atomic unsigned long long boost_peak;

static void *boost_sampler(void *arg)
{
	(void)arg;
	while (!atomic_load(&boost_stop)) {
		struct zswap_stats st;
		pc_stats(&st);
		if (st.watermark_boost > atomic_load(&boost_peak))
			atomic_store(&boost_peak, st.watermark_boost);
		usleep(1000);
	}
	return NULL;
}

/* PROG_DENY_VM_READV: process_vm_readv fails with EPERM on every thread. */
static void deny_vm_readv(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
		pc_fail("seccomp");
}

int main(int argc, char **argv)
{
	run_t0 = pc_now_ns();
	if (getenv("PROG_DENY_VM_READV"))
		deny_vm_readv();
	pc_init("prog_reclaim", &argc, argv);
	if (argc < 3)
		pc_fail("usage: prog_reclaim fill|random|random-for|hotcold|cycle|idle|idlehot|hotstream|cold|cold-over|frag|boost|account|shared MB [OPS|SECS|PASSES|CMB|SMB]");
	const char *mode = argv[1];
	size_t mb = strtoul(argv[2], NULL, 10);
	unsigned long arg = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;

	npages = mb * PC_MIB / PC_PAGE;
	bool is_cold = strcmp(mode, "cold") == 0 || strcmp(mode, "cold-over") == 0;
	if (is_cold)
		npages += arg * PC_MIB / PC_PAGE;	/* C after A and B */
	mem = pc_map(npages * PC_PAGE);
	ver = calloc(npages, sizeof(*ver));
	if (!ver)
		pc_fail("calloc");

	if (is_cold) {
		cold_case(mode[4] == '-', arg * PC_MIB / PC_PAGE);
		printf("checksum %016llx\n", (unsigned long long)check_all());
		print_stats();
		cold_judge();
		return 0;
	}
	if (strcmp(mode, "hotstream") == 0) {
		/* The hot set first; the stream's first pass writes the rest. */
		for (size_t i = 0; i < (npages / 64 ? npages / 64 : 1); i++)
			page_write(i);
		hotstream(arg);
		printf("%lu passes done\n", arg);
		printf("checksum %016llx\n", (unsigned long long)check_all());
		print_stats();
		return 0;
	}
	if (strcmp(mode, "shared") == 0) {
		size_t slen = arg * PC_MIB;
		unsigned char *shm = mmap(NULL, slen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (shm == MAP_FAILED)
			pc_fail("mmap shared: %s", strerror(errno));
		for (size_t off = 0; off < slen; off += PC_PAGE)
			memset(shm + off, (int)(off / PC_PAGE) | 1, PC_PAGE);
	}
	struct zswap_stats f0, f1;
	bool boost = strcmp(mode, "boost") == 0;
	pthread_t sampler;

	if (boost && pthread_create(&sampler, NULL, boost_sampler, NULL) != 0)
		pc_fail("pthread_create");
	pc_stats(&f0);
	for (size_t i = 0; i < npages; i++)
		page_write(i);
	pc_stats(&f1);
	if (boost) {
		atomic_store(&boost_stop, true);
		pthread_join(sampler, NULL);
	}
	printf("filled %zu pages\n", npages);
	/* The first touches alone (with a limit set, the region is registered
	 * at its mmap, so each one faults): test_eng_reclaim_limit.sh checks
	 * that the engine filled runs of pages per fault. */
	if (pc_managed())
		fprintf(stderr, "%s: fill_pages=%zu fill_faults=%llu fill_zero_fill_pages=%llu\n", pc.name, npages,
			(unsigned long long)(f1.faults - f0.faults),
			(unsigned long long)(f1.zero_fill_pages - f0.zero_fill_pages));

	bool timed = strcmp(mode, "random-for") == 0;
	if (strcmp(mode, "random") == 0 || strcmp(mode, "hotcold") == 0 || timed) {
		unsigned long long r0 = lib_refaults(), k0 = vmstat_zswpin(), a0 = lib_activations();
		unsigned long long m0 = majflt(), sc0, st0, sc1, st1;
		lib_scan(&sc0, &st0);
		if (timed)
			access_until = pc_now_ns() + (uint64_t)arg * 1000000000u;
		unsigned long done = accesses(timed ? ULONG_MAX : arg, mode[0] == 'h');
		lib_scan(&sc1, &st1);
		fprintf(stderr, "%s: access_refaults=%llu access_activations=%llu kernel_zswpin=%llu majflt=%llu\n",
			pc.name, lib_refaults() - r0, lib_activations() - a0, vmstat_zswpin() - k0,
			majflt() - m0);
		fprintf(stderr, "%s: access_pgscan=%llu access_pgsteal=%llu\n", pc.name, sc1 - sc0, st1 - st0);
		if (mode[0] == 'h')
			fprintf(stderr, "%s: late_hot=%llu late_hot_misses=%llu\n", pc.name, late_hot,
				late_hot_misses);
		printf("%lu accesses done\n", done);
	} else if (strcmp(mode, "cycle") == 0) {
		/* Pass after pass over every page in order, each checked then
		 * written anew, for SECS seconds: a working set a little larger
		 * than the limit thrashes (each page evicted shortly before it
		 * comes round again), one several times larger is a scan. */
		unsigned long long r0 = lib_refaults(), a0 = lib_activations();
		uint64_t end = pc_now_ns() + (uint64_t)arg * 1000000000u;
		unsigned long passes = 0;
		while (pc_now_ns() < end) {
			for (size_t i = 0; i < npages; i++) {
				page_check(i);
				ver[i]++;
				page_write(i);
			}
			passes++;
		}
		fprintf(stderr, "%s: cycle_passes=%lu cycle_refaults=%llu cycle_activations=%llu\n", pc.name, passes,
			lib_refaults() - r0, lib_activations() - a0);
	} else if (strcmp(mode, "shared") == 0) {
		unsigned long long r0 = lib_refaults();
		for (int pass = 0; pass < 8; pass++) {
			for (size_t i = 0; i < npages; i++) {
				page_check(i);
				ver[i]++;
				page_write(i);
			}
		}
		fprintf(stderr, "%s: stat shared_refaults=%llu\n", pc.name, lib_refaults() - r0);
		/* The library says why the limit cannot hold once the charge
		 * has stayed over it for a second (reclaim.c,
		 * RECLAIM_STUCK_SAY_MS): the passes may take less. Stay over
		 * it three seconds, for the reclaimer to look again. */
		pc_sleep_ms(3000);
	} else if (strcmp(mode, "idle") == 0) {
		/* Wait (bounded) for proactive reclaim to store half the pages. */
		struct zswap_stats st;
		unsigned long waited_ms = 0;
		pc_stats(&st);
		while (pc_managed() && st.stored_pages < npages / 2 && waited_ms < arg * 1000) {
			usleep(100000);
			waited_ms += 100;
			pc_stats(&st);
		}
		fprintf(stderr, "%s: idle_stored=%llu of %zu after %lu ms\n", pc.name,
			(unsigned long long)st.stored_pages, npages, waited_ms);
	} else if (strcmp(mode, "idlehot") == 0) {
		idlehot(arg);
	} else if (strcmp(mode, "frag") == 0) {
		frag();
	} else if (boost) {
		/* Calm now: the boost must go back to 0 on its own. */
		struct zswap_stats st;
		unsigned long waited_ms = 0;
		pc_stats(&st);
		while (pc_managed() && st.watermark_boost && waited_ms < 3000) {
			usleep(10000);
			waited_ms += 10;
			pc_stats(&st);
		}
		fprintf(stderr, "%s: boost_peak=%llu boost_end=%llu fill_allocstall=%llu after %lu ms\n", pc.name,
			atomic_load(&boost_peak), (unsigned long long)st.watermark_boost,
			(unsigned long long)(f1.allocstall - f0.allocstall), waited_ms);
	} else if (strcmp(mode, "account") == 0) {
		/* Calm after the fill: reclaim has stopped and the library's
		 * accounting (every 100 ms) is fresh. What it charges, and
		 * what the kernel says it would: test_eng_reclaim_limit.sh
		 * compares them. */
		struct zswap_stats st;
		pc_sleep_ms(500);
		long anon = status_kb("RssAnon:"), pte = status_kb("VmPTE:");
		long file = status_kb("RssFile:") + status_kb("RssShmem:");
		pc_stats(&st);
		if (pc_managed())
			fprintf(stderr, "%s: account rss_anon_kb=%ld rss_file_kb=%ld vm_pte_kb=%ld memory_current_kb=%llu"
				" pool_metadata_kb=%llu slots_kb=%zu file_mapped_kb=%llu\n", pc.name, anon, file, pte,
				(unsigned long long)(st.memory_current >> 10),
				(unsigned long long)(st.pool_metadata_bytes >> 10), npages * 16 / 1024,
				(unsigned long long)(st.file_mapped >> 10));
	} else if (strcmp(mode, "fill") != 0) {
		pc_fail("unknown mode %s", mode);
	}
	printf("checksum %016llx\n", (unsigned long long)check_all());
	print_stats();
	return 0;
}
