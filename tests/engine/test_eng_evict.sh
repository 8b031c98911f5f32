#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The engine's evict module (src/engine/evict.c): a page evicted while a
# thread writes it is never lost. 4 (then 6) threads write version-stamped
# pages while another thread pages the same ranges out over and over; no
# write may be lost and no stale page returned, and evictions must really
# have happened (prog_evict asserts the counters). Bounded by passes, not
# time.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_evict)
eng_compare_run race-4 "$prog" 4 2048 24
eng_compare_run race-api "$prog" --api 4 1024 16
eng_compare_run race-6 "$prog" 6 3072 12
eng_finish
