#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_zs_tsan.sh - the pool's concurrent test (tests/unit/test_zs_tsan, built with
# -fsanitize=thread) under the harness. A ThreadSanitizer runtime that cannot
# start on this machine dies before main(); that is a skip (77) with the
# runtime's reason, after one retry with address-space randomisation off
# (older TSan runtimes reject newer kernels' mmap layouts). A race report, or
# any failure after main() started, is a failure.
bin=${ZSWAP_BUILDDIR:-.}/tests/unit/test_zs_tsan
if [ ! -x "$bin" ]; then
	echo "test_zs_tsan.sh: $bin not built" >&2
	exit 1
fi
out=${TMPDIR:-/tmp}/test_zs_tsan.$$
trap 'rm -f "$out"' EXIT

run() {
	"$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	return $rc
}

run "$bin" && exit 0
rc=$?
grep -q '^test_zs_tsan: start' "$out" && exit $rc

if command -v setarch >/dev/null 2>&1; then
	echo "test_zs_tsan.sh: the TSan runtime did not start; retrying with setarch -R" >&2
	run setarch "$(uname -m)" -R "$bin" && exit 0
	rc=$?
	grep -q '^test_zs_tsan: start' "$out" && exit $rc
fi
reason=$(grep -m1 -i 'sanitizer' "$out")
echo "SKIP: ThreadSanitizer cannot run here (exit $rc): ${reason:-no message}" >&2
exit 77
