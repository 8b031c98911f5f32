/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_fds - a program that does what it likes with file descriptors while
 * some of its memory is evicted (tests/engine/test_eng_fds.sh).
 *
 *   prog_fds close-all     close() every descriptor from 3 to 4095
 *   prog_fds closefrom     closefrom(3)
 *   prog_fds close-range   close_range(3, ~0U, 0)
 *   prog_fds dup2-all      dup2() a file onto every descriptor from 3 to
 *                          1023, as a shell's `exec N>file` does (those the
 *                          library keeps fail with EBUSY; every other one
 *                          must work), then close them
 *   prog_fds raw-close     the close_range system call itself, which no
 *                          interposition sees: the evicted pages are lost
 *                          (they read as zeros), and the library must say
 *                          so; prints nothing of the data
 *
 * Each: 16 MiB of text pages written and evicted (MADV_PAGEOUT), the
 * descriptors dealt with, every page checked, then a fork whose child checks
 * every page too and exits (the fork itself hung when the library's fork
 * eventfd had been replaced), then a last check in the parent. stdout is the
 * same with and without the library.
 */
#include "prog_common.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NPAGES 4096
#define SEED 0xfd5eedULL

static char *mem;

static void check(const char *what)
{
	pc_expect_range(what, mem, NPAGES, PC_TEXT, SEED);
}

/* dup2 onto 3..1023: returns how many were refused (EBUSY), failing on any
 * other error. */
static int dup2_all(void)
{
	int file = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int busy = 0;

	if (file < 0)
		pc_fail("open /dev/null: %s", strerror(errno));
	for (int fd = 3; fd < 1024; fd++) {
		if (fd == file)
			continue;
		if (dup2(file, fd) == fd)
			continue;
		if (errno != EBUSY)
			pc_fail("dup2 onto %d: %s", fd, strerror(errno));
		busy++;
	}
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	return busy;
}

int main(int argc, char **argv)
{
	pc_init("prog_fds", &argc, argv);
	if (argc != 2)
		pc_fail("usage: prog_fds close-all|closefrom|close-range|dup2-all|raw-close");
	const char *mode = argv[1];

	mem = pc_map(NPAGES * PC_PAGE);
	pc_fill_range(mem, NPAGES, PC_TEXT, SEED);
	pc_evict("before", mem, NPAGES, false);

	if (strcmp(mode, "close-all") == 0) {
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	} else if (strcmp(mode, "closefrom") == 0) {
		closefrom(3);
	} else if (strcmp(mode, "close-range") == 0) {
		if (close_range(3, ~0U, 0) != 0)
			pc_fail("close_range: %s", strerror(errno));
	} else if (strcmp(mode, "raw-close") == 0) {
		syscall(SYS_close_range, 3, ~0U, 0);
		volatile char c = mem[0];	/* a fault: the handler wakes to a closed descriptor */
		(void)c;
		pc_sleep_ms(200);
		printf("raw-close: done\n");
		return 0;
	} else if (strcmp(mode, "dup2-all") == 0) {
		int busy = dup2_all();
		/* Not printed: the count differs with and without the library. */
		if (!pc_managed() && busy)
			pc_fail("dup2 refused %d descriptors without libzswap", busy);
	} else {
		pc_fail("unknown mode %s", mode);
	}
	pc_pagemap_reopen();	/* prog_common's own, closed with the rest */
	check("after the descriptors");
	printf("%s: all %d pages intact\n", mode, NPAGES);

	/* Evict again, and fork: the child reads every page. */
	pc_evict("before fork", mem, NPAGES, false);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		pc_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		check("child");
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		pc_fail("the child failed (status %#x)", status);
	check("parent after fork");
	printf("%s: fork and child intact\n", mode);
	return 0;
}
