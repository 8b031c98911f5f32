#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# peer_suite.sh - a real project's own test suite, plainly and under libzswap,
# side by side: CPython's regression tests (Debian's libpython3.11-testsuite)
# in three modes (plain; LD_PRELOAD with the defaults; LD_PRELOAD under a
# tight ZSWAP_MEMORY_LIMIT with a short ZSWAP_COLD_AGE, so that pages are
# reclaimed while the tests run), every difference from the plain run
# reported by test module and test case, confirmed by running its module
# again, and matched against tests/peer/peer_suite.inherent (the differences
# libzswap(7) explains as inherent). A regression net, not part of make check
# (the whole suite runs for tens of minutes).
#
# Usage: tests/peer/peer_suite.sh [--lib LIBZSWAP.so] [--out DIR] [--modes "plain default limit"]
#            [--quick] [--jobs N] [--timeout S] [--confirm N] [--limit SIZE]
#            [--cold-age S] [--regrtest-args "ARGS"] [--plain-from DIR] [--from DIR]
#            [test_module ...]
#   --quick    only the modules that exercise what a preloaded library can
#              change: test_threading test_signal test_faulthandler test_posix
#              test_subprocess test_os test_fork1 test_wait4 test_mmap
#   --plain-from DIR the plain run of an earlier invocation (DIR/plain.log,
#              plain.xml, the same modules): not run again
#   --from DIR every run an earlier invocation left in DIR (each mode's and
#              each confirmation's) judged again, not run again (what is
#              missing is run)
#   test_module ...  those modules (default: the whole suite)
# Defaults: the build directory's library (ZSWAP_BUILDDIR, else ./build, else
# the current directory), OUT ./peer-suite.out, all three modes, jobs = CPUs,
# a 1200 s timeout a module, confirm 2, limit 32M, cold age 1 s.
# Prints one summary line per mode against plain; exit 0 when no difference
# is left, 1 when some are (listed), 2 when the suite could not run.
# Installs python3.11 and libpython3.11-testsuite with apt-get when missing
# (as root, or through sudo).
set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
lib=
out=$(pwd)/peer-suite.out
pass=

while [ $# -gt 0 ]; do
	case "$1" in
	--lib) lib=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--quick) quick=1; shift ;;
	--modes|--jobs|--timeout|--confirm|--limit|--cold-age|--regrtest-args|--plain-from|--from)
		pass="$pass $1 '$(printf %s "${2:?}" | sed "s/'/'\\\\''/g")'"; shift 2 ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "peer_suite: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ -n "${quick:-}" ] && [ $# -eq 0 ]; then
	set -- test_threading test_signal test_faulthandler test_posix test_subprocess \
		test_os test_fork1 test_wait4 test_mmap
fi

if [ -z "$lib" ]; then
	for d in "${ZSWAP_BUILDDIR:-}" "$here/build" "$(pwd)"; do
		if [ -n "$d" ] && [ -f "$d/.libs/libzswap.so" ]; then
			lib=$d/.libs/libzswap.so
			break
		fi
	done
fi
if [ -z "$lib" ] || [ ! -f "$lib" ]; then
	echo "peer_suite: no libzswap.so (build it: scripts/setup.sh --build-only, or pass --lib)" >&2
	exit 2
fi
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")

# Debian's interpreter, not whichever python3.11 comes first in PATH: the
# test package matches it.
if [ ! -x /usr/bin/python3.11 ] || [ ! -f /usr/lib/python3.11/test/test_threading.py ]; then
	if [ "$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi
	echo "peer_suite: installing python3.11 libpython3.11-testsuite" >&2
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get install -y --no-install-recommends python3.11 libpython3.11-testsuite >/dev/null 2>&1 || {
		$sudo apt-get update -qq &&
		$sudo apt-get install -y --no-install-recommends python3.11 libpython3.11-testsuite
	} || { echo "peer_suite: could not install libpython3.11-testsuite" >&2; exit 2; }
fi

mkdir -p "$out/lib" || exit 2
out=$(cd "$out" && pwd)
# A copy: rebuilding the tree while the suite runs does not change the
# library half-way through.
cp "$lib" "$out/lib/libzswap.so" || exit 2
lib=$out/lib/libzswap.so
eval "exec /usr/bin/python3.11 \"\$here/tests/peer/peer_suite.py\" --lib \"\$lib\" --out \"\$out\" $pass \"\$@\""
