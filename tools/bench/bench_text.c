/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_text.c - a fixed corpus of real text, sliced into pages with a seed.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_text.h"
#include "bench_util.h"

/* Append the file at path if it looks like text. */
static void add_file(struct bench_text *t, const char *path, size_t cap)
{
	struct stat st;
	ssize_t n;
	size_t want;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 256)
		goto out;
	want = (size_t)st.st_size;
	if (want > cap - t->len)
		want = cap - t->len;
	n = read(fd, t->buf + t->len, want);
	if (n < 256)
		goto out;
	/* Compressed or binary files (changelog.gz) are not text. */
	if (memchr(t->buf + t->len, '\0', (size_t)n))
		goto out;
	t->len += (size_t)n;
	t->files++;
out:
	close(fd);
}

/* Walk dir in sorted name order (alphasort in the C locale: deterministic). */
static void walk(struct bench_text *t, const char *dir, size_t cap, int depth)
{
	struct dirent **ents;
	char path[PATH_MAX];
	int n;

	if (depth > 16)
		return;
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		struct stat st;

		if (t->len < cap && name[0] != '.' &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) < sizeof(path) &&
		    lstat(path, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				walk(t, path, cap, depth + 1);
			else if (S_ISREG(st.st_mode))
				add_file(t, path, cap);
		}
		free(ents[i]);
	}
	free(ents);
}

void bench_text_load(struct bench_text *t, const char *dirs, size_t cap)
{
	char *copy, *save = NULL;

	memset(t, 0, sizeof(*t));
	t->buf = malloc(cap);
	copy = strdup(dirs);
	if (!t->buf || !copy)
		bench_die("bench_text: out of memory");
	for (char *d = strtok_r(copy, ":", &save); d && t->len < cap;
	     d = strtok_r(NULL, ":", &save))
		walk(t, d, cap, 0);
	free(copy);
	if (t->len < (64u << 10))
		bench_die("bench_text: only %zu bytes of text under %s (need 64 KiB)", t->len, dirs);
	t->hash = bench_hash(t->buf, t->len);
}

void bench_text_fill(const struct bench_text *t, void *dst, size_t npages, uint64_t seed)
{
	uint64_t state = seed;
	char *p = dst;

	for (size_t i = 0; i < npages; i++) {
		size_t off = bench_rand(&state) % (t->len - BENCH_PAGE + 1);

		memcpy(p + i * BENCH_PAGE, t->buf + off, BENCH_PAGE);
	}
}
