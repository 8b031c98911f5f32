/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_uffd.so - preloaded before libzswap (tests/engine/test_eng_uffd.sh):
 * a kernel whose userfaultfd offers fewer features, for the library's
 * negotiation (src/engine/uffd.c) to meet.
 *
 * Its ioctl() passes every request to the kernel unchanged but UFFDIO_API,
 * which it answers as a kernel without the features PROG_UFFD_HIDE names
 * (a number, 0x for hex) would: they are not in the features offered, and
 * a descriptor that asks for one is refused with EINVAL, as the kernel
 * refuses a feature it does not know. A request for a feature PROG_UFFD_EPERM
 * names is refused with EPERM, as EVENT_FORK is without CAP_SYS_PTRACE.
 * Each UFFDIO_API is reported on stderr as
 * "prog_uffd: api asked=0xA offered=0xO rc=R" (offered: the features the
 * answer holds, 0 when refused).
 *
 * It runs in the library's constructor and on its fault path: no malloc,
 * no stdio, nothing bound lazily (linked with -z now).
 */
#include "config.h"

#include <errno.h>
#include <linux/userfaultfd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t prog_uffd_env(const char *name)
{
	const char *v = getenv(name);

	return v ? strtoull(v, NULL, 0) : 0;
}

static void prog_uffd_report(uint64_t asked, uint64_t offered, int rc)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "prog_uffd: api asked=0x%llx offered=0x%llx rc=%d\n",
			 (unsigned long long)asked, (unsigned long long)offered, rc);

	if (n > 0 && (size_t)n < sizeof(line))
		(void)!write(2, line, (size_t)n);
}

static int prog_uffd_api(int fd, struct uffdio_api *api)
{
	uint64_t hide = prog_uffd_env("PROG_UFFD_HIDE");
	uint64_t eperm = prog_uffd_env("PROG_UFFD_EPERM");
	uint64_t asked = api->features;
	int err = 0;

	if (asked & hide)
		err = EINVAL;
	else if (asked & eperm)
		err = EPERM;
	else if (syscall(SYS_ioctl, fd, UFFDIO_API, api) < 0)
		err = errno;
	if (err) {
		prog_uffd_report(asked, 0, -err);
		errno = err;
		return -1;
	}
	api->features &= ~hide;
	prog_uffd_report(asked, api->features, 0);
	return 0;
}

/* Visible: the build hides symbols by default, and this one must win over
 * the C library's for every object loaded after it. */
__attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;

	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (request == UFFDIO_API)
		return prog_uffd_api(fd, arg);
	return (int)syscall(SYS_ioctl, fd, request, arg);
}
