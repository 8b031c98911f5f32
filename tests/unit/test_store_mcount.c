/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_store_mcount.c - count the test binary's own malloc family calls.
 *
 * Linked into tests that check the store/load path never allocates: the
 * binary defines malloc, calloc, realloc (and the aligned variants) itself,
 * so every call from the library code linked into it, and from liblz4 and
 * libzstd, lands here and is counted while tp_mcount_on is set. The real work
 * is done by glibc's __libc_* entry points.
 */
#include "test_store_util.h"

#include <errno.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
void *memalign(size_t a, size_t n);	/* <malloc.h> has it; keep this file to <stdlib.h> */

_Atomic int tp_mcount_on;
_Atomic unsigned long tp_mcount;

static void tp_count(void)
{
	if (atomic_load_explicit(&tp_mcount_on, memory_order_relaxed))
		atomic_fetch_add_explicit(&tp_mcount, 1, memory_order_relaxed);
}

void *malloc(size_t n)
{
	tp_count();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	tp_count();
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	tp_count();
	return __libc_realloc(p, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	tp_count();
	return __libc_memalign(a, n);
}

void *memalign(size_t a, size_t n)
{
	tp_count();
	return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	void *p;

	tp_count();
	p = __libc_memalign(a, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void free(void *p)
{
	__libc_free(p);
}
