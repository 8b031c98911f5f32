#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# soak.sh - tests/soak/soak under libzswap and a tight limit: writer threads
# write and check 128 MiB of pages under 48M (the pool and the second tier
# both at work) while other threads fork (every child checks every page;
# some exec), mremap, madvise (MADV_DONTNEED, MADV_PAGEOUT, MADV_COLD) and
# munmap. Not in `make check`: it runs for SECONDS (default 600).
#
# Usage: tests/soak/soak.sh [--control] [SECONDS] [LIMIT]   (from the build
# directory, or with ZSWAP_BUILDDIR set). Prints soak's summary and the
# library's statistics at exit; exits non-zero if a byte was lost.
# --control: meanwhile, every 0.3 s, zswapctl changes the running process
# (the limit between 32M, 64M, none and 48M, the charge model, the cold
# age, writeback, readahead) or asks it to reclaim, compact and reset; a
# request that fails (but a reclaim that finds too little) fails the soak.
set -eu
builddir=${ZSWAP_BUILDDIR:-$(pwd)}
control=0
if [ "${1:-}" = --control ]; then
	control=1
	shift
fi
secs=${1:-600}
limit=${2:-48M}
for f in "$builddir/.libs/libzswap.so" "$builddir/tests/soak/soak" "$builddir/tools/zswapctl/zswapctl"; do
	[ -e "$f" ] || { echo "soak.sh: $f is not built (run from the build directory)" >&2; exit 1; }
done
run() {
	exec env LD_PRELOAD="$builddir/.libs/libzswap.so" ZSWAP_MEMORY_LIMIT="$limit" ZSWAP_STATS_AT_EXIT=1 \
		"$builddir/tests/soak/soak" --seconds "$secs" --writers 4 --mib-per-writer 32
}
[ "$control" = 1 ] || run

(run) &
pid=$!	# the soak program itself: the subshell became it
ctl=$builddir/tools/zswapctl/zswapctl
err=$(mktemp)
trap 'rm -f "$err"' EXIT
calls=0 failed=0
sleep 2	# the library's socket
while kill -0 "$pid" 2>/dev/null; do
	for req in "set $pid memory_limit=32M" "reclaim $pid 8M" "set $pid memory_limit=64M cold_age=2" \
		"compact $pid" "set $pid memory_limit=0" "reset $pid" \
		"set $pid memory_limit=$limit writeback=1 readahead=4" "set $pid memory_charge=v1" \
		"set $pid memory_charge=v2 readahead=16"; do
		kill -0 "$pid" 2>/dev/null || break
		rc=0
		# shellcheck disable=SC2086 # the request's words
		"$ctl" $req > /dev/null 2> "$err" || rc=$?
		calls=$((calls + 1))
		# The program ending removes its socket first: not a failure.
		if [ "$rc" != 0 ] && grep -q "is not running libzswap" "$err"; then
			for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null && sleep 0.2; done
		fi
		if [ "$rc" != 0 ] && ! { [ "$rc" = 1 ] && grep -q "less than asked" "$err"; } &&
		   kill -0 "$pid" 2>/dev/null; then
			failed=$((failed + 1))
			echo "soak.sh: zswapctl $req: exit $rc: $(cat "$err")" >&2
		fi
		sleep 0.3
	done
done
rc=0
wait "$pid" || rc=$?
echo "soak.sh: $calls zswapctl requests, $failed failed"
[ "$failed" = 0 ] || exit 1
exit "$rc"
