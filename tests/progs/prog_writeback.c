/*
 * prog_writeback.c - more data than a memory limit holds even compressed
 * (tests/engine/test_eng_writeback.sh runs it under ZSWAP_MEMORY_LIMIT).
 *
 *   prog_writeback fill MB text|random
 *       write MB of pages of that kind, read every page back, then rewrite
 *       and check a pseudo-random tenth of them; random pages do not
 *       compress at all, text about 1.8 to 1
 *   prog_writeback fork MB
 *       fill MB of random pages, wait (at most 20 s) until the library has
 *       written some back, fork: the child and the parent each check every
 *       page, rewrite their own half with their own seed and check all
 *       again; the parent checks once more after the child exited
 *
 * stdout is the same with and without the library; stderr gets
 * "prog_writeback: vmhwm_kb=N" and, under the library, the tier's counters
 * as "prog_writeback: stat NAME=VALUE".
 */
#include "prog_common.h"

#include <sys/wait.h>

static unsigned char *area;
static size_t npages;

static void fill_page(size_t i, enum pc_kind kind, uint64_t seed)
{
	pc_fill(area + i * PC_PAGE, kind, pc_page_seed(seed, i));
}

static void check_page(size_t i, enum pc_kind kind, uint64_t seed, const char *who)
{
	static unsigned char expect[PC_PAGE];

	pc_fill(expect, kind, pc_page_seed(seed, i));
	if (memcmp(area + i * PC_PAGE, expect, PC_PAGE) != 0)
		pc_fail("%s: page %zu is wrong: %s", who, i, pc_describe(area + i * PC_PAGE, kind, pc_page_seed(seed, i)));
}

static void report(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			fprintf(stderr, "prog_writeback: vmhwm_kb=%lld\n", atoll(line + 6));
	if (f)
		fclose(f);
	if (pc_managed()) {
		struct zswap_stats st;
		pc_stats(&st);
		fprintf(stderr, "prog_writeback: stat written_back_pages=%" PRIu64 "\n", st.written_back_pages);
		fprintf(stderr, "prog_writeback: stat bd_reads=%" PRIu64 "\n", st.bd_reads);
		fprintf(stderr, "prog_writeback: stat writeback_failed=%" PRIu64 "\n", st.writeback_failed);
		fprintf(stderr, "prog_writeback: stat poisoned_pages=%" PRIu64 "\n", st.poisoned_pages);
	}
}

static uint64_t written_back(void)
{
	struct zswap_stats st;

	if (!pc_managed())
		return 1;
	pc_stats(&st);
	return st.written_back_pages;
}

/* The child and the parent after fork: everything, then a half of their own. */
static void fork_side(const char *who, size_t half, uint64_t seed)
{
	for (size_t i = 0; i < npages; i++)
		check_page(i, PC_RANDOM, 7, who);
	for (size_t i = half * (npages / 2); i < (half + 1) * (npages / 2); i++)
		fill_page(i, PC_RANDOM, seed);
	for (size_t i = 0; i < npages; i++) {
		bool mine = i >= half * (npages / 2) && i < (half + 1) * (npages / 2);
		check_page(i, PC_RANDOM, mine ? seed : 7, who);
	}
}

int main(int argc, char **argv)
{
	pc_init("prog_writeback", &argc, argv);
	if (argc < 3)
		pc_fail("usage: prog_writeback fill MB text|random | fork MB");
	const char *mode = argv[1];
	npages = (size_t)atol(argv[2]) * PC_MIB / PC_PAGE;
	area = mmap(NULL, npages * PC_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		pc_fail("mmap: %s", strerror(errno));

	if (strcmp(mode, "fill") == 0) {
		enum pc_kind kind = argc > 3 && strcmp(argv[3], "random") == 0 ? PC_RANDOM : PC_TEXT;
		for (size_t i = 0; i < npages; i++)
			fill_page(i, kind, 3);
		for (size_t i = 0; i < npages; i++)
			check_page(i, kind, 3, "read back");
		uint64_t x = 12345;
		for (size_t k = 0; k < npages / 10; k++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t i = (size_t)(x >> 33) % npages;
			fill_page(i, kind, 5);
			check_page(i, kind, 5, "rewritten");
			fill_page(i, kind, 3);
		}
		for (size_t i = 0; i < npages; i++)
			check_page(i, kind, 3, "at the end");
		printf("fill %zu pages of %s: ok\n", npages, kind == PC_RANDOM ? "random" : "text");
	} else if (strcmp(mode, "fork") == 0) {
		for (size_t i = 0; i < npages; i++)
			fill_page(i, PC_RANDOM, 7);
		for (int t = 0; t < 200 && !written_back(); t++)
			usleep(100000);
		if (!written_back())
			pc_fail("nothing was written back before the fork");
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			pc_fail("fork: %s", strerror(errno));
		if (pid == 0) {
			fork_side("child", 0, 11);
			_exit(0);
		}
		fork_side("parent", 1, 13);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			pc_fail("the child failed (status %d)", status);
		for (size_t i = 0; i < npages; i++)
			check_page(i, PC_RANDOM, i >= npages / 2 && i < 2 * (npages / 2) ? 13 : 7, "parent after the child");
		printf("fork over %zu pages: ok\n", npages);
	} else {
		pc_fail("unknown mode %s", mode);
	}
	report();
	return 0;
}
