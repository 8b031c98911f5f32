/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdtab.c - the library's own file descriptors (fdtab.h says why).
 *
 * The record is a small array of descriptor numbers, each slot -1 or one of
 * ours, written with atomics: the library opens and closes a handful, at
 * start-up and in a fork's child, and the interposed calls read it from any
 * thread, in signal handlers too.
 */
#include "config.h"
#include "base/fdtab.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/layout.h"
#include "base/log.h"

#define FDTAB_SLOTS 32		/* persistent ones: ~8 in use, a fork's few on top */
#define FDTAB_TOP 1024		/* stay below select()'s FD_SETSIZE */
#define FDTAB_BELOW_TOP 64	/* the library's room under the top */

static _Atomic int fdtab_fds[FDTAB_SLOTS] = {
	[0 ... FDTAB_SLOTS - 1] = -1,
};
static _Atomic int fdtab_base;	/* 0 until computed */

/* The soft RLIMIT_NOFILE, or 0 if unknown. */
static rlim_t fdtab_nofile(void)
{
	struct rlimit rl;

	return syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 ? rl.rlim_cur : 0;
}

/* Where the library's descriptors start: 64 under min(RLIMIT_NOFILE, 1024)
 * (960 with Debian's default soft limit of 1024; a huge limit would make the
 * kernel grow the descriptor table to our number: 1024 bounds it), half the
 * limit if that is tiny. */
static int fdtab_start(void)
{
	int base = atomic_load_explicit(&fdtab_base, memory_order_relaxed);

	if (base)
		return base;
	rlim_t nofile = fdtab_nofile();
	long top = FDTAB_TOP;
	if (nofile && nofile < (rlim_t)top)
		top = (long)nofile;
	base = (int)(top > 2 * FDTAB_BELOW_TOP ? top - FDTAB_BELOW_TOP : top / 2);
	if (base < 3)
		base = 3;
	atomic_store_explicit(&fdtab_base, base, memory_order_relaxed);
	return base;
}

/* fd moved up (close-on-exec), the old number closed; fd itself if it
 * cannot be (no room up there). */
static int fdtab_move(int fd)
{
	int base = fdtab_start();

	if (fd < 0 || fd >= base)
		return fd;
	long up = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base);
	if (up < 0)
		return fd;
	syscall(SYS_close, fd);
	return (int)up;
}

int fdtab_keep(int fd)
{
	fd = fdtab_move(fd);
	if (fd < 0)
		return fd;
	for (int i = 0; i < FDTAB_SLOTS; i++) {
		int none = -1;
		if (atomic_compare_exchange_strong(&fdtab_fds[i], &none, fd))
			return fd;
	}
	static _Atomic int said;
	if (!atomic_exchange(&said, 1))
		zlog("more than %d descriptors of its own: descriptor %d is not protected from the program's close",
		     FDTAB_SLOTS, fd);
	return fd;
}

ZSWAP_STARTUP void fdtab_close(int fd)
{
	if (fd < 0)
		return;
	for (int i = 0; i < FDTAB_SLOTS; i++) {
		int was = fd;
		if (atomic_compare_exchange_strong(&fdtab_fds[i], &was, -1))
			break;
	}
	syscall(SYS_close, fd);
}

void fdtab_close_all(void)
{
	for (int i = 0; i < FDTAB_SLOTS; i++) {
		int fd = atomic_exchange(&fdtab_fds[i], -1);
		if (fd >= 0)
			syscall(SYS_close, fd);
	}
}

int fdtab_short(int fd)
{
	return fdtab_move(fd);
}

int fdtab_open_ro(const char *path, bool keep)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);

	return keep ? fdtab_keep(fd) : fdtab_move(fd);
}

/* What a file that is not a regular one is, for the refusal. */
static const char *fdtab_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "is a FIFO";
	case S_IFCHR:
		return "is a character device";
	case S_IFBLK:
		return "is a block device";
	case S_IFSOCK:
		return "is a socket";
	case S_IFDIR:
		return "is a directory";
	default:
		return "is not a regular file";
	}
}

/* Open path for appending, not following a link and not blocking: the one
 * there, else a new one (once more if another process creates it between
 * the two opens). fd, or -1 with errno. */
static int fdtab_open_own(const char *path, bool *created)
{
	const int fl = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;

	for (int tries = 0; tries < 2; tries++) {
		long fd = syscall(SYS_openat, AT_FDCWD, path, fl);
		*created = false;
		if (fd >= 0 || errno != ENOENT)
			return (int)fd;
		fd = syscall(SYS_openat, AT_FDCWD, path, fl | O_CREAT | O_EXCL, 0600);
		*created = true;
		if (fd >= 0 || errno != EEXIST)
			return (int)fd;
	}
	return -1;
}

int fdtab_open_append(const char *path, bool keep, const char *var, const char *then)
{
	char why[64];
	struct stat st;
	bool created;
	int fd = fdtab_open_own(path, &created);

	if (fd < 0) {
		int err = errno;
		if (err == ELOOP)
			zlog("%s %s is a symbolic link: %s", var, path, then);
		else if (err == ENXIO &&	/* a FIFO with no reader, a socket */
			 syscall(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
			zlog("%s %s %s: %s", var, path, fdtab_kind(st.st_mode), then);
		else
			zlog("%s %s cannot be %s (errno %d): %s", var, path, created ? "created" : "opened",
			     err, then);
		return -1;
	}
	fd = keep ? fdtab_keep(fd) : fdtab_move(fd);
	uid_t me = (uid_t)syscall(SYS_geteuid);
	if (syscall(SYS_fstat, fd, &st) != 0)
		log_snprintf(why, sizeof(why), "cannot be examined (errno %d)", errno);
	else if (!S_ISREG(st.st_mode))
		log_snprintf(why, sizeof(why), "%s", fdtab_kind(st.st_mode));
	else if (created)
		why[0] = '\0';	/* O_EXCL: made here, by this process */
	else if (st.st_uid != me)
		log_snprintf(why, sizeof(why), "is owned by uid %u, not %u", (unsigned)st.st_uid, (unsigned)me);
	else if (st.st_nlink != 1)
		log_snprintf(why, sizeof(why), "has %lu links", (unsigned long)st.st_nlink);
	else
		why[0] = '\0';
	if (why[0]) {
		zlog("%s %s %s: %s", var, path, why, then);
		if (keep)
			fdtab_close(fd);
		else
			fdtab_close_short(fd);
		return -1;
	}
	/* A regular file: writes to it never blocked; back to ordinary ones. */
	syscall(SYS_fcntl, fd, F_SETFL, O_APPEND);
	return fd;
}

long fdtab_read_file(const char *path, char *buf, size_t cap)
{
	int fd = fdtab_open_ro(path, false);
	long n;

	if (fd < 0 || !cap)
		return -1;
	do
		n = syscall(SYS_read, fd, buf, cap - 1);
	while (n < 0 && errno == EINTR);
	fdtab_close_short(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

void fdtab_close_short(int fd)
{
	if (fd >= 0)
		syscall(SYS_close, fd);
}

ZSWAP_STARTUP bool fdtab_is_ours(int fd)
{
	if (fd < 0)
		return false;
	for (int i = 0; i < FDTAB_SLOTS; i++)
		if (atomic_load_explicit(&fdtab_fds[i], memory_order_relaxed) == fd)
			return true;
	return false;
}

long fdtab_close_range(unsigned int first, unsigned int last, int flags)
{
	long rc = 0;

	while (first <= last) {
		/* The lowest of ours in [first, last]: close up to just before it. */
		unsigned int next = last;
		bool hit = false;
		for (int i = 0; i < FDTAB_SLOTS; i++) {
			int fd = atomic_load_explicit(&fdtab_fds[i], memory_order_relaxed);
			if (fd >= 0 && (unsigned int)fd >= first && (unsigned int)fd <= next) {
				next = (unsigned int)fd;
				hit = true;
			}
		}
		if (!hit || next > first) {
			long r = syscall(SYS_close_range, first, hit ? next - 1 : last, flags);
			if (r < 0 && !rc)
				rc = -errno;
		}
		if (!hit || next == last)
			break;
		first = next + 1;
	}
	return rc;
}

void fdtab_closefrom(unsigned int first)
{
	if (fdtab_close_range(first, UINT_MAX, 0) != -ENOSYS)
		return;
	rlim_t top = fdtab_nofile();
	for (rlim_t fd = first; fd < top && fd <= INT_MAX; fd++)
		if (!fdtab_is_ours((int)fd))
			syscall(SYS_close, (int)fd);
}

void fdtab_refused(int fd, const char *call)
{
	static _Atomic int said;

	if (!atomic_exchange(&said, 1))
		zlog("%s %d, a descriptor libzswap uses for its own work: refused (it keeps descriptors"
		     " from %d up)", call, fd, fdtab_start());
}
