#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The in-process unit tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer, in a build of their own (./build-san). ThreadSanitizer
# runs in the main `make check` (the pool's and the store's concurrency
# tests, tests/unit/test_*_tsan.sh). Run by scripts/test.sh after the main
# suite; needs scripts/setup.sh --build-only first (packages, configure).
#
# Left out: test_comp and test_store_nomalloc, which define malloc
# themselves to count the library's calls (ASan's malloc cannot be
# replaced so), and the preloaded engine tests (the library is preloaded
# into programs that do not carry the ASan runtime).
set -eu
cd "$(dirname "$0")/.."
mkdir -p build-san
cd build-san
if [ ! -f Makefile ] || [ ../configure -nt Makefile ]; then
	../configure -q --enable-asan --enable-ubsan
fi
tests="tests/unit/test_zs_classes tests/unit/test_zsmalloc tests/unit/test_lzo tests/unit/test_store
	tests/unit/test_store_stress tests/unit/test_backing tests/unit/test_maps tests/unit/test_options
	tests/unit/test_emit tests/unit/test_cgroup"
# Only what these tests need is built (the library and its programs are
# the main build's; test_zs_classes runs zswapctl): by name, then the harness.
# shellcheck disable=SC2086
make -j"$(nproc)" $tests tools/zswapctl/zswapctl > /dev/null
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS UBSAN_OPTIONS
# shellcheck disable=SC2086
exec make -j"$(nproc)" check-TESTS TESTS="$(echo $tests)"
