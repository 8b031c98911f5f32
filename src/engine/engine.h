/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.h - the engine's shared state: the userfaultfd, the store, the
 * options, the locks that order events against everything else, counters.
 *
 * Lock order (outermost first); no library lock is held while touching
 * program memory, and every program thread blocks signals while it holds one:
 *   0. the mapping gate (fork.h), held shared by the program's munmap,
 *      mremap and discards and by the reclaimer's change of compressor,
 *      reap of an old one's pools and compaction rounds; fork's prepare
 *      closes it first.
 *   1. eng.evict_gate (rwlock): evictions read; fork's prepare handler writes,
 *      so no page is in flight across fork().
 *   2. eng.ev_lock (rwlock, writers preferred): reading userfaultfd messages
 *      and processing the events among them is the write side. Every step
 *      whose correctness depends on the region table matching the kernel's
 *      mappings holds the read side: serving a fault (lookup .. COPY),
 *      eviction (lookup .. MOVE), region insertion. The kernel fails COPY,
 *      ZEROPAGE and MOVE with EAGAIN while an event is pending and unread, and
 *      an event once read is processed before the write side is released: so
 *      an ioctl that succeeds under the read side acted on the mapping the
 *      table describes.
 *   3. the region table rwlock (region.c).
 *   4. per-slot state words (lock-free), then the store's own locks.
 */
#ifndef ZSWAP_ENGINE_H
#define ZSWAP_ENGINE_H

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/options.h"
#include "core/store.h"
#include "engine/counters.h"

enum engine_state {
	ENGINE_UNINIT = 0,	/* constructor not run yet: interposed calls pass through */
	ENGINE_STARTING,
	ENGINE_RUNNING,		/* userfaultfd up, handler threads serving */
	ENGINE_OFF,		/* disabled, unavailable, or the child of a fork not followed: pass-through */
	ENGINE_DORMANT,		/* a fork child that restarts (engine/fork.h), until a memory call
				 * starts its own (src/shim/start.h): pass-through meanwhile */
	ENGINE_DEFERRED,	/* a process without a memory limit, until its first memory call
				 * after ZSWAP_START_DELAY (src/shim/start.h): pass-through meanwhile */
};

/* The plain counters (source CNT of engine/counters.def, where each row
 * says what it counts), bumped with atomic_fetch_add(&eng.cnt.name, 1). */
struct engine_counters {
#define COUNTER(name, sect, src, api, reset, help) COUNTER_SRC_##src(_Atomic uint64_t name;, )
#include "engine/counters.def"
#undef COUNTER
};

struct engine {
	_Atomic int state;
	pid_t pid;		/* the process this state belongs to (engine_running) */
	int uffd;
	uint64_t features;
	int pagemap_fd;
	struct opt_values opt;
	struct zswap_store *store;
	pthread_rwlock_t ev_lock;
	pthread_rwlock_t evict_gate;
	_Atomic uint64_t ev_gen;	/* bumped by every processed UNMAP/REMAP */
	_Atomic uint64_t remove_seq;	/* bumped by every processed REMOVE of program memory */
	_Atomic bool lock_future;	/* mlockall(MCL_FUTURE): manage nothing new */
	_Atomic int start_gate;		/* a fork child's threads wait while 1 (engine_gate_wait) */
	_Atomic uint64_t start_after;	/* ENGINE_DEFERRED: CLOCK_MONOTONIC_COARSE ns to start at */
	/* ENGINE_DEFERRED: the malloc family's calls and the bytes requested
	 * since (src/shim/start.c). Beside the state a fork child writes
	 * anyway: a page of its own would be one more copied at each fork. */
	unsigned int start_allocs;
	size_t start_bytes;
	unsigned int fault_threads;	/* handler threads started */
	_Atomic unsigned int inject_copy_fail;	/* ZSWAP_INJECT_COPY_FAIL left (fault.c) */
	_Atomic unsigned int inject_thread_fail;	/* ZSWAP_INJECT_THREAD_FAIL left (start.c) */
	_Atomic unsigned int inject_pool_hold;	/* ZSWAP_INJECT_POOL_HOLD left (reclaim.c) */
	_Atomic int evict_touching;	/* the evictor is in a call that may fault on program memory */
	struct engine_counters cnt;
};

extern struct engine eng;

/* Running, and in the process that started it. A child made without
 * glibc's fork handlers (raw clone() without CLONE_VM, _Fork()) has a copy
 * of this state whose userfaultfd and pagemap are the parent's: there the
 * library must do nothing at all, or a MADV_PAGEOUT in the child would move
 * the parent's pages. getpid() is a system call (glibc caches no pid): a
 * few hundred nanoseconds on the interposed calls, never on the fault path. */
static inline bool engine_running(void)
{
	return atomic_load_explicit(&eng.state, memory_order_acquire) == ENGINE_RUNNING &&
	       (pid_t)syscall(SYS_getpid) == eng.pid;
}

/* First thing in each library thread: in a fork child the threads start
 * before the handover is over (fork.h says why) and must not touch the
 * engine's state until the child has applied it (engine_fork_child opens
 * the gate). Elsewhere the gate is open: one load. */
static inline void engine_gate_wait(void)
{
	while (atomic_load_explicit(&eng.start_gate, memory_order_acquire))
		syscall(SYS_futex, &eng.start_gate, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
}

/* Block every signal in the calling thread (for as long as it holds an
 * engine lock or owns a page in flight); restore with engine_sigrestore. */
void engine_sigblock(sigset_t *old);
void engine_sigrestore(const sigset_t *old);

/* The calling program thread is between engine_sigblock and
 * engine_sigrestore: it may hold library locks (a signal that still
 * reaches it, a fault or abort(), must not take them: src/observe/coredump.c). */
bool engine_in_library(void);

/* Record the data and bss of every shared object loaded now (start-up,
 * before the engine runs; dl_iterate_phdr). */
void engine_note_objects(void);

/* True if [start, end) overlaps the data or bss of a shared object loaded at
 * start-up (memory the engine's own code may touch: never to be adopted). */
bool engine_is_object_data(uintptr_t start, uintptr_t end);

/* The main program's writable segment (data and bss, page-aligned), as
 * engine_note_objects found it: false if it has none. */
bool engine_program_data(uintptr_t *start, uintptr_t *end);

/* The part of it progdata_take made anonymous (src/engine/progdata.h):
 * noted before the engine runs, read lock-free after. */
void engine_note_program_anon(uintptr_t start, uintptr_t end);

/*
 * [lo, hi), a mapping around cur, clipped at the edges of that anonymous
 * part: to it when cur lies in it (true), else to the side of cur outside
 * it. The kernel may merge the part with the bss behind it into one
 * mapping: a region never spans both.
 */
bool engine_program_clip(uintptr_t cur, uintptr_t *lo, uintptr_t *hi);

/*
 * PAGEMAP_SCAN over [start, end) of eng.pagemap_fd: fn(run_start, run_end,
 * arg) for each run of pages whose categories, with those in inverted
 * flipped, hold every bit of mask. 0, or -1 with errno (ENOMEM: the range
 * is not mapped, or no longer; another: no PAGEMAP_SCAN, before 6.7).
 */
int engine_page_runs(uintptr_t start, uintptr_t end, uint64_t mask, uint64_t inverted,
		     void (*fn)(uintptr_t run_start, uintptr_t run_end, void *arg), void *arg);

#endif
