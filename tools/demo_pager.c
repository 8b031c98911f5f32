/*
 * demo_pager.c - the main job's second half: an ordinary program holding more
 * data than its memory limit, paged through libzswap.
 *
 * It maps --mb MiB, fills it chunk by chunk with text-like pages (text read
 * from files on this machine, each page stamped with its index so every page
 * is different and checkable), and after each chunk asks for it to be paged
 * out with madvise(MADV_PAGEOUT), as a program that knows its cold data would.
 * Then it reads everything back, chunk by chunk, verifying every byte, and
 * pages each verified chunk out again. Run under LD_PRELOAD=libzswap.so inside
 * a memory cgroup smaller than the data (scripts/demo.sh does), its resident
 * set stays near one chunk plus the compressed pool.
 *
 * Nothing here knows about libzswap except the statistics, found with dlsym
 * so that the same binary runs (and fails under the limit) without it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "zswap.h"

#define PAGE 4096UL
#define TEXT_MAX (16UL << 20)

static char *text;
static size_t text_len;

/* Gather up to TEXT_MAX bytes of text from the files under dir. */
static void gather_text(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d || depth > 6)
		goto out;
	while (text_len < TEXT_MAX && (e = readdir(d))) {
		char path[4096];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			gather_text(path, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			int fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, text + text_len, TEXT_MAX - text_len);
			if (n > 0)
				text_len += (size_t)n;
			close(fd);
		}
	}
out:
	if (d)
		closedir(d);
}

/* The expected contents of page i: a stamp, then text from a position that
 * depends on i. Deterministic, so verification needs no copy. */
static void make_page(char *dst, size_t i)
{
	size_t off = (i * 2654435761UL) % (text_len - PAGE);

	memcpy(dst, text + off, PAGE);
	memcpy(dst, &i, sizeof(i));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = atol(line + strlen(key) + 1);
	fclose(f);
	return v;
}

static int (*stats_fn)(struct zswap_stats *, size_t);

static void show(const char *when)
{
	struct zswap_stats st = { 0 };

	printf("%-22s RSS %6ld MiB (peak %6ld MiB)", when, status_kb("VmRSS:") / 1024,
	       status_kb("VmHWM:") / 1024);
	if (stats_fn && stats_fn(&st, sizeof(st)) == 0)
		printf("  stored_pages %8llu  pool_total_size %5llu MiB  zswpout %8llu  zswpin %8llu",
		       (unsigned long long)st.stored_pages,
		       (unsigned long long)(st.pool_total_size >> 20),
		       (unsigned long long)st.zswpout, (unsigned long long)st.zswpin);
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t mb = 1024, chunk_mb = 32;
	double t0, t1, t2;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mb") && i + 1 < argc)
			mb = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--chunk-mb") && i + 1 < argc)
			chunk_mb = strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--mb N] [--chunk-mb N]\n", argv[0]);
			return 2;
		}
	}
	if (!mb || !chunk_mb || chunk_mb > mb) {
		fprintf(stderr, "demo_pager: need 0 < --chunk-mb <= --mb\n");
		return 2;
	}

	stats_fn = (int (*)(struct zswap_stats *, size_t))dlsym(RTLD_DEFAULT, "zswap_stats");
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "zswap_active");
	printf("libzswap: %s\n", active && active() ? "active" : "NOT active (pages stay resident)");

	text = malloc(TEXT_MAX);
	if (!text)
		return 1;
	gather_text("/usr/include", 0);
	gather_text("/usr/share/doc", 0);
	if (text_len < 2 * PAGE) {
		fprintf(stderr, "demo_pager: found too little text under /usr/include and /usr/share/doc\n");
		return 1;
	}
	printf("text sample: %zu KiB from /usr/include and /usr/share/doc\n", text_len >> 10);

	size_t len = mb << 20, chunk = chunk_mb << 20, pages = len / PAGE;
	char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	t0 = now();
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		for (size_t p = off / PAGE; p < (off + n) / PAGE; p++)
			make_page(mem + p * PAGE, p);
		if (madvise(mem + off, n, MADV_PAGEOUT) < 0)
			perror("madvise(MADV_PAGEOUT)");
	}
	t1 = now();
	printf("wrote %zu MiB in %zu MiB chunks, paging each out: %.2f s\n", mb, chunk_mb, t1 - t0);
	show("after writing:");

	char expect[PAGE];
	size_t bad = 0;
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		for (size_t p = off / PAGE; p < (off + n) / PAGE; p++) {
			make_page(expect, p);
			if (memcmp(mem + p * PAGE, expect, PAGE) != 0 && bad++ < 5)
				fprintf(stderr, "demo_pager: page %zu differs\n", p);
		}
		madvise(mem + off, n, MADV_PAGEOUT);
	}
	t2 = now();
	printf("read back and verified %zu pages: %.2f s, %zu wrong\n", pages, t2 - t1, bad);
	show("after verifying:");

	if (stats_fn) {
		struct zswap_stats st = { 0 };
		if (stats_fn(&st, sizeof(st)) == 0 && st.compr_data_size)
			printf("compression: orig_data_size %llu MiB, compr_data_size %llu MiB (ratio %.2f), "
			       "mem_used_total %llu MiB, same_pages %llu, huge_pages %llu\n",
			       (unsigned long long)(st.orig_data_size >> 20),
			       (unsigned long long)(st.compr_data_size >> 20),
			       (double)st.orig_data_size / (double)st.compr_data_size,
			       (unsigned long long)(st.mem_used_total >> 20),
			       (unsigned long long)st.same_pages, (unsigned long long)st.huge_pages);
	}
	if (bad) {
		printf("FAILED: %zu pages differ\n", bad);
		return 1;
	}
	printf("OK: %zu MiB held and verified with a peak RSS of %ld MiB\n", mb, status_kb("VmHWM:") / 1024);
	return 0;
}
