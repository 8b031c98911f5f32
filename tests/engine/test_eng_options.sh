#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Options seen from a real program: ZSWAP_ENABLED=0 is a pure pass-through (no
# "libzswap:" line, zswap_active() == 0, the same output); every option with a
# bad value (empty, negative, overflowing, garbage, unknown unit or word, out
# of range) and an unknown ZSWAP_ name (a typo) give exactly one "libzswap:"
# line naming the variable, while the program's stdout and exit status are
# those of a run without the library, and the library stays active (the
# default is used instead of the bad value). Valid values give no line.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_pageout)

eng_run ref plain "$prog" 2
eng_expect_rc 0 || eng_finish
cp "$ENG_OUT" "$ENG_TMP/ref"

# Under the library, active, no option: no libzswap: line.
eng_ok_run base lib "$prog" 2
eng_expect_same_stdout "$ENG_TMP/ref"

# ZSWAP_ENABLED=0: pass-through (--expect-inactive makes the program check
# zswap_active() == 0 and zswap_pageout() failing with ENOSYS).
for v in 0 no off false; do
	eng_ok_run "disabled-$v" lib ZSWAP_ENABLED=$v "$prog" --expect-inactive 2
	eng_expect_same_stdout "$ENG_TMP/ref"
done

n=0
# bad VAR VALUE [NAME]: one libzswap: line naming NAME (default VAR).
bad() {
	n=$((n + 1))
	eng_run "bad-$n" lib "$1=$2" "$prog" --inactive-ok 2
	eng_expect_rc 0 || return
	eng_expect_same_stdout "$ENG_TMP/ref" || return
	lines=$(eng_count_libzswap "$ENG_ERR")
	if [ "$lines" != 1 ]; then
		eng_fail "$1='$2': $lines libzswap: lines on stderr, expected exactly 1"
		return
	fi
	if ! grep '^libzswap:' "$ENG_ERR" | grep -qF -- "${3:-$1}"; then
		eng_fail "$1='$2': the libzswap: line does not name ${3:-$1}"
		return
	fi
	if ! grep -q '^prog_pageout: mode managed' "$ENG_ERR"; then
		eng_fail "$1='$2': the library is not active (a bad value must fall back to the default)"
	fi
}

# good VAR VALUE: accepted silently, the program runs the same.
good() {
	n=$((n + 1))
	eng_ok_run "good-$n" lib "$1=$2" "$prog" 2 || return
	eng_expect_same_stdout "$ENG_TMP/ref"
}

big=99999999999999999999	# > 2^64
for var in ZSWAP_ENABLED ZSWAP_COMPRESSOR ZSWAP_ZSPAGE_ORDER ZSWAP_POOL_LOCK ZSWAP_NR_POOLS \
	ZSWAP_MAX_POOL_SIZE ZSWAP_FAULT_THREADS ZSWAP_MIN_REGION ZSWAP_FAULT_AROUND \
	ZSWAP_READAHEAD ZSWAP_VERBOSE ZSWAP_INJECT_DECOMPRESS_FAIL; do
	bad $var ""
	bad $var "-1"
	bad $var "$big"
	bad $var "garbage"
	bad $var "3zz"
done
# Kind by kind where the type has more to get wrong.
bad ZSWAP_ENABLED maybe
bad ZSWAP_ENABLED 2
bad ZSWAP_COMPRESSOR lzo-rle	# the kernel's, not offered (comp.c)
bad ZSWAP_COMPRESSOR lzo:1
bad ZSWAP_COMPRESSOR "zstd:$big"
bad ZSWAP_COMPRESSOR zstd:fast
bad ZSWAP_COMPRESSOR zstd:99
bad ZSWAP_COMPRESSOR zstd:-3
bad ZSWAP_ZSPAGE_ORDER 1
bad ZSWAP_ZSPAGE_ORDER 5
bad ZSWAP_POOL_LOCK global
bad ZSWAP_MEMORY_CHARGE v3
bad ZSWAP_MEMORY_CHARGE 1
bad ZSWAP_NR_POOLS 0
bad ZSWAP_NR_POOLS 65
bad ZSWAP_MAX_POOL_SIZE -1M
bad ZSWAP_MAX_POOL_SIZE 17179869184G	# 2^64 bytes
bad ZSWAP_MAX_POOL_SIZE 10Q
bad ZSWAP_MAX_POOL_SIZE 101%
bad ZSWAP_FAULT_THREADS 17
bad ZSWAP_FAULT_THREADS 2x
bad ZSWAP_MIN_REGION 1K
bad ZSWAP_MIN_REGION 2T
bad ZSWAP_MIN_REGION 4Q
bad ZSWAP_MIN_REGION "${big}K"
bad ZSWAP_FAULT_AROUND 0
bad ZSWAP_FAULT_AROUND 513
bad ZSWAP_READAHEAD 65
bad ZSWAP_VERBOSE 3
bad ZSWAP_VERBOSE loud
# Typos: unknown ZSWAP_ names.
bad ZSWAP_COMPRESOR lz4
bad ZSWAP_FAULT_THREAD 2
bad ZSWAP_ENABLE 1
bad ZSWAP_ 1

good ZSWAP_ENABLED 1
good ZSWAP_COMPRESSOR zstd
good ZSWAP_COMPRESSOR zstd:1
good ZSWAP_COMPRESSOR lzo
good ZSWAP_ZSPAGE_ORDER 4
good ZSWAP_POOL_LOCK pool
good ZSWAP_MEMORY_CHARGE v1
good ZSWAP_NR_POOLS 4
good ZSWAP_MAX_POOL_SIZE 1G
good ZSWAP_MIN_REGION 2M
good ZSWAP_FAULT_THREADS 2
good ZSWAP_FAULT_THREADS 0	# one handler pinned to each allowed CPU
good ZSWAP_READAHEAD 8

# Several bad variables at once: one line each.
eng_run several lib ZSWAP_NR_POOLS=lots ZSWAP_COMPRESOR=lz4 ZSWAP_VERBOSE=-1 "$prog" --inactive-ok 2
if eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/ref"; then
	lines=$(eng_count_libzswap "$ENG_ERR")
	[ "$lines" = 3 ] || eng_fail "three bad variables: $lines libzswap: lines, expected 3"
fi
eng_finish
