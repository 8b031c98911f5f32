/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_stats_crash.c - crash reports must not take the program's own faults
 * (tests/engine/test_eng_stats_crash.sh).
 *
 *   own     installs its own SIGSEGV handler (sigaction, SA_SIGINFO), which
 *           makes the faulting page writable; writes to a PROT_NONE page;
 *           the handler must run once, sigaction must give it back, and the
 *           write must land. Prints "own ok".
 *   null    writes through a null pointer with no handler of its own (and,
 *           with "null ign", SIGSEGV ignored): the process must die of
 *           SIGSEGV as it would without the library, not loop.
 *   lib     has another process (a vfork child) send the statistics signal (the library, run with
 *           ZSWAP_INJECT_CRASH=1, crashes on its statistics thread) and
 *           waits 60 s at most: reaching the end is a failure.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t segv_runs;
static char *guard;

static void on_segv(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)uc;
	segv_runs++;
	if ((char *)info->si_addr >= guard && (char *)info->si_addr < guard + 4096)
		mprotect(guard, 4096, PROT_READ | PROT_WRITE);
	else
		_exit(3);	/* not the fault we caused */
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: prog_stats_crash own|null [ign]|lib\n");
		return 2;
	}
	if (!strcmp(argv[1], "own")) {
		struct sigaction sa, back;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_segv;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGSEGV, NULL, &back) != 0 ||
		    back.sa_sigaction != on_segv || !(back.sa_flags & SA_SIGINFO)) {
			fprintf(stderr, "prog_stats_crash: FAIL: sigaction(SIGSEGV) does not give the handler back\n");
			return 1;
		}
		guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (guard == MAP_FAILED)
			return 1;
		*(volatile char *)guard = 42;	/* faults once; the handler opens it */
		if (segv_runs != 1 || guard[0] != 42) {
			fprintf(stderr, "prog_stats_crash: FAIL: handler ran %d time(s), byte %d\n",
				(int)segv_runs, guard[0]);
			return 1;
		}
		printf("own ok\n");
		return 0;
	}
	if (!strcmp(argv[1], "null")) {
		if (argc > 2)
			signal(SIGSEGV, SIG_IGN);
		volatile int *volatile nowhere = NULL;
		*nowhere = 1;
		fprintf(stderr, "prog_stats_crash: FAIL: survived a write through a null pointer\n");
		return 1;
	}
	/* From another process (a vfork child): one the program sends itself
	 * takes the default action. */
	pid_t me = getpid(), c = vfork();
	if (c == 0) {
		kill(me, SIGUSR1);
		_exit(0);
	}
	for (int i = 0; i < 600; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "prog_stats_crash: FAIL: still alive 60 s after the statistics signal\n");
	return 1;
}
