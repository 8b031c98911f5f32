/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_uffd_rtt.c - the raw userfaultfd round trip on this machine: the floor
 * under any fault the preload engine serves.
 *
 * One thread touches pages of a range registered for missing faults, one page
 * at a time; a handler thread reads each fault message and resolves it with
 * UFFDIO_COPY (or UFFDIO_ZEROPAGE) of a prepared page, nothing else: no
 * lookup, no decompression. The faulting thread times each first touch.
 *
 * Handler modes (MEASURED.md: on this VM the cross-CPU wake-up dominates):
 *   block   the handler sleeps in read(2) on a blocking userfaultfd
 *   spin    the handler busy-polls a non-blocking userfaultfd
 * Placements (sched_setaffinity): both threads on one CPU, or on two.
 * A baseline line gives the kernel's own anonymous first-touch fault, no
 * userfaultfd involved.
 *
 * Output: one "RESULT bench=uffd_rtt ..." line per combination. Exits 77
 * with the reason when userfaultfd is not available here.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/compat.h"
#include "bench_util.h"

enum handler_mode { H_BLOCK, H_SPIN };
enum resolve_mode { R_COPY, R_ZEROPAGE };

struct rtt {
	int uffd;
	enum handler_mode hmode;
	enum resolve_mode rmode;
	int cpu;			/* handler's CPU */
	char *src;			/* the page UFFDIO_COPY copies */
	uint32_t *resolve_ns;		/* per fault: time inside the resolving ioctl */
	size_t cap;
	atomic_size_t served;
	atomic_int stop;
	int error;			/* first errno the handler met, 0 if none */
};

#define WARMUP 256

static int uffd_open(int nonblock)
{
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	int fd;

	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
	if (fd < 0 && (errno == EPERM || errno == ENOSYS)) {
		/* /dev/userfaultfd serves users the sysctl does not let in. */
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

		if (dev >= 0) {
			fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
			close(dev);
		}
	}
	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Resolve one missing fault at addr, recording how long the ioctl took. */
static int resolve(struct rtt *r, uint64_t addr)
{
	uint64_t page = addr & ~(uint64_t)(BENCH_PAGE - 1);
	uint64_t t0 = bench_now_ns();
	int rc;

	if (r->rmode == R_COPY) {
		struct uffdio_copy c = {
			.dst = page, .src = (uint64_t)(uintptr_t)r->src, .len = BENCH_PAGE,
		};
		rc = ioctl(r->uffd, UFFDIO_COPY, &c);
	} else {
		struct uffdio_zeropage z = { .range = { .start = page, .len = BENCH_PAGE } };
		rc = ioctl(r->uffd, UFFDIO_ZEROPAGE, &z);
	}
	if (rc != 0 && errno != EEXIST)
		return -1;
	size_t n = atomic_load_explicit(&r->served, memory_order_relaxed);
	if (n < r->cap)
		r->resolve_ns[n] = (uint32_t)(bench_now_ns() - t0);
	atomic_store_explicit(&r->served, n + 1, memory_order_relaxed);
	return 0;
}

static void *handler(void *arg)
{
	struct rtt *r = arg;
	struct uffd_msg msg;

	bench_pin(r->cpu);
	while (!atomic_load_explicit(&r->stop, memory_order_acquire)) {
		ssize_t n = read(r->uffd, &msg, sizeof(msg));

		if (n < 0) {
			if (errno == EAGAIN) {
				__builtin_ia32_pause();
				continue;
			}
			if (errno == EINTR)
				continue;
			r->error = errno;
			break;
		}
		if (n != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		if (resolve(r, msg.arg.pagefault.address) != 0) {
			r->error = errno;
			break;
		}
	}
	return NULL;
}

static char *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bench_die("mmap: %s", strerror(errno));
	return p;
}

/* Involuntary context switches of the calling thread: preemption by other
 * work on this 2-CPU machine shows up here. */
static long nivcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

/* Touch every page of map in order; per-page latencies after the warm-up.
 * Returns the faulting thread's involuntary context switches meanwhile. */
static long touch_pages(char *map, size_t npages, uint32_t *lat)
{
	long cs0 = nivcsw();

	for (size_t i = 0; i < npages; i++) {
		volatile char *p = map + i * BENCH_PAGE;
		uint64_t a = bench_now_ns();

		(void)*p;
		uint64_t d = bench_now_ns() - a;
		if (i >= WARMUP)
			lat[i - WARMUP] = (uint32_t)d;
	}
	return nivcsw() - cs0;
}

static void print_pct(const char *what, uint32_t *lat, size_t n)
{
	struct bench_pct p;

	bench_percentiles(lat, n, &p);
	printf(" %sp50_us=%.2f %sp90_us=%.2f %sp99_us=%.2f %smean_us=%.2f",
	       what, p.p50, what, p.p90, what, p.p99, what, p.mean);
}

static void run_baseline(size_t npages, int fault_cpu)
{
	uint32_t *lat = calloc(npages, sizeof(*lat));
	char *map = map_anon(npages * BENCH_PAGE);

	if (!lat)
		bench_die("out of memory");
	bench_pin(fault_cpu);
	long cs = touch_pages(map, npages, lat);
	printf("RESULT bench=uffd_rtt handler=none placement=- resolve=kernel-anon-fault fault_cpu=%d"
	       " faults=%zu", fault_cpu, npages - WARMUP);
	print_pct("", lat, npages - WARMUP);
	printf(" nivcsw=%ld\n", cs);
	fflush(stdout);
	munmap(map, npages * BENCH_PAGE);
	free(lat);
}

static int run_one(size_t npages, enum handler_mode hm, int fault_cpu, int handler_cpu,
		   enum resolve_mode rm)
{
	struct rtt r = { .hmode = hm, .rmode = rm, .cpu = handler_cpu, .cap = npages };
	uint32_t *lat = calloc(npages, sizeof(*lat));
	size_t len = npages * BENCH_PAGE;
	pthread_t th;
	char *map;
	int err;

	r.resolve_ns = calloc(npages, sizeof(*r.resolve_ns));
	r.src = map_anon(BENCH_PAGE);
	if (!lat || !r.resolve_ns)
		bench_die("out of memory");
	memset(r.src, 'a', BENCH_PAGE);
	r.uffd = uffd_open(hm == H_SPIN);
	if (r.uffd < 0) {
		fprintf(stderr, "bench_uffd_rtt: userfaultfd unavailable here: %s "
			"(root, vm.unprivileged_userfaultfd=1 or /dev/userfaultfd access)\n",
			strerror(errno));
		exit(77);
	}
	map = map_anon(len);
	struct uffdio_register reg = {
		.range = { .start = (uint64_t)(uintptr_t)map, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	if (ioctl(r.uffd, UFFDIO_REGISTER, &reg) != 0)
		bench_die("UFFDIO_REGISTER: %s", strerror(errno));

	bench_pin(fault_cpu);
	err = pthread_create(&th, NULL, handler, &r);
	if (err)
		bench_die("pthread_create: %s", strerror(err));
	long cs = touch_pages(map, npages, lat);

	atomic_store_explicit(&r.stop, 1, memory_order_release);
	/* A blocked handler sleeps in read(): a cancellation point. */
	if (hm == H_BLOCK)
		pthread_cancel(th);
	pthread_join(th, NULL);
	if (r.error)
		bench_die("handler: %s", strerror(r.error));

	printf("RESULT bench=uffd_rtt handler=%s placement=%s resolve=%s fault_cpu=%d handler_cpu=%d"
	       " faults=%zu", hm == H_BLOCK ? "block" : "spin",
	       fault_cpu == handler_cpu ? "same-cpu" : "other-cpu",
	       rm == R_COPY ? "UFFDIO_COPY" : "UFFDIO_ZEROPAGE", fault_cpu, handler_cpu,
	       npages - WARMUP);
	print_pct("", lat, npages - WARMUP);
	size_t served = atomic_load(&r.served);
	print_pct("ioctl_", r.resolve_ns + WARMUP, served > WARMUP ? served - WARMUP : 0);
	printf(" nivcsw=%ld\n", cs);
	fflush(stdout);

	close(r.uffd);
	munmap(map, len);
	munmap(r.src, BENCH_PAGE);
	free(r.resolve_ns);
	free(lat);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_uffd_rtt [--pages N] [--handler block|spin|all]\n"
		"                      [--placement same|other|all] [--resolve copy|zeropage]\n"
		"                      [--fault-cpu C] [--other-cpu C]\n"
		"Defaults: 16384 pages, every handler mode and placement, UFFDIO_COPY,\n"
		"faulting thread on CPU 0, the other CPU 1.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const char *const resolve_names[] = { "copy", "zeropage", NULL };
	size_t npages = 16384;
	const char *hsel = "all", *psel = "all";
	enum resolve_mode rm = R_COPY;
	int fcpu = 0, ocpu = 1;
	const struct bench_arg args[] = {
		BENCH_UINT("pages", npages, WARMUP + 1, 1L << 24),
		BENCH_TEXT("handler", hsel),
		BENCH_TEXT("placement", psel),
		BENCH_CHOICE("resolve", rm, resolve_names),
		BENCH_UINT("fault-cpu", fcpu, 0, 4095),
		BENCH_UINT("other-cpu", ocpu, 0, 4095),
		BENCH_ARGS_END,
	};

	if (bench_args(argc, argv, 1, args, usage) != argc)
		usage();
	if (strcmp(hsel, "all") && strcmp(hsel, "block") && strcmp(hsel, "spin"))
		usage();
	if (strcmp(psel, "all") && strcmp(psel, "same") && strcmp(psel, "other"))
		usage();

	run_baseline(npages, fcpu);
	for (int h = H_BLOCK; h <= H_SPIN; h++) {
		if (strcmp(hsel, "all") && strcmp(hsel, h == H_BLOCK ? "block" : "spin"))
			continue;
		if (!strcmp(psel, "all") || !strcmp(psel, "same"))
			run_one(npages, (enum handler_mode)h, fcpu, fcpu, rm);
		if (!strcmp(psel, "all") || !strcmp(psel, "other"))
			run_one(npages, (enum handler_mode)h, fcpu, ocpu, rm);
	}
	return 0;
}
