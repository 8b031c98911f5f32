#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_rules_docs.sh - N% and auto of ZSWAP_MEMORY_LIMIT mean one thing
# wherever they are defined: the option table's help (its definition,
# OPT_LIMIT_PERCENT_TEXT in src/core/options.h), `zswapctl run --help`,
# zswapctl(1), libzswap(7) and the README each give the same sentence
# (whitespace aside), and zswapctl(1) lists auto among --limit's forms.

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${ZSWAP_SRCDIR:-$here/../..}
builddir=${ZSWAP_BUILDDIR:-$here/../..}
list=$builddir/tests/unit/test_options_list
ctl=$builddir/tools/zswapctl/zswapctl

fail=0
bad() {
	echo "FAIL: $*" >&2
	fail=1
}
[ -x "$list" ] && [ -x "$ctl" ] || { echo "test_rules_docs: $list or $ctl is not built" >&2; exit 99; }

# Text with its lines joined and runs of blanks made one space.
flat() {
	tr '\n\t' '  ' | tr -s ' '
}

def=$("$list" | awk '$1 == "ZSWAP_MEMORY_LIMIT"' | sed -n 's/.*\(N% is .* outside one\).*/\1/p')
[ -n "$def" ] || { bad "the option table's help of ZSWAP_MEMORY_LIMIT defines no 'N% is ... outside one'"; exit 1; }

check() {
	case "$2" in
	*"$def"*) ;;
	*) bad "$1 does not define N% and auto as the option table does: '$def'" ;;
	esac
}
check "zswapctl run --help" "$("$ctl" run --help | flat)"
check "man/zswapctl.1" "$(flat <"$srcdir/man/zswapctl.1")"
check "man/libzswap.7" "$(flat <"$srcdir/man/libzswap.7")"
check "README.md" "$(flat <"$srcdir/README.md")"

# zswapctl(1)'s --limit entry names auto.
awk '/^\.It Fl -limit/ { on = 1; next } /^\.It / { on = 0 } on' "$srcdir/man/zswapctl.1" | grep -q '^\.Cm auto' ||
	bad "man/zswapctl.1: --limit does not list auto"
# No page or help defines N% of the limit as of physical memory alone.
"$ctl" run --help | flat | grep -q 'N% of memory\|N% of physical' && bad "zswapctl run --help: N% defined otherwise"

exit $fail
