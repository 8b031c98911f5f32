/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * coredump.c - stored pages loaded back before a core dump (see coredump.h).
 */
#include "config.h"
#include "observe/coredump.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/fault.h"
#include "base/fdtab.h"
#include "base/log.h"
#include "base/prim.h"
#include "base/sigchain.h"

/* How long the dying thread waits for evictions in flight to end (each
 * holds eng.evict_gate's read side for one batch, milliseconds): past it,
 * the core is written as it stands, with zeros where pages are stored. */
#define COREDUMP_GATE_WAIT_S	5

/* The signals whose default action dumps core, other than the faults
 * crash.c takes (SIGTRAP is left to debuggers). */
static const int coredump_signals[] = { SIGQUIT, SIGILL, SIGABRT, SIGFPE, SIGSYS, SIGXCPU, SIGXFSZ };

/* /proc/sys/kernel/core_pattern pipes the core to a program: then the
 * kernel writes it whatever RLIMIT_CORE says, unless the limit is 1 (the
 * kernel's own mark against a core helper dumping into itself). Read at
 * start-up: a signal handler opens no files. */
static bool coredump_pipe;
static _Atomic int coredump_done;

/* Will the kernel write a core for this process now? */
static bool coredump_wanted(void)
{
	struct rlimit rl;

	if (syscall(SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0, 0) <= 0)
		return false;
	if (syscall(SYS_prlimit64, 0, RLIMIT_CORE, NULL, &rl) != 0)
		return false;
	return coredump_pipe ? rl.rlim_cur != 1 : rl.rlim_cur > 0;
}

void coredump_prepare(int sig)
{
	const struct timespec ms = { 0, 1000000 };
	int tries = COREDUMP_GATE_WAIT_S * 1000;

	int here;

	/* Not on a library thread, nor on a program thread inside the library
	 * (a failed ZS_CHECK's abort()): either may hold the locks a load
	 * takes, and would wait on itself. Its core holds zeros where pages
	 * are stored, as it did before. */
	if (!engine_running() || prim_is_own((uintptr_t)&here) || engine_in_library() || !coredump_wanted() ||
	    atomic_exchange(&coredump_done, 1))
		return;
	/* No eviction from here on (never let go: the process is dying), and
	 * none in flight: a page in a staging area would be in neither the
	 * program's range nor the pool when the core is written. */
	while (pthread_rwlock_trywrlock(&eng.evict_gate) != 0 && --tries > 0)
		nanosleep(&ms, NULL);
	if (!tries) {
		zlog("signal %d: evictions did not stop within %d s: the core dump holds zeros where pages are stored",
		     sig, COREDUMP_GATE_WAIT_S);
		return;
	}
	uint64_t before = atomic_load(&eng.cnt.refaults);
	fault_load_all(0, UINTPTR_MAX);
	zlog("signal %d: %llu stored pages loaded back for the core dump", sig,
	     (unsigned long long)(atomic_load(&eng.cnt.refaults) - before));
}

/* One of coredump_signals at its default action (a handler or SIG_IGN of
 * the program's is the kernel's own: sigchain_take_while_default): the
 * pages loaded back first. */
static bool coredump_on_signal(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	if (!sigchain_program_default(sig))
		return false;
	coredump_prepare(sig);
	sigchain_die(sig, info);
	return true;
}

bool coredump_signal(int sig)
{
	for (size_t i = 0; i < sizeof(coredump_signals) / sizeof(coredump_signals[0]); i++)
		if (coredump_signals[i] == sig)
			return true;
	return false;
}

void coredump_init(void)
{
	char c[2];

	coredump_pipe = fdtab_read_file("/proc/sys/kernel/core_pattern", c, sizeof(c)) == 1 && c[0] == '|';
	for (size_t i = 0; i < sizeof(coredump_signals) / sizeof(coredump_signals[0]); i++)
		if (coredump_signals[i] != eng.opt.stats_signal &&	/* stats.c's, then */
		    sigchain_take_while_default(coredump_signals[i], coredump_on_signal) < 0 && eng.opt.verbose)
			zlog("cannot take signal %d: a core dump then holds zeros where pages are stored",
			     coredump_signals[i]);
}
