#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The engine's quick end-to-end check: tests/progs/prog_smoke under LD_PRELOAD.
# Skips (77) when the library was not built or userfaultfd is unavailable.
prog="${ZSWAP_BUILDDIR:-.}/tests/progs/prog_smoke"
lib="${ZSWAP_LIB:-${ZSWAP_BUILDDIR:-.}/.libs/libzswap.so}"
if [ ! -f "$lib" ]; then
	echo "test_engine_smoke: $lib not built" >&2
	exit 77
fi
if [ ! -x "$prog" ]; then
	echo "test_engine_smoke: $prog not built" >&2
	exit 77
fi
# The program must also run correctly without the library (the pass-through
# case is the same binary): it then skips itself. Without means without,
# even when the suite itself runs under a preloaded library.
env -u LD_PRELOAD "$prog" >/dev/null 2>&1
rc=$?
[ $rc -eq 77 ] || { echo "test_engine_smoke: without the library prog_smoke exited $rc, not 77" >&2; exit 1; }
# An ASan build of the library needs the ASan runtime first in the process.
san=
command -v objdump >/dev/null 2>&1 &&
	san=$(objdump -p "$lib" 2>/dev/null | awk '$1 == "NEEDED" && $2 ~ /^libasan\.so/ { print $2 }')
[ -n "$san" ] && { ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}; export ASAN_OPTIONS; }
LD_PRELOAD="${san:+$san }$lib" timeout 120 "$prog"
rc=$?
[ $rc -eq 124 ] && echo "test_engine_smoke: prog_smoke hung (killed after 120 s)" >&2
exit $rc
