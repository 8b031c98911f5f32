/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * start.h - start-up (a constructor: nothing to call) and fork: the one
 * place that starts the subsystems and every library thread.
 */
#ifndef ZSWAP_START_H
#define ZSWAP_START_H

#include <stdbool.h>

#include "engine/engine.h"

/* A fork the C library makes without its atfork handlers (glibc's _Fork,
 * clone without CLONE_VM: src/shim/interpose.c): the library's handlers run
 * around it all the same, but always as the interim (every stored page
 * loaded back first, the child a pass-through): such a child may make no
 * thread before exec, and following it needs some. raw_prepare before the
 * call, raw_parent after it in the parent (failed or not; errno kept),
 * raw_child first thing in the child (fds_shared: it shares the parent's
 * descriptor table, CLONE_FILES, and must close none of them). */
void start_fork_raw_prepare(void);
void start_fork_raw_parent(void);
void start_fork_raw_child(bool fds_shared);

/*
 * Two states wait for a call that may grow or change the program's memory
 * (mmap, mremap, munmap, madvise, the mlock family, a given thread stack,
 * the public API; of the malloc family, a large request or one call in
 * many) to start a libzswap on the calling thread:
 *
 * - ENGINE_DORMANT, a fork child that restarts (fork.h: without fork
 *   events, or a light fork), keeps its copy of the library and starts at
 *   its first such call; of the malloc family, a large request or the
 *   START_WAKE_ALLOCS-th call, so that a shell's few small allocations
 *   between fork and exec start nothing. The child of a process that no
 *   memory limit covers starts as a deferred one does, from the fork.
 * - ENGINE_DEFERRED, a process that no memory limit covers, starts at its
 *   first such call ZSWAP_START_DELAY after it began (a fork child: after
 *   the fork) once it holds ZSWAP_START_SIZE of anonymous memory: a shell's
 *   sed or grep ends before that, and the shell itself stays smaller, so
 *   neither pays for a start-up nor for threads to end. Nothing is lost
 *   meanwhile: what it mapped is adopted by the reclaimer's sweeps, and
 *   without a limit nothing is reclaimed before ZSWAP_COLD_AGE. The public
 *   API and MADV_PAGEOUT/MADV_COLD start it at once (start_wake_now).
 *
 * The check is one load.
 */
void start_wake_slow(bool now);

/* The process ends (exit's destructors, or _exit): a dump the statistics
 * signal asked for before a deferred start starts the library so that it
 * is written (the signal's promise), then stats_exit. */
void start_exit(void);

/* Wait while another thread starts the library (a fork or a credential
 * change then finds it running, with every thread it made). */
void start_settle(void);
void start_wake_alloc_slow(size_t n);

static inline void start_wake(void)
{
	if (atomic_load_explicit(&eng.state, memory_order_relaxed) >= ENGINE_DORMANT)
		start_wake_slow(false);
}

static inline void start_wake_now(void)
{
	if (atomic_load_explicit(&eng.state, memory_order_relaxed) >= ENGINE_DORMANT)
		start_wake_slow(true);
}

/* An anonymous mmap of len bytes: a request as the malloc family's for a
 * deferred process, any other call's for a dormant one. */
void start_wake_map_slow(size_t len);

static inline void start_wake_map(size_t len)
{
	if (atomic_load_explicit(&eng.state, memory_order_relaxed) >= ENGINE_DORMANT)
		start_wake_map_slow(len);
}

static inline void start_wake_alloc(size_t n)
{
	if (atomic_load_explicit(&eng.state, memory_order_relaxed) >= ENGINE_DORMANT)
		start_wake_alloc_slow(n);
}

/* Run fn(arg) on every library thread, each on itself, and return once all
 * have: what only a thread can do to itself (its capabilities: creds.c).
 * Each is interrupted by a tgkill of SIGBUS that our handler takes
 * (sigchain_on_tkill), whatever it is doing, so fn runs in a signal
 * handler: async-signal-safe, no library lock, no program memory. Only
 * between start_threads_hold() and start_threads_release(): no library
 * thread starts or ends meanwhile, and other holders wait (one program
 * thread changes credentials at a time). Returns how many threads ran it, or
 * -ENOSYS when the library's SIGBUS handler is not in the kernel (then none
 * did), or -ESRCH when the library does not run in this process (off, or a
 * vfork child: the threads are its parent's). Never from a library
 * thread. */
void start_threads_hold(void);
int start_on_threads(void (*fn)(void *), void *arg);
void start_threads_release(void);

#endif
