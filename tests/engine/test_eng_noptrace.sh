#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Root without CAP_SYS_PTRACE (a container's root, or a user given
# /dev/userfaultfd): the kernel offers fork events to everyone but grants them
# only with CAP_SYS_PTRACE. The library goes on without them as on a kernel
# that has none: it is active, pages go out and come back, and fork loads
# the evicted pages back first, the child starting a libzswap of its own
# (test_eng_fork_restart.sh), the data intact on both sides.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

eng_need_noptrace
noptrace=$ENG_NOPTRACE

prog=$(eng_prog prog_pageout)
eng_run noptrace-ref plain "$prog" 2
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/pageout.ref"
# prog_pageout exits 77 when the library is inactive: here that is a failure.
eng_run noptrace lib $noptrace "$prog" 2
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/pageout.ref"

prog=$(eng_prog prog_fork)
for c in basic grand threads; do
	eng_run "noptrace-$c-plain" plain "$prog" --restart "$c"
	eng_expect_rc 0 || continue
	cp "$ENG_OUT" "$ENG_TMP/fork-$c.ref"
	eng_ok_run "noptrace-$c" lib $noptrace "$prog" --restart "$c"
	eng_expect_same_stdout "$ENG_TMP/fork-$c.ref"
done
eng_finish
