#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_options_man.sh - man/libzswap.7 documents exactly the option table;
# the man pages render cleanly.
#
# Every option of the table (as tests/unit/test_options_list prints it) has an
# ".It Ev NAME" entry in man/libzswap.7 that states its default as
# "Default: .Ql VALUE", its range ("from MIN to MAX", or each choice word)
# and its unit; every ZSWAP_* the page documents is in the table. The pages
# (libzswap.7, zswap.3, zswapctl.1) must also render without warnings
# (groff -ww, and mandoc -T lint when present).
# tests/checks/test_counters_man.sh checks the statistics against the page,
# tests/engine/test_eng_stats.sh a real dump's counters.

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${ZSWAP_SRCDIR:-$here/../..}
builddir=${ZSWAP_BUILDDIR:-$here/../..}
list=$builddir/tests/unit/test_options_list
man7=$srcdir/man/libzswap.7
man3=$srcdir/man/zswap.3
man1=$srcdir/man/zswapctl.1

# ZSWAP_* names the page mentions that are not options: src/core/options.c
# ignores them on purpose (opt_not_options).
not_options="ZSWAP_LIB ZSWAP_BUILDDIR ZSWAP_SRCDIR ZSWAP_GROUP ZSWAP_GROUP_PARENT"

fail=0
bad() {
	echo "FAIL: $*" >&2
	fail=1
}

for f in "$man7" "$man3" "$man1"; do
	[ -r "$f" ] || { echo "test_options_man: $f is missing" >&2; exit 99; }
done
[ -x "$list" ] || { echo "test_options_man: $list is not built (make check builds it)" >&2; exit 99; }

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

"$list" > "$tmp/list" || { echo "test_options_man: $list failed" >&2; exit 99; }
awk '$1 ~ /^ZSWAP_/' "$tmp/list" > "$tmp/options"
[ -s "$tmp/options" ] || { bad "the listing has no options"; exit 1; }

# The text of the ".It Ev NAME" entries, lines joined by spaces, each entry
# starting with "@ENTRY": empty when the page has none.
entry() {
	awk -v name="$1" '
		/^\.It / || /^\.El/ { inside = 0 }
		$1 == ".It" && $2 == "Ev" && $3 == name { inside = 1; printf "@ENTRY " }
		inside { printf "%s ", $0 }
	' "$man7"
}

# 1. Every option in the table is documented with its default, range and unit.
while read -r name def range unit help; do
	text=$(entry "$name")
	if [ -z "$text" ]; then
		bad "$name is not documented in man/libzswap.7 (no '.It Ev $name')"
		continue
	fi
	case $text in
	*@ENTRY*@ENTRY*) bad "$name is documented twice in man/libzswap.7" ;;
	esac
	case "$text " in
	*"Default: .Ql $def "*) ;;
	*) bad "$name: man/libzswap.7 does not give the default as 'Default:' then '.Ql $def'" ;;
	esac

	# The range: "2..4" -> "from 2 to 4"; "class|pool" -> each word;
	# "lz4|zstd[:1..19]" -> both words and "from 1 to 19"; "0..,1%..100%"
	# -> an open end needs nothing, "from 1% to 100%".
	words=$(printf '%s\n' "$range" | sed 's/\[[^]]*\]//g' | tr ',' '\n' | grep -v '\.\.' | tr '|' ' ')
	spans=$(printf '%s\n' "$range" | tr ',[]:' '\n\n\n\n' | grep '\.\.')
	for w in $words; do
		case "$text" in
		*"$w"*) ;;
		*) bad "$name: the choice '$w' is not in its man page entry" ;;
		esac
	done
	for s in $spans; do
		lo=${s%%..*}
		hi=${s#*..}
		[ -n "$hi" ] || continue
		case "$text" in
		*"from $lo to $hi"*) ;;
		*) bad "$name: its man page entry does not say 'from $lo to $hi'" ;;
		esac
	done
	if [ "$unit" != "-" ]; then
		case "$text" in
		*"$unit"*) ;;
		*) bad "$name: its man page entry does not give the unit ($unit)" ;;
		esac
	fi
done < "$tmp/options"

# 2. Every ZSWAP_* the page documents or refers to exists in the table.
grep -E '^\.(It Ev|Ev) ZSWAP_[A-Z0-9_]+' "$man7" | grep -oE 'ZSWAP_[A-Z0-9_]+' | sort -u > "$tmp/documented"
while read -r name; do
	if ! awk -v n="$name" '$1 == n { found = 1 } END { exit !found }' "$tmp/options"; then
		case " $not_options " in
		*" $name "*) ;;
		*) bad "man/libzswap.7 documents $name, which is not in the option table" ;;
		esac
	fi
done < "$tmp/documented"

# 3. The options a running process may change (zswapctl set) are exactly
# those of the page's "Changing a running process" list.
"$list" --runtime | sort > "$tmp/runtime" || { echo "test_options_man: $list --runtime failed" >&2; exit 99; }
awk '
	/^\.Ss Changing a running process/ { sect = 1; next }
	/^\.S[sh] / { sect = 0 }
	sect && /^\.Bl/ { inside = 1 }
	sect && /^\.El/ { inside = sect = 0 }
	inside && $1 == ".Ev" { print $2 }
' "$man7" | sort > "$tmp/runtime_man"
[ -s "$tmp/runtime" ] || bad "no option is marked changeable at run time"
diff "$tmp/runtime" "$tmp/runtime_man" > "$tmp/runtime_diff" ||
	bad "libzswap(7)'s 'Changing a running process' list differs from the table (< table, > page): $(tr '\n' ' ' < "$tmp/runtime_diff")"

# 4. The pages render without warnings.
checked=
if command -v groff > /dev/null 2>&1; then
	for page in "$man7" "$man3" "$man1"; do
		out=$(groff -mandoc -ww -z "$page" 2>&1)
		[ -z "$out" ] || bad "groff warns about $page: $out"
	done
	checked="groff"
fi
if command -v mandoc > /dev/null 2>&1; then
	for page in "$man7" "$man3" "$man1"; do
		out=$(mandoc -T lint -W warning "$page" 2>&1)
		[ -z "$out" ] || bad "mandoc -T lint warns about $page: $out"
	done
	checked="$checked mandoc"
fi
[ -n "$checked" ] || echo "test_options_man: neither groff nor mandoc here; rendering not checked" >&2

n=$(wc -l < "$tmp/options")
if [ "$fail" = 0 ]; then
	echo "test_options_man: $n options documented"
	exit 0
fi
exit 1
