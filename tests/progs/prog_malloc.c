/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_malloc.c - a malloc-heavy program whose heap is evicted under it.
 *
 * Several threads (so several glibc arenas) make many small and some large
 * allocations (large ones are mmapped by glibc itself, not through the
 * interposed mmap) filled with deterministic data; some come from calloc and
 * must read zeros. Then, in phases separated by barriers:
 *   1. main evicts the heap: [heap] and every anonymous rw-p mapping of
 *      /proc/self/maps except the stacks, with MADV_PAGEOUT;
 *   2. every thread verifies all its data, frees half, allocates more
 *      (calloc'd blocks must read zeros), fills it;
 *   3. main evicts again (zswap_pageout when the library is there);
 *   4. every thread verifies, frees everything, malloc_trim gives memory
 *      back, allocates again with calloc (zeros, never old data), fills;
 *   5. main evicts again; threads verify and print a checksum.
 * The checksums depend only on sizes and contents, not on addresses: the
 * script compares them between runs with and without the library.
 *
 * fork: the same heap, evicted, then a worker thread forks (FORK_ROUNDS
 * times, a different worker each time, the heap evicted again before each).
 * glibc's fork takes every arena lock after the library's prepare handler,
 * and its child touches the arenas before any atfork handler runs: faults
 * the library serves from its frozen state (docs/DESIGN.md "Fork"); the
 * child's own handlers then start, and its malloc, free and realloc fault
 * the evicted arenas back through them. Meanwhile the other workers of the
 * parent read their own evicted allocations and malloc, check and free
 * scratch blocks in their arenas (the parent's faults during the freeze). The child verifies every allocation of every
 * thread byte for byte, mallocs (and callocs: zeros) new blocks, frees a
 * third of the inherited ones, reallocs another third (the old bytes kept),
 * verifies everything again and exits 0; then every worker of the parent
 * verifies its own.
 *
 * usage: prog_malloc [--inactive-ok] [threads, default 4]
 *        prog_malloc [--inactive-ok] fork [threads, default 3]
 */
#include "prog_common.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define NSMALL 12000
#define NLARGE 6

struct alloc {
	unsigned char *p;
	size_t size;
	uint64_t seed;
	bool zeroed;	/* came from calloc: checked zero before filling */
};

struct worker {
	pthread_t tid;
	int id;
	struct alloc a[NSMALL + NLARGE];
	uint64_t rng;
	uintptr_t stack_lo, stack_hi;
	uint64_t sum;
	size_t live_bytes;
};

static int nthreads = 4;
static struct worker *workers;
static pthread_barrier_t bar;

/* Compressible, position-dependent contents: a word changing every 64 bytes. */
static void fill(unsigned char *p, size_t size, uint64_t seed)
{
	for (size_t off = 0; off < size; off += 8) {
		uint64_t w = pc_mix(seed + off / 64);
		memcpy(p + off, &w, size - off < 8 ? size - off : 8);
	}
}

static bool check(const unsigned char *p, size_t size, uint64_t seed)
{
	for (size_t off = 0; off < size; off += 8) {
		uint64_t w = pc_mix(seed + off / 64);
		if (memcmp(p + off, &w, size - off < 8 ? size - off : 8) != 0)
			return false;
	}
	return true;
}

static size_t pick_size(struct worker *w, size_t i)
{
	if (i >= NSMALL)	/* large: 200 KiB .. 3 MiB, mmapped by glibc */
		return 200 * 1024 + pc_rand(&w->rng) % (3 * PC_MIB);
	uint64_t r = pc_rand(&w->rng);
	return r % 8 == 0 ? 1024 + r % 7000 : 16 + r % 1000;
}

static void allocate(struct worker *w, size_t i, uint64_t gen)
{
	struct alloc *a = &w->a[i];

	a->size = pick_size(w, i);
	a->seed = (uint64_t)w->id << 40 ^ (uint64_t)i << 8 ^ gen;
	a->zeroed = pc_rand(&w->rng) % 4 == 0;
	a->p = a->zeroed ? calloc(1, a->size) : malloc(a->size);
	if (!a->p)
		pc_fail("thread %d: allocating %zu bytes failed", w->id, a->size);
	if (a->zeroed)
		for (size_t k = 0; k < a->size; k++)
			if (a->p[k])
				pc_fail("thread %d: calloc(%zu) returned non-zero memory at byte %zu (gen %" PRIu64 ")%s",
					w->id, a->size, k, gen, gen ? ": stale data of freed memory" : "");
	fill(a->p, a->size, a->seed);
	w->live_bytes += a->size;
}

static void verify_all(struct worker *w, const char *phase)
{
	for (size_t i = 0; i < NSMALL + NLARGE; i++) {
		struct alloc *a = &w->a[i];
		if (a->p && !check(a->p, a->size, a->seed))
			pc_fail("thread %d, %s: allocation %zu (%zu bytes at %p) lost its data%s", w->id, phase, i, a->size,
				(void *)a->p, pc_page_is_zero((void *)((uintptr_t)a->p & ~(PC_PAGE - 1))) ? " (reads zeros)" : "");
	}
}

/* The thread's stack, which eviction leaves alone (heap_ranges). */
static void note_stack(struct worker *w)
{
	pthread_attr_t attr;
	void *stk;
	size_t stksz;

	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstack(&attr, &stk, &stksz);
		w->stack_lo = (uintptr_t)stk;
		w->stack_hi = (uintptr_t)stk + stksz;
		pthread_attr_destroy(&attr);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	note_stack(w);
	w->rng = 0xabcdef + (uint64_t)w->id;
	for (size_t i = 0; i < NSMALL + NLARGE; i++)
		allocate(w, i, 0);
	pthread_barrier_wait(&bar);		/* main evicts */
	pthread_barrier_wait(&bar);

	verify_all(w, "after the first eviction");
	for (size_t i = 0; i < NSMALL + NLARGE; i += 2) {
		w->live_bytes -= w->a[i].size;
		free(w->a[i].p);
		w->a[i].p = NULL;
	}
	for (size_t i = 0; i < NSMALL + NLARGE; i += 2)
		allocate(w, i, 1);
	pthread_barrier_wait(&bar);		/* main evicts */
	pthread_barrier_wait(&bar);

	verify_all(w, "after the second eviction");
	for (size_t i = 0; i < NSMALL + NLARGE; i++) {
		free(w->a[i].p);
		w->a[i].p = NULL;
	}
	w->live_bytes = 0;
	pthread_barrier_wait(&bar);		/* main trims */
	pthread_barrier_wait(&bar);
	for (size_t i = 0; i < NSMALL + NLARGE; i++)
		allocate(w, i, 2);
	pthread_barrier_wait(&bar);		/* main evicts */
	pthread_barrier_wait(&bar);

	verify_all(w, "after the third eviction");
	w->sum = 0;
	for (size_t i = 0; i < NSMALL + NLARGE; i++)
		w->sum = pc_mix(w->sum ^ w->a[i].size ^ pc_sum(w->a[i].p, w->a[i].size));
	return NULL;
}

struct range {
	uintptr_t lo, hi;
};

/* The heap: [heap] and anonymous private rw mappings, minus the stacks. */
static size_t heap_ranges(struct range *r, size_t max)
{
	char line[512];
	size_t n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		pc_fail("open /proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, ino;
		char perms[8], path[256] = "";
		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %255s", &lo, &hi, perms, &ino, path) < 4)
			continue;
		if (strcmp(perms, "rw-p") != 0 || ino != 0)
			continue;
		if (path[0] && strcmp(path, "[heap]") != 0)
			continue;
		bool stack = false;
		for (int t = 0; t < nthreads; t++)
			stack |= workers[t].stack_lo < hi && lo < workers[t].stack_hi;
		if (stack || n == max)
			continue;
		r[n++] = (struct range){ lo, hi };
	}
	fclose(f);
	return n;
}

static void evict_heap(const char *what, bool use_api, size_t live_bytes)
{
	static struct range r[4096];
	struct zswap_stats a, b;
	size_t n = heap_ranges(r, 4096), bytes = 0, present = 0;

	pc_stats(&a);
	for (size_t i = 0; i < n; i++) {
		bytes += r[i].hi - r[i].lo;
		if (pc_managed())
			present += pc_count_resident((void *)r[i].lo, (r[i].hi - r[i].lo) / PC_PAGE);
	}
	for (size_t i = 0; i < n; i++) {
		int rc = use_api ? pc_pageout_api((void *)r[i].lo, r[i].hi - r[i].lo)
				 : pc_pageout((void *)r[i].lo, r[i].hi - r[i].lo);
		if (rc != 0 && pc_managed())
			pc_fail("%s: %s(%#lx, %lu) failed: %s", what, use_api ? "zswap_pageout" : "madvise(MADV_PAGEOUT)",
				(unsigned long)r[i].lo, (unsigned long)(r[i].hi - r[i].lo), strerror(errno));
	}
	pc_stats(&b);
	if (pc_managed()) {
		uint64_t ev = b.evicted_pages - a.evicted_pages;
		pc_info("%s: %zu ranges, %zu MiB, %zu pages present, %zu MiB allocated: evicted_pages +%" PRIu64
			", regions %" PRIu64, what, n, bytes >> 20, present, live_bytes >> 20, ev, b.regions);
		/* Most of the allocated bytes live in regions of at least 1 MiB
		 * (arenas, the main heap, large chunks): at least a quarter of
		 * them must have been evicted. */
		PC_CHECK(ev * PC_PAGE >= live_bytes / 4, "%s: only %" PRIu64 " pages evicted for %zu MiB allocated",
			 what, ev, live_bytes >> 20);
	}
}

/* ---- fork: a worker thread forks with the heap evicted -------------------- */

#define FORK_ROUNDS 3		/* with 3 threads, each arena's owner forks once */
#define CHILD_NEW 3000		/* blocks the child allocates */

static atomic_int forks_done;	/* rounds whose child was waited for */

/* In the child: no stdio (its buffers are the parent's), a message and
 * _exit, so no handler of the parent's runs. */
static __attribute__((noreturn, format(printf, 1, 2))) void child_fail(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "prog_malloc(child): FAIL: ");

	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(buf, "\n");
	pc_write_str(2, buf);
	_exit(1);
}

/* Every live allocation of every thread holds what its owner wrote. */
static void child_verify(const char *phase, struct alloc *child_new)
{
	for (int t = 0; t < nthreads; t++)
		for (size_t i = 0; i < NSMALL + NLARGE; i++) {
			struct alloc *a = &workers[t].a[i];
			if (a->p && !check(a->p, a->size, a->seed))
				child_fail("%s: thread %d's allocation %zu (%zu bytes at %p) lost its data%s", phase, t,
					   i, a->size, (void *)a->p,
					   pc_page_is_zero((void *)((uintptr_t)a->p & ~(PC_PAGE - 1))) ? " (reads zeros)"
												: "");
		}
	for (size_t i = 0; child_new && i < CHILD_NEW; i++)
		if (child_new[i].p && !check(child_new[i].p, child_new[i].size, child_new[i].seed))
			child_fail("%s: its own block %zu (%zu bytes) lost its data", phase, i, child_new[i].size);
}

/* The child of round r, forked by thread self: its own copy of everyone's
 * bookkeeping (workers[]), which it changes freely. */
static int fork_child(int self, int r)
{
	struct worker *w = &workers[self];
	static struct alloc child_new[CHILD_NEW];

	if (pc_managed() && !pc.active())
		child_fail("round %d: the child is not managed (zswap_active() == 0)", r);
	pc_pagemap_reopen();
	child_verify("after fork", NULL);

	/* malloc and calloc in the forking thread's arena (and mmapped
	 * blocks): calloc'd memory reads zeros. */
	for (size_t i = 0; i < CHILD_NEW; i++) {
		struct alloc *a = &child_new[i];
		uint64_t rnd = pc_rand(&w->rng);
		a->size = i % 500 == 7 ? 300 * 1024 + rnd % PC_MIB : 16 + rnd % 3000;
		a->seed = 0xc41d000000ULL ^ (uint64_t)r << 32 ^ i;
		a->zeroed = rnd % 3 == 0;
		a->p = a->zeroed ? calloc(1, a->size) : malloc(a->size);
		if (!a->p)
			child_fail("round %d: malloc(%zu) failed", r, a->size);
		for (size_t k = 0; a->zeroed && k < a->size; k++)
			if (a->p[k])
				child_fail("round %d: calloc(%zu) returned non-zero memory at byte %zu", r, a->size, k);
		fill(a->p, a->size, a->seed);
	}
	/* free a third of everyone's, in every arena; realloc another third
	 * (twice the size or half, some past the mmap threshold): the bytes
	 * both sizes share must be the old ones. */
	for (int t = 0; t < nthreads; t++)
		for (size_t i = 0; i < NSMALL + NLARGE; i++) {
			struct alloc *a = &workers[t].a[i];
			if (!a->p)
				continue;
			if ((i + (size_t)r) % 3 == 0) {
				free(a->p);
				a->p = NULL;
			} else if ((i + (size_t)r) % 3 == 1) {
				size_t nsz = i % 2 ? a->size * 2 : a->size / 2 + 1;
				if (i % 997 == 1)
					nsz = a->size + 256 * 1024;
				unsigned char *np = realloc(a->p, nsz);
				if (!np)
					child_fail("round %d: realloc(%zu -> %zu) failed", r, a->size, nsz);
				size_t keep = nsz < a->size ? nsz : a->size;
				if (!check(np, keep, a->seed))
					child_fail("round %d: realloc of thread %d's allocation %zu (%zu -> %zu bytes) lost "
						   "its old bytes", r, t, i, a->size, nsz);
				a->p = np;
				a->size = nsz;
				fill(a->p, a->size, a->seed);
			}
		}
	child_verify("after malloc, free and realloc", child_new);
	for (size_t i = 0; i < CHILD_NEW; i++)
		free(child_new[i].p);
	malloc_trim(0);
	child_verify("after malloc_trim", NULL);
	return 0;
}

/* What the other workers do while one forks: read their own evicted
 * allocations and malloc, check and free scratch blocks in their arena. */
static void fork_busy(struct worker *w, int r)
{
	uint64_t rng = 0x5eed + (uint64_t)w->id * 131 + (uint64_t)r;

	do {
		size_t i = (size_t)(pc_rand(&rng) % (NSMALL + NLARGE));
		struct alloc *a = &w->a[i];
		if (!check(a->p, a->size, a->seed))
			pc_fail("thread %d, round %d, during the fork: allocation %zu lost its data", w->id, r, i);
		size_t sz = pc_rand(&rng) % 64 == 0 ? 300 * 1024 : 16 + pc_rand(&rng) % 4000;
		unsigned char *p = malloc(sz);
		if (!p)
			pc_fail("thread %d: malloc(%zu) failed", w->id, sz);
		fill(p, sz, rng);
		if (!check(p, sz, rng))
			pc_fail("thread %d, round %d, during the fork: a scratch block lost its data", w->id, r);
		free(p);
		usleep(100);	/* two CPUs here: leave the child room to run */
	} while (atomic_load(&forks_done) <= r);
}

static void *fork_worker_main(void *arg)
{
	struct worker *w = arg;

	note_stack(w);
	w->rng = 0xf0f0 + (uint64_t)w->id;
	for (size_t i = 0; i < NSMALL + NLARGE; i++)
		allocate(w, i, 0);
	for (int r = 0; r < FORK_ROUNDS; r++) {
		pthread_barrier_wait(&bar);	/* main evicts */
		pthread_barrier_wait(&bar);
		if (w->id != r % nthreads) {
			fork_busy(w, r);
		} else {
			fflush(stdout);
			pid_t pid = fork();
			if (pid < 0)
				pc_fail("round %d: fork: %s", r, strerror(errno));
			if (pid == 0)
				_exit(fork_child(w->id, r));
			int status;
			if (waitpid(pid, &status, 0) != pid)
				pc_fail("round %d: waitpid: %s", r, strerror(errno));
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				pc_fail("round %d: the child forked by thread %d %s %d", r, w->id,
					WIFEXITED(status) ? "exited with" : "died of signal",
					WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			atomic_fetch_add(&forks_done, 1);
		}
		char phase[64];
		snprintf(phase, sizeof(phase), "in the parent after fork %d", r);
		verify_all(w, phase);
	}
	w->sum = 0;
	for (size_t i = 0; i < NSMALL + NLARGE; i++)
		w->sum = pc_mix(w->sum ^ w->a[i].size ^ pc_sum(w->a[i].p, w->a[i].size));
	return NULL;
}

static void start_workers(void *(*fn)(void *))
{
	workers = calloc((size_t)nthreads, sizeof(*workers));
	if (!workers)
		pc_fail("calloc");
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
	for (int t = 0; t < nthreads; t++) {
		workers[t].id = t;
		if (pthread_create(&workers[t].tid, NULL, fn, &workers[t]) != 0)
			pc_fail("pthread_create");
	}
}

static size_t live_bytes(void)
{
	size_t live = 0;

	for (int t = 0; t < nthreads; t++)
		live += workers[t].live_bytes;
	return live;
}

static void print_sums(void)
{
	uint64_t total = 0;

	for (int t = 0; t < nthreads; t++) {
		pthread_join(workers[t].tid, NULL);
		printf("thread %d sum=%016" PRIx64 "\n", t, workers[t].sum);
		total = pc_mix(total ^ workers[t].sum);
	}
	printf("total sum=%016" PRIx64 "\n", total);
}

static void case_fork(void)
{
	pc_info("mode %s, fork, %d threads", pc_mode_name(), nthreads);
	start_workers(fork_worker_main);
	for (int r = 0; r < FORK_ROUNDS; r++) {
		char what[64];
		pthread_barrier_wait(&bar);
		snprintf(what, sizeof(what), "eviction before fork %d", r);
		evict_heap(what, r % 2 == 1, live_bytes());
		pthread_barrier_wait(&bar);
	}
	print_sums();
	printf("%d forks, children ok\n", FORK_ROUNDS);
}

int main(int argc, char **argv)
{
	pc_init("prog_malloc", &argc, argv);
	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		nthreads = argc > 2 ? atoi(argv[2]) : 3;
		PC_CHECK(nthreads >= 2 && nthreads <= 32, "threads: 2..32");
		case_fork();
		return 0;
	}
	if (argc > 1)
		nthreads = atoi(argv[1]);
	PC_CHECK(nthreads >= 2 && nthreads <= 32, "threads: 2..32");
	pc_info("mode %s, %d threads", pc_mode_name(), nthreads);
	start_workers(worker_main);
	size_t live;

	pthread_barrier_wait(&bar);
	live = 0;
	for (int t = 0; t < nthreads; t++)
		live += workers[t].live_bytes;
	evict_heap("first eviction (madvise)", false, live);
	pthread_barrier_wait(&bar);

	pthread_barrier_wait(&bar);
	live = 0;
	for (int t = 0; t < nthreads; t++)
		live += workers[t].live_bytes;
	evict_heap("second eviction (zswap_pageout)", true, live);
	pthread_barrier_wait(&bar);

	pthread_barrier_wait(&bar);
	malloc_trim(0);		/* hand freed memory back: brk shrinks, arenas decommit */
	pthread_barrier_wait(&bar);

	pthread_barrier_wait(&bar);
	live = 0;
	for (int t = 0; t < nthreads; t++)
		live += workers[t].live_bytes;
	evict_heap("third eviction (madvise)", false, live);
	pthread_barrier_wait(&bar);

	print_sums();
	return 0;
}
