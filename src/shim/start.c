/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * start.c - start-up inside someone else's process, and fork: the one place
 * that starts the subsystems and every library thread (start.h).
 *
 * The constructor reads the options once, opens userfaultfd and starts the
 * handler threads; anything that fails leaves one "libzswap:" line and a
 * program that runs exactly as without the library. There is no destructor:
 * later destructors, atexit handlers and other threads may still touch
 * evicted pages, so faults are served until the process ends.
 *
 * fork: with UFFD_FEATURE_EVENT_FORK the child is followed (src/engine/fork.h): the
 * state is frozen while the kernel copies it, the child is served from it
 * until it holds its own userfaultfd, then runs its own handler threads.
 * Otherwise (the interim) the prepare handler loads every evicted page back
 * and the child runs as a pass-through (its descriptors closed).
 */
#include "config.h"
#include "shim/start.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/bindnow.h"
#include "base/layout.h"
#include "engine/writeback.h"
#include "base/elfsym.h"
#include "core/backing.h"
#include "core/comp.h"
#include "core/parse.h"
#include "base/fdtab.h"
#include "base/inject.h"
#include "base/log.h"
#include "base/maps.h"
#include "base/prim.h"
#include "base/sigchain.h"
#include "engine/engine.h"
#include "engine/evict.h"
#include "engine/fault.h"
#include "engine/fork.h"
#include "engine/policy.h"
#include "engine/progdata.h"
#include "engine/region.h"
#include "engine/uffd.h"
#include "observe/stats.h"
#include "observe/unwind.h"
#include "reclaim/group.h"
#include "reclaim/reclaim.h"

static __thread sigset_t start_fork_mask;	/* the forking thread's mask, blocked across fork */

/* --- fork --------------------------------------------------------------- */

static int start_handlers(unsigned int nthreads);
static void start_reclaimer(int rc);
static void start_stats(int rc);

/* This fork is followed (fork.c holds the state frozen), or the interim. */
static bool start_fork_followed ZSWAP_STARTUP_DATA;

/* This fork restarts (fork_restarting: frozen, every page in place). */
static bool start_fork_restart ZSWAP_STARTUP_DATA;

/* This fork's child, if it restarts, starts as a deferred process would
 * (ZSWAP_START_DELAY from the fork): no memory limit covers it. */
static bool start_fork_lazy ZSWAP_STARTUP_DATA;

/* A dormant child that starts as a deferred process would (start_fork_lazy),
 * not at its first memory call. */
static bool start_dormant_lazy ZSWAP_STARTUP_DATA;
/* Allocations in a dormant child (start_fork_wake_alloc_slow). */
#define START_WAKE_ALLOCS	1024
#define START_WAKE_BIG		(64 << 10)
static unsigned int start_dormant_allocs ZSWAP_STARTUP_DATA;

/* A clone() child that shares the parent's descriptor table (CLONE_FILES
 * without CLONE_VM): its descriptors are the parent's, never to close.
 * Set only in such a child's own copy of memory. */
static bool start_fork_fds_shared ZSWAP_STARTUP_DATA;

/* The pid start_fork_prepare saw running (the child compares it with the
 * state's: a fork from a process whose engine is not its own does nothing). */
static pid_t start_fork_pid ZSWAP_STARTUP_DATA;

/* Every stored page loaded back (the interim's, and a restart's before
 * the freeze), fault services still installing one waited out. */
static void start_fork_load_all(void)
{
	fault_load_all(0, UINTPTR_MAX);
	pthread_rwlock_wrlock(&eng.ev_lock);
	pthread_rwlock_unlock(&eng.ev_lock);
}

/* A process that no memory limit covers and nothing asks to start at once
 * (read again at each fork: zswapctl may have set a limit since the start):
 * it, and a light fork's child, start as a deferred process does. */
ZSWAP_STARTUP static bool start_fork_may_defer(void)
{
	const struct opt_values *o = &eng.opt;

	return o->start_delay && !opt_starts_now(o) && !__atomic_load_n(&o->memory_limit, __ATOMIC_RELAXED) &&
	       !group_named();
}

/*
 * A process no limit covers forks lightly only with nothing stored (fork.h):
 * once ZSWAP_COLD_AGE has compressed a few of a long-lived shell's or
 * make's pages, each of its forks would be followed again. Up to this many
 * pages are loaded back first instead: a page costs microseconds, a
 * followed fork about a millisecond and a half more than a light one, and
 * the pages stay until the cold age takes them again.
 */
#define START_FORK_LOAD_MAX 256

/* interim: every page loaded back, the child left without the library
 * (engine_fork_raw); else followed when fork.c can (fork_prepare). The
 * fork's variables share a page of .data with the child's (fdtab's,
 * start_tids): each is written only if it changes (prim_reset), so that a
 * parent forking the same way each time copies that page at none of its
 * forks. */
ZSWAP_STARTUP static void start_fork_prepare_as(bool interim)
{
	start_settle();
	if (!engine_running()) {
		prim_reset(&start_fork_pid, &(pid_t){ 0 }, sizeof(pid_t));
		return;
	}
	prim_reset(&start_fork_pid, &eng.pid, sizeof(pid_t));
	engine_sigblock(&start_fork_mask);
	/* First, while the handlers still process events: no munmap, mremap
	 * or discard of the program's in flight across the copy (fork.h). */
	fork_gate_close();
	pthread_rwlock_wrlock(&eng.evict_gate);	/* no page in flight, none to come */
	prim_reset(&start_fork_lazy, &(bool){ start_fork_may_defer() }, sizeof(bool));
	uint64_t held = start_fork_lazy ? zswap_store_held(eng.store) : 0;
	if (!interim && (fork_restarts() || (held && held <= START_FORK_LOAD_MAX)))
		start_fork_load_all();	/* the child's copy must hold every byte */
	/* Light when no limit covers the process (fork.h): a handover and
	 * the child's threads would cost each of a long-lived shell's
	 * command substitutions and pipelines. */
	prim_reset(&start_fork_followed, &(bool){ interim ? fork_prepare_interim() : fork_prepare(start_fork_lazy) },
		   sizeof(bool));
	prim_reset(&start_fork_restart, &(bool){ start_fork_followed && fork_restarting() }, sizeof(bool));
	if (start_fork_followed) {
		writeback_fork_prepare();	/* how the parent learns the child is gone */
		return;
	}
	start_fork_load_all();
}

ZSWAP_STARTUP static void start_fork_prepare(void)
{
	start_fork_prepare_as(false);
}

ZSWAP_STARTUP static void start_fork_parent(void)
{
	if (!start_fork_pid)
		return;
	if (start_fork_followed) {
		fork_parent();
		writeback_fork_parent();	/* before any slot the child inherited is reused */
	}
	fork_gate_open();
	pthread_rwlock_unlock(&eng.evict_gate);
	engine_sigrestore(&start_fork_mask);
}

/*
 * ZSWAP_LOG_FILE: the library's messages go to a file instead of the
 * program's stderr (a program that parses its children's stderr, such as a
 * test runner reading a worker's JSON, must not find them there). Opened
 * before the options are read so that their own warnings go there too;
 * kept high and close-on-exec (src/base/fdtab.h). Returns false if it
 * could not be opened (said on stderr; messages stay there).
 */
static bool start_log_open(const char *pattern)
{
	char path[OPT_STRING_MAX + 64];
	struct timespec ts;

	if (!pattern[0] || strcmp(pattern, "stderr") == 0)
		return true;
	clock_gettime(CLOCK_REALTIME, &ts);
	log_expand_path(path, sizeof(path), pattern, (long)syscall(SYS_getpid), (long long)ts.tv_sec, 0);
	int fd = fdtab_open_append(path, true, "ZSWAP_LOG_FILE", "messages go to stderr");
	if (fd < 0)
		return false;
	int old = log_get_fd();
	log_set_fd(fd);
	if (old != 2)
		fdtab_close(old);
	return true;
}

ZSWAP_STARTUP static void start_log_close(void)
{
	int fd = log_get_fd();

	log_set_fd(-1);
	if (fd != 2)
		fdtab_close(fd);
}

ZSWAP_STARTUP static void start_log_init(void)
{
	/* Parsed again, and any problem reported, by opt_load. */
	if (opt_peek(OPT_LOG_FILE, &eng.opt, NULL))
		start_log_open(eng.opt.log_file);
}

/* True if the ZSWAP_LOG_FILE pattern names a file per process. */
ZSWAP_STARTUP static bool start_log_per_process(void)
{
	for (const char *p = eng.opt.log_file; *p; p++)
		if (p[0] == '%' && p[1] == 'p')
			return true;
	return false;
}

static void start_tids_fork_child(void);
static void start_defer_from_now(void);
static bool start_waits_delay(int state);

static void start_fork_off(void);
static const char *start_errname(int e);

/* What pthread_atfork (libc_nonshared.a's, linked at the far end of our
 * text: a page fault of its own at every start) calls; __dso_handle
 * removes the handlers if this object is ever unloaded. */
extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso);
extern void *__dso_handle;

ZSWAP_STARTUP static void start_fork_child(void)
{
	/* A deferred process never started a thread, and its child would
	 * fault the threads' table in to find it empty. */
	if (atomic_load(&eng.state) != ENGINE_DEFERRED)
		start_tids_fork_child();
	fork_gate_reset();	/* the calls it held back were the parent's threads */
	sigchain_fork_child();	/* its own copy of the signal records */
	if (eng.store)
		zswap_store_fork_child(eng.store);
	if (atomic_load(&eng.state) == ENGINE_DORMANT && start_fork_fds_shared)
		atomic_store(&eng.state, ENGINE_OFF);	/* its start would close its parent's descriptors */
	/* A deferred process's child, or a lazy dormant one's (forked before
	 * its own start): deferred in turn, from this fork. */
	if (start_waits_delay(atomic_load(&eng.state))) {
		if (start_fork_fds_shared) {
			atomic_store(&eng.state, ENGINE_OFF);	/* its descriptors are its parent's */
			return;
		}
		eng.pid = layout_getpid();
		if (start_log_per_process())
			start_log_open(eng.opt.log_file);	/* the child's own file */
		start_defer_from_now();
		return;
	}
	if (atomic_load(&eng.state) != ENGINE_RUNNING || start_fork_pid != eng.pid)
		return;
	eng.pid = layout_getpid();
	if (start_log_per_process())
		start_log_open(eng.opt.log_file);	/* the child's own file */
	if (start_fork_restart) {
		/* Nothing to serve: every page is in place and nothing is
		 * registered. A child that execs pays for nothing more. */
		fork_restart_child();
		stats_fork_child_dormant();
		start_dormant_allocs = 0;
		start_dormant_lazy = start_fork_lazy;
		if (start_dormant_lazy)
			start_defer_from_now();
		atomic_store(&eng.state, ENGINE_DORMANT);
		engine_sigrestore(&start_fork_mask);
		return;
	}
	int fd = start_fork_followed ? fork_child_take() : -1;
	if (fd >= 0) {
		/* Our own userfaultfd and copy of everything: serve it, and
		 * reclaim and dump for this process. The threads are made
		 * while the parent still serves this child's faults (fork.h:
		 * pthread_create may fault on the evicted heap) and wait at the
		 * gate until the handover is applied. The reclaimer's new
		 * eventfd comes first: the handlers poll it. */
		atomic_store(&eng.start_gate, 1);
		writeback_fork_child();	/* reads what it inherited, writes no more */
		int rrc = reclaim_fork_child();
		int rc = start_handlers(eng.opt.fault_threads);
		if (rc > 0) {
			start_reclaimer(rrc);
			start_stats(stats_fork_child());
		}
		if (fork_child_finish(fd, rc > 0)) {
			atomic_store_explicit(&eng.start_gate, 0, memory_order_release);
			syscall(SYS_futex, &eng.start_gate, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
			engine_sigrestore(&start_fork_mask);
			return;
		}
		/* The threads that did start stay parked at the gate. */
		zlog("fork: cannot start the child's handler threads (%d): its evicted pages are lost", rc);
	}
	start_fork_off();
	engine_sigrestore(&start_fork_mask);
}

/* The interim (every page was loaded back), or a child that could not
 * take over or start: a pass-through. Closing its userfaultfd drops its
 * registrations (the kernel then fills missing pages with zeros). */
static void start_fork_off(void)
{
	atomic_store(&eng.state, ENGINE_OFF);
	stats_fork_child_off();
	if (!start_fork_fds_shared) {
		log_set_fd(-1);	/* its log file is closed with the rest */
		fdtab_close_all();
	}
	eng.uffd = eng.pagemap_fd = -1;
}

/*
 * The restart's start (start.h): the child's own threads on its own
 * userfaultfd, over the table, pool and options it copied, as a followed
 * child's. The threads are made first and wait at the gate: creating them
 * allocates, and a first touch of a registered page would wait for a
 * handler. Only then is the table registered, and nothing of the
 * program's is touched until the gate opens.
 */
static void start_dormant_wake(void)
{
	int expected = ENGINE_DORMANT;
	sigset_t old;

	if (!atomic_compare_exchange_strong(&eng.state, &expected, ENGINE_STARTING))
		return;		/* another thread starts it; its call passes meanwhile */
	engine_sigblock(&old);
	eng.pid = (pid_t)syscall(SYS_getpid);
	if (eng.opt.verbose)
		zlog("fork: this child starts a libzswap of its own");
	if (fork_restart_open() >= 0) {
		atomic_store(&eng.start_gate, 1);
		writeback_fork_child();	/* reads what it inherited, writes a file of its own */
		int rrc = reclaim_fork_child();
		int rc = start_handlers(eng.opt.fault_threads);
		if (rc > 0) {
			start_reclaimer(rrc);
			start_stats(stats_fork_child());
			rc = evict_register_again();
		}
		if (rc >= 0) {
			atomic_store_explicit(&eng.state, ENGINE_RUNNING, memory_order_release);
			atomic_store_explicit(&eng.start_gate, 0, memory_order_release);
			syscall(SYS_futex, &eng.start_gate, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
			engine_sigrestore(&old);
			return;
		}
		/* The threads that did start stay parked at the gate. */
		zlog("fork: this child cannot start its own libzswap (%s); it runs without it",
		     start_errname(-rc));
	}
	start_fork_off();
	engine_sigrestore(&old);
}

ZSWAP_STARTUP void start_settle(void)
{
	while (atomic_load(&eng.state) == ENGINE_STARTING)
		sched_yield();
}

/* The coarse clock: through the vDSO, or as a system call (raw), which
 * touches none of the vDSO's data pages: a program that ends before its
 * first memory call after the start (most of a shell's) would otherwise
 * fault them in for the library alone. */
ZSWAP_STARTUP static uint64_t start_coarse_ns_as(bool raw)
{
	struct timespec ts;

	if (raw)
		layout_clock_coarse(&ts);
	else
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

ZSWAP_STARTUP static uint64_t start_coarse_ns(void)
{
	return start_coarse_ns_as(false);
}

/* A deferred process's requests (start_deferred_alloc). */
#define START_DEFER_ALLOCS	64
#define START_DEFER_BIG		(8u << 20)
#define START_DEFER_BYTES	(64u << 20)

/* A deferred process starts ZSWAP_START_DELAY from now (its start, or a
 * fork child's fork), its requests counted from none. */
ZSWAP_STARTUP static void start_defer_from_now(void)
{
	atomic_store(&eng.start_after, start_coarse_ns_as(true) + (uint64_t)eng.opt.start_delay * 1000000u);
	eng.start_allocs = 0;
	eng.start_bytes = 0;
}

static void start_run(void);

/* A deferred process too small to start reads its size again this long
 * after: at most a few system calls a quarter second. */
#define START_SIZE_RECHECK_NS	250000000u

/*
 * Whether a deferred process holds ZSWAP_START_SIZE of resident anonymous
 * memory (statm's resident less shared, as RssAnon): a shell or make holds
 * one or two MiB all its life, and a started library would make each of its
 * forks a multi-threaded one, dearer by more than half, for the little it
 * could compress. Read with a short-lived descriptor and no allocation (this
 * runs inside the program's malloc); unreadable, it does not hold the start
 * back. Too small, the next look is START_SIZE_RECHECK_NS away.
 */
static bool start_big_enough(void)
{
	char buf[128];
	uint64_t f[3] = { 0, 0, 0 };

	if (!eng.opt.start_size)
		return true;
	long n = fdtab_read_file("/proc/self/statm", buf, sizeof(buf));
	if (n <= 0)
		return true;
	parse_statm(buf, (size_t)n, f, 3);
	uint64_t anon = f[1] > f[2] ? (f[1] - f[2]) << ZS_PAGE_SHIFT : 0;
	if (anon >= eng.opt.start_size)
		return true;
	atomic_store(&eng.start_after, start_coarse_ns() + START_SIZE_RECHECK_NS);
	return false;
}

/* A state that starts as a deferred process does (start_wake_slow). */
ZSWAP_STARTUP static bool start_waits_delay(int state)
{
	return state == ENGINE_DEFERRED || (state == ENGINE_DORMANT && start_dormant_lazy);
}

ZSWAP_STARTUP void start_wake_slow(bool now)
{
	int state = atomic_load(&eng.state);

	if (state == ENGINE_DORMANT && !start_dormant_lazy) {
		start_dormant_wake();
		return;
	}
	if (!start_waits_delay(state) || (!now && start_coarse_ns() < atomic_load(&eng.start_after)))
		return;
	/* A vfork child (posix_spawn) runs on its parent's memory until it
	 * execs: never a start there. */
	if ((pid_t)syscall(SYS_getpid) != eng.pid)
		return;
	/* Nor inside the loader mapping an object (a program thread's dlopen
	 * allocating): the start loads libraries of its own (start_load_libs)
	 * and reads the loader's list of objects. The next call starts it. */
	if (_r_debug.r_state != RT_CONSISTENT)
		return;
	if (!now && !start_big_enough())
		return;
	if (state == ENGINE_DORMANT) {
		start_dormant_wake();
		return;
	}
	int expected = ENGINE_DEFERRED;
	if (!atomic_compare_exchange_strong(&eng.state, &expected, ENGINE_STARTING))
		return;		/* another thread starts it; its call passes meanwhile */
	sigset_t old;
	engine_sigblock(&old);
	start_run();
	engine_sigrestore(&old);
}

/*
 * bash allocates a few dozen small blocks between fork and exec; a child
 * that goes on to work allocates thousands, or a large block, soon.
 *
 * A deferred process looks at the clock once in START_DEFER_ALLOCS calls
 * of the malloc family. One that asks for much memory early starts at
 * once: START_DEFER_BIG in one request (malloc or an anonymous mmap), or
 * START_DEFER_BYTES in all, if it holds ZSWAP_START_SIZE by then (a
 * long-lived shell asks for that much over a few seconds, and frees it).
 * Otherwise a program that fills its memory in its first milliseconds and
 * then makes no call (computes, or sleeps) would never start, and its cold
 * pages would never be compressed.
 */

ZSWAP_STARTUP static void start_deferred_alloc(size_t n)
{
	eng.start_bytes += n < START_DEFER_BYTES ? n : START_DEFER_BYTES;
	if (n >= START_DEFER_BIG) {
		start_wake_slow(true);
	} else if (eng.start_bytes >= START_DEFER_BYTES) {
		eng.start_bytes = 0;	/* the next look after as many again */
		if (start_big_enough())
			start_wake_slow(true);
	} else if (n >= START_WAKE_BIG || ++eng.start_allocs % START_DEFER_ALLOCS == 0) {
		start_wake_slow(false);
	}
}

ZSWAP_STARTUP void start_wake_alloc_slow(size_t n)
{
	int state = atomic_load(&eng.state);

	if (start_waits_delay(state)) {
		start_deferred_alloc(n);
	} else if (state == ENGINE_DORMANT) {
		if (n < START_WAKE_BIG && ++start_dormant_allocs < START_WAKE_ALLOCS)
			return;
		start_dormant_wake();
	}
}

ZSWAP_STARTUP void start_wake_map_slow(size_t len)
{
	if (start_waits_delay(atomic_load(&eng.state)))
		start_deferred_alloc(len);
	else
		start_wake_slow(false);
}

ZSWAP_STARTUP void start_exit(void)
{
	int state = atomic_load(&eng.state);

	if ((state == ENGINE_DEFERRED || state == ENGINE_DORMANT) && stats_signal_pending())
		start_wake_slow(true);
	stats_exit();
}

/* exit(): the statistics' end (start_exit), a deferred start first when a
 * dump was asked for before it. */
ZSWAP_STARTUP __attribute__((destructor)) static void start_fini(void)
{
	start_exit();
}

/* A process that no memory limit covers (ZSWAP_START_DELAY): start_wake.
 * A limit holds from the first page, and a dump asked for at exit or at
 * intervals, or a test's injected failure, is about a running library. */
ZSWAP_STARTUP static bool start_deferrable(void)
{
	if (eng.opt.start_delay && !opt_starts_now(&eng.opt))
		reclaim_resolve_limit(&eng.opt);	/* ZSWAP_MEMORY_LIMIT=auto or N%: the memory cgroup's */
	return start_fork_may_defer();
}

void start_fork_raw_prepare(void)
{
	start_fork_prepare_as(true);
}

void start_fork_raw_parent(void)
{
	int err = errno;

	start_fork_parent();
	errno = err;
}

void start_fork_raw_child(bool fds_shared)
{
	start_fork_fds_shared = fds_shared;
	start_fork_child();
}


/* --- start-up ----------------------------------------------------------- */

static const char *start_errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case ENOTSUP: return "ENOTSUP";
	case EMFILE: return "EMFILE";
	case ENOMEM: return "ENOMEM";
	case EAGAIN: return "EAGAIN";
	default: return "error";
	}
}

#define START_THREAD_STACK (256 * 1024)

#define START_HANDLERS_MAX 16	/* ZSWAP_FAULT_THREADS's own maximum */

/*
 * The CPUs handlers are pinned to, one each, for ZSWAP_FAULT_THREADS=0: the
 * CPUs this process may run on now (taskset, cpusets), so a fault on any of
 * them has a handler on its own CPU (see fault_pin()). Returns how many
 * (cpus[] filled), or 0 when there is no such answer (no affinity call,
 * more CPUs than a cpu_set_t holds, or more allowed CPUs than
 * START_HANDLERS_MAX: every handler is woken by every fault, so a handler
 * per CPU would cost too much there); the caller then starts unpinned
 * threads. Never fails start-up.
 */
static unsigned int start_handler_cpus(int cpus[START_HANDLERS_MAX])
{
	cpu_set_t set;
	unsigned int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	if (CPU_COUNT(&set) > START_HANDLERS_MAX)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < START_HANDLERS_MAX; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

/*
 * Library threads do not keep the process alive. glibc ends the process
 * with exit(0) when the count of live threads it keeps (__nptl_nthreads)
 * drops to zero as a thread ends: with ours counted, a program whose last
 * thread returns or calls pthread_exit() would never end. So each of ours
 * is taken off that count once created, and put back just before it ends
 * (glibc then takes it off again): the count is the program's threads, and
 * the last of them runs exit(0) as without us (atexit handlers, stdio
 * flushed). The count is a GLIBC_PRIVATE symbol of libc.so (glibc 2.34 and
 * later), found at start-up; NULL when this C library has none (then a
 * program whose last thread ends lingers: said at start-up).
 */
static unsigned int *start_nthreads;

struct start_record {
	void *(*fn)(void *);
	void *arg;
};

/* Library threads created and not yet in start_tids (a futex word): the
 * hold waits them out, so that a credential change reaches every thread.
 * The creator does not: a wait for a thread's first step is a cross-CPU
 * wake-up, and each process would pay one per thread at start-up. */
static _Atomic uint32_t start_unknown ZSWAP_STARTUP_DATA;

static void start_unknown_put(void)
{
	if (atomic_fetch_sub(&start_unknown, 1) == 1)
		syscall(SYS_futex, &start_unknown, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* --- a function run on every library thread (start_on_threads) ---------- */

#define START_THREADS_MAX (START_HANDLERS_MAX + 16)	/* handlers, fork, reclaimer, statistics */

/* The live library threads' IDs (0: a free slot), each added as it starts
 * and removed as it ends, under the hold. In .data: a fork child clears it,
 * on a page it writes anyway. */
static _Atomic pid_t start_tids[START_THREADS_MAX] ZSWAP_STARTUP_DATA;

static struct {
	_Atomic uint32_t held;			/* start_threads_hold; a futex word */
	void (*fn)(void *);
	void *arg;
	_Atomic pid_t want[START_THREADS_MAX];	/* threads yet to run fn */
	_Atomic uint32_t left;			/* how many; the futex word the caller waits on */
} start_call;

/* A thread waiting here is still interrupted by start_on_threads (an
 * ending thread is in start_tids): the holder never waits for a waiter. */
static void start_tids_lock(void)
{
	uint32_t expect = 0;

	while (!atomic_compare_exchange_strong(&start_call.held, &expect, 1)) {
		syscall(SYS_futex, &start_call.held, FUTEX_WAIT_PRIVATE, expect, NULL, NULL, 0);
		expect = 0;
	}
}

static void start_tids_unlock(void)
{
	atomic_store(&start_call.held, 0);
	syscall(SYS_futex, &start_call.held, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void start_threads_hold(void)
{
	uint32_t n;

	while ((n = atomic_load(&start_unknown)) != 0)
		syscall(SYS_futex, &start_unknown, FUTEX_WAIT_PRIVATE, n, NULL, NULL, 0);
	start_tids_lock();
}

void start_threads_release(void)
{
	start_tids_unlock();
}

static void start_call_done(void)
{
	if (atomic_fetch_sub(&start_call.left, 1) == 1)
		syscall(SYS_futex, &start_call.left, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Our SIGBUS handler's first question (sigchain_on_tkill): a call for this
 * thread? Then it runs fn, once. */
static bool start_on_tkill(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	for (int i = 0; i < START_THREADS_MAX; i++) {
		pid_t t = tid;
		if (atomic_compare_exchange_strong(&start_call.want[i], &t, 0)) {
			start_call.fn(start_call.arg);
			start_call_done();
			return true;
		}
	}
	return false;
}

int start_on_threads(void (*fn)(void *), void *arg)
{
	pid_t pid = (pid_t)syscall(SYS_getpid), self = (pid_t)syscall(SYS_gettid);
	pid_t tids[START_THREADS_MAX];
	uint32_t n = 0;

	if (!engine_running() || pid != eng.pid)
		return -ESRCH;
	if (!sigchain_installed(SIGBUS))
		return -ENOSYS;
	start_call.fn = fn;
	start_call.arg = arg;
	for (int i = 0; i < START_THREADS_MAX; i++) {
		tids[i] = atomic_load(&start_tids[i]);
		if (tids[i] && tids[i] != self)
			n++;
		else
			tids[i] = 0;
	}
	atomic_store(&start_call.left, n);
	for (int i = 0; i < START_THREADS_MAX; i++)
		atomic_store(&start_call.want[i], tids[i]);
	int ran = (int)n;
	for (int i = 0; i < START_THREADS_MAX; i++) {
		pid_t t = tids[i];
		/* A thread that is gone cannot answer: answered for it. */
		if (t && syscall(SYS_tgkill, pid, t, SIGBUS) != 0 &&
		    atomic_compare_exchange_strong(&start_call.want[i], &t, 0)) {
			ran--;
			start_call_done();
		}
	}
	uint32_t left;
	while ((left = atomic_load(&start_call.left)) != 0)
		syscall(SYS_futex, &start_call.left, FUTEX_WAIT_PRIVATE, left, NULL, NULL, 0);
	return ran;
}

/* A library thread's own entry in start_tids; -1 if the table is full (it
 * is then left out of start_on_threads: said once). */
static int start_tid_add(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int slot = -1;

	start_tids_lock();
	for (int i = 0; i < START_THREADS_MAX && slot < 0; i++)
		if (!atomic_load(&start_tids[i])) {
			atomic_store(&start_tids[i], tid);
			slot = i;
		}
	start_tids_unlock();
	start_unknown_put();
	if (slot < 0)
		zlog("more than %d library threads: thread %ld does not follow the program's credentials",
		     START_THREADS_MAX, (long)tid);
	return slot;
}

static void start_tid_remove(int slot)
{
	if (slot < 0)
		return;
	start_tids_lock();
	atomic_store(&start_tids[slot], 0);
	start_tids_unlock();
}

/* A fork child: none of the parent's threads is in it, and no call. */
ZSWAP_STARTUP static void start_tids_fork_child(void)
{
	/* Written only where set (prim_reset): a deferred process has no
	 * threads, and its children would copy these pages for nothing. */
	for (int i = 0; i < START_THREADS_MAX; i++) {
		if (atomic_load(&start_tids[i]))
			atomic_store(&start_tids[i], 0);
		if (atomic_load(&start_call.want[i]))
			atomic_store(&start_call.want[i], 0);
	}
	if (atomic_load(&start_call.left))
		atomic_store(&start_call.left, 0);
	if (atomic_load(&start_call.held))
		atomic_store(&start_call.held, 0);
	if (atomic_load(&start_unknown))
		atomic_store(&start_unknown, 0);	/* the parent's new threads are not here */
}

static void start_find_nthreads(void)
{
	start_nthreads = elfsym_any("__nptl_nthreads");
	if (!start_nthreads)
		zlog("this C library has no thread count libzswap can find (__nptl_nthreads): a program whose"
		     " last thread ends with pthread_exit() does not end");
}

static void *start_thread_main(void *p)
{
	struct start_record *rec = p, st = { rec->fn, rec->arg };
	int slot = start_tid_add();
	void *r = st.fn(st.arg);

	start_tid_remove(slot);

	if (start_nthreads)
		__atomic_fetch_add(start_nthreads, 1, __ATOMIC_SEQ_CST);
	return r;
}

/* Start fn(arg) on a library stack of stack_size bytes (never the program's
 * memory: its start record sits at the stack's low end), detached, off
 * glibc's thread count, with every signal blocked (it inherits the mask):
 * no program signal handler ever runs on it. Returns 0 or -errno. */
static int start_thread(void *(*fn)(void *), void *arg, size_t stack_size)
{
	struct start_record *st;
	pthread_attr_t attr;
	pthread_t t;
	sigset_t old;
	int rc;

	/* Test hook (ZSWAP_INJECT_THREAD_FAIL): a thread that cannot be
	 * created, as pthread_create says under RLIMIT_NPROC or no memory. */
	if (inject_take(&eng.inject_thread_fail))
		return -EAGAIN;
	st = prim_alloc(stack_size);
	if (!st)
		return -ENOMEM;
	st->fn = fn;
	st->arg = arg;
	/* Unknown to start_on_threads until it runs: a credential change
	 * waits for it (start_threads_hold), or it would not follow. */
	atomic_fetch_add(&start_unknown, 1);
	engine_sigblock(&old);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, st, stack_size);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = -pthread_create(&t, &attr, start_thread_main, st);
	pthread_attr_destroy(&attr);
	if (rc == 0 && start_nthreads)
		__atomic_fetch_sub(start_nthreads, 1, __ATOMIC_SEQ_CST);
	engine_sigrestore(&old);
	if (rc < 0) {
		start_unknown_put();
		prim_free(st, stack_size);
	}
	return rc;
}

/* Start the fault handler threads: nthreads unpinned, or 0 for one pinned to
 * each allowed CPU (start_handler_cpus); then the fork thread (fork.c),
 * which reads userfaultfd while a fork freezes the handlers (without it
 * forks take the interim). A handler that cannot be created leaves the
 * others to serve (said once); none at all, or no fork thread, is an error.
 * Returns how many handlers were started, or -errno. */
static int start_handlers(unsigned int nthreads)
{
	int cpus[START_HANDLERS_MAX];
	unsigned int ncpus = 0;
	int rc = fault_init();

	if (rc < 0)
		return rc;
	if (!nthreads) {
		ncpus = start_handler_cpus(cpus);
		nthreads = ncpus ? ncpus : START_HANDLERS_MAX;
	}
	unsigned int started = 0;
	int err = 0;
	for (unsigned int i = 0; i < nthreads; i++) {
		void *ctx = fault_ctx_create(i < ncpus ? cpus[i] : -1);
		int trc = ctx ? start_thread(fault_thread, ctx, START_THREAD_STACK) : -ENOMEM;
		if (trc == 0)
			started++;
		else
			err = trc;
	}
	if (!started)
		return err ? err : -EAGAIN;
	if (err)
		zlog("started %u of %u fault handler threads (%s): the others serve all faults", started,
		     nthreads, start_errname(-err));
	eng.fault_threads = started;
	if (fork_enabled())
		rc = start_thread(fork_thread, NULL, START_THREAD_STACK);
	return rc < 0 ? rc : (int)started;
}

/* The reclaimer (ZSWAP_MEMORY_LIMIT, ZSWAP_COLD_AGE), given what
 * reclaim_init or reclaim_fork_child answered. */
static void start_reclaimer(int rc)
{
	if (rc > 0)
		rc = start_thread(reclaim_thread, NULL, START_THREAD_STACK);
	if (rc < 0)
		zlog("cannot start the reclaimer (%s): ZSWAP_MEMORY_LIMIT and ZSWAP_COLD_AGE are not enforced",
		     start_errname(-rc));
}

/* The statistics thread (src/observe/stats.c), given what stats_init or
 * stats_fork_child answered (0: start it). */
static void start_stats(int rc)
{
	if (rc == 0 && (rc = start_thread(stats_thread, NULL, STATS_STACK_SIZE)) < 0)
		zlog("cannot start the statistics thread (%s): no statistics dumps", start_errname(-rc));
}

ZSWAP_STARTUP static void start_init(void)
{
	int expected = ENGINE_UNINIT;

	if (!atomic_compare_exchange_strong(&eng.state, &expected, ENGINE_STARTING))
		return;
	if (getauxval(AT_SECURE))
		goto off;	/* set-user-ID: no file the environment names is opened */
	start_log_init();
	opt_load(&eng.opt, NULL);
	if (eng.opt.verbose)
		opt_log_in_force(&eng.opt);
	if (!eng.opt.enabled)
		goto off;
	/* From the start, so that a deferred process's fork children defer
	 * from their own fork (and never registered by a start on some
	 * program thread, which could wait on a fork holding glibc's atfork
	 * lock). */
	__register_atfork(start_fork_prepare, start_fork_parent, start_fork_child, __dso_handle);
	eng.pid = (pid_t)syscall(SYS_getpid);
	if (start_deferrable()) {
		start_defer_from_now();
		stats_take_signal_early();	/* a dump asked for meanwhile is not the default action */
		atomic_store(&eng.state, ENGINE_DEFERRED);
		if (eng.opt.verbose >= 2)
			zlog("no memory limit: starts at the first memory call after %u ms (ZSWAP_START_DELAY)%s",
			     eng.opt.start_delay,
			     eng.opt.start_size ? " once it holds ZSWAP_START_SIZE of anonymous memory" : "");
		return;
	}
	start_run();
	return;
off:
	start_log_close();	/* a pass-through holds no descriptor */
	atomic_store(&eng.state, ENGINE_OFF);
}

/*
 * The libraries only a started library calls (src/base/dynlib.h), loaded
 * before bindnow_closure (their lazily bound slots, if the program loaded
 * them first, are bound with the rest) and before any thread of ours runs:
 * no library thread ever enters the loader. A compressor whose library is
 * missing is replaced by lz4, said once; without lz4 the library does not
 * start (false, said once); the tier says it itself when it is wanted
 * (writeback_init); backtraces are off (unwind_load says so).
 */
static bool start_load_libs(void)
{
	const char *why;

	comp_load();
	backing_load();
	unwind_load();
	/* lz4 is every other compressor's fallback: without it, nothing. */
	if ((why = comp_missing(ZSWAP_COMP_LZ4)) != NULL) {
		zlog("no compressor: %s; running without libzswap. Fix: install liblz4 (Debian: liblz4-1)", why);
		return false;
	}
	if ((why = comp_missing(eng.opt.comp)) != NULL) {
		zlog("ZSWAP_COMPRESSOR=%s is not available (%s): lz4 is used", comp_name(eng.opt.comp), why);
		eng.opt.comp = ZSWAP_COMP_LZ4;
		eng.opt.comp_level = 0;
	}
	if ((why = comp_missing(eng.opt.recomp)) != NULL) {
		zlog("ZSWAP_RECOMP_ALGORITHM=%s is not available (%s): recompression uses lz4",
		     comp_name(eng.opt.recomp), why);
		eng.opt.recomp = ZSWAP_COMP_LZ4;
		eng.opt.recomp_level = 0;
	}
	return true;
}

/* The start itself: in the constructor, or at a deferred process's first
 * memory call (start_wake_slow: other threads of the program run, and
 * their calls pass through until the state is ENGINE_RUNNING). */
static void start_run(void)
{
	struct uf_info info;
	struct zswap_store_config cfg;
	pthread_rwlockattr_t attr;
	int rc;

	atomic_store(&eng.inject_thread_fail, eng.opt.inject_thread_fail);
	atomic_store(&eng.inject_pool_hold, eng.opt.inject_pool_hold);
	engine_note_objects();
	start_find_nthreads();
	sigchain_on_tkill(start_on_tkill);
	if (!start_load_libs())
		goto off;
	/* Before any thread of ours runs or any page is managed. */
	int bound = bindnow_closure();
	if (eng.opt.verbose >= 2)
		zlog("bound %d lazy PLT slot(s) of the objects the library calls into", bound);

	/* Kept high, out of the program's way (src/base/fdtab.h). */
	eng.uffd = fdtab_keep(uf_open(&info));
	if (eng.uffd < 0) {
		zlog("userfaultfd unavailable: %s (%s); running without libzswap. Fix: %s",
		     info.cause, start_errname(info.err), info.fix);
		goto off;
	}
	eng.features = info.features;
	if (!(eng.features & UFFD_FEATURE_POISON))
		zlog("the kernel has no UFFDIO_POISON: a page that fails to decompress will abort the program");
	eng.pagemap_fd = fdtab_open_ro("/proc/self/pagemap", true);

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&eng.ev_lock, &attr);
	pthread_rwlock_init(&eng.evict_gate, &attr);
	pthread_rwlockattr_destroy(&attr);

	reclaim_resolve_limit(&eng.opt);	/* ZSWAP_MEMORY_LIMIT=auto or N%: the memory cgroup's */
	opt_store_config(&eng.opt, &cfg);
	reclaim_store_config(&eng.opt, &cfg);	/* ZSWAP_MAX_POOL_PERCENT, accept threshold */
	eng.store = zswap_store_create(&cfg);
	if (!eng.store) {
		zlog("cannot create the compressed store (%s); running without libzswap",
		     start_errname(errno));
		goto off_fd;
	}
	if ((rc = region_init()) < 0 || (rc = maps_init()) < 0 || (rc = evict_init()) < 0) {
		zlog("cannot start (%s); running without libzswap", start_errname(-rc));
		goto off_fd;
	}
	/* Still the process's one thread: no library thread runs yet. No
	 * handler of the program's may write its data between the copy and
	 * the swap either (a constructor's start runs with signals open). */
	sigset_t pd_old;
	engine_sigblock(&pd_old);
	long pd = progdata_take();
	engine_sigrestore(&pd_old);
	if (pd < 0)
		zlog("the program's data stays a file mapping (%s): reclaim cannot take it", start_errname((int)-pd));
	else if (pd > 0 && eng.opt.verbose)
		zlog("the program's data (%ld KiB) is anonymous memory now: reclaim may take it", pd >> 10);
	/* ZSWAP_MEMORY_SCOPE=tree: the process tree's limit, and its second
	 * tier's directory and cap, which the tier opens with. */
	group_init(eng.opt.memory_limit);
	writeback_init();	/* the second tier, when asked for (it says why not) */
	if (!fork_init() && (eng.features & UFFD_FEATURE_EVENT_FORK) && eng.opt.verbose)
		zlog("fork: children are not followed (pool-lock mode or no memory): fork loads the pool back");
	if ((rc = start_handlers(eng.opt.fault_threads)) < 0) {
		/* Threads already started block in poll(); nothing is ever
		 * registered, so they are never woken. */
		zlog("cannot start the fault handler threads (%s); running without libzswap",
		     start_errname(-rc));
		goto off_fd;
	}
	/* The reclaimer (ZSWAP_MEMORY_LIMIT, ZSWAP_COLD_AGE), on a library
	 * stack with every signal blocked, like the handlers. */
	start_reclaimer(reclaim_init());
	/* Test hooks (ZSWAP_INJECT_*_FAIL): tests/engine/test_eng_poison.sh,
	 * test_eng_inject.sh. */
	zswap_store_inject(eng.store, ZSWAP_INJECT_DECOMPRESS, eng.opt.inject_decompress_fail);
	zswap_store_inject(eng.store, ZSWAP_INJECT_COMPRESS, eng.opt.inject_compress_fail);
	zswap_store_inject(eng.store, ZSWAP_INJECT_ALLOC, eng.opt.inject_alloc_fail);
	atomic_store(&eng.inject_copy_fail, eng.opt.inject_copy_fail);
	atomic_store_explicit(&eng.state, ENGINE_RUNNING, memory_order_release);
	/* The statistics thread (src/observe/stats.c), started like the handlers. */
	start_stats(stats_init());
	if (eng.opt.verbose)
		zlog("active: %d fault thread(s)%s, min region %llu bytes, fault-around %u pages",
		     rc, eng.opt.fault_threads ? "" : " (one per CPU)",
		     (unsigned long long)eng.opt.min_region, eng.opt.fault_around);
	return;

off_fd:
	fdtab_close(eng.uffd);
	fdtab_close(eng.pagemap_fd);
	eng.uffd = eng.pagemap_fd = -1;
off:
	start_log_close();	/* a pass-through holds no descriptor */
	atomic_store(&eng.state, ENGINE_OFF);
}

ZSWAP_STARTUP __attribute__((constructor)) static void start_ctor(void)
{
	start_init();
}

/* The object's DT_FINI (Makefile.am: -Wl,-fini): the C runtime's _fini does
 * nothing (destructors run from .fini_array) and sits after the last page
 * of .text, a fault of its own at every exit; this one sits with the exit
 * path. */
ZSWAP_STARTUP void start_dt_fini(void);
ZSWAP_STARTUP void start_dt_fini(void)
{
}

