/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * creds.c - programs that change their credentials (see creds.h).
 *
 * The calling thread's state is read into creds_want, in library memory
 * (a library thread reading the program's stack could fault on an evicted
 * page in a signal handler), and each library thread applies it to itself
 * (start_on_threads). A thread may only lower its permitted set, and only
 * a thread that has CAP_SETPCAP in its effective set may change its
 * securebits: so the securebits come first, with the thread's whole
 * permitted set raised for the moment, then the caller's exact sets. The
 * library's threads start with the program's credentials and every change
 * since reached them too (set*id) or was mirrored (capset), so their
 * permitted set holds the caller's: they can take its sets exactly, and
 * never hold a capability the caller dropped through the C library.
 */
#include "config.h"
#include "shim/creds.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "engine/engine.h"
#include "observe/stats.h"
#include "shim/start.h"

struct creds_state {
	struct __user_cap_data_struct cap[_LINUX_CAPABILITY_U32S_3];
	long securebits;
};

static struct creds_state creds_want;		/* the caller's, under start_threads_hold */
static _Atomic unsigned int creds_refused;	/* library threads that could not take it */
static bool creds_said;				/* a failure is said once */
static bool creds_moving;			/* the statistics socket follows this call */

/* This thread's capability sets and securebits. */
static bool creds_read(struct creds_state *s)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	long bits = syscall(SYS_prctl, PR_GET_SECUREBITS, 0, 0, 0, 0);

	if (bits < 0 || syscall(SYS_capget, &h, s->cap) != 0)
		return false;
	s->securebits = bits;
	return true;
}

static bool creds_set_securebits(struct creds_state *cur, long want)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	if (cur->securebits == want)
		return true;
	/* keepcaps alone needs no capability; the other bits CAP_SETPCAP. */
	if ((cur->securebits ^ want) == SECBIT_KEEP_CAPS)
		return syscall(SYS_prctl, PR_SET_KEEPCAPS, (want & SECBIT_KEEP_CAPS) != 0, 0, 0, 0) == 0;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		cur->cap[i].effective = cur->cap[i].permitted;
	syscall(SYS_capset, &h, cur->cap);
	return syscall(SYS_prctl, PR_SET_SECUREBITS, want, 0, 0, 0) == 0;
}

/* On each library thread, in a signal handler (start_on_threads). */
static void creds_apply(void *arg)
{
	const struct creds_state *want = arg;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct creds_state cur;
	int saved = errno;

	if (!creds_read(&cur) || !creds_set_securebits(&cur, want->securebits) ||
	    syscall(SYS_capset, &h, want->cap) != 0)
		atomic_fetch_add(&creds_refused, 1);
	errno = saved;
}

/* Every library thread takes the calling thread's state (hold taken). */
static void creds_follow(void)
{
	int n = -EINVAL;

	atomic_store(&creds_refused, 0);
	if (creds_read(&creds_want))
		n = start_on_threads(creds_apply, &creds_want);
	if (n == -ESRCH || (n >= 0 && !atomic_load(&creds_refused)) || creds_said)
		return;
	creds_said = true;
	if (n < 0)
		zlog("cannot give the library's threads this thread's capabilities (errno %d): the C library may"
		     " abort a set*id call that needs a capability this thread raised", -n);
	else
		zlog("%u library thread(s) could not take this thread's capabilities: the C library may abort a"
		     " set*id call that needs one of them", atomic_load(&creds_refused));
}

bool creds_setid_begin(uid_t euid)
{
	start_settle();
	if (!engine_running())
		return false;
	start_threads_hold();
	creds_follow();
	creds_moving = euid != (uid_t)-1 && euid != (uid_t)syscall(SYS_geteuid);
	if (creds_moving)
		stats_setid_begin();
	return true;
}

void creds_setid_end(bool begun)
{
	int saved = errno;

	if (!begun)
		return;
	if (creds_moving)
		stats_setid_end();
	creds_moving = false;
	start_threads_release();
	errno = saved;
}

void creds_capset_after(void)
{
	start_settle();
	if (!engine_running())
		return;
	int saved = errno;
	start_threads_hold();
	creds_follow();
	start_threads_release();
	errno = saved;
}
