/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigchain.c - sharing signals with the program (see sigchain.h).
 *
 * The program's recorded action for a taken signal is read by our handler
 * at any moment, on any thread, while the program may be replacing it: so
 * each action lives in one of SIGCHAIN_RING immutable records and an atomic
 * index names the current one (a writer fills the next record, then
 * publishes its index). A handler would have to be preempted across
 * SIGCHAIN_RING - 1 further sigaction calls for one signal to read a record
 * being rewritten.
 */
#include "config.h"
#include "base/sigchain.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/layout.h"

#define SIGCHAIN_NSIG	65	/* kernel signals 1..64 */
#define SIGCHAIN_RING	8

#ifndef SA_RESTORER
#define SA_RESTORER	0x04000000
#endif

/* The kernel's struct sigaction (x86_64 and most others: this layout). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

#if defined(__x86_64__)
/*
 * The signal return trampoline, byte for byte the C library's __restore_rt
 * (mov $15, %rax; syscall): unwinders (libgcc, libunwind, gdb) recognise a
 * signal frame by these bytes, so C++ exceptions and backtraces still cross
 * handlers we installed.
 */
void sigchain_restore_rt(void);
__asm__(".text\n"
	".align 16\n"
	".type sigchain_restore_rt,@function\n"
	"sigchain_restore_rt:\n"
	"	movq $15, %rax\n"
	"	syscall\n"
	".size sigchain_restore_rt,.-sigchain_restore_rt\n");
#define SIGCHAIN_RESTORER sigchain_restore_rt
#endif

struct sigchain_sig {
	sigchain_fn fn;			/* ours; NULL when not taken */
	bool while_default;		/* ours is in the kernel only while the program's action is SIG_DFL */
	_Atomic unsigned int cur;	/* index of the program's current action */
	struct ksigaction prog[SIGCHAIN_RING];
};

static struct sigchain_sig sigchain[SIGCHAIN_NSIG];
static _Atomic int sigchain_lock ZSWAP_STARTUP_DATA;	/* writers only; never held in a handler */

/* The process these records belong to. A vfork() child (posix_spawn's, a
 * shell's) shares them with its parent while it runs: what it sets (Python's
 * child resets every handler to SIG_DFL before exec) goes to its own kernel
 * table and never to the records, or the parent would lose its handlers. */
static _Atomic pid_t sigchain_owner ZSWAP_STARTUP_DATA;

/* Odd while a take is under way (sigchain_take_as), one more at its start
 * and at its end: a sigaction call that passed a signal nobody took
 * straight to the kernel knows from it whether a take may have read the
 * kernel's action before that call (sigchain_sigaction). */
static _Atomic unsigned int sigchain_takes ZSWAP_STARTUP_DATA;

ZSWAP_STARTUP static bool sigchain_owned(void)
{
	return (pid_t)syscall(SYS_getpid) == atomic_load_explicit(&sigchain_owner, memory_order_relaxed);
}

ZSWAP_STARTUP static long sigchain_sys(int sig, const struct ksigaction *act, struct ksigaction *old)
{
	struct ksigaction k;

	if (act) {
		k = *act;
#ifdef SIGCHAIN_RESTORER
		k.flags |= SA_RESTORER;
		k.restorer = SIGCHAIN_RESTORER;
#endif
		act = &k;
	}
	return syscall(SYS_rt_sigaction, sig, act, old, sizeof(uint64_t));
}

/* glibc's struct sigaction <-> the kernel's. */
ZSWAP_STARTUP static void sigchain_to_k(const struct sigaction *a, struct ksigaction *k)
{
	memset(k, 0, sizeof(*k));
	k->handler = (a->sa_flags & SA_SIGINFO) ? (void *)a->sa_sigaction : (void *)a->sa_handler;
	k->flags = (unsigned long)(unsigned int)a->sa_flags;
	memcpy(&k->mask, &a->sa_mask, sizeof(k->mask));
}

ZSWAP_STARTUP static void sigchain_from_k(const struct ksigaction *k, struct sigaction *a)
{
	memset(a, 0, sizeof(*a));
	if (k->flags & SA_SIGINFO)
		a->sa_sigaction = (void (*)(int, siginfo_t *, void *))k->handler;
	else
		a->sa_handler = (void (*)(int))k->handler;
	a->sa_flags = (int)k->flags;
	memcpy(&a->sa_mask, &k->mask, sizeof(k->mask));
#ifdef SIGCHAIN_RESTORER
	a->sa_restorer = k->restorer;
#endif
}

ZSWAP_STARTUP static void sigchain_lock_take(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	int expect = 0;
	while (!atomic_compare_exchange_weak(&sigchain_lock, &expect, 1)) {
		expect = 0;
		sched_yield();
	}
}

ZSWAP_STARTUP static void sigchain_lock_drop(const sigset_t *old)
{
	atomic_store(&sigchain_lock, 0);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

ZSWAP_STARTUP static const struct ksigaction *sigchain_prog(int sig)
{
	struct sigchain_sig *s = &sigchain[sig];

	return &s->prog[atomic_load_explicit(&s->cur, memory_order_acquire) % SIGCHAIN_RING];
}

static void sigchain_handler(int sig, siginfo_t *info, void *uc);

/* A signal taken while default whose program action is another one: that
 * action is in the kernel as it is. */
ZSWAP_STARTUP static bool sigchain_passed(int sig, const struct ksigaction *prog)
{
	return sigchain[sig].while_default && prog->handler != (void *)SIG_DFL;
}

/* Our registration for sig: our handler with the program's flags and mask,
 * or the program's own action (sigchain_passed). For the default action
 * SA_RESTART: our part interrupts no system call the program would not see
 * interrupted by a handler of its own. */
ZSWAP_STARTUP static long sigchain_install(int sig, const struct ksigaction *prog)
{
	if (sigchain_passed(sig, prog))
		return sigchain_sys(sig, prog, NULL);
	struct ksigaction ours = {
		.handler = (void *)sigchain_handler,
		.flags = (prog->flags & ~(unsigned long)SA_RESETHAND) | SA_SIGINFO,
		.mask = prog->mask,
	};
	if (prog->handler == (void *)SIG_DFL)
		ours.flags |= SA_RESTART;
	return sigchain_sys(sig, &ours, NULL);
}

/* Make rec the program's action for a taken signal (lock held). */
ZSWAP_STARTUP static void sigchain_publish(int sig, const struct ksigaction *rec)
{
	struct sigchain_sig *s = &sigchain[sig];
	unsigned int next = atomic_load(&s->cur) + 1;

	s->prog[next % SIGCHAIN_RING] = *rec;
	atomic_store_explicit(&s->cur, next, memory_order_release);
}

static bool (*_Atomic sigchain_tkill_fn)(void);

void sigchain_on_tkill(bool (*fn)(void))
{
	atomic_store(&sigchain_tkill_fn, fn);
}

bool sigchain_installed(int sig)
{
	struct ksigaction cur;

	return syscall(SYS_rt_sigaction, sig, NULL, &cur, sizeof(uint64_t)) == 0 &&
	       cur.handler == (void *)sigchain_handler;
}

/* A call of the library's own to this thread (sigchain_on_tkill). */
static bool sigchain_own_call(const siginfo_t *info)
{
	bool (*fn)(void) = atomic_load(&sigchain_tkill_fn);

	return fn && info->si_code == SI_TKILL && info->si_pid == (pid_t)syscall(SYS_getpid) && fn();
}

static void sigchain_handler(int sig, siginfo_t *info, void *uc)
{
	struct sigchain_sig *s = &sigchain[sig];
	int saved = errno;
	sigchain_fn fn = s->fn;

	if (sigchain_own_call(info)) {
		errno = saved;
		return;
	}
	if (fn && fn(sig, info, uc)) {
		errno = saved;
		return;
	}
	struct ksigaction p = *sigchain_prog(sig);
	if (p.flags & SA_RESETHAND) {
		/* One-shot: the program's next one is the default action. */
		struct ksigaction dfl = { .handler = SIG_DFL };
		unsigned int next = atomic_load(&s->cur) + 1;
		s->prog[next % SIGCHAIN_RING] = dfl;
		atomic_store_explicit(&s->cur, next, memory_order_release);
	}
	errno = saved;
	if (p.handler == (void *)SIG_IGN || p.handler == (void *)SIG_DFL)
		return;	/* our part was the whole of it (see sigchain.h for SIG_DFL) */
	if (p.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))p.handler)(sig, info, uc);
	else
		((void (*)(int))p.handler)(sig);
}

ZSWAP_STARTUP static int sigchain_take_as(int sig, sigchain_fn fn, bool while_default)
{
	struct ksigaction cur;
	sigset_t old;
	long r;

	if (sig <= 0 || sig >= SIGCHAIN_NSIG)
		return -EINVAL;
	sigchain_lock_take(&old);
	atomic_fetch_add(&sigchain_takes, 1);
	atomic_store(&sigchain_owner, (pid_t)syscall(SYS_getpid));
	sigchain[sig].while_default = while_default;
	r = syscall(SYS_rt_sigaction, sig, NULL, &cur, sizeof(uint64_t));
	if (r == 0) {
		sigchain_publish(sig, &cur);
		__atomic_store_n(&sigchain[sig].fn, fn, __ATOMIC_RELEASE);
		r = sigchain_install(sig, &cur);
		if (r != 0)
			__atomic_store_n(&sigchain[sig].fn, NULL, __ATOMIC_RELEASE);
	}
	int err = errno;
	atomic_fetch_add(&sigchain_takes, 1);
	sigchain_lock_drop(&old);
	return r == 0 ? 0 : -err;
}

ZSWAP_STARTUP int sigchain_take(int sig, sigchain_fn fn)
{
	return sigchain_take_as(sig, fn, false);
}

ZSWAP_STARTUP int sigchain_take_while_default(int sig, sigchain_fn fn)
{
	return sigchain_take_as(sig, fn, true);
}

ZSWAP_STARTUP void sigchain_fork_child(void)
{
	atomic_store(&sigchain_owner, layout_getpid());
}

bool sigchain_program_default(int sig)
{
	if (sig <= 0 || sig >= SIGCHAIN_NSIG || !sigchain[sig].fn)
		return false;
	return sigchain_prog(sig)->handler == (void *)SIG_DFL;
}

bool sigchain_program_fatal(int sig)
{
	if (sig <= 0 || sig >= SIGCHAIN_NSIG || !sigchain[sig].fn)
		return false;
	void *h = sigchain_prog(sig)->handler;
	return h == (void *)SIG_DFL || h == (void *)SIG_IGN;
}

void sigchain_give_back(int sig)
{
	if (sig <= 0 || sig >= SIGCHAIN_NSIG || !sigchain[sig].fn)
		return;
	struct ksigaction p = *sigchain_prog(sig);
	__atomic_store_n(&sigchain[sig].fn, NULL, __ATOMIC_RELEASE);
	sigchain_sys(sig, &p, NULL);
}

/* The records are left as they are: this process may be a vfork() child
 * sharing them with its parent (sigchain_owner), and the kernel, holding
 * SIG_DFL now, calls our handler no more. */
void sigchain_default(int sig)
{
	struct ksigaction dfl = { .handler = SIG_DFL };

	if (sig <= 0 || sig >= SIGCHAIN_NSIG)
		return;
	sigchain_sys(sig, &dfl, NULL);
}

void sigchain_die(int sig, const siginfo_t *info)
{
	bool fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;

	sigchain_default(sig);
	if (!(fault && info->si_code > 0))
		syscall(SYS_tgkill, (long)syscall(SYS_getpid), (long)syscall(SYS_gettid), sig);
}

ZSWAP_STARTUP int sigchain_sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	struct ksigaction k, ko;
	sigset_t old;
	long r = 0;

	/* As the C library: its threads' signals are not the program's. */
	if (sig <= 0 || sig >= SIGCHAIN_NSIG || sig == 32 || sig == 33 ||
	    (act && (sig == SIGKILL || sig == SIGSTOP))) {
		errno = EINVAL;
		return -1;
	}
	if (act)
		sigchain_to_k(act, &k);
	/*
	 * A signal no take touched (all but the few the library shares): to
	 * the kernel at once, without the lock and the two mask changes around
	 * it, as often as a shell resets its handlers in every fork child. A
	 * take that began meanwhile may have read the kernel's action before
	 * this call and installed its own over it: then the call is made again
	 * under the lock, and the action it displaced stays the one reported.
	 */
	struct ksigaction displaced;
	bool again = false;
	unsigned int takes = atomic_load(&sigchain_takes);
	if (!(takes & 1) && !__atomic_load_n(&sigchain[sig].fn, __ATOMIC_ACQUIRE)) {
		if (sigchain_sys(sig, act ? &k : NULL, &ko) != 0)
			return -1;
		if (atomic_load(&sigchain_takes) == takes) {
			if (oact)
				sigchain_from_k(&ko, oact);
			return 0;
		}
		displaced = ko;
		again = act != NULL;
	}
	sigchain_lock_take(&old);
	/* The first call's report, before this call changes the records: the
	 * program's action before it (ours there stands for the take's record). */
	if (again && sigchain[sig].fn && displaced.handler == (void *)sigchain_handler)
		displaced = *sigchain_prog(sig);
	if (sigchain[sig].fn && sigchain_owned()) {
		ko = *sigchain_prog(sig);
		/* A passed action is the kernel's to report: an SA_RESETHAND
		 * handler it has reset since, say, is SIG_DFL now. */
		if (sigchain_passed(sig, &ko))
			r = sigchain_sys(sig, NULL, &ko);
		if (act && r == 0) {
			r = sigchain_install(sig, &k);
			if (r == 0)
				sigchain_publish(sig, &k);
		}
	} else {
		/* Not taken, or not this process's records (a vfork child):
		 * the kernel's, with ours reported as the program's action. */
		r = sigchain_sys(sig, act ? &k : NULL, &ko);
		if (r == 0 && sigchain[sig].fn && ko.handler == (void *)sigchain_handler)
			ko = *sigchain_prog(sig);
	}
	if (again)
		ko = displaced;
	int err = errno;
	sigchain_lock_drop(&old);
	if (r != 0) {
		errno = err;
		return -1;
	}
	if (oact)
		sigchain_from_k(&ko, oact);
	return 0;
}
