/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_move.c - what UFFDIO_MOVE costs per page against the length of the
 * run moved in one call, with and without another thread of the process
 * running on the other CPU (which makes the kernel's TLB flush an IPI).
 *
 * The evictor (src/engine/evict.c) moves each run of claimed pages with one MOVE
 * into its staging area. Whether the kernel flushes the source's TLB once
 * per page or once per call decides whether longer runs are cheaper per page,
 * and whether a call holds eng.ev_lock's read side for long. Counted from
 * /proc/interrupts ("TLB shootdowns", both CPUs) around each series.
 *
 * For each run length L: fill PAGES pages, move them L at a time into a
 * registered staging area (PAGES/L calls), empty the staging area.
 *   --other none   no other thread of this process runs
 *   --other busy   a thread of this process spins on the other CPU (the
 *                  program's threads, under reclaim: IPIs)
 *   --other idle   a thread of this process ran on the other CPU and now
 *                  sleeps there (a faulting thread waiting for its page:
 *                  does the flush still reach that CPU?)
 * Output: one "RESULT bench=move ..." line per (other, L). Never judges.
 * Exits 77 when userfaultfd or UFFDIO_MOVE is not available.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/compat.h"
#include "bench_util.h"

static atomic_int spin_stop;

static int idle_pipe[2];

/* Runs on its CPU for a moment, then sleeps in read() until told to end. */
static void *sleeper(void *arg)
{
	char c;

	bench_pin(*(int *)arg);
	while (read(idle_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void *spinner(void *arg)
{
	volatile uint64_t x = 0;

	bench_pin(*(int *)arg);
	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
		x++;
	return NULL;
}

/* Interrupts of one /proc/interrupts row ("TLB:" shootdowns received,
 * "CAL:" function-call IPIs), summed over the CPUs. */
static uint64_t irq_count(const char *row)
{
	char line[1024];
	uint64_t sum = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		while (*p == ' ')
			p++;
		if (strncmp(p, row, 4))
			continue;
		p += 4;
		for (;;) {
			char *end;
			unsigned long long v = strtoull(p, &end, 10);
			if (end == p)
				break;
			sum += v;
			p = end;
		}
	}
	fclose(f);
	return sum;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_move [--pages N] [--rounds N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	size_t pages = 8192;
	int rounds = 5;
	static const size_t lens[] = { 1, 2, 4, 8, 16, 64, 512 };
	const struct bench_arg args[] = {
		BENCH_UINT("pages", pages, 512, 1 << 20),
		BENCH_UINT("rounds", rounds, 1, 1000),
		BENCH_ARGS_END,
	};

	bench_args(argc, argv, 1, args, usage);
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0) {
		fprintf(stderr, "bench_move: userfaultfd: %s\n", strerror(errno));
		return 77;
	}
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };
	if (ioctl(uffd, UFFDIO_API, &api) < 0) {
		fprintf(stderr, "bench_move: no UFFDIO_MOVE here: %s\n", strerror(errno));
		return 77;
	}
	size_t len = pages * BENCH_PAGE;
	char *src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || dst == MAP_FAILED)
		return 1;
	madvise(src, len, MADV_NOHUGEPAGE);
	madvise(dst, len, MADV_NOHUGEPAGE);
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)dst, .len = len }, .mode = UFFDIO_REGISTER_MODE_WP,
	};
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0) {
		fprintf(stderr, "bench_move: register: %s\n", strerror(errno));
		return 77;
	}
	bench_pin(1);
	static const char *const other_name[] = { "none", "busy", "idle" };
	for (int other = 0; other < 3; other++) {
		pthread_t t;
		int cpu0 = 0;
		atomic_store(&spin_stop, 0);
		if (other == 1)
			pthread_create(&t, NULL, spinner, &cpu0);
		if (other == 2) {
			if (pipe(idle_pipe) != 0)
				return 1;
			pthread_create(&t, NULL, sleeper, &cpu0);
			usleep(20000);	/* it has run on CPU 0 and sleeps */
		}
		for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			size_t L = lens[li], calls = 0;
			uint64_t ns = 0, tlb = 0, cal = 0;
			for (int r = 0; r < rounds; r++) {
				for (size_t i = 0; i < pages; i++)
					src[i * BENCH_PAGE] = (char)(i + 1);
				uint64_t t0 = irq_count("TLB:"), c0 = irq_count("CAL:"), n0 = bench_now_ns();
				for (size_t i = 0; i + L <= pages; i += L) {
					struct uffdio_move m = {
						.dst = (uintptr_t)dst + i * BENCH_PAGE, .src = (uintptr_t)src + i * BENCH_PAGE,
						.len = L * BENCH_PAGE, .mode = UFFDIO_MOVE_MODE_DONTWAKE,
					};
					if (ioctl(uffd, UFFDIO_MOVE, &m) < 0 || m.move != (int64_t)(L * BENCH_PAGE)) {
						fprintf(stderr, "bench_move: move of %zu pages: %s (%lld)\n", L,
							strerror(errno), (long long)m.move);
						return 1;
					}
					calls++;
				}
				ns += bench_now_ns() - n0;
				tlb += irq_count("TLB:") - t0;
				cal += irq_count("CAL:") - c0;
				for (size_t i = 0; i < pages; i++)
					if (dst[i * BENCH_PAGE] != (char)(i + 1)) {
						fprintf(stderr, "bench_move: page %zu came back wrong\n", i);
						return 1;
					}
				madvise(dst, len, MADV_DONTNEED);
			}
			size_t moved = calls * L;
			printf("RESULT bench=move other=%s run_pages=%zu calls=%zu ns_per_call=%.0f ns_per_page=%.0f"
			       " tlb_shootdowns_per_call=%.2f function_call_irqs_per_call=%.2f\n", other_name[other], L,
			       calls, (double)ns / (double)calls, (double)ns / (double)moved, (double)tlb / (double)calls,
			       (double)cal / (double)calls);
			fflush(stdout);
		}
		if (other == 1) {
			atomic_store(&spin_stop, 1);
			pthread_join(t, NULL);
		}
		if (other == 2) {
			(void)!write(idle_pipe[1], "x", 1);
			pthread_join(t, NULL);
			close(idle_pipe[0]);
			close(idle_pipe[1]);
		}
	}
	return 0;
}
