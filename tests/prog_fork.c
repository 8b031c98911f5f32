/*
 * prog_fork.c - fork() from a program with evicted memory (src/fork.h).
 *
 * Every case maps a checksummed working set (NPAGES pages, PC_TEXT), evicts
 * it, and forks. Managed, the child must be managed too (zswap_active, its
 * own statistics), see every byte the parent had, keep its writes to itself,
 * and evict and refault with its own engine; the parent must never see the
 * child's writes. Cases:
 *   basic       child and parent at once: verify all, overwrite one half
 *               (different seeds), evict, verify again, the other half
 *               intact; the child's RSS right after fork is the parent's
 *               (the pool was not loaded back); both stores empty at the end
 *   childfirst  the child verifies a few pages and exits; the parent goes on
 *   parentfirst the parent exits right after fork; the child (reparented to
 *               this program, a subreaper) completes everything alone
 *   killparent  the parent is killed (SIGKILL) while the child faults its
 *               evicted pages back
 *   exec        the child verifies, then execs this program ("execchild"),
 *               which evicts its own memory
 *   grand       the child writes and evicts, forks a grandchild that sees
 *               the child's memory (its writes included), evicts and
 *               refaults; the child is intact after it
 *   many        16 children at once, each verifying everything and writing,
 *               evicting and refaulting its own slice
 *   threads     8 threads evict, refault and fork (2 forks each); each child
 *               checks the static data and the forking thread's own slice,
 *               and evicts and refaults a slice of it
 * With --interim the library is expected to take the interim instead
 * (pool-lock mode): the child is a pass-through, the data still intact.
 *
 * stdout: one line per case, the same with and without the library.
 */
#include "prog_common.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define NPAGES 4096UL		/* 16 MiB */
#define SEED_BASE 11
#define SEED_CHILD 12
#define SEED_PARENT 13
#define SEED_GRAND 14

static bool interim;
static char self[4096];

static void check_status(const char *what, int status)
{
	if (WIFSIGNALED(status))
		pc_fail("%s: killed by signal %d", what, WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		pc_fail("%s: exited with status %d", what, WEXITSTATUS(status));
}

static void wait_child(const char *what, pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		pc_fail("%s: waitpid: %s", what, strerror(errno));
	check_status(what, status);
}

/* Pages [from, from + n) of the working set hold what setup() wrote. */
static void expect_base(const char *what, const char *p, size_t from, size_t n)
{
	static unsigned char expect[PC_PAGE];

	for (size_t i = from; i < from + n; i++) {
		pc_fill(expect, PC_TEXT, pc_page_seed(SEED_BASE, i));
		if (memcmp(p + i * PC_PAGE, expect, PC_PAGE) != 0)
			pc_fail("%s: page %zu of the working set is wrong: %s", what, i,
				pc_describe(p + i * PC_PAGE, PC_TEXT, pc_page_seed(SEED_BASE, i)));
	}
}

/* fork() after flushing stdout (a child must not print the parent's
 * buffered lines again); a failed fork fails the test. */
static pid_t fork_flushed(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		pc_fail("fork: %s", strerror(errno));
	return pid;
}

static char *setup(void)
{
	char *p = pc_map(NPAGES * PC_PAGE);

	pc_fill_range(p, NPAGES, PC_TEXT, SEED_BASE);
	size_t ev = pc_evict("setup", p, NPAGES, false);
	if (pc_managed())
		PC_CHECK(ev == NPAGES, "setup: evicted %zu of %zu pages", ev, NPAGES);
	return p;
}

/* In a fresh child: it must be managed as its parent was. */
static void child_start(const char *what)
{
	pc.name = "prog_fork(child)";
	pc_pagemap_reopen();
	if (pc.mode == PC_MANAGED && !interim && !pc.active())
		pc_fail("%s: the child is not managed (zswap_active() == 0)", what);
	if (interim && pc.active && pc.active())
		pc_fail("%s: --interim: the child is managed", what);
	if (interim)
		pc.mode = PC_INACTIVE;	/* nothing to assert about eviction */
}

/* Verify all, overwrite [from, from + n) with seed, evict, verify again. */
static void work(const char *who, char *p, size_t from, size_t n, uint64_t seed)
{
	char what[128];

	snprintf(what, sizeof(what), "%s: everything after fork", who);
	pc_expect_range(what, p, NPAGES, PC_TEXT, SEED_BASE);
	pc_fill_range(p + from * PC_PAGE, n, PC_RANDOM, seed);
	snprintf(what, sizeof(what), "%s: its own writes", who);
	pc_expect_range(what, p + from * PC_PAGE, n, PC_RANDOM, seed);
	snprintf(what, sizeof(what), "%s: eviction after fork", who);
	pc_evict(what, p, NPAGES, false);
	snprintf(what, sizeof(what), "%s: its own writes, refaulted", who);
	pc_expect_range(what, p + from * PC_PAGE, n, PC_RANDOM, seed);
	snprintf(what, sizeof(what), "%s: the rest, refaulted", who);
	expect_base(what, p, 0, from);
	expect_base(what, p, from + n, NPAGES - from - n);
}

/* The same for many processes at once, lighter: verify all, then overwrite,
 * evict and refault one slice only. */
static void work_slice(const char *who, char *p, size_t from, size_t n, uint64_t seed)
{
	char what[128];

	snprintf(what, sizeof(what), "%s: everything after fork", who);
	pc_expect_range(what, p, NPAGES, PC_TEXT, SEED_BASE);
	pc_fill_range(p + from * PC_PAGE, n, PC_RANDOM, seed);
	snprintf(what, sizeof(what), "%s: its slice evicted", who);
	pc_evict(what, p + from * PC_PAGE, n, false);
	pc_expect_range(what, p + from * PC_PAGE, n, PC_RANDOM, seed);
}

static void case_basic(void)
{
	char *p = setup();
	long rss_parent = pc_rss_anon_kb();

	pid_t pid = fork_flushed();
	if (pid == 0) {
		long rss = pc_rss_anon_kb();
		child_start("basic");
		/* The pool was not decompressed for the child: it starts with
		 * the parent's resident set, not the evicted 16 MiB on top. */
		if (pc_managed())
			PC_CHECK(rss < rss_parent + 8 * 1024, "basic: the child's RssAnon right after fork is %ld KiB, the"
				 " parent's was %ld KiB: fork loaded the pool back", rss, rss_parent);
		struct zswap_stats st;
		pc_stats(&st);	/* its statistics work */
		work("basic child", p, 0, NPAGES / 2, SEED_CHILD);
		pc_expect_stored("basic child: after reading everything back", 0);
		exit(0);
	}
	work("basic parent", p, 0, NPAGES / 2, SEED_PARENT);
	wait_child("basic: the child", pid);
	pc_expect_range("basic parent: after the child", p, NPAGES / 2, PC_RANDOM, SEED_PARENT);
	expect_base("basic parent: after the child", p, NPAGES / 2, NPAGES / 2);
	pc_expect_stored("basic parent: after reading everything back", 0);
	munmap(p, NPAGES * PC_PAGE);
}

static void case_childfirst(void)
{
	char *p = setup();

	pid_t pid = fork_flushed();
	if (pid == 0) {
		child_start("childfirst");
		expect_base("childfirst child", p, 100, 4);
		_exit(0);
	}
	wait_child("childfirst: the child", pid);
	work("childfirst parent", p, NPAGES / 4, NPAGES / 4, SEED_PARENT);
	munmap(p, NPAGES * PC_PAGE);
}

/* parentfirst / killparent: this process is a subreaper; an intermediate
 * process P sets up and forks C. P exits (or is killed) while C still has
 * every evicted page to fault back. */
static void case_orphan(bool kill_parent)
{
	int go[2], started[2];

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		pc_fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	if (pipe(go) != 0 || pipe(started) != 0)
		pc_fail("pipe: %s", strerror(errno));
	pid_t mid = fork_flushed();
	if (mid == 0) {
		pc.name = "prog_fork(parent)";
		pc_pagemap_reopen();
		char *p = setup();
		pid_t c = fork_flushed();
		if (c == 0) {
			char b;
			child_start(kill_parent ? "killparent" : "parentfirst");
			if (!kill_parent) {
				/* Wait (bounded by the test's timeout) until the parent is gone. */
				while (getppid() == mid)
					pc_sleep_ms(1);
			}
			pc_expect_range("orphan child: the first quarter", p, NPAGES / 4, PC_TEXT, SEED_BASE);
			if (write(started[1], "s", 1) != 1)
				pc_fail("write: %s", strerror(errno));
			if (kill_parent && read(go[0], &b, 1) != 1)	/* the parent is dead now */
				pc_fail("read: %s", strerror(errno));
			work("orphan child", p, 0, NPAGES / 2, SEED_CHILD);
			pc_expect_stored("orphan child: after reading everything back", 0);
			_exit(0);
		}
		if (kill_parent) {
			/* Keep faulting our own pages until killed. */
			for (;;)
				pc_expect_range("killparent parent", p, NPAGES, PC_TEXT, SEED_BASE);
		}
		_exit(0);
	}
	char b;
	if (read(started[0], &b, 1) != 1)
		pc_fail("the child never started");
	if (kill_parent) {
		kill(mid, SIGKILL);
		int status;
		if (waitpid(mid, &status, 0) != mid || !WIFSIGNALED(status))
			pc_fail("killparent: the parent was not killed");
		if (write(go[1], "g", 1) != 1)
			pc_fail("write: %s", strerror(errno));
	}
	/* Reap both: the parent (unless reaped above) and the orphan. */
	for (int n = kill_parent ? 1 : 2; n > 0; n--) {
		int status;
		pid_t w = wait(&status);
		if (w < 0)
			pc_fail("wait: %s", strerror(errno));
		check_status(w == mid ? "the parent" : "the orphaned child", status);
	}
}

static void case_exec(void)
{
	char *p = setup();

	pid_t pid = fork_flushed();
	if (pid == 0) {
		child_start("exec");
		pc_expect_range("exec child: before exec", p, NPAGES, PC_TEXT, SEED_BASE);
		char *argv[] = { self, (char *)"execchild", NULL };
		extern char **environ;
		execve(self, argv, environ);
		pc_fail("execve: %s", strerror(errno));
	}
	wait_child("exec: the child", pid);
	work("exec parent", p, 0, NPAGES / 2, SEED_PARENT);
}

static void exec_child(void)
{
	char *q = pc_map(NPAGES * PC_PAGE);

	pc_fill_range(q, NPAGES, PC_BINARY, SEED_GRAND);
	pc_evict("execchild: its own memory", q, NPAGES, false);
	pc_expect_range("execchild: its own memory", q, NPAGES, PC_BINARY, SEED_GRAND);
	exit(0);
}

static void case_grand(void)
{
	char *p = setup();

	pid_t pid = fork_flushed();
	if (pid == 0) {
		child_start("grand");
		pc_fill_range(p, NPAGES / 2, PC_RANDOM, SEED_CHILD);
		pc_evict("grand child: before forking", p, NPAGES, false);
		pid_t g = fork_flushed();
		if (g == 0) {
			char *h = p + NPAGES / 2 * PC_PAGE;
			child_start("grand: the grandchild");
			pc_expect_range("grandchild: the child's writes", p, NPAGES / 2, PC_RANDOM, SEED_CHILD);
			expect_base("grandchild: the rest", p, NPAGES / 2, NPAGES / 2);
			pc_fill_range(h, NPAGES / 2, PC_RANDOM, SEED_GRAND);
			pc_evict("grandchild: its eviction", p, NPAGES, false);
			pc_expect_range("grandchild: the child's writes, refaulted", p, NPAGES / 2, PC_RANDOM, SEED_CHILD);
			pc_expect_range("grandchild: its writes, refaulted", h, NPAGES / 2, PC_RANDOM, SEED_GRAND);
			_exit(0);
		}
		pc_expect_range("grand child: its writes", p, NPAGES / 2, PC_RANDOM, SEED_CHILD);
		expect_base("grand child: the rest", p, NPAGES / 2, NPAGES / 2);
		wait_child("grand: the grandchild", g);
		pc_expect_range("grand child: its writes after the grandchild", p, NPAGES / 2, PC_RANDOM, SEED_CHILD);
		expect_base("grand child: the rest after the grandchild", p, NPAGES / 2, NPAGES / 2);
		exit(0);
	}
	wait_child("grand: the child", pid);
	pc_expect_range("grand parent: after both", p, NPAGES, PC_TEXT, SEED_BASE);
}

static void case_many(void)
{
	enum { N = 16 };
	char *p = setup();
	pid_t pids[N];

	fflush(stdout);
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			pc_fail("fork %d: %s", i, strerror(errno));
		if (pids[i] == 0) {
			child_start("many");
			size_t slice = NPAGES / N;
			work_slice("many child", p, (size_t)i * slice, slice, 100 + (uint64_t)i);
			_exit(0);
		}
	}
	for (int i = 0; i < N; i++)
		wait_child("many: a child", pids[i]);
	pc_expect_range("many parent: after 16 children", p, NPAGES, PC_TEXT, SEED_BASE);
}

/* ---- 8 threads evicting, refaulting and forking --------------------------- */

#define TH_N 8
#define TH_SLICE 256UL		/* pages per thread */
#define TH_FORKS 2

static char *th_static, *th_own;
static atomic_int th_stop;

/* pc_verify_range with a buffer of the caller's own (threads verify at once). */
static long th_verify(const char *addr, size_t npages, enum pc_kind kind, uint64_t seed)
{
	unsigned char expect[PC_PAGE];

	for (size_t i = 0; i < npages; i++) {
		pc_fill(expect, kind, pc_page_seed(seed, i));
		if (memcmp(addr + i * PC_PAGE, expect, PC_PAGE) != 0)
			return (long)i;
	}
	return -1;
}

/* In a child of a threaded parent: no stdio, no malloc; the status says it. */
static int th_child(size_t id, uint64_t ver)
{
	if (pc.mode == PC_MANAGED && !interim && !pc.active())
		return 3;
	if (th_verify(th_static, NPAGES, PC_TEXT, SEED_BASE) >= 0)
		return 4;
	if (th_verify(th_own + id * TH_SLICE * PC_PAGE, TH_SLICE, PC_BINARY, ver) >= 0)
		return 5;
	if (pc.mode == PC_MANAGED && !interim) {
		/* Its own engine: evict and refault one slice of it. */
		char *sl = th_static + id * (NPAGES / TH_N) * PC_PAGE;
		madvise(sl, NPAGES / TH_N * PC_PAGE, MADV_PAGEOUT);
		if (th_verify(th_static, NPAGES, PC_TEXT, SEED_BASE) >= 0)
			return 6;
	}
	return 0;
}

static void *th_main(void *arg)
{
	size_t id = (size_t)(uintptr_t)arg;
	char *mine = th_own + id * TH_SLICE * PC_PAGE;
	uint64_t ver = 1000 * (id + 1);

	for (int f = 0; f < TH_FORKS; f++) {
		for (int round = 0; round < 2; round++) {
			pc_fill_range(mine, TH_SLICE, PC_BINARY, ++ver);
			madvise(mine, TH_SLICE * PC_PAGE, MADV_PAGEOUT);
			madvise(th_static + id * (NPAGES / TH_N) * PC_PAGE, NPAGES / TH_N * PC_PAGE, MADV_PAGEOUT);
			if (th_verify(mine, TH_SLICE, PC_BINARY, ver) >= 0)
				pc_fail("threads: thread %zu: its own slice is wrong", id);
		}
		pid_t pid = fork();
		if (pid < 0)
			pc_fail("threads: fork: %s", strerror(errno));
		if (pid == 0)
			_exit(th_child(id, ver));
		int status;
		if (waitpid(pid, &status, 0) != pid)
			pc_fail("threads: waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			pc_fail("threads: thread %zu fork %d: the child %s %d (3: not managed, 4: static data wrong,"
				" 5: the forking thread's slice wrong, 6: wrong after its own eviction)", id, f,
				WIFEXITED(status) ? "exited with" : "died of signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	return NULL;
}

/* Reads the static data all along, so evicted pages keep being faulted. */
static void *th_reader(void *arg)
{
	uint64_t rng = 3;
	static unsigned char expect[PC_PAGE];

	(void)arg;
	while (!atomic_load(&th_stop)) {
		size_t i = (size_t)(pc_rand(&rng) % NPAGES);
		pc_fill(expect, PC_TEXT, pc_page_seed(SEED_BASE, i));
		if (memcmp(th_static + i * PC_PAGE, expect, PC_PAGE) != 0)
			pc_fail("threads: the reader: static page %zu is wrong", i);
	}
	return NULL;
}

static void case_threads(void)
{
	pthread_t t[TH_N], rd;

	th_static = setup();
	th_own = pc_map(TH_N * TH_SLICE * PC_PAGE);
	fflush(stdout);
	fflush(stderr);
	if (pthread_create(&rd, NULL, th_reader, NULL) != 0)
		pc_fail("pthread_create");
	for (size_t i = 0; i < TH_N; i++)
		if (pthread_create(&t[i], NULL, th_main, (void *)(uintptr_t)i) != 0)
			pc_fail("pthread_create");
	for (size_t i = 0; i < TH_N; i++)
		pthread_join(t[i], NULL);
	atomic_store(&th_stop, 1);
	pthread_join(rd, NULL);
	pc_expect_range("threads: the static data at the end", th_static, NPAGES, PC_TEXT, SEED_BASE);
}

int main(int argc, char **argv)
{
	pc_init("prog_fork", &argc, argv);
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		pc_fail("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	if (argc >= 2 && strcmp(argv[1], "execchild") == 0)
		exec_child();
	int i = 1;
	if (argc >= 2 && strcmp(argv[1], "--interim") == 0) {
		interim = true;
		i++;
	}
	pc_info("mode %s%s", pc_mode_name(), interim ? " (interim expected)" : "");
	for (; i < argc; i++) {
		const char *c = argv[i];
		if (strcmp(c, "basic") == 0)
			case_basic();
		else if (strcmp(c, "childfirst") == 0)
			case_childfirst();
		else if (strcmp(c, "parentfirst") == 0)
			case_orphan(false);
		else if (strcmp(c, "killparent") == 0)
			case_orphan(true);
		else if (strcmp(c, "exec") == 0)
			case_exec();
		else if (strcmp(c, "grand") == 0)
			case_grand();
		else if (strcmp(c, "many") == 0)
			case_many();
		else if (strcmp(c, "threads") == 0)
			case_threads();
		else
			pc_fail("unknown case %s", c);
		printf("%s ok\n", c);
		fflush(stdout);
	}
	return 0;
}
