/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_attrib.c - maps memory through a shared object (argv[1], a build of
 * prog_attrib_lib.c, stripped or not) from its exported function and from
 * its unexported one, evicts both and checks them back: the dump's
 * attribution then names the two call sites (test_eng_attrib.sh).
 */
#include "config.h"

#include "prog_common.h"

#define ATTRIB_LEN (1 * PC_MIB)

int main(int argc, char **argv)
{
	pc_init("prog_attrib", &argc, argv);
	if (argc != 2)
		pc_fail("usage: prog_attrib LIBRARY");
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		pc_fail("dlopen %s: %s", argv[1], dlerror());
	void *(*exported)(size_t, int) = (void *(*)(size_t, int))dlsym(h, "prog_attrib_exported");
	void *(*hidden)(size_t, int) = (void *(*)(size_t, int))dlsym(h, "prog_attrib_hidden");
	if (!exported || !hidden)
		pc_fail("%s lacks prog_attrib_exported or prog_attrib_hidden", argv[1]);

	unsigned char *a = exported(ATTRIB_LEN, 0x5a);
	unsigned char *b = hidden(ATTRIB_LEN, 0xa5);
	if (a == MAP_FAILED || !b)
		pc_fail("mapping through %s failed", argv[1]);
	pc_pageout(a, ATTRIB_LEN);
	pc_pageout(b, ATTRIB_LEN);
	for (size_t i = 0; i < ATTRIB_LEN; i += PC_PAGE)
		PC_CHECK(a[i] == 0x5a && b[i] == 0xa5, "byte %zu: %#x %#x", i, a[i], b[i]);
	printf("ok\n");
	return 0;
}
