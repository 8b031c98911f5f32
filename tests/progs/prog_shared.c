/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_shared.c - memory libzswap must never evict: shared anonymous
 * memory, shared and private file mappings, read-only and PROT_NONE
 * anonymous memory. Each is filled (through a writable view), offered to
 * MADV_PAGEOUT and zswap_pageout, and must come out with nothing stored or
 * evicted and its data intact (and, for a shared file mapping, the file's
 * contents right). A private anonymous mapping evicted alongside shows the
 * library was working meanwhile.
 *
 * usage: prog_shared [--inactive-ok]
 */
#include "prog_common.h"

#define NPAGES 2048UL
#define LEN (NPAGES * PC_PAGE)

static int tmpfile_fd(void)
{
	char path[300];
	const char *dir = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/prog_shared.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		pc_fail("mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	if (ftruncate(fd, (off_t)LEN) != 0)
		pc_fail("ftruncate: %s", strerror(errno));
	return fd;
}

/* Offer [p, LEN) for eviction both ways; nothing may be stored. */
static void offer(const char *what, char *p)
{
	struct zswap_stats a, b;

	pc_stats(&a);
	int rc1 = pc_pageout(p, LEN);
	int rc2 = pc_managed() ? pc.pageout(p, LEN) : 0;
	pc_stats(&b);
	pc_info("%s: MADV_PAGEOUT %d, zswap_pageout %d", what, rc1, rc2);
	if (pc_managed()) {
		PC_CHECK(b.evicted_pages == a.evicted_pages, "%s: libzswap evicted %" PRIu64 " pages", what,
			 b.evicted_pages - a.evicted_pages);
		PC_CHECK(b.stored_pages == a.stored_pages && b.zswpout == a.zswpout, "%s: libzswap stored %" PRIu64 " pages",
			 what, b.zswpout - a.zswpout);
	}
}

int main(int argc, char **argv)
{
	pc_init("prog_shared", &argc, argv);
	pc_info("mode %s", pc_mode_name());

	/* A private anonymous mapping, evicted around the others. */
	char *priv = pc_map(LEN);
	pc_fill_range(priv, NPAGES, PC_TEXT, 1);
	pc_evict("private anonymous", priv, NPAGES, false);

	char *sh = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		pc_fail("mmap shared anonymous: %s", strerror(errno));
	pc_fill_range(sh, NPAGES, PC_TEXT, 2);
	offer("shared anonymous", sh);
	pc_expect_range("shared anonymous", sh, NPAGES, PC_TEXT, 2);

	int fd = tmpfile_fd();
	char *fs = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fs == MAP_FAILED)
		pc_fail("mmap shared file: %s", strerror(errno));
	pc_fill_range(fs, NPAGES, PC_BINARY, 3);
	offer("shared file", fs);
	pc_expect_range("shared file", fs, NPAGES, PC_BINARY, 3);
	{
		static unsigned char expect[PC_PAGE], got[PC_PAGE];
		for (size_t i = 0; i < NPAGES; i++) {
			if (pread(fd, got, PC_PAGE, (off_t)(i * PC_PAGE)) != (ssize_t)PC_PAGE)
				pc_fail("pread: %s", strerror(errno));
			pc_fill(expect, PC_BINARY, pc_page_seed(3, i));
			PC_CHECK(memcmp(got, expect, PC_PAGE) == 0, "shared file: page %zu of the file is wrong", i);
		}
	}

	char *fp = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (fp == MAP_FAILED)
		pc_fail("mmap private file: %s", strerror(errno));
	pc_fill_range(fp, NPAGES, PC_TEXT, 4);	/* copy-on-write: anonymous pages in a file mapping */
	offer("private file", fp);
	pc_expect_range("private file", fp, NPAGES, PC_TEXT, 4);

	char *ro = pc_map(LEN);
	pc_fill_range(ro, NPAGES, PC_TEXT, 5);
	if (mprotect(ro, LEN, PROT_READ) != 0)
		pc_fail("mprotect PROT_READ: %s", strerror(errno));
	offer("read-only anonymous", ro);
	pc_expect_range("read-only anonymous", ro, NPAGES, PC_TEXT, 5);

	char *pn = pc_map(LEN);
	pc_fill_range(pn, NPAGES, PC_TEXT, 6);
	if (mprotect(pn, LEN, PROT_NONE) != 0)
		pc_fail("mprotect PROT_NONE: %s", strerror(errno));
	offer("PROT_NONE anonymous", pn);
	if (mprotect(pn, LEN, PROT_READ | PROT_WRITE) != 0)
		pc_fail("mprotect back: %s", strerror(errno));
	pc_expect_range("PROT_NONE anonymous", pn, NPAGES, PC_TEXT, 6);

	pc_expect_range("private anonymous", priv, NPAGES, PC_TEXT, 1);
	pc_expect_stored("shared", 0);
	munmap(sh, LEN);
	munmap(fs, LEN);
	munmap(fp, LEN);
	munmap(ro, LEN);
	munmap(pn, LEN);
	munmap(priv, LEN);
	close(fd);
	printf("shared ok\n");
	return 0;
}
