#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_needed.sh - libzswap.so links only what every preloaded process can
# afford to load at exec: the C library (and the dynamic loader). lz4,
# zstd, lzo2, sodium and unwind (with its liblzma) are loaded when the
# library starts (src/base/dynlib.h): as DT_NEEDED entries they cost every
# process of a shell script at exec, started or not (liblz4 alone about
# 0.12 ms; docs/BENCHMARKS.md). Fails naming each entry not in the list.
builddir=${ZSWAP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
lib=${ZSWAP_LIB:-$builddir/.libs/libzswap.so}
name=test_needed

say() { printf '%s: %s\n' "$name" "$*" >&2; }

command -v readelf >/dev/null 2>&1 || { say "SKIP: readelf (binutils) is not installed"; exit 77; }
[ -f "$lib" ] || { say "ERROR: $lib is not built"; exit 99; }

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { say "ERROR: readelf -d $lib shows no NEEDED entry"; exit 99; }
fail=0
for n in $needed; do
	case $n in
	libc.so.*|ld-linux*.so.*|libdl.so.*|libpthread.so.*) ;;
	*)
		say "FAIL: libzswap.so needs $n at exec: load it at start instead (src/base/dynlib.h)"
		fail=1 ;;
	esac
done
[ "$fail" = 0 ] && say "ok: libzswap.so needs only $(echo $needed)"
exit $fail
