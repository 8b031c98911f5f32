/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crash.c - backtraces when the library crashes (see crash.h).
 *
 * The report is written from the signal handler with nothing but write(2)
 * and a static buffer: the heap, stdio and every library lock may be in
 * any state. A second crash while reporting (or on another thread at the
 * same time) goes straight to the default action.
 */
#include "config.h"
#include "observe/crash.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "observe/attrib.h"
#include "observe/coredump.h"
#include "observe/unwind.h"
#include "engine/engine.h"
#include "base/log.h"
#include "base/prim.h"
#include "base/sigchain.h"


#define CRASH_FRAMES	32
#define CRASH_MAPS	(1024 * 1024)

static uintptr_t crash_text_start, crash_text_end;
static _Atomic int crash_busy;
/* Library memory, reserved at start-up, touched only to find our text and
 * at a crash (never in the data segment: mlockall would lock it). */
static char *crash_maps;

/* libzswap's executable mapping: the one holding this very function
 * (read from /proc/self/maps once, at start-up). */
static void crash_find_text(void)
{
	crash_maps = prim_alloc(CRASH_MAPS);
	if (!crash_maps)
		return;
	attrib_mapping_of((uintptr_t)&crash_find_text, crash_maps, CRASH_MAPS,
			  &crash_text_start, &crash_text_end);
}

static void crash_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void crash_line(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	size_t n = log_snprintf(line, sizeof(line), "libzswap: ");

	va_start(ap, fmt);
	n += log_format(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	log_write_all(2, line, n);
}

static void crash_backtrace(void *uc)
{
	uintptr_t ips[CRASH_FRAMES];
	char func[128], obj[160];
	int n = unwind_frames(uc, ips, CRASH_FRAMES);

	if (n < 0) {
#ifdef HAVE_LIBUNWIND
		crash_line("backtrace: libunwind is missing or could not start");
#else
		crash_line("backtrace: unavailable (built without libunwind)");
#endif
		return;
	}
	for (int i = 0; i < n; i++) {
		/* The first frame's address is the faulting instruction, the
		 * others are return addresses (attrib_name looks up ip - 1). */
		attrib_name(ips[i] + (i == 0), func, sizeof(func), obj, sizeof(obj), crash_maps,
			    crash_maps ? CRASH_MAPS : 0);
		crash_line("  #%d 0x%lx %s (%s)", i, (unsigned long)ips[i], func, obj);
	}
}

static bool crash_on_fault(int sig, siginfo_t *info, void *uc)
{
	ucontext_t *u = uc;
	uintptr_t pc = 0, sp = 0;

#if defined(__x86_64__)
	pc = (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
	sp = (uintptr_t)u->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	pc = (uintptr_t)u->uc_mcontext.pc;
	sp = (uintptr_t)u->uc_mcontext.sp;
#endif
	bool in_text = pc >= crash_text_start && pc < crash_text_end;
	bool lib_thread = sp && prim_is_own(sp);
	if (info->si_code <= 0 || !(in_text || lib_thread)) {
		/* The program's: its handler runs (sigchain), or, if it has
		 * none, the default action, as without us: a real fault is
		 * taken again on return, a sent signal is sent again. */
		if (!sigchain_program_fatal(sig))
			return false;
		/* Ignored: a sent one is discarded (sigchain), a real fault
		 * kills all the same. */
		if (info->si_code <= 0 && !sigchain_program_default(sig))
			return false;
		coredump_prepare(sig);	/* the core should hold the stored pages */
		sigchain_die(sig, info);
		return true;
	}
	if (atomic_exchange(&crash_busy, 1) == 0) {
		crash_line("crashed: signal %d (%s) at address %p, pc %p (libzswap+0x%lx)%s, thread %ld",
			   sig, sig == SIGSEGV ? "SIGSEGV" : "SIGBUS", info->si_addr, (void *)pc,
			   in_text ? (unsigned long)(pc - crash_text_start) : 0UL,
			   lib_thread ? " on a libzswap thread" : "", (long)syscall(SYS_gettid));
		crash_line("state: engine %s, faults %llu, refaults %llu, evicted %llu, uffd errors %llu",
			   atomic_load(&eng.state) == ENGINE_RUNNING ? "running" : "not running",
			   (unsigned long long)atomic_load(&eng.cnt.faults),
			   (unsigned long long)atomic_load(&eng.cnt.refaults),
			   (unsigned long long)atomic_load(&eng.cnt.evicted_pages),
			   (unsigned long long)atomic_load(&eng.cnt.uffd_errors));
		crash_backtrace(uc);
	}
	/* The default action: the instruction faults again on return and the
	 * process dumps core with the original fault. */
	sigchain_default(sig);
	return true;
}

void crash_init(void)
{
	crash_find_text();
	if (crash_maps)
		prim_decommit(crash_maps, CRASH_MAPS);	/* the text is found: pages back */
	sigchain_take(SIGSEGV, crash_on_fault);
	sigchain_take(SIGBUS, crash_on_fault);
}

void crash_thread_start(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	sigaddset(&s, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
}
