#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Proactive reclaim (ZSWAP_COLD_AGE): with no memory limit, an idle program's
# pages are compressed once they have not been touched for the cold age. The
# program fills 64 MiB, then waits (at most 40 s: a hang is a failure, not a
# timing assertion) until the library has stored half its pages; then every
# byte is checked.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
eng_run idle-plain plain "$prog" idle 64 0
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/idle.ref"
eng_run idle lib ZSWAP_COLD_AGE=1 "$prog" idle 64 40
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/idle.ref"; then
	line=$(grep '^prog_reclaim: idle_stored=' "$ENG_ERR")
	stored=$(echo "$line" | sed 's/.*idle_stored=\([0-9]*\).*/\1/')
	pro=$(sed -n 's/^prog_reclaim: stat pgsteal_proactive=\([0-9]*\)/\1/p' "$ENG_ERR")
	eng_say "${line#prog_reclaim: }; pgsteal_proactive ${pro:-?}"
	[ "${stored:-0}" -ge 8192 ] && [ "${pro:-0}" -ge 8192 ] ||
		eng_fail "idle pages were not compressed: stored ${stored:-?} of 16384, pgsteal_proactive ${pro:-?}"
fi
# Without ZSWAP_COLD_AGE nothing is compressed behind the program's back.
eng_run idle-off lib ZSWAP_COLD_AGE=0 "$prog" idle 16 1
if eng_expect_rc 0; then
	pro=$(sed -n 's/^prog_reclaim: stat pgsteal_proactive=\([0-9]*\)/\1/p' "$ENG_ERR")
	[ "${pro:-x}" = 0 ] || eng_fail "ZSWAP_COLD_AGE=0 compressed ${pro:-?} pages"
fi
eng_finish
