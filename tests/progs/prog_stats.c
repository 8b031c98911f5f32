/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_stats.c - a program whose memory the statistics dump must describe
 * exactly (tests/engine/test_eng_stats.sh).
 *
 * It maps one buffer in stats_test_make_buffer() (the call site the dump's
 * attribution must name), writes DATA pages of text and ZERO pages of zeros,
 * pages the buffer out (zswap_pageout, found with dlsym), reads REFAULT of
 * the data pages back, checking every byte, then:
 *   signal   has another process (a vfork child: one the program sends
 *            itself takes the default action) send the statistics signal
 *            and waits (60 s at most) until the dump file named by
 *            ZSWAP_STATS_FILE holds "wait_for" dumps;
 *   own      the same with its own handler installed first (own=sigaction or
 *            own=signal): the handler runs once per signal, and the program
 *            waits for that, not for dumps (the program's handler wins);
 *   serve    prints "ready" and waits until stdin is closed (zswapctl runs
 *            meanwhile);
 *   periodic waits until the file holds "wait_for" dumps, raising nothing.
 * stdout: "pages DATA ZERO REFAULT", then "handler N" for own.
 *
 * With PROG_STATS_MALLOC=1 in the environment, it also fills 2 MiB of
 * small malloc blocks on the main thread (the heap) and on a second thread
 * (an arena), and pages both out: attribution must name them.
 *
 * DUMPFILE may hold %p (this pid), as ZSWAP_STATS_FILE does.
 *
 * usage: prog_stats MODE DATA ZERO REFAULT DUMPFILE WAIT_FOR [own=sigaction|signal]
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL

static volatile sig_atomic_t handler_runs;

static void own_handler(int sig)
{
	(void)sig;
	handler_runs++;
}

static __attribute__((noreturn)) void fail(const char *what)
{
	fprintf(stderr, "prog_stats: FAIL: %s (%s)\n", what, strerror(errno));
	exit(1);
}

/* The call site the attribution must name: keep it a function of its own. */
__attribute__((noinline)) static char *stats_test_make_buffer(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		fail("mmap");
	__asm__ volatile("" ::: "memory");	/* no tail call: the site stays here */
	return p;
}

static void fill(char *page, size_t i)
{
	memset(page, 0, PAGE);
	for (size_t k = 0; k < PAGE; k += 64)
		snprintf(page + k, 64, "page %zu line %zu of the statistics test, text %zu\n",
			 i, k / 64, (i * 31 + k) % 977);
}

/* How many whole dumps a file holds: lines "== end" (text), or lines that
 * end in "}" (json: one line a dump, its newline written last; a "reason"
 * key seen in a dump still being written counted it too early, and the
 * test read a truncated file). */
static int dumps_in(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		n += !strncmp(line, "== end", 6) ||
		     (len >= 2 && line[len - 1] == '\n' && line[len - 2] == '}');
	}
	fclose(f);
	return n;
}

static void wait_dumps(const char *path, int want)
{
	for (int i = 0; i < 6000; i++) {	/* 60 s: only a hang takes that long */
		if (dumps_in(path) >= want)
			return;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "prog_stats: FAIL: %s holds %d dump(s) after 60 s, expected %d\n", path,
		dumps_in(path), want);
	exit(1);
}

/* SIGUSR1 to this process from another one. */
static void usr1_from_outside(void)
{
	pid_t me = getpid(), c = vfork();

	if (c == 0) {
		kill(me, SIGUSR1);
		_exit(0);
	}
	if (c < 0)
		fail("vfork");
	while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Until the program's own handler ran n times (60 s at most). */
static void wait_handler(int n)
{
	for (int i = 0; i < 6000 && handler_runs < n; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

#define MALLOC_BLOCKS 512	/* of 4 KiB: below the mmap threshold, from the heap or arena */

struct blocks {
	char *b[MALLOC_BLOCKS];
	uintptr_t lo, hi;
};

static void *malloc_fill(void *arg)
{
	struct blocks *bl = arg;

	bl->lo = UINTPTR_MAX;
	for (int i = 0; i < MALLOC_BLOCKS; i++) {
		bl->b[i] = malloc(4096);
		if (!bl->b[i])
			fail("malloc");
		fill(bl->b[i], (size_t)i);
		if ((uintptr_t)bl->b[i] < bl->lo)
			bl->lo = (uintptr_t)bl->b[i];
		if ((uintptr_t)bl->b[i] + 4096 > bl->hi)
			bl->hi = (uintptr_t)bl->b[i] + 4096;
	}
	return NULL;
}

/* Page out the whole pages between the lowest and highest block. */
static void malloc_pageout(int (*pageout)(void *, size_t), struct blocks *bl)
{
	uintptr_t lo = (bl->lo + PAGE - 1) & ~(PAGE - 1), hi = bl->hi & ~(PAGE - 1);

	if (hi > lo && pageout((void *)lo, hi - lo) != 0)
		fail("zswap_pageout of malloc blocks");
}

int main(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "usage: prog_stats MODE DATA ZERO REFAULT DUMPFILE WAIT_FOR [own=sigaction|signal]\n");
		return 2;
	}
	const char *mode = argv[1], *path = argv[5], *own = argc > 7 ? argv[7] : "";
	size_t ndata = strtoul(argv[2], NULL, 10), nzero = strtoul(argv[3], NULL, 10);
	size_t nref = strtoul(argv[4], NULL, 10);
	int want = atoi(argv[6]);
	char expanded[4096];
	const char *pp = strstr(path, "%p");
	if (pp) {	/* the dump file's %p, as the library expands it */
		snprintf(expanded, sizeof(expanded), "%.*s%ld%s", (int)(pp - path), path, (long)getpid(), pp + 2);
		path = expanded;
	}
	int (*pageout)(void *, size_t) = (int (*)(void *, size_t))dlsym(RTLD_DEFAULT, "zswap_pageout");
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");

	if (!pageout || !active || !active()) {
		fprintf(stderr, "prog_stats: libzswap is not active here\n");
		return 77;
	}
	if (!strcmp(own, "own=sigaction")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = own_handler;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGUSR1, &sa, NULL) != 0)
			fail("sigaction");
		struct sigaction back;
		if (sigaction(SIGUSR1, NULL, &back) != 0 || back.sa_handler != own_handler)
			fail("sigaction does not give the program's own handler back");
	} else if (!strcmp(own, "own=signal")) {
		if (signal(SIGUSR1, own_handler) == SIG_ERR)
			fail("signal");
		if (signal(SIGUSR1, own_handler) != own_handler)
			fail("signal does not give the program's own handler back");
	}

	size_t npages = ndata + nzero + 16;	/* 16 never touched */
	char *buf = stats_test_make_buffer(npages * PAGE);
	for (size_t i = 0; i < ndata; i++)
		fill(buf + i * PAGE, i);
	for (size_t i = ndata; i < ndata + nzero; i++)
		memset(buf + i * PAGE, 0, PAGE);	/* present, all zeros */
	if (pageout(buf, npages * PAGE) != 0)
		fail("zswap_pageout");
	char want_page[PAGE];
	for (size_t i = 0; i < nref; i++) {
		fill(want_page, i);
		if (memcmp(buf + i * PAGE, want_page, PAGE) != 0) {
			fprintf(stderr, "prog_stats: FAIL: page %zu came back different\n", i);
			return 1;
		}
	}
	static struct blocks heap, arena;
	if (getenv("PROG_STATS_MALLOC")) {
		pthread_t t;
		malloc_fill(&heap);
		if (pthread_create(&t, NULL, malloc_fill, &arena) != 0 || pthread_join(t, NULL) != 0)
			fail("pthread_create");
		malloc_pageout(pageout, &heap);
		malloc_pageout(pageout, &arena);
	}
	printf("pages %zu %zu %zu\n", ndata, nzero, nref);
	fflush(stdout);

	if (!strcmp(mode, "signal") || !strcmp(mode, "own")) {
		for (int i = 0; i < want; i++) {
			usr1_from_outside();
			if (*own)
				wait_handler(i + 1);
			else
				wait_dumps(path, i + 1);
		}
	} else if (!strcmp(mode, "periodic")) {
		wait_dumps(path, want);
	} else if (!strcmp(mode, "serve")) {
		char c;
		printf("ready %ld\n", (long)getpid());
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	} else {
		fprintf(stderr, "prog_stats: unknown mode %s\n", mode);
		return 2;
	}
	if (*own) {
		printf("handler %d\n", (int)handler_runs);
		if (handler_runs != want) {
			fprintf(stderr, "prog_stats: FAIL: own handler ran %d time(s), expected %d\n",
				(int)handler_runs, want);
			return 1;
		}
	}
	munmap(buf, npages * PAGE);
	return 0;
}
