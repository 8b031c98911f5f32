/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind.c - libunwind through pointers found at start (see unwind.h).
 *
 * The names asked for are what libunwind.h's macros make of unw_*
 * (_ULx86_64_step for unw_step: the local-only unwinder, which
 * libunwind.so.8 defines).
 */
#include "config.h"
#include "observe/unwind.h"

#include "base/dynlib.h"
#include "base/log.h"

#ifdef HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define UNWIND_STR(x) #x
#define UNWIND_NAME(x) UNWIND_STR(x)
#define UNWIND_SYM(fn, field) { UNWIND_NAME(fn), (void **)&unw.field }

static struct {
	int (*getcontext)(unw_context_t *);
	__typeof__(unw_init_local) *init_local;
	__typeof__(unw_init_local2) *init_local2;
	__typeof__(unw_step) *step;
	__typeof__(unw_get_reg) *get_reg;
	__typeof__(unw_set_reg) *set_reg;
	__typeof__(unw_get_proc_name) *get_proc_name;
} unw;

static const struct dynlib_sym unwind_syms[] = {
	UNWIND_SYM(unw_tdep_getcontext, getcontext),
	UNWIND_SYM(unw_init_local, init_local),
	UNWIND_SYM(unw_init_local2, init_local2),
	UNWIND_SYM(unw_step, step),
	UNWIND_SYM(unw_get_reg, get_reg),
	UNWIND_SYM(unw_set_reg, set_reg),
	UNWIND_SYM(unw_get_proc_name, get_proc_name),
};

static struct dynlib unwind_lib = {
	"libunwind.so.8", unwind_syms, sizeof(unwind_syms) / sizeof(unwind_syms[0]), 0, NULL, ""
};

static bool unwind_ok;

bool unwind_load(void)
{
	if (unwind_lib.state)
		return unwind_ok;
	unwind_ok = dynlib_load(&unwind_lib);
	if (!unwind_ok)
		zlog("no backtraces and call sites named from their object files only: %s",
		     dynlib_why(&unwind_lib));
	return unwind_ok;
}

int unwind_proc_name(uintptr_t pc, char *name, size_t len, uintptr_t *off)
{
	unw_context_t ctx;
	unw_cursor_t c;
	unw_word_t o = 0;

	/* A cursor at our own frame, moved to the address asked about, so the
	 * lookup is the one an unwinder does for that frame. */
	if (!unwind_ok || !pc || unw.getcontext(&ctx) != 0 || unw.init_local(&c, &ctx) != 0 ||
	    unw.set_reg(&c, UNW_REG_IP, (unw_word_t)(pc - 1)) != 0 ||
	    unw.get_proc_name(&c, name, len, &o) != 0)
		return -1;
	*off = (uintptr_t)o;
	return 0;
}

int unwind_frames(void *uc, uintptr_t *ips, int max)
{
	unw_cursor_t c;
	int n = 0;

	if (!unwind_ok || unw.init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) != 0)
		return -1;
	while (n < max) {
		unw_word_t ip = 0;
		unw.get_reg(&c, UNW_REG_IP, &ip);
		ips[n++] = (uintptr_t)ip;
		if (unw.step(&c) <= 0)
			break;
	}
	return n;
}

#else

bool unwind_load(void)
{
	return false;
}

int unwind_proc_name(uintptr_t pc, char *name, size_t len, uintptr_t *off)
{
	(void)pc, (void)name, (void)len, (void)off;
	return -1;
}

int unwind_frames(void *uc, uintptr_t *ips, int max)
{
	(void)uc, (void)ips, (void)max;
	return -1;
}

#endif
