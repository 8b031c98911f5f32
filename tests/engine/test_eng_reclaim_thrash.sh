#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A working set larger than the limit, touched at random (docs/DESIGN.md,
# "Known bad case"): nearly every page refaults soon after it left, so the
# refault feedback protects nearly every page. Reclaim must still find its
# pages at a bounded cost: during the accesses, pages scanned (pgscan) per
# page stolen (pgsteal) stay low. The library that swept two whole clock
# rotations per step before taking protected pages scanned 24 pages per page
# stolen here (and 100-190 under perl's hash, the known bad case); with the
# scan budget and the protected share capped, 2.8-3.0. The bound (12) is well
# under the old figure and well over the new one; the scan budget alone
# allows up to 17. Counters, not time. Data checked as always.
#
# Then the warning (reclaim_watch_thrash): a program refaulting pages that
# left only moments before, at 1,000 a second or more over a 10 s window,
# hears once on stderr that it thrashes, and thrashing_windows counts the
# window; a scan through three times the limit refaults as often, but
# late, and hears nothing. Both run for 12 s: one window each.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
mb=80
ops=120000
ratio=12

eng_run thrash-plain plain "$prog" random $mb $ops
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/thrash.ref"
# Long enough on a slow machine to be told it thrashes: it does.
ENG_ALLOW_LIBZSWAP='^libzswap: the program is thrashing under ZSWAP_MEMORY_LIMIT \(64 MiB\)'
eng_run thrash lib ZSWAP_MEMORY_LIMIT=64M "$prog" random $mb $ops
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/thrash.ref"; then
	scan=$(sed -n 's/^prog_reclaim: access_pgscan=\([0-9]*\).*/\1/p' "$ENG_ERR")
	steal=$(sed -n 's/^prog_reclaim: .*access_pgsteal=\([0-9]*\).*/\1/p' "$ENG_ERR")
	act=$(sed -n 's/^prog_reclaim: .*access_activations=\([0-9]*\).*/\1/p' "$ENG_ERR")
	eng_say "during $ops accesses: pgscan ${scan:-?}, pgsteal ${steal:-?}, activations ${act:-?} (bound: pgscan <= $ratio x pgsteal)"
	if [ -z "$scan" ] || [ -z "$steal" ] || [ "$steal" -eq 0 ]; then
		eng_fail "no reclaim counted during the accesses (pgscan ${scan:-?}, pgsteal ${steal:-?})"
	elif [ "${act:-0}" -lt $((steal / 2)) ]; then
		eng_fail "the case is not the one meant: ${act:-?} activations for $steal pages stolen (refault feedback off?)"
	elif [ "$scan" -gt $((ratio * steal)) ]; then
		eng_fail "reclaim scanned $scan pages to steal $steal (more than $ratio per page): protection swept over and over"
	fi
fi
ENG_ALLOW_LIBZSWAP=

stat() { eng_stat prog_reclaim "$1"; }

said='^libzswap: the program is thrashing under ZSWAP_MEMORY_LIMIT \(32 MiB\): [0-9]+ refaults a second over the last 1[0-9] s, [0-9]+ % of them pages evicted only moments before'
eng_run warn lib ZSWAP_MEMORY_LIMIT=32M "$prog" random-for 36 12
if eng_expect_rc 0; then
	n=$(grep -cE "$said" "$ENG_ERR" || true)
	win=$(stat thrashing_windows)
	act=$(sed -n 's/^prog_reclaim: .*access_activations=\([0-9]*\).*/\1/p' "$ENG_ERR")
	eng_say "random over 36 MiB under 32M for 12 s: activations ${act:-?}, thrashing_windows ${win:-?}, warned $n time(s)"
	ENG_ALLOW_LIBZSWAP=$said
	eng_expect_no_libzswap
	ENG_ALLOW_LIBZSWAP=
	if [ "$n" != 1 ]; then
		eng_fail "warn: the thrashing line was said $n times (once expected)"
	elif [ "${win:-0}" -lt 1 ]; then
		eng_fail "warn: thrashing_windows ${win:-?} after the line was said"
	fi
fi

eng_run scan lib ZSWAP_MEMORY_LIMIT=32M "$prog" cycle 96 12
if eng_expect_rc 0 && eng_expect_no_libzswap; then
	win=$(stat thrashing_windows)
	ref=$(sed -n 's/^prog_reclaim: cycle_passes=.* cycle_refaults=\([0-9]*\).*/\1/p' "$ENG_ERR")
	eng_say "passes over 96 MiB under 32M for 12 s: refaults ${ref:-?}, thrashing_windows ${win:-?}"
	if [ "${ref:-0}" -lt 20000 ]; then
		eng_fail "scan: ${ref:-?} refaults: not the case meant (a scan refaulting all the time)"
	elif [ "${win:-x}" != 0 ]; then
		eng_fail "scan: thrashing_windows ${win:-?}: late refaults counted as thrashing"
	fi
fi
eng_finish
