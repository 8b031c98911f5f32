/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_writeback.c - more data than a memory limit holds even compressed
 * (tests/engine/test_eng_writeback.sh runs it under ZSWAP_MEMORY_LIMIT).
 *
 *   prog_writeback fill MB text|random
 *       write MB of pages of that kind, read every page back, then rewrite
 *       and check a pseudo-random tenth of them; random pages do not
 *       compress at all, text about 1.8 to 1
 *   prog_writeback fork MB
 *       fill MB of random pages, wait (at most 20 s) until the library has
 *       written some back, fork: the child and the parent each check every
 *       page, rewrite their own half with their own seed and check all
 *       again; the parent checks once more after the child exited, and
 *       reports the tier's file on disk against what is live once the
 *       slots kept for the child are freed
 *   prog_writeback threads MB
 *       fill MB, even pages text (they stay in the pool) and odd pages
 *       random (the tier's), then four threads check every page at once,
 *       each from its own starting point, three rounds
 *   prog_writeback pool MB
 *       fill MB of text pages and page them all out (MADV_PAGEOUT) twice,
 *       3 s apart, against a pool bounded by ZSWAP_MAX_POOL_SIZE: what the
 *       pool refuses stays resident, and writeback makes room meanwhile;
 *       then check every page
 *   prog_writeback swapcache MB
 *       fill MB of random pages, then four rounds: read every page back
 *       (from the tier, where the library keeps each one's slot while the
 *       page stays unchanged), change a third of them (8 bytes each, by a
 *       store, by read() from a pipe, or at the page's last bytes) and
 *       let the rest stay clean, so that cycling through the area evicts
 *       clean pages to the slots they kept and changed ones anew; the
 *       area is moved (mremap) before the third round and a range of it
 *       discarded (MADV_DONTNEED: reads as zeros) before the last; every
 *       page checked each round; then unmapped, and the tier's pages and
 *       kept slots left reported ("stat bd_count_after_unmap",
 *       "stat swap_cached_after_unmap": both 0 when nothing leaked)
 *   prog_writeback corrupt MB DIR
 *       fill MB of random pages, wait until the tier stops growing, create
 *       DIR/ready and wait for DIR/go (the test damages the tier's file
 *       meanwhile), then read every page: a page that raises SIGBUS is
 *       counted ("prog_writeback: sigbus N" on stderr), every other page
 *       must be right
 *
 * stdout is the same with and without the library; stderr gets
 * "prog_writeback: vmhwm_kb=N" and, under the library, the tier's counters
 * as "prog_writeback: stat NAME=VALUE".
 */
#include "prog_common.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static unsigned char *area;
static size_t npages;

static void fill_page(size_t i, enum pc_kind kind, uint64_t seed)
{
	pc_fill(area + i * PC_PAGE, kind, pc_page_seed(seed, i));
}

static void check_page(size_t i, enum pc_kind kind, uint64_t seed, const char *who)
{
	static unsigned char expect[PC_PAGE];

	pc_fill(expect, kind, pc_page_seed(seed, i));
	if (memcmp(area + i * PC_PAGE, expect, PC_PAGE) != 0)
		pc_fail("%s: page %zu is wrong: %s", who, i, pc_describe(area + i * PC_PAGE, kind, pc_page_seed(seed, i)));
}

static void report_hwm(const char *who)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			fprintf(stderr, "prog_writeback: %svmhwm_kb=%lld\n", who, atoll(line + 6));
	if (f)
		fclose(f);
}

static void report(void)
{
	report_hwm("");
	if (pc_managed()) {
		struct zswap_stats st;
		pc_stats(&st);
		fprintf(stderr, "prog_writeback: stat written_back_pages=%" PRIu64 "\n", st.written_back_pages);
		fprintf(stderr, "prog_writeback: stat bd_reads=%" PRIu64 "\n", st.bd_reads);
		fprintf(stderr, "prog_writeback: stat writeback_failed=%" PRIu64 "\n", st.writeback_failed);
		fprintf(stderr, "prog_writeback: stat poisoned_pages=%" PRIu64 "\n", st.poisoned_pages);
		fprintf(stderr, "prog_writeback: stat bd_read_fail=%" PRIu64 "\n", st.bd_read_fail);
		fprintf(stderr, "prog_writeback: stat refaults=%" PRIu64 "\n", st.refaults);
		fprintf(stderr, "prog_writeback: stat mem_used_max_kb=%" PRIu64 "\n", st.mem_used_max >> 10);
	}
}

/* The library's counters now; all zero without it. */
static struct zswap_stats lib_stats(void)
{
	struct zswap_stats st;

	memset(&st, 0, sizeof(st));
	if (pc_managed())
		pc_stats(&st);
	return st;
}

/* Pages written back so far (plainly: 1, nothing to wait for). */
static uint64_t written_back(void)
{
	return pc_managed() ? lib_stats().written_back_pages : 1;
}

/* The child and the parent after fork: everything, then a half of their own. */
static void fork_side(const char *who, size_t half, uint64_t seed)
{
	for (size_t i = 0; i < npages; i++)
		check_page(i, PC_RANDOM, 7, who);
	for (size_t i = half * (npages / 2); i < (half + 1) * (npages / 2); i++)
		fill_page(i, PC_RANDOM, seed);
	for (size_t i = 0; i < npages; i++) {
		bool mine = i >= half * (npages / 2) && i < (half + 1) * (npages / 2);
		check_page(i, PC_RANDOM, mine ? seed : 7, who);
	}
}

static enum pc_kind mixed_kind(size_t i)
{
	return i & 1 ? PC_RANDOM : PC_TEXT;
}

static void *thread_check(void *arg)
{
	size_t start = (size_t)(uintptr_t)arg * (npages / 4);
	static __thread unsigned char expect[PC_PAGE];

	for (int round = 0; round < 3; round++)
		for (size_t k = 0; k < npages; k++) {
			size_t i = (start + k) % npages;
			pc_fill(expect, mixed_kind(i), pc_page_seed(9, i));
			if (memcmp(area + i * PC_PAGE, expect, PC_PAGE) != 0)
				pc_fail("thread %zu: page %zu is wrong", (size_t)(uintptr_t)arg, i);
		}
	return NULL;
}


static sigjmp_buf bus_jmp;

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static void wait_file(const char *dir, const char *name, int seconds)
{
	char path[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int t = 0; t < seconds * 10; t++) {
		if (stat(path, &sb) == 0)
			return;
		usleep(100000);
	}
	pc_fail("%s did not appear within %d s", path, seconds);
}

static void corrupt_mode(const char *dir)
{
	char path[512];
	uint64_t last = 0, now;
	volatile size_t bus = 0;
	static unsigned char expect[PC_PAGE];
	struct sigaction sa;

	for (size_t i = 0; i < npages; i++)
		fill_page(i, PC_RANDOM, 7);
	/* Settled: the tier has not grown for a second (at most 30 s). */
	for (int t = 0; t < 30; t++) {
		sleep(1);
		now = lib_stats().bd_count;
		if (now && now == last)
			break;
		last = now;
	}
	snprintf(path, sizeof(path), "%s/ready", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		pc_fail("create %s: %s", path, strerror(errno));
	close(fd);
	wait_file(dir, "go", 60);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_bus;
	sigaction(SIGBUS, &sa, NULL);
	for (size_t i = 0; i < npages; i++) {
		volatile unsigned char *p = area + i * PC_PAGE;
		if (sigsetjmp(bus_jmp, 1)) {
			bus++;
			continue;
		}
		(void)*p;
		pc_fill(expect, PC_RANDOM, pc_page_seed(7, i));
		if (memcmp((const void *)p, expect, PC_PAGE) != 0)
			pc_fail("page %zu is wrong: %s", i, pc_describe(area + i * PC_PAGE, PC_RANDOM, pc_page_seed(7, i)));
	}
	fprintf(stderr, "prog_writeback: sigbus %zu\n", (size_t)bus);
	printf("corrupt: every page that did not raise SIGBUS is right\n");
}

/* swapcache mode: page i after its first v changes. */
static void sc_expect(unsigned char *page, size_t i, unsigned int v)
{
	pc_fill(page, PC_RANDOM, pc_page_seed(3, i));
	for (unsigned int k = 1; k <= v; k++) {
		uint64_t word = (uint64_t)i * 1000003u + k;
		size_t off = k % 3 == 2 ? PC_PAGE - 8 : (((i * 131) + k * 977) % (PC_PAGE / 8)) * 8;
		memcpy(page + off, &word, 8);
	}
}

static void sc_change(size_t i, unsigned int v, int pipefd[2])
{
	uint64_t word = (uint64_t)i * 1000003u + v;
	size_t off = v % 3 == 2 ? PC_PAGE - 8 : (((i * 131) + v * 977) % (PC_PAGE / 8)) * 8;
	unsigned char *at = area + i * PC_PAGE + off;

	if (v % 3 == 1) {
		/* The kernel writes the page (copy_to_user), not the program. */
		if (write(pipefd[1], &word, 8) != 8 || read(pipefd[0], at, 8) != 8)
			pc_fail("pipe: %s", strerror(errno));
	} else {
		memcpy(at, &word, 8);
	}
}

static void swapcache_mode(void)
{
	size_t len = npages * PC_PAGE, zlo = npages / 3, zhi = npages / 3 + npages / 16;
	unsigned int *ver = calloc(npages, sizeof(*ver));
	static unsigned char expect[PC_PAGE], zero[PC_PAGE];
	int pipefd[2];

	if (!ver || pipe(pipefd) != 0)
		pc_fail("calloc or pipe: %s", strerror(errno));
	for (size_t i = 0; i < npages; i++)
		fill_page(i, PC_RANDOM, 3);
	for (int t = 0; t < 200 && !written_back(); t++)
		usleep(100000);
	for (unsigned int round = 0; round < 4; round++) {
		if (round == 2) {
			void *to = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (to == MAP_FAILED ||
			    (to = mremap(area, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to)) == MAP_FAILED)
				pc_fail("mremap: %s", strerror(errno));
			area = to;
		}
		if (round == 3 && madvise(area + zlo * PC_PAGE, (zhi - zlo) * PC_PAGE, MADV_DONTNEED) != 0)
			pc_fail("madvise(MADV_DONTNEED): %s", strerror(errno));
		for (size_t i = 0; i < npages; i++) {
			bool zeroed = round == 3 && i >= zlo && i < zhi;
			if (zeroed)
				memcpy(expect, zero, PC_PAGE);
			else
				sc_expect(expect, i, ver[i]);
			if (memcmp(area + i * PC_PAGE, expect, PC_PAGE) != 0)
				pc_fail("round %u: page %zu (changed %u times%s) is wrong", round, i, ver[i],
					zeroed ? ", discarded" : "");
		}
		for (size_t i = round % 3; i < npages; i += 3)
			if (!(round == 3 && i >= zlo && i < zhi))
				sc_change(i, ++ver[i], pipefd);
	}
	for (size_t i = 0; i < npages; i++) {
		if (i >= zlo && i < zhi)
			continue;
		sc_expect(expect, i, ver[i]);
		if (memcmp(area + i * PC_PAGE, expect, PC_PAGE) != 0)
			pc_fail("at the end: page %zu (changed %u times) is wrong", i, ver[i]);
	}
	struct zswap_stats st = lib_stats();
	fprintf(stderr, "prog_writeback: stat swap_cached_reclaimed=%" PRIu64 "\n", st.swap_cached_reclaimed);
	if (munmap(area, len) != 0)
		pc_fail("munmap: %s", strerror(errno));
	st = lib_stats();
	fprintf(stderr, "prog_writeback: stat bd_count_after_unmap=%" PRIu64 "\n", st.bd_count);
	fprintf(stderr, "prog_writeback: stat swap_cached_after_unmap=%" PRIu64 "\n", st.swap_cached_pages);
	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	free(ver);
	printf("swapcache over %zu pages: ok\n", npages);
}

/*
 * balance mode: the first three quarters of the area filled once and left
 * (old pages), then random reads over the last quarter (the working set)
 * for 24 rounds of as many reads as it has pages. Under a limit the working
 * set fits only beside a pool that has given its old entries to the tier;
 * the refaults of the last 8 rounds are reported (tests/engine/
 * test_eng_writeback.sh).
 */
static void balance_mode(void)
{
	size_t cold = npages / 4 * 3, hot = npages - cold;
	uint64_t x = 777, before = 0;
	struct zswap_stats st;

	for (size_t i = 0; i < npages; i++)
		fill_page(i, PC_TEXT, 3);
	for (int round = 0; round < 24; round++) {
		if (round == 16 && pc_managed()) {
			pc_stats(&st);
			before = st.refaults;
		}
		for (size_t k = 0; k < hot; k++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			check_page(cold + (size_t)(x >> 33) % hot, PC_TEXT, 3, "working set");
		}
	}
	if (pc_managed()) {
		pc_stats(&st);
		fprintf(stderr, "prog_writeback: stat late_refaults=%" PRIu64 "\n", st.refaults - before);
		fprintf(stderr, "prog_writeback: stat hot_pages=%zu\n", hot);
	}
	for (size_t i = 0; i < npages; i++)
		check_page(i, PC_TEXT, 3, "at the end");
	printf("balance over %zu pages: ok\n", npages);
}

int main(int argc, char **argv)
{
	pc_init("prog_writeback", &argc, argv);
	if (argc < 3)
		pc_fail("usage: prog_writeback fill MB text|random | fork MB | threads MB | pool MB | swapcache MB | balance MB | corrupt MB DIR");
	const char *mode = argv[1];
	npages = (size_t)atol(argv[2]) * PC_MIB / PC_PAGE;
	area = mmap(NULL, npages * PC_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		pc_fail("mmap: %s", strerror(errno));

	if (strcmp(mode, "fill") == 0) {
		enum pc_kind kind = argc > 3 && strcmp(argv[3], "random") == 0 ? PC_RANDOM : PC_TEXT;
		for (size_t i = 0; i < npages; i++)
			fill_page(i, kind, 3);
		for (size_t i = 0; i < npages; i++)
			check_page(i, kind, 3, "read back");
		uint64_t x = 12345;
		for (size_t k = 0; k < npages / 10; k++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t i = (size_t)(x >> 33) % npages;
			fill_page(i, kind, 5);
			check_page(i, kind, 5, "rewritten");
			fill_page(i, kind, 3);
		}
		for (size_t i = 0; i < npages; i++)
			check_page(i, kind, 3, "at the end");
		printf("fill %zu pages of %s: ok\n", npages, kind == PC_RANDOM ? "random" : "text");
	} else if (strcmp(mode, "fork") == 0) {
		for (size_t i = 0; i < npages; i++)
			fill_page(i, PC_RANDOM, 7);
		for (int t = 0; t < 200 && !written_back(); t++)
			usleep(100000);
		if (!written_back())
			pc_fail("nothing was written back before the fork");
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			pc_fail("fork: %s", strerror(errno));
		if (pid == 0) {
			fork_side("child", 0, 11);
			/* Time for the child's reclaimer to trim, were it to
			 * punch blocks of its parent's (it must not). */
			sleep(2);
			report_hwm("child ");
			fflush(stderr);
			_exit(0);
		}
		fork_side("parent", 1, 13);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			pc_fail("the child failed (status %d)", status);
		for (size_t i = 0; i < npages; i++)
			check_page(i, PC_RANDOM, i >= npages / 2 && i < 2 * (npages / 2) ? 13 : 7, "parent after the child");
		if (pc_managed()) {
			/* The child is gone: the slots kept for it are freed, the
			 * file what is live and what it keeps for reuse (at most
			 * 5 s). */
			struct zswap_stats st;
			for (int t = 0; t < 50; t++) {
				pc_stats(&st);
				if (st.backing_disk_bytes <= st.bd_count * PC_PAGE + st.backing_free_bytes + (1 << 20))
					break;
				usleep(100000);
			}
			fprintf(stderr, "prog_writeback: stat disk_after_child_kb=%" PRIu64 "\n", st.backing_disk_bytes >> 10);
			fprintf(stderr, "prog_writeback: stat free_after_child_kb=%" PRIu64 "\n", st.backing_free_bytes >> 10);
			fprintf(stderr, "prog_writeback: stat live_after_child_kb=%" PRIu64 "\n", (st.bd_count * PC_PAGE) >> 10);
		}
		printf("fork over %zu pages: ok\n", npages);
	} else if (strcmp(mode, "threads") == 0) {
		pthread_t t[4];
		for (size_t i = 0; i < npages; i++)
			pc_fill(area + i * PC_PAGE, mixed_kind(i), pc_page_seed(9, i));
		for (int t0 = 0; t0 < 200 && !written_back(); t0++)
			usleep(100000);
		for (uintptr_t k = 0; k < 4; k++)
			if (pthread_create(&t[k], NULL, thread_check, (void *)k) != 0)
				pc_fail("pthread_create");
		for (int k = 0; k < 4; k++)
			pthread_join(t[k], NULL);
		printf("threads over %zu pages: ok\n", npages);
	} else if (strcmp(mode, "pool") == 0) {
		for (size_t i = 0; i < npages; i++)
			fill_page(i, PC_TEXT, 3);
		for (int round = 0; round < 2; round++) {
			if (madvise(area, npages * PC_PAGE, MADV_PAGEOUT) != 0)
				pc_fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
			sleep(3);
		}
		for (size_t i = 0; i < npages; i++)
			check_page(i, PC_TEXT, 3, "after page-out");
		if (pc_managed()) {
			struct zswap_stats st;
			pc_stats(&st);
			fprintf(stderr, "prog_writeback: stat pool_limit_hit=%" PRIu64 "\n", st.pool_limit_hit);
			fprintf(stderr, "prog_writeback: stat reject_reclaim_fail=%" PRIu64 "\n", st.reject_reclaim_fail);
		}
		printf("pool over %zu pages: ok\n", npages);
	} else if (strcmp(mode, "swapcache") == 0) {
		swapcache_mode();
	} else if (strcmp(mode, "balance") == 0) {
		balance_mode();
	} else if (strcmp(mode, "corrupt") == 0 && argc > 3) {
		corrupt_mode(argv[3]);
	} else {
		pc_fail("unknown mode %s", mode);
	}
	report();
	return 0;
}
