#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Cold pages without accessed bits: under ZSWAP_MEMORY_LIMIT, a hot/cold
# workload (90% of the accesses, reads and writes, on a tenth of the pages,
# spread over the whole range) keeps its hot pages resident. Every
# cold access may refault; the hot pages may each refault a couple of times
# (they were all evicted by the fill, and the policy only learns they are hot
# from their refaults), but not at every access: the bound is generous
# (cold accesses + 2 x hot pages); a policy blind to hotness (FIFO, or
# evicting in address order) refaults on most hot accesses, several times
# that. Data checked as always.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
mb=128
ops=60000
hot_pages=$((mb * 256 / 10))
bound=$((ops / 10 + 2 * hot_pages))

eng_run hotcold-plain plain "$prog" hotcold $mb $ops
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/hotcold.ref"
eng_run hotcold lib ZSWAP_MEMORY_LIMIT=64M "$prog" hotcold $mb $ops
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/hotcold.ref"; then
	r=$(sed -n 's/^prog_reclaim: access_refaults=\([0-9]*\).*/\1/p' "$ENG_ERR")
	eng_say "refaults during $ops accesses: ${r:-?} (bound $bound)"
	[ -n "$r" ] && [ "$r" -le "$bound" ] ||
		eng_fail "hot pages do not stay resident: ${r:-?} refaults in $ops accesses, bound $bound"
fi

# MADV_COLD (src/shim/interpose.c, engine_cold): 24 MiB A, then 24 MiB B, both
# resident under the 64M limit; B advised cold; then 28 MiB of fresh pages.
# Reclaim must take B (at most 40% left) and leave A (at least 80% kept);
# without the advice it takes A first (prog_reclaim.c cold_judge: the
# figures). Every byte checked, the same stdout as without the library.
# cold-over: 40 + 40 MiB, over the limit before the advice (the fill's
# reclaim left the clock's hand inside A), then 24 MiB fresh: B must still
# go first. Before the advised ranges were visited first
# (reclaim_cold_hint), A's resident pages all went (3,096-3,584 -> 0) while
# B kept 4,542-5,370 of 10,240; now A keeps all it had, B 331-1,536.
for c in "cold 48 28" "cold-over 80 24"; do
	# shellcheck disable=SC2086
	if eng_compare_run "${c%% *}" ZSWAP_MEMORY_LIMIT=64M "$prog" $c; then
		line=$(grep '^prog_reclaim: cold_a=' "$ENG_ERR")
		eng_say "${c%% *}: ${line#prog_reclaim: }"
	fi
done
eng_finish
