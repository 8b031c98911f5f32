#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The pool limit and working sets that do not fit:
#  - the store's hysteresis (ZSWAP_ACCEPT_THRESHOLD_PERCENT), in process
#    (prog_reclaim_pool);
#  - a program under ZSWAP_MEMORY_LIMIT whose pool would exceed
#    ZSWAP_MAX_POOL_SIZE: stores are refused (pool_limit_hit), the pages stay
#    resident, the limit cannot hold (memory_events_max) and the program runs
#    correctly all the same;
#  - a working set whose compressed size alone is over the memory limit:
#    the same, correct and finishing;
#    (both without the second tier, ZSWAP_WRITEBACK=0, which would hold the
#    limit: test_eng_writeback.sh);
#  - a pool left full of holes (half its pages given back): reclaim compacts
#    it before evicting more, and every page reads back.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

unit=$(eng_prog prog_reclaim_pool)
eng_run pool-unit plain "$unit"
eng_expect_rc 0

prog=$(eng_prog prog_reclaim)
stat() { eng_stat prog_reclaim "$1"; }

eng_run fill-plain plain "$prog" fill 128
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/fill.ref"

# Stuck long enough (a second), the library says the limit cannot hold
# because the pool is full; only that.
ENG_ALLOW_LIBZSWAP='^libzswap: ZSWAP_MEMORY_LIMIT \(32 MiB\) cannot hold: the pool is full'
eng_run poolfull lib ZSWAP_WRITEBACK=0 ZSWAP_MEMORY_LIMIT=32M ZSWAP_MAX_POOL_SIZE=8M ZSWAP_ACCEPT_THRESHOLD_PERCENT=50 "$prog" fill 128
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/fill.ref"; then
	hit=$(stat pool_limit_hit)
	over=$(stat memory_events_max)
	eng_say "pool limit 8M: pool_limit_hit ${hit:-?}, memory_events_max ${over:-?}"
	[ "${hit:-0}" -gt 0 ] || eng_fail "the pool limit was never hit (pool_limit_hit ${hit:-?})"
	[ "${over:-0}" -gt 0 ] || eng_fail "faults were never let through over the limit (memory_events_max ${over:-?})"
fi
ENG_ALLOW_LIBZSWAP=

# 128 MiB of this data takes ~33 MiB compressed: over a 16 MiB limit alone.
# The library says so, once, on stderr (reclaim_say_stuck, after a second
# stuck over the limit), and nothing else. The program sits idle 2 s after
# its fill (idle mode; nothing is stored proactively here): the fill alone
# left about a second stuck (the pool passes 14 MiB a little before half
# way), and once in 10 runs too little.
eng_run nofit-plain plain "$prog" idle 128 2
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/nofit.ref"
ENG_ALLOW_LIBZSWAP='^libzswap: ZSWAP_MEMORY_LIMIT \(16 MiB\) cannot hold: the compressed data alone does not fit in it'
eng_run nofit lib ZSWAP_WRITEBACK=0 ZSWAP_MEMORY_LIMIT=16M "$prog" idle 128 2
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/nofit.ref"; then
	over=$(stat memory_events_max)
	said=$(grep -cE "$ENG_ALLOW_LIBZSWAP" "$ENG_ERR" || true)
	eng_say "16M limit: memory_events_max ${over:-?}, said it cannot hold $said time(s)"
	[ "${over:-0}" -gt 0 ] || eng_fail "an impossible limit was never reported (memory_events_max ${over:-?})"
	[ "$said" = 1 ] || eng_fail "an impossible limit was said $said time(s) on stderr, not once"
fi
ENG_ALLOW_LIBZSWAP=
# A pool full of holes: half the stored pages given back at random, then
# written again over the limit. Reclaim compacts before it evicts
# (pages_compacted); every page, the moved objects' included, reads back.
eng_run frag-plain plain "$prog" frag 96
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/frag.ref"
eng_run frag lib ZSWAP_MEMORY_LIMIT=32M "$prog" frag 96
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/frag.ref"; then
	comp=$(stat pages_compacted)
	eng_say "holes in the pool: pages_compacted ${comp:-?}"
	[ "${comp:-0}" -gt 0 ] || eng_fail "reclaim never compacted a pool full of holes (pages_compacted ${comp:-?})"
fi
eng_finish
