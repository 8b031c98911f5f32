/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store_pages.h - page sets taken from files on this machine, for the pool
 * benchmark and the demo (tools only: these use malloc and stdio freely).
 */
#ifndef ZSWAP_STORE_PAGES_H
#define ZSWAP_STORE_PAGES_H

#include <stddef.h>
#include <stdint.h>

#define SP_PAGE 4096

struct sp_set {
	uint8_t *data;		/* npages * SP_PAGE bytes, page aligned */
	size_t npages;
	size_t bytes;		/* file bytes read (the last page is zero-padded) */
	size_t files;		/* files read */
	size_t cap;		/* bytes allocated */
};

/* Text-like pages, up to max_bytes: /usr/share/common-licenses, text files
 * under /usr/share/doc, man pages decompressed (zlib, loaded with dlopen;
 * skipped when absent) and /usr/include, concatenated as a program that had
 * read them would hold them. Returns 0, or -1 with a message on stderr when
 * nothing could be read. */
int sp_load_text(struct sp_set *set, size_t max_bytes);

/* Binary pages: ELF files from /usr/lib/x86_64-linux-gnu, /usr/lib and
 * /usr/bin. */
int sp_load_binary(struct sp_set *set, size_t max_bytes);

/* Every regular file under the given roots (NULL-terminated), read with
 * plain read(), whatever it holds, up to max_bytes. */
int sp_load_tree(struct sp_set *set, const char *const *roots, size_t max_bytes);

void sp_free(struct sp_set *set);

static inline const void *sp_page(const struct sp_set *set, size_t i)
{
	return set->data + i * SP_PAGE;
}

#endif
