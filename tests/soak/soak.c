/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * soak.c - a long run that must lose nothing: writer threads write and check
 * their pages while other threads fork (each child checks a consistent
 * snapshot of every writer's pages, and some children exec), and move,
 * grow, discard, page out and unmap memory of their own. Run under a tight
 * ZSWAP_MEMORY_LIMIT (tests/soak/soak.sh); it judges itself.
 *
 * Usage: soak [--seconds N] [--writers N] [--mib-per-writer N]
 * Prints one summary line of the operations made; exits 1 at the first
 * wrong byte (after saying where), 0 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
#define MAX_WRITERS 16

struct writer {
	pthread_mutex_t lock;	/* held while a page and its generation change */
	unsigned char *mem;
	uint32_t *gen;		/* generation of each page; 0 = never written (zeros) */
	size_t pages;
	unsigned int id;
	uint64_t writes, checks;
};

static struct writer writers[MAX_WRITERS];
static unsigned int nwriters = 4;
static _Atomic bool stop;
static _Atomic uint64_t forks, execs, moves, discards, pageouts, unmaps;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* A page's contents: a line of text repeated (compressible) over its first
 * half, then pseudo-random words, all from (owner, page, generation). */
static void fill(unsigned char *p, unsigned int owner, size_t page, uint32_t gen)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "writer %u page %zu generation %u; ", owner, page, gen);

	for (size_t off = 0; off < PAGE / 2; off += (size_t)n)
		memcpy(p + off, line, off + (size_t)n <= PAGE / 2 ? (size_t)n : PAGE / 2 - off);
	uint64_t s = mix(((uint64_t)owner << 48) ^ ((uint64_t)page << 20) ^ gen);
	for (size_t off = PAGE / 2; off < PAGE; off += 8) {
		s = mix(s + off);
		memcpy(p + off, &s, 8);
	}
}

static void check(const unsigned char *p, unsigned int owner, size_t page, uint32_t gen, const char *who)
{
	static __thread unsigned char want[PAGE];

	if (gen)
		fill(want, owner, page, gen);
	else
		memset(want, 0, PAGE);
	if (memcmp(p, want, PAGE) != 0) {
		size_t i = 0;
		while (p[i] == want[i])
			i++;
		fprintf(stderr, "soak: %s: writer %u page %zu (generation %u) is wrong at byte %zu\n", who, owner,
			page, gen, i);
		fflush(stderr);
		_exit(1);
	}
}

static uint64_t rnd(uint64_t *s)
{
	*s = mix(*s + 0x9e3779b97f4a7c15ull);
	return *s;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t s = w->id * 7919u + 1;

	while (!atomic_load(&stop)) {
		size_t i = rnd(&s) % w->pages;
		pthread_mutex_lock(&w->lock);
		if (rnd(&s) % 4 == 0) {
			w->gen[i]++;
			fill(w->mem + i * PAGE, w->id, i, w->gen[i]);
			w->writes++;
		} else {
			check(w->mem + i * PAGE, w->id, i, w->gen[i], "writer");
			w->checks++;
		}
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

/* fork with every writer held: the child sees each page with its own
 * generation, checks them all, and exits or (one fork in four) execs. */
static void *forker_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		usleep(200000);
		for (unsigned int k = 0; k < nwriters; k++)
			pthread_mutex_lock(&writers[k].lock);
		pid_t pid = fork();
		for (unsigned int k = 0; k < nwriters; k++)
			pthread_mutex_unlock(&writers[k].lock);
		if (pid == 0) {
			for (unsigned int k = 0; k < nwriters; k++)
				for (size_t i = 0; i < writers[k].pages; i++)
					check(writers[k].mem + i * PAGE, k, i, writers[k].gen[i], "fork child");
			if (forks % 4 == 0) {
				/* Preloaded as this process is, without its
				 * statistics at exit. */
				char pre[4096];
				const char *lib = getenv("LD_PRELOAD");
				snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", lib ? lib : "");
				char *envp[] = { pre, NULL };
				execle("/bin/true", "true", (char *)NULL, envp);
			}
			_exit(0);
		}
		if (pid < 0) {
			perror("soak: fork");
			continue;
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "soak: a fork child failed (status %d)\n", st);
			exit(1);
		}
		atomic_fetch_add(&forks, 1);
		if (forks % 4 == 1)
			atomic_fetch_add(&execs, 1);
	}
	return NULL;
}

/* Memory of its own: map, fill, page out, move and grow, discard a part,
 * check, unmap. */
static void *mapper_main(void *arg)
{
	uint64_t s = (uintptr_t)arg + 99;
	const unsigned int owner = 100;

	while (!atomic_load(&stop)) {
		size_t pages = 256 + rnd(&s) % 2048;
		unsigned char *m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			perror("soak: mmap");
			exit(1);
		}
		for (size_t i = 0; i < pages; i++)
			fill(m + i * PAGE, owner, i, 1);
		madvise(m, pages * PAGE, rnd(&s) % 2 ? MADV_PAGEOUT : MADV_COLD);
		atomic_fetch_add(&pageouts, 1);
		size_t grown = pages + pages / 2;
		unsigned char *n = mremap(m, pages * PAGE, grown * PAGE, MREMAP_MAYMOVE);
		if (n == MAP_FAILED) {
			perror("soak: mremap");
			exit(1);
		}
		atomic_fetch_add(&moves, 1);
		size_t lo = rnd(&s) % pages, len = 1 + rnd(&s) % (pages - lo);
		madvise(n + lo * PAGE, len * PAGE, MADV_DONTNEED);
		atomic_fetch_add(&discards, 1);
		for (size_t i = 0; i < grown; i++)
			check(n + i * PAGE, owner, i, i < pages && (i < lo || i >= lo + len) ? 1 : 0, "mapper");
		munmap(n, grown * PAGE);
		atomic_fetch_add(&unmaps, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int seconds = 600, mib = 32;
	pthread_t t[MAX_WRITERS + 3];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--writers") && i + 1 < argc)
			nwriters = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--mib-per-writer") && i + 1 < argc)
			mib = (unsigned int)atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: soak [--seconds N] [--writers N] [--mib-per-writer N]\n");
			return 2;
		}
	}
	if (!nwriters || nwriters > MAX_WRITERS || !mib) {
		fprintf(stderr, "soak: 1 to %d writers, at least 1 MiB each\n", MAX_WRITERS);
		return 2;
	}
	for (unsigned int k = 0; k < nwriters; k++) {
		struct writer *w = &writers[k];
		w->pages = (size_t)mib << 8;
		w->mem = mmap(NULL, w->pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		w->gen = calloc(w->pages, sizeof(*w->gen));
		if (w->mem == MAP_FAILED || !w->gen) {
			perror("soak: memory");
			return 1;
		}
		w->id = k;
		pthread_mutex_init(&w->lock, NULL);
		pthread_create(&t[k], NULL, writer_main, w);
	}
	pthread_create(&t[nwriters], NULL, forker_main, NULL);
	pthread_create(&t[nwriters + 1], NULL, mapper_main, (void *)1);
	pthread_create(&t[nwriters + 2], NULL, mapper_main, (void *)2);
	sleep(seconds);
	atomic_store(&stop, true);
	for (unsigned int k = 0; k < nwriters + 3; k++)
		pthread_join(t[k], NULL);
	uint64_t writes = 0, checks = 0;
	for (unsigned int k = 0; k < nwriters; k++) {
		writes += writers[k].writes;
		checks += writers[k].checks;
		for (size_t i = 0; i < writers[k].pages; i++)
			check(writers[k].mem + i * PAGE, k, i, writers[k].gen[i], "final");
	}
	printf("soak: %u s, %u writers of %u MiB: %" PRIu64 " page writes, %" PRIu64 " page checks, %" PRIu64
	       " forks (each child checked every page; %" PRIu64 " exec'd), %" PRIu64 " mremaps, %" PRIu64
	       " discards, %" PRIu64 " page-outs, %" PRIu64 " munmaps; nothing lost\n",
	       seconds, nwriters, mib, writes, checks, atomic_load(&forks), atomic_load(&execs), atomic_load(&moves),
	       atomic_load(&discards), atomic_load(&pageouts), atomic_load(&unmaps));
	return 0;
}
