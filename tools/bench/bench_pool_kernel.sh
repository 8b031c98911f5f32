#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_pool_kernel.sh - libzswap's compressors against the kernel's on
# the same pages: the compressed bytes the kernel's lzo, lzo-rle and lz4 give
# (through a zram device of our own, whose mm_stat counts them exactly:
# compr_data_size) beside libzswap's (tools/bench/bench_pool --sizes), and
# page by page for the first N pages: does ZSWAP_COMPRESSOR=lzo give every
# page the size the kernel's "lzo" gives it? A benchmark, not a test.
#
# Usage: tools/bench/bench_pool_kernel.sh [--pages FILE] [--mb N] [--check N]
#            [--builddir DIR]
# Default pages: tools/bench/bench_reclaim --dump (the reclaim benchmark's pages,
# --mb MiB of them, default 128); --check N pages compared one by one
# (default 2000). Root; a zram device is hot-added for the run and removed
# at the end (zram0 and any other device are left alone).
set -u

builddir=${ZSWAP_BUILDDIR:-$(pwd)}
pages=
mb=128
check=2000
while [ $# -gt 0 ]; do
	case "$1" in
	--pages) pages=${2:?}; shift 2 ;;
	--mb) mb=${2:?}; shift 2 ;;
	--check) check=${2:?}; shift 2 ;;
	--builddir) builddir=${2:?}; shift 2 ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_pool_kernel.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
die() { echo "bench_pool_kernel.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (zram)"
[ -w /sys/class/zram-control/hot_add ] || modprobe zram num_devices=0 2>/dev/null
[ -r /sys/class/zram-control/hot_add ] || die "no zram here (CONFIG_ZRAM)"
pool=$builddir/tools/bench/bench_pool
[ -x "$pool" ] || die "$pool not built (make tools/bench/bench_pool)"

tmp=$(mktemp -d) || exit 1
dev=
. "$(dirname "$0")/bench_zram_lib.sh"
trap zl_cleanup EXIT
trap 'exit 1' INT TERM
zl_pages
[ "$check" -le "$npages" ] || check=$npages

dev=$(cat /sys/class/zram-control/hot_add) || die "zram hot_add failed"
z=/sys/block/zram$dev
zstat() { cut -c1-200 "$z/mm_stat" | awk '{ print $1, $2, $3 }'; }
setup() {	# ALG SIZE
	echo 1 > "$z/reset"
	echo "$1" > "$z/comp_algorithm" 2>/dev/null || return 1
	echo "$2" > "$z/disksize"
}

echo "pages: $pages ($npages pages); Linux $(uname -r); zram$dev, algorithms offered: $(cat "$z/comp_algorithm")"
echo
echo "| compressor | bytes compressed | ratio (orig / compressed) | zram pool bytes (zsmalloc) | ratio with the pool |"
echo "|---|---|---|---|---|"
for alg in lzo lzo-rle lz4; do
	setup "$alg" $((bytes + (64 << 20))) || { echo "| kernel $alg | not offered | | | |"; continue; }
	dd if="$pages" of="/dev/zram$dev" bs=1M iflag=fullblock oflag=direct status=none || die "write to zram failed"
	set -- $(zstat)
	echo "| kernel $alg (zram) | $2 | $(echo "scale=4; $1 / $2" | bc) | $3 | $(echo "scale=4; $1 / $3" | bc) |"
done
for alg in lzo lz4; do
	"$pool" --sizes "$alg" --pages "$pages" --mb $(((bytes >> 20) + 1)) > "$tmp/$alg.sizes" || die "bench_pool --sizes failed"
	# as zram counts them: a page that does not shrink below its huge
	# class (about 3.2 KiB) is kept whole, 4096 bytes; from the huge class
	# up these totals can differ, below it they should not
	tot=$(awk '{ t += ($1 > 0 && $1 < 4096 ? $1 : 4096) } END { print t }' "$tmp/$alg.sizes")
	echo "| libzswap $alg (comp_compress) | $tot | $(echo "scale=4; $bytes / $tot" | bc) | | |"
done

# Page by page: each page alone into zram, its compr_data_size step. zram
# keeps a page whose compressed size passes its huge class as 4096 bytes
# as is: those are left out of the count (so is a same-filled page: 0).
setup lzo $((check * 4096 + (1 << 20))) || die "zram lzo refused"
i=0 same=0 diff=0 skipped=0
prev=$(zstat | awk '{ print $2 }')
while [ $i -lt "$check" ]; do
	dd if="$pages" of="/dev/zram$dev" bs=4096 skip=$i seek=$i count=1 oflag=direct status=none
	cur=$(zstat | awk '{ print $2 }')
	k=$((cur - prev)) prev=$cur
	i=$((i + 1))
	ours=$(sed -n "${i}p" "$tmp/lzo.sizes")
	if [ "$k" = 0 ] || [ "$k" = 4096 ]; then skipped=$((skipped + 1))
	elif [ "$k" = "$ours" ]; then same=$((same + 1))
	else diff=$((diff + 1)); [ $diff -le 5 ] && echo "page $((i - 1)): kernel lzo $k bytes, libzswap lzo $ours"
	fi
done
echo
echo "page by page, first $check pages: $same the same size as the kernel's lzo, $diff different," \
     "$skipped left out (zram stored them whole or same-filled)"
