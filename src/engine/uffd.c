/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uffd.c - opening, negotiating and driving a userfaultfd.
 *
 * Kept free of engine state so every call can be reasoned about alone: each
 * is one system call whose result is translated into bytes-done-or-errno.
 */
#include "config.h"
#include "engine/uffd.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fdtab.h"

static int uf_raw_open(struct uf_info *info)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0)
		return (int)fd;
	int e1 = errno;
	/* /dev/userfaultfd (6.1+) gives full userfaultfd to whoever may open it,
	 * whatever vm.unprivileged_userfaultfd says. */
	int dev = (int)syscall(SYS_openat, AT_FDCWD, "/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev >= 0) {
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		int e2 = errno;
		fdtab_close_short(dev);
		if (fd >= 0)
			return (int)fd;
		errno = e2;
	}
	int e2 = errno;
	info->err = e1;
	if (e1 == ENOSYS) {
		info->cause = "the kernel has no userfaultfd (or a seccomp filter forbids it)";
		info->fix = "run on a kernel built with CONFIG_USERFAULTFD, outside a seccomp filter that blocks it";
	} else if (e1 == EPERM || e1 == EACCES) {
		info->cause = "userfaultfd is not permitted to this process";
		info->fix = "sysctl vm.unprivileged_userfaultfd=1, or give the program CAP_SYS_PTRACE, "
			    "or read/write access to /dev/userfaultfd";
		if (e2 != ENOENT)
			info->err = e2;
	} else {
		info->cause = "userfaultfd could not be opened";
		info->fix = "check the process's limits on open files";
	}
	return -1;
}

int uf_open(struct uf_info *info)
{
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	int fd;

	info->features = 0;
	info->cause = info->fix = NULL;
	info->err = 0;

	/* A first descriptor asks what the kernel offers: UFFDIO_API may be
	 * called once per descriptor, and asking for an unknown feature fails. */
	fd = uf_raw_open(info);
	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		info->err = errno;
		info->cause = "UFFDIO_API failed";
		info->fix = "use a kernel of version 6.8 or later";
		fdtab_close_short(fd);
		return -1;
	}
	fdtab_close_short(fd);
	uint64_t offered = api.features;
	if ((offered & UF_REQUIRED_FEATURES) != UF_REQUIRED_FEATURES) {
		info->err = ENOTSUP;
		info->cause = (offered & UFFD_FEATURE_MOVE) ? "the kernel's userfaultfd lacks the UNMAP/REMAP/REMOVE events"
							    : "the kernel's userfaultfd lacks UFFDIO_MOVE (Linux 6.8)";
		info->fix = "use a kernel of version 6.8 or later";
		return -1;
	}

	uint64_t want = UF_REQUIRED_FEATURES | (offered & UF_OPTIONAL_FEATURES);
	for (;;) {
		fd = uf_raw_open(info);
		if (fd < 0)
			return -1;
		api.api = UFFD_API;
		api.features = want;
		api.ioctls = 0;
		if (ioctl(fd, UFFDIO_API, &api) == 0)
			break;
		int err = errno;
		fdtab_close_short(fd);
		/* The kernel offers fork events to everyone but grants them only
		 * with CAP_SYS_PTRACE (a user given /dev/userfaultfd or the
		 * sysctl has not got it): go on without them, as on a kernel
		 * that has none (fork then loads evicted pages back first). */
		if (err == EPERM && (want & UFFD_FEATURE_EVENT_FORK)) {
			want &= ~(uint64_t)UFFD_FEATURE_EVENT_FORK;
			continue;
		}
		info->err = err;
		info->cause = "UFFDIO_API refused the features it offered";
		info->fix = "report this kernel version";
		return -1;
	}
	/* On success the kernel reports every feature it supports, not the
	 * ones this descriptor has: what was asked for is what was granted. */
	info->features = want & api.features;
	return fd;
}

static _Atomic bool uf_any;

bool uf_registered_any(void)
{
	return atomic_load(&uf_any);
}

void uf_registered_reset(void)
{
	atomic_store(&uf_any, false);
}

int uf_register(int fd, uintptr_t start, size_t len, int mode)
{
	struct uffdio_register r = {
		.range = { .start = start, .len = len },
		.mode = mode == UF_REG_WP ? UFFDIO_REGISTER_MODE_WP
		      : mode == UF_REG_MISSING_WP ? UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP
						  : UFFDIO_REGISTER_MODE_MISSING,
	};

	atomic_store(&uf_any, true);
	return ioctl(fd, UFFDIO_REGISTER, &r) < 0 ? -errno : 0;
}

int uf_unregister(int fd, uintptr_t start, size_t len)
{
	struct uffdio_range r = { .start = start, .len = len };

	return ioctl(fd, UFFDIO_UNREGISTER, &r) < 0 ? -errno : 0;
}

/* The kernel's convention for the mfill-style ioctls: on failure, a positive
 * count in the result field is partial progress (reported as EAGAIN). */
static long uf_result(int rc, int64_t field)
{
	if (rc == 0)
		return (long)field;
	if (field > 0)
		return (long)field;
	return field < 0 ? (long)field : -(long)errno;
}

long uf_copy(int fd, uintptr_t dst, const void *src, size_t len, int flags)
{
	struct uffdio_copy c = {
		.dst = dst, .src = (uintptr_t)src, .len = len,
		.mode = (flags & UF_DONTWAKE) ? UFFDIO_COPY_MODE_DONTWAKE : 0,
	};
	int rc = ioctl(fd, UFFDIO_COPY, &c);

	return uf_result(rc, c.copy);
}

long uf_zeropage(int fd, uintptr_t dst, size_t len, int flags)
{
	struct uffdio_zeropage z = {
		.range = { .start = dst, .len = len },
		.mode = (flags & UF_DONTWAKE) ? UFFDIO_ZEROPAGE_MODE_DONTWAKE : 0,
	};
	int rc = ioctl(fd, UFFDIO_ZEROPAGE, &z);

	return uf_result(rc, z.zeropage);
}

long uf_poison(int fd, uintptr_t dst, size_t len, int flags)
{
	struct uffdio_poison p = {
		.range = { .start = dst, .len = len },
		.mode = (flags & UF_DONTWAKE) ? UFFDIO_POISON_MODE_DONTWAKE : 0,
	};
	int rc = ioctl(fd, UFFDIO_POISON, &p);

	return uf_result(rc, p.updated);
}

long uf_move(int fd, uintptr_t dst, uintptr_t src, size_t len, int flags)
{
	struct uffdio_move m = {
		.dst = dst, .src = src, .len = len,
		.mode = (flags & UF_DONTWAKE) ? UFFDIO_MOVE_MODE_DONTWAKE : 0,
	};
	int rc = ioctl(fd, UFFDIO_MOVE, &m);

	return uf_result(rc, m.move);
}

int uf_wake(int fd, uintptr_t start, size_t len)
{
	struct uffdio_range r = { .start = start, .len = len };

	return ioctl(fd, UFFDIO_WAKE, &r) < 0 ? -errno : 0;
}
