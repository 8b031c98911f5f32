/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store_pages.c - read files from this machine into page sets.
 *
 * Files are concatenated, as in the memory of a program that read them; only
 * the last page of the set is padded. Directory walks are depth-first in
 * directory order (nftw), so a given machine always yields the same set.
 */
#define _GNU_SOURCE
#include "store_pages.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum sp_filter { SP_ANY, SP_TEXT, SP_MAN, SP_ELF };

/* nftw has no user pointer: the walk in progress. */
static struct {
	struct sp_set *set;
	size_t limit;		/* stop filling at this many bytes */
	enum sp_filter filter;
} sp_walk;

static void sp_reserve(struct sp_set *set, size_t max_bytes)
{
	if (set->data)
		return;
	set->cap = (max_bytes + SP_PAGE - 1) / SP_PAGE * SP_PAGE;
	set->data = aligned_alloc(SP_PAGE, set->cap);
	if (!set->data) {
		fprintf(stderr, "out of memory for %zu bytes of pages\n", set->cap);
		exit(1);
	}
}

static bool sp_has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Compressed or media files are not text, whatever their first bytes. */
static bool sp_packed_name(const char *path)
{
	static const char *const suf[] = { ".gz", ".xz", ".bz2", ".zst", ".lz4", ".zip",
					   ".png", ".jpg", ".gif", ".pdf", ".mo", ".deb" };

	for (size_t i = 0; i < sizeof(suf) / sizeof(suf[0]); i++)
		if (sp_has_suffix(path, suf[i]))
			return true;
	return false;
}

/* Read up to the set's limit from fd; with check_text, refuse (return false,
 * nothing kept) a file whose first block holds a NUL byte. */
static bool sp_read_fd(int fd, bool check_text, bool check_elf)
{
	struct sp_set *set = sp_walk.set;
	size_t start = set->bytes, off = start;
	ssize_t r;

	while (off < sp_walk.limit && (r = read(fd, set->data + off, sp_walk.limit - off)) > 0) {
		if (off == start && check_text && memchr(set->data + off, 0, (size_t)r))
			return false;
		if (off == start && check_elf && (r < 4 || memcmp(set->data + off, "\177ELF", 4)))
			return false;
		off += (size_t)r;
	}
	if (off == start)
		return false;
	set->bytes = off;
	set->files++;
	return true;
}

/* zlib, found at run time so the build does not depend on it. */
static struct {
	bool tried;
	void *(*open)(const char *, const char *);
	int (*read)(void *, void *, unsigned int);
	int (*close)(void *);
} sp_z;

static bool sp_zlib(void)
{
	if (!sp_z.tried) {
		void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);

		sp_z.tried = true;
		if (h) {
			*(void **)&sp_z.open = dlsym(h, "gzopen");
			*(void **)&sp_z.read = dlsym(h, "gzread");
			*(void **)&sp_z.close = dlsym(h, "gzclose");
		}
		if (!sp_z.open || !sp_z.read || !sp_z.close) {
			fprintf(stderr, "note: libz.so.1 not found: man pages left out\n");
			sp_z.open = NULL;
		}
	}
	return sp_z.open != NULL;
}

static void sp_read_gz(const char *path)
{
	struct sp_set *set = sp_walk.set;
	void *gz;
	size_t off = set->bytes;
	int r;

	if (!sp_zlib() || !(gz = sp_z.open(path, "rb")))
		return;
	while (off < sp_walk.limit) {
		size_t want = sp_walk.limit - off;
		r = sp_z.read(gz, set->data + off, want > (1U << 30) ? 1U << 30 : (unsigned int)want);
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	sp_z.close(gz);
	if (off > set->bytes) {
		set->bytes = off;
		set->files++;
	}
}

static int sp_visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	int fd;

	(void)ftw;
	if (sp_walk.set->bytes >= sp_walk.limit)
		return 1;	/* full: stop the walk */
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size == 0)
		return 0;
	if (sp_walk.filter == SP_MAN) {
		if (sp_has_suffix(path, ".gz"))
			sp_read_gz(path);
		return 0;
	}
	if (sp_walk.filter == SP_TEXT && sp_packed_name(path))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	sp_read_fd(fd, sp_walk.filter == SP_TEXT, sp_walk.filter == SP_ELF);
	close(fd);
	return 0;
}

/* Add files under root until the set holds limit bytes. */
static void sp_add(struct sp_set *set, const char *root, enum sp_filter filter, size_t limit)
{
	if (limit > set->cap)
		limit = set->cap;
	if (set->bytes >= limit)
		return;
	sp_walk.set = set;
	sp_walk.limit = limit;
	sp_walk.filter = filter;
	nftw(root, sp_visit, 64, FTW_PHYS);
}

static int sp_finish(struct sp_set *set, const char *what)
{
	if (!set->bytes) {
		fprintf(stderr, "no %s files could be read\n", what);
		return -1;
	}
	set->npages = (set->bytes + SP_PAGE - 1) / SP_PAGE;
	memset(set->data + set->bytes, 0, set->npages * SP_PAGE - set->bytes);
	return 0;
}

int sp_load_text(struct sp_set *set, size_t max_bytes)
{
	sp_reserve(set, max_bytes);
	/* A mix: licences, documentation and man pages up to a quarter each,
	 * headers for the rest; then whatever source still has text. */
	sp_add(set, "/usr/share/common-licenses", SP_TEXT, max_bytes);
	sp_add(set, "/usr/share/doc", SP_TEXT, set->bytes + max_bytes / 4);
	sp_add(set, "/usr/share/man", SP_MAN, set->bytes + max_bytes / 4);
	sp_add(set, "/usr/include", SP_TEXT, max_bytes);
	sp_add(set, "/usr/share/doc", SP_TEXT, max_bytes);
	sp_add(set, "/usr/share/man", SP_MAN, max_bytes);
	return sp_finish(set, "text");
}

int sp_load_binary(struct sp_set *set, size_t max_bytes)
{
	sp_reserve(set, max_bytes);
	sp_add(set, "/usr/lib/x86_64-linux-gnu", SP_ELF, set->bytes + max_bytes / 2);
	sp_add(set, "/usr/bin", SP_ELF, max_bytes);
	sp_add(set, "/usr/lib", SP_ELF, max_bytes);
	return sp_finish(set, "ELF");
}

int sp_load_tree(struct sp_set *set, const char *const *roots, size_t max_bytes)
{
	sp_reserve(set, max_bytes);
	for (size_t i = 0; roots[i]; i++)
		sp_add(set, roots[i], SP_ANY, max_bytes);
	return sp_finish(set, "readable");
}

void sp_free(struct sp_set *set)
{
	free(set->data);
	memset(set, 0, sizeof(*set));
}
