#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Readahead on refault (ZSWAP_READAHEAD, src/engine/readahead.c): with it off and on
# (two window maxima), refaults by sequential, two-thread sequential,
# strided, backward, random, gapped and object (two- and three-page objects
# in a random order) patterns give exactly the bytes of a run without the
# library; and the window adapts: on a sequential pass most pages come in
# read ahead (few faults, hits counted), on a random pass almost nothing is
# read ahead, nor on the objects once most windows went unused (one page
# read ahead at each object's second fault wasted a fifth of the pages);
# with 0 nothing ever is.
#
# Bounds are on counts, never on time, and loose: a fault message can
# outlive its fault (DESIGN.md), so faults may exceed the pages touched.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_readahead)
pages=2048

eng_run ra-plain plain "$prog" $pages
eng_expect_rc 0 || eng_finish
cp "$ENG_OUT" "$ENG_TMP/ref"

# stat PATTERN KEY: a counter of the last run's "stats PATTERN ..." line.
stat() {
	awk -v p="$1" -v k="$2" '$1 == "stats" && $2 == p {
		for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit }
	}' "$ENG_ERR"
}

for ra in 0 8 64; do
	eng_ok_run ra$ra lib ZSWAP_READAHEAD=$ra "$prog" $pages || continue
	eng_expect_same_stdout "$ENG_TMP/ref" || continue
	for p in seq seq2 stride back random skip objects; do
		[ -n "$(stat $p faults)" ] || { eng_fail "ra$ra: no stats line for $p"; continue; }
	done
	# pages touched per pattern: $pages per round, 2 rounds
	total=$((pages * 2))
	seq_f=$(stat seq faults) seq_h=$(stat seq hits) seq_m=$(stat seq misses)
	rnd_f=$(stat random faults) rnd_h=$(stat random hits) rnd_m=$(stat random misses)
	s2_h=$(stat seq2 hits)
	eng_say "ra$ra: seq faults=$seq_f hits=$seq_h misses=$seq_m; random faults=$rnd_f hits=$rnd_h misses=$rnd_m; seq2 hits=$s2_h"
	if [ "$ra" = 0 ]; then
		for p in seq seq2 stride back random skip objects; do
			h=$(stat $p hits) m=$(stat $p misses)
			[ "$h" = 0 ] && [ "$m" = 0 ] ||
				eng_fail "ra0: $p counted readahead (hits=$h misses=$m) with ZSWAP_READAHEAD=0"
		done
		[ "$seq_f" -ge "$total" ] ||
			eng_fail "ra0: seq took $seq_f faults for $total stored pages: something was read ahead"
		continue
	fi
	# Sequential: the window grows, most pages come in read ahead.
	[ "$seq_h" -ge $((total / 2)) ] ||
		eng_fail "ra$ra: seq counted $seq_h readahead hits over $total pages (expected at least half)"
	[ "$seq_f" -le $((total / 2)) ] ||
		eng_fail "ra$ra: seq took $seq_f faults over $total pages (readahead should leave at most half)"
	[ "$s2_h" -gt 0 ] || eng_fail "ra$ra: two sequential threads counted no readahead hits"
	# Random: nothing to detect, so (almost) nothing read ahead: each page
	# is its own fault, and few pages are judged at all.
	[ "$rnd_f" -ge $((total * 9 / 10)) ] ||
		eng_fail "ra$ra: random took only $rnd_f faults over $total pages: more than 10% read ahead"
	[ $((rnd_h + rnd_m)) -le $((total / 10)) ] ||
		eng_fail "ra$ra: random read ahead $((rnd_h + rnd_m)) judged pages (expected at most 10%)"
	# Objects at random (right after the gapped pass, whose windows were
	# used): runs of two or three faults, which lead nowhere.
	obj_h=$(stat objects hits) obj_m=$(stat objects misses)
	eng_say "ra$ra: objects hits=$obj_h misses=$obj_m"
	[ $((obj_h + obj_m)) -le $((total / 10)) ] ||
		eng_fail "ra$ra: objects read ahead $((obj_h + obj_m)) judged pages (expected at most 10%)"
done
eng_finish
