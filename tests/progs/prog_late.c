/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_late.c - a program whose library may start late (ZSWAP_START_DELAY;
 * tests/engine/test_eng_start_delay.sh). It never calls the library's API
 * unless asked (the API starts the library at once), so what starts the
 * library is what starts it in any program: its memory calls.
 *
 *   prog_late quick
 *       map, fill and check 4 MiB, and end at once.
 *   prog_late hold MB SECONDS
 *       map (in mappings of 4 MiB) and fill MB of text pages at once, print
 *       "filled", then for SECONDS make 64 small allocations every 10 ms
 *       (the calls a working program makes), and check every page.
 *   prog_late idle MB SECONDS
 *       map MB in one mapping, fill it, and make no call at all after the
 *       fill: sleep SECONDS, and check every page.
 *   prog_late fork MS
 *       sleep MS without a memory call, then fork: the child makes its
 *       memory calls for 50 ms and ends; the parent waits for it and ends.
 *   prog_late pageout
 *       map and fill 8 MiB, MADV_PAGEOUT it at once, then print the stored
 *       pages the library's API counts, and check every page.
 *   prog_late forks [signal] [dump] [pageout N]
 *       map and fill 4 MiB, make calls for 300 ms (a library started by
 *       then runs threads), print the parent's thread count (with
 *       "pageout", MADV_PAGEOUT the first N pages and print the pages
 *       stored), then fork three children in turn, the parent waiting for
 *       each:
 *       - "quick" counts its threads at once, checks every page, writes
 *         half of them and maps, fills and checks 1 MiB of its own;
 *       - "late" makes calls for 400 ms, counts its threads, pages half
 *         of its copy out (MADV_PAGEOUT, no API call), counts the pages
 *         no longer present (none without swap unmanaged), checks every
 *         page;
 *       - "grand" forks at once (before any start of its own) a
 *         grandchild that does what "late" does;
 *       - with "signal", "signalled" waits (on a pipe, no memory call)
 *         until the parent sent it SIGUSR1, then makes calls for 300 ms
 *         and ends normally (unmanaged, the signal would end it).
 *       Each child prints its counts to stderr as stats; the parent
 *       checks its own pages after them.
 *   prog_late forkrace N
 *       map and fill 4 MiB, make calls for 300 ms, then fork N children
 *       in turn while two threads map, fill, check and unmap 1 MiB
 *       buffers and allocate without pause; each child fills and checks
 *       2 MiB of new memory (first touches, some while its parent's fork
 *       is still under way) and checks every page of the 4 MiB; the first
 *       prints its thread count. The parent checks its pages at the end.
 *   prog_late sigrace
 *       a thread sets SIGSEGV's handler to one of two of its own in turn,
 *       without pause, each call checking that the action it replaced is
 *       the one it set before, while the main thread asks for 16 MiB at
 *       once (a start: the library takes SIGSEGV meanwhile); then checks
 *       the action sigaction reports last and prints "sigrace: N calls ok".
 */
#include "prog_common.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Small allocations for ms milliseconds, one every step_ms. */
static void calls_for(unsigned int ms, unsigned int step_ms)
{
	double end = now_s() + ms / 1000.0;

	while (now_s() < end) {
		for (int i = 0; i < 64; i++) {
			volatile char *p = malloc(64 + (size_t)i);
			if (!p)
				pc_fail("malloc failed");
			p[0] = 1;
			free((void *)p);
		}
		if (step_ms)
			pc_sleep_ms(step_ms);
	}
}

#define PIECE_PAGES 1024	/* 4 MiB */

/* npages of text in mappings of piece pages (the last may be shorter). */
static unsigned char **fill(size_t npages, size_t piece)
{
	size_t n = (npages + piece - 1) / piece;
	unsigned char **a = calloc(n + 1, sizeof(*a));

	if (!a)
		pc_fail("calloc failed");
	for (size_t i = 0; i < n; i++) {
		size_t k = npages - i * piece < piece ? npages - i * piece : piece;
		a[i] = pc_map(k * PC_PAGE);
		pc_fill_range(a[i], k, PC_TEXT, 7 + i);
	}
	return a;
}

/* The threads of this process (the library's, once started, and ours). */
static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		pc_fail("/proc/self/task: %s", strerror(errno));
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void wait_child(pid_t pid, const char *what)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		pc_fail("%s: waitpid: %s", what, strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		pc_fail("the %s child ended with status %#x%s", what, st,
			WIFSIGNALED(st) ? " (killed by a signal)" : "");
	printf("%s child ended: ok\n", what);
	fflush(stdout);
}

static void check(unsigned char **a, size_t npages, size_t piece);

/* A child that lives: calls for 400 ms, its thread count, half of a[0]
 * paged out and the pages no longer present counted, every page checked. */
static __attribute__((noreturn)) void late_child(unsigned char **a, size_t npages, const char *name)
{
	calls_for(400, 10);
	fprintf(stderr, "prog_late: stat %s_threads=%d\n", name, threads());
	if (madvise(a[0], npages / 2 * PC_PAGE, MADV_PAGEOUT) != 0)
		pc_fail("madvise: %s", strerror(errno));
	pc_pagemap_reopen();	/* the parent's table otherwise */
	fprintf(stderr, "prog_late: stat %s_paged_out=%zu\n", name, npages / 2 - pc_count_present(a[0], npages / 2));
	check(a, npages, npages);
	_exit(0);
}

static atomic_int race_stop;

/* A thread changing its mappings while the main thread forks. */
static void *race_thread(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;

	while (!atomic_load(&race_stop)) {
		/* A pattern of its own: pc_fill's helpers share buffers. */
		uint64_t *m = pc_map(256 * PC_PAGE);
		size_t words = 256 * PC_PAGE / sizeof(*m);
		for (size_t i = 0; i < words; i++)
			m[i] = pc_mix(seed + i);
		for (size_t i = 0; i < words; i++)
			if (m[i] != pc_mix(seed + i))
				pc_fail("a racing thread's buffer: word %zu of %zu is wrong", i, words);
		if (munmap(m, 256 * PC_PAGE) != 0)
			pc_fail("munmap: %s", strerror(errno));
		for (int i = 0; i < 64; i++)
			free(malloc(64 + (size_t)i * 100));
		seed++;
	}
	return NULL;
}

static void sigrace_h1(int sig) { (void)sig; }
static void sigrace_h2(int sig) { (void)sig; }
static atomic_int sigrace_calls;

/* SIGSEGV set again and again, each call's old action the one set before. */
static void *sigrace_thread(void *arg)
{
	void (*set)(int) = SIG_DFL;

	(void)arg;
	while (!atomic_load(&race_stop)) {
		struct sigaction sa, old;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = set == sigrace_h1 ? sigrace_h2 : sigrace_h1;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSEGV, &sa, &old) != 0)
			pc_fail("sigaction: %s", strerror(errno));
		if (old.sa_handler != set)
			pc_fail("sigaction %d: the action replaced is %p, not the one set before (%p)",
				atomic_load(&sigrace_calls), (void *)old.sa_handler, (void *)set);
		set = sa.sa_handler;
		atomic_fetch_add(&sigrace_calls, 1);
	}
	struct sigaction now;
	if (sigaction(SIGSEGV, NULL, &now) != 0 || now.sa_handler != set)
		pc_fail("sigaction reports %p at the end, not the handler set last (%p)", (void *)now.sa_handler,
			(void *)set);
	return NULL;
}

static void check(unsigned char **a, size_t npages, size_t piece)
{
	for (size_t i = 0; i * piece < npages; i++) {
		size_t k = npages - i * piece < piece ? npages - i * piece : piece;
		pc_expect_range("the pages", a[i], k, PC_TEXT, 7 + i);
	}
	printf("%zu pages checked: ok\n", npages);
}

/* MADV_PAGEOUT of n pages at p (no API call before it: the advice alone
 * starts the library), then the pages the library's API counts stored,
 * printed as the stat name. */
static void page_out(unsigned char *p, size_t n, const char *name, int *argc, char **argv)
{
	struct zswap_stats st;

	if (madvise(p, n * PC_PAGE, MADV_PAGEOUT) != 0)
		pc_fail("madvise: %s", strerror(errno));
	pc_init("prog_late", argc, argv);
	pc_stats(&st);
	fprintf(stderr, "prog_late: stat %s=%" PRIu64 "\n", name, st.stored_pages);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		pc_fail("usage: prog_late quick | hold MB SECONDS | idle MB SECONDS | fork MS | forks [signal] [dump] [pageout N] | forkrace N | sigrace | pageout");
	pc.name = "prog_late";
	const char *mode = argv[1];

	if (strcmp(mode, "quick") == 0) {
		check(fill(PIECE_PAGES, PIECE_PAGES), PIECE_PAGES, PIECE_PAGES);
	} else if ((strcmp(mode, "hold") == 0 || strcmp(mode, "idle") == 0) && argc >= 4) {
		size_t npages = (size_t)atol(argv[2]) * PC_MIB / PC_PAGE;
		unsigned int ms = (unsigned int)atoi(argv[3]) * 1000u;
		size_t piece = mode[0] == 'h' ? PIECE_PAGES : npages;
		unsigned char **a = fill(npages, piece);
		printf("filled\n");
		fflush(stdout);
		if (mode[0] == 'h')
			calls_for(ms, 10);
		else
			pc_sleep_ms(ms);
		check(a, npages, piece);
	} else if (strcmp(mode, "fork") == 0 && argc >= 3) {
		pc_sleep_ms((unsigned int)atoi(argv[2]));
		pid_t pid = fork();
		if (pid < 0)
			pc_fail("fork: %s", strerror(errno));
		if (pid == 0) {
			calls_for(50, 1);
			unsigned char **a = fill(256, 256);
			munmap(a[0], 256 * PC_PAGE);
			_exit(0);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			pc_fail("the child ended with status %d", st);
		printf("child ended: ok\n");
	} else if (strcmp(mode, "forks") == 0) {
		bool signal = false, dump = false;
		size_t npages = PIECE_PAGES, out = 0;
		for (int i = 2; i < argc; i++) {
			if (strcmp(argv[i], "signal") == 0)
				signal = true;
			else if (strcmp(argv[i], "dump") == 0)
				dump = true;
			else if (strcmp(argv[i], "pageout") == 0 && i + 1 < argc)
				out = strtoul(argv[++i], NULL, 10);
		}
		if (out > npages)
			pc_fail("pageout %zu: at most %zu pages", out, npages);
		unsigned char **a = fill(npages, npages);
		calls_for(300, 10);
		fprintf(stderr, "prog_late: stat parent_threads=%d\n", threads());
		fprintf(stderr, "prog_late: stat parent_pid=%d\n", (int)getpid());
		if (out)
			page_out(a[0], out, "parent_stored", &argc, argv);
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			pc_fail("fork: %s", strerror(errno));
		if (pid == 0) {
			fprintf(stderr, "prog_late: stat quick_threads=%d\n", threads());
			check(a, npages, npages);
			pc_fill_range(a[0], npages / 2, PC_TEXT, 99);
			unsigned char **b = fill(256, 256);
			check(b, 256, 256);
			pc_expect_range("the written half", a[0], npages / 2, PC_TEXT, 99);
			_exit(0);
		}
		wait_child(pid, "quick");
		if ((pid = fork()) < 0)
			pc_fail("fork: %s", strerror(errno));
		if (pid == 0)
			late_child(a, npages, "late");
		wait_child(pid, "late");
		if ((pid = fork()) < 0)
			pc_fail("fork: %s", strerror(errno));
		if (pid == 0) {
			pid_t g = fork();
			if (g < 0)
				pc_fail("fork: %s", strerror(errno));
			if (g == 0)
				late_child(a, npages, "grand");
			int st;
			if (waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				pc_fail("the grandchild ended with status %#x", st);
			_exit(0);
		}
		wait_child(pid, "grand");
		if (signal) {
			int fd[2];
			char c = 0;
			if (pipe(fd) != 0)
				pc_fail("pipe: %s", strerror(errno));
			if ((pid = fork()) < 0)
				pc_fail("fork: %s", strerror(errno));
			if (pid == 0) {
				if (read(fd[0], &c, 1) != 1)
					pc_fail("read: %s", strerror(errno));
				fprintf(stderr, "prog_late: stat signalled_pid=%d\n", (int)getpid());
				calls_for(300, 10);
				check(a, npages, npages);
				_exit(0);
			}
			if (kill(pid, SIGUSR1) != 0 || write(fd[1], &c, 1) != 1)
				pc_fail("signal: %s", strerror(errno));
			wait_child(pid, "signalled");
		}
		check(a, npages, npages);
		/* The library's statistics at the end, without ZSWAP_STATS_AT_EXIT
		 * (which starts it at once): a dump asked for is written by exit.
		 * Asked by a child, one more fork: the library takes a process's
		 * signal to itself for the program's own. */
		if (dump) {
			if ((pid = fork()) < 0)
				pc_fail("fork: %s", strerror(errno));
			if (pid == 0)
				_exit(kill(getppid(), SIGUSR1) == 0 ? 0 : 1);
			int st;
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				pc_fail("the child asking for a dump ended with status %#x", st);
		}
	} else if (strcmp(mode, "forkrace") == 0 && argc >= 3) {
		int n = atoi(argv[2]);
		size_t npages = PIECE_PAGES;
		unsigned char **a = fill(npages, npages);
		pthread_t t[2];
		calls_for(300, 10);
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, race_thread, (void *)(uintptr_t)(1000 + 100000 * i)) != 0)
				pc_fail("pthread_create failed");
		for (int k = 0; k < n; k++) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid < 0)
				pc_fail("fork: %s", strerror(errno));
			if (pid == 0) {
				if (k == 0)
					fprintf(stderr, "prog_late: stat forkrace_child_threads=%d\n", threads());
				unsigned char *m = malloc(512 * PC_PAGE);
				if (!m)
					_exit(3);
				pc_fill_range(m, 512, PC_TEXT, 5000 + (uint64_t)k);
				pc_expect_range("the child's new memory", m, 512, PC_TEXT, 5000 + (uint64_t)k);
				pc_expect_range("the parent's pages", a[0], npages, PC_TEXT, 7);
				_exit(0);
			}
			int st;
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				pc_fail("child %d ended with status %#x", k, st);
		}
		atomic_store(&race_stop, 1);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		check(a, npages, npages);
		printf("forkrace: %d children ok\n", n);
	} else if (strcmp(mode, "sigrace") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, sigrace_thread, NULL) != 0)
			pc_fail("pthread_create");
		while (atomic_load(&sigrace_calls) < 1000)
			sched_yield();
		unsigned char *big = malloc(16 * PC_MIB);
		if (!big)
			pc_fail("malloc: %s", strerror(errno));
		memset(big, 7, 16 * PC_MIB);
		int at = atomic_load(&sigrace_calls);
		while (atomic_load(&sigrace_calls) < at + 1000)
			sched_yield();
		atomic_store(&race_stop, 1);
		pthread_join(t, NULL);
		for (size_t i = 0; i < 16 * PC_MIB; i += PC_PAGE)
			if (big[i] != 7)
				pc_fail("byte %zu of the 16 MiB is %d", i, big[i]);
		free(big);
		printf("sigrace: %d calls ok\n", atomic_load(&sigrace_calls));
	} else if (strcmp(mode, "pageout") == 0) {
		size_t npages = 2048;
		unsigned char **a = fill(npages, npages);
		page_out(a[0], npages, "stored_pages", &argc, argv);
		check(a, npages, npages);
	} else {
		pc_fail("unknown mode %s", mode);
	}
	return 0;
}
