/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_lazybind.c - the library's threads never bind a symbol lazily.
 *
 * dlopen() with RTLD_GLOBAL makes the dynamic linker copy its global search
 * list into malloc'ed memory: the program's heap, which libzswap manages. A
 * PLT slot still unbound when a library thread first goes through it
 * (liblz4 calls its own exports through its PLT) sends that thread into the
 * dynamic linker, which walks the list; if its page has just been moved out
 * by that very thread, or waits on one, the process hangs for good.
 *
 * The program opens two of glibc's objects RTLD_GLOBAL, fills 8 MiB of its
 * heap with text in blocks below the mmap threshold, goes idle long enough
 * for the cold age to move the heap out (with the list) and compress it,
 * then reads every block back. It must finish, with every byte right.
 *
 * usage: prog_lazybind [--inactive-ok] [idle seconds, default 3]
 */
#include "prog_common.h"

#define NBLOCKS 2048
#define BLOCK 4000

static char *blocks[NBLOCKS];

static void block_fill(char *b, size_t i, unsigned char *page)
{
	pc_fill(page, PC_TEXT, pc_page_seed(31, i));
	memcpy(b, page, BLOCK);
}

int main(int argc, char **argv)
{
	static unsigned char page[PC_PAGE];
	const char *objs[] = { "libm.so.6", "libresolv.so.2" };

	pc_init("prog_lazybind", &argc, argv);
	int idle = argc > 1 ? atoi(argv[1]) : 3;

	for (size_t k = 0; k < sizeof(objs) / sizeof(objs[0]); k++)
		if (!dlopen(objs[k], RTLD_NOW | RTLD_GLOBAL))
			pc_skip("dlopen %s: %s", objs[k], dlerror());
	PC_CHECK(dlsym(RTLD_DEFAULT, "cos") != NULL, "libm.so.6 opened RTLD_GLOBAL but cos is not found");

	for (size_t i = 0; i < NBLOCKS; i++) {
		blocks[i] = malloc(BLOCK);
		if (!blocks[i])
			pc_fail("malloc");
		block_fill(blocks[i], i, page);
	}
	sleep((unsigned int)idle);

	if (pc_managed()) {
		struct zswap_stats st;

		pc_stats(&st);
		PC_CHECK(st.zswpout > 0, "nothing was stored while the program was idle");
		pc_info("stored while idle: %" PRIu64 " pages (%" PRIu64 " same-filled)", st.zswpout,
			st.same_filled_pages);
	}
	for (size_t i = 0; i < NBLOCKS; i++) {
		pc_fill(page, PC_TEXT, pc_page_seed(31, i));
		if (memcmp(blocks[i], page, BLOCK) != 0)
			pc_fail("block %zu is wrong after the idle time", i);
	}
	printf("ok: %d blocks of %d bytes read back\n", NBLOCKS, BLOCK);
	return 0;
}
