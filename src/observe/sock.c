/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sock.c - the statistics socket's directory, its listening end and the
 * deadlines of a client (see sock.h).
 *
 * Where: PID.sock in the first of $XDG_RUNTIME_DIR/libzswap,
 * /run/user/UID/libzswap, /run/libzswap (root) and /tmp/libzswap-UID that
 * is private: made mode 0700 if missing, opened with O_NOFOLLOW, and then
 * checked on that descriptor (a directory, owned by the effective user, no
 * group or other bits). A candidate that is missing, not private or whose
 * socket cannot be bound gives way to the next. Another user can make
 * /tmp/libzswap-UID before the user's first process does; then the
 * library uses a /tmp/libzswap-UID.XXXXXX of its own (the same checks),
 * making one (six characters of [A-Za-z0-9]) when there is none. zswapctl
 * looks in /tmp/libzswap-UID and in every /tmp/libzswap-UID.* that passes
 * those checks.
 *
 * The directory's descriptor is kept for the socket's life: the bind goes
 * through /proc/self/fd/N/PID.sock (which is short whatever the directory's
 * path), the sweep reads it with getdents and the removals are unlinkat on
 * it. A directory renamed or replaced by a link after the check is not the
 * one used. Without /proc the path itself is used when it fits in sun_path
 * and still leads to the directory checked.
 */
#include "config.h"
#include "observe/sock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/fdtab.h"
#include "base/hist.h"
#include "base/log.h"

#define SOCK_DIR	"libzswap"
#define SOCK_TMP_TRIES	100	/* random names tried in /tmp before giving up */
#define SOCK_SUFFIX	6	/* characters of a /tmp/libzswap-UID.XXXXXX suffix */

static int sock_lfd = -1;		/* the listening socket, kept */
static int sock_dirfd = -1;		/* its directory, kept */
static long sock_pid;
static char sock_name[32];		/* PID.sock */
static char sock_full[SOCK_PATH_MAX + 32];

/* ---- directories ----------------------------------------------------------- */

/* Call fn on each entry of the directory at fd, from its start, until fn
 * returns true (then true). A bounded number of reads: a huge directory is
 * read in part. */
static bool sock_each_entry(int fd, bool (*fn)(int fd, const char *name, void *arg), void *arg)
{
	char buf[4096] __attribute__((aligned(8)));

	if (syscall(SYS_lseek, fd, 0L, SEEK_SET) < 0)
		return false;
	for (int rounds = 0; rounds < 64; rounds++) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n <= 0)
			return false;
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino, off, reclen, type, name */
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			const char *name = buf + off + 19;
			off += reclen;
			if (fn(fd, name, arg))
				return true;
		}
	}
	return false;
}

/* name in the directory at base, made mode 0700 first if make, opened
 * without following a link: a short-lived descriptor if it is a directory
 * of the effective user with no group or other bits, else -1. */
static int sock_dir_at(int base, const char *name, bool make)
{
	struct stat sb;

	if (make)
		syscall(SYS_mkdirat, base, name, 0700);
	int fd = fdtab_short((int)syscall(SYS_openat, base, name,
					  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0)
		return -1;
	if (syscall(SYS_fstat, fd, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    sb.st_uid == (uid_t)syscall(SYS_geteuid) && (sb.st_mode & 077) == 0)
		return fd;
	fdtab_close_short(fd);
	return -1;
}

/* Remove the sockets of processes that are gone (killed, or ended by
 * _exit, which runs no destructor): the directory would fill up otherwise.
 * A pid that is alive again under another program keeps its file; the next
 * process of that pid under libzswap replaces it. */
static bool sock_sweep_one(int fd, const char *name, void *arg)
{
	long pid = 0;
	const char *c = name;

	(void)arg;
	while (*c >= '0' && *c <= '9' && pid < 100000000)
		pid = pid * 10 + (*c++ - '0');
	if (pid > 0 && pid != sock_pid && strcmp(c, ".sock") == 0 &&
	    syscall(SYS_kill, pid, 0) != 0 && errno == ESRCH)
		syscall(SYS_unlinkat, fd, name, 0);
	return false;
}

/* ---- /tmp/libzswap-UID taken by another user ------------------------------ */

struct sock_find {
	const char *prefix;		/* "libzswap-UID." */
	size_t len;
	int fd;				/* out: the directory found */
	char *name;			/* out: its name */
	size_t cap;
};

static bool sock_find_own(int base, const char *name, void *arg)
{
	struct sock_find *f = arg;

	if (strncmp(name, f->prefix, f->len) != 0 || !name[f->len])
		return false;
	f->fd = sock_dir_at(base, name, false);
	if (f->fd < 0)
		return false;
	log_snprintf(f->name, f->cap, "%s", name);
	return true;
}

/* n characters of [A-Za-z0-9]: from getrandom, else from the clock. */
static void sock_random(char *out, size_t n)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[SOCK_SUFFIX];
	uint64_t x = hist_now() ^ ((uint64_t)syscall(SYS_getpid) << 32);

	if (n > sizeof(r))
		n = sizeof(r);
	if (syscall(SYS_getrandom, r, n, GRND_NONBLOCK) != (long)n)
		for (size_t i = 0; i < n; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			r[i] = (unsigned char)(x >> 56);
		}
	for (size_t i = 0; i < n; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[n] = '\0';
}

/* A new prefix+XXXXXX in the directory at base, mode 0700. */
static int sock_tmp_make(int base, const char *prefix, char *name, size_t cap)
{
	char sfx[SOCK_SUFFIX + 1];

	for (int i = 0; i < SOCK_TMP_TRIES; i++) {
		sock_random(sfx, SOCK_SUFFIX);
		log_snprintf(name, cap, "%s%s", prefix, sfx);
		if (syscall(SYS_mkdirat, base, name, 0700) == 0)
			return sock_dir_at(base, name, false);
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* /tmp/libzswap-UID if it is private, else a /tmp/libzswap-UID.* of ours,
 * else a new one. The directory's descriptor, its name in name. */
static int sock_tmp_dir(int tmp, char *name, size_t cap)
{
	unsigned long uid = (unsigned long)syscall(SYS_geteuid);
	char prefix[40];

	log_snprintf(name, cap, SOCK_DIR "-%lu", uid);
	int fd = sock_dir_at(tmp, name, true);
	if (fd >= 0)
		return fd;
	log_snprintf(prefix, sizeof(prefix), SOCK_DIR "-%lu.", uid);
	struct sock_find f = { prefix, strlen(prefix), -1, name, cap };
	if (sock_each_entry(tmp, sock_find_own, &f))
		return f.fd;
	return sock_tmp_make(tmp, prefix, name, cap);
}

/* ---- the socket ------------------------------------------------------------- */

/* Does path lead to the file *want describes? */
static bool sock_same(const char *path, const struct stat *want)
{
	struct stat sb;

	return syscall(SYS_newfstatat, AT_FDCWD, path, &sb, 0) == 0 && sb.st_dev == want->st_dev &&
	       sb.st_ino == want->st_ino;
}

/* Bind lfd to PID.sock in the directory at fd, whose path is dir. */
static int sock_bind(int lfd, int fd, const char *dir)
{
	struct sockaddr_un sa;
	struct stat want;
	char via[40];

	if (syscall(SYS_fstat, fd, &want) != 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	log_snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	if (sock_same(via, &want))
		log_snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", via, sock_name);
	else if (log_snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, sock_name) >=
		 sizeof(sa.sun_path) - 1)
		return -ENAMETOOLONG;
	else if (!sock_same(dir, &want))
		return -ESTALE;
	/* A socket of this pid that exists is a dead process's (or ours
	 * before an exec): replace it. */
	syscall(SYS_unlinkat, fd, sock_name, 0);
	return syscall(SYS_bind, lfd, &sa, sizeof(sa)) == 0 ? 0 : -errno;
}

/* The directory name under base (path and descriptor; fd -1: none usable):
 * swept, the socket bound in it, its descriptor kept. The descriptor is
 * consumed. */
static int sock_take(int lfd, const char *base, const char *name, int fd)
{
	char dir[SOCK_PATH_MAX];
	int rc;

	if (fd < 0)
		return -EACCES;
	if (log_snprintf(dir, sizeof(dir), "%s/%s", base, name) >= sizeof(dir) - 1) {
		rc = -ENAMETOOLONG;
	} else {
		sock_each_entry(fd, sock_sweep_one, NULL);
		rc = sock_bind(lfd, fd, dir);
	}
	if (rc < 0) {
		fdtab_close_short(fd);
		return rc;
	}
	sock_dirfd = fdtab_keep(fd);
	log_snprintf(sock_full, sizeof(sock_full), "%s/%s", dir, sock_name);
	return 0;
}

/* One candidate: base/name, or base's /tmp rule when name is NULL. */
static int sock_try(int lfd, const char *base, const char *name)
{
	char tmpname[48];
	int b = fdtab_short((int)syscall(SYS_openat, AT_FDCWD, base, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	int fd;

	if (b < 0)
		return -errno;
	if (name) {
		fd = sock_dir_at(b, name, true);
	} else {
		fd = sock_tmp_dir(b, tmpname, sizeof(tmpname));
		name = tmpname;
	}
	fdtab_close_short(b);
	return sock_take(lfd, base, name, fd);
}

int sock_open(const char *runtime_dir, long pid)
{
	unsigned long uid = (unsigned long)syscall(SYS_geteuid);
	char base[48];
	int rc = -EACCES;

	sock_close();
	sock_pid = pid;
	log_snprintf(sock_name, sizeof(sock_name), "%ld.sock", pid);
	int lfd = fdtab_keep((int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (lfd < 0)
		return -errno;
	if (runtime_dir[0])
		rc = sock_try(lfd, runtime_dir, SOCK_DIR);
	if (rc < 0) {
		log_snprintf(base, sizeof(base), "/run/user/%lu", uid);
		rc = sock_try(lfd, base, SOCK_DIR);
	}
	if (rc < 0 && uid == 0)
		rc = sock_try(lfd, "/run", SOCK_DIR);
	if (rc < 0)
		rc = sock_try(lfd, "/tmp", NULL);
	sock_lfd = lfd;
	if (rc == 0 && syscall(SYS_listen, lfd, 8) != 0)
		rc = -errno;
	if (rc < 0) {
		sock_remove();
		sock_close();
	}
	return rc;
}

int sock_listen_fd(void)
{
	return sock_lfd;
}

const char *sock_path(void)
{
	return sock_full;
}

void sock_remove(void)
{
	if (sock_full[0] && sock_dirfd >= 0)
		syscall(SYS_unlinkat, sock_dirfd, sock_name, 0);
	sock_full[0] = '\0';
}

void sock_close(void)
{
	fdtab_close(sock_lfd);
	fdtab_close(sock_dirfd);
	sock_lfd = sock_dirfd = -1;
	sock_full[0] = '\0';
}

/* ---- a client ----------------------------------------------------------------- */

int sock_accept(void)
{
	if (sock_lfd < 0)
		return -1;
	return fdtab_short((int)syscall(SYS_accept4, sock_lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK));
}

/* Wait until c is ready for events or deadline (monotonic ns) passes:
 * false when the time is up or the wait failed. */
static bool sock_wait(int c, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = hist_now();
		if (now >= deadline)
			return false;
		struct pollfd p = { .fd = c, .events = events };
		int r = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
		if (r > 0)
			return true;
		if (r == 0 || errno != EINTR)
			return false;
	}
}

long sock_read_request(int c, char *req, size_t cap)
{
	uint64_t deadline = hist_now() + (uint64_t)SOCK_REQ_WAIT_MS * 1000000u;
	size_t n = 0;

	while (n + 1 < cap && !memchr(req, '\n', n)) {
		long r = syscall(SYS_read, c, req + n, cap - 1 - n);
		if (r > 0) {
			n += (size_t)r;
			continue;
		}
		if (r == 0)
			break;		/* the client has said all it will */
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			break;
		if (!sock_wait(c, POLLIN, deadline))
			return -1;
	}
	req[n] = '\0';
	return (long)n;
}

int sock_send(int c, const char *buf, size_t len)
{
	uint64_t deadline = hist_now() + (uint64_t)SOCK_SEND_WAIT_MS * 1000000u;

	while (len) {
		long r = syscall(SYS_sendto, c, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
		if (r > 0) {
			buf += r;
			len -= (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || errno != EAGAIN || !sock_wait(c, POLLOUT, deadline))
			return -1;
	}
	return 0;
}
