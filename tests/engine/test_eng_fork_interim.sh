#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The fallback: when children cannot be followed (here ZSWAP_POOL_LOCK=pool,
# whose pool lock the fork thread may not take while the kernel copies the
# process), fork loads every evicted page back and the child runs as a
# pass-through; the data is intact on both sides all the same, and the
# child's userfaultfd (EVENT_FORK is still negotiated) is closed by a handler.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_fork)
for c in basic grand threads; do
	eng_run "interim-$c-plain" plain "$prog" --interim "$c"
	eng_expect_rc 0 || continue
	cp "$ENG_OUT" "$ENG_TMP/interim-$c.ref"
	eng_ok_run "interim-$c" lib ZSWAP_POOL_LOCK=pool "$prog" --interim "$c"
	eng_expect_same_stdout "$ENG_TMP/interim-$c.ref"
done
eng_finish
