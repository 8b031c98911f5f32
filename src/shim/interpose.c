/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * interpose.c - the libc entry points libzswap replaces.
 *
 * Each one makes the real system call itself (raw syscall(): no dlsym, which
 * may malloc and does not work before the constructor ran), with libc's
 * semantics (errno, MAP_FAILED, mremap's optional fifth argument), and then
 * tells the engine what changed. Until the constructor has run, and whenever
 * the engine is off, they are plain system calls.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "base/layout.h"
#include "observe/attrib.h"
#include "engine/engine.h"
#include "engine/calls.h"
#include "shim/creds.h"
#include "shim/start.h"
#include "base/fdtab.h"
#include "engine/fork.h"
#include "reclaim/growth.h"
#include "base/sigchain.h"
#include "observe/stats.h"

#include "base/export.h"

/* The mapping's call site is the return address of the exported entry
 * point, so both entry points pass their own (inlined: no frame between). */
static inline __attribute__((always_inline)) void *interpose_mmap(void *addr, size_t len, int prot,
								   int flags, int fd, off_t off,
								   void *caller)
{
	if (flags & MAP_ANONYMOUS)
		start_wake_map(len);
	else
		start_wake();
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	if (r == -1)
		return MAP_FAILED;
	if (engine_running()) {
		calls_mapped((uintptr_t)r, len, prot, flags, fd);
		if ((flags & MAP_ANONYMOUS) && len >= eng.opt.min_region)
			attrib_mapped((uintptr_t)r, len, caller);
	}
	return (void *)r;
}

ZSWAP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return interpose_mmap(addr, len, prot, flags, fd, off, __builtin_return_address(0));
}

ZSWAP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return interpose_mmap(addr, len, prot, flags, fd, (off_t)off, __builtin_return_address(0));
}

/* munmap, mremap and the discarding madvise hold fork's mapping gate for
 * the whole call (src/engine/fork.h): none is in flight while a fork copies. */
ZSWAP_EXPORT int munmap(void *addr, size_t len)
{
	start_wake();
	fork_gate_enter();
	long r = syscall(SYS_munmap, addr, len);

	if (r == 0 && engine_running()) {
		calls_unmapped((uintptr_t)addr, len);
		attrib_unmapped((uintptr_t)addr, len);
	}
	fork_gate_exit();
	return (int)r;
}

ZSWAP_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	long r;

	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	start_wake();
	fork_gate_enter();
	r = syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	if (r != -1 && engine_running()) {
		calls_remapped((uintptr_t)old, old_len, (uintptr_t)r, new_len, flags);
		attrib_remapped((uintptr_t)old, old_len, (uintptr_t)r, new_len);
	}
	fork_gate_exit();
	return r == -1 ? MAP_FAILED : (void *)r;
}

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

ZSWAP_EXPORT int madvise(void *addr, size_t len, int advice)
{
	if (advice == MADV_PAGEOUT || advice == MADV_COLD)
		start_wake_now();	/* asked for now, not after ZSWAP_START_DELAY */
	else
		start_wake();
	if (engine_running()) {
		/* Managed pages go to the pool; then the kernel sees the whole
		 * call, for its errors and for the parts we do not manage. */
		if (advice == MADV_PAGEOUT)
			calls_pageout((uintptr_t)addr, len);
		else if (advice == MADV_COLD && !((uintptr_t)addr & (ZS_PAGE_SIZE - 1)))
			calls_cold((uintptr_t)addr, len);
		else if (advice == MADV_WILLNEED)
			calls_willneed((uintptr_t)addr, len);
		else if (advice == MADV_WIPEONFORK)
			/* Before the call: from its return on a fork must find
			 * the range resident and unregistered (engine.h).
			 * MADV_KEEPONFORK needs nothing: the range merely stays
			 * unmanaged, which is always safe. MADV_DONTFORK needs
			 * nothing either: a child forgets every region it has
			 * no mapping for (fork_child_take), so V8's heap, which
			 * it gives MADV_DONTFORK, stays managed. */
			calls_fork_advice((uintptr_t)addr, len);
		else if (advice == MADV_DONTNEED || advice == MADV_DONTNEED_LOCKED || advice == MADV_FREE ||
			 advice == MADV_REMOVE) {
			fork_gate_enter();
			long r = calls_discard(addr, len, advice);
			fork_gate_exit();
			return (int)r;
		}
	}
	return (int)syscall(SYS_madvise, addr, len, advice);
}

/*
 * A stack the program gives a thread. glibc puts the thread's descriptor at
 * its top, and in it the thread ID that the kernel clears when the thread
 * exits (pthread_join waits for that), the robust futex list and the rseq
 * area. The kernel serves no userfaultfd fault for an exiting thread
 * (fs/userfaultfd.c, PF_EXITING): were that page evicted then, the clear
 * would fail and pthread_join wait forever, robust mutexes would not be
 * marked as their owner's death. Seen: a thread asleep in read(2) whose
 * stack was evicted, woken to end with the exit system call, with glibc's
 * rseq off (with rseq on, the kernel's own rseq update on the way back to
 * user space brings the page back first). So the top of a given stack is
 * never managed, whether given with pthread_attr_setstack or with the
 * deprecated pthread_attr_setstackaddr (its address is the stack's top: the
 * descriptor sits just below it). The real ones are the next definitions
 * (not system calls).
 */
/* The next definition of name (glibc's), found once and kept in *slot;
 * NULL if there is none. */
static void *interpose_next(_Atomic(void *) *slot, const char *name)
{
	void *f = atomic_load_explicit(slot, memory_order_acquire);

	if (!f && (f = growth_next_def(name)))
		atomic_store_explicit(slot, f, memory_order_release);
	return f;
}

/*
 * glibc's _Fork (2.34 and later) is fork without the atfork handlers, the
 * library's included, and so is its clone() without CLONE_VM: the child
 * would read every stored page as zeros. So they fork as fork() does when
 * it cannot follow the child: every page loaded back first
 * (start_fork_raw_*). The real ones are the next definitions (_Fork also
 * resets the C library's state in the child). clone's child starts in the
 * program's function, so a trampoline runs the child's half first; what it
 * needs is on this thread's stack, which the child has a copy of.
 */
pid_t _Fork(void);

ZSWAP_STARTUP ZSWAP_EXPORT pid_t _Fork(void)
{
	static _Atomic(void *) next;
	pid_t (*f)(void) = (pid_t (*)(void))interpose_next(&next, "_Fork");

	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	start_fork_raw_prepare();
	pid_t pid = f();
	if (pid == 0)
		start_fork_raw_child(false);
	else
		start_fork_raw_parent();
	return pid;
}

typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);

struct interpose_clone {
	int (*fn)(void *);
	void *arg;
	bool fds_shared;
};

static int interpose_clone_child(void *p)
{
	const struct interpose_clone *c = p;

	start_fork_raw_child(c->fds_shared);
	return c->fn(c->arg);
}

ZSWAP_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	static _Atomic(void *) next;
	clone_fn f = (clone_fn)interpose_next(&next, "clone");
	va_list ap;

	/* The optional arguments, read as the C library's own clone reads
	 * them: whatever the registers and stack hold when not passed, used
	 * only under the flags that say they were. */
	va_start(ap, arg);
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	/* A thread, or vfork's kind: nothing to do. A child given its own TLS
	 * (CLONE_SETTLS) cannot run the trampoline, whose state is
	 * thread-local: left as before (it reads stored pages as zeros). */
	if (flags & (CLONE_VM | CLONE_SETTLS))
		return f(fn, stack, flags, arg, ptid, tls, ctid);
	struct interpose_clone c = { fn, arg, (flags & CLONE_FILES) != 0 };
	start_fork_raw_prepare();
	int pid = f(interpose_clone_child, stack, flags, &c, ptid, tls, ctid);
	start_fork_raw_parent();
	return pid;
}

/*
 * Credentials: glibc applies each set*id call to every thread, the
 * library's included, and aborts when their results differ; the library's
 * threads first take the calling thread's capabilities (src/shim/creds.h),
 * and the statistics socket follows a new effective uid. The real ones are
 * the next definitions: only they reach every thread of the program.
 * initgroups is here too: its setgroups is the C library's internal call.
 */
#define INTERPOSE_SETID(name, euid, params, args)					\
	ZSWAP_EXPORT int name params							\
	{										\
		static _Atomic(void *) next;						\
		int (*f) params = (int (*) params)interpose_next(&next, #name);		\
											\
		if (!f) {								\
			errno = ENOSYS;							\
			return -1;							\
		}									\
		bool begun = creds_setid_begin(euid);					\
		int rc = f args;							\
		creds_setid_end(begun);							\
		return rc;								\
	}

INTERPOSE_SETID(setuid, u, (uid_t u), (u))
INTERPOSE_SETID(seteuid, e, (uid_t e), (e))
INTERPOSE_SETID(setreuid, e, (uid_t r, uid_t e), (r, e))
INTERPOSE_SETID(setresuid, e, (uid_t r, uid_t e, uid_t s), (r, e, s))
INTERPOSE_SETID(setgid, (uid_t)-1, (gid_t g), (g))
INTERPOSE_SETID(setegid, (uid_t)-1, (gid_t e), (e))
INTERPOSE_SETID(setregid, (uid_t)-1, (gid_t r, gid_t e), (r, e))
INTERPOSE_SETID(setresgid, (uid_t)-1, (gid_t r, gid_t e, gid_t s), (r, e, s))
INTERPOSE_SETID(setgroups, (uid_t)-1, (size_t n, const gid_t *list), (n, list))
INTERPOSE_SETID(initgroups, (uid_t)-1, (const char *user, gid_t g), (user, g))

/* capset is one thread's: the system call, then the library's threads take
 * the same sets (a capability the program drops is dropped there too). */
int capset(cap_user_header_t hdr, const cap_user_data_t data);

ZSWAP_EXPORT int capset(cap_user_header_t hdr, const cap_user_data_t data)
{
	long r = syscall(SYS_capset, hdr, data);

	if (r == 0 && (hdr->pid == 0 || hdr->pid == (int)syscall(SYS_gettid)))
		creds_capset_after();
	return (int)r;
}

typedef int (*setstack_fn)(pthread_attr_t *, void *, size_t);
typedef int (*setstackaddr_fn)(pthread_attr_t *, void *);

ZSWAP_EXPORT int pthread_attr_setstack(pthread_attr_t *attr, void *stack, size_t size)
{
	static _Atomic(void *) next;
	setstack_fn f = (setstack_fn)interpose_next(&next, "pthread_attr_setstack");

	if (!f)
		return ENOSYS;
	start_wake();
	int r = f(attr, stack, size);
	if (r == 0 && engine_running())
		calls_thread_stack((uintptr_t)stack, size);
	return r;
}

ZSWAP_EXPORT int pthread_attr_setstackaddr(pthread_attr_t *attr, void *top)
{
	static _Atomic(void *) next;
	setstackaddr_fn f = (setstackaddr_fn)interpose_next(&next, "pthread_attr_setstackaddr");

	if (!f)
		return ENOSYS;
	start_wake();
	int r = f(attr, top);
	/* Its size is not known here (pthread_attr_setstacksize may come
	 * before or after): the top is all that must stay out. */
	if (r == 0 && engine_running())
		calls_thread_stack_top((uintptr_t)top);
	return r;
}

ZSWAP_EXPORT int mlock(const void *addr, size_t len)
{
	start_wake();
	if (engine_running())
		calls_locking((uintptr_t)addr, len);
	return (int)syscall(SYS_mlock, addr, len);
}

ZSWAP_EXPORT int mlock2(const void *addr, size_t len, unsigned int flags)
{
	start_wake();
	if (engine_running())
		calls_locking((uintptr_t)addr, len);
	return (int)syscall(SYS_mlock2, addr, len, flags);
}

ZSWAP_EXPORT int munlock(const void *addr, size_t len)
{
	start_wake();
	long r = syscall(SYS_munlock, addr, len);

	if (r == 0 && engine_running())
		calls_unlocked((uintptr_t)addr, len);
	return (int)r;
}

ZSWAP_EXPORT int mlockall(int flags)
{
	start_wake();
	if (engine_running())
		return calls_mlockall(flags);
	return (int)syscall(SYS_mlockall, flags);
}

ZSWAP_EXPORT int munlockall(void)
{
	start_wake();
	if (engine_running())
		return calls_munlockall();
	return (int)syscall(SYS_munlockall);
}

/*
 * Signals: the statistics signal, SIGSEGV and SIGBUS are shared with the
 * program (src/base/sigchain.c); sigaction and signal see and set the program's
 * own action for them, and pass every other signal to the kernel as the C
 * library would.
 */
ZSWAP_STARTUP ZSWAP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	return sigchain_sigaction(sig, act, oact);
}

int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);
sighandler_t bsd_signal(int sig, sighandler_t handler);

ZSWAP_STARTUP ZSWAP_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	return sigchain_sigaction(sig, act, oact);
}

/* signal(3) with glibc's (BSD) semantics: the handler stays installed, the
 * signal is blocked while it runs, interrupted calls restart. */
ZSWAP_STARTUP static sighandler_t interpose_signal(int sig, sighandler_t handler, int flags)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER) && sig > 0 && sig < 65)
		sigaddset(&act.sa_mask, sig);
	if (handler == SIG_ERR || sigchain_sigaction(sig, &act, &old) != 0) {
		errno = EINVAL;
		return SIG_ERR;
	}
	return old.sa_handler;
}

ZSWAP_STARTUP ZSWAP_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return interpose_signal(sig, handler, SA_RESTART);
}

ZSWAP_STARTUP ZSWAP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return interpose_signal(sig, handler, SA_RESTART);
}

/* System V semantics: one-shot, not blocked while it runs, no restart. */
ZSWAP_STARTUP ZSWAP_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	return interpose_signal(sig, handler, (int)(SA_RESETHAND | SA_NODEFER));
}

ZSWAP_STARTUP ZSWAP_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return interpose_signal(sig, handler, (int)(SA_RESETHAND | SA_NODEFER));
}

/*
 * Descriptors: the library's own (userfaultfd, pagemap, eventfds, statm,
 * the statistics socket) sit high (src/base/fdtab.h). Closing one of them, or
 * putting another file in its place, would make every evicted page read as
 * zeros and the next fork hang: close and the close_range family leave them
 * open (close says it closed it: the number stays taken, so nothing of the
 * program's can land there), dup2 and dup3 onto one fail with EBUSY, which
 * one line says, once (the program will miss that descriptor). Raw system
 * calls bypass all of it; a handler that finds the userfaultfd gone says
 * so (fault.c).
 */
ZSWAP_STARTUP ZSWAP_EXPORT int close(int fd)
{
	if (fdtab_is_ours(fd))
		return 0;	/* silent: closing every descriptor is common and harmless now */
	return (int)syscall(SYS_close, fd);
}

ZSWAP_STARTUP static int interpose_dup(int oldfd, int newfd, int flags, bool three)
{
	if (oldfd != newfd && fdtab_is_ours(newfd)) {
		fdtab_refused(newfd, three ? "dup3 onto" : "dup2 onto");
		errno = EBUSY;
		return -1;
	}
	return (int)(three ? syscall(SYS_dup3, oldfd, newfd, flags) : syscall(SYS_dup2, oldfd, newfd));
}

ZSWAP_STARTUP ZSWAP_EXPORT int dup2(int oldfd, int newfd)
{
	return interpose_dup(oldfd, newfd, 0, false);
}

ZSWAP_STARTUP ZSWAP_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	return interpose_dup(oldfd, newfd, flags, true);
}

ZSWAP_STARTUP ZSWAP_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	if (first > last) {
		errno = EINVAL;
		return -1;
	}
	long r = fdtab_close_range(first, last, flags);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

ZSWAP_STARTUP ZSWAP_EXPORT void closefrom(int lowfd)
{
	fdtab_closefrom(lowfd < 0 ? 0 : (unsigned int)lowfd);
}

/*
 * _exit and _Exit end the process without destructors, where a statistics
 * dump that another process asked for with the signal, and the thread has
 * not written yet, would be lost: it is written first (stats.h). exit()
 * runs the destructors, which do the same.
 */
ZSWAP_STARTUP ZSWAP_EXPORT void _exit(int status)
{
	int state = atomic_load(&eng.state);

	if (state == ENGINE_DEFERRED || state == ENGINE_DORMANT)
		start_exit();
	stats_exit_signals();
	for (;;)
		syscall(SYS_exit_group, status);
}

ZSWAP_STARTUP ZSWAP_EXPORT void _Exit(int status)
{
	_exit(status);
}
