#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Root without CAP_SYS_PTRACE (a container's root, or a user given
# /dev/userfaultfd): the kernel offers fork events to everyone but grants them
# only with CAP_SYS_PTRACE. The library goes on without them as on a kernel
# that has none: it is active, pages go out and come back, and fork loads
# the evicted pages back first, the child running as a pass-through, the
# data intact on both sides.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ "$(id -u)" = 0 ] || eng_skip "needs root (to drop CAP_SYS_PTRACE alone)"
command -v setpriv >/dev/null 2>&1 || eng_skip "setpriv(1) is missing (util-linux)"
noptrace="setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace"
eff=$($noptrace sh -c 'sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status')
[ -n "$eff" ] && [ $(((0x$eff >> 19) & 1)) = 0 ] ||
	eng_skip "setpriv cannot drop CAP_SYS_PTRACE here (CapEff ${eff:-unknown})"
# userfaultfd must still open without the capability: /dev/userfaultfd
# (root's own) or the sysctl.
[ -c /dev/userfaultfd ] || [ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" = 1 ] ||
	eng_skip "no /dev/userfaultfd and vm.unprivileged_userfaultfd=0: nothing opens without CAP_SYS_PTRACE"

prog=$(eng_prog prog_pageout)
eng_run noptrace-ref plain "$prog" 2
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/pageout.ref"
# prog_pageout exits 77 when the library is inactive: here that is a failure.
eng_run noptrace lib $noptrace "$prog" 2
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/pageout.ref"

prog=$(eng_prog prog_fork)
for c in basic grand threads; do
	eng_run "noptrace-$c-plain" plain "$prog" --interim "$c"
	eng_expect_rc 0 || continue
	cp "$ENG_OUT" "$ENG_TMP/fork-$c.ref"
	eng_ok_run "noptrace-$c" lib $noptrace "$prog" --interim "$c"
	eng_expect_same_stdout "$ENG_TMP/fork-$c.ref"
done
eng_finish
