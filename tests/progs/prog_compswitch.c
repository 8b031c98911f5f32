/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_compswitch.c - pages refaulted and stored again while the test
 * changes the compressor (zswapctl set PID compressor=...).
 *
 * NPAGES text pages are written and paged out; DIR/ready0 is created. For
 * each step K (1..STEPS) the program waits for DIR/goK, then goes round:
 * every page of the first half is read back and checked, every other one
 * written anew (as version K), and the first half paged out again; it keeps going round
 * until DIR/setK exists (the test made the change meanwhile), does one
 * round more, so the first half is stored under the new compressor, and
 * creates DIR/readyK. The second half is not touched until DIR/drain: then
 * every page is checked and paged out again (DIR/drained). At DIR/end
 * every page is checked once more. The waits are bounded: hang detectors,
 * not timings.
 *
 * With THREADS > 1, each round's first half is shared among that many
 * threads, each refaulting, checking, rewriting and paging out its own
 * slice at once. With FORK 1, after each round a child is forked that
 * checks every page (the second half from the pool of the compressor
 * before, the first from the one the round stored it under) and exits;
 * the parent waits for it: a change of compressor meets forks in
 * progress.
 *
 * stdout: "ready PID", then the checksum of the data (the same with and
 * without the library).
 * usage: prog_compswitch DIR NPAGES STEPS [THREADS [FORK]]
 */
#include "prog_common.h"

#include <pthread.h>
#include <sys/wait.h>

#define CS_SEED		777
#define CS_WAIT_MS	120000
#define CS_THREADS_MAX	16

static char *cs_dir;

/* True if pages [from, to) hold their versions. */
static bool cs_same(const char *p, size_t from, size_t to, const uint64_t *version)
{
	char want[PC_PAGE];

	for (size_t i = from; i < to; i++) {
		pc_fill(want, PC_TEXT, pc_page_seed(CS_SEED + version[i], i));
		if (memcmp(p + i * PC_PAGE, want, PC_PAGE))
			return false;
	}
	return true;
}

/* Check pages [from, to) against their versions; with rewrite > 0, every
 * other one is written as version rewrite (the same in every round of a
 * step, so the data does not depend on how many rounds there were). */
static void cs_pass_range(const char *what, char *p, size_t from, size_t to, uint64_t *version, uint64_t rewrite)
{
	char want[PC_PAGE];

	for (size_t i = from; i < to; i++) {
		pc_fill(want, PC_TEXT, pc_page_seed(CS_SEED + version[i], i));
		if (memcmp(p + i * PC_PAGE, want, PC_PAGE))
			pc_fail("%s: page %zu differs from what was written", what, i);
		if (rewrite && i % 2 == 0) {
			version[i] = rewrite;
			pc_fill(p + i * PC_PAGE, PC_TEXT, pc_page_seed(CS_SEED + version[i], i));
		}
	}
}

static void cs_pass(const char *what, char *p, size_t n, uint64_t *version, uint64_t rewrite)
{
	cs_pass_range(what, p, 0, n, version, rewrite);
}

/* One thread's slice of a round: [from, to) checked, rewritten, paged out. */
struct cs_slice {
	pthread_t t;
	char *p;
	size_t from, to;
	uint64_t *version, rewrite;
};

static void *cs_slice_round(void *arg)
{
	struct cs_slice *sl = arg;

	char *a = sl->p + sl->from * PC_PAGE;
	size_t n = sl->to - sl->from;

	cs_pass_range("a thread's round", sl->p, sl->from, sl->to, sl->version, sl->rewrite);
	/* Not pc_evict: the counters it checks move with the other threads'. */
	if (pc_pageout(a, n * PC_PAGE) != 0 && pc_managed())
		pc_fail("a thread's slice out: madvise(MADV_PAGEOUT): %s", strerror(errno));
	if (pc_managed() && pc_count_resident(a, n))
		pc_fail("a thread's slice out: %zu of %zu pages still present", pc_count_resident(a, n), n);
	return NULL;
}

/* A round over the first half [0, half) by nthreads threads at once. */
static void cs_round(char *p, size_t half, uint64_t *version, uint64_t k, unsigned long nthreads)
{
	struct cs_slice sl[CS_THREADS_MAX];

	if (nthreads <= 1) {
		cs_pass("a round", p, half, version, k);
		pc_evict("the first half out", p, half, false);
		return;
	}
	for (unsigned long t = 0; t < nthreads; t++) {
		sl[t] = (struct cs_slice){ .p = p, .from = half * t / nthreads, .to = half * (t + 1) / nthreads,
					   .version = version, .rewrite = k };
		if (pthread_create(&sl[t].t, NULL, cs_slice_round, &sl[t]))
			pc_fail("pthread_create failed");
	}
	for (unsigned long t = 0; t < nthreads; t++)
		pthread_join(sl[t].t, NULL);
}

/* A child that checks every page and exits; waited for. */
static void cs_fork_check(const char *p, size_t npages, const uint64_t *version)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		pc_fail("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(cs_same(p, 0, npages, version) ? 0 : 3);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		pc_fail("a fork child found a page differing from what was written (status %#x)", st);
}

int main(int argc, char **argv)
{
	char name[32];

	pc_init("prog_compswitch", &argc, argv);
	if (argc < 4 || argc > 6)
		pc_fail("usage: prog_compswitch DIR NPAGES STEPS [THREADS [FORK]]");
	unsigned long nthreads = argc > 4 ? strtoul(argv[4], NULL, 0) : 1;
	bool forks = argc > 5 && strtoul(argv[5], NULL, 0) != 0;
	if (nthreads < 1 || nthreads > CS_THREADS_MAX)
		pc_fail("THREADS: 1 to %d", CS_THREADS_MAX);
	cs_dir = argv[1];
	size_t npages = strtoul(argv[2], NULL, 0), half = npages / 2;
	unsigned long steps = strtoul(argv[3], NULL, 0);
	if (half < 1)
		pc_fail("at least two pages");

	char *p = pc_map(npages * PC_PAGE);
	uint64_t *version = calloc(npages, sizeof(*version));
	if (!version)
		pc_fail("out of memory");
	for (size_t i = 0; i < npages; i++)
		pc_fill(p + i * PC_PAGE, PC_TEXT, pc_page_seed(CS_SEED, i));
	pc_evict("pageout", p, npages, false);
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	pc_make_file(cs_dir, "ready0");
	for (unsigned long k = 1; k <= steps; k++) {
		snprintf(name, sizeof(name), "go%lu", k);
		pc_wait_file(cs_dir, name, CS_WAIT_MS);
		snprintf(name, sizeof(name), "set%lu", k);
		bool last = false;
		for (unsigned long round = 0; !last; round++) {
			if (round > 100000)
				pc_fail("step %lu: %s did not appear", k, name);
			last = pc_file_exists(cs_dir, name);
			cs_round(p, half, version, k, nthreads);
			if (forks)
				cs_fork_check(p, npages, version);
		}
		snprintf(name, sizeof(name), "ready%lu", k);
		pc_make_file(cs_dir, name);
	}
	pc_wait_file(cs_dir, "drain", CS_WAIT_MS);
	cs_pass("drain", p, npages, version, 0);
	pc_evict("all out", p, npages, false);
	pc_make_file(cs_dir, "drained");
	pc_wait_file(cs_dir, "end", CS_WAIT_MS);
	cs_pass("at the end", p, npages, version, 0);
	printf("sum %016" PRIx64 "\n", pc_sum(p, npages * PC_PAGE));
	munmap(p, npages * PC_PAGE);
	free(version);
	return 0;
}
