/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_exec.c - what a preloaded library costs every program a shell script
 * or a build runs: the wall time of posix_spawn() and waitpid() of one short
 * program (default /bin/true), under each environment given, in interleaved
 * rounds so that the machine's drift falls on every variant alike.
 *
 *   bench_exec [--runs N] [--rounds R] [--prog PATH] [--fork] [--warm MS] [--pageout N] VARIANT...
 *
 * A VARIANT is a space-separated list of NAME=VALUE settings making up the
 * whole environment of the spawned program ("-" for an empty one), e.g.
 * "LD_PRELOAD=build/.libs/libzswap.so ZSWAP_ENABLED=0". With --fork each
 * run is a fork() of this program instead, the child leaving at once with
 * _exit(): what a long-lived process's command substitution costs (run
 * this program itself under the library then, with its one VARIANT "-").
 * --warm MS first sleeps MS milliseconds and then maps and unmaps 1 MiB
 * (with malloc): a library that defers its start (ZSWAP_START_DELAY) starts
 * there, as in a shell that lived that long. --pageout N (with --fork)
 * fills 4 MiB of text-like pages, and before each fork asks MADV_PAGEOUT
 * for the first N of them (untimed; the pages are read back after the
 * child ended, untimed too): a fork with that much stored, as the cold age
 * leaves a long-lived shell.
 * Output: one "RESULT bench=exec ..." line per variant, the mean over all
 * rounds, in microseconds. Never judges.
 */
#include "config.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_EXEC_VARS 32
#define BENCH_EXEC_VARIANTS 16
#define BENCH_EXEC_PAGE 4096
#define BENCH_EXEC_PAGES 1024	/* --pageout's 4 MiB */

static double bench_exec_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Split a variant into its environment (the strings stay in spec). */
static void bench_exec_env(char *spec, char **envp)
{
	size_t k = 0;

	for (char *save = NULL, *t = strtok_r(spec, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (strcmp(t, "-") != 0 && k < BENCH_EXEC_VARS)
			envp[k++] = t;
	envp[k] = NULL;
}

static int bench_exec_one(const char *prog, char **envp, int use_fork)
{
	pid_t pid;
	int st;

	if (use_fork) {
		pid = fork();
		if (pid < 0)
			return -errno;
		if (pid == 0)
			_exit(0);
	} else {
		char *argv[] = { (char *)prog, NULL };
		int e = posix_spawn(&pid, prog, NULL, NULL, argv, envp);
		if (e)
			return -e;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -ECHILD;
	return 0;
}

int main(int argc, char **argv)
{
	static char *envs[BENCH_EXEC_VARIANTS][BENCH_EXEC_VARS + 1];
	double total[BENCH_EXEC_VARIANTS] = { 0 };
	const char *names[BENCH_EXEC_VARIANTS], *prog = "/bin/true";
	int runs = 300, rounds = 5, use_fork = 0, warm_ms = 0, nv = 0, pageout = 0;
	unsigned char *buf = NULL;
	unsigned long sum = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--prog") == 0 && i + 1 < argc) {
			prog = argv[++i];
		} else if (strcmp(argv[i], "--fork") == 0) {
			use_fork = 1;
		} else if (strcmp(argv[i], "--warm") == 0 && i + 1 < argc) {
			warm_ms = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--pageout") == 0 && i + 1 < argc) {
			pageout = atoi(argv[++i]);
		} else if (nv < BENCH_EXEC_VARIANTS) {
			names[nv] = argv[i];
			char *spec = strdup(argv[i]);
			if (!spec)
				return 1;
			bench_exec_env(spec, envs[nv++]);
		} else {
			fprintf(stderr, "bench_exec: at most %d variants\n", BENCH_EXEC_VARIANTS);
			return 2;
		}
	}
	if (!nv || runs <= 0 || rounds <= 0 || pageout < 0 || pageout > BENCH_EXEC_PAGES || (pageout && !use_fork)) {
		fprintf(stderr, "usage: bench_exec [--runs N] [--rounds R] [--prog PATH] [--fork] [--warm MS]"
				" [--pageout N (at most %d, with --fork)] VARIANT...\n", BENCH_EXEC_PAGES);
		return 2;
	}
	if (warm_ms > 0) {
		struct timespec ts = { warm_ms / 1000, (long)(warm_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		volatile char *p = malloc(1 << 20);
		if (!p)
			return 1;
		p[0] = 1;
		free((void *)p);
	}
	if (pageout) {
		static const char text[] = "lorem ipsum dolor sit amet, consectetur adipiscing elit ";
		buf = mmap(NULL, BENCH_EXEC_PAGES * BENCH_EXEC_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (buf == MAP_FAILED)
			return 1;
		for (size_t i = 0; i < (size_t)BENCH_EXEC_PAGES * BENCH_EXEC_PAGE; i++)
			buf[i] = (unsigned char)(text[i % (sizeof(text) - 1)] ^ (i / BENCH_EXEC_PAGE));
	}
	for (int r = 0; r < rounds; r++) {
		for (int v = 0; v < nv; v++) {
			for (int i = 0; i < runs; i++) {
				if (pageout && madvise(buf, (size_t)pageout * BENCH_EXEC_PAGE, MADV_PAGEOUT) != 0) {
					fprintf(stderr, "bench_exec: MADV_PAGEOUT: %s\n", strerror(errno));
					return 1;
				}
				double t0 = bench_exec_now();
				int rc = bench_exec_one(prog, envs[v], use_fork);
				total[v] += bench_exec_now() - t0;
				if (rc) {
					fprintf(stderr, "bench_exec: %s under \"%s\": %s\n", prog, names[v], strerror(-rc));
					return 1;
				}
				for (int k = 0; k < pageout; k++)
					sum += buf[(size_t)k * BENCH_EXEC_PAGE];
			}
		}
	}
	for (int v = 0; v < nv; v++)
		printf("RESULT bench=exec mode=%s runs=%d rounds=%d pageout=%d us=%.1f env=\"%s\"\n",
		       use_fork ? "fork" : "spawn", runs, rounds, pageout, total[v] / ((double)rounds * runs) * 1e6,
		       names[v]);
	if (sum == 1)	/* keeps the reads */
		fprintf(stderr, "\n");
	return 0;
}
