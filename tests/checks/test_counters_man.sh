#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_counters_man.sh - man/libzswap.7 describes every counter of the table
# (src/engine/counters.def), and the build refuses a table that does not
# match struct zswap_stats.
#
# 1. Every PUBLIC row (a field of struct zswap_stats) has an ".It Va NAME"
#    entry in the page's STATISTICS section, every DUMP row (the dump's own)
#    one in its DUMPS section, and STATISTICS describes no counter the table
#    does not have (size, the struct's length, aside). The rows come from tests/unit/test_counters_list, which
#    compiles the table. The comparison is first run on a copy of the page
#    without one entry, and must fail there.
# 2. src/engine/counters.h compiled with a table of one row too many, and
#    of one row too few, fails: a row without a struct field, or a field
#    without a row, does not build.

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${ZSWAP_SRCDIR:-$here/../..}
builddir=${ZSWAP_BUILDDIR:-$here/../..}
list=$builddir/tests/unit/test_counters_list
man7=$srcdir/man/libzswap.7
def=$srcdir/src/engine/counters.def
cc=${ZSWAP_CC:-cc}

say() { echo "test_counters_man: $*" >&2; }
for f in "$man7" "$def" "$srcdir/src/engine/counters.h" "$srcdir/include/zswap.h"; do
	[ -r "$f" ] || { say "$f is missing"; exit 99; }
done
[ -x "$list" ] || { say "$list is not built (make check builds it)"; exit 99; }

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

"$list" > "$tmp/rows" || { say "$list failed"; exit 99; }
[ -s "$tmp/rows" ] || { say "the table has no rows"; exit 99; }

# va SECTION PAGE: the ".It Va" names of a section of a page, sorted.
va() {
	awk -v want="$1" '/^\.Sh / { inside = ($2 == want) }
		inside && $1 == ".It" && $2 == "Va" { print $3 }' "$2" | sort -u
}

# compare PAGE: every row described where its api says; prints what is not.
compare() {
	va STATISTICS "$1" > "$tmp/stats"
	va DUMPS "$1" > "$tmp/dumps"
	bad=0
	while read -r name sect src api reset help; do
		case $api in
		PUBLIC) where=STATISTICS; file=$tmp/stats ;;
		DUMP) where=DUMPS; file=$tmp/dumps ;;
		*) echo "counter $name: api '$api' is neither PUBLIC nor DUMP"; bad=1; continue ;;
		esac
		grep -qxF "$name" "$file" ||
			{ echo "counter $name ($api, src/engine/counters.def) is not described in man/libzswap.7 $where"; bad=1; }
	done < "$tmp/rows"
	# size is struct zswap_stats' length, not a counter: it has no row.
	{ echo size; awk '$4 == "PUBLIC" { print $1 }' "$tmp/rows"; } | sort > "$tmp/public"
	for name in $(comm -13 "$tmp/public" "$tmp/stats"); do
		echo "man/libzswap.7 STATISTICS describes $name, which is no PUBLIC row of src/engine/counters.def"
		bad=1
	done
	return $bad
}

fail=0

# 1. The page against the table, once the comparison is seen to catch a
# missing entry.
first=$(awk '$4 == "PUBLIC" { print $1; exit }' "$tmp/rows")
awk -v n="$first" '$1 == ".It" && $2 == "Va" && $3 == n { next } { print }' "$man7" > "$tmp/short.7"
if compare "$tmp/short.7" > "$tmp/self"; then
	say "ERROR: the comparison accepted a page without $first"; exit 99
fi
grep -q "counter $first " "$tmp/self" ||
	{ say "ERROR: the comparison failed for the wrong reason:"; cat "$tmp/self" >&2; exit 99; }
if ! compare "$man7" > "$tmp/out"; then
	sed 's/^/FAIL: /' "$tmp/out" >&2
	fail=1
fi

# 2. The build ties the table to struct zswap_stats.
if command -v "${cc%% *}" > /dev/null 2>&1; then
	mkdir -p "$tmp/src/engine"
	cp "$srcdir/src/engine/counters.h" "$tmp/src/engine/"
	printf '#include "engine/counters.h"\nint main(void) { return COUNTER__COUNT == 0; }\n' > "$tmp/t.c"
	build() { $cc -std=gnu11 -I"$tmp/src" -I"$srcdir/include" -c "$tmp/t.c" -o "$tmp/t.o" 2> "$tmp/cc.err"; }
	cp "$def" "$tmp/src/engine/counters.def"
	build || { say "ERROR: counters.h does not compile with the table as it is:"; cat "$tmp/cc.err" >&2; exit 99; }
	{ cat "$def"; echo 'COUNTER(no_such_field, ENGINE, STORE, PUBLIC, KEEP, "none")'; } > "$tmp/src/engine/counters.def"
	build && { echo "FAIL: a PUBLIC row without a field of struct zswap_stats builds" >&2; fail=1; }
	grep -v "^COUNTER($first," "$def" > "$tmp/src/engine/counters.def"
	build && { echo "FAIL: a field of struct zswap_stats without a row ($first) builds" >&2; fail=1; }
	grep -q 'has no row' "$tmp/cc.err" ||
		{ echo "FAIL: a field without a row fails to build, but not with the table's message" >&2; fail=1; }
else
	say "no compiler ($cc): the build's ties not checked"
fi

if [ "$fail" = 0 ]; then
	echo "test_counters_man: $(wc -l < "$tmp/rows") counters described, the table tied to struct zswap_stats"
	exit 0
fi
exit 1
