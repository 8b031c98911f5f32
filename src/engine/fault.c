/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fault.c - serving missing-page faults and processing userfaultfd events.
 *
 * Each handler thread loops: wait for the descriptor; under eng.ev_lock
 * (write) read a batch of messages, process the UNMAP/REMAP/REMOVE events
 * among them and queue the faults; then under eng.ev_lock (read) serve the
 * queued faults. A fault on a
 *   - STORED page: claim it (LOADING), exclusive load into the thread's
 *     buffer, UFFDIO_COPY (UFFDIO_ZEROPAGE for a zero same-filled page);
 *     a failed load poisons the address (the program gets SIGBUS, never zeros);
 *   - never-populated page: claim it and the never-populated pages after it
 *     (ZSWAP_FAULT_AROUND) and fill the run with one UFFDIO_ZEROPAGE;
 *   - page in flight (EVICTING/LOADING): mark WAITER; the owner wakes it;
 *   - address no registered region covers: zero-fill it (we never evicted it),
 *     holding the table lock so no adoption can slip in between.
 * When the kernel answers EAGAIN (an event is pending), the events are read
 * and processed (which may relocate or drop the page) and the fault retried.
 */
#include "config.h"
#include "engine/fault.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/events.h"
#include "engine/evict.h"
#include "engine/fork.h"
#include "base/hist.h"
#include "base/inject.h"
#include "base/log.h"
#include "base/prim.h"
#include "engine/readahead.h"
#include "engine/policy.h"
#include "engine/region.h"
#include "engine/uffd.h"

#define FAULT_READ_BATCH 32
#define FAULT_RING 65536		/* pending faults per thread: one per blocked program thread */

struct fault_req {
	uint64_t addr;
	uint64_t flags;
};

struct fault_ctx {
	bool handler;			/* a handler thread: may read messages itself */
	bool first;			/* the first pinned handler: never sleeps out a shared spell */
	bool pinned;			/* kept to cpu now (not during a shared spell) */
	int cpu;			/* the CPU it keeps to, or -1 (the scheduler's choice) */
	char *buf;			/* one page, prim */
	struct fault_req *ring;		/* pending faults (handler threads only) */
	size_t head, tail;		/* ring indices; back to 0 whenever the ring empties */
	pthread_mutex_t *buf_lock;	/* program-thread contexts share one buffer */
	bool held;			/* the fault it serves is held at the limit (policy_held) */
};

enum { SERVE_DONE, SERVE_AGAIN };

/* A write fault on a never-populated run is filled by UFFDIO_COPY from a
 * zero buffer (pages allocated now, the write then takes no further fault),
 * not UFFDIO_ZEROPAGE (the shared zero page: each write would then take a
 * copy-on-write fault in the kernel). Read faults get ZEROPAGE. */
static const char *fault_zero_buf;	/* FAULT_AROUND_MAX pages, never written */
#define FAULT_AROUND_MAX 512

/* Pinned handlers (ZSWAP_FAULT_THREADS=0): the CPU of the handler that last
 * read a fault, and how long another handler leaves a pending fault to it
 * (see fault_defer()). */
#define FAULT_DEFER_NS 20000
static _Atomic int fault_last_cpu = -1;

/*
 * One handler, or one per CPU. Pinned handlers serve a program that faults
 * from one thread best: the handler beside the faulting thread runs as that
 * thread sleeps. With several program threads faulting at once, every fault
 * wakes every handler (all poll the one descriptor), they take ev_lock for
 * writing in turn to read, and fault_defer()'s one last CPU sends the other
 * handler into a spin for faults it should have served. One unpinned
 * handler, which the scheduler wakes beside whichever thread faulted, is
 * faster there and slower with one thread faulting (ZSWAP_FAULT_THREADS=1
 * against 0 under tools/bench/bench_reclaim: docs/BENCHMARKS.md).
 *
 * So, with pinned handlers, the readers count how often the faulting thread
 * changes from one fault to the next (the message's thread id) over each
 * FAULT_SHARED_WINDOW faults read: from FAULT_SHARED_ON changes on, a
 * shared spell: the first handler unpins itself and the others sleep on
 * fault_shared; under FAULT_SHARED_OFF they come back and it pins itself
 * again. Two threads faulting evenly change about every other fault, one
 * thread never. Only speed depends on it: any handler serves any fault, and
 * the first one never stops reading.
 */
#define FAULT_SHARED_WINDOW	256
#define FAULT_SHARED_ON		64
#define FAULT_SHARED_OFF	32
static _Atomic uint32_t fault_shared;	/* futex word: 1 = the first handler alone */
static bool fault_shared_able;		/* two or more pinned handlers, a CPU set to unpin to */
static cpu_set_t fault_allowed;		/* the CPUs an unpinned handler may use */
static unsigned int fault_pinned_handlers;
static uint32_t fault_tid_last, fault_win_faults, fault_win_changes;	/* eng.ev_lock (write) */
static bool fault_busy;			/* several threads fault at once: a shared spell */

/*
 * Timed spells. With one thread faulting, which serves it faster depends on
 * the machine: the pinned handlers, or one handler left to the scheduler as
 * in a shared spell (faster where waking a vCPU and the IPI of a TLB flush
 * are dear; docs/BENCHMARKS.md).
 * So the readers time both. Every so often, while no thread-count spell
 * runs, a trial: FAULT_TIMED_RUN windows in the mode in use, as many in the
 * other, as many in the first again. The window is FAULT_SHARED_WINDOW
 * faults, so a shorter one is more faults a second, and a program doing the
 * same work between faults the faster for it. The other mode is taken when
 * the median of its windows is 1/FAULT_TIMED_MARGIN under the medians of
 * both runs around it: a program whose pace steps up or down in the middle
 * of a trial (the end of a fill) does not look like a win, and one slow
 * window (a hold at the memory limit, a pause of the program) does not
 * count. The first window after each change of mode settles untimed. A
 * lost trial doubles the gap to the next, up to FAULT_TIMED_GAP_MAX
 * windows; a change resets it. Only speed depends on it, as for every
 * spell.
 */
#define FAULT_TIMED_RUN		8
#define FAULT_TIMED_MARGIN	16
#define FAULT_TIMED_GAP		32
#define FAULT_TIMED_GAP_MAX	1024
enum { FT_BETWEEN, FT_BEFORE, FT_TRIAL, FT_AFTER };
static struct {
	bool pref;		/* the mode timing chose: true = shared */
	int phase;		/* FT_*: a trial is BEFORE, TRIAL, AFTER */
	unsigned int n;		/* windows timed in this phase */
	bool skip;		/* leave the next window untimed (a change of mode) */
	unsigned int gap, since;	/* windows between trials, since the last */
	uint64_t t0;		/* the current window's start */
	uint64_t ns[3][FAULT_TIMED_RUN];	/* BEFORE, TRIAL, AFTER windows */
} fault_timed;			/* eng.ev_lock (write) */

static pthread_mutex_t fault_helper_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fault_ctx fault_helper;	/* fault_load_range() from program threads */

static void fault_pause(void)
{
	struct timespec ts = { 0, 20000 };

	nanosleep(&ts, NULL);
}

/* --- events (eng.ev_lock held for writing) ------------------------------ */

static void fault_event(const struct uffd_msg *m)
{
	/* A fork we follow has its FORK read by the fork thread while the
	 * handlers wait (src/engine/fork.h); one read here has nobody to take
	 * it. */
	if (m->event == UFFD_EVENT_FORK)
		fork_event_unclaimed((int)m->arg.fork.ufd);
	else
		events_apply(m);
}

/* Start timing afresh: the next window is not timed. */
static void fault_timed_reset(void)
{
	fault_timed.phase = FT_BETWEEN;
	fault_timed.since = 0;
	fault_timed.skip = true;
}

static uint64_t fault_timed_median(uint64_t *v)
{
	for (int i = 1; i < FAULT_TIMED_RUN; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return (v[FAULT_TIMED_RUN / 2 - 1] + v[FAULT_TIMED_RUN / 2]) / 2;
}

/* The trial's three runs are timed: keep the mode or take the other. */
static void fault_timed_decide(void)
{
	uint64_t before = fault_timed_median(fault_timed.ns[0]);
	uint64_t trial = fault_timed_median(fault_timed.ns[1]);
	uint64_t after = fault_timed_median(fault_timed.ns[2]);
	uint64_t best = before < after ? before : after;
	bool won = trial * FAULT_TIMED_MARGIN < best * (FAULT_TIMED_MARGIN - 1);

	atomic_fetch_add_explicit(&eng.cnt.fault_mode_trials, 1, memory_order_relaxed);
	if (eng.opt.verbose)
		zlog("handlers %s for one faulting thread: %llu us a window of %d faults, against %llu and %llu"
		     " kept %s: %s", fault_timed.pref ? "pinned" : "shared", (unsigned long long)trial / 1000,
		     FAULT_SHARED_WINDOW, (unsigned long long)before / 1000, (unsigned long long)after / 1000,
		     fault_timed.pref ? "shared" : "pinned", won ? "taken" : "not taken");
	if (won) {
		fault_timed.pref = !fault_timed.pref;
		fault_timed.gap = FAULT_TIMED_GAP;
		atomic_fetch_add_explicit(&eng.cnt.fault_mode_changes, 1, memory_order_relaxed);
	} else if (fault_timed.gap < FAULT_TIMED_GAP_MAX) {
		fault_timed.gap *= 2;
	}
	fault_timed_reset();
	fault_timed.skip = won;
}

/* End of a window with one thread faulting: time it, move the trial on, and
 * return the mode for the next window (true = shared). */
static bool fault_timed_window(void)
{
	uint64_t now = hist_now(), dur = now - fault_timed.t0;
	bool timed = !fault_timed.skip;

	fault_timed.t0 = now;
	fault_timed.skip = false;
	if (fault_timed.phase == FT_BETWEEN) {
		if (++fault_timed.since >= fault_timed.gap) {
			fault_timed.phase = FT_BEFORE;
			fault_timed.n = 0;
		}
	} else if (timed) {
		fault_timed.ns[fault_timed.phase - FT_BEFORE][fault_timed.n] = dur;
		if (++fault_timed.n == FAULT_TIMED_RUN) {
			fault_timed.n = 0;
			if (fault_timed.phase == FT_AFTER) {
				fault_timed_decide();
			} else {
				fault_timed.phase++;
				fault_timed.skip = true;	/* the mode changes */
			}
		}
	}
	return fault_timed.phase == FT_TRIAL ? !fault_timed.pref : fault_timed.pref;
}

/* One fault read from thread tid (0: the kernel does not say): count the
 * changes of faulting thread and, at the end of a window, start or end a
 * shared spell (above), or let the timing choose. Called with eng.ev_lock
 * held for writing. */
static void fault_count_thread(uint32_t tid)
{
	if (!fault_shared_able || !tid)
		return;
	fault_win_changes += tid != fault_tid_last;
	fault_tid_last = tid;
	if (++fault_win_faults < FAULT_SHARED_WINDOW)
		return;
	bool busy = fault_win_changes >= (fault_busy ? FAULT_SHARED_OFF : FAULT_SHARED_ON);
	fault_win_faults = fault_win_changes = 0;
	if (busy && !fault_busy)
		atomic_fetch_add_explicit(&eng.cnt.fault_shared_spells, 1, memory_order_relaxed);
	if (busy || fault_busy)
		fault_timed_reset();	/* no timing during a spell, afresh after it */
	fault_busy = busy;
	uint32_t was = atomic_load_explicit(&fault_shared, memory_order_relaxed);
	uint32_t now = busy || fault_timed_window();
	atomic_store_explicit(&eng.cnt.fault_mode_shared, now && !busy, memory_order_relaxed);
	if (now == was)
		return;
	atomic_store(&fault_shared, now);
	if (!now)
		syscall(SYS_futex, &fault_shared, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Read what is pending (without blocking), process its events, queue its
 * faults. Returns the number of messages read. */
static size_t fault_read(struct fault_ctx *h)
{
	struct uffd_msg msgs[FAULT_READ_BATCH];
	size_t space = FAULT_RING - (h->tail - h->head), want, n;
	long r;

	want = space < FAULT_READ_BATCH ? space : FAULT_READ_BATCH;
	if (!want)
		return 0;
	uint64_t p0 = prof_now();	/* an instrumented build only (hist.h) */
	pthread_rwlock_wrlock(&eng.ev_lock);
	prof_add(PROF_WRLOCK, p0);
	p0 = prof_now();
	r = syscall(SYS_read, eng.uffd, msgs, want * sizeof(msgs[0]));
	prof_add(PROF_READ, p0);
	n = r > 0 ? (size_t)r / sizeof(msgs[0]) : 0;
	for (size_t i = 0; i < n; i++) {
		if (msgs[i].event == UFFD_EVENT_PAGEFAULT) {
			if (h->pinned && atomic_load_explicit(&fault_last_cpu, memory_order_relaxed) != h->cpu)
				atomic_store_explicit(&fault_last_cpu, h->cpu, memory_order_relaxed);
			fault_count_thread(msgs[i].arg.pagefault.feat.ptid);
			struct fault_req *q = &h->ring[h->tail++ % FAULT_RING];
			q->addr = msgs[i].arg.pagefault.address;
			q->flags = msgs[i].arg.pagefault.flags;
		} else {
			fault_event(&msgs[i]);
		}
	}
	pthread_rwlock_unlock(&eng.ev_lock);
	return n;
}

/* UFFDIO_COPY of one page read back, or an injected failure
 * (ZSWAP_INJECT_COPY_FAIL: EAGAIN, then ENOMEM twice, in turn: an event
 * pending, then a kernel out of memory twice, which sends the page back to
 * the store until the program's next touch). */
static long fault_copy_page(uintptr_t target, const void *buf)
{
	unsigned int n = inject_take(&eng.inject_copy_fail);

	if (n)
		return n % 3 == 0 ? -EAGAIN : -ENOMEM;
	return uf_copy(eng.uffd, target, buf, ZS_PAGE_SIZE, UF_DONTWAKE);
}

/* An ioctl answered EAGAIN: let the pending events be processed. Called and
 * returns with eng.ev_lock held for reading. */
static void fault_wait_events(struct fault_ctx *h)
{
	pthread_rwlock_unlock(&eng.ev_lock);
	if (!h->handler || fault_read(h) == 0)
		fault_pause();	/* the event is not queued yet, or another thread reads */
	pthread_rwlock_rdlock(&eng.ev_lock);
}

/* The memory limit holds this fault (policy_throttle): let go of the read
 * side, help compress the evictor's batch if one is open (evict_help), else
 * wait until the reclaimer reports progress or an event or fault
 * arrives (events must keep being read: the reclaimer's own eviction waits
 * for its REMOVE event to be read), at most a few milliseconds; the caller
 * then serves the fault again. Called and returns with eng.ev_lock read. */
static void fault_throttle_wait(struct fault_ctx *h)
{
	struct pollfd p[2] = {
		{ .fd = eng.uffd, .events = POLLIN },
		{ .fd = policy_wait_fd(), .events = POLLIN },
	};

	uint64_t p0 = prof_now();
	pthread_rwlock_unlock(&eng.ev_lock);
	/* Direct reclaim: compress what the evictor has staged, then look
	 * again, rather than leave this CPU idle while the fault is held. */
	if (evict_help()) {
		prof_add(PROF_HELP, p0);
		pthread_rwlock_rdlock(&eng.ev_lock);
		prof_add(PROF_HOLD, p0);
		return;
	}
	if (poll(p, 2, 5) > 0) {
		if (p[1].revents & POLLIN)
			policy_wait_done();
		if (p[0].revents & POLLIN)
			fault_read(h);
	}
	pthread_rwlock_rdlock(&eng.ev_lock);
	prof_add(PROF_HOLD, p0);
}

/* The fault being served is held at the limit: count it in memory
 * pressure from now until it is served (policy_held), then wait. */
static void fault_hold(struct fault_ctx *h)
{
	if (!h->held) {
		h->held = true;
		policy_held(true);
	}
	fault_throttle_wait(h);
}

/* --- serving one fault (eng.ev_lock held for reading) ------------------- */

/* The kernel could not resolve addr at all (no registered mapping there now,
 * or one we cannot fill): wake the thread so it retries the access and gets
 * whatever the mapping now gives it. */
static void fault_unservable(uintptr_t addr, long err)
{
	atomic_fetch_add_explicit(&eng.cnt.uffd_errors, 1, memory_order_relaxed);
	if (err == -EINVAL) {
		/* A mapping we cannot fill (not private anonymous after all): stop
		 * intercepting it, which also wakes its waiters. */
		static _Atomic int said;
		if (!atomic_exchange(&said, 1))
			zlog("cannot fill a fault at %p (error %ld): that page is no longer managed",
			     (void *)addr, -err);
		uf_unregister(eng.uffd, addr, ZS_PAGE_SIZE);
	}
	uf_wake(eng.uffd, addr, ZS_PAGE_SIZE);
}

/* No slot array covers addr: we never evicted it, fill it with zeros. The
 * table read lock is held by the caller and released here. */
static int fault_zero_unmanaged(struct fault_ctx *h, uintptr_t addr)
{
	long r = uf_zeropage(eng.uffd, addr, ZS_PAGE_SIZE, 0);	/* no state to publish: wake now */

	region_unlock();
	if (r == -EAGAIN) {
		fault_wait_events(h);
		return SERVE_AGAIN;
	}
	if (r > 0)
		atomic_fetch_add_explicit(&eng.cnt.zero_fill_pages, 1, memory_order_relaxed);
	else if (r == -EEXIST)
		uf_wake(eng.uffd, addr, ZS_PAGE_SIZE);
	else if (r != -ESRCH)
		fault_unservable(addr, r);
	return SERVE_DONE;
}

/* Zeros into [addr, addr + len) without waking: a COPY of zeros for a write
 * (see fault_zero_buf), else the zero page. */
static long fault_fill_zeros(uintptr_t addr, size_t len, bool write)
{
	return write ? uf_copy(eng.uffd, addr, fault_zero_buf, len, UF_DONTWAKE)
					  : uf_zeropage(eng.uffd, addr, len, UF_DONTWAKE);
}

/* A never-populated page: claim it and the never-populated pages after it,
 * fill the run with one UFFDIO_ZEROPAGE (or COPY of zeros), release, wake.
 * The fill does not wake: a woken thread that at once asked for eviction
 * would find the run still LOADING and skip it. */
static int fault_zero_run(struct fault_ctx *h, const struct region_ref *ref, size_t idx, uintptr_t addr,
			  bool write)
{
	size_t max = eng.opt.fault_around ? eng.opt.fault_around : 1;
	size_t left = (ref->end - addr) >> ZS_PAGE_SHIFT, n = 0, done;
	bool wake = false;

	if (max > left)
		max = left;
	if (max > FAULT_AROUND_MAX)
		max = FAULT_AROUND_MAX;
	/* First touches are what a program writing fresh memory makes: over
	 * the memory limit they wait for reclaim (src/reclaim/reclaim.c). */
	if (h->handler && policy_throttle(max)) {
		fault_hold(h);
		return SERVE_AGAIN;
	}
	/* A page that kept its tier slot and is missing now was zapped (its
	 * REMOVE not processed yet): it reads as zeros, its copy is void. */
	region_release_kept(eng.store, &ref->arr->slots[idx]);
	for (; n < max; n++) {
		/* ZAP: a REMOVE covered it; filling it now is as good as after
		 * the zap (the zap would then take our zeros). */
		struct slot *s = &ref->arr->slots[idx + n];
		uint32_t old = atomic_load_explicit(&s->state, memory_order_relaxed);
		if ((old & ~(SLOT_COLD | SLOT_ZAP)) != SLOT_RESIDENT ||
		    !atomic_compare_exchange_strong(&s->state, &old, SLOT_LOADING | (old & (SLOT_COLD | SLOT_ZAP))))
			break;
	}
	if (!n)
		return SERVE_AGAIN;	/* its state changed: dispatch again */

	long r = fault_fill_zeros(addr, n << ZS_PAGE_SHIFT, write);
	if (r == -ENOENT && n > 1) {
		/* The kernel fills within one VMA only: the run crosses a
		 * boundary inside the region (mprotect or madvise split it).
		 * Fill the faulting page alone; the rest fault on their own.
		 * Retrying the whole run spun forever (prog_events mprotectguard). */
		r = fault_fill_zeros(addr, ZS_PAGE_SIZE, write);
	}

	/* Filled pages are fresh (no COLD, no ZAP); the others (present
	 * already: the fill stopped at the first) keep their flags. */
	done = r > 0 ? (size_t)r >> ZS_PAGE_SHIFT : 0;
	uint32_t fresh = policy_aux_fresh(policy_now());
	for (size_t i = 0; i < n; i++) {
		_Atomic uint32_t *st = &ref->arr->slots[idx + i].state;
		uint32_t keep = i < done ? 0 : (SLOT_COLD | SLOT_ZAP);
		if (i < done)
			atomic_store_explicit(&ref->arr->slots[idx + i].aux, fresh, memory_order_relaxed);
		uint32_t old = atomic_load(st);
		while (!atomic_compare_exchange_weak(st, &old, SLOT_RESIDENT | (old & keep)))
			;
		if (old & SLOT_WAITER)
			wake = true;
	}
	if (r == -EAGAIN) {
		/* Nothing filled. Threads parked on the run (WAITER) retry
		 * their access and fault again; the first one is served again. */
		if (wake)
			uf_wake(eng.uffd, addr, n << ZS_PAGE_SHIFT);
		fault_wait_events(h);
		return SERVE_AGAIN;
	}
	if (r > 0)
		atomic_fetch_add_explicit(&eng.cnt.zero_fill_pages, done, memory_order_relaxed);
	else if (r != -EEXIST && r != -ESRCH)
		fault_unservable(addr, r);
	uf_wake(eng.uffd, addr, n << ZS_PAGE_SHIFT);
	return SERVE_DONE;
}

/* The current address of a slot: the one it was found at unless an UNMAP or
 * REMAP was processed since. */
static bool fault_slot_addr(const struct region_ref *ref, size_t idx, uint64_t gen, uintptr_t *addr)
{
	if (atomic_load(&eng.ev_gen) == gen)
		return true;
	return region_addr_of(ref->arr, idx, addr);
}

/* Put loaded-ahead pages back in the store when they could not be installed:
 * their entries were freed by the exclusive load. */
static void fault_restore(struct fault_ctx *h, const struct region_ref *ref, size_t idx, size_t k,
			  uintptr_t addr)
{
	struct slot *s = &ref->arr->slots[idx];
	uint32_t w;

	if (!(atomic_load(&s->state) & SLOT_DROPPED) &&
	    zswap_store_page(eng.store, h->buf + (k << ZS_PAGE_SHIFT), &s->e) == 0) {
		w = atomic_exchange(&s->state, SLOT_STORED);
		if (w & SLOT_DROPPED)
			region_drop_slot(eng.store, s);
	} else {
		if (!(atomic_load(&s->state) & SLOT_DROPPED))
			zlog("a page loaded ahead could not be stored again: its data is lost");
		w = atomic_exchange(&s->state, SLOT_RESIDENT);
	}
	if (w & SLOT_WAITER)
		uf_wake(eng.uffd, addr, ZS_PAGE_SIZE);	/* it faults again and finds the page */
}

/* Give back a claimed page whose entry is intact: claimed for readahead and
 * not loaded, or read from a slot it keeps and not installed. */
static void fault_unclaim(const struct region_ref *ref, size_t idx, uintptr_t addr)
{
	struct slot *s = &ref->arr->slots[idx];
	uint32_t w = atomic_exchange(&s->state, SLOT_STORED);

	if (w & SLOT_DROPPED)
		region_drop_slot(eng.store, s);
	if (w & SLOT_WAITER)
		uf_wake(eng.uffd, addr, ZS_PAGE_SIZE);	/* it faults again and finds the page */
}

/* A page read back from the tier and installed with its slot kept: RESIDENT
 * | KEPT (region.h), unless an event dropped it meanwhile (its zap follows),
 * and then the slot is freed. Returns the state it replaced. */
static uint32_t fault_keep(struct slot *s, struct zswap_entry *e)
{
	uint32_t o = atomic_load(&s->state), to;

	do
		to = (o & SLOT_DROPPED) ? SLOT_RESIDENT : SLOT_RESIDENT | SLOT_KEPT;
	while (!atomic_compare_exchange_weak(&s->state, &o, to));
	if (to & SLOT_KEPT)
		zswap_kept_add(eng.store, 1);
	else
		zswap_invalidate(eng.store, e);
	return o;
}

/*
 * Readahead (ZSWAP_READAHEAD, the window's maximum): after a refault at slot
 * idx (installed at addr), load the stored pages that follow it and install
 * them with one UFFDIO_COPY, as swap readahead does; a sequential reader then
 * faults once per window instead of once per page. How many: the adaptive
 * window of this access stream (src/engine/readahead.c: none for a random fault,
 * growing while whole windows are used). Stops at the first page that is
 * not STORED. Any page that cannot be installed is stored again.
 */
static void fault_readahead(struct fault_ctx *h, const struct region_ref *ref, size_t idx, uintptr_t addr)
{
	size_t max = eng.opt.readahead, k = 0;
	size_t left = (ref->end - addr) >> ZS_PAGE_SHIFT;

	if (!max || addr < ref->start || addr >= ref->end)
		return;
	max = ra_window(ref->arr, idx, max);
	if (max > left - 1)
		max = left - 1;
	/* Claim first, then load: pages written back one after another sit in
	 * consecutive slots of the tier's file (writeback goes in address
	 * order, lowest free slot first), and a run of them is read with one
	 * read instead of one a page. */
	struct zswap_entry ents[64], *run[64];
	bool kept[64];	/* read from the tier, its slot kept (region.h, KEPT) */
	size_t n = 0;
	for (; n < max && n < 64; n++) {
		struct slot *s = &ref->arr->slots[idx + 1 + n];
		uint32_t old = atomic_load(&s->state);
		if ((old & (SLOT_STATE | SLOT_DROPPED)) != SLOT_STORED ||
		    !atomic_compare_exchange_strong(&s->state, &old, SLOT_LOADING | SLOT_INBUF | (old & SLOT_WAITER)))
			break;
		ents[n] = s->e;
		kept[n] = false;
	}
	while (k < n) {
		char *dst = h->buf + ((k + 1) << ZS_PAGE_SHIFT);
		size_t len = 1;
		uint64_t bad;
		if (zswap_entry_type(&ents[k]) == ZE_BACKED) {
			run[0] = &ents[k];
			while (k + len < n && zswap_entry_type(&ents[k + len]) == ZE_BACKED &&
			       zswap_entry_slot(&ents[k + len]) == zswap_entry_slot(&ents[k]) + len) {
				run[len] = &ents[k + len];
				len++;
			}
			if (eng.opt.swap_cache && zswap_backed_keepable(eng.store, run[0])) {
				bad = zswap_read_backed_run(eng.store, run, len, dst);
				for (size_t j = 0; j < len; j++)
					kept[k + j] = true;
			} else {
				bad = zswap_load_backed_run(eng.store, run, len, dst);
			}
		} else if (zswap_entry_is_zero(&ents[k])) {
			zswap_load_page(eng.store, &ents[k], NULL);
			memset(dst, 0, ZS_PAGE_SIZE);
			bad = 0;
		} else {
			bad = zswap_load_page(eng.store, &ents[k], dst) < 0;
		}
		if (!bad) {
			k += len;
			continue;
		}
		/* Readahead stops at the first page that failed. A page that
		 * failed is STORED again as lost: its own fault poisons it
		 * (fault_load, which waits out pending events; a poison from
		 * here could meet one, and a page left RESIDENT and missing
		 * would read as zeros). The pages of its run read after it
		 * are put back in the pool, and those not read yet stay
		 * STORED. Read without freeing (kept), a page is back as it
		 * was, its slot holding it. */
		size_t first = (size_t)__builtin_ctzll(bad);
		for (size_t j = first; j < len; j++) {
			uintptr_t at = addr + ((k + j + 1) << ZS_PAGE_SHIFT);
			if (bad >> j & 1) {
				if (kept[k + j])
					zswap_invalidate(eng.store, &ents[k + j]);
				zswap_entry_mark_lost(&ref->arr->slots[idx + 1 + k + j].e);
				fault_unclaim(ref, idx + 1 + k + j, at);
			} else if (kept[k + j]) {
				fault_unclaim(ref, idx + 1 + k + j, at);
			} else {
				fault_restore(h, ref, idx + 1 + k + j, k + j + 1, at);
			}
		}
		for (size_t j = k + len; j < n; j++)
			fault_unclaim(ref, idx + 1 + j, addr + ((j + 1) << ZS_PAGE_SHIFT));
		k += first;
		break;
	}
	if (!k)
		return;
	atomic_fetch_add_explicit(&eng.cnt.refaults, k, memory_order_relaxed);
	/* EAGAIN (an event is pending: under reclaim, most often the REMOVE
	 * of an evictor emptying its staging area) is waited out and the copy
	 * retried while the layout is the same (ev_gen) and no page of the
	 * rest was dropped: giving up meant compressing the pages again, and
	 * a sequential read under ZSWAP_MEMORY_LIMIT loaded 1.3 pages per
	 * page touched. */
	size_t done = 0;
	for (int tries = 0; done < k; tries++) {
		long r = uf_copy(eng.uffd, addr + ((done + 1) << ZS_PAGE_SHIFT),
				 h->buf + ((done + 1) << ZS_PAGE_SHIFT), (k - done) << ZS_PAGE_SHIFT, UF_DONTWAKE);
		if (r > 0) {
			done += (size_t)r >> ZS_PAGE_SHIFT;
			continue;
		}
		if (r != -EAGAIN || tries >= 8 || !h->handler)
			break;
		uint64_t gen = atomic_load(&eng.ev_gen);
		fault_wait_events(h);
		if (atomic_load(&eng.ev_gen) != gen)
			break;
		bool dropped = false;
		for (size_t i = done; i < k && !dropped; i++)
			dropped = atomic_load(&ref->arr->slots[idx + 1 + i].state) & SLOT_DROPPED;
		if (dropped)
			break;
	}
	ra_done(ref->arr, idx, done);
	bool wake = false;
	for (size_t i = 0; i < k; i++) {
		struct slot *s = &ref->arr->slots[idx + 1 + i];
		uintptr_t at = addr + ((i + 1) << ZS_PAGE_SHIFT);
		if (i < done && kept[i]) {
			wake |= fault_keep(s, &ents[i]) & SLOT_WAITER;
		} else if (i < done) {
			wake |= atomic_exchange(&s->state, SLOT_RESIDENT) & SLOT_WAITER;
		} else if (kept[i]) {
			fault_unclaim(ref, idx + 1 + i, at);
		} else {
			fault_restore(h, ref, idx + 1 + i, i + 1, at);
		}
	}
	if (wake)
		uf_wake(eng.uffd, addr + ZS_PAGE_SIZE, done << ZS_PAGE_SHIFT);
}

/* A stored page: exclusive load, then install it. */
static int fault_load(struct fault_ctx *h, const struct region_ref *ref, size_t idx,
		      uintptr_t addr, uint32_t old, uint64_t gen, bool write)
{
	struct slot *s = &ref->arr->slots[idx];
	uintptr_t target = addr;
	const uint64_t gen0 = gen;
	bool zero, poisoned = false, installed = false;
	int rc;

	/* A refault adds a page too (the pool gives back less): held over the
	 * memory limit like a first touch (counted by eng.cnt.refaults). */
	if (h->handler && policy_throttle(0)) {
		fault_hold(h);
		return SERVE_AGAIN;
	}
	if (!atomic_compare_exchange_strong(&s->state, &old, SLOT_LOADING | SLOT_INBUF | (old & SLOT_WAITER)))
		return SERVE_AGAIN;
	uint64_t t0 = hist_now();	/* statistics (src/base/hist.h) */
	if (policy_refault(s))	/* refault distance: was it in the working set? */
		policy_note_quick(ref->arr);
	struct zswap_entry e = s->e;
	zero = zswap_entry_is_zero(&e);
	bool tier = zswap_entry_type(&e) == ZE_BACKED;
	/* The swap cache (region.h, KEPT): a page read back from the tier for
	 * a read keeps its slot there; a write fault would change it at once. */
	bool keep = tier && !write && eng.opt.swap_cache && zswap_backed_keepable(eng.store, &e);
	uint64_t p0 = prof_now();
	if (keep && (rc = zswap_read_backed(eng.store, &e, h->buf)) < 0) {
		zswap_invalidate(eng.store, &e);	/* as the exclusive load would */
		keep = false;
	} else if (!keep) {
		rc = zswap_load_page(eng.store, &e, zero ? NULL : h->buf);
	}
	prof_add(PROF_DECOMP, p0);
	prof_add(PROF_LOAD, t0);
	p0 = prof_now();
	atomic_fetch_add_explicit(&eng.cnt.refaults, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&ref->arr->refaults, 1, memory_order_relaxed);	/* attribution */
	if (rc < 0)
		poisoned = true;

	for (long last = 0;;) {
		/* Installed without waking: the slot must be RESIDENT before
		 * the faulting thread runs on (see fault_zero_run). */
		long r;
		if (poisoned)
			r = uf_poison(eng.uffd, target, ZS_PAGE_SIZE, UF_DONTWAKE);
		else if (zero)
			r = uf_zeropage(eng.uffd, target, ZS_PAGE_SIZE, UF_DONTWAKE);
		else
			r = fault_copy_page(target, h->buf);
		if (r > 0) {
			installed = true;
			break;
		}
		if (r == -EEXIST || r == -ESRCH)
			break;
		atomic_fetch_add_explicit(&eng.cnt.install_failed, 1, memory_order_relaxed);
		/* EAGAIN: an event is pending. ENOENT/EINVAL: perhaps one was
		 * processed since the lookup. Either way, see what the events say. */
		if (r != -EAGAIN && r == last)
			break;
		last = r;
		fault_wait_events(h);
		if (atomic_load(&s->state) & SLOT_DROPPED)
			break;	/* unmapped or zapped meanwhile: the data is void */
		if (!fault_slot_addr(ref, idx, gen, &target))
			break;
		gen = atomic_load(&eng.ev_gen);
	}
	/* Claim to installed, before the wake: the thread woken on this
	 * CPU preempts the handler, and timing past the wake would count the
	 * program's run until its next fault (docs/DESIGN.md, "Tried and
	 * rejected"). */
	if (installed && h->handler)
		hist_record(tier ? &hist_refault_tier : &hist_refault, hist_now() - t0);
	prof_add(PROF_INSTALL, p0);
	if (poisoned && installed) {
		atomic_fetch_add(&eng.cnt.poisoned_pages, 1);
		zlog("a stored page at %p could not be decompressed: poisoned (SIGBUS on access)",
		     (void *)target);
	} else if (!installed && !(atomic_load(&s->state) & SLOT_DROPPED)) {
		if (poisoned) {
			/* Without UFFDIO_POISON we cannot make the access fail: end
			 * the process loudly rather than let it read zeros. */
			zlog("a stored page at %p could not be decompressed and cannot be poisoned: aborting",
			     (void *)target);
			abort();
		}
		/* Keep the data: store it again, so nothing is lost (a kept
		 * slot still holds it: the entry is as it was). */
		if (keep) {
			fault_unclaim(ref, idx, addr);
			uf_wake(eng.uffd, addr, ZS_PAGE_SIZE);
			return SERVE_DONE;
		}
		if (zero)
			memset(h->buf, 0, ZS_PAGE_SIZE);
		if (zswap_store_page(eng.store, h->buf, &s->e) == 0) {
			uint32_t w = atomic_exchange(&s->state, SLOT_STORED);
			if (w & SLOT_DROPPED)
				region_drop_slot(eng.store, s);
			uf_wake(eng.uffd, addr, ZS_PAGE_SIZE);
			return SERVE_DONE;
		}
		zlog("a page at %p could not be put back nor stored again: its data is lost",
		     (void *)target);
	}
	if (keep && installed) {
		fault_keep(s, &e);
	} else {
		atomic_exchange(&s->state, SLOT_RESIDENT);
		if (keep)
			zswap_invalidate(eng.store, &e);
	}
	/* Wake whoever waits at either address: the faulting thread (at addr,
	 * or at target if it faulted there again), and WAITERs. A thread woken
	 * where nothing was installed retries its access and faults again. */
	p0 = prof_now();
	uf_wake(eng.uffd, target, ZS_PAGE_SIZE);
	if (target != addr)
		uf_wake(eng.uffd, addr, ZS_PAGE_SIZE);
	prof_add(PROF_WAKE, p0);
	p0 = prof_now();
	if (installed && !poisoned && h->handler && target == addr && atomic_load(&eng.ev_gen) == gen0)
		fault_readahead(h, ref, idx, addr);
	prof_add(PROF_READAHEAD, p0);
	return SERVE_DONE;
}

static void fault_serve(struct fault_ctx *h, uintptr_t addr, bool write)
{
	addr &= ZS_PAGE_MASK;
	for (;;) {
		struct region_ref ref;
		uint64_t gen = atomic_load(&eng.ev_gen);
		int rc = SERVE_DONE;

		region_rdlock();
		if (!region_lookup_locked(addr, &ref, true) || !ref.arr) {
			if (fault_zero_unmanaged(h, addr) == SERVE_DONE)
				return;
			continue;
		}
		region_unlock();

		size_t idx = ref.first + ((addr - ref.start) >> ZS_PAGE_SHIFT);
		struct slot *s = &ref.arr->slots[idx];
		uint32_t old = atomic_load(&s->state);
		switch (old & SLOT_STATE) {
		case SLOT_RESIDENT:
			rc = fault_zero_run(h, &ref, idx, addr, write);
			break;
		case SLOT_STORED:
			rc = fault_load(h, &ref, idx, addr, old, gen, write);
			break;
		default:
			/* In flight: its owner wakes the page when done. */
			if (!(old & SLOT_WAITER) &&
			    !atomic_compare_exchange_strong(&s->state, &old, old | SLOT_WAITER))
				rc = SERVE_AGAIN;
			break;
		}
		region_arr_put(ref.arr);
		if (rc == SERVE_DONE)
			return;
	}
}

/* --- the handler threads ------------------------------------------------ */

/*
 * The userfaultfd is gone from under us: the program closed it with a raw
 * system call (close_range, close), which the interposed ones would have
 * refused (src/base/fdtab.h). The kernel has dropped every registration: pages
 * evicted read as zeros from now on, and nothing can bring them back. Say
 * so, loudly and once, and stop this thread for good: its number may soon
 * be one of the program's files, which a handler must never read.
 */
static void fault_lost_uffd(void)
{
	static _Atomic int said;

	if (!atomic_exchange(&said, 1))
		zlog("the program closed libzswap's userfaultfd (descriptor %d) with a raw system call:"
		     " its evicted pages read as zeros from now on, and libzswap stops serving faults", eng.uffd);
	for (;;) {
		struct timespec ts = { 3600, 0 };
		nanosleep(&ts, NULL);
	}
}

static void fault_wait_readable(void)
{
	struct pollfd p = { .fd = eng.uffd, .events = POLLIN };

	/* No spinning before the sleep: it leaves the refault p50 as it is
	 * (the scheduler hands the fault to the handler on the faulting CPU;
	 * docs/DESIGN.md, "Tried and rejected"), and the spin would burn a
	 * CPU. */
	while (poll(&p, 1, -1) <= 0)
		;
	if (p.revents & POLLNVAL)
		fault_lost_uffd();
}

/*
 * Keep the calling handler thread on its CPU. A faulting thread sleeps in the
 * kernel until its page is installed; the handler woken on the same CPU runs
 * at once (the faulting thread just gave the CPU up), while one on another
 * CPU that sleeps must first be woken there, which takes many times as
 * long (docs/BENCHMARKS.md, "Machines"). With one handler per CPU of the
 * allowed set, every fault has a handler beside it; the others are woken too
 * (all poll the one descriptor), find nothing and go back to sleep inside
 * poll(). A refused pin (a cpuset changed since start-up) leaves the thread
 * where the scheduler puts it: slower, never wrong.
 */
static void fault_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/*
 * A pinned handler woke with a message pending: should it read it? Every
 * handler is woken by every fault, and the one on the faulting CPU runs
 * first (the faulting thread just gave it the CPU). One on another CPU that
 * wakes while a fault is still pending most likely found the next fault of
 * a thread that runs beside another handler: taking it would make this CPU
 * serve it and wake the faulting thread across CPUs (about ten times as
 * long when that CPU has gone idle as beside it). So a handler that was not the
 * last to read a fault leaves the descriptor to the others for up to
 * FAULT_DEFER_NS, and reads only what is still pending then (a thread that
 * moved to this CPU: paid once, then this handler is the last reader).
 * Returns true to read now, false when another handler took the message.
 */
static bool fault_defer(const struct fault_ctx *h)
{
	struct pollfd p = { .fd = eng.uffd, .events = POLLIN };
	struct timespec t0, t;
	int last = atomic_load_explicit(&fault_last_cpu, memory_order_relaxed);

	if (!h->pinned || last < 0 || last == h->cpu)
		return true;
	uint64_t p0 = prof_now();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (poll(&p, 1, 0) <= 0) {
			prof_add(PROF_DEFER, p0);
			return false;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < FAULT_DEFER_NS);
	prof_add(PROF_DEFER, p0);
	return true;
}

/*
 * Follow fault_shared between faults (the ring empty): the first handler
 * unpins itself for a shared spell and pins itself again after; the others
 * sleep through it. Returns true when this handler slept (look again).
 */
static bool fault_follow_spell(struct fault_ctx *h)
{
	bool shared = atomic_load_explicit(&fault_shared, memory_order_relaxed);

	if (h->cpu < 0)
		return false;
	if (!h->first) {
		if (!shared)
			return false;
		syscall(SYS_futex, &fault_shared, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
		return true;
	}
	if (shared && h->pinned) {
		(void)sched_setaffinity(0, sizeof(fault_allowed), &fault_allowed);
		h->pinned = false;
	} else if (!shared && !h->pinned) {
		fault_pin(h->cpu);
		h->pinned = true;
	}
	return false;
}

void *fault_thread(void *arg)
{
	struct fault_ctx *h = arg;

	prctl(PR_SET_NAME, "zswap-fault", 0, 0, 0);
	engine_gate_wait();
	fault_pin(h->cpu);
	h->pinned = h->cpu >= 0;
	for (;;) {
		if (h->head == h->tail) {
			/* Start again at the ring's first entry: free-running
			 * indices would touch all FAULT_RING entries in turn,
			 * 1 MiB a handler resident and charged against
			 * ZSWAP_MEMORY_LIMIT for a ring that rarely holds more
			 * than a few faults. */
			h->head = h->tail = 0;
			if (fault_follow_spell(h))
				continue;
			fault_wait_readable();
			if (!fault_defer(h))
				continue;
		}
		fault_read(h);
		size_t end = h->tail;
		if (h->head == end)
			continue;
		uint64_t p0 = prof_now();	/* an instrumented build only (hist.h) */
		pthread_rwlock_rdlock(&eng.ev_lock);
		prof_add(PROF_RDLOCK, p0);
		while (h->head != end) {
			struct fault_req *q = &h->ring[h->head++ % FAULT_RING];
			atomic_fetch_add_explicit(&eng.cnt.faults, 1, memory_order_relaxed);
			p0 = prof_now();
			fault_serve(h, q->addr, q->flags & UFFD_PAGEFAULT_FLAG_WRITE);
			prof_add(PROF_SERVE, p0);
			if (h->held) {
				h->held = false;
				policy_held(false);
			}
		}
		pthread_rwlock_unlock(&eng.ev_lock);
	}
	return NULL;
}

int fault_init(void)
{
	/* Again in a child that takes over: its handlers start afresh. */
	atomic_store(&fault_shared, 0);
	fault_pinned_handlers = 0;
	fault_shared_able = false;
	fault_tid_last = fault_win_faults = fault_win_changes = 0;
	fault_busy = false;
	memset(&fault_timed, 0, sizeof(fault_timed));
	fault_timed.gap = FAULT_TIMED_GAP;
	fault_timed_reset();
	fault_zero_buf = prim_alloc(FAULT_AROUND_MAX << ZS_PAGE_SHIFT);
	fault_helper.buf = prim_alloc(ZS_PAGE_SIZE);
	fault_helper.buf_lock = &fault_helper_lock;
	fault_helper.cpu = -1;
	return fault_helper.buf && fault_zero_buf ? 0 : -ENOMEM;
}

void *fault_ctx_create(int cpu)
{
	struct fault_ctx *h = prim_alloc(sizeof(*h));

	if (!h)
		return NULL;
	h->handler = true;
	h->cpu = cpu;
	if (cpu >= 0) {
		/* The first pinned handler keeps reading through a shared spell;
		 * a spell needs a second one and a set to unpin to. */
		h->first = fault_pinned_handlers++ == 0;
		if (fault_pinned_handlers == 2)
			fault_shared_able = sched_getaffinity(0, sizeof(fault_allowed), &fault_allowed) == 0;
	}
	/* The faulting page and the pages read ahead after it. */
	/* For the largest readahead ZSWAP_READAHEAD allows, not the one set
	 * now: zswapctl set may raise it (pages are touched only as used). */
	h->buf = prim_alloc((1 + opt_table[OPT_READAHEAD].max) << ZS_PAGE_SHIFT);
	h->ring = prim_alloc(FAULT_RING * sizeof(*h->ring));
	if (!h->buf || !h->ring)
		return NULL;	/* start-up fails: what was mapped stays, unused */
	return h;
}

/* One pass of fault_load_all (or, bounded, of fault_prefetch: it stops at
 * the first page the memory limit has no room for): returns the pages
 * handlers hold (INBUF). */
static size_t fault_load_range(uintptr_t start, uintptr_t end, bool bounded)
{
	struct region_ref refs[32];
	size_t inbuf;

	pthread_mutex_lock(fault_helper.buf_lock);
	pthread_rwlock_rdlock(&eng.ev_lock);
restart:
	inbuf = 0;
	for (uintptr_t cursor = start; cursor < end;) {
		/* Under the read side the snapshot is the kernel's layout, until an
		 * event is processed (ev_gen moves): then take it again. */
		uint64_t gen = atomic_load(&eng.ev_gen);
		size_t n = region_collect(start, end, &cursor, refs, 32);
		bool stale = false;
		for (size_t k = 0; k < n; k++) {
			struct region_ref *ref = &refs[k];
			uintptr_t a = ref->start > start ? ref->start : start;
			uintptr_t b = ref->end < end ? ref->end : end;
			for (uintptr_t p = a; p < b && !stale; p += ZS_PAGE_SIZE) {
				size_t idx = ref->first + ((p - ref->start) >> ZS_PAGE_SHIFT);
				uint32_t old = atomic_load(&ref->arr->slots[idx].state);
				if (bounded && (old & SLOT_STATE) == SLOT_STORED && !policy_room(1)) {
					region_arr_put(ref->arr);
					while (++k < n)
						region_arr_put(refs[k].arr);
					goto out;
				}
				if ((old & SLOT_STATE) == SLOT_STORED)
					fault_load(&fault_helper, ref, idx, p, old, gen, true);
				else if (old & SLOT_INBUF)
					inbuf++;
				stale = atomic_load(&eng.ev_gen) != gen;
			}
			region_arr_put(ref->arr);
		}
		if (stale)
			goto restart;
	}
out:
	pthread_rwlock_unlock(&eng.ev_lock);
	pthread_mutex_unlock(fault_helper.buf_lock);
	return inbuf;
}

void fault_load_all(uintptr_t start, uintptr_t end)
{
	while (fault_load_range(start, end, false))
		fault_pause();	/* a handler is installing one, or waits for events to do so */
}

void fault_prefetch(uintptr_t start, uintptr_t end)
{
	fault_load_range(start, end, true);
}
