/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_fork.c - fork() from a program with evicted memory (src/engine/fork.h).
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
 *   vmrace      worker threads keep changing the mappings of their evicted
 *               buffers (mremap move and grow-move, munmap + mmap, and
 *               MADV_DONTNEED, then rewrite and evict) while the main thread
 *               forks in a loop; each child checks every buffer it can see
 *               against the bookkeeping the parent had at the fork (every
 *               page carries buffer id, version and index), then rewrites,
 *               evicts and refaults its copies (vm_* below)
 *   vmrace-raw  the same with mremap and munmap as raw system calls, which
 *               the library does not see (glibc's free() and realloc() of
 *               mmapped chunks make them so): the child judges the parent's
 *               events by its own address space
 *   wipeonfork  madvise(MADV_WIPEONFORK) over a range whose second half
 *               was evicted before the advice and whose first quarter is
 *               paged out after it, and over a second range moved by mremap
 *               after the advice (the flag moves with the mapping) and paged
 *               out: the child reads both wholly as zeros, never the
 *               parent's stored pages; the parent reads every byte of its
 *               own after the child exited
 *   dontfork    the same ranges with MADV_DONTFORK, which stay managed (a
 *               resident quarter is evicted after the advice): absent in the child,
 *               which maps new memory at the same addresses (through libc's
 *               mmap in one child, the raw system call in another), reads
 *               zeros there, and writes, evicts and refaults its own data;
 *               the parent intact after both
 *   dontfork-raw the same with madvise(MADV_DONTFORK) as a raw system call,
 *               which the library does not see: the child forgets what it
 *               has no mapping for
 *   rawfork     glibc's _Fork(), which runs no atfork handler: the library
 *               loads every stored page back first (the interim); the child,
 *               not managed, reads every byte of the working set; the parent
 *               goes on (evicts, refaults) as after fork
 *   rawclone    the same through glibc's clone() without CLONE_VM (the
 *               child runs a function on a stack of its own)
 *   rawclone-files the same with CLONE_FILES: the child shares the parent's
 *               descriptors, and must leave the library's open (the parent
 *               evicts and refaults after it)
 *   limit       (with a memory limit) the parent maps a little; the child
 *               maps, writes and checks three times the limit page by page:
 *               its VmHWM stays near the limit, its own store holds pages;
 *               the parent checks its own pages after the child
 * With --interim the library is expected to take the interim instead
 * (pool-lock mode): the child is a pass-through, the data still intact.
 * With --restart (no fork events: root without CAP_SYS_PTRACE) fork loads
 * every page back and the child starts a libzswap of its own: the child
 * must be managed, with the pool loaded back.
 *
 * stdout: one line per case, the same with and without the library.
 */
#include "prog_common.h"

#include <sched.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NPAGES 4096UL		/* 16 MiB */
#define SEED_BASE 11
#define SEED_CHILD 12
#define SEED_PARENT 13
#define SEED_GRAND 14

static bool interim;
static bool restart;	/* --restart */
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
		if (pc_managed() && !restart)
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

/* glibc 2.34's _Fork; weak, so that the program builds (and the case
 * skips) with an older C library. */
extern pid_t _Fork(void) __attribute__((weak));

static void case_rawfork(void)
{
	if (!_Fork)
		pc_skip("rawfork: this C library has no _Fork");
	char *p = setup();
	fflush(stdout);
	pid_t pid = _Fork();
	if (pid < 0)
		pc_fail("_Fork: %s", strerror(errno));
	if (pid == 0) {
		pc.name = "prog_fork(child)";
		if (pc.active && pc.active())
			pc_fail("rawfork: the child of _Fork is managed (zswap_active() == 1)");
		expect_base("rawfork child", p, 0, NPAGES);
		_exit(0);
	}
	wait_child("rawfork: the child", pid);
	work("rawfork parent", p, NPAGES / 4, NPAGES / 4, SEED_PARENT);
	munmap(p, NPAGES * PC_PAGE);
}

static char *rawclone_p;

static int rawclone_child(void *arg)
{
	(void)arg;
	pc.name = "prog_fork(child)";
	if (pc.active && pc.active())
		pc_fail("rawclone: the child of clone() is managed (zswap_active() == 1)");
	expect_base("rawclone child", rawclone_p, 0, NPAGES);
	return 0;
}

static void case_rawclone(int flags)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));

	rawclone_p = setup();
	fflush(stdout);
	pid_t pid = clone(rawclone_child, stack + sizeof(stack), flags | SIGCHLD, NULL);
	if (pid < 0)
		pc_fail("clone: %s", strerror(errno));
	wait_child("rawclone: the child", pid);
	work("rawclone parent", rawclone_p, NPAGES / 4, NPAGES / 4, SEED_PARENT);
	munmap(rawclone_p, NPAGES * PC_PAGE);
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

/* ---- vmrace: mappings change while the main thread forks ------------------ */

/*
 * Each worker owns one buffer of VM_PAGES pages in a window of two slots
 * (the other slot is a PROT_NONE reservation, so MREMAP_FIXED never lands on
 * anyone else's memory). Every page holds (magic, buffer, version, index)
 * and a body derived from them. The worker publishes what it is about to do
 * in its record before it does it and what it did after, so a child, whose
 * record is a snapshot at least as new as any change of the buffer it sees,
 * knows exactly what each buffer may hold:
 *   steady (lo == hi, not moving): the buffer is in slot loc, every page
 *           version lo;
 *   moving: the buffer is in one of the two slots (and nowhere else), every
 *           page version lo; never zeros at its new place;
 *   fresh (munmap + mmap, or MADV_DONTNEED, then a rewrite with version hi):
 *           either every page version lo (not done yet in the child), or
 *           each page zero or version hi, or (munmap only) nothing mapped.
 * A page of version lo beside a zero page is old data where the parent's
 * call zapped, or a stale table serving the old mapping.
 */
#define VM_WORKERS 3
#define VM_PAGES 16UL			/* 64 KiB: the test runs with ZSWAP_MIN_REGION=64K */
#define VM_SLOT ((VM_PAGES + 1) * PC_PAGE)	/* room for the grown buffer */
#define VM_MAGIC 0x7a7377666b766d72ULL
#define VM_FORKS 400
#define VM_CHILD_VER 0xc41dULL		/* the version a child writes */

struct vm_hdr {
	uint64_t magic, id, ver, idx;
};

struct vm_rec {
	char *win;			/* two slots of VM_SLOT bytes */
	_Atomic int loc;		/* the slot the buffer is in */
	_Atomic int moving;		/* mremap between the slots in progress */
	_Atomic int fresh;		/* a rewrite lo -> hi in progress */
	_Atomic uint64_t lo, hi;
	_Atomic uint64_t ops;
};

static struct vm_rec vm_recs[VM_WORKERS];
static atomic_int vm_stop;
static bool vm_raw;	/* vmrace-raw: mremap and munmap as raw system calls */

/* The calls the library does not see (as glibc's own free() and realloc()
 * make them) in vmrace-raw; the interposed ones otherwise. */
static void *vm_mremap(void *old, size_t old_len, size_t new_len, int flags, void *to)
{
	if (!vm_raw)
		return mremap(old, old_len, new_len, flags, to);
	long r = syscall(SYS_mremap, old, old_len, new_len, flags, to);
	return r == -1 ? MAP_FAILED : (void *)r;
}

static int vm_munmap(void *p, size_t len)
{
	return vm_raw ? (int)syscall(SYS_munmap, p, len) : munmap(p, len);
}
static char vm_maps[256 * 1024];	/* /proc/self/maps in the child: no malloc there */

static uint64_t vm_word(uint64_t id, uint64_t ver, uint64_t idx)
{
	return pc_mix((id << 48) ^ (ver << 16) ^ idx);
}

static void vm_fill_page(char *pg, uint64_t id, uint64_t ver, uint64_t idx)
{
	struct vm_hdr h = { VM_MAGIC, id, ver, idx };
	uint64_t *w = (uint64_t *)pg, base = vm_word(id, ver, idx);

	for (size_t k = sizeof(h) / 8; k < PC_PAGE / 8; k++)
		w[k] = base + k * 0x9e3779b97f4a7c15ULL;
	memcpy(pg, &h, sizeof(h));
}

/* The version a page holds: 0 for a zero page, -1 for anything else wrong. */
static int64_t vm_page_ver(const char *pg, uint64_t id, uint64_t idx)
{
	struct vm_hdr h;
	const uint64_t *w = (const uint64_t *)pg;

	memcpy(&h, pg, sizeof(h));
	if (h.magic != VM_MAGIC) {
		for (size_t k = 0; k < PC_PAGE / 8; k++)
			if (w[k])
				return -1;
		return 0;
	}
	if (h.id != id || h.idx != idx || h.ver == 0 || h.ver > INT64_MAX)
		return -1;
	uint64_t base = vm_word(id, h.ver, idx);
	for (size_t k = sizeof(h) / 8; k < PC_PAGE / 8; k++)
		if (w[k] != base + k * 0x9e3779b97f4a7c15ULL)
			return -1;
	return (int64_t)h.ver;
}

static void vm_fill(char *b, uint64_t id, uint64_t ver)
{
	for (size_t i = 0; i < VM_PAGES; i++)
		vm_fill_page(b + i * PC_PAGE, id, ver, i);
}

/* In the parent's workers: the whole buffer holds version ver. */
static void vm_expect(const char *what, const char *b, uint64_t id, uint64_t ver)
{
	for (size_t i = 0; i < VM_PAGES; i++) {
		int64_t v = vm_page_ver(b + i * PC_PAGE, id, i);
		if (v != (int64_t)ver)
			pc_fail("vmrace: buffer %" PRIu64 " %s: page %zu holds version %" PRId64 ", expected %" PRIu64,
				id, what, i, v, ver);
	}
}

/* Put the PROT_NONE reservation back over [p, p + len) (a slot we left). */
static void vm_reserve(char *p, size_t len)
{
	void *r = mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (r != p)
		pc_fail("vmrace: re-reserving %p: %s (another mapping took the hole)", (void *)p,
			r == MAP_FAILED ? strerror(errno) : "placed elsewhere");
}

static void *vm_worker(void *arg)
{
	size_t id = (size_t)(uintptr_t)arg;
	struct vm_rec *r = &vm_recs[id];
	size_t len = VM_PAGES * PC_PAGE;

	for (uint64_t n = 0; !atomic_load(&vm_stop); n++) {
		int loc = atomic_load(&r->loc);
		char *cur = r->win + (size_t)loc * VM_SLOT, *oth = r->win + (size_t)(1 - loc) * VM_SLOT;
		uint64_t v = atomic_load(&r->lo);
		void *m;

		switch (n % 4) {
		case 0:	/* move to the other slot */
		case 1:	/* grow-move, then shrink back (the tail's UNMAP) */
			atomic_store(&r->moving, 1);
			m = vm_mremap(cur, len, n % 4 ? len + PC_PAGE : len, MREMAP_MAYMOVE | MREMAP_FIXED, oth);
			if (m != oth)
				pc_fail("vmrace: mremap: %s", m == MAP_FAILED ? strerror(errno) : "moved elsewhere");
			atomic_store(&r->loc, 1 - loc);
			atomic_store(&r->moving, 0);
			if (n % 4) {
				if (vm_mremap(oth, len + PC_PAGE, len, 0, NULL) != oth)
					pc_fail("vmrace: mremap (shrink): %s", strerror(errno));
				vm_reserve(oth + len, PC_PAGE);
			}
			vm_reserve(cur, len);
			cur = oth;
			break;
		case 2:	/* munmap + mmap at the same place, rewritten */
			atomic_store(&r->hi, v + 1);
			atomic_store(&r->fresh, 1);
			if (vm_munmap(cur, len) != 0)
				pc_fail("vmrace: munmap: %s", strerror(errno));
			m = mmap(cur, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (m != cur)
				pc_fail("vmrace: mmap over the hole: %s", m == MAP_FAILED ? strerror(errno) : "placed elsewhere");
			vm_fill(cur, id + 1, v + 1);
			pc_pageout(cur, len);
			atomic_store(&r->lo, v + 1);
			atomic_store(&r->fresh, 0);
			break;
		case 3:	/* MADV_DONTNEED of a half-resident buffer, rewritten */
			vm_expect("before MADV_DONTNEED", cur, id + 1, v);	/* all back in */
			pc_pageout(cur, len / 2);
			atomic_store(&r->hi, v + 1);
			atomic_store(&r->fresh, 1);
			if (madvise(cur, len, MADV_DONTNEED) != 0)
				pc_fail("vmrace: madvise(MADV_DONTNEED): %s", strerror(errno));
			for (size_t i = 0; i < VM_PAGES; i++)
				if (!pc_page_is_zero(cur + i * PC_PAGE))
					pc_fail("vmrace: buffer %zu: page %zu not zero after MADV_DONTNEED", id + 1, i);
			vm_fill(cur, id + 1, v + 1);
			pc_pageout(cur, len);
			atomic_store(&r->lo, v + 1);
			atomic_store(&r->fresh, 0);
			break;
		}
		vm_expect("after a change", cur, id + 1, atomic_load(&r->lo));
		pc_pageout(cur, len);
		atomic_fetch_add(&r->ops, 1);
	}
	return NULL;
}

/* In the child: [p, p + len) is wholly covered by read-write private
 * mappings (raw reads of /proc/self/maps; the child may not malloc). */
static bool vm_mapped(const char *p, size_t len)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t k;

	if (fd < 0)
		return false;
	while (n < sizeof(vm_maps) - 1 && (k = read(fd, vm_maps + n, sizeof(vm_maps) - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	vm_maps[n] = '\0';
	uintptr_t pos = (uintptr_t)p, end = pos + len;
	for (char *l = vm_maps; *l && pos < end;) {
		char *eol = strchr(l, '\n');
		uintptr_t s = strtoul(l, &l, 16), e = strtoul(l + 1, &l, 16);
		if (s <= pos && e > pos && l[1] == 'r' && l[2] == 'w')
			pos = e;
		if (!eol)
			break;
		l = eol + 1;
	}
	return pos >= end;
}

static int vm_child_say(uint64_t id, const char *msg, size_t page, int64_t got, const struct vm_rec *r)
{
	char line[256];

	snprintf(line, sizeof(line), "prog_fork(child): FAIL: vmrace: buffer %" PRIu64 ": %s (page %zu holds version %"
		 PRId64 "; at the fork: slot %d, moving %d, fresh %d, versions %" PRIu64 "..%" PRIu64 ")\n",
		 id, msg, page, got, r->loc, r->moving, r->fresh, (uint64_t)r->lo, (uint64_t)r->hi);
	pc_write_str(2, line);
	return 20;
}

/* One buffer, as the child sees it. Returns 0 or the child's exit status. */
static int vm_child_check(size_t w)
{
	const struct vm_rec *r = &vm_recs[w];
	uint64_t id = w + 1, lo = r->lo, hi = r->hi;
	size_t len = VM_PAGES * PC_PAGE;
	char *at[2] = { r->win, r->win + VM_SLOT }, *b = NULL;
	int nmapped = 0;

	for (int s = 0; s < 2; s++) {
		if ((s == r->loc || r->moving) && vm_mapped(at[s], len)) {
			b = at[s];
			nmapped++;
		} else if (s != r->loc && !r->moving && vm_mapped(at[s], PC_PAGE)) {
			return vm_child_say(id, "mapped in the slot it left", 0, 0, r);
		}
	}
	if (nmapped > 1)
		return vm_child_say(id, "mapped in both slots", 0, 0, r);
	if (!b)
		return r->fresh ? 0 : vm_child_say(id, "not mapped", 0, 0, r);
	/* Either every page holds lo, or (fresh) the rewrite's order: pages of
	 * hi, at most one page torn (the one being written when the kernel
	 * copied it), then zeros. */
	size_t i = 0, nlo = 0;
	int64_t v = 0;
	for (size_t k = 0; k < VM_PAGES; k++)
		nlo += vm_page_ver(b + k * PC_PAGE, id, k) == (int64_t)lo;
	if (nlo == VM_PAGES)
		goto own;
	if (!r->fresh) {
		while (i < VM_PAGES && (v = vm_page_ver(b + i * PC_PAGE, id, i)) == (int64_t)lo)
			i++;
		return vm_child_say(id, nlo ? (v ? "a page is wrong" : "pages lost (zeros)") : "its data is gone",
				    i, v, r);
	}
	while (i < VM_PAGES && (v = vm_page_ver(b + i * PC_PAGE, id, i)) == (int64_t)hi)
		i++;
	if (i < VM_PAGES && v != 0)
		i++;	/* torn, or hi */
	for (; i < VM_PAGES; i++)
		if ((v = vm_page_ver(b + i * PC_PAGE, id, i)) != 0)
			return vm_child_say(id, v == (int64_t)lo ? "old data beside discarded or rewritten pages"
								 : "a page is wrong after the rewrite", i, v, r);
own:
	/* Its own copy: rewrite, evict, refault (a stale table entry would
	 * serve the parent's old page, or lose the child's). */
	vm_fill(b, id, VM_CHILD_VER);
	pc_pageout(b, len);
	for (i = 0; i < VM_PAGES; i++) {
		v = vm_page_ver(b + i * PC_PAGE, id, i);
		if (v != (int64_t)VM_CHILD_VER)
			return vm_child_say(id, "the child's own write, evicted and refaulted, is wrong", i, v, r) + 1;
	}
	return 0;
}

static int vm_child(void)
{
	if (pc.mode == PC_MANAGED && !pc.active())
		return 3;
	for (size_t w = 0; w < VM_WORKERS; w++) {
		int rc = vm_child_check(w);
		if (rc)
			return rc;
	}
	return 0;
}

static void case_vmrace(void)
{
	pthread_t t[VM_WORKERS];
	size_t len = VM_PAGES * PC_PAGE;

	for (size_t w = 0; w < VM_WORKERS; w++) {
		struct vm_rec *r = &vm_recs[w];
		r->win = mmap(NULL, 2 * VM_SLOT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r->win == MAP_FAILED)
			pc_fail("vmrace: mmap: %s", strerror(errno));
		if (munmap(r->win, len) != 0 ||
		    mmap(r->win, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) !=
			    r->win)
			pc_fail("vmrace: mapping buffer %zu: %s", w + 1, strerror(errno));
		atomic_store(&r->lo, 1);
		atomic_store(&r->hi, 1);
		vm_fill(r->win, w + 1, 1);
		size_t ev = pc_evict("vmrace: setup", r->win, VM_PAGES, false);
		if (pc_managed())
			PC_CHECK(ev == VM_PAGES, "vmrace: setup: evicted %zu of %lu pages", ev, VM_PAGES);
	}
	fflush(stdout);
	fflush(stderr);
	for (size_t w = 0; w < VM_WORKERS; w++)
		if (pthread_create(&t[w], NULL, vm_worker, (void *)(uintptr_t)w) != 0)
			pc_fail("pthread_create");
	for (int f = 0; f < VM_FORKS; f++) {
		pid_t pid = fork();
		if (pid < 0)
			pc_fail("vmrace: fork: %s", strerror(errno));
		if (pid == 0)
			_exit(vm_child());
		int status;
		if (waitpid(pid, &status, 0) != pid)
			pc_fail("vmrace: waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			pc_fail("vmrace: fork %d: the child %s %d (3: not managed, 20: a buffer wrong, see above; 21: the"
				" child's own rewrite wrong)", f, WIFEXITED(status) ? "exited with" : "died of signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	atomic_store(&vm_stop, 1);
	uint64_t ops = 0;
	for (size_t w = 0; w < VM_WORKERS; w++) {
		pthread_join(t[w], NULL);
		ops += atomic_load(&vm_recs[w].ops);
		const struct vm_rec *r = &vm_recs[w];
		vm_expect("at the end", r->win + (size_t)r->loc * VM_SLOT, w + 1, r->lo);
	}
	pc_info("vmrace: %d forks, %" PRIu64 " mapping changes", VM_FORKS, ops);
}

/* --- wipeonfork, dontfork ------------------------------------------------ */

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

#define FA_PAGES 1024UL		/* 4 MiB per range, managed at the default ZSWAP_MIN_REGION */

/* Two ranges with the advice: p, and q moved by mremap after it. p's
 * second half is evicted before the advice, its first quarter paged out
 * after it; q is paged out after its move. Managed, the parent's pages
 * must be back (or given to no child) by the time it forks. */
static void fa_setup(int advice, bool raw, const char *name, char **pp, char **qp)
{
	size_t len = FA_PAGES * PC_PAGE;
	char what[128];
	char *p = pc_map(len), *q = pc_map(len);

	pc_fill_range(p, FA_PAGES, PC_TEXT, SEED_BASE);
	pc_fill_range(q, FA_PAGES, PC_TEXT, SEED_PARENT);
	snprintf(what, sizeof(what), "%s: the second half evicted before the advice", name);
	size_t ev = pc_evict(what, p + FA_PAGES / 2 * PC_PAGE, FA_PAGES / 2, false);
	if (pc_managed())
		PC_CHECK(ev == FA_PAGES / 2, "%s: evicted %zu of %lu pages", what, ev, FA_PAGES / 2);
	if (raw ? syscall(SYS_madvise, p, len, advice) != 0 || syscall(SYS_madvise, q, len, advice) != 0
		: madvise(p, len, advice) != 0 || madvise(q, len, advice) != 0)
		pc_fail("%s: madvise: %s", name, strerror(errno));
	/* munlock over the range (it was never locked: the call succeeds)
	 * must not make it manageable again: the kernel still wipes it or
	 * leaves it out at every fork. */
	if (munlock(p, len) != 0)
		pc_fail("%s: munlock: %s", name, strerror(errno));
	/* Asking for eviction after the advice is allowed, and must not hand
	 * the child the parent's pages either. */
	pc_pageout(p, FA_PAGES / 4 * PC_PAGE);
	char *t = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED)
		pc_fail("%s: mmap: %s", name, strerror(errno));
	if (mremap(q, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, t) != t)
		pc_fail("%s: mremap: %s", name, strerror(errno));
	pc_pageout(t, len);
	*pp = p;
	*qp = t;
}

/* The parent's own data, every byte, after its children exited. */
static void fa_parent_check(const char *name, const char *p, const char *q)
{
	char what[128];

	snprintf(what, sizeof(what), "%s parent: its range after the child", name);
	pc_expect_range(what, p, FA_PAGES, PC_TEXT, SEED_BASE);
	snprintf(what, sizeof(what), "%s parent: its moved range after the child", name);
	pc_expect_range(what, q, FA_PAGES, PC_TEXT, SEED_PARENT);
	munmap((void *)p, FA_PAGES * PC_PAGE);
	munmap((void *)q, FA_PAGES * PC_PAGE);
}

static void case_wipeonfork(void)
{
	char *p, *q;

	fa_setup(MADV_WIPEONFORK, false, "wipeonfork", &p, &q);
	pid_t pid = fork_flushed();
	if (pid == 0) {
		child_start("wipeonfork");
		/* The kernel gives the child these ranges empty: zeros, the
		 * pages the parent had stored included. */
		pc_expect_zero("wipeonfork child: pages the parent evicted before the advice",
			       p + FA_PAGES / 2 * PC_PAGE, FA_PAGES / 2);
		pc_expect_zero("wipeonfork child: pages paged out after the advice", p, FA_PAGES / 4);
		pc_expect_zero("wipeonfork child: pages resident throughout",
			       p + FA_PAGES / 4 * PC_PAGE, FA_PAGES / 4);
		pc_expect_zero("wipeonfork child: the range moved after the advice", q, FA_PAGES);
		/* And the child's own writes there stay its own. */
		pc_fill_range(p, FA_PAGES, PC_RANDOM, SEED_CHILD);
		pc_pageout(p, FA_PAGES * PC_PAGE);
		pc_expect_range("wipeonfork child: its own writes", p, FA_PAGES, PC_RANDOM, SEED_CHILD);
		exit(0);
	}
	wait_child("wipeonfork: the child", pid);
	fa_parent_check("wipeonfork", p, q);
}

/* A child of dontfork: [at, at + FA_PAGES) is not mapped here; map new
 * memory there (libc's mmap, or the raw system call the library does not
 * see), which reads zeros and is the child's own to evict and refault. */
static void fa_dontfork_map(const char *who, char *at, bool raw)
{
	size_t len = FA_PAGES * PC_PAGE;
	unsigned char vec;
	char what[128];

	if (mincore(at, PC_PAGE, &vec) == 0 || errno != ENOMEM)
		pc_fail("%s: %p is mapped in the child (MADV_DONTFORK)", who, (void *)at);
	int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	void *m = raw ? (void *)syscall(SYS_mmap, at, len, prot, flags, -1, 0) : mmap(at, len, prot, flags, -1, 0);
	if (m != at)
		pc_fail("%s: mmap at %p: %s", who, (void *)at, m == MAP_FAILED ? strerror(errno) : "placed elsewhere");
	snprintf(what, sizeof(what), "%s: new memory at the same address", who);
	pc_expect_zero(what, at, FA_PAGES);
	pc_fill_range(at, FA_PAGES, PC_RANDOM, SEED_CHILD);
	snprintf(what, sizeof(what), "%s: its own memory there, evicted", who);
	pc_evict(what, at, FA_PAGES, false);
	pc_expect_range(what, at, FA_PAGES, PC_RANDOM, SEED_CHILD);
}

static void case_dontfork(bool raw_advice)
{
	char *p, *q;

	fa_setup(MADV_DONTFORK, raw_advice, "dontfork", &p, &q);
	/* The range stays managed (V8 gives its whole heap MADV_DONTFORK):
	 * its resident quarter is evicted as any managed page is. */
	size_t ev = pc_evict("dontfork: resident pages after the advice", p + FA_PAGES / 4 * PC_PAGE,
			     FA_PAGES / 4, false);
	if (pc_managed())
		PC_CHECK(ev == FA_PAGES / 4, "dontfork: evicted %zu of %lu pages after the advice", ev,
			 FA_PAGES / 4);
	for (int raw = 0; raw < 2; raw++) {
		pid_t pid = fork_flushed();
		if (pid == 0) {
			child_start("dontfork");
			fa_dontfork_map(raw ? "dontfork child (raw mmap)" : "dontfork child (mmap)", p, raw);
			fa_dontfork_map(raw ? "dontfork child (raw mmap), moved range" :
				       "dontfork child (mmap), moved range", q, raw);
			exit(0);
		}
		wait_child("dontfork: the child", pid);
	}
	fa_parent_check("dontfork", p, q);
}

/*
 * compact: forks while the reclaimer compacts the pool (run under
 * ZSWAP_MEMORY_LIMIT). Each round gives back a pseudo-random half of a
 * mostly stored working set (holes all over the pool's zspages), forks a
 * child that checks every third page, and rewrites the freed pages in the
 * parent meanwhile: the charge climbs over the limit and reclaim compacts
 * (src/reclaim/reclaim.c reclaim_compact) while the child runs. A fork that copied
 * the pool with a class lock held or an object half moved would hang the
 * child or give it wrong bytes.
 */
#define CP_PAGES	(64 * PC_MIB / PC_PAGE)
#define CP_FREED	UINT32_MAX

static uint32_t *cp_ver;

static void cp_check(const char *who, const char *p, size_t i)
{
	static unsigned char expect[PC_PAGE];

	if (cp_ver[i] == CP_FREED)
		memset(expect, 0, PC_PAGE);
	else
		pc_fill(expect, PC_TEXT, pc_page_seed(SEED_BASE + cp_ver[i], i));
	if (memcmp(p + i * PC_PAGE, expect, PC_PAGE) != 0)
		pc_fail("compact: %s: page %zu (version %u) is wrong", who, i, cp_ver[i]);
}

static void case_compact(void)
{
	char *p = pc_map(CP_PAGES * PC_PAGE);

	cp_ver = calloc(CP_PAGES, sizeof(*cp_ver));
	if (!cp_ver)
		pc_fail("calloc");
	pc_fill_range(p, CP_PAGES, PC_TEXT, SEED_BASE);
	for (uint32_t r = 1; r <= 6; r++) {
		for (size_t i = 0; i < CP_PAGES; i++) {
			if (!(pc_mix(i * 0x9e3779b97f4a7c15ull + r) & 1))
				continue;
			if (madvise(p + i * PC_PAGE, PC_PAGE, MADV_DONTNEED) != 0)
				pc_fail("madvise(MADV_DONTNEED): %s", strerror(errno));
			cp_ver[i] = CP_FREED;
		}
		pid_t pid = fork_flushed();
		if (pid == 0) {
			child_start("compact");
			for (size_t i = 0; i < CP_PAGES; i += 3)
				cp_check("child", p, i);
			_exit(0);
		}
		for (size_t i = 0; i < CP_PAGES; i++)
			if (cp_ver[i] == CP_FREED) {
				cp_ver[i] = r;
				pc_fill(p + i * PC_PAGE, PC_TEXT, pc_page_seed(SEED_BASE + r, i));
			}
		wait_child("compact", pid);
	}
	for (size_t i = 0; i < CP_PAGES; i++)
		cp_check("parent", p, i);
	free(cp_ver);
	munmap(p, CP_PAGES * PC_PAGE);
}

static void case_limit(void)
{
	const char *lim = getenv("ZSWAP_MEMORY_LIMIT");
	size_t limit = lim ? strtoull(lim, NULL, 10) << 20 : 32UL << 20;
	size_t npages = 3 * limit / PC_PAGE;
	char *own = pc_map(NPAGES / 4 * PC_PAGE);

	pc_fill_range(own, NPAGES / 4, PC_TEXT, SEED_BASE);
	pid_t pid = fork_flushed();
	if (pid == 0) {
		child_start("limit");
		char *p = pc_map(npages * PC_PAGE);
		pc_fill_range(p, npages, PC_TEXT, SEED_CHILD);
		pc_expect_range("limit child: three times its limit", p, npages, PC_TEXT, SEED_CHILD);
		expect_base("limit child: the parent's pages", own, 0, NPAGES / 4);
		struct zswap_stats st;
		pc_stats(&st);
		fprintf(stderr, "prog_fork: stat child_vmhwm_kb=%ld\n", pc_status_kb("VmHWM"));
		fprintf(stderr, "prog_fork: stat child_stored_pages=%llu\n", (unsigned long long)st.stored_pages);
		exit(0);
	}
	wait_child("limit: the child", pid);
	expect_base("limit parent: after the child", own, 0, NPAGES / 4);
	struct zswap_stats st;
	pc_stats(&st);
	fprintf(stderr, "prog_fork: stat parent_stored_pages=%llu\n", (unsigned long long)st.stored_pages);
	printf("limit: %zu pages in the child, the parent intact\n", npages);
	munmap(own, NPAGES / 4 * PC_PAGE);
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
	} else if (argc >= 2 && strcmp(argv[1], "--restart") == 0) {
		restart = true;
		i++;
	}
	pc_info("mode %s%s", pc_mode_name(), interim ? " (interim expected)" : "");
	for (; i < argc; i++) {
		const char *c = argv[i];
		if (strcmp(c, "basic") == 0)
			case_basic();
		else if (strcmp(c, "childfirst") == 0)
			case_childfirst();
		else if (strcmp(c, "rawfork") == 0)
			case_rawfork();
		else if (strcmp(c, "rawclone") == 0)
			case_rawclone(0);
		else if (strcmp(c, "rawclone-files") == 0)
			case_rawclone(CLONE_FILES);
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
		else if (strcmp(c, "vmrace") == 0)
			case_vmrace();
		else if (strcmp(c, "vmrace-raw") == 0) {
			vm_raw = true;
			case_vmrace();
		}
		else if (strcmp(c, "wipeonfork") == 0)
			case_wipeonfork();
		else if (strcmp(c, "dontfork") == 0)
			case_dontfork(false);
		else if (strcmp(c, "dontfork-raw") == 0)
			case_dontfork(true);
		else if (strcmp(c, "compact") == 0)
			case_compact();
		else if (strcmp(c, "limit") == 0)
			case_limit();
		else
			pc_fail("unknown case %s", c);
		printf("%s ok\n", c);
		fflush(stdout);
	}
	return 0;
}
