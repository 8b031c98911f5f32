/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_pagecache.c - file pages and the charge (src/engine/pagecache.h).
 *
 *   prog_pagecache FILE ANON_MB warm|cold
 *
 * Maps FILE read-only and reads every page of it (cold: its page cache
 * dropped first, with posix_fadvise, so this process reads it in), then
 * fills ANON_MB of anonymous memory and checks every page of it twice over. Prints "checksum" (the file's and the memory's) and one
 * line of figures: file_mapped_kb (what the library charges of the file
 * pages), pgsteal, refaults, vmhwm_kb, rss_file_kb (at the end).
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prog_common.h"

int main(int argc, char **argv)
{
	struct zswap_stats st;
	struct stat sb;

	pc_init("prog_pagecache", &argc, argv);
	if (argc != 4)
		pc_fail("usage: prog_pagecache FILE ANON_MB warm|cold");
	size_t anon_pages = strtoul(argv[2], NULL, 10) * PC_MIB / PC_PAGE;
	bool cold = strcmp(argv[3], "cold") == 0;
	int fd = open(argv[1], O_RDONLY);
	PC_CHECK(fd >= 0 && fstat(fd, &sb) == 0, "open %s", argv[1]);
	if (cold)
		PC_CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0, "posix_fadvise");
	size_t flen = (size_t)sb.st_size & ~(PC_PAGE - 1);
	const unsigned char *f = mmap(NULL, flen, PROT_READ, MAP_PRIVATE, fd, 0);
	PC_CHECK(f != MAP_FAILED, "mmap %s", argv[1]);
	uint64_t fsum = pc_sum(f, flen);

	unsigned char *a = pc_map(anon_pages * PC_PAGE);
	pc_fill_range(a, anon_pages, PC_TEXT, 7);
	for (int pass = 0; pass < 2; pass++)
		pc_expect_range("anon", a, anon_pages, PC_TEXT, 7);
	pc_stats(&st);
	printf("checksum %016llx\n", (unsigned long long)fsum);
	fprintf(stderr, "prog_pagecache: file_mapped_kb=%llu pgsteal=%llu refaults=%llu vmhwm_kb=%ld rss_file_kb=%ld\n",
		(unsigned long long)(st.file_mapped >> 10), (unsigned long long)st.pgsteal,
		(unsigned long long)st.refaults, pc_status_kb("VmHWM"), pc_status_kb("RssFile"));
	return 0;
}
