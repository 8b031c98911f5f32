/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_fork.c - what fork() costs a program with evicted memory.
 *
 * One run measures both sides: for each size (default 0, 256 MiB, 1 GiB) it
 * starts this program twice as a worker, once with LD_PRELOAD=libzswap.so
 * and once without. A worker fills SIZE of text (tools/bench/bench_text.h, the
 * same bytes on both sides), evicts it all under the library (zswap_pageout;
 * without it the memory stays resident, as it would with no swap), then
 * forks --reps times. Per fork: the time fork() takes in the parent (until
 * it returns: under the library that includes the child taking over its
 * userfaultfd), and the child's RssAnon read first thing after fork returns
 * in it. The child then checks a sample of 64 pages against the parent's
 * checksum (a wrong page ends the run: no figure means anything then).
 *
 * With --kernel a third side: the same memory without the library, paged
 * out to the kernel's swap with MADV_PAGEOUT (run it under
 * scripts/kernel-zswap.sh run --, which turns swap and zswap on), then
 * forked the same way: the kernel's own fork of swapped-out memory.
 *
 * stdout: one "RESULT ..." line per (size, side); everything else on stderr.
 * usage: bench_fork [--lib PATH] [--sizes 0,256M,1G] [--reps N] [--kernel]
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_text.h"
#include "bench_util.h"
#include "zswap.h"

#define SAMPLE 64

extern char **environ;

static long rss_anon_kb(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *l = strstr(buf, "RssAnon:");
	return l ? strtol(l + 8, NULL, 10) : -1;
}

static uint64_t sample_hash(const char *p, size_t npages)
{
	uint64_t h = 0;

	for (size_t k = 0; k < SAMPLE && npages; k++) {
		size_t i = (k * 7919) % npages;
		h = h * 31 + bench_hash(p + i * BENCH_PAGE, BENCH_PAGE);
	}
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void worker(uint64_t size, long reps)
{
	int (*pageout)(void *, size_t) = (int (*)(void *, size_t))dlsym(RTLD_DEFAULT, "zswap_pageout");
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");
	int (*stats)(struct zswap_stats *, size_t) =
		(int (*)(struct zswap_stats *, size_t))dlsym(RTLD_DEFAULT, "zswap_stats");
	bool lib = active && active();
	bool kpageout = !lib && getenv("BENCH_FORK_KERNEL_PAGEOUT");
	size_t npages = size / BENCH_PAGE;
	struct bench_text t;
	char *p = NULL;
	uint64_t *ns = calloc((size_t)reps, sizeof(*ns));
	long *crss = calloc((size_t)reps, sizeof(*crss));
	uint64_t h = 0, evicted = 0;

	if (!ns || !crss)
		bench_die("out of memory");
	if (npages) {
		bench_text_load(&t, BENCH_TEXT_DIRS, BENCH_TEXT_CAP);
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			bench_die("mmap %llu: %s", (unsigned long long)size, strerror(errno));
		bench_text_fill(&t, p, npages, 42);
		h = sample_hash(p, npages);
		if (lib) {
			struct zswap_stats st;
			if (pageout(p, size) != 0)
				bench_die("zswap_pageout: %s", strerror(errno));
			if (stats(&st, sizeof(st)) == 0)
				evicted = st.stored_pages;
		} else if (kpageout) {
			/* The kernel's swap: what is no longer resident. */
			unsigned char *vec = malloc(npages);
			if (!vec || madvise(p, size, MADV_PAGEOUT) != 0 || mincore(p, size, vec) != 0)
				bench_die("MADV_PAGEOUT to swap: %s", strerror(errno));
			for (size_t i = 0; i < npages; i++)
				evicted += !(vec[i] & 1);
			free(vec);
		}
	}
	long prss = rss_anon_kb();
	for (long r = 0; r < reps; r++) {
		int pfd[2];
		if (pipe(pfd) != 0)
			bench_die("pipe: %s", strerror(errno));
		fflush(NULL);
		uint64_t t0 = bench_now_ns();
		pid_t pid = fork();
		uint64_t t1 = bench_now_ns();
		if (pid < 0)
			bench_die("fork: %s", strerror(errno));
		if (pid == 0) {
			long v[2] = { rss_anon_kb(), 0 };
			v[1] = npages && sample_hash(p, npages) != h;
			if (write(pfd[1], v, sizeof(v)) != (ssize_t)sizeof(v))
				_exit(2);
			_exit(0);
		}
		long v[2];
		if (read(pfd[0], v, sizeof(v)) != (ssize_t)sizeof(v))
			bench_die("the child did not report");
		int status;
		waitpid(pid, &status, 0);
		close(pfd[0]);
		close(pfd[1]);
		if (v[1])
			bench_die("the child read wrong data after fork (%s)", lib ? "libzswap" : "plain");
		ns[r] = t1 - t0;
		crss[r] = v[0];
	}
	if (npages && sample_hash(p, npages) != h)
		bench_die("the parent read wrong data after fork");
	qsort(ns, (size_t)reps, sizeof(*ns), cmp_u64);
	printf("RESULT side=%s evicted_mib=%llu size_mib=%llu forks=%ld fork_ms_p50=%.3f fork_ms_min=%.3f"
	       " fork_ms_max=%.3f parent_rss_mib=%.1f child_rss_mib=%.1f\n",
	       lib ? "libzswap" : kpageout ? "kernel-swapped" : "plain", (unsigned long long)(evicted * BENCH_PAGE >> 20),
	       (unsigned long long)(size >> 20), reps, ns[reps / 2] / 1e6, ns[0] / 1e6, ns[reps - 1] / 1e6,
	       prss / 1024.0, crss[reps / 2] / 1024.0);
	fflush(stdout);
	exit(0);
}

static void run_side(const char *self, const char *lib, bool kpageout, uint64_t size, long reps)
{
	char sz[32], rp[32];
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	snprintf(rp, sizeof(rp), "%ld", reps);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (lib)
			setenv("LD_PRELOAD", lib, 1);
		else
			unsetenv("LD_PRELOAD");
		if (kpageout)
			setenv("BENCH_FORK_KERNEL_PAGEOUT", "1", 1);
		execl(self, self, "--worker", sz, rp, (char *)NULL);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		bench_die("the %s worker for %llu MiB failed", lib ? "libzswap" : "plain",
			  (unsigned long long)(size >> 20));
}

int main(int argc, char **argv)
{
	const char *lib = getenv("ZSWAP_LIB");
	char sizes[256] = "0,256M,1G";
	long reps = 7;
	bool kernel = false;
	char self[4096];

	if (argc == 4 && strcmp(argv[1], "--worker") == 0)
		worker(strtoull(argv[2], NULL, 10), bench_parse_long("--worker", argv[3], 1, 1000));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc)
			lib = argv[++i];
		else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
			snprintf(sizes, sizeof(sizes), "%s", argv[++i]);
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = bench_parse_long("--reps", argv[++i], 1, 1000);
		else if (strcmp(argv[i], "--kernel") == 0)
			kernel = true;
		else
			bench_die("usage: bench_fork [--lib PATH] [--sizes 0,256M,1G] [--reps N] [--kernel]");
	}
	if (!lib)
		bench_die("no library: --lib PATH/libzswap.so (or ZSWAP_LIB)");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		bench_die("readlink: %s", strerror(errno));
	self[n] = '\0';
	unsetenv("ZSWAP_LIB");
	for (char *s = strtok(sizes, ","); s; s = strtok(NULL, ",")) {
		uint64_t size = strcmp(s, "0") == 0 ? 0 : bench_parse_size("--sizes", s);
		run_side(self, NULL, false, size, reps);
		if (kernel)
			run_side(self, NULL, true, size, reps);
		run_side(self, lib, false, size, reps);
	}
	return 0;
}
