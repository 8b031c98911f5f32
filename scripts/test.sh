#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Run libzswap's whole test suite (installs what is missing and builds
# first): `make check` in ./build, then the unit tests again under
# AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitize.sh).
# Arguments go to the main `make check` (TESTS="..." runs some tests only,
# and then the sanitizer run is skipped).
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh --build-only
rc=0
(cd build && make -j"$(nproc)" check "$@") || rc=$?
if [ $# -eq 0 ]; then
	scripts/sanitize.sh || rc=1
fi
exit $rc
