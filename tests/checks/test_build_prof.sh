#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_build_prof.sh - the measuring build (configure --enable-prof: the
# fault path's phase timing, src/base/hist.h) still compiles: every library
# source is compiled with ZSWAP_PROF=1 and the warnings made errors, nothing
# linked. A measuring build nobody compiles would rot unseen.
srcdir=${ZSWAP_SRCDIR:-$(dirname "$0")/../..}
builddir=${ZSWAP_BUILDDIR:-.}
cc=${ZSWAP_CC:-cc}
name=test_build_prof

command -v "${cc%% *}" >/dev/null 2>&1 || { echo "$name: SKIP: no C compiler ($cc)" >&2; exit 77; }
fail=0
for f in "$srcdir"/src/*/*.c; do
	# shellcheck disable=SC2086
	if ! $cc -fsyntax-only -Wall -Wextra -Werror -Wno-unused-parameter -pthread -D_GNU_SOURCE \
		-include "$builddir/config.h" -DZSWAP_PROF=1 \
		-I"$srcdir/include" -I"$srcdir/src" -I"$builddir" "$f" 2> "$builddir/$name.err"; then
		echo "$name: FAIL: ${f#"$srcdir"/} does not compile with ZSWAP_PROF=1:" >&2
		head -n 20 "$builddir/$name.err" >&2
		fail=1
	fi
done
rm -f "$builddir/$name.err"
[ "$fail" = 0 ] && echo "$name: ok" >&2
exit "$fail"
