/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_compswitch.c - refault latency while ZSWAP_COMPRESSOR changes
 * under it, against rounds where it does not, in one run.
 *
 * Run under the library by tools/bench/bench_compswitch.sh, which changes
 * the compressor (zswapctl set PID compressor=...) during the rounds this
 * program names "switch". Each round fills SIZE with text pages, pages
 * them out (MADV_PAGEOUT: stored with the compressor of the moment, lz4),
 * creates DIR/round.R.MODE, waits for DIR/go.R, then reads the range back
 * page by page, timing the first touch of each page (one refault: the
 * script turns readahead off), checks every byte, creates DIR/done.R and
 * waits for DIR/ack.R. Rounds alternate steady and switch, so a drift of
 * the machine falls on both alike.
 *
 * Output: one "RESULT mode=steady|switch ..." line per mode with the
 * refaults timed and their p50/p90/p99/p99.9/max in microseconds. The
 * figures are judged by no one here; a page that reads back wrong exits 1.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_text.h"
#include "bench_util.h"

static const char *dir;

static void usage(void)
{
	fprintf(stderr, "usage: bench_compswitch --dir DIR [--size SIZE] [--rounds N] [--text-dirs DIRS]\n"
		"  (run by tools/bench/bench_compswitch.sh)\n");
	exit(2);
}

static void say(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		bench_die("%s: %s", path, strerror(errno));
	close(fd);
}

/* Until DIR/name exists (the script answers within seconds; it is killed
 * with the script otherwise). */
static void await(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (access(path, F_OK) != 0)
		usleep(2000);
}

int main(int argc, char **argv)
{
	uint64_t size = 64ull << 20;
	unsigned int rounds = 6;
	const char *text_dirs = BENCH_TEXT_DIRS;
	const struct bench_arg args[] = {
		BENCH_TEXT("dir", dir),
		BENCH_SIZE("size", size, 1),
		BENCH_UINT("rounds", rounds, 2, 1000),
		BENCH_TEXT("text-dirs", text_dirs),
		BENCH_ARGS_END,
	};
	struct bench_text text;
	char name[64];

	if (bench_args(argc, argv, 1, args, usage) != argc || !dir)
		usage();
	size_t npages = size / BENCH_PAGE;
	size = npages * BENCH_PAGE;
	bench_text_load(&text, text_dirs, BENCH_TEXT_CAP);
	char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *hashes = malloc(npages * sizeof(*hashes));
	/* Per mode: every round's refaults of that mode. */
	uint32_t *lat[2] = { malloc(npages * (rounds / 2 + 1) * sizeof(uint32_t)),
			     malloc(npages * (rounds / 2 + 1) * sizeof(uint32_t)) };
	size_t n[2] = { 0, 0 };
	if (map == MAP_FAILED || !hashes || !lat[0] || !lat[1])
		bench_die("out of memory");

	for (unsigned int r = 0; r < rounds; r++) {
		unsigned int mode = r % 2;	/* 0 steady, 1 switch */

		bench_text_fill(&text, map, npages, 1000 + r);
		for (size_t i = 0; i < npages; i++)
			hashes[i] = bench_hash(map + i * BENCH_PAGE, BENCH_PAGE);
		if (madvise(map, size, MADV_PAGEOUT) != 0)
			bench_die("madvise(MADV_PAGEOUT): %s", strerror(errno));
		snprintf(name, sizeof(name), "round.%u.%s", r, mode ? "switch" : "steady");
		say(name);
		snprintf(name, sizeof(name), "go.%u", r);
		await(name);
		for (size_t i = 0; i < npages; i++) {
			volatile uint64_t *p = (volatile uint64_t *)(map + i * BENCH_PAGE);
			uint64_t a = bench_now_ns();

			(void)*p;
			lat[mode][n[mode]++] = (uint32_t)(bench_now_ns() - a);
		}
		for (size_t i = 0; i < npages; i++)
			if (bench_hash(map + i * BENCH_PAGE, BENCH_PAGE) != hashes[i])
				bench_die("round %u: page %zu reads back wrong", r, i);
		snprintf(name, sizeof(name), "done.%u", r);
		say(name);
		snprintf(name, sizeof(name), "ack.%u", r);
		await(name);
	}
	for (unsigned int mode = 0; mode < 2; mode++) {
		struct bench_pct pct;

		bench_percentiles(lat[mode], n[mode], &pct);
		printf("RESULT mode=%s size=%llu rounds=%u refaults=%zu p50_us=%.1f p90_us=%.1f p99_us=%.1f"
		       " p999_us=%.1f max_us=%.1f\n", mode ? "switch" : "steady", (unsigned long long)size,
		       (rounds + 1 - mode) / 2, n[mode], pct.p50, pct.p90, pct.p99, pct.p999, pct.max);
	}
	return 0;
}
