#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# An unprivileged user, for whom userfaultfd is refused
# (vm.unprivileged_userfaultfd=0, /dev/userfaultfd root-only): the library
# prints exactly one "libzswap:" line naming the cause and the fix, then is a
# pure pass-through: zswap_active() == 0, zswap_pageout() fails with ENOSYS,
# and the program's output and exit status are those of a run without it.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_pageout)
eng_need_nobody "$prog"
if setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'test -r /dev/userfaultfd && test -w /dev/userfaultfd' ||
	[ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" = 1 ]; then
	eng_skip "userfaultfd is open to unprivileged users on this machine: nothing to refuse"
fi

for args in "2" "--api 2"; do
	label=$(echo "$args" | tr -c 'a-z0-9\n' '_')
	eng_run "ref$label" nobody-plain "$prog" $args
	eng_expect_rc 0 || continue
	cp "$ENG_OUT" "$ENG_TMP/ref"

	eng_run "nobody$label" nobody-lib "$prog" --expect-inactive $args
	eng_expect_rc 0 || continue
	eng_expect_same_stdout "$ENG_TMP/ref"
	eng_expect_one_libzswap || continue
	echo "$ENG_LINE" | grep -qi 'userfaultfd' ||
		eng_fail "unprivileged: the line does not name the cause (userfaultfd)"
	# The fix: the sysctl, the device's permissions, or a capability.
	echo "$ENG_LINE" | grep -qiE 'unprivileged_userfaultfd|/dev/userfaultfd|CAP_SYS_PTRACE|sysctl|root' ||
		eng_fail "unprivileged: the line does not say how to fix it (sysctl vm.unprivileged_userfaultfd, /dev/userfaultfd)"
done

# The same program with threads and in-kernel faults: still pass-through.
prog=$(eng_prog prog_syscalls)
eng_run syscalls-ref nobody-plain "$prog" read recv write futex
if eng_expect_rc 0; then
	cp "$ENG_OUT" "$ENG_TMP/ref"
	eng_run syscalls nobody-lib "$prog" --expect-inactive read recv write futex
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/ref"
	lines=$(eng_count_libzswap "$ENG_ERR")
	[ "$lines" = 1 ] || eng_fail "unprivileged prog_syscalls: $lines libzswap: lines, expected 1"
fi
eng_finish
