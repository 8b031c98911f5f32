/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_behave.c - a program that must behave under libzswap exactly as
 * without it: how it ends, what its signals do, which descriptors it sees.
 * tests/engine/test_eng_behave.sh runs each mode with and without the library.
 *
 *   last-thread    main() starts a thread and calls pthread_exit(): the
 *                  process ends when that thread returns, with status 0, its
 *                  atexit handler run and stdio flushed
 *   fork-thread    a thread other than main() forks; in the child that
 *                  thread returns: the child ends with status 0 (the parent
 *                  waits 20 s at most and says "child hung" otherwise)
 *   handler        the program's own SIGUSR1 handler; another process sends
 *                  the signal while the program waits in sigsuspend(): the
 *                  handler runs once and sigsuspend returns
 *   vfork-reset    the same, after a vfork() child set SIGUSR1 back to
 *                  SIG_DFL before _exit (as Python's subprocess does before
 *                  exec): the parent's handler still runs
 *   ignore         SIGUSR1 ignored; another process sends it during a
 *                  nanosleep, which is not interrupted
 *   blocked        SIGUSR1 blocked; sigwaitinfo() takes the one another
 *                  process sends, with the sender's pid
 *   raise          SIGUSR1 at its default action, raised by the program: it
 *                  dies by SIGUSR1
 *   spawn-raise    a posix_spawn() child with POSIX_SPAWN_SETSIGDEF for
 *                  SIGUSR1 raises it: the parent prints how the child ended
 *   sent-exit      SIGUSR1 at its default action, sent by another process
 *                  during a sleep; the program then ends at once with
 *                  _exit(0) (sent-return: returns from main() instead)
 *   fds            prints the descriptors it has open (beyond 0, 1, 2) with
 *                  their close-on-exec flag, then execs itself (fds-exec)
 *                  without LD_PRELOAD, which prints what it inherited, then
 *                  forks a child that prints its own
 *
 * What it prints on stdout is the same with and without the library; the
 * test script looks at the dump files and stderr for the rest.
 */
#include "prog_common.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

static const char *prog_name = "prog_behave";

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog_name, what, strerror(errno));
	exit(2);
}

static void say_bye(void)
{
	printf("atexit ran\n");
}

/* A separate process that sends SIGUSR1 to pid after ms milliseconds. */
static pid_t send_later(pid_t pid, unsigned int ms)
{
	pid_t c = fork();

	if (c < 0)
		die("fork");
	if (c == 0) {
		usleep(ms * 1000);
		kill(pid, SIGUSR1);
		_exit(0);
	}
	return c;
}

static void reap(pid_t c)
{
	while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
		;
}

/* --- ending ---------------------------------------------------------------- */

static void *worker(void *arg)
{
	(void)arg;
	usleep(100000);
	printf("worker wrote\n");
	return NULL;
}

static int last_thread(void)
{
	pthread_t t;

	atexit(say_bye);
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		die("pthread_create");
	pthread_exit(NULL);
}

static void *forker(void *arg)
{
	pid_t c = fork();

	(void)arg;
	if (c < 0)
		die("fork");
	if (c == 0) {
		printf("child's thread returns\n");
		return NULL;	/* the child's last thread: the child ends */
	}
	for (int i = 0; i < 2000; i++) {
		int st;
		pid_t r = waitpid(c, &st, WNOHANG);
		if (r == c) {
			printf("child %s %d\n", WIFEXITED(st) ? "exit" : "signal",
			       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			return NULL;
		}
		usleep(10000);
	}
	printf("child hung\n");
	kill(c, SIGKILL);
	reap(c);
	return NULL;
}

static int fork_thread(void)
{
	pthread_t t;

	atexit(say_bye);
	fflush(stdout);
	if (pthread_create(&t, NULL, forker, NULL) != 0 || pthread_join(t, NULL) != 0)
		die("pthread");
	return 0;
}

/* --- signals --------------------------------------------------------------- */

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void set_action(void (*h)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		die("sigaction");
}

/* Block SIGUSR1, have another process send it, and wait in sigsuspend. */
static int wait_for_usr1(void)
{
	sigset_t block, none;

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	pid_t c = send_later(getpid(), 200);
	sigemptyset(&none);
	int r = sigsuspend(&none);
	int e = errno;
	reap(c);
	return r == -1 && e == EINTR ? 0 : -1;
}

static int handler(bool vfork_reset)
{
	set_action(on_usr1);
	if (vfork_reset) {
		pid_t c = vfork();
		if (c < 0)
			die("vfork");
		if (c == 0) {
			struct sigaction dfl;
			memset(&dfl, 0, sizeof(dfl));
			dfl.sa_handler = SIG_DFL;
			sigaction(SIGUSR1, &dfl, NULL);
			_exit(0);
		}
		reap(c);
		struct sigaction now;
		if (sigaction(SIGUSR1, NULL, &now) != 0 || now.sa_handler != on_usr1)
			printf("sigaction no longer reports the program's handler\n");
	}
	if (wait_for_usr1() != 0)
		printf("sigsuspend did not return EINTR\n");
	printf("handler ran %d\n", (int)handled);
	return 0;
}

static int ignore(void)
{
	struct timespec ts = { 0, 600 * 1000 * 1000 };

	set_action(SIG_IGN);
	pid_t c = send_later(getpid(), 100);
	int r = nanosleep(&ts, NULL);
	printf("nanosleep %s\n", r == 0 ? "completed" : "interrupted");
	reap(c);
	return 0;
}

static int blocked(void)
{
	sigset_t set;
	siginfo_t si;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid_t c = send_later(getpid(), 100);
	int sig = sigwaitinfo(&set, &si);
	printf("sigwaitinfo %d from %s\n", sig, si.si_pid == c ? "the sender" : "elsewhere");
	reap(c);
	return 0;
}

static int spawn_raise(const char *self)
{
	posix_spawnattr_t a;
	sigset_t s;
	pid_t p;
	int st;
	char raise_arg[] = "raise";
	char *av[] = { (char *)self, raise_arg, NULL };

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	posix_spawnattr_init(&a);
	posix_spawnattr_setsigdefault(&a, &s);
	posix_spawnattr_setflags(&a, POSIX_SPAWN_SETSIGDEF);
	if ((errno = posix_spawn(&p, self, NULL, &a, av, environ)) != 0)
		die("posix_spawn");
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	printf("child %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return 0;
}

static int sent_then_end(bool now)
{
	pid_t c = send_later(getpid(), 200);

	sleep(10);	/* interrupted under the library (the dump), killed without it */
	printf("slept\n");
	fflush(stdout);
	if (now)
		_exit(0);
	reap(c);
	return 0;
}

/* --- descriptors ----------------------------------------------------------- */

static void list_fds(const char *who)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int mine;

	if (!d)
		die("opendir /proc/self/fd");
	mine = dirfd(d);
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd <= 2 || fd == mine)
			continue;
		int fl = fcntl(fd, F_GETFD);
		printf("%s fd %d%s\n", who, fd, fl >= 0 && (fl & FD_CLOEXEC) ? " cloexec" : "");
	}
	closedir(d);
	fflush(stdout);
}

static int fds(const char *self)
{
	list_fds("program");
	pid_t c = fork();
	if (c < 0)
		die("fork");
	if (c == 0) {
		list_fds("child");
		char *env[] = { NULL };
		execle(self, self, "fds-exec", (char *)NULL, env);
		die("exec");
	}
	int st;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s MODE (see the source)\n", prog_name);
		return 2;
	}
	setvbuf(stdout, NULL, _IOFBF, 4096);	/* fully buffered: lost if exit never runs */
	const char *m = argv[1];
	if (!strcmp(m, "last-thread"))
		return last_thread();
	if (!strcmp(m, "fork-thread"))
		return fork_thread();
	if (!strcmp(m, "handler"))
		return handler(false);
	if (!strcmp(m, "vfork-reset"))
		return handler(true);
	if (!strcmp(m, "ignore"))
		return ignore();
	if (!strcmp(m, "blocked"))
		return blocked();
	if (!strcmp(m, "raise")) {
		raise(SIGUSR1);
		printf("survived raise\n");
		return 0;
	}
	if (!strcmp(m, "spawn-raise"))
		return spawn_raise(argv[0]);
	if (!strcmp(m, "sent-exit"))
		return sent_then_end(true);
	if (!strcmp(m, "sent-return"))
		return sent_then_end(false);
	if (!strcmp(m, "fds"))
		return fds(argv[0]);
	if (!strcmp(m, "fds-exec")) {
		list_fds("exec");
		return 0;
	}
	fprintf(stderr, "%s: unknown mode %s\n", prog_name, m);
	return 2;
}
