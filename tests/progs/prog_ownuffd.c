/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_ownuffd.c - a program that uses userfaultfd itself.
 *
 * The program maps 8 MiB (through the interposed mmap, so libzswap sees a
 * candidate region), registers it with its OWN userfaultfd in missing mode,
 * and serves the faults from its own handler thread with a known pattern.
 * libzswap must leave that range alone: the program's handler gets exactly
 * one fault per page touched, MADV_PAGEOUT and zswap_pageout over the range
 * store nothing, the contents stay what the program's handler supplied, and
 * the pages stay in place (reading them back raises no new fault for the
 * program's handler: nothing was moved out from under it), and the program
 * can unregister and close its descriptor normally. Then the program tries
 * to register a range libzswap has evicted: the kernel may accept or answer
 * EBUSY (another userfaultfd holds it); either way the data stays intact.
 *
 * usage: prog_ownuffd [--inactive-ok]
 */
#include "prog_common.h"

#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)	/* /dev/userfaultfd, Linux 6.1 */
#endif

#define NPAGES 2048UL
#define LEN (NPAGES * PC_PAGE)

static int uffd = -1;
static char *area;
static atomic_ulong own_faults;
static atomic_int stop;

static void *handler_main(void *arg)
{
	static unsigned char page[PC_PAGE];

	(void)arg;
	while (!atomic_load(&stop)) {
		struct pollfd pfd = { uffd, POLLIN, 0 };
		int n = poll(&pfd, 1, 50);
		if (n <= 0)
			continue;
		struct uffd_msg msg;
		ssize_t r = read(uffd, &msg, sizeof(msg));
		if (r != (ssize_t)sizeof(msg))
			continue;
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			pc_fail("own handler: unexpected event %u", msg.event);
		uintptr_t addr = (uintptr_t)msg.arg.pagefault.address & ~(PC_PAGE - 1);
		if (addr < (uintptr_t)area || addr >= (uintptr_t)area + LEN)
			pc_fail("own handler: a fault at %#lx, outside the program's range", (unsigned long)addr);
		pc_fill(page, PC_BINARY, pc_page_seed(5, (addr - (uintptr_t)area) / PC_PAGE));
		/* Counted before the copy wakes the faulting thread. */
		atomic_fetch_add(&own_faults, 1);
		struct uffdio_copy cp = { .dst = addr, .src = (uintptr_t)page, .len = PC_PAGE, .mode = 0 };
		if (ioctl(uffd, UFFDIO_COPY, &cp) != 0 && errno != EEXIST)
			pc_fail("own handler: UFFDIO_COPY: %s", strerror(errno));
	}
	return NULL;
}

static int open_uffd(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
		if (dev >= 0) {
			fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
			close(dev);
		}
	}
	if (fd < 0)
		pc_skip("userfaultfd is not available to this program: %s", strerror(errno));
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	if (ioctl(fd, UFFDIO_API, &api) != 0)
		pc_fail("UFFDIO_API: %s", strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	struct zswap_stats a, b;
	pthread_t h;

	pc_init("prog_ownuffd", &argc, argv);
	pc_info("mode %s", pc_mode_name());
	uffd = open_uffd();
	area = pc_map(LEN);
	struct uffdio_register reg = { .range = { (uintptr_t)area, LEN }, .mode = UFFDIO_REGISTER_MODE_MISSING };
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0)
		pc_fail("UFFDIO_REGISTER of a fresh mapping: %s (libzswap must not register memory it has not evicted)",
			strerror(errno));
	if (pthread_create(&h, NULL, handler_main, NULL) != 0)
		pc_fail("pthread_create");

	/* Touch every page: each one is a fault for the program's handler. */
	static unsigned char expect[PC_PAGE];
	for (size_t i = 0; i < NPAGES; i++) {
		pc_fill(expect, PC_BINARY, pc_page_seed(5, i));
		if (memcmp(area + i * PC_PAGE, expect, PC_PAGE) != 0)
			pc_fail("page %zu is not what the program's own handler supplied", i);
	}
	PC_CHECK(atomic_load(&own_faults) == NPAGES, "the program's handler served %lu faults for %lu pages",
		 atomic_load(&own_faults), NPAGES);

	/* Eviction requests over the program's range: libzswap stores nothing. */
	pc_stats(&a);
	int rc1 = pc_pageout(area, LEN);
	int rc2 = pc.pageout && pc_managed() ? pc.pageout(area, LEN) : 0;
	pc_stats(&b);
	pc_info("MADV_PAGEOUT %d, zswap_pageout %d (errno %d)", rc1, rc2, errno);
	if (pc_managed()) {
		PC_CHECK(b.evicted_pages == a.evicted_pages && b.stored_pages == a.stored_pages,
			 "libzswap evicted %" PRIu64 " pages of a range the program registered with its own userfaultfd",
			 b.evicted_pages - a.evicted_pages);
	}
	unsigned long before = atomic_load(&own_faults);
	pc_expect_range("the program's range after eviction requests", area, NPAGES, PC_BINARY, 5);
	PC_CHECK(atomic_load(&own_faults) == before,
		 "reading the range back after the eviction requests raised %lu faults in the program's own handler:"
		 " its pages were taken away", atomic_load(&own_faults) - before);

	/* The program's own ranges keep working: discard and refault. */
	if (madvise(area, LEN / 2, MADV_DONTNEED) != 0)
		pc_fail("madvise DONTNEED: %s", strerror(errno));
	before = atomic_load(&own_faults);
	pc_expect_range("the program's range after MADV_DONTNEED", area, NPAGES, PC_BINARY, 5);
	PC_CHECK(atomic_load(&own_faults) - before == NPAGES / 2,
		 "after MADV_DONTNEED of half the range the program's handler served %lu faults, expected %lu",
		 atomic_load(&own_faults) - before, NPAGES / 2);

	struct uffdio_range ur = { (uintptr_t)area, LEN };
	if (ioctl(uffd, UFFDIO_UNREGISTER, &ur) != 0)
		pc_fail("UFFDIO_UNREGISTER: %s", strerror(errno));
	atomic_store(&stop, 1);
	pthread_join(h, NULL);
	close(uffd);

	/* Unregistered, the range is ordinary memory: libzswap may manage it
	 * now or keep leaving it alone; either way the data stays. */
	pc_stats(&a);
	pc_pageout(area, LEN);
	pc_stats(&b);
	pc_info("after the program unregistered: %" PRIu64 " pages evicted", b.evicted_pages - a.evicted_pages);
	pc_expect_range("after the program unregistered", area, NPAGES, PC_BINARY, 5);

	/* A range libzswap has evicted, registered by the program: the kernel
	 * answers EBUSY when another userfaultfd holds it; whatever the answer,
	 * the data stays intact. */
	char *m = pc_map(LEN);
	pc_fill_range(m, NPAGES, PC_TEXT, 6);
	pc_evict("managed range", m, NPAGES, false);
	uffd = open_uffd();
	struct uffdio_register reg2 = { .range = { (uintptr_t)m, LEN }, .mode = UFFDIO_REGISTER_MODE_MISSING };
	int r = ioctl(uffd, UFFDIO_REGISTER, &reg2);
	pc_info("registering a range libzswap evicted: %s", r == 0 ? "accepted" : strerror(errno));
	if (r == 0) {
		/* The program now owns its faults; nothing to serve them here, so
		 * give the range back before touching it. */
		struct uffdio_range ur2 = { (uintptr_t)m, LEN };
		ioctl(uffd, UFFDIO_UNREGISTER, &ur2);
	}
	close(uffd);
	pc_expect_range("a managed range after the program tried to register it", m, NPAGES, PC_TEXT, 6);
	pc_expect_stored("ownuffd", 0);
	printf("ownuffd ok\n");
	return 0;
}
