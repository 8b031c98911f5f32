/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_attrib_lib.c - a shared object mapping memory from an exported
 * function and from one of its own, for attribution in a stripped object
 * (test_eng_attrib.sh, which strips a copy).
 *
 * The unexported function comes last, so in the stripped copy the nearest
 * symbol below it is an exported one that does not hold it. Each maps and
 * then writes, so the mmap call is not a tail call: its return address is
 * in the function that maps.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

void *prog_attrib_exported(size_t len, int fill) __attribute__((visibility("default")));
void *prog_attrib_hidden(size_t len, int fill) __attribute__((visibility("default")));

static void *prog_attrib_unexported(size_t len, int fill) __attribute__((noinline, noclone));

void *prog_attrib_exported(size_t len, int fill)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		memset(p, fill, len);
	return p;
}

void *prog_attrib_hidden(size_t len, int fill)
{
	void *p = prog_attrib_unexported(len, fill);

	return p == MAP_FAILED ? NULL : p;
}

static void *prog_attrib_unexported(size_t len, int fill)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		memset(p, fill, len);
	return p;
}
