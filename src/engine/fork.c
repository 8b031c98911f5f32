/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fork.c - following fork() with UFFD_FEATURE_EVENT_FORK (see fork.h for the
 * three steps and why the state is frozen while the kernel copies it).
 *
 * The fork thread sleeps on the phase word (a futex) until a prepare
 * handler starts a freeze, then runs one loop until the child took over (or
 * there is no child): read every message of eng.uffd (faults queued, events kept in
 * order, FORK: the child's descriptor, sent at once to the child), serve the
 * parent's queued faults, read and serve the child's faults, and watch the
 * socket for the child's acknowledgement or its end.
 *
 * Serving while frozen never changes the table or the pool: a stored page is
 * decompressed into the fork thread's buffer (zs_map_object takes no lock in
 * per-class mode; pool-lock mode is not followed: fork_init) and installed;
 * its entry stays and is dropped after the freeze (parent: by slot; child:
 * by address, if the page is present in its own memory). A parent fault at
 * an address an unprocessed event covers waits until the freeze ends (the
 * table is stale there); so does one whose page cannot be decompressed (the
 * handler poisons it afterwards). At the start of a freeze every thread
 * waiting on a fault is woken, so none waits on a message a handler read
 * and cannot serve now. The child's own events in the window (glibc may
 * unmap in it) decide where its faults are served from, and are sent to it
 * to process.
 *
 * Everything here is prim memory and raw system calls: the fork thread and
 * the atfork handlers run while other threads may hold malloc's locks.
 */
#include "config.h"
#include "engine/fork.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/layout.h"
#include "core/comp.h"
#include "engine/engine.h"
#include "engine/pagecache.h"
#include "engine/events.h"
#include "base/fdtab.h"
#include "base/log.h"
#include "base/prim.h"
#include "engine/region.h"
#include "base/maps.h"
#include "core/store.h"
#include "engine/uffd.h"
#include "core/zsmalloc.h"

#define FORK_MSGS 4096		/* events, and faults, queued while frozen: one per blocked thread */
#define FORK_SERVED 8192	/* pages filled without freeing their entries */
#define FORK_DONE_MAGIC 0x7a73776170666b31ULL
#define FORK_STACK_TOUCH (16 * 1024)	/* stack the prepare and parent halves may use */
#define FORK_WAKE_ALL (1UL << 47)	/* x86-64 user address space (4-level): halved until accepted */
#define FORK_SETTLE_NS 2000000000L	/* longest wait for events in flight at the end of a freeze */
#define FORK_SMAPS_BUF (64 * 1024)
#define FORK_UM 4096			/* registered ranges the child can tell apart */

enum { FORK_IDLE, FORK_FROZEN, FORK_OVER };

struct fork_served {
	uintptr_t addr;
	struct slot_array *arr;	/* referenced; NULL for the child's pages */
	size_t idx;
};

#define FORK_PARENT_DONE 'P'	/* restart: the parent's fork() returned, the copy is made */

struct fork_done {		/* fork thread -> child, after its acknowledgement */
	uint64_t magic;
	uint64_t n;		/* addresses that follow */
	uint64_t overflow;	/* more were filled than FORK_SERVED: their entries stay */
	uint64_t nev;		/* the child's own events that follow the addresses */
	uint64_t npev;		/* then the parent's events read while frozen */
	uint64_t unsettled;	/* an event was still in flight when the freeze ended */
};

/* Following forks: the fork thread's buffers and the freeze under way. */
static struct {
	bool ok;
	bool no_events;			/* the kernel gives no fork events: every fork restarts */
	bool restart;			/* this fork restarts: the child starts its own (fork.h) */
	bool bare;			/* and nothing is registered: no freeze at all (fork_prepare) */
	int sv[2];			/* the socketpair of the fork in progress */
	_Atomic uint32_t phase;		/* FORK_*; a futex word */
	int child_fd;			/* the child's userfaultfd, while ours */
	struct uffd_msg *events;	/* UNMAP/REMAP/REMOVE read while frozen, in order */
	size_t nevents;
	struct uffd_msg *cevents;	/* the child's events (glibc unmapping in it), for it */
	size_t ncevents;
	struct uffd_msg *pfaults, *cfaults;	/* faults not served yet: parent's, child's */
	size_t npfaults, ncfaults;
	struct fork_served *served;
	size_t nserved;
	bool overflow;
	char *buf;			/* one page */
	struct comp_ws ws;		/* decompression only */
	uint64_t *addrs;		/* FORK_SERVED addresses, sent to the child */
	char *probe;			/* a present page, registered on eng.uffd by the first freeze (fork_changing) */
	bool probe_on;
	char *smaps;			/* FORK_SMAPS_BUF bytes: the child reads /proc/self/smaps */
	uintptr_t (*um)[2];		/* FORK_UM registered ranges of the child ("um") */
	size_t num;
	bool um_overflow;
	_Atomic int interim;		/* interim forks whose FORK message is still due */
} follow = { .sv = { -1, -1 }, .child_fd = -1 };

bool fork_enabled(void)
{
	return follow.ok;
}

ZSWAP_STARTUP bool fork_restarts(void)
{
	return follow.ok && follow.no_events;
}

ZSWAP_STARTUP bool fork_restarting(void)
{
	return follow.restart;
}

bool fork_init(void)
{
	struct zswap_store_config cfg;

	opt_store_config(&eng.opt, &cfg);
	/* Without fork events nothing is decompressed while frozen (every
	 * page was loaded back): the pool lock is never taken then. */
	follow.no_events = follow.restart = !(eng.features & UFFD_FEATURE_EVENT_FORK);
	if (!follow.no_events && cfg.lock == ZS_LOCK_POOL)
		return false;	/* zs_map_object would take the pool lock while the kernel copies it */
	size_t wsz = comp_ws_size(cfg.comp, cfg.level);
	void *ws = wsz ? prim_alloc(wsz) : NULL;
	follow.buf = prim_alloc(ZS_PAGE_SIZE);
	follow.events = prim_alloc(FORK_MSGS * sizeof(*follow.events));
	follow.cevents = prim_alloc(FORK_MSGS * sizeof(*follow.cevents));
	follow.pfaults = prim_alloc(FORK_MSGS * sizeof(*follow.pfaults));
	follow.cfaults = prim_alloc(FORK_MSGS * sizeof(*follow.cfaults));
	follow.served = prim_alloc(FORK_SERVED * sizeof(*follow.served));
	follow.addrs = prim_alloc(FORK_SERVED * sizeof(*follow.addrs));
	follow.smaps = prim_alloc(FORK_SMAPS_BUF);
	follow.um = prim_alloc(FORK_UM * sizeof(*follow.um));
	if (!ws || !follow.buf || !follow.events || !follow.cevents || !follow.pfaults || !follow.cfaults || !follow.served || !follow.addrs ||
	    !follow.smaps || !follow.um || comp_ws_init(&follow.ws, cfg.comp, cfg.level, ws, wsz) < 0)
		return false;
	/* The probe page: present, so a fill there answers EEXIST, or EAGAIN
	 * while an UNMAP/REMAP/REMOVE is prepared and not yet read. Without it
	 * a freeze ends without waiting for events in flight. */
	follow.probe = prim_alloc(ZS_PAGE_SIZE);
	if (follow.probe)
		*(volatile char *)follow.probe = 1;
	follow.ok = true;
	return true;
}

/* --- small system call helpers ------------------------------------------ */

static void fork_futex_wait(_Atomic uint32_t *w, uint32_t val)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* Every waiter: follow.phase has two (the fork thread, the forking thread). */
static void fork_futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Send or receive exactly len bytes on a stream socket; with fd, one
 * descriptor rides along (SCM_RIGHTS). Returns 0, or -1 (peer gone). */
static int fork_send(int sock, const void *p, size_t len, int fd)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } cb;
	struct iovec iov = { (void *)p, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		memset(&cb, 0, sizeof(cb));
		mh.msg_control = cb.b;
		mh.msg_controllen = sizeof(cb.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (iov.iov_len) {
		long r = syscall(SYS_sendmsg, sock, &mh, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		iov.iov_base = (char *)iov.iov_base + r;
		iov.iov_len -= (size_t)r;
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	return 0;
}

static int fork_recv(int sock, void *p, size_t len, int *fd)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } cb;
	struct iovec iov = { p, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd) {
		*fd = -1;
		mh.msg_control = cb.b;
		mh.msg_controllen = sizeof(cb.b);
	}
	while (iov.iov_len) {
		long r = syscall(SYS_recvmsg, sock, &mh, MSG_CMSG_CLOEXEC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (fd && mh.msg_controllen >= CMSG_LEN(sizeof(int))) {
			struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
			if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				memcpy(fd, CMSG_DATA(c), sizeof(int));
		}
		iov.iov_base = (char *)iov.iov_base + r;
		iov.iov_len -= (size_t)r;
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	return 0;
}

/* --- serving from the frozen state --------------------------------------- */

/* Decompress a stored page into dst without freeing it (the store's own
 * load is exclusive). Nothing else uses the store while frozen. */
static int fork_peek(const struct zswap_entry *e, void *dst)
{
	enum zswap_entry_type t = zswap_entry_type(e);

	if (t == ZE_SAME) {
		uint64_t *w = dst, v = zswap_entry_word(e);
		for (size_t i = 0; i < ZS_PAGE_SIZE / sizeof(*w); i++)
			w[i] = v;
		return 0;
	}
	if (t == ZE_BACKED)
		return zswap_read_backed(eng.store, e, dst);
	struct zs_pool *pool = zswap_store_entry_pool(eng.store, e);
	if (!pool)
		return -EIO;
	/* follow.ws has the compressor the process started with only: the
	 * handlers load the others' pages after the freeze. */
	if (zswap_entry_recompressed(e) || (t == ZE_COMPRESSED && zswap_entry_comp(e) != follow.ws.comp))
		return -EIO;
	unsigned long handle = zswap_entry_handle(e);
	const void *obj = zs_map_object(pool, handle);
	int rc = 0;
	if (t == ZE_RAW)
		memcpy(dst, obj, ZS_PAGE_SIZE);
	else
		rc = comp_decompress(&follow.ws, obj, zswap_entry_length(e), dst);
	zs_unmap_object(pool, handle);
	return rc;
}

static void fork_note_served(uintptr_t addr, struct slot_array *arr, size_t idx)
{
	if (follow.nserved == FORK_SERVED) {
		follow.overflow = true;
		return;
	}
	if (arr)
		region_arr_get(arr);
	follow.served[follow.nserved++] = (struct fork_served){ addr, arr, idx };
}

/* Serve the fault at addr on fd (eng.uffd for the parent, the child's
 * descriptor for the child) from the frozen table and store. Returns 0 when
 * done, -EAGAIN to try again later (an event pending, or a page that does
 * not decompress: left to the handlers after the freeze). */
static int fork_serve(int fd, uintptr_t addr, uintptr_t from, bool parent)
{
	struct region_ref ref;
	long r;

	addr &= ZS_PAGE_MASK;
	from &= ZS_PAGE_MASK;
	atomic_fetch_add_explicit(&eng.cnt.faults, 1, memory_order_relaxed);
	if (!from || !region_lookup_locked(from, &ref, false) || !ref.arr) {
		r = uf_zeropage(fd, addr, ZS_PAGE_SIZE, 0);
	} else {
		size_t idx = ref.first + ((from - ref.start) >> ZS_PAGE_SHIFT);
		struct slot *s = &ref.arr->slots[idx];
		uint32_t st = atomic_load(&s->state);
		switch (st & SLOT_STATE) {
		case SLOT_STORED:
			if (follow.restart)
				return -EAGAIN;	/* one the load-back left: served after the freeze */
			if (zswap_entry_is_zero(&s->e)) {
				r = uf_zeropage(fd, addr, ZS_PAGE_SIZE, 0);
			} else {
				if (fork_peek(&s->e, follow.buf) < 0)
					return -EAGAIN;
				r = uf_copy(fd, addr, follow.buf, ZS_PAGE_SIZE, 0);
			}
			if (r > 0) {
				fork_note_served(addr, parent ? ref.arr : NULL, idx);
				atomic_fetch_add_explicit(&eng.cnt.refaults, 1, memory_order_relaxed);
			}
			break;
		case SLOT_RESIDENT:
			r = uf_zeropage(fd, addr, ZS_PAGE_SIZE, 0);
			break;
		default:
			/* In flight: impossible while frozen (prepare waited). */
			return -EAGAIN;
		}
	}
	if (r == -EAGAIN)
		return -EAGAIN;
	if (r < 0 && r != -ESRCH)
		uf_wake(fd, addr, ZS_PAGE_SIZE);	/* present already, or gone: let it retry */
	return 0;
}

/* True if an event kept for later covers addr: the table is stale there. */
static bool fork_event_covers(uintptr_t addr)
{
	for (size_t i = 0; i < follow.nevents; i++) {
		const struct uffd_msg *m = &follow.events[i];
		if (m->event == UFFD_EVENT_REMAP) {
			if ((addr >= m->arg.remap.from && addr - m->arg.remap.from < m->arg.remap.len) ||
			    (addr >= m->arg.remap.to && addr - m->arg.remap.to < m->arg.remap.len))
				return true;
		} else if (addr >= m->arg.remove.start && addr < m->arg.remove.end) {
			return true;
		}
	}
	return false;
}

/* Where the child's copy of the page at addr is, given the child's own
 * events (not in the frozen table): 0 when a REMOVE or UNMAP made it zeros,
 * the old address when an mremap moved it. Its one thread made them before
 * this fault (it was not blocked then), so the latest one counts. */
static uintptr_t fork_child_source(uintptr_t addr)
{
	for (size_t i = follow.ncevents; i-- > 0;) {
		const struct uffd_msg *m = &follow.cevents[i];
		if (m->event == UFFD_EVENT_REMAP) {
			if (addr >= m->arg.remap.to && addr - m->arg.remap.to < m->arg.remap.len)
				return m->arg.remap.from + (addr - m->arg.remap.to);
		} else if (addr >= m->arg.remove.start && addr < m->arg.remove.end) {
			return 0;
		}
	}
	return addr;
}

/* The child faults at addr, a registered page of its own (its own events
 * already undone): a parent's REMAP read while frozen whose new range holds
 * addr, where the frozen table has no region, moved that mapping before the
 * kernel copied it (after the copy the child would have no registered page
 * there): its contents are at the old address in the frozen table. The
 * same rule as fork_child_reconcile's, a page at a time. */
static uintptr_t fork_parent_source(uintptr_t addr)
{
	struct region_ref ref;

	for (size_t i = follow.nevents; addr && i-- > 0;) {
		const struct uffd_msg *m = &follow.events[i];
		if (m->event == UFFD_EVENT_REMAP && addr >= m->arg.remap.to &&
		    addr - m->arg.remap.to < m->arg.remap.len && !region_lookup_locked(addr, &ref, false))
			addr = m->arg.remap.from + (addr - m->arg.remap.to);
	}
	return addr;
}

/* True while an UNMAP, REMAP or REMOVE of the parent's is prepared and not
 * read yet (the kernel refuses fills then): its mapping change may precede
 * the copy while its message comes after the freeze. */
static bool fork_changing(void)
{
	return follow.probe_on && uf_zeropage(eng.uffd, (uintptr_t)follow.probe, ZS_PAGE_SIZE, UF_DONTWAKE) == -EAGAIN;
}

/* Serve what can be served of a queue of faults; the rest stays queued. */
static void fork_serve_queue(int fd, struct uffd_msg *q, size_t *n, bool parent)
{
	size_t keep = 0;

	for (size_t i = 0; i < *n; i++) {
		uintptr_t a = q[i].arg.pagefault.address;
		if (parent ? fork_event_covers(a) || fork_serve(fd, a, a, true) < 0
			   : fork_serve(fd, a, fork_parent_source(fork_child_source(a & ZS_PAGE_MASK)), false) < 0)
			q[keep++] = q[i];
	}
	*n = keep;
}

/* Read what is pending on eng.uffd (we are its only reader while frozen). */
static void fork_read_parent(void)
{
	struct uffd_msg m;

	while (syscall(SYS_read, eng.uffd, &m, sizeof(m)) == (long)sizeof(m)) {
		switch (m.event) {
		case UFFD_EVENT_PAGEFAULT:
			if (follow.npfaults < FORK_MSGS)
				follow.pfaults[follow.npfaults++] = m;
			else
				uf_wake(eng.uffd, m.arg.pagefault.address & ZS_PAGE_MASK, ZS_PAGE_SIZE);
			break;
		case UFFD_EVENT_FORK:
			if (follow.restart) {
				/* Nothing to hand over (fork_prepare): closed, which
				 * drops the child's registrations; its faults until
				 * then are woken and find plain memory. */
				fdtab_close_short((int)m.arg.fork.ufd);
			} else if (follow.child_fd < 0 && fork_send(follow.sv[0], "F", 1, (int)m.arg.fork.ufd) == 0) {
				follow.child_fd = fdtab_keep((int)m.arg.fork.ufd);
			} else {
				/* A second child (a raw clone racing ours) or no child
				 * left to take it: see fork_event_unclaimed. */
				fork_event_unclaimed((int)m.arg.fork.ufd);
			}
			break;
		default:
			if (follow.nevents < FORK_MSGS) {
				follow.events[follow.nevents++] = m;
			} else {
				/* Cannot happen (each event blocks its thread); never drop one. */
				zlog("too many userfaultfd events during fork: processing one early");
				events_apply(&m);
			}
			break;
		}
	}
}

static void fork_read_child(void)
{
	struct uffd_msg m;

	while (syscall(SYS_read, follow.child_fd, &m, sizeof(m)) == (long)sizeof(m)) {
		if (m.event != UFFD_EVENT_PAGEFAULT) {
			/* Its one thread, still inside fork(), changed its own
			 * mappings (glibc freeing thread stacks): the child
			 * processes that itself once it runs its engine. */
			if (m.event == UFFD_EVENT_FORK)
				fdtab_close_short((int)m.arg.fork.ufd);
			else if (follow.ncevents < FORK_MSGS)
				follow.cevents[follow.ncevents++] = m;
			continue;
		}
		if (follow.ncfaults < FORK_MSGS)
			follow.cfaults[follow.ncfaults++] = m;
		else
			uf_wake(follow.child_fd, m.arg.pagefault.address & ZS_PAGE_MASK, ZS_PAGE_SIZE);
	}
}

/* The child holds its descriptor. A mapping change of the parent's that
 * bypassed the gate (glibc's own munmap/mremap, a raw system call) may have
 * preceded the kernel's copy while its message is not read yet: wait until
 * none is in flight, reading (and keeping) what comes, serving faults
 * meanwhile, so every such event is in follow.events for the child to judge.
 * Bounded: a program that keeps changing its mappings behind the gate
 * could keep one in flight; false then (the child is told, and counts it). */
static bool fork_settle(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (fork_changing()) {
		fork_read_parent();
		fork_serve_queue(eng.uffd, follow.pfaults, &follow.npfaults, true);
		fork_read_child();
		fork_serve_queue(follow.child_fd, follow.cfaults, &follow.ncfaults, false);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > FORK_SETTLE_NS)
			return false;
		struct pollfd p = { .fd = eng.uffd, .events = POLLIN };
		poll(&p, 1, 1);
	}
	fork_read_parent();	/* what was read before the probe said so */
	return true;
}

/* One freeze: from prepare until the child acknowledged (or there is none). */
static void fork_run(void)
{
	bool acked = false, unsettled = false;

	for (;;) {
		fork_read_parent();
		fork_serve_queue(eng.uffd, follow.pfaults, &follow.npfaults, true);
		if (follow.child_fd >= 0) {
			fork_read_child();
			fork_serve_queue(follow.child_fd, follow.cfaults, &follow.ncfaults, false);
		}
		char c;
		long r = syscall(SYS_recvfrom, follow.sv[0], &c, 1, MSG_DONTWAIT, NULL, NULL);
		if (r == 1) {
			if (follow.restart)
				break;	/* the copy is made; no child to hand over to */
			acked = true;	/* the child holds its descriptor */
			unsettled = !fork_settle();
			break;
		}
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			break;		/* no child (fork failed), or it died */
		struct pollfd p[3] = {
			{ .fd = eng.uffd, .events = POLLIN },
			{ .fd = follow.sv[0], .events = POLLIN },
			{ .fd = follow.child_fd, .events = POLLIN },
		};
		/* Faults that wait for an event's turn or for the kernel's copy
		 * (EAGAIN while mmap_changing) are tried again shortly. */
		poll(p, follow.child_fd >= 0 ? 3 : 2, follow.npfaults || follow.ncfaults ? 1 : -1);
	}
	if (follow.child_fd >= 0) {
		/* Last messages of the child's single thread: wake them, its own
		 * handlers serve them again. */
		fork_read_child();
		for (size_t i = 0; i < follow.ncfaults; i++)
			uf_wake(follow.child_fd, follow.cfaults[i].arg.pagefault.address & ZS_PAGE_MASK, ZS_PAGE_SIZE);
		follow.ncfaults = 0;
		if (acked) {
			struct fork_done d = { FORK_DONE_MAGIC, 0, follow.overflow, follow.ncevents, follow.nevents, unsettled };
			for (size_t i = 0; i < follow.nserved; i++)
				follow.addrs[d.n++] = follow.served[i].addr;
			if (fork_send(follow.sv[0], &d, sizeof(d), -1) == 0 && d.n)
				fork_send(follow.sv[0], follow.addrs, d.n * sizeof(*follow.addrs), -1);
			if (d.nev)
				fork_send(follow.sv[0], follow.cevents, d.nev * sizeof(*follow.cevents), -1);
			if (d.npev)
				fork_send(follow.sv[0], follow.events, d.npev * sizeof(*follow.events), -1);
		}
		fdtab_close(follow.child_fd);
		follow.child_fd = -1;
	}
	atomic_store(&follow.phase, FORK_OVER);
	fork_futex_wake(&follow.phase);
}

void *fork_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "zswap-fork", 0, 0, 0);
	engine_gate_wait();
	for (;;) {
		uint32_t ph = atomic_load(&follow.phase);
		if (ph == FORK_FROZEN)
			fork_run();	/* leaves FORK_OVER */
		else
			fork_futex_wait(&follow.phase, ph);
	}
	return NULL;
}

/* --- the mapping gate (fork.h) ------------------------------------------- */

static struct {
	_Atomic uint32_t closed;	/* forks preparing or frozen (two threads may fork at once); a futex word */
	_Atomic uint32_t inside;	/* calls holding it; a futex word the closer waits on */
	pid_t pid;			/* the process that closed it */
} gate ZSWAP_STARTUP_DATA;
static __thread unsigned int gate_depth;	/* nesting in this thread */
static __thread bool gate_counted;	/* this thread's outermost call is counted in inside */
static __thread bool fg_closer;		/* this thread closed it (its fork is in progress) */

static void fork_gate_leave(void)
{
	atomic_fetch_sub(&gate.inside, 1);
	if (atomic_load(&gate.closed))	/* the closer waits for the count to fall */
		syscall(SYS_futex, &gate.inside, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

void fork_gate_enter(void)
{
	uint32_t c;

	if (gate_depth) {
		gate_depth++;	/* a signal handler inside a call of this thread */
		return;
	}
	atomic_fetch_add(&gate.inside, 1);
	gate_counted = true;
	gate_depth = 1;
	if (!atomic_load(&gate.closed))
		return;
	/* A fork is being prepared or its state is frozen: wait, signals
	 * blocked (a handler's own call would pass as nested, unseen). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (;;) {
		gate_counted = false;
		fork_gate_leave();
		if (fg_closer || gate.pid != (pid_t)syscall(SYS_getpid))
			break;	/* the forking thread itself (another atfork handler),
				 * or a child whose copy is closed (an atfork child
				 * handler before ours, a raw clone made meanwhile):
				 * nobody would open it; pass uncounted */
		while ((c = atomic_load(&gate.closed)) != 0)
			syscall(SYS_futex, &gate.closed, FUTEX_WAIT_PRIVATE, c, NULL, NULL, 0);
		atomic_fetch_add(&gate.inside, 1);
		gate_counted = true;
		if (!atomic_load(&gate.closed))
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void fork_gate_exit(void)
{
	int e = errno;	/* the call's */

	if (--gate_depth)
		return;
	if (gate_counted)
		fork_gate_leave();
	gate_counted = false;
	errno = e;
}

/* Prepare (signals blocked): no call of the program's changes a mapping
 * from now until the freeze ends. A call in progress finishes (its event is
 * read and processed by a handler: nothing is frozen yet). The forking
 * thread's own call, if fork() runs in a signal handler inside one, is
 * allowed for. */
ZSWAP_STARTUP void fork_gate_close(void)
{
	uint32_t self = gate_depth && gate_counted ? 1 : 0, n;

	gate.pid = (pid_t)syscall(SYS_getpid);
	fg_closer = true;
	atomic_fetch_add(&gate.closed, 1);
	while ((n = atomic_load(&gate.inside)) > self)
		syscall(SYS_futex, &gate.inside, FUTEX_WAIT_PRIVATE, n, NULL, NULL, 0);
}

ZSWAP_STARTUP void fork_gate_open(void)
{
	fg_closer = false;
	if (atomic_fetch_sub(&gate.closed, 1) == 1)
		syscall(SYS_futex, &gate.closed, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* The child: the calls in progress or waiting were the parent's threads,
 * and so was any other fork being prepared. */
ZSWAP_STARTUP void fork_gate_reset(void)
{
	uint32_t inside = gate_depth && gate_counted ? 1 : 0;

	/* Each written only if it changes (prim_reset): a deferred shell's
	 * children never closed the gate. */
	fg_closer = false;
	if (atomic_load(&gate.inside) != inside)
		atomic_store(&gate.inside, inside);
	if (atomic_load(&gate.closed))
		atomic_store(&gate.closed, 0);
}

/* --- the atfork halves ---------------------------------------------------- */

/* A page loaded out of the store and not in place yet: its only copy is in
 * a handler's buffer, which a child could not use. (eng.ev_lock held for
 * writing: no handler is serving, so only such parked pages are in flight.) */
static bool fork_inflight(void)
{
	struct region_ref refs[32];
	uintptr_t cursor = 0, end = UINTPTR_MAX & ZS_PAGE_MASK;
	bool found = false;

	while (cursor < end) {
		size_t n = region_collect(0, end, &cursor, refs, 32);
		if (!n)
			break;
		for (size_t k = 0; k < n; k++) {
			size_t first = refs[k].first, np = (refs[k].end - refs[k].start) >> ZS_PAGE_SHIFT;
			for (size_t i = 0; i < np && !found; i++)
				if ((atomic_load_explicit(&refs[k].arr->slots[first + i].state, memory_order_relaxed) &
				     SLOT_STATE) == SLOT_LOADING)
					found = true;
			region_arr_put(refs[k].arr);
		}
	}
	return found;
}

/* An interim fork (everything loaded back): its FORK message, if the kernel
 * sends one, is closed by a handler without a word. */
bool fork_prepare_interim(void)
{
	if (eng.features & UFFD_FEATURE_EVENT_FORK)
		atomic_fetch_add(&follow.interim, 1);
	return false;
}

/* Bring the forking thread's stack below this frame back, in case it was
 * evicted (a thread stack may be adopted): from the moment eng.ev_lock is
 * held until the fork thread serves, a fault of this thread would wait for
 * itself. Evictions are stopped already, so the pages stay. */
static __attribute__((noinline)) void fork_stack_touch(void)
{
	volatile char probe[FORK_STACK_TOUCH];

	for (size_t i = 0; i < sizeof(probe); i += 256)
		probe[i] = 0;
	(void)probe[0];
}

/* The probe is registered by the first freeze that needs it: registered
 * from the start, it would make every fork of a process that never evicts
 * a followed one (fork_prepare's bare case). eng.ev_lock held for writing. */
static void fork_probe_on(void)
{
	if (follow.probe && !follow.probe_on)
		follow.probe_on = uf_register(eng.uffd, (uintptr_t)follow.probe, ZS_PAGE_SIZE, UF_REG_MISSING) == 0;
}

ZSWAP_STARTUP bool fork_prepare(bool light)
{
	int sv[2];

	if (!follow.ok)
		return fork_prepare_interim();
	/* Evictions are stopped (the caller holds eng.evict_gate): with
	 * nothing stored no stack page can be, and each page touched after a
	 * fork is a copy-on-write fault (four a fork, for a shell). */
	if (!zswap_store_empty(eng.store))
		fork_stack_touch();
	for (;;) {
		pthread_rwlock_wrlock(&eng.ev_lock);
		if (!fork_inflight())
			break;
		pthread_rwlock_unlock(&eng.ev_lock);
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);	/* a handler installs it once it has read its events */
	}
	/* Evictions stopped and no handler serving: the store can only be
	 * empty or not until the freeze ends. Empty, the child's copy holds
	 * every byte in place, as after a restart's load-back. */
	follow.restart = follow.no_events || (light && zswap_store_empty(eng.store));
	/* Nothing ever registered on eng.uffd (a process that has not
	 * evicted yet: evict_stages_ready, fork_probe_on; the paths that
	 * register hold eng.evict_gate or eng.ev_lock, both held here): the
	 * kernel sends no FORK message, no fault or event can come, and the
	 * child's copy is plain memory. The freeze would cost this fork the
	 * fork thread's wake-ups both ways; only the table stays still while
	 * the kernel copies it. */
	follow.bare = follow.restart && !uf_registered_any();
	if (follow.bare) {
		region_rdlock();
		return true;
	}
	fork_probe_on();
	if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		static _Atomic int said;
		pthread_rwlock_unlock(&eng.ev_lock);
		if (!atomic_exchange(&said, 1))
			zlog("fork: no socketpair (errno %d): the pool is loaded back at fork instead", errno);
		return fork_prepare_interim();
	}
	/* Kept high for the fork's span (src/base/fdtab.h): the program's other
	 * threads run meanwhile, and a child's inherit the numbers. */
	follow.sv[0] = fdtab_keep(sv[0]);
	follow.sv[1] = fdtab_keep(sv[1]);
	follow.child_fd = -1;
	follow.nevents = follow.ncevents = follow.npfaults = follow.ncfaults = follow.nserved = 0;
	follow.overflow = false;
	region_rdlock();	/* table writers outside ev_lock (munmap of unregistered memory) wait too */
	atomic_store(&follow.phase, FORK_FROZEN);
	fork_futex_wake(&follow.phase);
	/* Faults a handler read and queued but has not served stay unserved
	 * while it waits for eng.ev_lock; one of those threads may hold a
	 * malloc arena lock that glibc's fork takes next. Wake every waiter:
	 * each faults again, and the fork thread reads it (a stale queued copy
	 * is served later as a late message, as always). */
	for (uintptr_t len = FORK_WAKE_ALL; len >= (1UL << 30); len >>= 1)
		if (uf_wake(eng.uffd, ZS_PAGE_SIZE, len - 2 * ZS_PAGE_SIZE) == 0)
			break;
	return true;
}

ZSWAP_STARTUP void fork_parent(void)
{
	uint32_t ph;

	atomic_fetch_add(follow.restart ? &eng.cnt.fork_light : &eng.cnt.fork_followed, 1);
	if (follow.bare) {
		atomic_fetch_add(&eng.cnt.fork_bare, 1);
		follow.bare = false;
		region_unlock();
		pthread_rwlock_unlock(&eng.ev_lock);
		return;
	}
	if (follow.restart)	/* the child needs nothing from the freeze but its copy */
		fork_send(follow.sv[1], &(char){ FORK_PARENT_DONE }, 1, -1);
	fdtab_close(follow.sv[1]);	/* the child holds its own copy: EOF means no child */
	follow.sv[1] = -1;
	while ((ph = atomic_load(&follow.phase)) != FORK_OVER)
		fork_futex_wait(&follow.phase, ph);
	fdtab_close(follow.sv[0]);
	follow.sv[0] = -1;
	region_unlock();
	/* Still under eng.ev_lock (write): the events, in their order, then
	 * the entries of the pages the parent was given while frozen. */
	for (size_t i = 0; i < follow.nevents; i++)
		events_apply(&follow.events[i]);
	for (size_t i = 0; i < follow.nserved; i++) {
		struct fork_served *sv = &follow.served[i];
		if (!sv->arr)
			continue;
		struct slot *s = &sv->arr->slots[sv->idx];
		uint32_t old = atomic_load(&s->state);
		if ((old & SLOT_STATE) == SLOT_STORED) {
			zswap_invalidate(eng.store, &s->e);
			atomic_store(&s->state, SLOT_RESIDENT | (old & SLOT_COLD));
		}
		region_arr_put(sv->arr);
	}
	follow.nevents = follow.nserved = 0;
	pthread_rwlock_unlock(&eng.ev_lock);
	/* Faults kept for later fault again and reach the handlers. */
	for (size_t i = 0; i < follow.npfaults; i++)
		uf_wake(eng.uffd, follow.pfaults[i].arg.pagefault.address & ZS_PAGE_MASK, ZS_PAGE_SIZE);
	follow.npfaults = 0;
	atomic_store(&follow.phase, FORK_IDLE);
}

/* In the child: drop the entries of pages the fork thread filled and that
 * are present here (present: filled before the kernel copied the page
 * table, or in the child itself). */
static void fork_child_fixup(const uint64_t *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct region_ref ref;
		uint64_t pm = 0;
		uintptr_t a = (uintptr_t)addrs[i];
		if (syscall(SYS_pread64, eng.pagemap_fd, &pm, sizeof(pm), (off_t)((a >> ZS_PAGE_SHIFT) * sizeof(pm))) !=
			    (long)sizeof(pm) || !(pm >> 63))
			continue;
		if (!region_lookup(a, &ref, true) || !ref.arr) {
			region_arr_put(ref.arr);
			continue;
		}
		struct slot *s = &ref.arr->slots[ref.first + ((a - ref.start) >> ZS_PAGE_SHIFT)];
		uint32_t old = atomic_load(&s->state);
		if ((old & SLOT_STATE) == SLOT_STORED) {
			zswap_invalidate(eng.store, &s->e);
			atomic_store(&s->state, SLOT_RESIDENT | (old & SLOT_COLD));
		}
		region_arr_put(ref.arr);
	}
}

/* The child's registered ranges (VmFlags "um": inherited registrations),
 * from /proc/self/smaps read with raw system calls into prim memory. */
static void fork_um_line(char *l, uintptr_t *s, uintptr_t *e)
{
	if (l[0] == 'V' && strncmp(l, "VmFlags:", 8) == 0) {
		bool um = false;
		for (char *t = l + 8; *t; t++)
			if (t[0] == 'u' && t[1] == 'm' && t[-1] == ' ' && (t[2] == ' ' || t[2] == '\0'))
				um = true;
		if (!um || *e <= *s)
			return;
		if (follow.num && follow.um[follow.num - 1][1] == *s)
			follow.um[follow.num - 1][1] = *e;	/* adjacent: one range */
		else if (follow.num < FORK_UM)
			follow.um[follow.num][0] = *s, follow.um[follow.num++][1] = *e;
		else
			follow.um_overflow = true;
		return;
	}
	if (!((l[0] >= '0' && l[0] <= '9') || (l[0] >= 'a' && l[0] <= 'f')))
		return;		/* a key line */
	uintptr_t a = 0, b = 0;
	char *p = l;
	for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
		a = a * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	if (*p++ != '-')
		return;
	for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
		b = b * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	*s = a;
	*e = b;
}

static int fork_um_each(char *l, void *arg)
{
	uintptr_t *se = arg;

	fork_um_line(l, &se[0], &se[1]);
	return 0;
}

static void fork_um_load(void)
{
	uintptr_t se[2] = { 0, 0 };

	follow.num = 0;
	follow.um_overflow = maps_read_lines("/proc/self/smaps", follow.smaps, FORK_SMAPS_BUF, fork_um_each, se) != 0;
}

/* 1: [start, end) is all registered in the child, 0: none of it, -1: part
 * of it, -2: unknown (smaps unreadable, or too many ranges). */
static int fork_um(uintptr_t start, uintptr_t end)
{
	uintptr_t pos = start;
	bool any = false;

	if (follow.um_overflow)
		return -2;
	for (size_t i = 0; i < follow.num; i++) {
		if (follow.um[i][1] <= start || follow.um[i][0] >= end)
			continue;
		any = true;
		if (follow.um[i][0] <= pos && follow.um[i][1] > pos)
			pos = follow.um[i][1];
	}
	return pos >= end ? 1 : any ? -1 : 0;
}

/*
 * The parent's UNMAP and REMAP events read while frozen (mapping changes
 * that bypassed the gate): each happened in the kernel before or after the
 * copy, and the order of the messages does not say which. The child's own
 * address space does: apply exactly those whose effect it shows.
 *   REMAP: (the moved range is one registered VMA: the kernel sends REMAP
 *          for no other) the new range is all registered here and the
 *          table has no region there: the move came before the copy (after
 *          it, a registered range there is one the table holds); the
 *          region moves.
 *   UNMAP: no page of the range is registered here: it was gone before the
 *          copy; its entries go. A registered page left: after the copy.
 *   REMOVE: never (its zap follows the read: the child keeps the table's
 *          entries; DESIGN.md "## Fork").
 * Returns the number of events it could not decide (smaps unknown).
 */
static size_t fork_child_reconcile(const struct uffd_msg *ev, size_t n)
{
	size_t unsure = 0;

	if (!n)
		return 0;
	fork_um_load();
	for (size_t i = 0; i < n; i++) {
		const struct uffd_msg *m = &ev[i];
		struct region_ref ref;
		int u;
		if (m->event == UFFD_EVENT_REMAP) {
			uintptr_t to = m->arg.remap.to, end = to + m->arg.remap.len;
			u = fork_um(to, end);
			if (u == 1 && !region_lookup(to, &ref, false) && ref.end >= end)
				events_apply(m);
			else if (u == -2)
				unsure++;
		} else if (m->event == UFFD_EVENT_UNMAP) {
			u = fork_um(m->arg.remove.start, m->arg.remove.end);
			if (u == 0)
				events_apply(m);
			else if (u == -2)
				unsure++;
		}
	}
	return unsure;
}

/* Between two mappings of the child's /proc/self/maps (the callback of
 * fork_child_forget_absent; arg: the end of the previous one). */
static int fork_child_gap(const struct maps_vma *v, void *arg)
{
	uintptr_t *prev_end = arg;

	if (v->start > *prev_end)
		region_forget(eng.store, *prev_end, v->start);
	if (v->end > *prev_end)
		*prev_end = v->end;
	return 0;
}

/*
 * Regions where the child has no mapping at all: the kernel did not copy
 * that mapping (MADV_DONTFORK made by a call the library did not see, a raw
 * system call; the interposed madvise keeps such ranges out of the table),
 * or an unmap no event told. Their entries are the parent's, and a mapping
 * the child makes there later is new memory, not registered: a table that
 * still claimed it would move its pages out on eviction and the child would
 * read zeros where it wrote. So the gaps between the child's mappings leave
 * the table, after every event was applied (a REMAP moves regions out of
 * what is now a gap). Nothing past the last mapping read ([vsyscall] when
 * the file was read whole) is decided. Alone here: the table lock taken
 * under maps_lock has no other holder. Cost: one read of /proc/self/maps.
 */
static void fork_child_forget_absent(void)
{
	uintptr_t prev_end = 0;

	maps_for_each(fork_child_gap, &prev_end);
}

/* The locks the forking thread held are the child's now, and their waiters
 * stayed in the parent: start them afresh. */
ZSWAP_STARTUP static void fork_child_locks(void)
{
	/* Not a constant: .rodata is a page the child would fault in. */
	static pthread_rwlock_t init ZSWAP_STARTUP_DATA = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

	prim_reset(&eng.ev_lock, &init, sizeof(init));
	prim_reset(&eng.evict_gate, &init, sizeof(init));
	region_fork_child();
	pagecache_fork_child();
	maps_fork_child();
	prim_fork_child();
}

/* The freeze is over in the child: its own forks start from here. */
ZSWAP_STARTUP static void fork_child_idle(void)
{
	follow.bare = false;
	follow.nevents = follow.ncevents = follow.npfaults = follow.ncfaults = follow.nserved = 0;
	follow.child_fd = -1;
	atomic_store(&follow.phase, FORK_IDLE);
}

int fork_child_take(void)
{
	int fd = -1;
	char c = 0;

	fork_child_locks();
	fdtab_close(follow.sv[0]);
	follow.sv[0] = -1;
	if (fork_recv(follow.sv[1], &c, 1, &fd) < 0 || fd < 0 || c != 'F') {
		zlog("fork: this child did not get its userfaultfd from the parent: its evicted pages are lost");
		fdtab_close_short(fd);
		fdtab_close(follow.sv[1]);
		follow.sv[1] = -1;
		return -1;
	}
	return fdtab_keep(fd);
}

bool fork_child_finish(int fd, bool go_on)
{
	struct fork_done d = { 0, 0, 0, 0, 0, 0 };

	if (!go_on) {
		/* The parent sees the socket's end and ends its freeze. */
		fdtab_close(fd);
		fdtab_close(follow.sv[1]);
		follow.sv[1] = -1;
		return false;
	}
	if (fork_send(follow.sv[1], "A", 1, -1) < 0 ||
	    fork_recv(follow.sv[1], &d, sizeof(d), NULL) < 0 || d.magic != FORK_DONE_MAGIC ||
	    d.n > FORK_SERVED || (d.n && fork_recv(follow.sv[1], follow.addrs, d.n * sizeof(*follow.addrs), NULL) < 0) ||
	    d.nev > FORK_MSGS || (d.nev && fork_recv(follow.sv[1], follow.cevents, d.nev * sizeof(*follow.cevents), NULL) < 0) ||
	    d.npev > FORK_MSGS || (d.npev && fork_recv(follow.sv[1], follow.events, d.npev * sizeof(*follow.events), NULL) < 0)) {
		/* The parent ended after handing over the descriptor: go on with
		 * it and the table as copied (pages it filled keep their entries,
		 * events of the window are unknown). */
		zlog("fork: the parent ended during the handover: this child goes on with its table as copied");
		d = (struct fork_done){ FORK_DONE_MAGIC, 0, 1, 0, 0, 0 };
	}
	fdtab_close(follow.sv[1]);
	follow.sv[1] = -1;
	fdtab_close(eng.uffd);		/* the parent's */
	eng.uffd = fd;
	fdtab_close(eng.pagemap_fd);	/* it reads the parent's page table */
	eng.pagemap_fd = fdtab_open_ro("/proc/self/pagemap", true);
	/* Alone here: no lock needed. The parent's changes that preceded the
	 * copy, then the child's own (after it), then what the child does not
	 * have at all, then the pages filled. */
	size_t unsure = fork_child_reconcile(follow.events, d.npev);
	for (size_t i = 0; i < d.nev; i++)
		events_apply(&follow.cevents[i]);
	fork_child_forget_absent();
	fork_child_fixup(follow.addrs, d.n);
	if (unsure || d.unsettled) {
		static _Atomic int said;
		if (!atomic_exchange(&said, 1) || eng.opt.verbose)
			zlog("fork: a mapping change the library does not see (glibc's own munmap/mremap, a raw system"
			     " call) raced this fork: %zu undecided, %s in flight; this child may read zeros or old"
			     " data there", unsure, d.unsettled ? "one still" : "none");
	}
	if (d.overflow && eng.opt.verbose)
		zlog("fork: more than %d pages were filled during fork; some stay stored while present", FORK_SERVED);
	/* The parent's references in follow.served were copied mid-update (the
	 * kernel copies page by page while the fork thread writes): leave
	 * them, a slot array kept too long is the only cost. */
	fork_child_idle();
	return true;
}

ZSWAP_STARTUP void fork_restart_child(void)
{
	fork_child_locks();
	/* One at a time: the two stores merged read their constant from
	 * .rodata (layout.h). */
	fdtab_close(follow.sv[0]);
	follow.sv[0] = -1;
	fdtab_close(follow.sv[1]);
	follow.sv[1] = -1;
	fork_child_idle();
	/* The parent's: registering or moving through it would act on the
	 * parent's address space. */
	fdtab_close(eng.uffd);
	fdtab_close(eng.pagemap_fd);
	eng.uffd = eng.pagemap_fd = -1;
}

int fork_restart_open(void)
{
	struct uf_info info;
	int fd = fdtab_keep(uf_open(&info));

	if (fd < 0) {
		zlog("fork: this child cannot open a userfaultfd of its own: %s (%d); it runs without libzswap",
		     info.cause, info.err);
		return -1;
	}
	eng.features = info.features;
	follow.no_events = !(eng.features & UFFD_FEATURE_EVENT_FORK);	/* its own forks' */
	uf_registered_reset();	/* nothing on this descriptor yet */
	follow.probe_on = false;
	eng.uffd = fd;
	eng.pagemap_fd = fdtab_open_ro("/proc/self/pagemap", true);
	/* Regions where the child has no mapping: the parent's changes that
	 * raced the copy (the table is registered again over what is left). */
	fork_child_forget_absent();
	return fd;
}

void fork_event_unclaimed(int ufd)
{
	static _Atomic int said;
	int n = atomic_load(&follow.interim);

	fdtab_close_short(ufd);
	while (n > 0 && !atomic_compare_exchange_weak(&follow.interim, &n, n - 1))
		;
	if (n <= 0 && !atomic_exchange(&said, 1))
		zlog("a child was created without fork()'s handlers (the clone system call itself): its evicted pages read as zeros");
}
