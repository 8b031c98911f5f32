#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Attribution (libzswap(7) STATISTICS DUMP, "attribution") names a call site
# by the symbol that holds it, by its size: in a stripped shared object an
# exported function keeps its name, and an unexported one is named by the
# object and its offset, never by the nearest exported symbol below it.
# Unstripped, the unexported function is named from the symbol table.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_attrib)
lib=$(eng_prog prog_attrib_lib.so)
grep -q '^#define HAVE_LIBUNWIND 1' "$ENG_BUILDDIR/config.h" 2>/dev/null ||
	eng_skip "built without libunwind: call sites are not named"
command -v strip >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 || eng_skip "strip or nm (binutils) is missing"

# The unexported function's extent, from the unstripped object.
set -- $(nm -S "$lib" | awk '$4 == "prog_attrib_unexported" { print $1, $2 }')
[ $# = 2 ] || eng_fail "nm -S finds no prog_attrib_unexported in $lib"
lo=$((0x$1)) hi=$((0x$1 + 0x$2))
stripped=$ENG_TMP/libattrib.so
strip -o "$stripped" "$lib" || eng_fail "strip $lib failed"
nm "$stripped" 2>&1 | grep -q prog_attrib_unexported && eng_fail "strip left prog_attrib_unexported in $stripped"

# attrib LABEL OBJECT: run the program through OBJECT, dump at exit; the
# attribution rows of OBJECT into $ENG_TMP/LABEL.rows.
attrib() {
	eng_run "$1" lib ZSWAP_MIN_REGION=64K ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/$1.dump" \
		"$prog" "$2"
	eng_expect_rc 0 || eng_finish
	eng_expect_stdout_has ok
	sed -n '/^== attribution/,/^== /p' "$ENG_TMP/$1.dump" | grep "($2)\$" > "$ENG_TMP/$1.rows"
	[ "$(wc -l < "$ENG_TMP/$1.rows")" = 2 ] ||
		eng_fail "$1: want two attribution rows of $2: $(sed -n '/^== attribution/,/^== /p' "$ENG_TMP/$1.dump")"
}

attrib stripped "$stripped"
grep -q ' prog_attrib_exported+0x[0-9a-f]* (' "$ENG_TMP/stripped.rows" ||
	eng_fail "stripped: the exported function is not named: $(cat "$ENG_TMP/stripped.rows")"
site=$(grep -v ' prog_attrib_exported+0x' "$ENG_TMP/stripped.rows" | awk '{ print $(NF - 1) }')
case $site in
libattrib.so+0x*)
	off=$((${site#libattrib.so+}))
	[ "$off" -gt "$lo" ] && [ "$off" -le "$hi" ] ||
		eng_fail "stripped: $site is outside prog_attrib_unexported ($lo..$hi)" ;;
*)	eng_fail "stripped: the unexported function's call site is '$site', not libattrib.so+OFFSET" ;;
esac

attrib unstripped "$lib"
grep -q ' prog_attrib_exported+0x[0-9a-f]* (' "$ENG_TMP/unstripped.rows" &&
	grep -q ' prog_attrib_unexported+0x[0-9a-f]* (' "$ENG_TMP/unstripped.rows" ||
	eng_fail "unstripped: both functions are not named: $(cat "$ENG_TMP/unstripped.rows")"
eng_finish
