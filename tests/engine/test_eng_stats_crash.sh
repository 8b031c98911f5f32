#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_stats_crash.sh - crash reports (libzswap(7) SIGNALS, DIAGNOSTICS):
# a program's own SIGSEGV handler still gets the faults of its own code, with
# or without the library, and a program without one still dies of them; a crash inside the library (ZSWAP_INJECT_CRASH on
# the statistics thread) is reported (the crash line, the state line, a
# backtrace naming the library function, or "unavailable" without libunwind)
# and ends the process with SIGSEGV's default action; so does a crash of the
# reclaimer under a memory limit (ZSWAP_INJECT_CRASH=2) while the program's
# threads may wait for it, rather than leave them waiting forever.

. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$ENG_BUILDDIR/tests/progs/prog_stats_crash
[ -x "$prog" ] || eng_skip "$prog is not built"
nm -D "$ENG_LIB" 2>/dev/null | grep -q ' T sigaction$' ||
	eng_skip "libzswap.so does not export sigaction (src/shim/libzswap.map): signals are not shared"
XDG=$ENG_TMP/run
mkdir -p "$XDG" && chmod 700 "$XDG"

for mode in lib plain; do
	eng_run "own-segv-$mode" "$mode" "$prog" own
	eng_expect_rc 0
	grep -q '^own ok$' "$ENG_OUT" || eng_fail "own-segv-$mode: the program's handler did not do its job"
	! grep -q 'libzswap: crashed' "$ENG_ERR" || eng_fail "own-segv-$mode: the program's fault was reported as the library's"
done

# The program's own crash, with no handler (or SIGSEGV ignored): it dies of
# SIGSEGV, as without the library, and no report blames the library.
ulimit -c 0 2>/dev/null
for how in "" ign; do
	timeout "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" XDG_RUNTIME_DIR="$XDG" \
		"$prog" null $how > "$ENG_TMP/null.out" 2> "$ENG_TMP/null.err"
	rc=$?
	[ "$rc" = $((128 + 11)) ] || eng_fail "null${how:+-$how}: exit status $rc, want $((128 + 11)) (SIGSEGV)"
	! grep -q 'libzswap: crashed' "$ENG_TMP/null.err" || eng_fail "null${how:+-$how}: the program's crash was reported as the library's"
done

# The library's crash.
timeout "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" XDG_RUNTIME_DIR="$XDG" ZSWAP_INJECT_CRASH=1 \
	"$prog" lib > "$ENG_TMP/lib.out" 2> "$ENG_TMP/lib.err"
rc=$?
ENG_LABEL=lib-crash ENG_ERR=$ENG_TMP/lib.err ENG_OUT=$ENG_TMP/lib.out
grep -q 'not active\|userfaultfd unavailable' "$ENG_TMP/lib.err" && eng_skip "libzswap is not active here"
[ "$rc" = $((128 + 11)) ] || eng_fail "lib-crash: exit status $rc, want $((128 + 11)) (SIGSEGV)"
grep -q '^libzswap: crashed: signal 11 (SIGSEGV) at address 0x0, .* on a libzswap thread' "$ENG_TMP/lib.err" ||
	eng_fail "lib-crash: no crash line"
grep -q '^libzswap: state: engine running, faults ' "$ENG_TMP/lib.err" || eng_fail "lib-crash: no state line"
if grep -q '^#define HAVE_LIBUNWIND 1' "$ENG_BUILDDIR/config.h" 2>/dev/null; then
	grep -q '^libzswap:   #[0-9]* 0x[0-9a-f]* stats_write_locked+0x' "$ENG_TMP/lib.err" ||
		eng_fail "lib-crash: the backtrace does not name stats_write_locked"
	grep -q '^libzswap:   #0 .*libzswap' "$ENG_TMP/lib.err" || eng_fail "lib-crash: frame #0 does not name libzswap's object"
else
	grep -q '^libzswap: backtrace: unavailable' "$ENG_TMP/lib.err" || eng_fail "lib-crash: no 'backtrace: unavailable'"
fi

# The reclaimer's crash, the program's threads held for it or about to be:
# prog_growth allocates 96 MiB under 24M at full speed on two threads.
growth=$ENG_BUILDDIR/tests/progs/prog_growth
if [ -x "$growth" ]; then
	timeout "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" XDG_RUNTIME_DIR="$XDG" ZSWAP_INJECT_CRASH=2 \
		ZSWAP_MEMORY_LIMIT=24M ZSWAP_WRITEBACK=0 "$growth" 96 2 > "$ENG_TMP/rc.out" 2> "$ENG_TMP/rc.err"
	rc=$?
	ENG_LABEL=reclaimer-crash ENG_ERR=$ENG_TMP/rc.err ENG_OUT=$ENG_TMP/rc.out
	[ "$rc" != 124 ] || eng_fail "reclaimer-crash: the program hung after the reclaimer crashed"
	[ "$rc" = $((128 + 11)) ] || eng_fail "reclaimer-crash: exit status $rc, want $((128 + 11)) (SIGSEGV)"
	grep -q '^libzswap: crashed: signal 11 (SIGSEGV) at address 0x0, .* on a libzswap thread' "$ENG_TMP/rc.err" ||
		eng_fail "reclaimer-crash: no crash line"
fi

eng_finish
