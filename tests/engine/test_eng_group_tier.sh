#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One second tier for a group (src/reclaim/group.c, src/core/backing.h): a
# python parent, a fork child and a program it runs with TMPDIR elsewhere,
# each holding 40 MiB of random bytes under a group with ZSWAP_BACKING_MAX=24M;
# zswapctl reclaim and writeback send 8 MiB of the third member's to the
# tier, then all of the others' (group_tier.py). The tree's disk use,
# sampled from its files' blocks, stays within the one cap (three members
# with a cap each reach three times it); every file is in the directory the
# first member resolved; the dump's memory.swap.current is the files'
# blocks, memory.swap.max the cap and memory.swap.events.max counts the
# refusals; the third member killed with SIGKILL takes its bytes out of
# memory.swap.current and the table, no member holds its file, and another
# member writes into the room; a member that execs a program under the
# library (its slot kept) takes its old file's bytes out; the others read
# every byte back.
ENG_TIMEOUT=${ENG_TIMEOUT:-300}	# a generous bound: a hang fails, slowness does not
# The writes refused at the cap say so.
ENG_ALLOW_LIBZSWAP='could not take a page'
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"
zswapctl="$ENG_BUILDDIR/tools/zswapctl/zswapctl"
[ -x "$zswapctl" ] || { eng_say "ERROR: $zswapctl is not built"; exit 99; }
script="$ENG_SRCDIR/tests/engine/group_tier.py"
# Two directories on a disk: the first member's default, and member 2's.
base=$(mktemp -d /var/tmp/eng_group_tier.XXXXXX) || eng_skip "mktemp in /var/tmp failed"
trap 'rm -rf "$base" "$ENG_TMP"' EXIT
mkdir "$base/a" "$base/b" "$base/work"
cap=$((24 << 20))

eng_run tier plain /usr/bin/python3 "$script" driver "$base/work" "$zswapctl" "$base/a" $cap -- \
	env LD_PRELOAD="$ENG_PRELOAD" TMPDIR="$base/a" ZSWAP_MEMORY_LIMIT=256M ZSWAP_BACKING_MAX=24M \
	/usr/bin/python3 "$script" member 0 "$base/work" "$base/b"
eng_expect_no_libzswap
sed 's/^/  /' "$ENG_OUT" >&2
for c in dir dump kill refill exec cap data; do
	grep -q "^check $c: True" "$ENG_OUT" || eng_fail "$c: $(sed -n "s/^check $c: //p" "$ENG_OUT")"
done
eng_finish
