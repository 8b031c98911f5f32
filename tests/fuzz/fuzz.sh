#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz.sh - build the libFuzzer targets (tests/fuzz) in ./build-fuzz with
# clang, and run each for SECONDS (default 600) from its seed corpus
# (tests/fuzz/corpus/TARGET; what a run finds goes to a scratch copy).
#
# Usage: tests/fuzz/fuzz.sh [SECONDS] [TARGET...]   (from the source tree)
# TARGET: zsmalloc, decompress, options, reply, ctlreq (default all, one
# after another).
# Exits non-zero when a target crashed; its report is on stderr and the
# input in ./build-fuzz/crash-*.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-600}
[ $# -gt 0 ] && shift
targets=${*:-zsmalloc decompress options reply ctlreq}
command -v clang > /dev/null || { echo "fuzz.sh: needs clang (apt-get install clang)" >&2; exit 1; }
[ -x configure ] || ./autogen.sh
mkdir -p build-fuzz
cd build-fuzz
[ -f Makefile ] || ../configure -q CC=clang --enable-fuzz
for t in $targets; do
	make -j"$(nproc)" "tests/fuzz/fuzz_$t" > /dev/null
done
for t in $targets; do
	work=corpus-$t
	mkdir -p "$work"
	cp ../tests/fuzz/corpus/"$t"/* "$work"/ 2> /dev/null || true
	echo "fuzz.sh: fuzz_$t for $secs s" >&2
	"tests/fuzz/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix=./ "$work" 2>&1 | grep -E '^(stat::|#[0-9]+.*DONE|==|SUMMARY|.*ERROR)' >&2
done
