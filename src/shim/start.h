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

/* A fork child without fork events keeps its copy of the library dormant
 * (fork.h, fork_restarts) and starts a libzswap of its own at its first
 * call that may grow or change its memory: mmap, mremap, munmap, madvise,
 * the mlock family, a given thread stack, the public API; of the malloc
 * family, a large request or the START_WAKE_ALLOCS-th call, so that a
 * shell's few small allocations between fork and exec start nothing. A
 * child that execs first never pays for a start-up. The check is one
 * load; the start runs on the calling thread. */
void start_fork_wake_slow(void);
void start_fork_wake_alloc_slow(size_t n);

static inline void start_fork_wake(void)
{
	if (atomic_load_explicit(&eng.state, memory_order_relaxed) == ENGINE_DORMANT)
		start_fork_wake_slow();
}

static inline void start_fork_wake_alloc(size_t n)
{
	if (atomic_load_explicit(&eng.state, memory_order_relaxed) == ENGINE_DORMANT)
		start_fork_wake_alloc_slow(n);
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
