#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_recomp.sh - recompression (zswapctl recompress idle) against zram's
# (recompress type=idle) on the same pages with the same pair of
# algorithms: the pool before and after (mem_used_total once compacted, as
# zram's mm_stat after its compact) and the CPU per page recompressed (the
# process's CPU time across the request; zram's, the writing shell's system
# time). A benchmark, not a test.
#
# Usage: tools/bench/bench_recomp.sh [--pages FILE] [--mb N] [--alg A] [--recomp R]
#            [--builddir DIR]
# Default pages: tools/bench/bench_reclaim --dump (the project's text pages,
# --mb MiB of them, default 64); --alg the first compressor (default lz4),
# --recomp the second (default zstd:3). Root for zram: a device is
# hot-added for the run and removed at the end (others are left alone);
# where this kernel's zram cannot recompress (no recomp_algorithm:
# CONFIG_ZRAM_MULTI_COMP off) or lacks an algorithm, its row says so and
# only its first-stage pool is shown.
set -u

builddir=${ZSWAP_BUILDDIR:-$(pwd)}
pages=
mb=64
alg=lz4
recomp=zstd:3
while [ $# -gt 0 ]; do
	case "$1" in
	--pages) pages=${2:?}; shift 2 ;;
	--mb) mb=${2:?}; shift 2 ;;
	--alg) alg=${2:?}; shift 2 ;;
	--recomp) recomp=${2:?}; shift 2 ;;
	--builddir) builddir=${2:?}; shift 2 ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_recomp.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
die() { echo "bench_recomp.sh: $*" >&2; exit 1; }
lib=$builddir/.libs/libzswap.so
ctl=$builddir/tools/zswapctl/zswapctl
prog=$builddir/tools/bench/bench_recomp
for f in "$lib" "$ctl" "$prog"; do
	[ -e "$f" ] || die "$f is not built"
done

tmp=$(mktemp -d) || exit 1
dev= bg=
. "$(dirname "$0")/bench_zram_lib.sh"
cleanup() {
	[ -n "$bg" ] && exec 3>&- && wait "$bg"
	zl_cleanup
}
trap cleanup EXIT
trap 'exit 1' INT TERM
zl_pages
ticks=$(getconf CLK_TCK)

# libzswap: the pages at rest in the pool, recompressed, compacted.
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
json() {	# json PID NAME...: those counters of the dump
	pid=$1; shift
	"$ctl" stats --json --full "$pid" | python3 -c '
import json, sys
d = {k: x for v in json.load(sys.stdin).values() if isinstance(v, dict) for k, x in v.items()}
print(" ".join(str(d[n]) for n in sys.argv[1:]))' "$@"
}
mkfifo "$tmp/in"
XDG_RUNTIME_DIR=$tmp LD_PRELOAD=$lib ZSWAP_COLD_AGE=0 ZSWAP_MIN_REGION=64K ZSWAP_COMPRESSOR=$alg \
	ZSWAP_RECOMP_ALGORITHM=$recomp "$prog" "$pages" < "$tmp/in" > "$tmp/out" &
bg=$!
exec 3> "$tmp/in"
export XDG_RUNTIME_DIR=$tmp
for _ in $(seq 600); do
	pid=$(awk '$1 == "ready" { print $2 }' "$tmp/out")
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || die "bench_recomp did not get ready"
"$ctl" compact "$pid" > /dev/null
set -- $(json "$pid" mem_used_total compr_data_size)
z_before=$1 zc_before=$2
c0=$(cpu "$pid")
"$ctl" recompress "$pid" idle > "$tmp/rc" || die "zswapctl recompress failed: $(cat "$tmp/rc")"
c1=$(cpu "$pid")
"$ctl" compact "$pid" > /dev/null
set -- $(json "$pid" mem_used_total compr_data_size num_recompressed recompress_kept)
z_after=$1 zc_after=$2 z_done=$3 z_kept=$4
z_us=$(echo "scale=1; ($c1 - $c0) * 1000000 / $ticks / ($z_done + $z_kept)" | bc)
exec 3>&-
wait "$bg" || die "bench_recomp found a page changed"
bg=

echo "pages: $pages ($npages pages); Linux $(uname -r); $alg then $recomp"
echo
echo "| | pool after $alg | after recompression (compacted) | recompressed / tried | CPU per page tried |"
echo "|---|---|---|---|---|"
echo "| libzswap | $z_before ($zc_before compressed) | $z_after ($zc_after compressed) |" \
	"$z_done / $((z_done + z_kept)) | $z_us us |"

# zram: the same pages, the same pair.
[ "$(id -u)" = 0 ] || { echo "| zram | (needs root) | | | |"; exit 0; }
[ -w /sys/class/zram-control/hot_add ] || modprobe zram num_devices=0 2>/dev/null
[ -r /sys/class/zram-control/hot_add ] || { echo "| zram | (no zram here) | | | |"; exit 0; }
dev=$(cat /sys/class/zram-control/hot_add) || die "zram hot_add failed"
z=/sys/block/zram$dev
mm() { awk '{ print $2, $3 }' "$z/mm_stat"; }	# compr_data_size mem_used_total
echo "${alg%%:*}" > "$z/comp_algorithm" 2>/dev/null || { echo "| zram | ($alg not offered: $(cat "$z/comp_algorithm")) | | | |"; exit 0; }
can=yes
if [ ! -w "$z/recomp_algorithm" ]; then
	can="no recomp_algorithm (CONFIG_ZRAM_MULTI_COMP off)"
elif ! echo "algo=${recomp%%:*}" > "$z/recomp_algorithm" 2>/dev/null; then
	can="${recomp%%:*} not offered for recompression"
fi
case $recomp in
*:*) [ "$can" = yes ] && echo "algo=${recomp%%:*} level=${recomp#*:}" > "$z/algorithm_params" 2>/dev/null ;;
esac
echo $((bytes + (64 << 20))) > "$z/disksize"
dd if="$pages" of="/dev/zram$dev" bs=1M iflag=fullblock oflag=direct status=none || die "write to zram failed"
echo 1 > "$z/compact"
set -- $(mm)
zr_c0=$1 zr_before=$2
if [ "$can" != yes ]; then
	echo "| zram | $zr_before ($zr_c0 compressed) | ($can) | | |"
	exit 0
fi
echo all > "$z/idle"
/usr/bin/time -f "%S %U" -o "$tmp/t" sh -c "echo type=idle > $z/recompress" || die "zram recompress failed"
echo 1 > "$z/compact"
set -- $(mm)
zr_us=$(awk -v n="$npages" '{ printf "%.1f", ($1 + $2) * 1000000 / n }' "$tmp/t")
echo "| zram | $zr_before ($zr_c0 compressed) | $2 ($1 compressed) | (not counted) / $npages | $zr_us us |"
echo
echo "libzswap's pool after recompression: $(echo "scale=4; $z_after / $2" | bc) of zram's"
