/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.c - the engine's shared state (engine.h): the one struct engine,
 * the signal blocking every thread does around library locks, and the
 * shared objects' data the engine must never evict.
 */
#include "config.h"
#include "engine/engine.h"

#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/prim.h"

struct engine eng = { .uffd = -1, .pagemap_fd = -1 };

static __thread unsigned int engine_blocked;	/* engine_sigblock depth */

bool engine_in_library(void)
{
	return engine_blocked != 0;
}

void engine_sigblock(sigset_t *old)
{
	sigset_t all;

	engine_blocked++;
	sigfillset(&all);
	/* Fault signals stay deliverable: blocked, the kernel would kill the
	 * process at once, without the crash report (src/observe/crash.c). */
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void engine_sigrestore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
	if (engine_blocked)
		engine_blocked--;
}


/* --- the objects loaded at start-up -------------------------------------- */

/*
 * The writable segments (data and bss) of every shared object loaded at
 * start-up: ours, libc, the loader, the compressors, and in a sanitizer
 * build the sanitizer runtime, which our own code runs through (its
 * interceptors). Their .bss tails are anonymous rw-p mappings that adoption
 * would take for program memory; evicting one would make the evictor or a
 * handler fault on memory it needs to run. Recorded once, before the engine
 * runs, read lock-free after (the release store of ENGINE_RUNNING orders
 * them). The main program's own data is the program's: recorded apart
 * (engine_prog), and the part of it made anonymous (engine_prog_anon,
 * src/engine/progdata.h) is memory reclaim may take. Objects dlopen()ed
 * later are not recorded either: the engine never runs their code.
 */
#define ENGINE_OBJ_RANGES 128

static struct { uintptr_t start, end; } engine_obj[ENGINE_OBJ_RANGES], engine_prog, engine_prog_anon;
static size_t engine_nobj;

static int engine_note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned int *seen = arg;
	bool prog = (*seen)++ == 0;	/* dl_iterate_phdr visits the main program first */

	(void)size;
	for (unsigned int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uintptr_t a = (info->dlpi_addr + ph->p_vaddr) & ZS_PAGE_MASK;
		uintptr_t b = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
		if (prog) {
			if (!engine_prog.end) {	/* one writable segment, as linkers make */
				engine_prog.start = a;
				engine_prog.end = b;
			}
		} else if (engine_nobj < ENGINE_OBJ_RANGES) {
			engine_obj[engine_nobj].start = a;
			engine_obj[engine_nobj++].end = b;
		}
	}
	return 0;
}

void engine_note_objects(void)
{
	unsigned int seen = 0;

	dl_iterate_phdr(engine_note_object, &seen);
}

bool engine_program_data(uintptr_t *start, uintptr_t *end)
{
	*start = engine_prog.start;
	*end = engine_prog.end;
	return engine_prog.end != 0;
}

void engine_note_program_anon(uintptr_t start, uintptr_t end)
{
	engine_prog_anon.start = start;
	engine_prog_anon.end = end;
}

bool engine_program_clip(uintptr_t cur, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t a = engine_prog_anon.start, b = engine_prog_anon.end;

	if (a == b || *lo >= b || *hi <= a)
		return false;
	if (cur >= a && cur < b) {
		if (*lo < a)
			*lo = a;
		if (*hi > b)
			*hi = b;
		return true;
	}
	if (cur < a)
		*hi = a;
	else
		*lo = b;
	return false;
}

bool engine_is_object_data(uintptr_t start, uintptr_t end)
{
	for (size_t i = 0; i < engine_nobj; i++)
		if (start < engine_obj[i].end && end > engine_obj[i].start)
			return true;
	return false;
}


#define ENGINE_RUNS_VEC 64	/* runs one PAGEMAP_SCAN returns at most */

int engine_page_runs(uintptr_t start, uintptr_t end, uint64_t mask, uint64_t inverted,
		     void (*fn)(uintptr_t run_start, uintptr_t run_end, void *arg), void *arg)
{
	struct page_region vec[ENGINE_RUNS_VEC];

	for (uintptr_t cur = start; cur < end;) {
		struct pm_scan_arg a = {
			.size = sizeof(a),
			.start = cur,
			.end = end,
			.vec = (uintptr_t)vec,
			.vec_len = ENGINE_RUNS_VEC,
			.category_inverted = inverted,
			.category_mask = mask,
			.return_mask = mask,
		};
		long nr = syscall(SYS_ioctl, eng.pagemap_fd, PAGEMAP_SCAN, &a);
		if (nr < 0)
			return -1;
		for (long i = 0; i < nr; i++)
			fn((uintptr_t)vec[i].start, (uintptr_t)vec[i].end, arg);
		if (a.walk_end <= cur)
			break;
		cur = (uintptr_t)a.walk_end;
	}
	return 0;
}
