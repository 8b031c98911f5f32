#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The pool compacted at rest with no memory limit: 64 MiB of text paged out
# with MADV_PAGEOUT, a random half read back (holes in the zspages), then the
# reclaimer's idle check compacts: pages_compacted grows, pool_total_size
# falls by at least a quarter, and every page reads back as it was written,
# as in a run without the library. A cold age of an hour stores nothing
# while the test runs, and with readahead off the loads are the touches
# alone.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_compact)
eng_compare_run compact-pageout ZSWAP_COLD_AGE=3600 ZSWAP_READAHEAD=0 "$prog" 64
eng_finish
