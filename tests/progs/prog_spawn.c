/* SPDX-License-Identifier: GPL-2.0-or-later */
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
 *              close-on-exec (a child must never inherit the parent's);
 *   spawnargs  posix_spawn(3) with the path, every argv string, the argv
 *              array, the envp array and its strings (one of them a variable
 *              the child must see) on evicted pages of a managed mapping,
 *              each object straddling a page boundary: the child ("argcheck")
 *              checks each argument and reports them on a pipe, the parent
 *              compares the report with its own copies, and the mapping must
 *              hold what it held;
 *   vforkargs  the same with vfork + execve;
 *   execargs   the same with execve in place (no return: the script checks
 *              the child's "argcheck ok").
 * The child ("child" argument) has its own libzswap: fresh counters, and it
 * evicts and reads back its own memory. The parent's data must be intact after
 * every case and its store empty once read back.
 *
 * stdout: one line per case and per child; the same with and without the library.
 * usage: prog_spawn [--inactive-ok] CASE...
 *        prog_spawn child [managed]
 *        prog_spawn argcheck ARGS...     (what spawnargs and friends run)
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

/* ---- execve and posix_spawn with every argument in evicted memory ---- */

#define AC_NARGS 9			/* argv[0] .. argv[8] */
static const size_t ac_len[AC_NARGS] = { 40, 0, 1, 37, 4095, 4096, 9000, 0, 70000 };
#define AC_ENV "PC_SPAWN_ARG"
#define AC_ENV_LEN 5000
#define AC_MAP 512UL			/* the managed mapping: 2 MiB */

/* The deterministic string k of length len (printable, no spaces). */
static void ac_gen(char *out, size_t k, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] = (char)(33 + pc_mix(k * 1000003ULL + i) % 94);
	out[len] = '\0';
}

/* What the child prints about its arguments; the parent builds the same
 * from its own copies. argv[1] is "argcheck" (the mode), the others generated. */
static size_t ac_report(char *out, size_t cap, int argc, char *const argv[], const char *env)
{
	size_t n = 0;

	n += (size_t)snprintf(out + n, cap - n, "argcheck: argc %d\n", argc);
	for (int i = 0; i < argc && n < cap; i++) {
		size_t len = strlen(argv[i]);
		n += (size_t)snprintf(out + n, cap - n, "argcheck: argv[%d] len %zu sum %016" PRIx64 " %.40s\n", i, len,
				      pc_sum(argv[i], len), argv[i]);
	}
	if (n < cap)
		n += (size_t)snprintf(out + n, cap - n, "argcheck: " AC_ENV " len %zu sum %016" PRIx64 " %.40s\n",
				      env ? strlen(env) : 0, env ? pc_sum(env, strlen(env)) : 0, env ? env : "(unset)");
	return n < cap ? n : cap;
}

/* The child: check every argument against what it should be, report them. */
static void argcheck_main(int argc, char **argv)
{
	static char want[70001], rep[4096];
	const char *env = getenv(AC_ENV);
	int bad = 0;

	if (argc != AC_NARGS) {
		pc_info("argcheck: argc %d, expected %d", argc, AC_NARGS);
		bad++;
	}
	for (int i = 0; i < argc && i < AC_NARGS; i++) {
		if (i == 1)
			continue;
		ac_gen(want, (size_t)i, ac_len[i]);
		if (strcmp(argv[i], want) != 0) {
			pc_info("argcheck: argv[%d] (length %zu) differs from what was passed (length %zu)", i,
				strlen(argv[i]), ac_len[i]);
			bad++;
		}
	}
	ac_gen(want, 100, AC_ENV_LEN);
	if (!env || strcmp(env, want) != 0) {
		pc_info("argcheck: " AC_ENV " is %s", env ? "wrong" : "unset");
		bad++;
	}
	size_t n = ac_report(rep, sizeof(rep), argc, argv, env);
	fwrite(rep, 1, n, stdout);
	printf(bad ? "argcheck FAILED\n" : "argcheck ok\n");
	fflush(stdout);
	exit(bad ? 1 : 0);
}

struct ac_layout {
	char *map;			/* the managed mapping */
	char *shadow;			/* what it must hold */
	char *path, **argv, **envp;	/* all inside map */
	char expect[4096];		/* the child's report */
	size_t expect_len;
};

/* Each object starts 24 bytes before a page boundary of a page of its own,
 * so that it straddles pages; *next is the first free page. */
static char *ac_place(struct ac_layout *l, size_t *next, const void *obj, size_t len)
{
	char *at = l->map + *next * PC_PAGE + PC_PAGE - 24;

	*next += 1 + (len + PC_PAGE - 1) / PC_PAGE;
	if (*next >= AC_MAP)
		pc_fail("spawnargs: the arguments do not fit the mapping");
	memcpy(at, obj, len);
	return at;
}

/* Build path, argv and envp in a managed mapping, remember its contents, evict it. */
static void ac_build(const char *what, struct ac_layout *l)
{
	static char s[70001];
	char *argv[AC_NARGS + 1];
	size_t next = 1, nenv = 0;

	l->map = pc_map(AC_MAP * PC_PAGE);
	pc_fill_range(l->map, AC_MAP, PC_RANDOM, 300);
	l->path = ac_place(l, &next, self, strlen(self) + 1);
	for (int i = 0; i < AC_NARGS; i++) {
		if (i == 1)
			snprintf(s, sizeof(s), "argcheck");
		else
			ac_gen(s, (size_t)i, ac_len[i]);
		argv[i] = ac_place(l, &next, s, strlen(s) + 1);
	}
	argv[AC_NARGS] = NULL;
	l->argv = (char **)(void *)ac_place(l, &next, argv, sizeof(argv));
	/* The environment: ours (LD_PRELOAD included: the child is managed
	 * too) plus the variable, packed together after it. */
	while (environ[nenv])
		nenv++;
	char **envp = calloc(nenv + 2, sizeof(char *));
	if (!envp)
		pc_fail("calloc");
	ac_gen(s, 100, AC_ENV_LEN);
	memmove(s + strlen(AC_ENV) + 1, s, AC_ENV_LEN + 1);
	memcpy(s, AC_ENV "=", strlen(AC_ENV) + 1);
	envp[0] = ac_place(l, &next, s, strlen(s) + 1);
	size_t envbytes = 0;
	for (size_t i = 0; i < nenv; i++)
		envbytes += strlen(environ[i]) + 1;
	char *block = l->map + next * PC_PAGE + PC_PAGE - 24;
	next += 1 + (envbytes + PC_PAGE - 1) / PC_PAGE;
	if (next >= AC_MAP)
		pc_fail("spawnargs: the environment does not fit the mapping");
	for (size_t i = 0; i < nenv; i++) {
		size_t len = strlen(environ[i]) + 1;
		memcpy(block, environ[i], len);
		envp[i + 1] = block;
		block += len;
	}
	l->envp = (char **)(void *)ac_place(l, &next, envp, (nenv + 2) * sizeof(char *));
	free(envp);

	/* The report the child must print, from the parent's own copies. */
	static char *own[AC_NARGS];
	for (int i = 0; i < AC_NARGS; i++) {
		own[i] = malloc(ac_len[i] + 16);
		if (!own[i])
			pc_fail("malloc");
		if (i == 1)
			snprintf(own[i], 16, "argcheck");
		else
			ac_gen(own[i], (size_t)i, ac_len[i]);
	}
	ac_gen(s, 100, AC_ENV_LEN);
	l->expect_len = ac_report(l->expect, sizeof(l->expect), AC_NARGS, own, s);
	l->expect_len += (size_t)snprintf(l->expect + l->expect_len, sizeof(l->expect) - l->expect_len, "argcheck ok\n");
	for (int i = 0; i < AC_NARGS; i++)
		free(own[i]);

	l->shadow = malloc(AC_MAP * PC_PAGE);
	if (!l->shadow)
		pc_fail("malloc");
	memcpy(l->shadow, l->map, AC_MAP * PC_PAGE);
	size_t ev = pc_evict(what, l->map, AC_MAP, false);
	if (pc_managed())
		PC_CHECK(ev == AC_MAP, "%s: %zu of %lu pages evicted", what, ev, AC_MAP);
}

/* The mapping still holds what it held, then goes (main checks that the
 * store is empty once it read its own memory back). */
static void ac_done(const char *what, struct ac_layout *l)
{
	for (size_t pg = 0; pg < AC_MAP; pg++)
		if (memcmp(l->map + pg * PC_PAGE, l->shadow + pg * PC_PAGE, PC_PAGE) != 0)
			pc_fail("%s: page %zu of the mapping holding the arguments changed%s", what, pg,
				pc_page_is_zero(l->map + pg * PC_PAGE) ? " (reads zeros)" : "");
	free(l->shadow);
	munmap(l->map, AC_MAP * PC_PAGE);
}

/* Read the child's stdout to the end, wait for it, compare with the report. */
static void ac_collect(const char *what, struct ac_layout *l, int rfd, pid_t pid)
{
	char out[8192];
	size_t n = 0;
	int status;

	for (;;) {
		ssize_t r = read(rfd, out + n, sizeof(out) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof(out) - 1)
			break;
	}
	close(rfd);
	out[n] = '\0';
	if (waitpid(pid, &status, 0) != pid)
		pc_fail("waitpid: %s", strerror(errno));
	check_status(what, status);
	if (n != l->expect_len || memcmp(out, l->expect, n) != 0)
		pc_fail("%s: the child reported other arguments than those passed:\n--- child ---\n%s--- expected ---\n%s",
			what, out, l->expect);
}

static void case_spawnargs(void)
{
	struct ac_layout l;
	posix_spawn_file_actions_t fa;
	int pfd[2];
	pid_t pid;

	ac_build("spawnargs: the arguments", &l);
	if (pipe(pfd) != 0)
		pc_fail("pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	fflush(stdout);
	/* The path, the argv array, every string, the envp array and its
	 * strings: all on evicted pages, read by glibc and by execve(2) in the
	 * child (which shares this address space until it execs). */
	int rc = posix_spawn(&pid, l.path, &fa, NULL, l.argv, l.envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (rc != 0)
		pc_fail("posix_spawn with evicted arguments: %s", strerror(rc));
	ac_collect("spawnargs", &l, pfd[0], pid);
	ac_done("spawnargs", &l);
}

static void case_vforkargs(void)
{
	struct ac_layout l;
	int pfd[2];

	ac_build("vforkargs: the arguments", &l);
	if (pipe(pfd) != 0)
		pc_fail("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = vfork();
	if (pid < 0)
		pc_fail("vfork: %s", strerror(errno));
	if (pid == 0) {
		if (dup2(pfd[1], 1) < 0)
			_exit(126);
		execve(l.path, l.argv, l.envp);
		_exit(127);
	}
	close(pfd[1]);
	ac_collect("vforkargs", &l, pfd[0], pid);
	ac_done("vforkargs", &l);
}

/* execve in place: the child's report goes to stdout (the script checks it). */
static void case_execargs(void)
{
	struct ac_layout l;

	ac_build("execargs: the arguments", &l);
	printf("execargs: replacing the process\n");
	fflush(stdout);
	execve(l.path, l.argv, l.envp);
	pc_fail("execve %s with evicted arguments: %s", self, strerror(errno));
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
	if (argc >= 2 && strcmp(argv[1], "argcheck") == 0)
		argcheck_main(argc, argv);

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
		else if (strcmp(c, "spawnargs") == 0)
			case_spawnargs();
		else if (strcmp(c, "vforkargs") == 0)
			case_vforkargs();
		else if (strcmp(c, "execargs") == 0)
			case_execargs();
		else
			pc_fail("unknown case %s", c);
		pc_expect_range(c, p, NPAGES, PC_TEXT, 5);
		pc_expect_stored(c, 0);
		printf("%s ok\n", c);
	}
	return 0;
}
