/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_sock.c - reaching a process under libzswap through its
 * statistics socket, trusting nothing for its name.
 *
 * The library (src/observe/stats.c) listens on PID.sock in the first usable
 * of $XDG_RUNTIME_DIR/libzswap, /run/user/UID/libzswap, /run/libzswap
 * (root) and /tmp/libzswap-UID (or /tmp/libzswap-UID.XXXXXX when another
 * user took that name), each mode 0700, UID its effective uid. Any user
 * can make a directory of such a name in /tmp, or point XDG_RUNTIME_DIR
 * anywhere, and listen there under a victim's PID; so each directory is
 * opened once without following a symbolic link and judged through that
 * descriptor (a directory of the process's user or root, open to no one
 * else), the socket is reached through the descriptor, and the server must
 * be the process asked for (SO_PEERCRED). The answer is bounded in time
 * and size.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "zswapctl.h"

static void sock_append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void sock_append(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

bool zswapctl_proc_euid(long pid, uid_t *uid)
{
	char path[64], line[256];
	unsigned long r, e;
	bool found = false;

	/* Not the owner of /proc/PID: a process that changed credentials is
	 * not dumpable, and /proc/PID then belongs to root. */
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "Uid: %lu %lu", &r, &e) == 2;
	fclose(f);
	if (found)
		*uid = (uid_t)e;
	return found;
}

/* Open dir and keep it if it is one zswapctl may trust for user uid. */
static void sock_dir_add(struct zswapctl_dirs *ds, const char *path, uid_t uid)
{
	char dir[sizeof(ds->path[0]) * 4 + 1], whybuf[96];
	const char *why = NULL;
	struct stat sb;

	if (ds->n >= ZSWAPCTL_MAX_DIRS || strlen(path) >= sizeof(ds->path[0]))
		return;
	/* Messages name it escaped: a name in /tmp is anyone's to choose. */
	zswapctl_escape(path, strlen(path), dir);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM)
			ds->denied = true;
		else if (errno != ENOENT)
			sock_append(ds->notes, sizeof(ds->notes), "; %s: %s: skipped", dir, strerror(errno));
		return;
	}
	if (fstat(fd, &sb) != 0) {
		why = strerror(errno);
	} else if (!S_ISDIR(sb.st_mode)) {
		why = "not a directory";
	} else if (sb.st_uid != uid && sb.st_uid != 0) {
		snprintf(whybuf, sizeof(whybuf), "owned by user %lu, not %lu", (unsigned long)sb.st_uid,
			 (unsigned long)uid);
		why = whybuf;
	} else if (sb.st_mode & 077) {
		snprintf(whybuf, sizeof(whybuf), "mode %04o, open to others", (unsigned)(sb.st_mode & 07777));
		why = whybuf;
	}
	if (why) {
		sock_append(ds->notes, sizeof(ds->notes), "; %s: %s: skipped", dir, why);
		close(fd);
		return;
	}
	ds->fd[ds->n] = fd;
	snprintf(ds->path[ds->n], sizeof(ds->path[0]), "%.*s", (int)sizeof(ds->path[0]) - 1, dir);
	sock_append(ds->tried, sizeof(ds->tried), "%s%s", ds->n ? ", " : "", dir);
	ds->n++;
}

/* /tmp/libzswap-UID.*: the library's own when another user holds
 * /tmp/libzswap-UID. Any user may make one; the checks decide. */
static void sock_dirs_tmp(struct zswapctl_dirs *ds, uid_t uid, uid_t owner)
{
	char prefix[48], path[300];
	struct dirent *e;

	snprintf(prefix, sizeof(prefix), "libzswap-%lu.", (unsigned long)uid);
	DIR *d = opendir("/tmp");
	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
			sock_dir_add(ds, path, owner);
		}
	closedir(d);
}

/* The directories the library of a process of user uid may have chosen;
 * owner: whom they must belong to (or root). */
static void sock_dirs_of(struct zswapctl_dirs *ds, uid_t uid, uid_t owner)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char dir[512];

	/* Ours only: zswapctl cannot know another user's environment. */
	if (xdg && *xdg == '/' && uid == geteuid()) {
		snprintf(dir, sizeof(dir), "%s/libzswap", xdg);
		sock_dir_add(ds, dir, owner);
	}
	snprintf(dir, sizeof(dir), "/run/user/%lu/libzswap", (unsigned long)uid);
	sock_dir_add(ds, dir, owner);
	if (uid == 0)
		sock_dir_add(ds, "/run/libzswap", owner);
	snprintf(dir, sizeof(dir), "/tmp/libzswap-%lu", (unsigned long)uid);
	sock_dir_add(ds, dir, owner);
	sock_dirs_tmp(ds, uid, owner);
}

void zswapctl_dirs_open(struct zswapctl_dirs *ds, uid_t uid)
{
	memset(ds, 0, sizeof(*ds));
	sock_dirs_of(ds, uid, uid);
	/* A process started as root that changed user may have left its
	 * socket in root's directory: root looks there too. */
	if (uid != 0 && geteuid() == 0)
		sock_dirs_of(ds, 0, uid);
}

void zswapctl_dirs_close(struct zswapctl_dirs *ds)
{
	for (int i = 0; i < ds->n; i++)
		close(ds->fd[i]);
	ds->n = 0;
}

int zswapctl_dial(int dirfd, const char *name)
{
	struct sockaddr_un sa;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	/* Through the descriptor: the directory judged is the one used,
	 * whatever its path names now, and a long path fits sun_path. */
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd, name) >=
	    (int)sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* Non-blocking: a server that never accepts cannot hold connect. */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	int e = errno;
	close(fd);
	errno = e;
	return -1;
}

bool zswapctl_peer_ok(int fd, long pid, uid_t uid, struct ucred *cr)
{
	socklen_t len = sizeof(*cr);

	memset(cr, 0, sizeof(*cr));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &len) != 0)
		return false;
	/* root: a process that changed user keeps the socket root made. */
	return cr->pid == (pid_t)pid && (cr->uid == uid || cr->uid == 0);
}

/* Does /proc/PID/maps mention libzswap? 1 yes, 0 no, -1 unreadable (errno). */
static int sock_maps_libzswap(long pid)
{
	char path[64], line[1024];
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "libzswap") != NULL;
	fclose(f);
	return found;
}

/* No socket found: say why, with the directories skipped. */
static void sock_not_found(const struct zswapctl_cmd *cmd, long pid, uid_t uid,
			   const struct zswapctl_dirs *ds, bool denied)
{
	const char *tried = ds->tried[0] ? ds->tried : "no usable directory";
	int lib = sock_maps_libzswap(pid);
	int maps_errno = lib < 0 ? errno : 0;

	fprintf(stderr, "zswapctl: %s: ", cmd->name);
	if (!denied && uid == geteuid() && (maps_errno == EACCES || maps_errno == EPERM))
		/* Our own user, yet its maps are closed to us (a protected or
		 * non-dumpable process): say that, not "run as that user". */
		fprintf(stderr, "permission denied: cannot read /proc/%ld/maps (%s), and it offers no "
			"libzswap statistics socket in %s", pid, strerror(maps_errno), tried);
	else if (denied || maps_errno == EACCES || maps_errno == EPERM || uid != geteuid())
		fprintf(stderr, "permission denied: process %ld belongs to user %lu (run zswapctl as that "
			"user or as root)", pid, (unsigned long)uid);
	else if (lib == 1)
		fprintf(stderr, "process %ld has libzswap loaded but offers no statistics socket "
			"(not started yet: no memory limit and no memory call since ZSWAP_START_DELAY;"
			" or ZSWAP_STATS_SOCKET=0, ZSWAP_ENABLED=0, or no userfaultfd); looked in %s", pid, tried);
	else
		fprintf(stderr, "process %ld is not running libzswap (no socket in %s)", pid, tried);
	fprintf(stderr, "%s\n", ds->notes);
}

int zswapctl_connect(const struct zswapctl_cmd *cmd, long pid)
{
	struct zswapctl_dirs ds;
	char name[32];
	uid_t uid;

	if ((kill((pid_t)pid, 0) != 0 && errno == ESRCH) || !zswapctl_proc_euid(pid, &uid)) {
		fprintf(stderr, "zswapctl: %s: no such process: %ld\n", cmd->name, pid);
		return -1;
	}
	zswapctl_dirs_open(&ds, uid);
	snprintf(name, sizeof(name), "%ld.sock", pid);
	bool denied = ds.denied;
	for (int i = 0; i < ds.n; i++) {
		struct ucred cr;
		int fd = zswapctl_dial(ds.fd[i], name);

		if (fd < 0) {
			if (errno == EACCES || errno == EPERM)
				denied = true;
			else if (errno == EAGAIN)
				sock_append(ds.notes, sizeof(ds.notes), "; %s/%s: accepts no connection now",
					    ds.path[i], name);
			continue;
		}
		if (zswapctl_peer_ok(fd, pid, uid, &cr)) {
			zswapctl_dirs_close(&ds);
			return fd;
		}
		fprintf(stderr, "zswapctl: %s: the socket %s/%s is served by pid %ld of user %lu, not "
			"process %ld: refused\n", cmd->name, ds.path[i], name, (long)cr.pid,
			(unsigned long)cr.uid, pid);
		close(fd);
		zswapctl_dirs_close(&ds);
		return -1;
	}
	sock_not_found(cmd, pid, uid, &ds, denied);
	zswapctl_dirs_close(&ds);
	return -1;
}

static long long sock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for fd to be ready for events until the deadline: 1 ready, 0 the
 * deadline passed, -1 an error (errno). */
static int sock_wait(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - sock_now_ms();
		struct pollfd p = { .fd = fd, .events = events };

		if (left <= 0)
			return 0;
		int r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* Send req whole before the deadline: 1 sent, 0 late, -1 error. */
static int sock_send(int fd, const char *req, long long deadline)
{
	size_t len = strlen(req), off = 0;

	while (off < len) {
		int w = sock_wait(fd, POLLOUT, deadline);
		if (w <= 0)
			return w;
		ssize_t r = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -1;
		off += (size_t)r;
	}
	return 1;
}

char *zswapctl_request(const struct zswapctl_cmd *cmd, long pid, int fd, const char *req,
		       int timeout_s, size_t *len)
{
	long long deadline = sock_now_ms() + (long long)timeout_s * 1000;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	int w;

	if (!buf) {
		fprintf(stderr, "zswapctl: %s: out of memory\n", cmd->name);
		return NULL;
	}
	if ((w = sock_send(fd, req, deadline)) <= 0)
		goto fail;
	for (;;) {
		if (n + 1 >= cap) {
			/* Room for one byte past the cap: an answer of
			 * exactly the cap is taken, a longer one is not. */
			size_t ncap = cap * 2 > ZSWAPCTL_ANSWER_MAX + 2 ? ZSWAPCTL_ANSWER_MAX + 2 : cap * 2;
			char *p = realloc(buf, ncap);
			if (!p) {
				fprintf(stderr, "zswapctl: %s: out of memory\n", cmd->name);
				free(buf);
				return NULL;
			}
			buf = p;
			cap = ncap;
		}
		if ((w = sock_wait(fd, POLLIN, deadline)) <= 0)
			goto fail;
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			w = -1;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > ZSWAPCTL_ANSWER_MAX) {
			fprintf(stderr, "zswapctl: %s: process %ld's answer exceeds %u MiB: refused\n",
				cmd->name, pid, ZSWAPCTL_ANSWER_MAX >> 20);
			free(buf);
			return NULL;
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	if (w == 0)
		fprintf(stderr, "zswapctl: %s: process %ld did not answer within %d s\n", cmd->name, pid,
			timeout_s);
	else
		fprintf(stderr, "zswapctl: %s: talking to process %ld: %s\n", cmd->name, pid, strerror(errno));
	free(buf);
	return NULL;
}
