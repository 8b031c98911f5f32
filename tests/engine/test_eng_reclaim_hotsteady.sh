#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Hot pages stay resident once the policy has learnt them: the hot/cold
# workload of test_eng_reclaim_hotcold.sh run longer (400,000 accesses,
# 128 MiB under a 64M limit). In the second half, hot pages found absent
# (mincore) just before their access must be rare: every hot page has
# refaulted by then and is protected, and cold refaults must not pass as
# quick ones (the refault distance is compared with the resident pages
# alone, not with the whole charge, pool included, which would let half the
# cold refaults in protected and push hot pages out; docs/DESIGN.md "Which
# pages").
# Counters only; data checked as always.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
mb=128
ops=400000

if eng_compare_run hotsteady ZSWAP_MEMORY_LIMIT=64M "$prog" hotcold $mb $ops; then
	h=$(sed -n 's/^prog_reclaim: late_hot=\([0-9]*\) .*/\1/p' "$ENG_ERR")
	m=$(sed -n 's/^prog_reclaim: late_hot=.* late_hot_misses=\([0-9]*\).*/\1/p' "$ENG_ERR")
	bound=$(( ${h:-0} / 300 ))
	eng_say "second half: hot pages absent at their access ${m:-?} of ${h:-?} hot accesses (bound $bound)"
	[ -n "$m" ] && [ -n "$h" ] && [ "$h" -gt 0 ] && [ "$m" -le "$bound" ] ||
		eng_fail "hot pages keep leaving: ${m:-?} misses in ${h:-?} late hot accesses, bound $bound"
fi
eng_finish
