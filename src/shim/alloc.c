/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * alloc.c - the program's malloc, calloc and realloc, interposed.
 *
 * Each is the call passed on by growth (src/reclaim/growth.h): to the
 * allocator that would have served the program without libzswap, with what
 * glibc's malloc grew for itself held or registered under a memory limit.
 * A fork child that waits to start its own libzswap starts it once it
 * allocates in earnest (src/shim/start.h). The entry points are here, with every
 * other interposed one, so that no layer below the shim defines a libc name
 * the program binds to (tests/checks/test_layers_symbols.sh).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/export.h"
#include "base/layout.h"
#include "reclaim/growth.h"
#include "shim/start.h"

ZSWAP_STARTUP ZSWAP_EXPORT void *malloc(size_t n)
{
	start_wake_alloc(n);
	return growth_malloc(n);
}

ZSWAP_STARTUP ZSWAP_EXPORT void *calloc(size_t n, size_t size)
{
	start_wake_alloc(size && n > SIZE_MAX / size ? SIZE_MAX : n * size);
	return growth_calloc(n, size);
}

ZSWAP_STARTUP ZSWAP_EXPORT void *realloc(void *old, size_t n)
{
	start_wake_alloc(n);
	return growth_realloc(old, n);
}
