#!/bin/sh
# Run libzswap's whole test suite (installs what is missing and builds first).
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh --build-only
cd build
exec make -j"$(nproc)" check "$@"
