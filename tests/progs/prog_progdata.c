/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_progdata.c - the main program's data segment made anonymous at start
 * (ZSWAP_PROGRAM_DATA, src/engine/progdata.h).
 *
 * The program has 512 KiB of initialised data (pd_data, in .data: a private
 * mapping of this executable). Each case fills it with a pattern, asks for
 * its eviction with madvise(MADV_PAGEOUT), reads it back and verifies it:
 *   anon     the library started with this one thread: the mapping
 *            holding pd_data has no file now, every page is evicted and
 *            comes back intact;
 *   file     the same with ZSWAP_PROGRAM_DATA=0, or without the library:
 *            the mapping is still this executable's, nothing is evicted,
 *            the data intact;
 *   threads  a second thread runs when the library starts (a deferred
 *            start, which zswap_active() brings forward): the copy could
 *            race that thread's writes, so the mapping must stay the
 *            executable's; the thread writes pd_data all along and every
 *            write it made is there at the end.
 * Prints "progdata ok".
 */
#include "prog_common.h"

#include <pthread.h>
#include <stdatomic.h>

#define PD_PAGES 128UL

static unsigned char pd_data[PD_PAGES * PC_PAGE] __attribute__((aligned(4096))) = { 1 };

/* Whether the mapping holding addr names a file in /proc/self/maps. */
static bool pd_file_backed(const void *addr)
{
	char line[1024];
	uintptr_t a = (uintptr_t)addr;
	FILE *f = fopen("/proc/self/maps", "r");
	bool file = false, found = false;

	if (!f)
		pc_fail("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, ino;
		char perms[8], dev[16];
		int path = 0;

		if (sscanf(line, "%lx-%lx %7s %*x %15s %lu %n", &s, &e, perms, dev, &ino, &path) < 5)
			continue;
		if (a < s || a >= e)
			continue;
		found = true;
		file = ino != 0;
		break;
	}
	fclose(f);
	if (!found)
		pc_fail("pd_data at %p is in no mapping", addr);
	return file;
}

/* The thread of "threads": its own pages of pd_data (the last 16), a counter
 * written into each, round after round, until told to stop. */
#define PD_THREAD_PAGES 16UL
static _Atomic bool pd_stop;
static uint64_t pd_rounds;

static void *pd_writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&pd_stop)) {
		pd_rounds++;
		for (size_t i = PD_PAGES - PD_THREAD_PAGES; i < PD_PAGES; i++)
			memcpy(pd_data + i * PC_PAGE, &pd_rounds, sizeof(pd_rounds));
		pc_sleep_ms(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	bool threads = strcmp(how, "threads") == 0;
	pthread_t t;

	/* pc_init starts a deferred library (zswap_active): the thread first. */
	if (threads && pthread_create(&t, NULL, pd_writer, NULL) != 0) {
		fprintf(stderr, "prog_progdata: pthread_create failed\n");
		return 1;
	}
	pc_init("prog_progdata", &argc, argv);
	if (argc != 2 || (strcmp(how, "anon") && strcmp(how, "file") && !threads))
		pc_fail("usage: prog_progdata anon|file|threads");

	bool want_file = strcmp(how, "anon") != 0 || !pc_managed();
	bool file = pd_file_backed(pd_data);

	if (file != want_file)
		pc_fail("%s: the data segment is %s, expected %s", how, file ? "a file mapping" : "anonymous",
			want_file ? "a file mapping" : "anonymous");

	size_t fill = threads ? PD_PAGES - PD_THREAD_PAGES : PD_PAGES;
	pc_fill_range(pd_data, fill, PC_TEXT, 7);
	if (!file) {
		pc_evict(how, pd_data, PD_PAGES, false);
	} else if (pc_managed()) {
		struct zswap_stats a, b;

		pc_stats(&a);
		pc_pageout(pd_data, fill * PC_PAGE);
		pc_stats(&b);
		PC_CHECK(b.evicted_pages == a.evicted_pages, "%s: %" PRIu64 " pages of a file mapping evicted",
			 how, b.evicted_pages - a.evicted_pages);
	}
	pc_expect_range(how, pd_data, fill, PC_TEXT, 7);
	if (threads) {
		atomic_store(&pd_stop, true);
		pthread_join(t, NULL);
		for (size_t i = PD_PAGES - PD_THREAD_PAGES; i < PD_PAGES; i++) {
			uint64_t v;
			memcpy(&v, pd_data + i * PC_PAGE, sizeof(v));
			if (v != pd_rounds)
				pc_fail("threads: page %zu holds round %" PRIu64 ", the writer's last was %" PRIu64,
					i, v, pd_rounds);
		}
	}
	printf("progdata ok (%s, %s)\n", how, pc_mode_name());
	return 0;
}
