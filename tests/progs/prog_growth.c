/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_growth - a C program that allocates with malloc at full speed, for
 * tests/engine/test_eng_growth.sh: memory glibc grows for itself (the brk heap,
 * another thread's arena, chunks mapped for themselves) must be held under
 * ZSWAP_MEMORY_LIMIT like the program's own mmap.
 *
 *   prog_growth MIB THREADS [realloc]
 *
 * Each thread allocates its share of MIB MiB, all kept live: small blocks
 * (16 B to 4 KiB, from the brk heap or the thread's arena) and large ones
 * (128 KiB to 3 MiB: chunks glibc maps for themselves; every third one by
 * calloc); with "realloc", also a buffer grown by realloc to 4 MiB (glibc
 * grows a mapped chunk with mremap). Each block is written whole as soon
 * as it is allocated. Then every byte of every block is checked.
 *
 * "realloc" found a data loss of the engine (a moving mremap's late UNMAP
 * dropped the buffer another thread's mremap had just moved into the same
 * addresses: DESIGN.md, "The life of a page"); test_eng_growth.sh runs it.
 *
 * Prints a summary on stdout (the same with or without the library); the
 * test preloads tests/progs/prog_reclaim_stats.so after the library for the
 * counters and the peak RSS (VmHWM).
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024UL * 1024UL)
#define GROWTH_REALLOCS 16	/* 4 MiB in steps of 256 KiB */

struct block {
	unsigned char *p;
	size_t len;
};

struct worker {
	int id;
	int use_realloc;
	size_t budget;		/* bytes to allocate */
	struct block *blocks;
	size_t n, cap;
	size_t bytes;
	int bad;
};

/* A block's contents: one byte value all through (compresses well: the
 * pool is charged too), and every 512th byte position its own stamp, so
 * that a page moved, lost or zeroed shows. */
static unsigned char fill_byte(int t, size_t b)
{
	return (unsigned char)(b * 131 + (size_t)t * 7 + 1);
}

static unsigned char stamp(int t, size_t b, size_t off)
{
	return (unsigned char)((b ^ (off >> 9)) * 29 + (size_t)t);
}

static void fill(int t, size_t b, unsigned char *p, size_t len)
{
	memset(p, fill_byte(t, b), len);
	for (size_t off = 0; off < len; off += 512)
		p[off] = stamp(t, b, off);
}

static int check(int t, size_t b, const unsigned char *p, size_t len)
{
	unsigned char v = fill_byte(t, b);

	for (size_t off = 0; off < len; off++) {
		unsigned char want = (off & 511) ? v : stamp(t, b, off);
		if (p[off] != want) {
			fprintf(stderr, "prog_growth: FAIL: thread %d block %zu (%zu bytes) byte %zu is %u, not %u\n",
				t, b, len, off, p[off], want);
			return 1;
		}
	}
	return 0;
}

static void keep(struct worker *w, unsigned char *p, size_t len)
{
	if (!p) {
		fprintf(stderr, "prog_growth: FAIL: allocation of %zu bytes failed\n", len);
		exit(1);
	}
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 4096;
		w->blocks = realloc(w->blocks, w->cap * sizeof(*w->blocks));
		if (!w->blocks) {
			fprintf(stderr, "prog_growth: FAIL: out of memory for the block list\n");
			exit(1);
		}
	}
	w->blocks[w->n].p = p;
	w->blocks[w->n].len = len;
	w->n++;
	w->bytes += len;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(w->id + 1);
	size_t grown = 0, grown_len = 0;
	unsigned char *g = NULL;
	/* Where each realloc left the buffer: printed on a failure (which
	 * step lost it, and whether glibc moved it or grew it in place). */
	struct {
		unsigned char *at;
		size_t len;
	} moves[GROWTH_REALLOCS];

	while (w->bytes + grown_len < w->budget) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t len;
		unsigned char *p;
		if (x % 512 == 0) {
			/* Large: a chunk of its own (above glibc's 128 KiB mmap
			 * threshold, which only rises when one is freed). */
			len = 128 * 1024 + (size_t)(x >> 8) % (3 * MIB - 128 * 1024);
			p = (x >> 40) % 3 ? malloc(len) : calloc(1, len);
		} else if (w->use_realloc && x % 512 == 1 && grown_len < 4 * MIB) {
			/* The realloc'd buffer grows by a quarter of a MiB; its
			 * new part is written, the old part checked at the end. */
			size_t nlen = grown_len + 256 * 1024;
			unsigned char *q = realloc(g, nlen);
			if (!q) {
				fprintf(stderr, "prog_growth: FAIL: realloc to %zu bytes failed\n", nlen);
				exit(1);
			}
			memset(q + grown_len, (unsigned char)(0x5a + w->id), nlen - grown_len);
			g = q;
			grown_len = nlen;
			if (grown < GROWTH_REALLOCS) {
				moves[grown].at = q;
				moves[grown].len = nlen;
			}
			grown++;
			continue;
		} else {
			len = 16 + (size_t)(x >> 8) % 4080;
			p = malloc(len);
		}
		keep(w, p, len);
		fill(w->id, w->n - 1, p, len);
	}
	for (size_t b = 0; b < w->n && !w->bad; b++)
		w->bad = check(w->id, b, w->blocks[b].p, w->blocks[b].len);
	for (size_t off = 0; off < grown_len && !w->bad; off++) {
		if (g[off] != (unsigned char)(0x5a + w->id)) {
			fprintf(stderr, "prog_growth: FAIL: thread %d realloc'd buffer byte %zu is %u\n", w->id, off,
				g[off]);
			w->bad = 1;
			size_t nbad = 0;	/* 4 KiB blocks wrong at their last byte */
			for (size_t o = off | 4095; o - 4095 < grown_len; o += 4096)
				nbad += g[o < grown_len ? o : grown_len - 1] != (unsigned char)(0x5a + w->id);
			fprintf(stderr, "prog_growth: thread %d: %zu of its %zu 4 KiB blocks from there on wrong; its reallocs:\n",
				w->id, nbad, (grown_len - (off & ~(size_t)4095) + 4095) / 4096);
			for (size_t i = 0; i < grown && i < GROWTH_REALLOCS; i++)
				fprintf(stderr, "prog_growth:   %zu bytes at %p\n", moves[i].len, (void *)moves[i].at);
		}
	}
	w->bytes += grown_len;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && strcmp(argv[3], "realloc") == 0)) {
		fprintf(stderr, "usage: prog_growth MIB THREADS [realloc]\n");
		return 2;
	}
	size_t mib = strtoul(argv[1], NULL, 10);
	int nthreads = atoi(argv[2]);
	if (!mib || nthreads < 1 || nthreads > 8) {
		fprintf(stderr, "prog_growth: bad arguments\n");
		return 2;
	}
	struct worker w[8];
	pthread_t t[8];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < nthreads; i++) {
		w[i].id = i;
		w[i].use_realloc = argc == 4;
		w[i].budget = mib * MIB / (size_t)nthreads;
		if (pthread_create(&t[i], NULL, worker_run, &w[i]) != 0) {
			fprintf(stderr, "prog_growth: FAIL: pthread_create\n");
			return 1;
		}
	}
	int bad = 0;
	size_t blocks = 0, bytes = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		bad |= w[i].bad;
		blocks += w[i].n;
		bytes += w[i].bytes;
	}
	if (bad)
		return 1;
	printf("prog_growth: %d threads, %zu blocks, %zu MiB allocated and checked\n", nthreads, blocks,
	       bytes / MIB);
	return 0;
}
