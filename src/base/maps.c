/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * maps.c - the library's reader of /proc files and parser of
 * /proc/self/maps.
 *
 * Lines look like
 *   7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0          [heap]
 * A file is read in chunks into a library buffer; a line split across two
 * chunks is carried over. Only what adoption and attribution need is
 * parsed.
 *
 * One mapping by address (maps_find, maps_range_anon_rw) is asked of the
 * kernel with PROCMAP_QUERY (6.11) where it has it: reading the whole file
 * for each costs in proportion to the mappings, and a program with
 * hundreds (V8 maps its heap in 256 KiB pieces) had the reclaimer spend
 * most of its time in the kernel's formatting of the file and our parsing
 * of it, once for every mapping it looked at.
 */
#include "config.h"
#include "base/maps.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/fdtab.h"
#include "base/layout.h"
#include "base/prim.h"

#define MAPS_BUF 65536

static char *maps_buf;
static pthread_mutex_t maps_lock ZSWAP_STARTUP_DATA = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool maps_no_query;	/* the kernel has no PROCMAP_QUERY */

int maps_init(void)
{
	maps_buf = prim_alloc(MAPS_BUF);
	return maps_buf ? 0 : -ENOMEM;
}

static const char *maps_hex(const char *p, const char *end, uintptr_t *v)
{
	uintptr_t x = 0;

	while (p < end) {
		char c = *p;
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			break;
		x = (x << 4) | d;
		p++;
	}
	*v = x;
	return p;
}

/* What a mapping is, from its permissions (perm: "rwxp"), whether it has
 * no file (device and inode zero) and its name (path_len bytes at path). */
static void maps_classify(struct maps_vma *v, const char *perm, bool no_file, const char *path, size_t plen)
{
	bool rw_private = perm[0] == 'r' && perm[1] == 'w' && perm[3] == 'p';

	v->path = path;
	v->path_len = plen;
	v->heap = plen == 6 && memcmp(path, "[heap]", 6) == 0;
	bool named_anon = plen > 6 && memcmp(path, "[anon:", 6) == 0;
	v->special = plen > 2 && path[0] == '[' && path[1] == 'v';
	v->anon_rw_private = rw_private && no_file && (plen == 0 || v->heap || named_anon);
	v->file_ro_private = !no_file && perm[1] != 'w' && perm[3] == 'p';
	v->shared = perm[3] == 's';
	v->file = !no_file;
	v->writable = perm[1] == 'w';
}

/* Parse one line [p, end). Returns false if it is malformed. */
static bool maps_parse_line(const char *p, const char *end, struct maps_vma *v)
{
	const char *perm, *q;
	int field = 0;

	p = maps_hex(p, end, &v->start);
	if (p >= end || *p != '-')
		return false;
	p = maps_hex(p + 1, end, &v->end);
	if (p >= end || *p != ' ')
		return false;
	perm = ++p;
	if (end - perm < 4)
		return false;
	/* Skip perms, offset, dev, inode: the path (if any) follows. */
	bool inode_zero = true, dev_zero = true;
	uintptr_t off = 0;
	q = p;
	while (q < end && field < 4) {
		const char *f = q;
		while (q < end && *q != ' ')
			q++;
		if (field == 1)
			maps_hex(f, q, &off);
		if (field == 2)
			dev_zero = (q - f == 5 && memcmp(f, "00:00", 5) == 0);
		if (field == 3)
			inode_zero = (q - f == 1 && *f == '0');
		field++;
		while (q < end && *q == ' ')
			q++;
	}
	maps_classify(v, perm, dev_zero && inode_zero, q,
		      (size_t)(end - q));
	v->offset = off;
	return true;
}

/* The mapping at addr (or, with next, the first one after it) by
 * PROCMAP_QUERY on fd: 0, -ENOENT (none), or -ENOSYS (no such ioctl: read
 * the file). The name is not returned: v->path is "". */
static int maps_query(int fd, uintptr_t addr, bool next, struct maps_vma *v)
{
	char name[256];
	struct procmap_query q;

	for (int named = 1; named >= 0; named--) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = next ? PROCMAP_QUERY_COVERING_OR_NEXT_VMA : 0;
		q.query_addr = addr;
		q.vma_name_size = named ? sizeof(name) : 0;
		q.vma_name_addr = named ? (uintptr_t)name : 0;
		if (syscall(SYS_ioctl, fd, PROCMAP_QUERY, &q) == 0)
			break;
		if (errno == ENAMETOOLONG && named)
			continue;	/* a long file path: not anonymous memory */
		if (errno == ENOENT)
			return -ENOENT;
		if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP)
			atomic_store_explicit(&maps_no_query, true, memory_order_relaxed);
		return -ENOSYS;
	}
	size_t plen = q.vma_name_size ? q.vma_name_size - 1 : 0;	/* its NUL counted */
	if (plen > sizeof(name) - 1)
		plen = 0;
	char perm[4] = {
		q.vma_flags & PROCMAP_QUERY_VMA_READABLE ? 'r' : '-',
		q.vma_flags & PROCMAP_QUERY_VMA_WRITABLE ? 'w' : '-',
		q.vma_flags & PROCMAP_QUERY_VMA_EXECUTABLE ? 'x' : '-',
		q.vma_flags & PROCMAP_QUERY_VMA_SHARED ? 's' : 'p',
	};
	maps_classify(v, perm, !q.inode && !q.dev_major && !q.dev_minor, q.vma_name_size ? name : "", plen);
	v->path = "";
	v->path_len = 0;
	v->start = (uintptr_t)q.vma_start;
	v->end = (uintptr_t)q.vma_end;
	v->offset = q.vma_offset;
	return 0;
}

static int maps_query_fd(void)
{
	if (atomic_load_explicit(&maps_no_query, memory_order_relaxed))
		return -1;
	return fdtab_open_ro("/proc/self/maps", false);
}

int maps_read_lines(const char *path, char *buf, size_t cap, int (*line)(char *l, void *arg), void *arg)
{
	/* Moved up at once (src/base/fdtab.h): the program may dup2 onto a low
	 * number meanwhile. */
	int fd = fdtab_open_ro(path, false);
	size_t have = 0;
	int rc = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		long n = syscall(SYS_read, fd, buf + have, cap - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *p = buf, *nl;
		while ((nl = memchr(p, '\n', (size_t)(buf + have - p)))) {
			*nl = '\0';
			if ((rc = line(p, arg)) != 0)
				goto out;
			p = nl + 1;
		}
		have = (size_t)(buf + have - p);
		memmove(buf, p, have);
		if (have >= cap - 1)
			have = 0;	/* a line longer than the buffer: dropped */
	}
out:
	fdtab_close_short(fd);
	return rc;
}

struct maps_walk_arg {
	int (*fn)(const struct maps_vma *, void *);
	void *arg;
};

static int maps_walk_line(char *l, void *arg)
{
	struct maps_walk_arg *w = arg;
	struct maps_vma v;

	return maps_parse_line(l, l + strlen(l), &v) ? w->fn(&v, w->arg) : 0;
}

/*
 * Walk the mappings in address order; fn returns 0 to go on, else stops the
 * walk and that value is returned. Returns -ENOENT when fn never stopped it.
 */
static int maps_walk(int (*fn)(const struct maps_vma *, void *), void *arg)
{
	struct maps_walk_arg w = { fn, arg };
	int rc = maps_read_lines("/proc/self/maps", maps_buf, MAPS_BUF, maps_walk_line, &w);

	return rc ? rc : -ENOENT;
}

size_t maps_read(char *buf, size_t cap)
{
	int fd = fdtab_open_ro("/proc/self/maps", false);
	size_t n = 0;

	if (fd < 0 || !cap)
		return 0;
	while (n + 1 < cap) {
		long r = syscall(SYS_read, fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	fdtab_close_short(fd);
	buf[n] = '\0';
	return n;
}

int maps_scan(const char *text, int (*fn)(const struct maps_vma *, void *), void *arg)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		struct maps_vma v;
		if (maps_parse_line(p, end, &v)) {
			int r = fn(&v, arg);
			if (r)
				return r;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

struct maps_find_arg {
	uintptr_t addr;
	struct maps_vma *out;
};

static int maps_find_fn(const struct maps_vma *v, void *arg)
{
	struct maps_find_arg *a = arg;

	if (v->end <= a->addr)
		return 0;
	if (v->start > a->addr) {
		a->out->end = v->start;
		return -ENOENT;
	}
	*a->out = *v;
	return 1;
}

int maps_find(uintptr_t addr, struct maps_vma *vma)
{
	struct maps_find_arg a = { addr, vma };
	int rc, fd = maps_query_fd();

	memset(vma, 0, sizeof(*vma));
	vma->end = UINTPTR_MAX;
	if (fd >= 0) {
		struct maps_vma v;
		rc = maps_query(fd, addr, true, &v);
		fdtab_close_short(fd);
		if (rc == 0 && v.start > addr) {
			vma->end = v.start;
			return -ENOENT;
		}
		if (rc == 0)
			*vma = v;
		if (rc != -ENOSYS)
			return rc;
	}
	pthread_mutex_lock(&maps_lock);
	rc = maps_walk(maps_find_fn, &a);
	pthread_mutex_unlock(&maps_lock);
	return rc == 1 ? 0 : rc;
}

struct maps_range_arg {
	uintptr_t cur, end;
};

static int maps_range_fn(const struct maps_vma *v, void *arg)
{
	struct maps_range_arg *a = arg;

	if (v->end <= a->cur)
		return 0;
	if (v->start > a->cur || !v->anon_rw_private)
		return -EINVAL;
	a->cur = v->end;
	return a->cur >= a->end ? 1 : 0;
}

bool maps_range_anon_rw(uintptr_t start, uintptr_t end)
{
	struct maps_range_arg a = { start, end };
	int rc, fd = maps_query_fd();

	if (fd >= 0) {
		struct maps_vma v;
		uintptr_t cur = start;
		rc = 0;
		while (cur < end && (rc = maps_query(fd, cur, false, &v)) == 0 && v.anon_rw_private)
			cur = v.end;
		fdtab_close_short(fd);
		if (rc != -ENOSYS)
			return cur >= end;
	}
	pthread_mutex_lock(&maps_lock);
	rc = maps_walk(maps_range_fn, &a);
	pthread_mutex_unlock(&maps_lock);
	return rc == 1;
}

int maps_for_each(int (*fn)(const struct maps_vma *vma, void *arg), void *arg)
{
	int rc;

	pthread_mutex_lock(&maps_lock);
	rc = maps_walk(fn, arg);
	pthread_mutex_unlock(&maps_lock);
	return rc == -ENOENT ? 0 : rc;
}

ZSWAP_STARTUP void maps_fork_child(void)
{
	/* A thread of the parent may have held it at fork. */
	const pthread_mutex_t init = PTHREAD_MUTEX_INITIALIZER;	/* on the stack (layout.h) */

	prim_reset(&maps_lock, &init, sizeof(init));
}
