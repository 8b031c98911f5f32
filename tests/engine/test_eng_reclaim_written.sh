#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Which pages each clock keeps (docs/DESIGN.md, "Which pages").
#
# The cold-age pass reads written bits (UFFD_FEATURE_WP_ASYNC with
# PAGEMAP_SCAN): a program fills 64 MiB, then rewrites its first quarter
# every 100 ms while the rest sits idle, under ZSWAP_COLD_AGE=2 (a pass
# every second) and no limit. The idle pages are stored; a hot page is
# written within any two seconds, so none is found absent before its
# rewrite. Without written bits in the pass, 1,167 of 4,096 were (measured);
# the bound is 64. A cold age of 1 s left no margin on a loaded machine
# (rounds of half a second: 103 misses in one run of the suite). The rounds
# (so the pages' versions) vary from run to run: the program checks every
# byte itself, a wrong one is a non-zero status.
#
# The limit's clock goes by refaults alone: a small hot set (2 MiB) rewritten
# all the time while a stream reads 126 MiB three times under 64M. Each hot
# page is evicted about once, then protected by refault feedback: 544-551
# misses of 512 pages measured; the bound is twice the hot set. No page is
# kept for being written there (pgactivate 0). Counters only; data checked
# as always.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_reclaim)

eng_run idlehot-plain plain "$prog" idlehot 64 1
eng_expect_rc 0
wp=$(sed -n 's/^prog_reclaim: kernel_wp_async=\(.*\)/\1/p' "$ENG_ERR")
[ "$wp" = 1 ] || eng_skip "the kernel offers no UFFD_FEATURE_WP_ASYNC (6.7+): no written bits"
eng_run idlehot lib ZSWAP_COLD_AGE=2 "$prog" idlehot 64 40
if eng_expect_rc 0 && eng_expect_no_libzswap; then
	line=$(sed -n 's/^prog_reclaim: hot_pages=//p' "$ENG_ERR")
	m=$(echo "$line" | sed -n 's/.*hot_misses=\([0-9]*\).*/\1/p')
	st=$(echo "$line" | sed -n 's/.*idle_stored=\([0-9]*\).*/\1/p')
	a=$(echo "$line" | sed -n 's/.*pgactivate=\([0-9]*\).*/\1/p')
	eng_say "cold age: hot pages absent at their rewrite ${m:-?} of 4096 (bound 64); idle pages stored ${st:-?}; pgactivate ${a:-?}"
	[ -n "$st" ] && [ "$st" -ge 6144 ] || eng_fail "the idle pages were not stored: ${st:-?} of 12288"
	[ -n "$m" ] && [ "$m" -le 64 ] || eng_fail "the cold-age pass took pages written since its last look: ${m:-?} misses"
	[ -n "$a" ] && [ "$a" -gt 0 ] || eng_fail "pgactivate ${a:-?}: no page was kept for being written"
fi

mb=128
hot_pages=$((mb * 256 / 64))
bound=$((hot_pages * 2))
eng_run hotstream-plain plain "$prog" hotstream $mb 3
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/hotstream.ref"
eng_run hotstream lib ZSWAP_MEMORY_LIMIT=64M "$prog" hotstream $mb 3
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/hotstream.ref"; then
	m=$(sed -n 's/^prog_reclaim: hot_pages=.* hot_misses=\([0-9]*\).*/\1/p' "$ENG_ERR")
	a=$(sed -n 's/^prog_reclaim: stat pgactivate=\([0-9]*\).*/\1/p' "$ENG_ERR")
	eng_say "limit: hot pages absent at their access ${m:-?} of $hot_pages (bound $bound); pgactivate ${a:-?}"
	[ -n "$m" ] && [ "$m" -le "$bound" ] ||
		eng_fail "refault feedback did not keep the hot set: ${m:-?} misses, bound $bound"
	[ "${a:-x}" = 0 ] || eng_fail "pgactivate ${a:-?} under the limit: its clock reads no written bits"
fi
eng_finish
