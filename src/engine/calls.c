/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calls.c - the engine's side of the program's calls (calls.h): what the
 * interposed calls (src/shim/interpose.c) do after the real system call
 * succeeded.
 */
#include "config.h"
#include "engine/calls.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/maps.h"
#include "base/prim.h"
#include "engine/engine.h"
#include "engine/pagecache.h"
#include "engine/evict.h"
#include "engine/fault.h"
#include "engine/policy.h"
#include "engine/region.h"
#include "engine/uffd.h"

void calls_mapped(uintptr_t addr, size_t len, int prot, int flags, int fd)
{
	sigset_t old;

	if (!(flags & MAP_ANONYMOUS) && fd >= 0 && policy_limit_set()) {
		/* What of it the page cache holds already is charged to others. */
		engine_sigblock(&old);
		pagecache_mapped(addr, len, fd);
		engine_sigrestore(&old);
	}
	if ((flags & MAP_TYPE) != MAP_PRIVATE || !(flags & MAP_ANONYMOUS) ||
	    (prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) != (PROT_READ | PROT_WRITE) ||
	    (flags & (MAP_LOCKED | MAP_HUGETLB | MAP_STACK | MAP_GROWSDOWN)) ||
	    len < eng.opt.min_region || atomic_load(&eng.lock_future))
		return;
	len = (len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	engine_sigblock(&old);
	/* Under the event lock: an UNMAP event read before this mapping existed
	 * is processed before the region goes in (see engine.h). */
	pthread_rwlock_rdlock(&eng.ev_lock);
	region_forget_unregistered(addr, addr + len);
	region_insert(addr, addr + len, 0);
	/* Under a memory limit first touches must fault (to be counted and
	 * held): register now rather than at the first eviction. */
	if (policy_limit_set())
		evict_register_new(addr);
	pthread_rwlock_unlock(&eng.ev_lock);
	engine_sigrestore(&old);
}

void calls_unmapped(uintptr_t addr, size_t len)
{
	sigset_t old;

	len = (len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	engine_sigblock(&old);
	region_forget_unregistered(addr, addr + len);
	pagecache_unmapped(addr, len);
	engine_sigrestore(&old);
}

void calls_remapped(uintptr_t old_addr, size_t old_len, uintptr_t new_addr, size_t new_len, int flags)
{
	struct region_ref ref;
	sigset_t old;
	bool managed;

	old_len = (old_len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	new_len = (new_len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	engine_sigblock(&old);
	pthread_rwlock_rdlock(&eng.ev_lock);
	/* A range left unmanaged (mlock, MADV_WIPEONFORK: flags the
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

/* madvise(MADV_WILLNEED) over managed memory: the stored pages come back
 * now, as the kernel reads swapped pages ahead for it. */
void calls_willneed(uintptr_t addr, size_t len)
{
	sigset_t old;

	if (addr & ~ZS_PAGE_MASK || addr + len < addr || !len)
		return;
	len = (len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	engine_sigblock(&old);
	fault_prefetch(addr, addr + len);
	engine_sigrestore(&old);
}

int calls_pageout(uintptr_t addr, size_t len)
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
long calls_discard(void *addr, size_t len, int advice)
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

void calls_cold(uintptr_t addr, size_t len)
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
			policy_cold_hint(a, b);
		}
	}
	evict_count_skipped(addr, end);
	engine_sigrestore(&old);
}

/* A range is about to be locked: it leaves management. Its evicted pages are
 * loaded back, its registration removed, and it is marked so adoption will
 * not take it back. */
static void calls_unmanage(uintptr_t start, uintptr_t end, bool cover_gaps, uint32_t extra)
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
	region_release_kept_range(eng.store, start, end);
	region_set_unmanageable(start, end, cover_gaps, extra);
	pthread_rwlock_unlock(&eng.evict_gate);
	engine_sigrestore(&old);
}

/* calls_unmanage over the pages [addr, addr + len) touches, gaps covered. */
static void calls_unmanage_range(uintptr_t addr, size_t len, uint32_t extra)
{
	uintptr_t start = addr & ZS_PAGE_MASK;
	uintptr_t end = (addr + len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;

	if (end > start)
		calls_unmanage(start, end, true, extra);
}

void calls_locking(uintptr_t addr, size_t len)
{
	calls_unmanage_range(addr, len, 0);
}

/* The same leaving (engine.h says why), for good: a munlock over the range
 * later must not make it manageable again (REGION_KEEPOUT), since the
 * kernel still wipes it, or leaves it out, at every fork. */
void calls_fork_advice(uintptr_t addr, size_t len)
{
	calls_unmanage_range(addr, len, REGION_KEEPOUT);
}

/* What glibc keeps at the top of a stack given to a thread: its descriptor
 * (struct pthread, ~2.3 KiB: the thread ID, the robust futex list head,
 * the rseq area) over the static TLS. Four pages cover the descriptor
 * wherever the alignment puts it, and most TLS. */
#define ENTRY_STACK_TOP_KEEP	(16u << 10)

void calls_thread_stack(uintptr_t addr, size_t size)
{
	uintptr_t end = (addr + size + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	uintptr_t start = end - ENTRY_STACK_TOP_KEEP;

	if (size < ENTRY_STACK_TOP_KEEP || addr + size < addr)
		start = addr & ZS_PAGE_MASK;
	if (end <= start || prim_overlaps(start, end))
		return;	/* our own threads' stacks: library memory, never managed */
	calls_unmanage(start, end, true, REGION_KEEPOUT);
}

void calls_thread_stack_top(uintptr_t top)
{
	if (top > ENTRY_STACK_TOP_KEEP)
		calls_thread_stack(top - ENTRY_STACK_TOP_KEEP, ENTRY_STACK_TOP_KEEP);
}

void calls_unlocked(uintptr_t addr, size_t len)
{
	uintptr_t start = addr & ZS_PAGE_MASK;
	uintptr_t end = (addr + len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	sigset_t old;

	engine_sigblock(&old);
	region_forget_unmanageable(start, end);
	engine_sigrestore(&old);
}

static int calls_mlock_fn(const struct maps_vma *v, void *arg)
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
int calls_mlockall(int flags)
{
	if (flags & MCL_FUTURE)
		atomic_store(&eng.lock_future, true);
	if (flags & MCL_CURRENT)
		calls_unmanage(0, UINTPTR_MAX & ZS_PAGE_MASK, false, 0);
	if (!(flags & MCL_CURRENT) || (flags & MCL_ONFAULT))
		return (int)syscall(SYS_mlockall, flags);
	if ((flags & MCL_FUTURE) && syscall(SYS_mlockall, flags & ~MCL_CURRENT) != 0)
		return -1;
	sigset_t old;
	engine_sigblock(&old);
	pthread_rwlock_rdlock(&eng.evict_gate);	/* maps_lock never held across fork */
	int rc = maps_for_each(calls_mlock_fn, NULL);
	pthread_rwlock_unlock(&eng.evict_gate);
	engine_sigrestore(&old);
	if (rc < 0) {
		syscall(SYS_munlockall);
		prim_relock_secrets();
		errno = -rc == EPERM || -rc == EAGAIN ? -rc : ENOMEM;
		return -1;
	}
	return 0;
}

int calls_munlockall(void)
{
	sigset_t old;
	long r = syscall(SYS_munlockall);

	if (r == 0) {
		prim_relock_secrets();	/* the program's pages only */
		atomic_store(&eng.lock_future, false);
		engine_sigblock(&old);
		region_forget_unmanageable(0, UINTPTR_MAX & ZS_PAGE_MASK);
		engine_sigrestore(&old);
	}
	return (int)r;
}
