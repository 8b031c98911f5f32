/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_maps.c - src/base/maps.c's two ways of knowing a mapping agree:
 * maps_find() and maps_range_anon_rw() (the kernel's PROCMAP_QUERY where it
 * has it) against the parsed file (maps_for_each) for every mapping of this
 * process, after making one of each kind adoption must tell apart: private
 * anonymous read-write memory, and beside it read-only, shared, file-backed
 * private, inaccessible and named anonymous memory, the heap, and a hole.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/maps.h"
#include "test_check.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

#define PG 4096

static int seen;

static int compare(const struct maps_vma *p, void *arg)
{
	struct maps_vma q;
	int rc;

	(void)arg;
	if (p->start >= (uintptr_t)1 << 47)
		return 0;	/* [vsyscall]: the kernel's gate area, in the file but no mapping */
	seen++;
	rc = maps_find(p->start, &q);
	CHECK(rc == 0, "maps_find(%#lx) = %d", (unsigned long)p->start, rc);
	if (rc)
		return 0;
	CHECK(q.start == p->start && q.end == p->end, "maps_find(%#lx): %#lx-%#lx, the file says %#lx-%#lx",
	      (unsigned long)p->start, (unsigned long)q.start, (unsigned long)q.end, (unsigned long)p->start,
	      (unsigned long)p->end);
	CHECK(q.anon_rw_private == p->anon_rw_private, "%#lx-%#lx (%.*s): anon_rw_private %d, the file says %d",
	      (unsigned long)p->start, (unsigned long)p->end, (int)p->path_len, p->path, q.anon_rw_private,
	      p->anon_rw_private);
	CHECK(q.heap == p->heap, "%#lx: heap %d, the file says %d", (unsigned long)p->start, q.heap, p->heap);
	CHECK(q.special == p->special, "%#lx: special %d, the file says %d", (unsigned long)p->start, q.special,
	      p->special);
	/* The middle of the mapping finds the same one. */
	uintptr_t mid = p->start + (((p->end - p->start) / 2) & ~(uintptr_t)(PG - 1));
	rc = maps_find(mid, &q);
	CHECK(rc == 0 && q.start == p->start, "maps_find(%#lx), inside %#lx-%#lx: %d, %#lx", (unsigned long)mid,
	      (unsigned long)p->start, (unsigned long)p->end, rc, (unsigned long)q.start);
	CHECK(maps_range_anon_rw(p->start, p->end) == p->anon_rw_private, "maps_range_anon_rw(%#lx-%#lx) is not %d",
	      (unsigned long)p->start, (unsigned long)p->end, p->anon_rw_private);
	return 0;
}

static void *map(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

int main(void)
{
	char path[] = "/tmp/test_maps.XXXXXX";
	int fd = mkstemp(path);

	if (maps_init() != 0 || fd < 0 || ftruncate(fd, 16 * PG) != 0) {
		perror("set-up");
		return 2;
	}
	unlink(path);
	/* One of each kind, each between holes (the middle page of a
	 * reservation unmapped around it). */
	char *rw = map(16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *ro = map(16 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *none = map(16 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *shared = map(16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
	char *file = map(16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	char *named = map(16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *split = map(16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	bool have_names = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)named, 16 * PG,
				(unsigned long)"test-maps") == 0;
	mprotect(split + 8 * PG, 4 * PG, PROT_READ);	/* one mapping becomes three */
	rw[0] = ro[0] + 1;
	file[0] = 1;
	shared[0] = 1;
	void *grow = malloc(64 << 10);	/* the heap, if brk has room */

	int rc = maps_for_each(compare, NULL);
	CHECK(rc == 0, "maps_for_each: %d", rc);
	CHECK(seen > 8, "only %d mappings seen", seen);

	struct maps_vma v;
	CHECK(maps_find((uintptr_t)rw, &v) == 0 && v.anon_rw_private, "rw: not anonymous read-write");
	CHECK(maps_find((uintptr_t)ro, &v) == 0 && !v.anon_rw_private, "ro: taken for anonymous read-write");
	CHECK(maps_find((uintptr_t)none, &v) == 0 && !v.anon_rw_private, "PROT_NONE: taken for read-write");
	CHECK(maps_find((uintptr_t)shared, &v) == 0 && !v.anon_rw_private, "shared: taken for private");
	CHECK(maps_find((uintptr_t)file, &v) == 0 && !v.anon_rw_private, "file-backed: taken for anonymous");
	if (have_names)
		CHECK(maps_find((uintptr_t)named, &v) == 0 && v.anon_rw_private, "named anonymous: not taken");
	CHECK(!maps_range_anon_rw((uintptr_t)split, (uintptr_t)split + 16 * PG), "a read-only middle not seen");
	CHECK(maps_range_anon_rw((uintptr_t)split, (uintptr_t)split + 8 * PG), "the read-write head refused");

	/* A hole: -ENOENT, and end is where the next mapping starts. */
	munmap(rw + 4 * PG, 4 * PG);
	rc = maps_find((uintptr_t)rw + 5 * PG, &v);
	CHECK(rc == -ENOENT, "a hole: maps_find = %d", rc);
	CHECK(rc != -ENOENT || v.end == (uintptr_t)rw + 8 * PG, "a hole: next mapping at %#lx, not %p",
	      (unsigned long)v.end, (void *)(rw + 8 * PG));
	CHECK(!maps_range_anon_rw((uintptr_t)rw, (uintptr_t)rw + 16 * PG), "a range with a hole taken");

	free(grow);
	close(fd);
	printf("test_maps: %d mappings compared, %d failures\n", seen, failures);
	return failures ? 1 : 0;
}
