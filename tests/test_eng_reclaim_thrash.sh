#!/bin/sh
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
. "${ZSWAP_SRCDIR:-$(dirname "$0")/..}/tests/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
mb=80
ops=120000
ratio=12

eng_run thrash-plain plain "$prog" random $mb $ops
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/thrash.ref"
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
eng_finish
