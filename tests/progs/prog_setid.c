/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_setid.c - a root daemon that drops to user nobody, with threads of
 * its own paging memory meanwhile.
 *
 * The pattern of daemons that keep one capability across the change of
 * user: prctl(PR_SET_KEEPCAPS, 1), setresgid, setgroups, setresuid to
 * nobody (the effective set is then empty, the permitted one kept), capset
 * raising CAP_SETGID in the effective set, setresgid again (which needs
 * it). glibc applies each set*id call to every thread and aborts the
 * process when one thread's result differs from the caller's. Then the
 * calling thread drops every capability with capset, and no thread the
 * library started ("zswap-*" in /proc/self/task) may keep one it lacks.
 * Memory evicted before the drop and pages the threads evict and read back
 * throughout must read back whole.
 *
 * stdout: one checksum line and the ids, the same with and without the
 * library. With --hold (for the socket test): "root PID" before the drop,
 * then waits for a line on stdin; "ready PID" after it, then waits for
 * stdin's end.
 * usage: prog_setid [--hold] [--inactive-ok]
 */
#include "prog_common.h"

#include <dirent.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int capset(cap_user_header_t hdr, const cap_user_data_t data);
int capget(cap_user_header_t hdr, cap_user_data_t data);

#define NOBODY 65534
#define THREADS 3
#define THREAD_PAGES 64
#define MAIN_PAGES 512

static atomic_bool stop;

/* Through the C library's capset, or the raw system call (that nothing
 * interposes). */
static void caps_set(uint32_t effective, uint32_t permitted, bool raw)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	d[0].effective = effective;
	d[0].permitted = permitted;
	if ((raw ? syscall(SYS_capset, &h, d) : capset(&h, d)) != 0)
		pc_fail("capset(effective %#x, permitted %#x): %s", effective, permitted, strerror(errno));
}

/*
 * Keepcaps and capabilities are each thread's own, and glibc aborts a set*id
 * call whose result differs between threads: so every thread of the
 * program's sets them (what libcap's psx does for a program), each on
 * itself when the main thread asks.
 */
static struct {
	atomic_uint gen;	/* asked */
	atomic_uint done;	/* threads that did the last one */
	bool keepcaps;		/* else capabilities */
	uint32_t effective, permitted;
	bool raw;
} op;

static void op_apply(void)
{
	if (op.keepcaps)
		PC_CHECK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0, "PR_SET_KEEPCAPS: %s", strerror(errno));
	else
		caps_set(op.effective, op.permitted, op.raw);
}

static void op_all(bool keepcaps, uint32_t effective, uint32_t permitted, bool raw)
{
	op.keepcaps = keepcaps;
	op.raw = raw;
	op.effective = effective;
	op.permitted = permitted;
	atomic_store(&op.done, 0);
	atomic_fetch_add(&op.gen, 1);
	while (atomic_load(&op.done) != THREADS)
		sched_yield();
	op_apply();
}

/* A thread of the program's: fill, evict, check, until told to stop (its
 * own pattern: pc_fill_range's buffers are shared between threads); between
 * rounds, what the main thread asks. */
static void *pager(void *arg)
{
	uint64_t seed = 1000 + (uint64_t)(uintptr_t)arg;
	size_t n = THREAD_PAGES * PC_PAGE / sizeof(uint64_t);
	uint64_t *p = pc_map(THREAD_PAGES * PC_PAGE);
	unsigned int gen = 0;

	for (uint64_t round = 0; !atomic_load(&stop) || round == 0; round++) {
		for (size_t i = 0; i < n; i++)
			p[i] = pc_mix(seed + round * n + i / 64);
		pc_pageout(p, THREAD_PAGES * PC_PAGE);
		for (size_t i = 0; i < n; i++)
			if (p[i] != pc_mix(seed + round * n + i / 64))
				pc_fail("thread %lu: word %zu of round %" PRIu64 " is wrong", (unsigned long)(uintptr_t)arg,
					i, round);
		if (atomic_load(&op.gen) != gen) {
			gen = atomic_load(&op.gen);
			op_apply();
			atomic_fetch_add(&op.done, 1);
		}
	}
	return NULL;
}

/* A task's "CapPrm:" or "CapEff:" line of /proc/self/task/TID/status, and
 * whether its name starts with "zswap-". */
static uint64_t task_caps(const char *tid, const char *field, bool *library)
{
	char path[96], line[256];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	if (!(f = fopen(path, "r")))
		return 0;	/* the thread ended */
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Name:\tzswap-", 12) == 0)
			*library = true;
		if (strncmp(line, field, strlen(field)) == 0)
			v = strtoull(line + strlen(field), NULL, 16);
	}
	fclose(f);
	return v;
}

/* No library thread holds a capability the calling thread lacks. */
static void expect_no_more_caps(const char *when)
{
	static const char *const fields[] = { "CapPrm:", "CapEff:", "CapInh:" };
	char self[32];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int library = 0;

	PC_CHECK(d != NULL, "opendir /proc/self/task: %s", strerror(errno));
	snprintf(self, sizeof(self), "%ld", (long)gettid());
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		for (int i = 0; i < 3; i++) {
			bool lib = false, dummy = false;
			uint64_t theirs = task_caps(e->d_name, fields[i], &lib);
			uint64_t mine = task_caps(self, fields[i], &dummy);
			if (!lib)
				break;
			library += i == 0;
			PC_CHECK(!(theirs & ~mine), "%s: library thread %s has %s %#" PRIx64 ", the program's %#" PRIx64,
				 when, e->d_name, fields[i], theirs, mine);
		}
	}
	closedir(d);
	if (pc_managed())
		PC_CHECK(library > 0, "%s: no library thread (zswap-*) in /proc/self/task", when);
}

static void hold(const char *word, bool until_eof)
{
	char line[64];

	printf("%s %ld\n", word, (long)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) && until_eof)
		;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	bool held = argc > 1 && strcmp(argv[1], "--hold") == 0;

	pc_init("prog_setid", &argc, argv);
	if (geteuid() != 0)
		pc_skip("needs root, to drop to user nobody");
	char *mem = pc_map(MAIN_PAGES * PC_PAGE);
	pc_fill_range(mem, MAIN_PAGES, PC_BINARY, 7);
	pc_evict("before the drop", mem, MAIN_PAGES, false);
	for (uintptr_t i = 0; i < THREADS; i++)
		PC_CHECK(pthread_create(&t[i], NULL, pager, (void *)i) == 0, "pthread_create failed");
	if (held)
		hold("root", false);

	gid_t nogroup = NOBODY;
	op_all(true, 0, 0, false);
	PC_CHECK(setresgid(NOBODY, NOBODY, NOBODY) == 0, "setresgid: %s", strerror(errno));
	PC_CHECK(setgroups(1, &nogroup) == 0, "setgroups: %s", strerror(errno));
	PC_CHECK(setresuid(NOBODY, NOBODY, NOBODY) == 0, "setresuid: %s", strerror(errno));
	/* Kept in the permitted set (keepcaps), raised in the effective one
	 * by the raw system call: only the next set*id call shows it. */
	op_all(false, 1u << CAP_SETGID, 1u << CAP_SETGID, true);
	PC_CHECK(setresgid(NOBODY, NOBODY, NOBODY) == 0, "setresgid with CAP_SETGID: %s", strerror(errno));
	PC_CHECK(setgroups(0, NULL) == 0, "setgroups with CAP_SETGID: %s", strerror(errno));
	expect_no_more_caps("with CAP_SETGID");
	op_all(false, 0, 0, false);
	expect_no_more_caps("after dropping every capability");
	PC_CHECK(setresgid(NOBODY + 1, NOBODY + 1, NOBODY + 1) == -1 && errno == EPERM,
		 "setresgid without a capability did not fail with EPERM");

	pc_expect_range("memory evicted before the drop", mem, MAIN_PAGES, PC_BINARY, 7);
	atomic_store(&stop, true);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pc_evict("after the drop", mem, MAIN_PAGES, false);
	pc_expect_range("memory evicted after the drop", mem, MAIN_PAGES, PC_BINARY, 7);
	if (held)
		hold("ready", true);
	printf("sum %016" PRIx64 "\n", pc_sum(mem, MAIN_PAGES * PC_PAGE));
	printf("uid %ld euid %ld gid %ld egid %ld groups %d\n", (long)getuid(), (long)geteuid(), (long)getgid(),
	       (long)getegid(), getgroups(0, NULL));
	return 0;
}
