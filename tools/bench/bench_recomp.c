/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_recomp.c - the pages of a file at rest in a process's pool, for
 * tools/bench/bench_recomp.sh to recompress through zswapctl: the file is
 * read into anonymous memory, paged out (MADV_PAGEOUT), "ready PID" is
 * printed, and the program waits until its standard input ends; then it
 * checks every page against the file and exits 0, or 1 on a difference.
 *
 * usage: bench_recomp FILE   (run under libzswap)
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"

#define PAGE 4096

/* The file's whole pages into fresh memory (len bytes). */
static char *load(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
		bench_die("%s: cannot open", path);
	*len = (size_t)st.st_size / PAGE * PAGE;
	if (!*len)
		bench_die("%s: no whole page", path);
	char *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		bench_die("mmap of %zu bytes failed", *len);
	for (size_t off = 0; off < *len;) {
		ssize_t n = pread(fd, p + off, *len - off, (off_t)off);
		if (n <= 0)
			bench_die("%s: read failed", path);
		off += (size_t)n;
	}
	close(fd);
	return p;
}

int main(int argc, char **argv)
{
	size_t len, ref_len;
	char buf[64];

	if (argc != 2)
		bench_die("usage: bench_recomp FILE");
	char *p = load(argv[1], &len);
	if (madvise(p, len, MADV_PAGEOUT) != 0)
		bench_die("madvise(MADV_PAGEOUT) failed");
	printf("ready %ld %zu\n", (long)getpid(), len / PAGE);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	char *ref = load(argv[1], &ref_len);
	for (size_t off = 0; off < len; off += PAGE)
		if (memcmp(p + off, ref + off, PAGE))
			bench_die("page %zu differs from the file", off / PAGE);
	printf("checked %zu pages\n", len / PAGE);
	return 0;
}
