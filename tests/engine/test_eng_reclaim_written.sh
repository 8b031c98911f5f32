#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Written bits as the clock's referenced bit (UFFD_FEATURE_WP_ASYNC with
# PAGEMAP_SCAN, docs/DESIGN.md "Which pages"): a program keeps rewriting a
# small hot set (2 MiB, one random hot page after each cold page) while it
# streams three times over 126 MiB of cold pages under a 64M limit. The
# clock sees the hot pages written at every pass and keeps them: hot pages
# found absent just before their access (mincore) stay near zero. Without
# written bits (the library before them, or built -DRECLAIM_WRITTEN=0) the
# clock evicts every hot page once before refault feedback protects it:
# 499-512 of 512 measured. Alone the library misses 2-36; beside the rest
# of the suite on two CPUs, 272-355 (a program kept off the CPU writes its
# hot pages less often than the clock passes), so the bound sits between:
# 400. Counters only; data checked as always.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
mb=128
passes=3
hot_pages=$((mb * 256 / 64))
bound=$((hot_pages * 25 / 32))

eng_run hotstream-plain plain "$prog" hotstream $mb $passes
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/hotstream.ref"
wp=$(sed -n 's/^prog_reclaim: kernel_wp_async=\(.*\)/\1/p' "$ENG_ERR")
[ "$wp" = 1 ] || eng_skip "the kernel offers no UFFD_FEATURE_WP_ASYNC (6.7+): no written bits"
eng_run hotstream lib ZSWAP_MEMORY_LIMIT=64M "$prog" hotstream $mb $passes
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/hotstream.ref"; then
	m=$(sed -n 's/^prog_reclaim: hot_pages=.* hot_misses=\([0-9]*\).*/\1/p' "$ENG_ERR")
	a=$(sed -n 's/^prog_reclaim: stat pgactivate=\([0-9]*\).*/\1/p' "$ENG_ERR")
	eng_say "hot pages absent at their access: ${m:-?} of $hot_pages (bound $bound); pgactivate ${a:-?}"
	[ -n "$m" ] && [ "$m" -le "$bound" ] ||
		eng_fail "the hot set is evicted though written all the time: ${m:-?} misses, bound $bound"
	[ -n "$a" ] && [ "$a" -gt 0 ] || eng_fail "pgactivate ${a:-?}: no page was kept for being written"
fi
eng_finish
