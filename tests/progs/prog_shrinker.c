/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_shrinker.c - a memory cgroup filling up around a process whose pool
 * holds its cold pages (tests/engine/test_eng_shrinker.sh runs it inside a
 * cgroup v1 memory group of the test's own, under ZSWAP_COLD_AGE=1).
 *
 *   prog_shrinker MB SECONDS
 *       write MB of text pages and wait until the library has stored most
 *       of them (the cold age); then fill shared anonymous memory (which
 *       the library never manages) until the group's usage is within 1/32
 *       of its limit, and hold it there for SECONDS; then free it and
 *       check every page.
 *
 * stdout is the same with and without the library; stderr gets
 * "prog_shrinker: stat NAME=VALUE" lines: the pool before and after the
 * pressure, the pages written back meanwhile, and the group's usage.
 */
#include "prog_common.h"

static char usage_path[512], limit_path[512];

static uint64_t read_u64(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		pc_fail("read %s: %s", path, strerror(errno));
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

static void find_group(void)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || strncmp(c1 + 1, "memory:", 7) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(usage_path, sizeof(usage_path), "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", c2 + 1);
		snprintf(limit_path, sizeof(limit_path), "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", c2 + 1);
	}
	if (f)
		fclose(f);
	if (!usage_path[0])
		pc_skip("not in a cgroup v1 memory group");
}

int main(int argc, char **argv)
{
	struct zswap_stats st0, st1;

	pc_init("prog_shrinker", &argc, argv);
	if (argc < 3)
		pc_fail("usage: prog_shrinker MB SECONDS");
	size_t npages = (size_t)atol(argv[1]) * PC_MIB / PC_PAGE;
	int seconds = atoi(argv[2]);
	find_group();
	unsigned char *area = pc_map(npages * PC_PAGE);
	for (size_t i = 0; i < npages; i++)
		pc_fill(area + i * PC_PAGE, PC_TEXT, pc_page_seed(3, i));

	/* The cold age stores it all (at most 30 s): the pool measured before
	 * the pressure is all the pool there will be. A pass still storing
	 * meanwhile would grow the pool while the shrinker shrinks it, and the
	 * compression alone could take the group out of the pressure band
	 * before anything is written back. A loaded machine can pause between
	 * passes, so "no more to come" is every page stored, or the count
	 * unchanged for two seconds. */
	memset(&st0, 0, sizeof(st0));
	uint64_t seen = UINT64_MAX;
	int still = 0;
	for (int t = 0; pc_managed() && t < 300; t++) {
		pc_stats(&st0);
		if (st0.stored_pages >= npages - npages / 64)
			break;
		still = st0.stored_pages == seen ? still + 1 : 0;
		if (st0.stored_pages >= npages * 3 / 4 && still >= 20)
			break;
		seen = st0.stored_pages;
		usleep(100000);
	}
	if (pc_managed() && st0.stored_pages < npages * 3 / 4)
		pc_fail("only %" PRIu64 " of %zu pages were stored after 30 s", st0.stored_pages, npages);

	/* The group near its limit: shared memory the library leaves alone. */
	uint64_t limit = read_u64(limit_path);
	size_t chunk = PC_MIB, got = 0, cap = 1024 * PC_MIB;
	unsigned char *shared = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		pc_fail("mmap shared: %s", strerror(errno));
	while (read_u64(usage_path) < limit - limit / 32 && got + chunk <= cap) {
		memset(shared + got, 0x5a, chunk);
		got += chunk;
	}
	uint64_t usage0 = read_u64(usage_path);
	sleep((unsigned int)seconds);
	uint64_t usage1 = read_u64(usage_path);

	memset(&st1, 0, sizeof(st1));
	if (pc_managed())
		pc_stats(&st1);
	munmap(shared, cap);	/* room for the pages to come back */
	for (size_t i = 0; i < npages; i++) {
		unsigned char expect[PC_PAGE];
		pc_fill(expect, PC_TEXT, pc_page_seed(3, i));
		if (memcmp(area + i * PC_PAGE, expect, PC_PAGE) != 0)
			pc_fail("page %zu is wrong", i);
	}
	fprintf(stderr, "prog_shrinker: stat limit_kb=%" PRIu64 "\n", limit >> 10);
	fprintf(stderr, "prog_shrinker: stat shared_kb=%zu\n", got >> 10);
	fprintf(stderr, "prog_shrinker: stat usage_before_kb=%" PRIu64 "\n", usage0 >> 10);
	fprintf(stderr, "prog_shrinker: stat usage_after_kb=%" PRIu64 "\n", usage1 >> 10);
	fprintf(stderr, "prog_shrinker: stat stored_before=%" PRIu64 " of %zu\n", st0.stored_pages, npages);
	fprintf(stderr, "prog_shrinker: stat pool_before_kb=%" PRIu64 "\n", st0.pool_total_size >> 10);
	fprintf(stderr, "prog_shrinker: stat pool_after_kb=%" PRIu64 "\n", st1.pool_total_size >> 10);
	fprintf(stderr, "prog_shrinker: stat written_back_pages=%" PRIu64 "\n",
		st1.written_back_pages - st0.written_back_pages);
	printf("%zu pages of text checked after the group filled up: ok\n", npages);
	return 0;
}
