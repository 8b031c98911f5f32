/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uffd.h - the userfaultfd calls the engine makes, and nothing else.
 *
 * Contract:
 *  - Every call is one ioctl (or open) on the descriptor given; none mallocs,
 *    takes a lock or touches memory other than its arguments. All are safe on
 *    the fault path and from any thread.
 *  - Range operations return the number of bytes done (>= 0) or a negative
 *    errno. The kernel reports partial progress as EAGAIN with a positive
 *    count; that is returned here as the (short) positive count, so a
 *    negative -EAGAIN always means "nothing done: an UNMAP/REMAP/REMOVE event
 *    is pending (mmap_changing), read it and retry".
 *  - -EEXIST: the first page is already present. -ENOENT: no registered
 *    mapping there (gone, or a hole for UFFDIO_MOVE). -ESRCH: the process is
 *    exiting. -EBUSY (MOVE): the page is shared or pinned.
 */
#ifndef ZSWAP_UFFD_H
#define ZSWAP_UFFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compat.h"

/* What the engine cannot run without, and what it uses when offered. */
#define UF_REQUIRED_FEATURES (UFFD_FEATURE_EVENT_REMAP | UFFD_FEATURE_EVENT_REMOVE | \
			      UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_MOVE)
/* EVENT_FORK: the child keeps its registrations on a userfaultfd of its own,
 * delivered to the parent as a FORK message (src/engine/fork.h). WP_ASYNC (6.7):
 * the kernel resolves write-protect faults itself, never telling us, so a
 * region registered MISSING|WP keeps, per page, whether it was written since
 * PAGEMAP_SCAN last write-protected it: reclaim's referenced bit
 * (src/engine/policy.h). */
/* THREAD_ID: a fault message names the faulting thread, which tells the
 * handlers whether one program thread faults or several (src/engine/fault.c,
 * "one handler, or one per CPU"). */
#define UF_OPTIONAL_FEATURES (UFFD_FEATURE_POISON | UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_THREAD_ID | \
			      UFFD_FEATURE_WP_ASYNC)

struct uf_info {
	uint64_t features;	/* negotiated */
	const char *cause;	/* on failure: what went wrong, one phrase */
	const char *fix;	/* on failure: what the user can do */
	int err;		/* on failure: errno */
};

/* Open a userfaultfd (O_CLOEXEC|O_NONBLOCK, never UFFD_USER_MODE_ONLY)
 * through the system call, else /dev/userfaultfd, and negotiate
 * UF_REQUIRED_FEATURES plus whatever of UF_OPTIONAL_FEATURES the kernel
 * offers; never SIGBUS, never user-mode-only. Returns the fd, or -1 with
 * info->cause/fix/err filled. */
int uf_open(struct uf_info *info);

/* UFFDIO_REGISTER [start, start+len) in one of these modes. Returns 0 or
 * -errno (-EBUSY: registered with another userfaultfd). UF_REG_MISSING_WP
 * only on a descriptor that negotiated UFFD_FEATURE_WP_ASYNC: a synchronous
 * write-protect fault would reach a handler that does not expect it. */
#define UF_REG_MISSING		0	/* missing pages fault to the handler */
#define UF_REG_WP		1	/* write-protect only (the staging areas) */
#define UF_REG_MISSING_WP	2	/* both: program regions with written bits */
int uf_register(int fd, uintptr_t start, size_t len, int mode);
int uf_unregister(int fd, uintptr_t start, size_t len);

/* True once uf_register was tried since the start (or since
 * uf_registered_reset, for a descriptor of the process's own after a
 * restarted fork). Set before the call, so a caller that excludes every
 * registering path and reads false knows that no range is registered: the
 * kernel then sends no FORK message and copies no registration at fork. */
bool uf_registered_any(void);
void uf_registered_reset(void);

/* flags of the range operations: UF_DONTWAKE leaves the threads waiting on
 * the range asleep; the caller wakes them (uf_wake) once it has published
 * the pages' new state, so a woken thread never finds them still in flight. */
#define UF_DONTWAKE 1

/* Resolve missing pages; without UF_DONTWAKE each wakes the threads waiting
 * on the range it filled. Return bytes done or -errno, as described above. */
long uf_copy(int fd, uintptr_t dst, const void *src, size_t len, int flags);
long uf_zeropage(int fd, uintptr_t dst, size_t len, int flags);
long uf_poison(int fd, uintptr_t dst, size_t len, int flags);

/* Move present anonymous pages from src to dst (dst registered with fd, its
 * pages absent); without UF_DONTWAKE, wakes waiters on dst. Bytes moved or
 * -errno. */
long uf_move(int fd, uintptr_t dst, uintptr_t src, size_t len, int flags);

/* Wake threads waiting on [start, start+len). */
int uf_wake(int fd, uintptr_t start, size_t len);

#endif
