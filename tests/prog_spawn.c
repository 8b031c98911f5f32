/*
 * prog_spawn.c - new processes from a program with evicted memory.
 *
 * The parent fills and evicts 8 MiB, then, per case:
 *   spawn      posix_spawn(2) of this program as a child;
 *   system     system(3) (a shell, itself preloaded, runs the child);
 *   vfork      vfork + execve;
 *   exec       execve of the child in place of the parent (no return);
 *   fork       fork(): the child reads (and writes) the parent's previously
 *              evicted pages, then exits with exit(3); the parent reads them
 *              after (the interim contract: fork never corrupts memory);
 *   forkevict  the same, then the parent evicts those pages again: a
 *              program that forked once keeps paging;
 *   forkthreads fork again and again while another thread faults through
 *              evicted memory;
 *   cloexec    every userfaultfd and /proc descriptor the library holds is
 *              close-on-exec (a child must never inherit the parent's).
 * The child ("child" argument) has its own libzswap: fresh counters, and it
 * evicts and reads back its own memory. The parent's data must be intact after
 * every case and its store empty once read back.
 *
 * stdout: one line per case and per child; the same with and without the library.
 * usage: prog_spawn [--inactive-ok] CASE...
 *        prog_spawn child [managed]
 */
#include "prog_common.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define NPAGES 2048UL
#define LEN (NPAGES * PC_PAGE)

extern char **environ;

static char self[4096];

static void child_main(bool want_managed)
{
	struct zswap_stats st;
	char *p;

	if (want_managed && !pc_managed())
		pc_fail("child: the parent is managed but libzswap is not active in the child (mode %s)", pc_mode_name());
	pc_stats(&st);
	PC_CHECK(st.stored_pages == 0 && st.evicted_pages == 0 && st.zswpout == 0,
		 "child: counters are not fresh (stored_pages %" PRIu64 ", evicted_pages %" PRIu64 "): not its own instance",
		 st.stored_pages, st.evicted_pages);
	p = pc_map(LEN);
	pc_fill_range(p, NPAGES, PC_TEXT, 77);
	size_t ev = pc_evict("child: its own memory", p, NPAGES, false);
	if (pc_managed())
		PC_CHECK(ev == NPAGES, "child: evicted %zu of %zu pages", ev, NPAGES);
	pc_expect_range("child: its own memory", p, NPAGES, PC_TEXT, 77);
	pc_expect_stored("child", 0);
	printf("child ok\n");
	fflush(stdout);
	exit(0);
}

static void check_status(const char *what, int status)
{
	if (WIFSIGNALED(status))
		pc_fail("%s: the child was killed by signal %d", what, WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		pc_fail("%s: the child exited with status %d", what, WEXITSTATUS(status));
}

static char *child_argv[4];

static void set_child_argv(void)
{
	child_argv[0] = self;
	child_argv[1] = (char *)"child";
	child_argv[2] = pc_managed() ? (char *)"managed" : NULL;
	child_argv[3] = NULL;
}

static void case_spawn(void)
{
	pid_t pid;
	int status;

	set_child_argv();
	fflush(stdout);
	int rc = posix_spawn(&pid, self, NULL, NULL, child_argv, environ);
	if (rc != 0)
		pc_fail("posix_spawn: %s", strerror(rc));
	if (waitpid(pid, &status, 0) != pid)
		pc_fail("waitpid: %s", strerror(errno));
	check_status("posix_spawn", status);
}

static void case_system(void)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "'%s' child %s", self, pc_managed() ? "managed" : "");
	fflush(stdout);
	int status = system(cmd);
	if (status == -1)
		pc_fail("system: %s", strerror(errno));
	check_status("system", status);
}

static void case_vfork(void)
{
	int status;

	set_child_argv();
	fflush(stdout);
	pid_t pid = vfork();
	if (pid < 0)
		pc_fail("vfork: %s", strerror(errno));
	if (pid == 0) {
		execve(self, child_argv, environ);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		pc_fail("waitpid: %s", strerror(errno));
	check_status("vfork+execve", status);
}

static void case_exec(void)
{
	set_child_argv();
	printf("exec: replacing the process\n");
	fflush(stdout);
	execve(self, child_argv, environ);
	pc_fail("execve %s: %s", self, strerror(errno));
}

static void fork_child_body(char *p)
{
	pc_pagemap_reopen();
	/* The parent's evicted pages, read in the child: intact. */
	long bad = pc_verify_range(p, NPAGES, PC_TEXT, 5);
	if (bad >= 0) {
		pc_write_str(2, "prog_spawn: FAIL: fork: the child read a wrong page of the parent's evicted memory\n");
		_exit(3);
	}
	/* Its own writes (copy on write) do not reach the parent. */
	pc_fill_range(p, 16, PC_RANDOM, 6);
	if (pc_verify_range(p, 16, PC_RANDOM, 6) >= 0) {
		pc_write_str(2, "prog_spawn: FAIL: fork: the child's writes did not stick\n");
		_exit(4);
	}
}

static void case_fork(char *p, bool evict_after)
{
	int status;

	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		pc_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		fork_child_body(p);
		exit(0);	/* exit(3): atexit handlers and destructors run in the child */
	}
	if (waitpid(pid, &status, 0) != pid)
		pc_fail("waitpid: %s", strerror(errno));
	check_status("fork", status);
	pc_expect_range("fork: the parent's memory after the child ran", p, NPAGES, PC_TEXT, 5);
	if (!evict_after)
		return;
	/* The parent still evicts after a fork: the pages it had at fork time
	 * (shared with the child until it exited) as well as new ones. */
	char *q = pc_map(LEN);
	pc_fill_range(q, NPAGES, PC_BINARY, 7);
	size_t ev = pc_evict("forkevict: a mapping made after fork", q, NPAGES, false);
	if (pc_managed())
		PC_CHECK(ev == NPAGES, "forkevict: %zu of %zu pages of a new mapping evicted after fork", ev, NPAGES);
	pc_expect_range("forkevict: a mapping made after fork", q, NPAGES, PC_BINARY, 7);
	munmap(q, LEN);
	pc_evict("forkevict: the pages the parent had at fork time", p, NPAGES, false);
	pc_expect_range("forkevict: the parent's memory evicted after fork", p, NPAGES, PC_TEXT, 5);
}

static atomic_int ft_stop;

static void *ft_main(void *arg)
{
	char *p = arg;
	static unsigned char expect[PC_PAGE];

	while (!atomic_load(&ft_stop)) {
		for (size_t i = 0; i < NPAGES && !atomic_load(&ft_stop); i++) {
			pc_fill(expect, PC_TEXT, pc_page_seed(5, i));
			if (memcmp(p + i * PC_PAGE, expect, PC_PAGE) != 0)
				pc_fail("forkthreads: the faulting thread read a wrong page %zu", i);
		}
	}
	return NULL;
}

static void case_forkthreads(char *p)
{
	pthread_t t;

	if (pthread_create(&t, NULL, ft_main, p) != 0)
		pc_fail("pthread_create");
	for (int i = 0; i < 10; i++) {
		int status;
		pc_pageout(p, LEN);	/* the thread faults everything back meanwhile */
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			pc_fail("fork: %s", strerror(errno));
		if (pid == 0) {
			fork_child_body(p);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid)
			pc_fail("waitpid: %s", strerror(errno));
		check_status("forkthreads", status);
	}
	atomic_store(&ft_stop, 1);
	pthread_join(t, NULL);
	pc_expect_range("forkthreads: the parent's memory", p, NPAGES, PC_TEXT, 5);
}

static void case_cloexec(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int uffds = 0, bad = 0;

	if (!d)
		pc_fail("opendir /proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d))) {
		char path[300], target[512];
		int fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd == dirfd(d) || fd == pc.pagemap_fd)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		bool libs = strncmp(target, "anon_inode:", 11) == 0 || strncmp(target, "/proc/", 6) == 0;
		if (strstr(target, "userfaultfd"))
			uffds++;
		if (!libs)
			continue;
		int flags = fcntl(fd, F_GETFD);
		if (flags >= 0 && !(flags & FD_CLOEXEC)) {
			pc_info("cloexec: descriptor %d (%s) is not close-on-exec", fd, target);
			bad++;
		}
	}
	closedir(d);
	pc_info("cloexec: %d userfaultfd descriptor(s)", uffds);
	if (pc_managed())
		PC_CHECK(uffds >= 1, "cloexec: the library is active but holds no userfaultfd descriptor");
	PC_CHECK(bad == 0, "cloexec: %d descriptor(s) of the library would leak into every child", bad);
}

int main(int argc, char **argv)
{
	pc_init("prog_spawn", &argc, argv);
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		pc_fail("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	if (argc >= 2 && strcmp(argv[1], "child") == 0)
		child_main(argc >= 3 && strcmp(argv[2], "managed") == 0);

	pc_info("mode %s", pc_mode_name());
	char *p = pc_map(LEN);
	pc_fill_range(p, NPAGES, PC_TEXT, 5);
	for (int i = 1; i < argc; i++) {
		const char *c = argv[i];
		pc_evict(c, p, NPAGES, false);
		if (strcmp(c, "spawn") == 0)
			case_spawn();
		else if (strcmp(c, "system") == 0)
			case_system();
		else if (strcmp(c, "vfork") == 0)
			case_vfork();
		else if (strcmp(c, "exec") == 0)
			case_exec();
		else if (strcmp(c, "fork") == 0)
			case_fork(p, false);
		else if (strcmp(c, "forkevict") == 0)
			case_fork(p, true);
		else if (strcmp(c, "forkthreads") == 0)
			case_forkthreads(p);
		else if (strcmp(c, "cloexec") == 0)
			case_cloexec();
		else
			pc_fail("unknown case %s", c);
		pc_expect_range(c, p, NPAGES, PC_TEXT, 5);
		pc_expect_stored(c, 0);
		printf("%s ok\n", c);
	}
	return 0;
}
