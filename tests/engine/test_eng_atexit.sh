#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Evicted memory read at exit by an atexit handler (which also evicts again),
# by the program's destructor, and by the destructor of a library finalised
# after libzswap's own destructor: all read the right data.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_atexit)
helper=$(eng_prog prog_atexit_lib.so)
eng_run ref plain LD_PRELOAD="${ENG_SAN_PRELOAD:+$ENG_SAN_PRELOAD }$helper" "$prog"
eng_expect_rc 0 || eng_finish
cp "$ENG_OUT" "$ENG_TMP/ref"
for l in "main returns" "program destructor: ok" "library destructor: ok"; do
	grep -q "^$l" "$ENG_OUT" || eng_fail "the reference run printed no '$l' line"
done
# libzswap first in LD_PRELOAD (after the ASan runtime in an ASan build):
# initialised after the helper, finalised before it.
eng_run atexit plain LD_PRELOAD="$ENG_PRELOAD $helper" "$prog"
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
# And the other order.
eng_run atexit-rev plain LD_PRELOAD="${ENG_SAN_PRELOAD:+$ENG_SAN_PRELOAD }$helper $ENG_LIB" "$prog"
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
eng_finish
