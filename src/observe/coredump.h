/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * coredump.h - stored pages in a core dump.
 *
 * The kernel writes a core from the process's page tables, and a stored
 * page is not in them: without help, a core shows zeros wherever a page was
 * compressed, and a crash under libzswap could not be debugged from its
 * core. So when a signal is about to dump core (the program's action for it
 * is the default one, and core dumps are on: RLIMIT_CORE, or a
 * core_pattern that pipes, and the process dumpable), the thread that took
 * it first loads every stored page back, with evictions stopped for good
 * (the process is dying), then the default action runs as it would have.
 * A signal the program handles or ignores is left to it, as without us.
 *
 * The signals: SIGQUIT, SIGILL, SIGABRT, SIGFPE, SIGSYS, SIGXCPU and
 * SIGXFSZ, taken here while the program leaves them at their default
 * action (a handler or SIG_IGN of the program's is the kernel's own:
 * src/base/sigchain.h), and SIGSEGV and SIGBUS, which src/observe/crash.c takes and
 * hands over (coredump_prepare) for the program's own faults. When the
 * statistics signal is one of them, src/observe/stats.c takes it instead and hands
 * over the same way.
 */
#ifndef ZSWAP_COREDUMP_H
#define ZSWAP_COREDUMP_H

#include <stdbool.h>

/* Start-up, after the engine runs: take the signals above. */
void coredump_init(void);

/* True when sig is one of the core-dumping signals above. */
bool coredump_signal(int sig);

/* sig is about to take its default action and dump core: if a core will
 * be written, load every stored page back first (once: a second fatal
 * signal goes straight on). From a signal handler on a program thread,
 * which holds no library lock (they are held with signals blocked).
 * Async-signal-safe as the fault path is: no malloc, no stdio. */
void coredump_prepare(int sig);

#endif
