#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The libraries only a started library calls (lz4, zstd, lzo2, sodium,
# unwind: src/base/dynlib.h) are loaded at its start, never at exec: a
# process that never starts (ZSWAP_ENABLED=0, or one that ends before
# ZSWAP_START_DELAY) maps none of them, a started one maps them all and
# pages out and back with zstd and lzo. A library that is there but lacks a
# symbol (a stand-in built here, found first through LD_LIBRARY_PATH) gives
# one "libzswap:" line each and the feature off: lz4 instead of zstd, no
# tier, no backtraces, and without lz4 no library at all; the program's
# output is unchanged.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

libs='liblz4\.so|libzstd\.so|liblzo2\.so|libsodium\.so|libunwind\.so|liblzma\.so'

for how in ZSWAP_ENABLED=0 ZSWAP_START_DELAY=100; do
	eng_run "exec-$how" lib "$how" grep -cE "$libs" /proc/self/maps
	[ "$(cat "$ENG_OUT")" = 0 ] ||
		eng_fail "exec-$how: a process that does not start maps $(grep -oE "$libs" "$ENG_OUT" | sort -u | tr '\n' ' ')"
done

eng_run started lib ZSWAP_MEMORY_LIMIT=64M ZSWAP_ENABLED=1 sh -c 'grep -oE "'"$libs"'" /proc/$$/maps | sort -u'
for l in liblz4 libzstd libsodium libunwind liblzo2; do
	grep -q "^$l\." "$ENG_OUT" || eng_fail "started: $l is not loaded at the start"
done

prog=$(eng_prog prog_pageout)
eng_run plain plain "$prog" 2
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/ref"
for comp in zstd lzo zstd:9; do
	eng_run "pageout-$comp" lib ZSWAP_COMPRESSOR=$comp ZSWAP_START_DELAY=0 "$prog" 2
	eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
done

cc=${ZSWAP_CC:-cc}
if command -v "$cc" >/dev/null 2>&1; then
	mkdir "$ENG_TMP/fake"
	echo 'int libzswap_stand_in;' > "$ENG_TMP/fake/e.c"
	for so in libzstd.so.1 libsodium.so.23 libunwind.so.8 liblz4.so.1; do
		"$cc" -shared -fPIC -Wl,-soname,$so -o "$ENG_TMP/fake/$so" "$ENG_TMP/fake/e.c" ||
			eng_skip "$cc cannot build a shared object"
	done
	mkdir "$ENG_TMP/fake-lz4" && mv "$ENG_TMP/fake/liblz4.so.1" "$ENG_TMP/fake-lz4/"
	eng_run missing lib LD_LIBRARY_PATH="$ENG_TMP/fake" ZSWAP_COMPRESSOR=zstd ZSWAP_START_DELAY=0 \
		ZSWAP_WRITEBACK=1 "$prog" 2
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/ref"
	for want in 'ZSWAP_COMPRESSOR=zstd is not available \(libzstd\.so\.1 has no ZSTD_' \
		'ZSWAP_RECOMP_ALGORITHM=zstd is not available' 'libsodium\.so\.23 has no sodium_init: the second tier is off' \
		'no backtraces.*libunwind\.so\.8 has no '; do
		n=$(grep -cE "^libzswap: .*$want" "$ENG_ERR")
		[ "$n" = 1 ] || eng_fail "missing: $n lines match '$want', expected 1"
	done
	# No lz4 (the default, and every fallback's): one line, a pass-through.
	eng_run missing-lz4 lib LD_LIBRARY_PATH="$ENG_TMP/fake-lz4" ZSWAP_START_DELAY=0 "$prog" 2 --inactive-ok
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/ref"
	n=$(grep -cE '^libzswap: no compressor: liblz4\.so\.1 has no LZ4_.*running without libzswap' "$ENG_ERR")
	[ "$n" = 1 ] || eng_fail "missing-lz4: $n lines say that lz4 is missing, expected 1"
else
	eng_say "no C compiler ($cc): the missing-library case is not run"
fi
eng_finish
