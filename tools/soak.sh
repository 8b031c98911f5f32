#!/bin/sh
# soak.sh - tools/soak under libzswap and a tight limit: writer threads
# write and check 128 MiB of pages under 48M (the pool and the second tier
# both at work) while other threads fork (every child checks every page;
# some exec), mremap, madvise (MADV_DONTNEED, MADV_PAGEOUT, MADV_COLD) and
# munmap. Not in `make check`: it runs for SECONDS (default 600).
#
# Usage: tools/soak.sh [SECONDS] [LIMIT]   (from the build directory, or
# with ZSWAP_BUILDDIR set). Prints soak's summary and the library's
# statistics at exit; exits non-zero if a byte was lost.
set -eu
builddir=${ZSWAP_BUILDDIR:-$(pwd)}
secs=${1:-600}
limit=${2:-48M}
for f in "$builddir/.libs/libzswap.so" "$builddir/tools/soak"; do
	[ -e "$f" ] || { echo "soak.sh: $f is not built (run from the build directory)" >&2; exit 1; }
done
exec env LD_PRELOAD="$builddir/.libs/libzswap.so" ZSWAP_MEMORY_LIMIT="$limit" ZSWAP_STATS_AT_EXIT=1 \
	"$builddir/tools/soak" --seconds "$secs" --writers 4 --mib-per-writer 32
