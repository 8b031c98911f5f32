#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A decompression failure poisons the address: the program gets SIGBUS there
# (again on every touch), never a wrong or zero page; the other pages are
# intact; decompress_fail and poisoned_pages count it.
#
# The failure is injected from outside through the test hook
# ZSWAP_INJECT_DECOMPRESS_FAIL=N (the next N loads fail as if the compressed
# data were corrupt). A library without the hook names the variable as
# unknown: the test then skips, saying what is missing.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

# The hook this test asks for: make the next N page loads fail as if the
# compressed data were corrupt.
hook=${ENG_POISON_HOOK:-ZSWAP_INJECT_DECOMPRESS_FAIL}

prog=$(eng_prog prog_poison)
eng_run poison lib "$hook=1" ZSWAP_READAHEAD=0 "$prog"
if grep '^libzswap:' "$ENG_ERR" | grep -qF "$hook"; then
	grep '^libzswap:' "$ENG_ERR" >&2
	eng_skip "the library does not know $hook: no way to inject a decompression failure from outside (needs an" \
		"environment hook that calls zswap_store_inject(store, ZSWAP_INJECT_DECOMPRESS, N) at start-up)"
fi
if [ "$ENG_RC" = 77 ]; then
	cat "$ENG_ERR" >&2
	eng_skip "no decompression failure was injected through $hook"
fi
eng_expect_rc 0 && eng_expect_stdout_has "poison ok"
eng_finish
