/*
 * engine.c - start-up inside someone else's process, the public API, and the
 * back ends of the interposed calls.
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
 * and the child runs as a pass-through (its copies of the descriptors closed).
 */
#include "config.h"
#include "engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/elfsym.h"
#include "engine/evict.h"
#include "base/fdtab.h"
#include "engine/fault.h"
#include "engine/fork.h"
#include "base/log.h"
#include "base/maps.h"
#include "base/prim.h"
#include "reclaim/reclaim.h"
#include "engine/region.h"
#include "base/sigchain.h"
#include "observe/stats.h"
#include "engine/uffd.h"
#include "zswap.h"

#define ZSWAP_EXPORT __attribute__((visibility("default")))

struct engine eng = { .uffd = -1, .pagemap_fd = -1 };

static __thread sigset_t engine_fork_mask;
static __thread unsigned int engine_blocked;	/* engine_sigblock depth */

bool engine_in_library(void)
{
	return engine_blocked != 0;
}

void engine_sigblock(sigset_t *old)
{
	sigset_t all;

	engine_blocked++;
	sigfillset(&all);
	/* Fault signals stay deliverable: blocked, the kernel would kill the
	 * process at once, without the crash report (src/observe/crash.c). */
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void engine_sigrestore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
	if (engine_blocked)
		engine_blocked--;
}

/* --- fork --------------------------------------------------------------- */

static int engine_start_handlers(unsigned int nthreads);
static void engine_start_reclaimer(int rc);
static void engine_start_stats(int rc);

/* This fork is followed (fork.c holds the state frozen), or the interim. */
static bool engine_fork_followed;

/* A clone() child that shares the parent's descriptor table (CLONE_FILES
 * without CLONE_VM): its descriptors are the parent's, never to close.
 * Set only in such a child's own copy of memory. */
static bool engine_fork_fds_shared;

/* The pid engine_fork_prepare saw running (the child compares it with the
 * state's: a fork from a process whose engine is not its own does nothing). */
static pid_t engine_fork_pid;

/* interim: every page loaded back, the child left without the library
 * (engine_fork_raw); else followed when fork.c can (fork_prepare). */
static void engine_fork_prepare_as(bool interim)
{
	engine_fork_pid = 0;
	if (!engine_running())
		return;
	engine_fork_pid = eng.pid;
	engine_sigblock(&engine_fork_mask);
	/* First, while the handlers still process events: no munmap, mremap
	 * or discard of the program's in flight across the copy (fork.h). */
	fork_gate_close();
	pthread_rwlock_wrlock(&eng.evict_gate);	/* no page in flight, none to come */
	engine_fork_followed = interim ? fork_prepare_interim() : fork_prepare();
	if (engine_fork_followed)
		return;
	fault_load_all(0, UINTPTR_MAX);
	/* Wait out fault services still installing a page. */
	pthread_rwlock_wrlock(&eng.ev_lock);
	pthread_rwlock_unlock(&eng.ev_lock);
}

static void engine_fork_prepare(void)
{
	engine_fork_prepare_as(false);
}

static void engine_fork_parent(void)
{
	if (!engine_fork_pid)
		return;
	if (engine_fork_followed)
		fork_parent();
	fork_gate_open();
	pthread_rwlock_unlock(&eng.evict_gate);
	engine_sigrestore(&engine_fork_mask);
}

static void engine_fork_child(void)
{
	fork_gate_reset();	/* the calls it held back were the parent's threads */
	sigchain_fork_child();	/* its own copy of the signal records */
	if (atomic_load(&eng.state) != ENGINE_RUNNING || engine_fork_pid != eng.pid)
		return;
	eng.pid = (pid_t)syscall(SYS_getpid);
	int fd = engine_fork_followed ? fork_child_take() : -1;
	if (fd >= 0) {
		/* Our own userfaultfd and copy of everything: serve it, and
		 * reclaim and dump for this process. The threads are made
		 * while the parent still serves this child's faults (fork.h:
		 * pthread_create may fault on the evicted heap) and wait at the
		 * gate until the handover is applied. The reclaimer's new
		 * eventfd comes first: the handlers poll it. */
		atomic_store(&eng.start_gate, 1);
		int rrc = reclaim_fork_child();
		int rc = engine_start_handlers(eng.opt.fault_threads);
		if (rc > 0) {
			engine_start_reclaimer(rrc);
			engine_start_stats(stats_fork_child());
		}
		if (fork_child_finish(fd, rc > 0)) {
			atomic_store_explicit(&eng.start_gate, 0, memory_order_release);
			syscall(SYS_futex, &eng.start_gate, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
			engine_sigrestore(&engine_fork_mask);
			return;
		}
		/* The threads that did start stay parked at the gate. */
		zlog("fork: cannot start the child's handler threads (%d): its evicted pages are lost", rc);
	}
	/* The interim (every page was loaded back), or a child that could not
	 * take over: a pass-through. Closing its userfaultfd drops its
	 * registrations (the kernel then fills missing pages with zeros). */
	atomic_store(&eng.state, ENGINE_OFF);
	stats_fork_child_off();
	if (!engine_fork_fds_shared)
		fdtab_close_all();
	eng.uffd = eng.pagemap_fd = -1;
	engine_sigrestore(&engine_fork_mask);
}

void engine_fork_raw_prepare(void)
{
	engine_fork_prepare_as(true);
}

void engine_fork_raw_parent(void)
{
	int err = errno;

	engine_fork_parent();
	errno = err;
}

void engine_fork_raw_child(bool fds_shared)
{
	engine_fork_fds_shared = fds_shared;
	engine_fork_child();
}

/* --- start-up ----------------------------------------------------------- */

/*
 * The writable segments (data and bss) of every shared object loaded at
 * start-up: ours, libc, the loader, the compressors, and in a sanitizer
 * build the sanitizer runtime, which our own code runs through (its
 * interceptors). Their .bss tails are anonymous rw-p mappings that adoption
 * would take for program memory; evicting one would make the evictor or a
 * handler fault on memory it needs to run. Recorded once, before the engine
 * runs, read lock-free after (the release store of ENGINE_RUNNING orders
 * them). The main program's own data is the program's: not recorded.
 * Objects dlopen()ed later are not recorded either: the engine never runs
 * their code.
 */
#define ENGINE_OBJ_RANGES 128

static struct { uintptr_t start, end; } engine_obj[ENGINE_OBJ_RANGES];
static size_t engine_nobj;

static int engine_note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned int *seen = arg;

	(void)size;
	if ((*seen)++ == 0)
		return 0;	/* the main program: dl_iterate_phdr visits it first */
	for (unsigned int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || engine_nobj == ENGINE_OBJ_RANGES)
			continue;
		uintptr_t a = (info->dlpi_addr + ph->p_vaddr) & ZS_PAGE_MASK;
		uintptr_t b = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
		engine_obj[engine_nobj].start = a;
		engine_obj[engine_nobj++].end = b;
	}
	return 0;
}

bool engine_is_object_data(uintptr_t start, uintptr_t end)
{
	for (size_t i = 0; i < engine_nobj; i++)
		if (start < engine_obj[i].end && end > engine_obj[i].start)
			return true;
	return false;
}

static const char *engine_errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case ENOTSUP: return "ENOTSUP";
	case EMFILE: return "EMFILE";
	case ENOMEM: return "ENOMEM";
	default: return "error";
	}
}

#define ENGINE_HANDLER_STACK (256 * 1024)

#define ENGINE_HANDLERS_MAX 16	/* ZSWAP_FAULT_THREADS's own maximum */

/*
 * The CPUs handlers are pinned to, one each, for ZSWAP_FAULT_THREADS=0: the
 * CPUs this process may run on now (taskset, cpusets), so a fault on any of
 * them has a handler on its own CPU (see fault_pin()). Returns how many
 * (cpus[] filled), or 0 when there is no such answer (no affinity call,
 * more CPUs than a cpu_set_t holds, or more allowed CPUs than
 * ENGINE_HANDLERS_MAX: every handler is woken by every fault, so a handler
 * per CPU would cost too much there); the caller then starts unpinned
 * threads. Never fails start-up.
 */
static unsigned int engine_handler_cpus(int cpus[ENGINE_HANDLERS_MAX])
{
	cpu_set_t set;
	unsigned int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	if (CPU_COUNT(&set) > ENGINE_HANDLERS_MAX)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < ENGINE_HANDLERS_MAX; c++)
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
static unsigned int *engine_nthreads;

struct engine_thread_start {
	void *(*fn)(void *);
	void *arg;
};

static void engine_find_nthreads(void)
{
	engine_nthreads = elfsym_any("__nptl_nthreads");
	if (!engine_nthreads)
		zlog("this C library has no thread count libzswap can find (__nptl_nthreads): a program whose"
		     " last thread ends with pthread_exit() does not end");
}

static void *engine_thread_main(void *p)
{
	struct engine_thread_start st = *(struct engine_thread_start *)p;
	void *r = st.fn(st.arg);

	if (engine_nthreads)
		__atomic_fetch_add(engine_nthreads, 1, __ATOMIC_SEQ_CST);
	return r;
}

/* Start fn(arg) on a library stack of stack_size bytes (never the program's
 * memory: its start record sits at the stack's low end), detached, off
 * glibc's thread count, with every signal blocked (it inherits the mask):
 * no program signal handler ever runs on it. Returns 0 or -errno. */
static int engine_start_thread(void *(*fn)(void *), void *arg, size_t stack_size)
{
	struct engine_thread_start *st = prim_alloc(stack_size);
	pthread_attr_t attr;
	pthread_t t;
	sigset_t old;
	int rc;

	if (!st)
		return -ENOMEM;
	st->fn = fn;
	st->arg = arg;
	engine_sigblock(&old);
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, st, stack_size);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = -pthread_create(&t, &attr, engine_thread_main, st);
	pthread_attr_destroy(&attr);
	if (rc == 0 && engine_nthreads)
		__atomic_fetch_sub(engine_nthreads, 1, __ATOMIC_SEQ_CST);
	engine_sigrestore(&old);
	if (rc < 0)
		prim_free(st, stack_size);
	return rc;
}

/* Start the fault handler threads: nthreads unpinned, or 0 for one pinned to
 * each allowed CPU (engine_handler_cpus); then the fork thread (fork.c),
 * which reads userfaultfd while a fork freezes the handlers (without it
 * forks take the interim). Returns how many handlers were started, or
 * -errno. */
static int engine_start_handlers(unsigned int nthreads)
{
	int cpus[ENGINE_HANDLERS_MAX];
	unsigned int ncpus = 0;
	int rc = fault_init();

	if (rc < 0)
		return rc;
	if (!nthreads) {
		ncpus = engine_handler_cpus(cpus);
		nthreads = ncpus ? ncpus : ENGINE_HANDLERS_MAX;
	}
	unsigned int i;
	for (i = 0; i < nthreads && rc == 0; i++) {
		void *ctx = fault_ctx_create(i < ncpus ? cpus[i] : -1);
		rc = ctx ? engine_start_thread(fault_thread, ctx, ENGINE_HANDLER_STACK) : -ENOMEM;
	}
	if (rc == 0 && fork_enabled())
		rc = engine_start_thread(fork_thread, NULL, ENGINE_HANDLER_STACK);
	return rc < 0 ? rc : (int)i;
}

/* The reclaimer (ZSWAP_MEMORY_LIMIT, ZSWAP_COLD_AGE), given what
 * reclaim_init or reclaim_fork_child answered. */
static void engine_start_reclaimer(int rc)
{
	if (rc > 0)
		rc = engine_start_thread(reclaim_thread, NULL, ENGINE_HANDLER_STACK);
	if (rc < 0)
		zlog("cannot start the reclaimer (%s): ZSWAP_MEMORY_LIMIT and ZSWAP_COLD_AGE are not enforced",
		     engine_errname(-rc));
}

/* The statistics thread (src/observe/stats.c), given what stats_init or
 * stats_fork_child answered (0: start it). */
static void engine_start_stats(int rc)
{
	if (rc == 0 && (rc = engine_start_thread(stats_thread, NULL, STATS_STACK_SIZE)) < 0)
		zlog("cannot start the statistics thread (%s): no statistics dumps", engine_errname(-rc));
}

static void engine_init(void)
{
	int expected = ENGINE_UNINIT;
	struct uf_info info;
	struct zswap_store_config cfg;
	pthread_rwlockattr_t attr;
	int rc;

	if (!atomic_compare_exchange_strong(&eng.state, &expected, ENGINE_STARTING))
		return;
	opt_load(&eng.opt, NULL);
	if (!eng.opt.enabled || getauxval(AT_SECURE))
		goto off;
	unsigned int nobjects = 0;
	dl_iterate_phdr(engine_note_object, &nobjects);
	engine_find_nthreads();

	/* Kept high, out of the program's way (src/base/fdtab.h). */
	eng.uffd = fdtab_keep(uf_open(&info));
	if (eng.uffd < 0) {
		zlog("userfaultfd unavailable: %s (%s); running without libzswap. Fix: %s",
		     info.cause, engine_errname(info.err), info.fix);
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

	opt_store_config(&eng.opt, &cfg);
	reclaim_store_config(&eng.opt, &cfg);	/* ZSWAP_MAX_POOL_PERCENT, accept threshold */
	eng.store = zswap_store_create(&cfg);
	if (!eng.store) {
		zlog("cannot create the compressed store (%s); running without libzswap",
		     engine_errname(errno));
		goto off_fd;
	}
	if ((rc = region_init()) < 0 || (rc = maps_init()) < 0 || (rc = evict_init()) < 0) {
		zlog("cannot start (%s); running without libzswap", engine_errname(-rc));
		goto off_fd;
	}
	if (!fork_init() && (eng.features & UFFD_FEATURE_EVENT_FORK) && eng.opt.verbose)
		zlog("fork: children are not followed (pool-lock mode or no memory): fork loads the pool back");
	if ((rc = engine_start_handlers(eng.opt.fault_threads)) < 0) {
		/* Threads already started block in poll(); nothing is ever
		 * registered, so they are never woken. */
		zlog("cannot start the fault handler threads (%s); running without libzswap",
		     engine_errname(-rc));
		goto off_fd;
	}
	/* The reclaimer (ZSWAP_MEMORY_LIMIT, ZSWAP_COLD_AGE), on a library
	 * stack with every signal blocked, like the handlers. */
	engine_start_reclaimer(reclaim_init());
	/* Test hook (ZSWAP_INJECT_DECOMPRESS_FAIL): tests/test_eng_poison.sh. */
	if (eng.opt.inject_decompress_fail)
		zswap_store_inject_decompress_fail(eng.store, eng.opt.inject_decompress_fail);
	pthread_atfork(engine_fork_prepare, engine_fork_parent, engine_fork_child);
	eng.pid = (pid_t)syscall(SYS_getpid);
	atomic_store_explicit(&eng.state, ENGINE_RUNNING, memory_order_release);
	/* The statistics thread (src/observe/stats.c), started like the handlers. */
	engine_start_stats(stats_init());
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
	atomic_store(&eng.state, ENGINE_OFF);
}

__attribute__((constructor)) static void engine_ctor(void)
{
	engine_init();
}

/* --- back ends of the interposed calls ---------------------------------- */

void engine_mapped(uintptr_t addr, size_t len, int prot, int flags, int fd)
{
	sigset_t old;

	if ((flags & MAP_TYPE) != MAP_PRIVATE || !(flags & MAP_ANONYMOUS) ||
	    (prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) != (PROT_READ | PROT_WRITE) ||
	    (flags & (MAP_LOCKED | MAP_HUGETLB | MAP_STACK | MAP_GROWSDOWN)) ||
	    len < eng.opt.min_region || atomic_load(&eng.lock_future))
		return;
	(void)fd;
	len = (len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	engine_sigblock(&old);
	/* Under the event lock: an UNMAP event read before this mapping existed
	 * is processed before the region goes in (see engine.h). */
	pthread_rwlock_rdlock(&eng.ev_lock);
	region_forget_unregistered(addr, addr + len);
	region_insert(addr, addr + len, 0);
	/* Under a memory limit first touches must fault (to be counted and
	 * held): register now rather than at the first eviction. */
	if (reclaim_limit_set())
		evict_register_new(addr);
	pthread_rwlock_unlock(&eng.ev_lock);
	engine_sigrestore(&old);
}

void engine_unmapped(uintptr_t addr, size_t len)
{
	sigset_t old;

	len = (len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	engine_sigblock(&old);
	region_forget_unregistered(addr, addr + len);
	engine_sigrestore(&old);
}

void engine_remapped(uintptr_t old_addr, size_t old_len, uintptr_t new_addr, size_t new_len, int flags)
{
	struct region_ref ref;
	sigset_t old;
	bool managed;

	old_len = (old_len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	new_len = (new_len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	engine_sigblock(&old);
	pthread_rwlock_rdlock(&eng.ev_lock);
	/* A range left unmanaged (mlock, MADV_WIPEONFORK/DONTFORK: flags the
	 * kernel moves with the mapping; mremap moves one mapping) stays so
	 * at its new address, whatever its length. */
	bool keep_out = region_lookup(old_addr, &ref, false) && (ref.flags & REGION_UNMANAGEABLE);
	uint32_t keep_flags = REGION_UNMANAGEABLE | (keep_out ? ref.flags & REGION_KEEPOUT : 0);
	/* Registered regions were moved by their REMAP event already; the
	 * others the kernel told nobody about. */
	managed = region_lookup(new_addr, &ref, false);
	if (!(flags & MREMAP_DONTUNMAP) || new_addr == old_addr)
		managed |= region_forget_unregistered(old_addr, old_addr + old_len);
	else
		managed |= region_lookup(old_addr, &ref, false);
	if (keep_out)
		region_insert(new_addr, new_addr + new_len, keep_flags);
	else if (managed && new_len >= eng.opt.min_region && !atomic_load(&eng.lock_future))
		region_insert(new_addr, new_addr + new_len, 0);
	pthread_rwlock_unlock(&eng.ev_lock);
	engine_sigrestore(&old);
}

int engine_pageout(uintptr_t addr, size_t len)
{
	sigset_t old;

	if (addr & ~ZS_PAGE_MASK || addr + len < addr)
		return -EINVAL;
	len = (len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	if (!len)
		return 0;
	engine_sigblock(&old);
	evict_range(addr, addr + len);
	engine_sigrestore(&old);
	return 0;
}

/*
 * madvise(MADV_DONTNEED / _LOCKED / FREE / REMOVE) from the program: the
 * kernel raises REMOVE, waits for it to be read, then zaps; in between an
 * eviction could move the doomed page out and so keep its old contents. The
 * event therefore marks the range's resident slots ZAP (never evicted), and
 * once this call returns its zap is done: the marks can go, provided no
 * other REMOVE was processed meanwhile (its zap may still be due). Otherwise
 * they stay until each page is filled again by a fault: safe, and costs only
 * the eviction of pages MADV_FREE left in place. Calls the interposer never
 * sees (raw syscalls, glibc's internal ones) leave the marks the same way.
 */
long engine_discard(void *addr, size_t len, int advice)
{
	uint64_t seq = atomic_load(&eng.remove_seq);
	long r = syscall(SYS_madvise, addr, len, advice);
	sigset_t old;

	if (r != 0 || !len)
		return r;
	engine_sigblock(&old);
	/* The read side orders this after our own event's processing (read
	 * before madvise returned, processed under the write side). */
	pthread_rwlock_rdlock(&eng.ev_lock);
	if (atomic_load(&eng.remove_seq) - seq == 1) {
		uintptr_t start = (uintptr_t)addr & ZS_PAGE_MASK;
		region_clear_zap(start, ((uintptr_t)addr + len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK);
	}
	pthread_rwlock_unlock(&eng.ev_lock);
	engine_sigrestore(&old);
	return r;
}

void engine_cold(uintptr_t addr, size_t len)
{
	struct region_ref refs[32];
	uintptr_t end = addr + ((len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK), cursor = addr;
	sigset_t old;

	engine_sigblock(&old);
	while (cursor < end) {
		size_t n = region_collect(addr, end, &cursor, refs, 32);
		for (size_t k = 0; k < n; k++) {
			uintptr_t a = refs[k].start > addr ? refs[k].start : addr;
			uintptr_t b = refs[k].end < end ? refs[k].end : end;
			size_t idx = refs[k].first + ((a - refs[k].start) >> ZS_PAGE_SHIFT);
			for (uintptr_t p = a; p < b; p += ZS_PAGE_SIZE, idx++) {
				struct slot *s = &refs[k].arr->slots[idx];
				uint32_t o = atomic_load(&s->state);
				while ((o & SLOT_STATE) == SLOT_RESIDENT && !(o & SLOT_COLD) &&
				       !atomic_compare_exchange_weak(&s->state, &o, o | SLOT_COLD))
					;
			}
			region_arr_put(refs[k].arr);
			reclaim_cold_hint(a, b);
		}
	}
	engine_sigrestore(&old);
}

/* A range is about to be locked: it leaves management. Its evicted pages are
 * loaded back, its registration removed, and it is marked so adoption will
 * not take it back. */
static void engine_unmanage(uintptr_t start, uintptr_t end, bool cover_gaps, uint32_t extra)
{
	struct region_ref refs[32];
	uintptr_t cursor = start;
	sigset_t old;

	engine_sigblock(&old);
	pthread_rwlock_wrlock(&eng.evict_gate);
	fault_load_all(start, end);
	while (cursor < end) {
		size_t n = region_collect(start, end, &cursor, refs, 32);
		for (size_t k = 0; k < n; k++) {
			uintptr_t a = refs[k].start > start ? refs[k].start : start;
			uintptr_t b = refs[k].end < end ? refs[k].end : end;
			uf_unregister(eng.uffd, a, b - a);
			region_arr_put(refs[k].arr);
		}
	}
	region_set_unmanageable(start, end, cover_gaps, extra);
	pthread_rwlock_unlock(&eng.evict_gate);
	engine_sigrestore(&old);
}

/* engine_unmanage over the pages [addr, addr + len) touches, gaps covered. */
static void engine_unmanage_range(uintptr_t addr, size_t len, uint32_t extra)
{
	uintptr_t start = addr & ZS_PAGE_MASK;
	uintptr_t end = (addr + len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;

	if (end > start)
		engine_unmanage(start, end, true, extra);
}

void engine_locking(uintptr_t addr, size_t len)
{
	engine_unmanage_range(addr, len, 0);
}

/* The same leaving (engine.h says why), for good: a munlock over the range
 * later must not make it manageable again (REGION_KEEPOUT), since the
 * kernel still wipes it, or leaves it out, at every fork. */
void engine_fork_advice(uintptr_t addr, size_t len)
{
	engine_unmanage_range(addr, len, REGION_KEEPOUT);
}

/* What glibc keeps at the top of a stack given to a thread: its descriptor
 * (struct pthread, ~2.3 KiB: the thread ID, the robust futex list head,
 * the rseq area) over the static TLS. Four pages cover the descriptor
 * wherever the alignment puts it, and most TLS. */
#define ENGINE_STACK_TOP_KEEP	(16u << 10)

void engine_thread_stack(uintptr_t addr, size_t size)
{
	uintptr_t end = (addr + size + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	uintptr_t start = end - ENGINE_STACK_TOP_KEEP;

	if (size < ENGINE_STACK_TOP_KEEP || addr + size < addr)
		start = addr & ZS_PAGE_MASK;
	if (end <= start || prim_overlaps(start, end))
		return;	/* our own threads' stacks: library memory, never managed */
	engine_unmanage(start, end, true, REGION_KEEPOUT);
}

void engine_thread_stack_top(uintptr_t top)
{
	if (top > ENGINE_STACK_TOP_KEEP)
		engine_thread_stack(top - ENGINE_STACK_TOP_KEEP, ENGINE_STACK_TOP_KEEP);
}

void engine_unlocked(uintptr_t addr, size_t len)
{
	uintptr_t start = addr & ZS_PAGE_MASK;
	uintptr_t end = (addr + len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	sigset_t old;

	engine_sigblock(&old);
	region_forget_unmanageable(start, end);
	engine_sigrestore(&old);
}

static int engine_mlock_fn(const struct maps_vma *v, void *arg)
{
	(void)arg;
	if (v->special || prim_overlaps(v->start, v->end))
		return 0;
	if (syscall(SYS_mlock, v->start, v->end - v->start) == 0)
		return 0;
	/* ENOMEM is also how mlock says it could not populate a PROT_NONE
	 * mapping (a shared library's gap, a guard page), after locking it;
	 * the kernel's mlockall ignores that. Told apart from RLIMIT_MEMLOCK
	 * by asking again without populating: the limit fails that too. */
	if (errno == ENOMEM && syscall(SYS_mlock2, v->start, v->end - v->start, MLOCK_ONFAULT) == 0)
		return 0;
	return -errno;
}

/*
 * mlockall(MCL_CURRENT) would lock and populate the library's own
 * reservations too (the pool's address space is large and reserved, not
 * committed): the program would be charged for them against RLIMIT_MEMLOCK
 * and could be made to commit gigabytes. So the current mappings are locked
 * one by one, the library's left out; MCL_FUTURE and MCL_ONFAULT (which
 * populate nothing) go to the kernel as they are.
 */
int engine_mlockall(int flags)
{
	if (flags & MCL_FUTURE)
		atomic_store(&eng.lock_future, true);
	if (flags & MCL_CURRENT)
		engine_unmanage(0, UINTPTR_MAX & ZS_PAGE_MASK, false, 0);
	if (!(flags & MCL_CURRENT) || (flags & MCL_ONFAULT))
		return (int)syscall(SYS_mlockall, flags);
	if ((flags & MCL_FUTURE) && syscall(SYS_mlockall, flags & ~MCL_CURRENT) != 0)
		return -1;
	sigset_t old;
	engine_sigblock(&old);
	pthread_rwlock_rdlock(&eng.evict_gate);	/* maps_lock never held across fork */
	int rc = maps_for_each(engine_mlock_fn, NULL);
	pthread_rwlock_unlock(&eng.evict_gate);
	engine_sigrestore(&old);
	if (rc < 0) {
		syscall(SYS_munlockall);
		errno = -rc == EPERM || -rc == EAGAIN ? -rc : ENOMEM;
		return -1;
	}
	return 0;
}

int engine_munlockall(void)
{
	sigset_t old;
	long r = syscall(SYS_munlockall);

	if (r == 0) {
		atomic_store(&eng.lock_future, false);
		engine_sigblock(&old);
		region_forget_unmanageable(0, UINTPTR_MAX & ZS_PAGE_MASK);
		engine_sigrestore(&old);
	}
	return (int)r;
}

/* --- the public API ----------------------------------------------------- */

ZSWAP_EXPORT int zswap_pageout(void *addr, size_t len)
{
	if (!engine_running()) {
		errno = ENOSYS;
		return -1;
	}
	int rc = engine_pageout((uintptr_t)addr, len);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

ZSWAP_EXPORT int zswap_stats(struct zswap_stats *st, size_t size)
{
	struct zswap_stats full;

	if (!st || size < sizeof(st->size)) {
		errno = EINVAL;
		return -1;
	}
	if (!eng.store) {
		errno = ENOSYS;
		return -1;
	}
	memset(&full, 0, sizeof(full));
	/* munmap returns once its UNMAP event was read, perhaps before it was
	 * processed: the read side orders this snapshot after that processing. */
	bool running = engine_running();
	sigset_t old;
	if (running) {
		engine_sigblock(&old);
		pthread_rwlock_rdlock(&eng.ev_lock);
	}
	zswap_store_stats(eng.store, &full);
	region_counts(&full.regions, &full.managed_bytes);
	full.faults = atomic_load(&eng.cnt.faults);
	full.refaults = atomic_load(&eng.cnt.refaults);
	full.zero_fill_pages = atomic_load(&eng.cnt.zero_fill_pages);
	full.poisoned_pages = atomic_load(&eng.cnt.poisoned_pages);
	full.evict_calls = atomic_load(&eng.cnt.evict_calls);
	full.evicted_pages = atomic_load(&eng.cnt.evicted_pages);
	full.evict_skipped_pages = atomic_load(&eng.cnt.evict_skipped_pages);
	full.events_unmap = atomic_load(&eng.cnt.events_unmap);
	full.events_remap = atomic_load(&eng.cnt.events_remap);
	full.events_remove = atomic_load(&eng.cnt.events_remove);
	full.readahead_hits = atomic_load(&eng.cnt.readahead_hits);
	full.readahead_misses = atomic_load(&eng.cnt.readahead_misses);
	reclaim_stats(&full);
	if (running) {
		pthread_rwlock_unlock(&eng.ev_lock);
		engine_sigrestore(&old);
	}
	full.size = size < sizeof(full) ? size : sizeof(full);
	memcpy(st, &full, full.size);
	return 0;
}

ZSWAP_EXPORT int zswap_active(void)
{
	return engine_running();
}

ZSWAP_EXPORT const char *zswap_version(void)
{
	return ZSWAP_VERSION;
}
